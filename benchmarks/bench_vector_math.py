"""Time tirlite's vector math (``LowerVectorMath``) against NumPy and numba, single-threaded.

Run from the repository root::

    .venv/bin/python benchmarks/bench_vector_math.py            # 2^20 floats, softmax 4096x1024
    .venv/bin/python benchmarks/bench_vector_math.py --quick    # small sizes, a smoke run

For each function: ``out = f(a)`` on 2^20 float32, tirlite's kernel vectorized as
wide as the host's vector registers, built with the default config (polynomial)
and with ``"tir.vector_math": "libm"`` (the calls as before this pass); then a
row softmax of 4096 x 1024 float32. See benchmarks/README.md.
"""

from __future__ import annotations

import os

for _var in ("TIRLITE_NUM_THREADS", "NUMBA_NUM_THREADS", "OMP_NUM_THREADS",
             "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse
import math
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
from llvmlite import binding as llvm

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench_kernels import interleaved_median_ms  # noqa: E402  (the same timing rounds)

import codegen  # noqa: E402
import tir  # noqa: E402
from tir import ir_builder  # noqa: E402
from transform import PassContext  # noqa: E402

try:
    import numba
except ImportError:  # numba is optional
    numba = None

LANES = codegen.Target("llvm").vector_width_bits // 32

#: function -> (input range, NumPy's version writing into ``out``, or None)
FUNCTIONS: dict[str, tuple[tuple[float, float], Callable | None]] = {
    "exp": ((-10, 10), lambda a, out: np.exp(a, out=out)),
    "exp2": ((-10, 10), lambda a, out: np.exp2(a, out=out)),
    "log": ((1e-3, 1e3), lambda a, out: np.log(a, out=out)),
    "log2": ((1e-3, 1e3), lambda a, out: np.log2(a, out=out)),
    "sin": ((-100, 100), lambda a, out: np.sin(a, out=out)),
    "cos": ((-100, 100), lambda a, out: np.cos(a, out=out)),
    "tanh": ((-5, 5), lambda a, out: np.tanh(a, out=out)),
    "sigmoid": ((-10, 10), lambda a, out: np.reciprocal(np.exp(np.negative(a, out=out), out=out)
                                                         + np.float32(1), out=out)),
    "erf": ((-4, 4), None),  # NumPy has no erf
    "sqrt": ((0, 100), lambda a, out: np.sqrt(a, out=out)),
    "rsqrt": ((1e-3, 100), lambda a, out: np.reciprocal(np.sqrt(a, out=out), out=out)),
    "pow": ((0.1, 10), lambda a, out, b=None: np.power(a, b, out=out)),
}


def tir_unary(name: str, n: int) -> tir.PrimFunc:
    """``out[k] = f(a[k] (, b[k]))``, k = i * LANES + j, j vectorized."""
    bufs = [tir.decl_buffer((n,), "float32", name=s) for s in ("a", "b", "out")]
    ib = ir_builder.create()
    a, b, out = (ib.buffer_ptr(x) for x in bufs)
    with (ib.for_range(0, n // LANES, name="i") as i,
          ib.for_range(0, LANES, name="j", kind="vectorize") as j):
        k = i * LANES + j
        fn = getattr(tir, name)
        out[k] = fn(a[k], b[k]) if name == "pow" else fn(a[k])
    return tir.PrimFunc(bufs, ib.get())


def tir_softmax(rows: int, cols: int) -> tir.PrimFunc:
    """Row softmax: the row max, exp(x - max) with partial sums, then divide by the sum."""
    X = tir.decl_buffer((rows, cols), "float32", name="X")
    Y = tir.decl_buffer((rows, cols), "float32", name="Y")
    ib = ir_builder.create()
    x, y = ib.buffer_ptr(X), ib.buffer_ptr(Y)
    part = ib.allocate("float32", (LANES,), name="part")  # one running value per lane
    with ib.for_range(0, rows, name="r") as r:
        with ib.for_range(0, LANES, name="j", kind="vectorize") as j:
            part[j] = x[r, j]
        with (ib.for_range(1, cols // LANES, name="c") as c,
              ib.for_range(0, LANES, name="j", kind="vectorize") as j):
            part[j] = tir.max(part[j], x[r, c * LANES + j])
        row_max = ib.let("row_max", _reduce(part, tir.max))
        with ib.for_range(0, LANES, name="j", kind="vectorize") as j:
            part[j] = tir.const(0.0, "float32")
        with (ib.for_range(0, cols // LANES, name="c") as c,
              ib.for_range(0, LANES, name="j", kind="vectorize") as j):
            e = tir.exp(x[r, c * LANES + j] - row_max)
            y[r, c * LANES + j] = e
            part[j] = part[j] + e
        total = ib.let("total", _reduce(part, lambda p, q: p + q))
        with (ib.for_range(0, cols // LANES, name="c") as c,
              ib.for_range(0, LANES, name="j", kind="vectorize") as j):
            y[r, c * LANES + j] = y[r, c * LANES + j] / total
    return tir.PrimFunc([X, Y], ib.get())


def _reduce(part, combine: Callable):
    out = part[0]
    for lane in range(1, LANES):
        out = combine(out, part[lane])
    return out


def numpy_softmax(x: np.ndarray, y: np.ndarray) -> None:
    """The NumPy way: exp(x - max) / sum, row by row (broadcast)."""
    np.exp(x - x.max(1, keepdims=True), out=y)
    y /= y.sum(1, keepdims=True)


def _numba_kernels() -> dict:
    if numba is None:
        return {}
    ufuncs = {"exp": math.exp, "log": math.log, "sin": math.sin, "cos": math.cos,
              "tanh": math.tanh, "erf": math.erf, "sqrt": math.sqrt}
    out = {}
    for name, fn in ufuncs.items():
        def make(fn=fn):
            @numba.njit(cache=False)
            def kernel(a, o):
                for k in range(a.size):
                    o[k] = fn(a[k])
            return kernel
        out[name] = make()

    @numba.njit
    def softmax(x, y):
        for r in range(x.shape[0]):
            m = x[r, 0]
            for c in range(x.shape[1]):
                m = max(m, x[r, c])
            s = np.float32(0.0)
            for c in range(x.shape[1]):
                y[r, c] = math.exp(x[r, c] - m)
                s += y[r, c]
            for c in range(x.shape[1]):
                y[r, c] /= s

    out["softmax"] = softmax
    return out


def _build(func: tir.PrimFunc, mode: str):
    with PassContext(config={"tir.vector_math": mode}):
        return codegen.build(func)["main"]


def bench_function(name: str, n: int, runs: int, nb: dict) -> dict:
    """Times of ``name`` on n floats: tirlite (polynomial, libm), NumPy, numba."""
    rng = np.random.default_rng(0)
    (lo, hi), numpy_fn = FUNCTIONS[name]
    a = rng.uniform(lo, hi, n).astype(np.float32)
    b = rng.uniform(-5, 5, n).astype(np.float32)
    out, out_libm, out_np = (np.empty(n, np.float32) for _ in range(3))
    func = tir_unary(name, n)
    poly, libm = _build(func, "polynomial"), _build(func, "libm")
    fns = {"tirlite": lambda: poly(a, b, out), "tirlite libm": lambda: libm(a, b, out_libm)}
    if numpy_fn is not None:
        fns["numpy"] = ((lambda: numpy_fn(a, out_np, b)) if name == "pow"
                        else (lambda: numpy_fn(a, out_np)))
    if name in nb:
        out_nb = np.empty(n, np.float32)
        fns["numba"] = lambda: nb[name](a, out_nb)
    times = interleaved_median_ms(fns, runs)
    np.testing.assert_allclose(out, out_libm, rtol=2e-6, atol=1e-30)
    return times


def bench_softmax(rows: int, cols: int, runs: int, nb: dict) -> dict:
    """Times of the softmax: tirlite (polynomial, libm), NumPy, numba."""
    x = np.random.default_rng(1).standard_normal((rows, cols)).astype(np.float32) * 4
    ys = {k: np.empty_like(x) for k in ("poly", "libm", "np", "nb")}
    func = tir_softmax(rows, cols)
    poly, libm = _build(func, "polynomial"), _build(func, "libm")
    fns = {"tirlite": lambda: poly(x, ys["poly"]), "tirlite libm": lambda: libm(x, ys["libm"]),
           "numpy": lambda: numpy_softmax(x, ys["np"])}
    if "softmax" in nb:
        fns["numba"] = lambda: nb["softmax"](x, ys["nb"])
    times = interleaved_median_ms(fns, runs)
    np.testing.assert_allclose(ys["poly"], ys["np"], rtol=1e-5, atol=1e-9)
    return times


def main() -> None:
    """Print one row per function and the softmax: ms per candidate, NumPy / tirlite."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, few runs")
    args = parser.parse_args()
    n, rows, runs = (1 << 14, 256, 3) if args.quick else (1 << 20, 4096, 15)
    nb = _numba_kernels()
    cols = ("tirlite", "tirlite libm", "numpy", "numba")
    print(f"host: {llvm.get_host_cpu_name()}, {LANES} float32 lanes; n = {n}")
    print(f"{'function':10}" + "".join(f"{c:>14}" for c in cols) + f"{'numpy/tirlite':>15}")
    rows_out = [(name, bench_function(name, n, runs, nb)) for name in FUNCTIONS]
    rows_out.append((f"softmax {rows}x1024", bench_softmax(rows, 1024, runs, nb)))
    for name, t in rows_out:
        cells = "".join(f"{t[c]:14.3f}" if c in t else f"{'-':>14}" for c in cols)
        ratio = f"{t['numpy'] / t['tirlite']:15.2f}" if "numpy" in t else f"{'-':>15}"
        print(f"{name:10}{cells}{ratio}", flush=True)


if __name__ == "__main__":
    main()
