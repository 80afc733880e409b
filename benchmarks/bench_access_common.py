"""What bench_access.py and its TVM and Halide workers share: data, checks, the worker loop.

NumPy only, so that it runs unchanged in tirlite's venv, TVM's and Halide's.
Every process builds its inputs from the same seed, so every candidate
computes on the same numbers and is checked against the same NumPy result.

A worker (bench_access_tvm.py, bench_access_halide.py) builds its kernels,
runs and checks each once, prints one JSON line ``{"ready": {name: {"ok":
true} or {"error": "..."}}, "version": ...}``, then reads kernel names from
stdin, one a line, runs that kernel once per name and prints its time in ms
as one JSON number. bench_access.py drives it so that every round of the
timing runs each candidate once, the workers' included: load from other
processes falls on all candidates alike, and the ratios come from one run.
"""

from __future__ import annotations

import json
import math
import sys
import time
from collections.abc import Callable

import numpy as np

KERNELS = ("copy_s2", "copy_s3", "store_s2", "group5", "sum_s2", "sum_s3", "reverse", "cmul",
           "rgb_gray_f32", "rgb_gray_u8", "transpose", "colscan", "dot_i8", "gather")

# RGB -> gray: ITU-R BT.601 luma weights; the uint8 version in 8-bit fixed point
# (77 + 150 + 29 = 256, so (w . rgb + 128) >> 8 stays within 0..255).
GRAY_F32 = (0.299, 0.587, 0.114)
GRAY_U8 = (77, 150, 29)


#: The transpose's tile, the same for every compiler: 8 x 8 float32 (the classic block; a
#: 16 x 16 tile of a 2048-wide matrix reads 16 rows 8 KiB apart, which share one L1 set).
TRANSPOSE_TILE = 8


def transpose_side(n: int) -> int:
    """The transpose is side x side with side * side = n (2048 for n = 2^22)."""
    side = math.isqrt(n)
    if side * side != n:
        raise ValueError(f"n = {n} is not a square; the transpose needs one")
    return side


def arrays(name: str, n: int) -> list:
    """The arguments of kernel ``name`` in call order, outputs zeroed (``n`` output elements)."""
    rng = np.random.default_rng(sum(map(ord, name)))
    vec = lambda size: rng.random(size, dtype=np.float32)  # noqa: E731
    zeros = lambda size, dtype=np.float32: np.zeros(size, dtype)  # noqa: E731
    if name == "cmul":  # n complex numbers, re and im interleaved
        return [vec(2 * n) - np.float32(0.5), vec(2 * n) - np.float32(0.5), zeros(2 * n)]
    if name == "rgb_gray_u8":
        return [rng.integers(0, 256, 3 * n, dtype=np.uint8), zeros(n, np.uint8)]
    if name in ("transpose", "colscan"):
        side = transpose_side(n)
        return [vec(n).reshape(side, side), zeros((side, side))]
    if name == "gather":
        return [vec(n), rng.integers(0, n, n, dtype=np.int32), zeros(n)]
    if name == "dot_i8":  # sum of int8 products in int32
        return [rng.integers(-128, 128, n, dtype=np.int8),
                rng.integers(-128, 128, n, dtype=np.int8), zeros(1, np.int32)]
    # (input elements, output elements) per output element n of the one-input kernels
    sizes = {"copy_s2": (2, 1), "copy_s3": (3, 1), "sum_s2": (2, 0), "sum_s3": (3, 0),
             "store_s2": (1, 2), "group5": (5, 1), "reverse": (1, 1), "rgb_gray_f32": (3, 1)}
    ins, outs = sizes[name]
    return [vec(ins * n), zeros(outs * n if outs else 1)]


def _strided_store(a: np.ndarray) -> np.ndarray:
    out = np.zeros(2 * a.size, np.float32)
    out[::2] = a
    return out


def _gray_u8(a: np.ndarray) -> np.ndarray:
    wide = a.reshape(-1, 3).astype(np.int32) @ np.array(GRAY_U8, np.int32)
    return ((wide + 128) >> 8).astype(np.uint8)


#: NumPy's result of each kernel from its arguments (in float64 for the sums).
_EXPECTED = {
    "copy_s2": lambda args: args[0][::2].copy(),
    "copy_s3": lambda args: args[0][::3].copy(),
    "sum_s2": lambda args: np.array([args[0][::2].sum(dtype=np.float64)]),
    "sum_s3": lambda args: np.array([args[0][::3].sum(dtype=np.float64)]),
    "store_s2": lambda args: _strided_store(args[0]),
    "group5": lambda args: args[0].reshape(-1, 5).sum(axis=1, dtype=np.float64),
    "reverse": lambda args: args[0][::-1].copy(),
    "cmul": lambda args: (args[0].view(np.complex64)
                          * args[1].view(np.complex64)).view(np.float32),
    "rgb_gray_f32": lambda args: args[0].reshape(-1, 3) @ np.array(GRAY_F32, np.float32),
    "rgb_gray_u8": lambda args: _gray_u8(args[0]),
    "transpose": lambda args: args[0].T.copy(),
    "colscan": lambda args: np.cumsum(args[0], axis=0, dtype=np.float32),
    "gather": lambda args: args[0][args[1]],
    "dot_i8": lambda args: np.array([np.dot(args[0].astype(np.int32), args[1])], np.int32),
}


def expected(name: str, args: list) -> np.ndarray:
    """NumPy's result of kernel ``name`` on ``args`` (in float64 for the sums)."""
    return _EXPECTED[name](args)


def output(name: str, args: list) -> np.ndarray:
    """The argument a kernel writes its result to (the last one)."""
    return args[-1]


def check(name: str, got: np.ndarray, want: np.ndarray) -> None:
    """Raise AssertionError unless ``got`` is ``want`` (exact, or within float rounding)."""
    if name in ("sum_s2", "sum_s3"):
        # float32 partial sums of millions of terms in [0, 1): bound by the sum itself
        err = abs(float(got[0]) - float(want[0]))
        if not err <= 1e-4 * abs(float(want[0])):
            raise AssertionError(f"{name}: got {got[0]}, want {want[0]} (error {err:.3g})")
        return
    if name in ("cmul", "rgb_gray_f32", "group5", "colscan"):  # FMA, order: the rounding differs
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, err_msg=name)
        return
    if got.shape != want.shape or not np.array_equal(got, want):
        bad = np.flatnonzero(got.reshape(-1) != want.reshape(-1))
        raise AssertionError(f"{name}: {bad.size} of {want.size} elements differ "
                             f"(first at flat index {bad[:1].tolist()})")


def run_and_check(name: str, args: list, run: Callable, result: Callable | None = None) -> None:
    """Zero the output, run once, check against NumPy; ``result()`` reads the output."""
    out = output(name, args)
    out[...] = 0
    run()
    got = result() if result is not None else out
    check(name, np.asarray(got), expected(name, args))


def error_text(err: BaseException) -> str:
    """One line for a table: the exception's type and the last line of its message."""
    lines = str(err).strip().splitlines() or [""]
    return f"{type(err).__name__}: {lines[-1][:200]}"


def serve(runners: dict, ready: dict, meta: dict) -> None:
    """The worker loop: announce ``ready``, then time one run of ``runners[name]`` per line."""
    print(json.dumps({"ready": ready, **meta}), flush=True)
    for line in sys.stdin:
        name = line.strip()
        if not name:
            break
        start = time.perf_counter()
        runners[name]()
        print(json.dumps((time.perf_counter() - start) * 1e3), flush=True)
