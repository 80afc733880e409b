"""Time vector access beyond unit stride (issue 9) against NumPy, numba, TVM and Halide.

Run from the repository root::

    .venv/bin/python benchmarks/bench_access.py            # 2^22 output elements
    .venv/bin/python benchmarks/bench_access.py --quick    # small sizes, a smoke run
    TVM_PYTHON=/work/tvm-venv/bin/python HALIDE_PYTHON=/work/halide-venv/bin/python \\
        .venv/bin/python benchmarks/bench_access.py

Kernels: stride-2 and stride-3 copies and sums, a stride-2 store, sums of
groups of 5 consecutive elements, a column-wise prefix sum written with the
column loop outside (``colscan``), an int8 dot product summing in int32
(``dot_i8``), a reversed copy, a complex
multiply on interleaved re/im, RGB to gray (float32 and uint8), a square
float32 transpose (2048 x 2048) and a gather ``C[i] = A[idx[i]]``. Each
tirlite kernel is written as a user would with ``tir.ir_builder``: one
``kind="vectorize"`` loop (the transpose: two nested ones over a tile), no
hand-made shuffles, built by ``codegen.build(func, "llvm")``'s default
pipeline. Every candidate's result is checked against NumPy before it is
timed; a wrong result is reported in the table and the script exits with
status 1.

gcc (bench_access_gcc.py: the same loops in C, ``gcc -O3 -march=`` the CPU
tirlite targets) runs in this process through ctypes. TVM (bench_access_tvm.py,
when ``TVM_PYTHON`` names a Python with apache-tvm)
and Halide (bench_access_halide.py, when ``HALIDE_PYTHON`` names a Python with
the halide wheel) run in their own venvs as worker processes that this script
drives round by round, so every round runs every candidate once and the
ratios come from one run. See benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_access_common as common  # noqa: E402
import bench_access_gcc as gcc_peer  # noqa: E402
from bench_kernels import ROOT, _cell, _host_cpu, numba  # noqa: E402 (sets one thread first)
from bench_workers import Worker, WorkerDied, source_version  # noqa: E402

import codegen  # noqa: E402
import tir  # noqa: E402
from tir import ir_builder  # noqa: E402

F32 = "float32"
PEERS = ("numpy", "numba", "gcc", "tvm", "halide")


# ---------------------------------------------------------------- tirlite kernels


def _func(shapes: list, body: Callable, dtypes: list | None = None) -> tir.PrimFunc:
    """A PrimFunc over buffers of ``shapes``; ``body(ib, *views)`` writes its statements."""
    dtypes = dtypes or [F32] * len(shapes)
    bufs = [tir.decl_buffer(shape, dtype, f"B{k}") for k, (shape, dtype)
            in enumerate(zip(shapes, dtypes))]
    ib = ir_builder.create()
    body(ib, *(ib.buffer_ptr(b) for b in bufs))
    return tir.PrimFunc(bufs, ib.get())


def _loop(ib, n: int):
    return ib.for_range(0, n, name="i", kind="vectorize")


def tir_copy_strided(n: int, stride: int) -> tir.PrimFunc:
    """``b[i] = a[stride * i]``."""
    def body(ib, a, b):
        with _loop(ib, n) as i:
            b[i] = a[stride * i]
    return _func([(stride * n,), (n,)], body)


def tir_store_strided(n: int) -> tir.PrimFunc:
    """``b[2 * i] = a[i]`` (the odd elements untouched)."""
    def body(ib, a, b):
        with _loop(ib, n) as i:
            b[2 * i] = a[i]
    return _func([(n,), (2 * n,)], body)


def tir_group5(n: int) -> tir.PrimFunc:
    """``b[i] = a[5 i] + a[5 i + 1] + ... + a[5 i + 4]``: groups of 5 consecutive elements."""
    def body(ib, a, b):
        with _loop(ib, n) as i:
            b[i] = a[5 * i] + a[5 * i + 1] + a[5 * i + 2] + a[5 * i + 3] + a[5 * i + 4]
    return _func([(5 * n,), (n,)], body)


def tir_sum_strided(n: int, stride: int) -> tir.PrimFunc:
    """``s += a[stride * i]`` (a reduction: the pipeline's VectorizeReductions splits it)."""
    def body(ib, a, s):
        s[0] = tir.const(0.0, F32)
        with _loop(ib, n) as i:
            s[0] = s[0] + a[stride * i]
    return _func([(stride * n,), (1,)], body)


def tir_reverse(n: int) -> tir.PrimFunc:
    """``b[i] = a[n - 1 - i]``."""
    def body(ib, a, b):
        with _loop(ib, n) as i:
            b[i] = a[n - 1 - i]
    return _func([(n,), (n,)], body)


def tir_cmul(n: int) -> tir.PrimFunc:
    """``c = x * y`` on n complex numbers stored re, im interleaved."""
    def body(ib, x, y, c):
        with _loop(ib, n) as i:
            xr, xi, yr, yi = x[2 * i], x[2 * i + 1], y[2 * i], y[2 * i + 1]
            c[2 * i] = xr * yr - xi * yi
            c[2 * i + 1] = xr * yi + xi * yr
    return _func([(2 * n,)] * 3, body)


def tir_rgb_gray_f32(n: int) -> tir.PrimFunc:
    """``g[i] = 0.299 r + 0.587 g + 0.114 b`` over interleaved float32 RGB."""
    wr, wg, wb = (tir.const(w, F32) for w in common.GRAY_F32)

    def body(ib, rgb, g):
        with _loop(ib, n) as i:
            g[i] = wr * rgb[3 * i] + wg * rgb[3 * i + 1] + wb * rgb[3 * i + 2]
    return _func([(3 * n,), (n,)], body)


def tir_rgb_gray_u8(n: int) -> tir.PrimFunc:
    """``g[i] = (77 r + 150 g + 29 b + 128) >> 8`` over interleaved uint8 RGB, in int32."""
    def wide(v):
        return tir.Cast("int32", v)

    def body(ib, rgb, g):
        with _loop(ib, n) as i:
            acc = (wide(rgb[3 * i]) * common.GRAY_U8[0] + wide(rgb[3 * i + 1]) * common.GRAY_U8[1]
                   + wide(rgb[3 * i + 2]) * common.GRAY_U8[2] + 128)
            g[i] = tir.Cast("uint8", acc >> 8)
    return _func([(3 * n,), (n,)], body, ["uint8", "uint8"])


def _tiles(ib, side: int, tile: int):
    """Serial loops over tiles, then two nested vectorized loops over one tile."""
    return (ib.for_range(0, side // tile, name="io"), ib.for_range(0, side // tile, name="jo"),
            ib.for_range(0, tile, name="i", kind="vectorize"),
            ib.for_range(0, tile, name="j", kind="vectorize"))


def tir_transpose_2d(side: int, tile: int) -> tir.PrimFunc:
    """``b[i, j] = a[j, i]`` on 2-D buffers, tile x tile blocks, both tile loops vectorized."""
    def body(ib, a, b):
        lo_io, lo_jo, lo_i, lo_j = _tiles(ib, side, tile)
        with lo_io as io, lo_jo as jo, lo_i as i, lo_j as j:
            b[io * tile + i, jo * tile + j] = a[jo * tile + j, io * tile + i]
    return _func([(side, side), (side, side)], body)


def tir_transpose_flat(side: int, tile: int) -> tir.PrimFunc:
    """The same transpose on flat 1-D buffers: ``b[i * side + j] = a[j * side + i]``."""
    def body(ib, a, b):
        lo_io, lo_jo, lo_i, lo_j = _tiles(ib, side, tile)
        with lo_io as io, lo_jo as jo, lo_i as i, lo_j as j:
            row, col = io * tile + i, jo * tile + j
            b[row * side + col] = a[col * side + row]
    return _func([(side * side,), (side * side,)], body)


def tir_colscan(side: int) -> tir.PrimFunc:
    """``B = cumsum(A, axis=0)`` written column by column: the column loop vectorized
    outside, the row recurrence ``B[j, i] = B[j - 1, i] + A[j, i]`` inside."""
    def body(ib, a, b):
        with ib.for_range(0, side, name="i", kind="vectorize") as i:
            b[0, i] = a[0, i]
        with ib.for_range(0, side, name="i", kind="vectorize") as i:
            with ib.for_range(1, side, name="j") as j:
                b[j, i] = b[j - 1, i] + a[j, i]
    return _func([(side, side), (side, side)], body)


def tir_dot_i8(n: int) -> tir.PrimFunc:
    """``s += int32(a[i]) * int32(b[i])`` over int8 vectors (a reduction)."""
    def body(ib, a, b, s):
        s[0] = tir.const(0, "int32")
        with _loop(ib, n) as i:
            s[0] = s[0] + tir.Cast("int32", a[i]) * tir.Cast("int32", b[i])
    return _func([(n,), (n,), (1,)], body, ["int8", "int8", "int32"])


def tir_gather(n: int) -> tir.PrimFunc:
    """``c[i] = a[idx[i]]`` (idx int32, data-dependent: bounds-checked)."""
    def body(ib, a, idx, c):
        with _loop(ib, n) as i:
            c[i] = a[idx[i]]
    return _func([(n,), (n,), (n,)], body, [F32, "int32", F32])


def tirlite_variants(name: str, n: int, tile: int) -> list:
    """(label, PrimFunc builder, reshape-to-flat?) to try in order; the first that builds wins."""
    if name == "transpose":
        side = common.transpose_side(n)
        return [("2-D buffers", lambda: tir_transpose_2d(side, tile), False),
                ("flat buffers", lambda: tir_transpose_flat(side, tile), True)]
    makers = {
        "copy_s2": lambda: tir_copy_strided(n, 2), "copy_s3": lambda: tir_copy_strided(n, 3),
        "store_s2": lambda: tir_store_strided(n), "group5": lambda: tir_group5(n),
        "sum_s2": lambda: tir_sum_strided(n, 2), "sum_s3": lambda: tir_sum_strided(n, 3),
        "reverse": lambda: tir_reverse(n), "cmul": lambda: tir_cmul(n),
        "rgb_gray_f32": lambda: tir_rgb_gray_f32(n), "rgb_gray_u8": lambda: tir_rgb_gray_u8(n),
        "gather": lambda: tir_gather(n),
        "colscan": lambda: tir_colscan(common.transpose_side(n)),
        "dot_i8": lambda: tir_dot_i8(n),
    }
    return [("", makers[name], False)]


# ---------------------------------------------------------------- NumPy and numba


def numpy_fn(name: str, args: list) -> Callable:
    """The natural NumPy expression, writing into the preallocated output where NumPy can."""
    return _NUMPY[name](name, args)


def _np_copy_strided(name: str, args: list) -> Callable:
    view, out = args[0][::int(name[-1])], args[-1]
    return lambda: np.copyto(out, view)


def _np_store_strided(name: str, args: list) -> Callable:
    a, view = args[0], args[-1][::2]
    return lambda: np.copyto(view, a)


def _np_group5(name: str, args: list) -> Callable:
    groups, out = args[0].reshape(-1, 5), args[-1]
    return lambda: np.sum(groups, axis=1, out=out)


def _np_sum_strided(name: str, args: list) -> Callable:
    view, out = args[0][::int(name[-1])], args[-1]

    def total():
        out[0] = view.sum()
    return total


# The views are made once, outside the timed call, as for every kernel here.


def _np_reverse(name: str, args: list) -> Callable:
    view, out = args[0][::-1], args[-1]
    return lambda: np.copyto(out, view)


def _np_transpose(name: str, args: list) -> Callable:
    view, out = args[0].T, args[-1]
    return lambda: np.copyto(out, view)


def _np_colscan(name: str, args: list) -> Callable:
    a, out = args[0], args[-1]
    return lambda: np.cumsum(a, axis=0, out=out)


def _np_dot_i8(name: str, args: list) -> Callable:
    a, b, out = args

    def dot():  # int8 x int8 would wrap in int8: widen one side, as a NumPy user does
        out[0] = np.dot(a.astype(np.int32), b)
    return dot


def _np_gather(name: str, args: list) -> Callable:
    a, idx, out = args[0], args[1], args[-1]
    return lambda: np.take(a, idx, out=out)


def _np_cmul(name: str, args: list) -> Callable:
    x, y, z = (v.view(np.complex64) for v in args)
    return lambda: np.multiply(x, y, out=z)


def _np_rgb_gray_f32(name: str, args: list) -> Callable:
    rgb, weights, out = args[0].reshape(-1, 3), np.array(common.GRAY_F32, np.float32), args[-1]
    return lambda: np.matmul(rgb, weights, out=out)


def _np_rgb_gray_u8(name: str, args: list) -> Callable:
    rgb, out = args[0].reshape(-1, 3), args[-1]
    weights = np.array(common.GRAY_U8, np.uint16)

    def gray():  # in uint16: 255 * 256 + 128 fits
        acc = rgb[:, 0] * weights[0]
        acc += rgb[:, 1] * weights[1]
        acc += rgb[:, 2] * weights[2]
        acc += 128
        np.right_shift(acc, 8, out=acc)
        np.copyto(out, acc, casting="unsafe")
    return gray


#: kernel name -> (name, args) -> the NumPy version of the kernel.
_NUMPY = {
    "copy_s2": _np_copy_strided,
    "copy_s3": _np_copy_strided,
    "store_s2": _np_store_strided,
    "group5": _np_group5,
    "sum_s2": _np_sum_strided,
    "sum_s3": _np_sum_strided,
    "reverse": _np_reverse,
    "cmul": _np_cmul,
    "rgb_gray_f32": _np_rgb_gray_f32,
    "rgb_gray_u8": _np_rgb_gray_u8,
    "transpose": _np_transpose,
    "colscan": _np_colscan,
    "dot_i8": _np_dot_i8,
    "gather": _np_gather,
}


def numba_fns() -> dict:
    """Plain @njit loops (fastmath on the sums, so numba may reassociate as tirlite does)."""
    if numba is None:
        return {}
    njit, fast = numba.njit, numba.njit(fastmath=True)

    @njit
    def copy_strided(a, b, s):
        for i in range(b.size):
            b[i] = a[s * i]

    @njit
    def store_strided(a, b):
        for i in range(a.size):
            b[2 * i] = a[i]

    @njit
    def group5(a, b):
        for i in range(b.size):
            b[i] = a[5 * i] + a[5 * i + 1] + a[5 * i + 2] + a[5 * i + 3] + a[5 * i + 4]

    @fast
    def sum_strided(a, out, s):
        acc = np.float32(0)
        for i in range(a.size // s):
            acc += a[s * i]
        out[0] = acc

    @njit
    def reverse(a, b):
        n = a.size
        for i in range(n):
            b[i] = a[n - 1 - i]

    @njit
    def cmul(x, y, c):
        for i in range(c.size // 2):
            xr, xi, yr, yi = x[2 * i], x[2 * i + 1], y[2 * i], y[2 * i + 1]
            c[2 * i] = xr * yr - xi * yi
            c[2 * i + 1] = xr * yi + xi * yr

    w0, w1, w2 = (np.float32(w) for w in common.GRAY_F32)
    u0, u1, u2 = common.GRAY_U8

    @njit
    def gray_f32(rgb, g):
        for i in range(g.size):
            g[i] = w0 * rgb[3 * i] + w1 * rgb[3 * i + 1] + w2 * rgb[3 * i + 2]

    @njit
    def gray_u8(rgb, g):
        for i in range(g.size):
            acc = (np.int32(rgb[3 * i]) * u0 + np.int32(rgb[3 * i + 1]) * u1
                   + np.int32(rgb[3 * i + 2]) * u2 + 128)
            g[i] = np.uint8(acc >> 8)

    @njit
    def transpose(a, b, tile):
        side = a.shape[0]
        for io in range(0, side, tile):
            for jo in range(0, side, tile):
                for i in range(io, io + tile):
                    for j in range(jo, jo + tile):
                        b[i, j] = a[j, i]

    @njit
    def colscan(a, b):
        side = a.shape[0]
        for i in range(side):
            b[0, i] = a[0, i]
        for i in range(side):
            for j in range(1, side):
                b[j, i] = b[j - 1, i] + a[j, i]

    @njit
    def dot_i8(a, b, out):
        acc = np.int32(0)
        for i in range(a.size):
            acc += np.int32(a[i]) * np.int32(b[i])
        out[0] = acc

    @njit
    def gather(a, idx, c):
        for i in range(idx.size):
            c[i] = a[idx[i]]

    return {"copy_s2": lambda a, b: copy_strided(a, b, 2),
            "copy_s3": lambda a, b: copy_strided(a, b, 3),
            "store_s2": store_strided, "group5": group5,
            "sum_s2": lambda a, s: sum_strided(a, s, 2),
            "sum_s3": lambda a, s: sum_strided(a, s, 3),
            "reverse": reverse, "cmul": cmul, "rgb_gray_f32": gray_f32, "rgb_gray_u8": gray_u8,
            "transpose": lambda a, b: transpose(a, b, common.TRANSPOSE_TILE), "gather": gather,
            "colscan": colscan, "dot_i8": dot_i8}


# ---------------------------------------------------------------- TVM and Halide workers


def start_workers(config: dict) -> dict:
    """The TVM and Halide workers whose venv's Python is named in the environment."""
    workers = {}
    for label, var, script in (("tvm", "TVM_PYTHON", "bench_access_tvm.py"),
                               ("halide", "HALIDE_PYTHON", "bench_access_halide.py")):
        python = os.environ.get(var)
        if not python:
            print(f"note: {var} is not set, {label} skipped (see benchmarks/README.md)")
            continue
        try:
            workers[label] = Worker(label, python, script, config)
        except (OSError, RuntimeError, json.JSONDecodeError) as err:
            print(f"note: {label} worker failed to start, skipped: {err}")
    return workers


# ---------------------------------------------------------------- timing


def _timed(fn: Callable) -> Callable:
    def run() -> float:
        start = time.perf_counter()
        fn()
        return (time.perf_counter() - start) * 1e3
    return run


def interleaved_ms(candidates: dict, runs: int, warmup: int = 2) -> dict:
    """The ms of each candidate (a callable returning its own time in ms) in ``runs``
    rounds after ``warmup``; each round runs every candidate twice in a row and keeps
    the second time.

    The untimed first call puts the candidate's own arrays back in the caches:
    TVM and Halide hold copies of the data in their processes, and a gather over
    a 16 MB table runs twice as fast from a warm L3 as from one the previous
    candidate filled with its copy.
    """
    for _ in range(warmup):
        for fn in candidates.values():
            fn()
    times: dict = {name: [] for name in candidates}
    for _ in range(runs):
        for name, fn in candidates.items():
            fn()
            times[name].append(fn())
    return times


def gathers_in_ir(module) -> int:
    """How many gather intrinsics the optimized LLVM IR calls (0: shuffles or scalar loads)."""
    return sum(1 for line in module.get_source("ll").splitlines()
               if "call " in line and "gather" in line)


def _tirlite_candidates(name: str, n: int, tile: int, args: list, row: dict) -> dict:
    """Each form of the kernel that builds; the first is the tirlite column (noted in row)."""
    candidates: dict = {}
    for label, make, flat in tirlite_variants(name, n, tile):
        try:
            module = codegen.build(make(), target="llvm")
        except Exception as err:  # noqa: BLE001 (time the next form, report why)
            row["errors"][f"tirlite {label}"] = common.error_text(err)
            continue
        entry = module["main"]
        call_args = [a.reshape(-1) for a in args] if flat else args
        # the first form that builds is the tirlite column; others are timed alongside
        key = "tirlite" if "tirlite" not in candidates else f"tirlite {label}"
        if key == "tirlite":
            row.update(form=label, remarks=[str(r) for r in module.remarks],
                       gathers=gathers_in_ir(module))
        candidates[key] = (lambda e=entry, x=call_args: e(*x))
    return candidates


def _checked(name: str, args: list, candidates: dict, row: dict) -> dict:
    """The candidates that compute the right result, ready to time; the others in row."""
    checked: dict = {}
    for label, fn in candidates.items():
        try:
            common.run_and_check(name, args, fn)
        except AssertionError as err:
            row["wrong"].append(label)
            row["errors"][label] = f"WRONG RESULT: {common.error_text(err)}"
            continue
        checked[label] = _timed(fn)
    return checked


def _add_peers(name: str, workers: dict, row: dict, checked: dict) -> None:
    """Each peer worker's kernel into ``checked``, or its error into ``row``."""
    for label, worker in workers.items():
        status = worker.ready.get(name, {"error": "not written for this peer"})
        if "ok" in status:
            checked[label] = (lambda w=worker: w.run_ms(name))
        elif status["error"].startswith("WRONG RESULT"):
            row["wrong"].append(label)
            row["errors"][label] = status["error"]
        elif status["error"] != "not written for this peer":
            row["errors"][label] = status["error"]


def measure(name: str, n: int, tile: int, runs: int, nb: dict, workers: dict,
            gcc: tuple | None) -> dict:
    """Build, check and time one kernel for every candidate."""
    args = common.arrays(name, n)
    row: dict = {"kernel": name, "errors": {}, "wrong": []}
    candidates = _tirlite_candidates(name, n, tile, args, row)
    candidates["numpy"] = numpy_fn(name, args)
    if name in nb:
        candidates["numba"] = (lambda f=nb[name]: f(*args))
    if gcc is not None:
        candidates["gcc"] = gcc_peer.kernel(*gcc, name, args, tile)
    checked = _checked(name, args, candidates, row)
    _add_peers(name, workers, row, checked)
    try:
        raw = interleaved_ms(checked, runs)
    except WorkerDied as err:  # time the others without it, and say so
        row["errors"][err.label] = str(err)
        del workers[err.label], checked[err.label]
        raw = interleaved_ms(checked, runs)
    times = {label: statistics.median(t) for label, t in raw.items()}
    # the fastest round too: under load from other processes it moves less than the median
    row["min_ms"] = {label: min(t) for label, t in raw.items()}
    row.update({f"{label}_ms": times.get(label) for label in ("tirlite", *PEERS)})
    row["other_forms_ms"] = {k: t for k, t in times.items() if k.startswith("tirlite ")}
    if "halide" in workers:
        row["halide_schedule"] = workers["halide"].ready.get(name, {}).get("schedule")
    peers = [times[p] for p in PEERS if p in times]
    row["best_peer"] = min((p for p in PEERS if p in times), key=times.get, default=None)
    row["best_peer_over_tirlite"] = (min(peers) / times["tirlite"]
                                     if peers and "tirlite" in times else None)
    return row


# ---------------------------------------------------------------- report


def print_table(rows: list, meta: dict) -> None:
    head = (f"{'kernel':<14}{'tirlite ms':>11}{'numpy ms':>10}{'numba ms':>10}{'gcc ms':>9}"
            f"{'tvm ms':>9}"
            f"{'halide ms':>11}{'peer/tirlite':>14}{'  best peer':<12}{'gathers':>8}")
    print(head)
    print("-" * len(head))
    for r in rows:
        print(f"{r['kernel']:<14}{_cell(r['tirlite_ms']):>11}{_cell(r['numpy_ms']):>10}"
              f"{_cell(r['numba_ms']):>10}{_cell(r['gcc_ms']):>9}{_cell(r['tvm_ms']):>9}"
              f"{_cell(r['halide_ms']):>11}"
              f"{_cell(r['best_peer_over_tirlite'], 2):>14}  {r['best_peer'] or '-':<10}"
              f"{r.get('gathers', '-'):>8}")
    for r in rows:
        if r.get("form"):
            others = "".join(f", {k}: {_cell(t)} ms" for k, t in r["other_forms_ms"].items())
            print(f"  {r['kernel']}: tirlite built from {r['form']}{others}")
        if r.get("halide_schedule"):
            print(f"  {r['kernel']}: halide schedule: {r['halide_schedule']} (the faster one)")
        for label, err in r["errors"].items():
            print(f"  {r['kernel']}: {label}: {err}")
    print(f"\n{meta['n']} output elements (transpose {meta['side']}x{meta['side']}, "
          f"tirlite tile {meta['tile']}x{meta['tile']}); median of {meta['runs']} interleaved "
          f"rounds (the second of two calls in a row) after 2 warm-up rounds; 1 thread")
    print(f"host: {meta['cpu']}; numba {meta['numba']}, {meta['gcc']}, tvm {meta['tvm']}, halide "
          f"{meta['halide']}; load average {meta['load_before']:.1f} before, "
          f"{meta['load_after']:.1f} after; tirlite {meta['tirlite_source']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, one timed round")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "access_results.json"))
    parser.add_argument("--kernels", default=",".join(common.KERNELS),
                        help="comma-separated subset of " + ",".join(common.KERNELS))
    opts = parser.parse_args()
    n, runs = (2**16, 1) if opts.quick else (2**22, 21)
    names = [k for k in opts.kernels.split(",") if k]
    unknown = set(names) - set(common.KERNELS)
    if unknown:
        parser.error(f"unknown kernels: {sorted(unknown)}")
    target = codegen.Target("llvm")
    lanes = target.vector_width_bits // 32
    import llvmlite.binding as llvm

    config = {"n": n, "lanes": lanes, "kernels": names, "mcpu": llvm.get_host_cpu_name(),
              "triple": llvm.get_process_triple()}
    meta = {"n": n, "side": common.transpose_side(n), "tile": common.TRANSPOSE_TILE,
            "runs": runs,
            "tirlite_source": source_version(),
            "cpu": _host_cpu(), "numba": getattr(numba, "__version__", None),
            "load_before": os.getloadavg()[0]}
    workers = start_workers(config)
    meta["tvm"] = workers["tvm"].meta.get("version") if "tvm" in workers else None
    meta["halide"] = workers["halide"].meta.get("version") if "halide" in workers else None
    nb = {k: f for k, f in numba_fns().items() if k in names}
    gcc_dir = tempfile.TemporaryDirectory(prefix="bench-gcc-")
    try:
        *gcc, meta["gcc"] = gcc_peer.build(gcc_dir.name)
    except RuntimeError as err:
        print(f"note: gcc skipped: {err}")
        gcc, meta["gcc"] = None, None
    try:
        rows = [measure(name, n, common.TRANSPOSE_TILE, runs, nb, workers, gcc)
                for name in names]
    finally:
        for worker in workers.values():
            worker.close()
        gcc_dir.cleanup()
    meta["load_after"] = os.getloadavg()[0]
    print_table(rows, meta)
    Path(opts.out).write_text(json.dumps({"meta": meta, "rows": rows}, indent=2) + "\n")
    wrong = [(r["kernel"], w) for r in rows for w in r["wrong"]]
    if wrong:
        print(f"\nWRONG RESULTS (not timed): {wrong}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
