"""The interpreter's meaning of each pure element-wise intrinsic, as NumPy functions.

Each entry takes the already-evaluated arguments (NumPy scalars or lane
arrays of the call's dtype) and returns the result. Calls that need the
interpreter itself (``if_then_else`` evaluates one branch only, ``ret``,
``vscale``) live in the interpreter.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction

import numpy as np

_erf = np.vectorize(math.erf, otypes=[np.float64])


def _same_type(fn: Callable, in_float32: Callable | None = None) -> Callable:
    """Wrap a float function so its result keeps the dtype of its first argument.

    float16/bfloat16 compute in float32 (``in_float32`` where ``fn`` would widen to
    float64) and round once, as codegen does: sigmoid(-90) is 0 there, exp overflows.
    """

    def apply(x, *rest):
        dtype = np.asarray(x).dtype
        if dtype.itemsize == 2:
            wide = (np.asarray(v).astype(np.float32) for v in (x, *rest))
            out = (in_float32 or fn)(*wide)
            return np.asarray(out).astype(np.float32).astype(dtype)[()]
        return np.asarray(fn(x, *rest)).astype(dtype)[()]

    return apply


def _libm_f64(libm: Callable, numpy_fn: Callable) -> Callable:
    """float64 through C's libm, as compiled code calls it (NumPy has its own SIMD versions,
    which round differently); other dtypes through NumPy."""
    def lane(v: float) -> float:
        return libm(v) if math.isfinite(v) else math.nan  # math raises where libm returns NaN

    lanewise = np.vectorize(lane, otypes=[np.float64])

    def apply(x):
        return lanewise(x) if np.asarray(x).dtype == np.float64 else numpy_fn(x)

    return apply


def _stable_sigmoid(x):
    """sigmoid in x's own type without overflow, as transform/vector_math computes it."""
    e = np.exp(-np.abs(x))
    one = x.dtype.type(1)
    return np.where(x >= 0, one / (one + e), e / (one + e))


def _fma(a, b, c):
    """``a * b + c`` rounded once, as ``llvm.fma``."""
    dtype = np.asarray(a).dtype
    if dtype.itemsize == 8:
        return _fma_exact(a, b, c)
    if dtype.itemsize == 2:  # float16/bfloat16: a float32 fma, then rounded, as codegen does
        wide = (np.asarray(v).astype(np.float32) for v in (a, b, c))
        return np.asarray(_fma(*wide)).astype(dtype)[()]
    # float32/float16: the product is exact in float64 and the sum is made
    # round-to-odd there, so rounding it to the narrow type is the single
    # correct rounding (a plain float64 sum would round twice).
    a64, b64, c64 = (np.asarray(v, np.float64) for v in (a, b, c))
    p = a64 * b64
    s = p + c64
    bb = s - p
    err = (p - (s - bb)) + (c64 - bb)  # TwoSum: s + err == p + c exactly
    even = (s.view(np.int64) & 1) == 0 if s.ndim else (np.array(s).view(np.int64) & 1) == 0
    nudge = np.isfinite(s) & (err != 0) & even
    s = np.where(nudge, np.nextafter(s, np.where(err > 0, np.inf, -np.inf)), s)
    return np.asarray(s).astype(dtype)[()]


def _fma_exact(a, b, c):
    """float64 fma: exact rational arithmetic per lane where all three are finite."""
    shape = np.broadcast_shapes(np.shape(a), np.shape(b), np.shape(c))
    a, b, c = (np.atleast_1d(np.broadcast_to(v, shape)).astype(np.float64) for v in (a, b, c))
    with np.errstate(all="ignore"):  # overflow and inf - inf are the IEEE results here
        out = a * b + c  # right for infinities and NaNs among a and b
    # A finite product plus an infinite c is c, even where a * b alone would
    # overflow to the opposite infinity (inf + -inf would be NaN).
    finite_product = np.isfinite(a) & np.isfinite(b)
    out = np.where(finite_product & np.isinf(c), c, out)
    for i in np.flatnonzero(np.isfinite(a) & np.isfinite(b) & np.isfinite(c)):
        out[i] = _fma_lane(float(a[i]), float(b[i]), float(c[i]))
    return out.reshape(shape)[()]


def _fma_lane(a: float, b: float, c: float) -> float:
    if a == 0 or b == 0:  # a signed zero product: the float sum has IEEE's signs
        return a * b + c
    exact = Fraction(a) * Fraction(b) + Fraction(c)
    if exact == 0:  # cancellation gives +0 when rounding to nearest
        return 0.0
    try:
        return float(exact)  # Fraction -> float rounds to nearest, ties to even
    except OverflowError:
        return math.inf if exact > 0 else -math.inf


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
    "tir.rsqrt": _same_type(lambda x: 1.0 / np.sqrt(np.asarray(x, np.float64)),
                            lambda x: np.float32(1) / np.sqrt(x)),
    "tir.sin": _same_type(_libm_f64(math.sin, np.sin)),
    "tir.cos": _same_type(_libm_f64(math.cos, np.cos)),
    "tir.tan": _same_type(np.tan),
    "tir.tanh": _same_type(np.tanh),
    "tir.sigmoid": _same_type(lambda x: 1.0 / (1.0 + np.exp(-np.asarray(x, np.float64))),
                              _stable_sigmoid),
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
