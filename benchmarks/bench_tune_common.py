"""What bench_tune.py and its peers' workers share: shapes, data, NumPy's answer, the checks.

NumPy only, so that it runs unchanged in every venv. matmul and conv are
bench_schedule_common's (same shapes, same data); softmax and layernorm are
rows of a 4096 x 1024 float32 matrix (256 x 1024 under ``--quick``):

- ``softmax``: ``out = exp(x - max(x)) / sum(exp(x - max(x)))`` per row;
- ``layernorm``: ``out = (x - mean) / sqrt(var + 1e-5) * gamma + beta`` per
  row, ``var = E[x^2] - mean^2`` (as tirlite's te workload computes it).
"""

from __future__ import annotations

from collections.abc import Callable

import bench_schedule_common as sched
import numpy as np

KERNELS = ("matmul512", "matmul1024", "conv", "softmax", "layernorm")
ROWS = ("softmax", "layernorm")
EPS = np.float32(1e-5)


def shape(kernel: str, quick: bool) -> dict:
    """The sizes of ``kernel``."""
    if kernel in ROWS:
        return {"rows": 256 if quick else 4096, "cols": 1024}
    return sched.shape(kernel, quick)


def describe(kernel: str, quick: bool) -> str:
    """The sizes as one short string."""
    if kernel in ROWS:
        s = shape(kernel, quick)
        return f"{s['rows']}x{s['cols']} rows"
    return sched.describe(kernel, quick)


def flops(kernel: str, quick: bool) -> float | None:
    """Floating-point operations (None for the row kernels: compared by time)."""
    return None if kernel in ROWS else sched.flops(kernel, quick)


def arrays(kernel: str, quick: bool) -> list:
    """Inputs then the zeroed output, from a seed fixed per kernel."""
    if kernel not in ROWS:
        return sched.arrays(kernel, quick)
    s = shape(kernel, quick)
    rng = np.random.default_rng(sum(map(ord, kernel)))
    x = (rng.standard_normal((s["rows"], s["cols"])) * 3).astype(np.float32)
    out = np.zeros_like(x)
    if kernel == "softmax":
        return [x, out]
    gamma = rng.standard_normal(s["cols"]).astype(np.float32)
    beta = rng.standard_normal(s["cols"]).astype(np.float32)
    return [x, gamma, beta, out]


def expected(kernel: str, args: list) -> np.ndarray:
    """NumPy's answer, in float64 where it sums."""
    if kernel == "softmax":
        x = args[0].astype(np.float64)
        e = np.exp(x - x.max(axis=1, keepdims=True))
        return (e / e.sum(axis=1, keepdims=True)).astype(np.float32)
    if kernel == "layernorm":
        x, gamma, beta = (a.astype(np.float64) for a in args[:3])
        mean = x.mean(axis=1, keepdims=True)
        var = (x * x).mean(axis=1, keepdims=True) - mean * mean
        return ((x - mean) / np.sqrt(var + 1e-5) * gamma + beta).astype(np.float32)
    return sched.expected(kernel, args)


def check(kernel: str, got: np.ndarray, want: np.ndarray) -> None:
    """Raise AssertionError unless ``got`` is ``want`` within float32 rounding.

    Rows: 1024-term float32 sums in any order, a float32 exp and sqrt: relative
    errors of a few 1e-6, 1e-4 leaves room for reassociation.
    """
    if kernel in ROWS:
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5, err_msg=kernel)
    else:
        sched.check(kernel, got, want)


def numpy_fn(kernel: str, args: list) -> Callable:
    """What a NumPy user writes, into the preallocated output where NumPy can."""
    if kernel == "softmax":
        x, out = args

        def softmax():
            np.subtract(x, x.max(axis=1, keepdims=True), out=out)
            np.exp(out, out=out)
            np.divide(out, out.sum(axis=1, keepdims=True), out=out)
        return softmax
    if kernel == "layernorm":
        x, gamma, beta, out = args

        def layernorm():
            mean = x.mean(axis=1, keepdims=True)
            var = x.var(axis=1, keepdims=True)
            np.subtract(x, mean, out=out)
            np.divide(out, np.sqrt(var + EPS), out=out)
            np.multiply(out, gamma, out=out)
            np.add(out, beta, out=out)
        return layernorm
    return sched.numpy_fn(kernel, args)
