"""float16 and bfloat16 values: their NumPy dtypes, and rounding a float64 to them once.

NumPy has ``float16``; ``bfloat16`` comes from ``ml_dtypes`` (the package JAX
uses), whose arrays are what a bfloat16 buffer takes. A kernel computes every
float16/bfloat16 operation in float32 and rounds the result once, to nearest
even; a cast from float64 rounds once too. ``ml_dtypes`` converts a float64 to
bfloat16 through float32, rounding twice (``1 + 2**-8 + 2**-30`` lands on a tie
in float32 and then on 1.0), so ``round_array`` first rounds to float32 *to odd*:
the second rounding is then exact, as in the LLVM backend's casts.
"""

from __future__ import annotations

import functools

import numpy as np

from . import dtype as dt


@functools.cache
def numpy_dtype(dtype: str) -> np.dtype:
    """The NumPy dtype of one lane of ``dtype`` (``ml_dtypes.bfloat16`` for bfloat16)."""
    element = dt.element_of(str(dtype))
    if element == "bfloat16":
        import ml_dtypes  # a dependency; loaded on first use, as NumPy is in tir.expr

        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(element)


def round_array(values: np.ndarray, dtype: str) -> np.ndarray:
    """``values`` (any float or int array) rounded once, half to even, to float ``dtype``."""
    target = numpy_dtype(dtype)
    values = np.asarray(values)
    if dt.element_of(str(dtype)) != "bfloat16" or values.dtype != np.float64:
        with np.errstate(all="ignore"):
            return values.astype(target)
    return _to_float32_round_to_odd(values).astype(target)


def round_float(value: float, dtype: str) -> float:
    """The Python float ``value`` rounded once to float ``dtype`` (unchanged for float64)."""
    if dt.element_of(str(dtype)) == "float64":
        return float(value)
    return float(round_array(np.float64(value), dtype))


def bfloat16_bits(value: float) -> int:
    """The 16 bits of ``value`` rounded once to bfloat16."""
    return int(round_array(np.float64(value), "bfloat16").view(np.uint16))


def _to_float32_round_to_odd(values: np.ndarray) -> np.ndarray:
    # Truncate towards zero, then set the last bit when inexact: the float32 keeps
    # 24 bits, far more than bfloat16's 8 + 2, so rounding it again is exact.
    with np.errstate(all="ignore"):
        f = values.astype(np.float32)
        back = f.astype(np.float64)
    bits = f.view(np.uint32).copy()
    away = np.abs(back) > np.abs(values)
    bits = bits - away.astype(np.uint32)
    bits |= (back != values) & ~np.isnan(values)
    return bits.view(np.float32)


__all__ = ["bfloat16_bits", "numpy_dtype", "round_array", "round_float"]
