"""Max ulp error of tirlite's float32 vector math (``LowerVectorMath``) against float64.

Run from the repository root::

    .venv/bin/python benchmarks/vector_math_accuracy.py           # 2^22 inputs per function
    .venv/bin/python benchmarks/vector_math_accuracy.py --full    # every float32 input

``--full`` feeds all 2^32 float32 bit patterns through each one-argument
function (about 20 minutes on 2 processes); ``pow`` gets 2^28 random
(x, y) pairs instead (x over every exponent; y half integers, half over
every exponent up to 2^8). Each function is built as a vectorized kernel as
wide as the host's vector registers, under the default config.

Error measure: |got - ref| in units of the float32 ulp of ``ref`` (the float64
reference, NumPy's float64 functions; ``math.erf`` for erf), where the ulp
of a result below 2^-126 is the denormal spacing 2^-149, and infinity
counts as 2^128. NaN must match NaN exactly (any mismatch is reported as an
infinite error). The tests (tests/transform/test_vector_math_accuracy.py)
import the helpers here.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import codegen  # noqa: E402
import tir  # noqa: E402
from tir import ir_builder  # noqa: E402
from transform import PassContext  # noqa: E402

UNARY = ("exp", "exp2", "log", "log2", "sin", "cos", "tanh", "sigmoid", "erf", "sqrt", "rsqrt")
FUNCTIONS = UNARY + ("pow",)

_erf = np.frompyfunc(math.erf, 1, 1)


def lanes() -> int:
    """float32 lanes of the host's widest vector register."""
    return codegen.Target("llvm").vector_width_bits // 32


def kernel(name: str, width: int) -> tir.PrimFunc:
    """``out[i, j] = f(a[i, j] (, b[i, j]))`` over an (m, width) array, j vectorized."""
    m = tir.size_var("m")
    shape = (m, width)
    args = [tir.decl_buffer(shape, "float32", name=n) for n in ("a", "b", "out")]
    ib = ir_builder.create()
    a, b, out = (ib.buffer_ptr(buf) for buf in args)
    with ib.for_range(0, m, name="i") as i:
        with ib.for_range(0, width, kind="vectorize", name="j") as j:
            fn = getattr(tir, name)
            out[i, j] = fn(a[i, j], b[i, j]) if name == "pow" else fn(a[i, j])
    return tir.PrimFunc(args, ib.get())


def build(name: str, target: str = "llvm", config: dict | None = None, width: int | None = None):
    """The built kernel of ``name`` (``target="interp"`` for the interpreter)."""
    with PassContext(config=config or {}):
        return codegen.build(kernel(name, width or lanes()), target=target)


def run(module, x: np.ndarray, y: np.ndarray | None = None, width: int | None = None):
    """``module`` on ``x`` (and ``y``), padded to whole rows; returns float32 results."""
    width = width or lanes()
    n = x.size
    rows = -(-n // width)
    a = np.zeros(rows * width, np.float32)
    b = np.ones(rows * width, np.float32)
    a[:n] = x
    if y is not None:
        b[:n] = y
    out = np.empty_like(a)
    module["main"](a.reshape(rows, width), b.reshape(rows, width), out.reshape(rows, width))
    return out[:n]


def reference(name: str, x: np.ndarray, y: np.ndarray | None = None) -> np.ndarray:
    """``name`` in float64 on the float32 inputs."""
    with np.errstate(all="ignore"):
        x = x.astype(np.float64)
        if name == "pow":
            return np.power(x, y.astype(np.float64))
        if name == "erf":
            return _erf(x).astype(np.float64)
        if name == "sigmoid":
            return 1.0 / (1.0 + np.exp(-x))
        if name == "rsqrt":
            return 1.0 / np.sqrt(x)
        return getattr(np, name)(x)


def ulp_error(got: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """Per element |got - ref| in float32 ulps of ref (inf for a NaN mismatch)."""
    got = got.astype(np.float64)
    big = 2.0**128
    g = np.where(np.isinf(got), np.copysign(big, got), got)
    r = np.clip(ref, -big, big)
    exponent = np.frexp(np.maximum(np.abs(r), 2.0**-126))[1] - 1
    ulp = np.ldexp(1.0, exponent - 23)
    with np.errstate(invalid="ignore"):
        err = np.abs(g - r) / ulp
    nan_got, nan_ref = np.isnan(got), np.isnan(ref)
    err = np.where(nan_got & nan_ref, 0.0, err)
    return np.where(nan_got != nan_ref, np.inf, err)


def special_inputs() -> np.ndarray:
    """Zeros, infinities, NaN, denormal and normal bounds, overflow/underflow thresholds."""
    f = np.float32
    edges = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 2.0, 0.5,
             np.finfo(f).tiny, np.finfo(f).max, np.finfo(f).smallest_subnormal,
             88.72283, 88.72284, 88.7229, -87.33654, -87.3366, -103.9721, -103.97208, -104.0,
             128.0, 127.99999, -126.0, -149.0, -149.5, -150.0, -151.0, 3.92, 0.921875, 0.625,
             9.0, 1e-20, 2.0**17, 2.0**17 + 0.0078125, 1e5, 1e10, 1e30, math.pi / 2,
             math.pi, 3 * math.pi / 2, 1e-3, 1e-8]
    values = np.array(edges + [-e for e in edges], np.float32)
    with np.errstate(all="ignore"):
        up, down = np.nextafter(values, np.float32(np.inf)), np.nextafter(values, -np.inf)
    return np.concatenate([values, up, down.astype(np.float32)])


def sample_inputs(count: int, seed: int = 0) -> np.ndarray:
    """``count`` float32 values spread evenly over every bit pattern, plus the specials."""
    rng = np.random.default_rng(seed)
    patterns = rng.integers(0, 2**32, size=count, dtype=np.uint64).astype(np.uint32)
    return np.concatenate([special_inputs(), patterns.view(np.float32)])


def pow_inputs(count: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(x, y) pairs: x over every positive and negative exponent; y half integers, half
    over every exponent up to 2^8; plus every pair of special values."""
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 2**32, size=count, dtype=np.uint64).astype(np.uint32).view(np.float32)
    y_float = (rng.uniform(-1, 1, count) * 2.0 ** rng.uniform(-30, 8, count)).astype(np.float32)
    y_int = rng.integers(-300, 300, size=count).astype(np.float32)
    y = np.where(rng.random(count) < 0.5, y_int, y_float)
    specials = np.concatenate([special_inputs(), np.array([3, -3, 0.5, -0.5, 1e9], np.float32)])
    sx, sy = np.meshgrid(specials, specials)
    return np.concatenate([sx.ravel(), x]), np.concatenate([sy.ravel(), y])


# ---------------------------------------------------------------- the full sweep

_MODULES: dict = {}


def _sweep_chunk(task: tuple) -> tuple[float, float]:
    """Max ulp error (and its input) over one chunk of bit patterns or random pow pairs."""
    name, start, count = task
    module = _MODULES.setdefault(name, build(name))
    if name == "pow":
        x, y = pow_inputs(count, seed=start)
    else:
        x = np.arange(start, start + count, dtype=np.uint64).astype(np.uint32).view(np.float32)
        y = None
    err = ulp_error(run(module, x, y), reference(name, x, y))
    worst = int(np.argmax(err))
    return float(err[worst]), float(x[worst])


def full_sweep(name: str, workers: int = 2, chunk: int = 1 << 22) -> tuple[float, float]:
    """Max ulp error of ``name`` over every float32 input (pow: 2^28 random pairs)."""
    total = 1 << 28 if name == "pow" else 1 << 32
    tasks = [(name, start, chunk) for start in range(0, total, chunk)]
    with ProcessPoolExecutor(workers) as pool:
        results = list(pool.map(_sweep_chunk, tasks, chunksize=4))
    return max(results)


def main() -> None:
    """Print the max ulp error of each function (a sample, or every input with --full)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full", action="store_true", help="every float32 input")
    parser.add_argument("--functions", default=",".join(FUNCTIONS))
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()
    print(f"{'function':10} {'max ulp':>8}  worst input   seconds")
    for name in args.functions.split(","):
        start = time.perf_counter()
        if args.full:
            err, worst = full_sweep(name, args.workers)
        else:
            err, worst = _sweep_chunk((name, 0, 1 << 22)) if name == "pow" else _sample(name)
        print(f"{name:10} {err:8.3f}  {worst!r:12}  {time.perf_counter() - start:6.1f}",
              flush=True)


def _sample(name: str) -> tuple[float, float]:
    x = sample_inputs(1 << 22)
    err = ulp_error(run(build(name), x), reference(name, x))
    worst = int(np.argmax(err))
    return float(err[worst]), float(x[worst])


if __name__ == "__main__":
    main()
