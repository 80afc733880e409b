"""The C driver that calls one kernel under emulation, and the file it reads its arguments from.

QEMU runs a whole program, not a function, so each emulated function gets a
small aarch64 program (``driver_source``) linked against the module's shared
library. Python checks the arguments (codegen/runtime/args.py) and writes them to an
input file (``pack_arguments``); the driver reads them, calls the kernel with
its exact native signature and writes the return code and the memory the
kernel may have changed to an output file, which ``unpack_results`` copies
back into the caller's arrays.

The input file, all integers little-endian ``int64``::

    nregions, then per region: size, skew (its address modulo 64), write_back
    one 16-byte slot per native argument: a pointer as (region, byte offset),
                                          a scalar as its bytes, zero-padded
    the bytes of each region, one after the other

A *region* is a run of memory covering one array, or several arrays that
overlap (a view and its base), so the kernel sees them aliased as it would
natively. Each region keeps its address modulo 64: alignment is as native.
The output file is the ``int32`` return code followed by the bytes of every
region marked ``write_back``, in order.
"""

from __future__ import annotations

import ctypes
import struct

import numpy as np

#: C types of native parameters (see ``native_param_type`` in codegen/llvm/codegen_llvm.py).
C_TYPES = {
    "int8": "int8_t", "int16": "int16_t", "int32": "int32_t", "int64": "int64_t",
    "uint8": "uint8_t", "uint16": "uint16_t", "uint32": "uint32_t", "uint64": "uint64_t",
    "float32": "float", "float64": "double", "bool": "uint8_t", "float16": "uint16_t",
    "handle": "void *",
}
_ALIGN = 64

_PRELUDE = r"""
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void fail(const char *what) { perror(what); exit(101); }

static void read_exact(FILE *f, void *dst, size_t size) {
    if (size && fread(dst, 1, size, f) != size) fail("driver: short read of the input file");
}
"""

_MAIN = r"""
int main(int argc, char **argv) {
    if (argc != 3) { fprintf(stderr, "usage: driver INPUT OUTPUT\n"); return 100; }
    FILE *in = fopen(argv[1], "rb");
    if (!in) fail(argv[1]);
    int64_t nregions;
    read_exact(in, &nregions, 8);
    int64_t *info = malloc(3 * 8 * (nregions + 1));
    char **base = malloc(sizeof(char *) * (nregions + 1));
    read_exact(in, info, 3 * 8 * nregions);
    int64_t slots[2 * NARGS + 2];
    read_exact(in, slots, 16 * NARGS);
    for (int64_t r = 0; r < nregions; r++) {
        /* the region starts at the same address modulo 64 as the caller's array */
        char *p = malloc(info[3 * r] + 2 * ALIGN);
        if (!p) fail("driver: malloc");
        base[r] = (char *)(((uintptr_t)p + ALIGN - 1) & ~(uintptr_t)(ALIGN - 1)) + info[3 * r + 1];
        read_exact(in, base[r], info[3 * r]);
    }
    fclose(in);
    int32_t code = CALL;
    FILE *out = fopen(argv[2], "wb");
    if (!out) fail(argv[2]);
    fwrite(&code, 4, 1, out);
    for (int64_t r = 0; r < nregions; r++)
        if (info[3 * r + 2] && fwrite(base[r], 1, info[3 * r], out) != (size_t)info[3 * r])
            fail("driver: write");
    if (fclose(out) != 0) fail("driver: close");
    return 0;
}
"""


def driver_source(symbol: str, dtypes: list[str]) -> str:
    """C source of a program calling ``int32_t symbol(<dtypes>)`` with arguments from a file.

    ``dtypes`` are the native parameter kinds in order (``"handle"`` for a
    pointer), as ``PackedFunction._dtypes``: params, then hidden shape vars.
    """
    ctypes_ = [C_TYPES[d] for d in dtypes]
    decl = f"extern int32_t {symbol}({', '.join(ctypes_) or 'void'});\n"
    args = []
    for k, (d, c) in enumerate(zip(dtypes, ctypes_)):
        if d == "handle":
            args.append(f"(void *)(base[slots[{2 * k}]] + slots[{2 * k + 1}])")
        else:
            args.append(f"({{ {c} v; memcpy(&v, &slots[{2 * k}], sizeof v); v; }})")
    call = f"{symbol}({', '.join(args)})"
    defines = f"#define NARGS {len(dtypes)}\n#define ALIGN {_ALIGN}\n#define CALL {call}\n"
    return _PRELUDE + decl + defines + _MAIN


# ---------------------------------------------------------------- arguments


def _span(arr: np.ndarray) -> tuple[int, int]:
    """The [start, end) addresses of the bytes an array's elements occupy."""
    start = arr.ctypes.data
    if arr.size == 0:
        return start, start
    # Strides are non-negative here: ArgBinder rejects others (codegen/runtime/args.py).
    last = sum((n - 1) * s for n, s in zip(arr.shape, arr.strides))
    return start, start + last + arr.itemsize


class Packed:
    """The input file's bytes, and how to copy the results back into the arrays."""

    def __init__(self, data: bytes, regions: list[tuple[int, int]], write_back: list[bool]):
        self.data = data
        self.regions = regions  # (start address, size) per region
        self.write_back = write_back


def _regions(spans: list[tuple[int, int]]) -> tuple[list[list[int]], list[int]]:
    """Merge overlapping spans: [[start, end], ...] and, per span, its region's index."""
    order = sorted(range(len(spans)), key=lambda k: spans[k])
    merged: list[list[int]] = []
    index = [0] * len(spans)
    for k in order:
        start, end = spans[k]
        if merged and start < merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
        index[k] = len(merged) - 1
    return merged, index


def pack_arguments(dtypes: list[str], values: list, written: list[bool]) -> Packed:
    """The input file for native arguments ``values`` (arrays for ``"handle"``, else numbers).

    ``written[k]`` says whether the kernel may store into array argument ``k``;
    the regions holding such arrays come back in the output file.
    """
    arrays = [k for k, d in enumerate(dtypes) if d == "handle"]
    merged, index = _regions([_span(values[k]) for k in arrays])
    write_back = [False] * len(merged)
    for k, r in zip(arrays, index):
        write_back[r] |= written[k] and values[k].flags.writeable
    header = [len(merged)]
    for (start, end), wb in zip(merged, write_back):
        header += [end - start, start % _ALIGN, int(wb)]
    slots = bytearray()
    where = dict(zip(arrays, index))
    for k, d in enumerate(dtypes):
        if d == "handle":
            r = where[k]
            slots += struct.pack("<qq", r, values[k].ctypes.data - merged[r][0])
        else:
            slots += _scalar_bytes(d, values[k]).ljust(16, b"\0")
    blobs = [ctypes.string_at(start, end - start) for start, end in merged]
    data = struct.pack(f"<{len(header)}q", *header) + bytes(slots) + b"".join(blobs)
    return Packed(data, [(s, e - s) for s, e in merged], write_back)


def _scalar_bytes(dtype: str, value) -> bytes:
    if dtype == "float16":
        return np.float16(value).tobytes()  # the bits, passed as uint16_t
    if dtype == "bool":
        return bytes([1 if value else 0])
    return np.array(value, dtype=dtype).tobytes()


def unpack_results(packed: Packed, output: bytes) -> int:
    """Copy the regions the kernel may have written back into memory; the return code."""
    (code,) = struct.unpack_from("<i", output)
    offset = 4
    for (start, size), wb in zip(packed.regions, packed.write_back):
        if not wb:
            continue
        if len(output) < offset + size:
            raise RuntimeError("emulation: the driver's output file is truncated")
        ctypes.memmove(start, output[offset:offset + size], size)
        offset += size
    return code


__all__ = ["driver_source", "pack_arguments", "unpack_results"]
