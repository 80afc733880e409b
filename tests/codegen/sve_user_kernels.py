"""Kernels written as a user would for SVE, their NumPy inputs and references.

Each kernel is one serial-looking loop over a symbolic ``n`` marked vectorize
(``ib.for_range(0, n, kind="vectorize")``), or TVM's explicit form, a serial
loop over vectors of ``4 * vscale()`` lanes with a guard on the tail. Built for
``llvm -mtriple=aarch64-linux-gnu -mattr=+sve``, the vectorizer turns them into
vector-length-agnostic code; test_sve_end_to_end.py runs that code under QEMU.

Inputs reach the edges of each type: NaN, infinities, -0.0, the largest and
smallest finite floats and a subnormal; INT_MIN and INT_MAX. Signed adds of 32
bits or more may not overflow in TIR (``nsw``), so their second operand keeps
the sum in range; 8/16-bit and unsigned arithmetic wraps, as in NumPy.
"""

from __future__ import annotations

import numpy as np

import tir
from tir import ir_builder

#: The dtypes of the vector add and the reductions.
DTYPES = ["float32", "float64", "int8", "int32", "uint16"]
#: n: empty, one element, a tail no vector length divides, a multiple of every
#: vector length of every dtype (256-byte vectors of int8: 256 lanes), a large n.
SIZES = (0, 1, 37, 512, 4099)


def _buffers(names: str, dtype: str, index_dtype: str = "int32"):
    n = tir.size_var("n", index_dtype)
    return n, [tir.decl_buffer((n,), dtype, name=name) for name in names]


def vector_add(dtype: str, index_dtype: str = "int32") -> tir.PrimFunc:
    """``C[i] = A[i] + B[i]`` for i < n (n of ``index_dtype``)."""
    n, bufs = _buffers("ABC", dtype, index_dtype)
    ib = ir_builder.create()
    a, b, c = (ib.buffer_ptr(x) for x in bufs)
    with ib.for_range(0, n, kind="vectorize", name="i") as i:
        c[i] = a[i] + b[i]
    return tir.PrimFunc(bufs, ib.get())


def saxpy(dtype: str) -> tir.PrimFunc:
    """``Y[i] = alpha * X[i] + Y[i]`` for i < n; call as ``(x, y, alpha)``."""
    n, bufs = _buffers("XY", dtype)
    alpha = tir.Var("alpha", dtype)
    ib = ir_builder.create()
    x, y = (ib.buffer_ptr(b) for b in bufs)
    with ib.for_range(0, n, kind="vectorize", name="i") as i:
        y[i] = alpha * x[i] + y[i]
    return tir.PrimFunc([*bufs, alpha], ib.get())


def guarded(dtype: str) -> tir.PrimFunc:
    """``if A[i] > 0: B[i] = A[i] * A[i]`` (ints: ``A[i] - 1``); the other lanes keep B."""
    n, bufs = _buffers("AB", dtype)
    ib = ir_builder.create()
    a, b = (ib.buffer_ptr(x) for x in bufs)
    zero = tir.const(0, dtype)
    with ib.for_range(0, n, kind="vectorize", name="i") as i:
        with ib.if_scope(a[i] > zero):
            b[i] = a[i] * a[i] if dtype.startswith("float") else a[i] - tir.const(1, dtype)
    return tir.PrimFunc(bufs, ib.get())


def guarded_else(dtype: str) -> tir.PrimFunc:
    """``if not A[i] > 0: B[i] = -B[i]``: a guard under a logical not."""
    n, bufs = _buffers("AB", dtype)
    ib = ir_builder.create()
    a, b = (ib.buffer_ptr(x) for x in bufs)
    with ib.for_range(0, n, kind="vectorize", name="i") as i:
        with ib.if_scope(tir.Not(a[i] > tir.const(0, dtype))):
            b[i] = tir.const(0, dtype) - b[i]
    return tir.PrimFunc(bufs, ib.get())


def explicit_add(dtype: str, k: int) -> tir.PrimFunc:
    """TVM's hand-written form: ``for i in range(ceildiv(n, VL)): for j in
    vectorized(VL): if i*VL + j < n: C[i*VL + j] = A[i*VL + j] + B[i*VL + j]``,
    ``VL = k * vscale()``."""
    n, bufs = _buffers("ABC", dtype)
    vl = k * tir.vscale()
    ib = ir_builder.create()
    a, b, c = (ib.buffer_ptr(x) for x in bufs)
    with ib.for_range(0, tir.floordiv(n + vl - 1, vl), name="i") as i:
        with ib.for_range(0, vl, kind="vectorize", name="j") as j:
            with ib.if_scope(i * vl + j < n):
                c[i * vl + j] = a[i * vl + j] + b[i * vl + j]
    return tir.PrimFunc(bufs, ib.get())


# ---------------------------------------------------------------- inputs


def float_edges(dtype: str) -> np.ndarray:
    """NaN, +-inf, -0.0, +-the largest finite, the smallest normal, a subnormal, -1."""
    info = np.finfo(dtype)
    return np.array([np.nan, np.inf, -np.inf, -0.0, info.max, -info.max, info.tiny,
                     info.smallest_subnormal, -1.0], dtype)


def values(dtype: str, n: int, rng: np.random.Generator, edges: bool = True) -> np.ndarray:
    """n random values of mixed magnitude (floats) or of the whole range (ints), the
    type's edge values every 4th element from index 2 (``edges``)."""
    if dtype.startswith("float"):
        out = (rng.standard_normal(n) * 10.0 ** rng.integers(-3, 4, n)).astype(dtype)
        special = float_edges(dtype)
    else:
        info = np.iinfo(dtype)
        out = rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
        special = np.array([info.min, info.max, 0, -1 if info.min else 1], dtype)
    if edges:
        where = np.arange(2, n, 4)
        out[where] = np.resize(special, len(where))
    return out


def addend(a: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A second operand for ``a + b``: random, but for 32/64-bit signed ints chosen so
    that the sum stays in range (signed overflow is undefined there)."""
    dtype = a.dtype
    if dtype.kind != "i" or dtype.itemsize < 4:
        return values(str(dtype), len(a), rng)
    info = np.iinfo(dtype)
    wide = a.astype(np.int64)
    low, high = info.min - np.minimum(wide, 0), info.max - np.maximum(wide, 0)
    return rng.integers(low, high, endpoint=True).astype(dtype)


def same(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """Elementwise: equal bits, or both NaN (the payload of a NaN made by an operation
    differs between aarch64 and x86); -0.0 differs from 0.0."""
    equal = got.view(f"u{got.itemsize}") == want.view(f"u{want.itemsize}")
    if got.dtype.kind == "f":
        equal |= np.isnan(got) & np.isnan(want)
    return equal


def assert_same(got: np.ndarray, want: np.ndarray, what: str) -> None:
    """``got`` equals ``want`` element for element (see ``same``), else say where."""
    ok = same(got, want)
    if not ok.all():
        k = int(np.flatnonzero(~ok)[0])
        raise AssertionError(f"{what}: element {k} is {got[k]!r}, NumPy says {want[k]!r} "
                             f"({int((~ok).sum())} of {len(ok)} differ)")
