"""The interpreter's meaning of each pure element-wise intrinsic, as NumPy functions.

Each entry takes the already-evaluated arguments (NumPy scalars or lane
arrays of the call's dtype) and returns the result. Calls that need the
interpreter itself (``if_then_else`` evaluates one branch only, ``ret``,
``vscale``) live in the interpreter.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

_erf = np.vectorize(math.erf, otypes=[np.float64])


def _same_type(fn: Callable) -> Callable:
    """Wrap a float function so its result keeps the dtype of its first argument."""

    def apply(x, *rest):
        dtype = np.asarray(x).dtype
        return np.asarray(fn(x, *rest)).astype(dtype)[()]

    return apply


def _fma(a, b, c):
    # A fused multiply-add rounds once: compute in double, round to the type.
    dtype = np.asarray(a).dtype
    wide = np.float64 if dtype.itemsize < 8 else np.longdouble
    exact = np.asarray(a, wide) * np.asarray(b, wide) + np.asarray(c, wide)
    return exact.astype(dtype)[()]


def _popcount(x):
    arr = np.asarray(x)
    bits = np.unpackbits(np.atleast_1d(arr).view(np.uint8)).reshape(arr.size, -1).sum(axis=1)
    return bits.astype(arr.dtype).reshape(arr.shape)[()]


def _shift(fn: Callable) -> Callable:
    def apply(a, b):
        return fn(a, np.asarray(b).astype(np.asarray(a).dtype))

    return apply


ELEMENTWISE: dict[str, Callable] = {
    "tir.exp": _same_type(np.exp),
    "tir.exp2": _same_type(np.exp2),
    "tir.exp10": _same_type(lambda x: np.power(10.0, x)),
    "tir.log": _same_type(np.log),
    "tir.log2": _same_type(np.log2),
    "tir.log10": _same_type(np.log10),
    "tir.log1p": _same_type(np.log1p),
    "tir.sqrt": _same_type(np.sqrt),
    "tir.rsqrt": _same_type(lambda x: 1.0 / np.sqrt(np.asarray(x, np.float64))),
    "tir.sin": _same_type(np.sin),
    "tir.cos": _same_type(np.cos),
    "tir.tan": _same_type(np.tan),
    "tir.tanh": _same_type(np.tanh),
    "tir.sigmoid": _same_type(lambda x: 1.0 / (1.0 + np.exp(-np.asarray(x, np.float64)))),
    "tir.erf": _same_type(_erf),
    "tir.floor": _same_type(np.floor),
    "tir.ceil": _same_type(np.ceil),
    "tir.trunc": _same_type(np.trunc),
    "tir.round": _same_type(np.rint),  # halves to even, as numpy and llvm.roundeven
    "tir.nearbyint": _same_type(np.rint),
    "tir.fabs": _same_type(np.abs),
    "tir.pow": _same_type(np.power),
    "tir.fma": _fma,
    "tir.isnan": np.isnan,
    "tir.isinf": np.isinf,
    "tir.bitwise_and": np.bitwise_and,
    "tir.bitwise_or": np.bitwise_or,
    "tir.bitwise_xor": np.bitwise_xor,
    "tir.bitwise_not": np.invert,
    "tir.shift_left": _shift(np.left_shift),
    "tir.shift_right": _shift(np.right_shift),
    "tir.popcount": _popcount,
}
