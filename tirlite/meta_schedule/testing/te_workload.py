"""The workloads the tuner is measured and tested on, written with ``tir.te`` as a user writes them.

Each function returns an unscheduled ``PrimFunc`` (TVM's ``te_workload``
returns tensors; a PrimFunc is what ``tune_tir`` takes). ``reference`` gives
NumPy's answer for each, in float64 where it sums.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

import tir
from tir import te

F32 = "float32"


def matmul(m: int, n: int | None = None, k: int | None = None, dtype: str = F32) -> tir.PrimFunc:
    """``C = A @ B`` with ``A`` m x k, ``B`` k x n."""
    n, k = n or m, k or m
    a = te.placeholder((m, k), dtype, "A")
    b = te.placeholder((k, n), dtype, "B")
    r = te.reduce_axis((0, k), "k")
    c = te.compute((m, n), lambda i, j: te.sum(a[i, r] * b[r, j], axis=r), name="C")
    return te.create_prim_func([a, b, c])


def matmul_bt(m: int, n: int | None = None, k: int | None = None,
              dtype: str = F32) -> tir.PrimFunc:
    """``C = A @ B.T`` with ``A`` m x k, ``B`` n x k (a linear layer's weight layout)."""
    n, k = n or m, k or m
    a = te.placeholder((m, k), dtype, "A")
    b = te.placeholder((n, k), dtype, "B")
    r = te.reduce_axis((0, k), "k")
    c = te.compute((m, n), lambda i, j: te.sum(a[i, r] * b[j, r], axis=r), name="C")
    return te.create_prim_func([a, b, c])


def conv2d_nhwc_bias_relu(n: int, h: int, w: int, ci: int, co: int) -> tir.PrimFunc:
    """The seed's conv layer: 3x3, no padding (the input has h + 2 rows), bias as init, ReLU.

    ``out[n, y, x, c] = max(0, bias[c] + sum filt[ci, ky, kx, c] * inp[n, y + ky, x + kx, ci])``
    """
    inp = te.placeholder((n, h + 2, w + 2, ci), F32, "inp")
    filt = te.placeholder((ci, 3, 3, co), F32, "filt")
    bias = te.placeholder((co,), F32, "bias")
    ry, rx, rc = (te.reduce_axis((0, 3), "ry"), te.reduce_axis((0, 3), "rx"),
                  te.reduce_axis((0, ci), "rc"))
    conv = te.compute((n, h, w, co), lambda b, y, x, c: te.sum(
        filt[rc, ry, rx, c] * inp[b, y + ry, x + rx, rc], axis=[ry, rx, rc], init=bias[c]),
        name="conv")
    relu = te.compute((n, h, w, co), lambda b, y, x, c: tir.max(
        conv[b, y, x, c], tir.const(0, F32)), name="relu")
    return te.create_prim_func([inp, filt, bias, relu])


def softmax_rows(rows: int, cols: int) -> tir.PrimFunc:
    """``softmax`` of each row: max, exp of the difference, sum, divide."""
    x = te.placeholder((rows, cols), F32, "x")
    k1 = te.reduce_axis((0, cols), "k1")
    mx = te.compute((rows,), lambda i: te.max(x[i, k1], axis=k1), name="row_max")
    e = te.compute((rows, cols), lambda i, j: tir.exp(x[i, j] - mx[i]), name="exp")
    k2 = te.reduce_axis((0, cols), "k2")
    s = te.compute((rows,), lambda i: te.sum(e[i, k2], axis=k2), name="row_sum")
    out = te.compute((rows, cols), lambda i, j: e[i, j] / s[i], name="softmax")
    return te.create_prim_func([x, out])


def layernorm_rows(rows: int, cols: int, eps: float = 1e-5) -> tir.PrimFunc:
    """Layer normalization of each row with a learned scale and shift over the columns."""
    x = te.placeholder((rows, cols), F32, "x")
    gamma = te.placeholder((cols,), F32, "gamma")
    beta = te.placeholder((cols,), F32, "beta")
    k1 = te.reduce_axis((0, cols), "k1")
    k2 = te.reduce_axis((0, cols), "k2")
    s1 = te.compute((rows,), lambda i: te.sum(x[i, k1], axis=k1), name="row_sum")
    s2 = te.compute((rows,), lambda i: te.sum(x[i, k2] * x[i, k2], axis=k2), name="row_sq")
    inv = tir.const(1.0 / cols, F32)

    def norm(i, j):
        mean = s1[i] * inv
        var = s2[i] * inv - mean * mean
        return (x[i, j] - mean) / tir.sqrt(var + tir.const(eps, F32)) * gamma[j] + beta[j]

    out = te.compute((rows, cols), norm, name="layernorm")
    return te.create_prim_func([x, gamma, beta, out])


def add_bias_relu(rows: int, cols: int) -> tir.PrimFunc:
    """An elementwise stage with a broadcast operand: ``max(x + b[j], 0)``."""
    x = te.placeholder((rows, cols), F32, "x")
    b = te.placeholder((cols,), F32, "b")
    y = te.compute((rows, cols), lambda i, j: x[i, j] + b[j], name="add")
    z = te.compute((rows, cols), lambda i, j: tir.max(y[i, j], tir.const(0, F32)), name="relu")
    return te.create_prim_func([x, b, z])


def reference(name: str) -> Callable:
    """NumPy's version of workload ``name``: a function of the input arrays returning the output."""
    def mm(a, b):
        return (a.astype(np.float64) @ b).astype(np.float32)

    def conv(inp, filt, bias):
        h, w = inp.shape[1] - 2, inp.shape[2] - 2
        acc = np.zeros((inp.shape[0], h, w, filt.shape[3])) + bias
        for ky in range(3):
            for kx in range(3):
                acc += inp[:, ky:ky + h, kx:kx + w, :].astype(np.float64) @ filt[:, ky, kx, :]
        return np.maximum(acc, 0).astype(np.float32)

    def softmax(x):
        e = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
        return (e / e.sum(axis=1, keepdims=True)).astype(np.float32)

    def layernorm(x, gamma, beta, eps=1e-5):
        x64 = x.astype(np.float64)
        mean = x64.mean(axis=1, keepdims=True)
        var = x64.var(axis=1, keepdims=True)
        return ((x64 - mean) / np.sqrt(var + eps) * gamma + beta).astype(np.float32)

    def add_relu(x, b):
        return np.maximum(x + b, 0)

    return {"matmul": mm, "conv2d_nhwc_bias_relu": conv, "softmax_rows": softmax,
            "layernorm_rows": layernorm, "add_bias_relu": add_relu}[name]
