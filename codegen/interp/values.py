"""Runtime values of the interpreter: NumPy scalars and lane arrays with C semantics.

A scalar of dtype ``int32`` is a ``np.int32``; a vector ``float32x8`` is a
1-D ``np.ndarray`` of 8 ``float32`` lanes; ``bool`` is ``np.bool_``. NumPy
arithmetic on equal dtypes wraps integers around like LLVM does (the
interpreter runs under ``np.errstate(all="ignore")``). This module holds the
operations whose C/LLVM meaning differs from NumPy's defaults: casts,
truncated vs floor division, float min/max, reinterpretation.

``float16`` values are NumPy ``float16``, ``bfloat16`` values ``ml_dtypes.bfloat16``:
both compute each operation in float32 and round once to their type, as the
LLVM backend does. Casts to bfloat16 from float64 or wide integers round once
here (``tir.low_precision``), not through float32 as ``ml_dtypes`` would.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from tir import dtype as dt
from tir.low_precision import numpy_dtype, round_array


@functools.cache
def np_dtype(dtype: str) -> np.dtype:
    """The NumPy dtype of one lane of the TIR dtype ``dtype``."""
    t = dt.DataType(dtype)
    if t.is_handle:
        return np.dtype(object)
    return np.dtype("bool") if t.is_bool else numpy_dtype(str(t.element_of))


def is_float(value: Any) -> bool:
    """Whether ``value`` holds floats (``ml_dtypes.bfloat16`` is not NumPy kind "f")."""
    dtype = np.asarray(value).dtype
    return dtype.kind == "f" or dtype == _BFLOAT16


_BFLOAT16 = numpy_dtype("bfloat16")


@functools.cache
def is_vector(dtype: str) -> bool:
    """Whether values of ``dtype`` are lane arrays rather than scalars."""
    return dt.DataType(dtype).is_vector


@functools.cache
def int_bounds(dtype: str) -> tuple[int, int]:
    """The smallest and largest value of the scalar integer dtype ``dtype``."""
    t = dt.DataType(dtype)
    return int(t.min_value()), int(t.max_value())


def make(value: Any, dtype: str, lanes: int = 1) -> Any:
    """A value of ``dtype`` from a Python number (broadcast to ``lanes`` if > 1)."""
    if lanes > 1:
        return np.full(lanes, value, dtype=np_dtype(dtype))
    return np_dtype(dtype).type(value)


# ---------------------------------------------------------------- casts


def cast(value: Any, dtype: str) -> Any:
    """``value`` converted to ``dtype`` as LLVM converts it.

    Integer to narrower integer wraps around; float to integer truncates
    towards zero; anything to bool is ``!= 0``.
    """
    target = np_dtype(dtype)
    arr = np.asarray(value)
    if arr.dtype == _BFLOAT16:
        arr = arr.astype(np.float32)  # exact: every cast from bfloat16 starts here
    if target == np.bool_:
        out = arr != 0
    elif arr.dtype.kind == "f" and target.kind in "iu":
        out = _float_to_int(arr, target)
    elif target == _BFLOAT16 and arr.dtype not in (np.float32, np.float16):
        out = round_array(arr.astype(np.float64), "bfloat16")
    else:
        out = arr.astype(target)
    return out if out.ndim else out[()]


def _float_to_int(arr: np.ndarray, target: np.dtype) -> np.ndarray:
    """Truncate towards zero; out-of-range values (poison in LLVM) become 0 here."""
    info = np.iinfo(target)
    truncated = np.trunc(arr.astype(np.float64))
    ok = np.isfinite(truncated) & (truncated >= info.min) & (truncated <= info.max)
    return np.where(ok, truncated, 0).astype(target)


def reinterpret(value: Any, dtype: str) -> Any:
    """The bits of ``value`` read as ``dtype`` (same total width)."""
    out = np.ascontiguousarray(np.atleast_1d(value)).view(np_dtype(dtype))
    return out if is_vector(dtype) else out[0]


# ---------------------------------------------------------------- division


def _check_nonzero(b: Any, what: str) -> None:
    if np.any(np.asarray(b) == 0):
        raise ZeroDivisionError(f"integer {what} by zero")


def trunc_div(a: Any, b: Any) -> Any:
    """``Div``: C division (rounds towards zero) on integers, true division on floats."""
    if is_float(a):
        return a / b
    _check_nonzero(b, "division")
    return (a - np.fmod(a, b)) // b


def trunc_mod(a: Any, b: Any) -> Any:
    """``Mod``: remainder with the sign of ``a`` (C's ``%``; ``fmod`` on floats)."""
    if not is_float(a):
        _check_nonzero(b, "modulo")
    return np.fmod(a, b)


def floor_div(a: Any, b: Any) -> Any:
    """``FloorDiv``: division rounding towards negative infinity."""
    if is_float(a):
        return np.floor(a / b)
    _check_nonzero(b, "division")
    return a // b


def floor_mod(a: Any, b: Any) -> Any:
    """``FloorMod``: ``a - b * floor(a / b)``, the sign of ``b``."""
    if is_float(a):
        return a - b * np.floor(a / b)
    _check_nonzero(b, "modulo")
    return a % b


# ---------------------------------------------------------------- min and max


def minimum(a: Any, b: Any) -> Any:
    """``Min``; on floats IEEE 754-2019 minimum: NaN if either is NaN, -0.0 < +0.0."""
    if not is_float(a):
        return np.minimum(a, b)
    # np.minimum already returns NaN for a NaN operand; equal operands may be
    # zeros of different signs, where the negative one is the smaller.
    return np.where(a == b, np.where(np.signbit(a), a, b), np.minimum(a, b))[()]


def maximum(a: Any, b: Any) -> Any:
    """``Max``; on floats IEEE 754-2019 maximum: NaN if either is NaN, +0.0 > -0.0."""
    if not is_float(a):
        return np.maximum(a, b)
    return np.where(a == b, np.where(np.signbit(a), b, a), np.maximum(a, b))[()]


def reduce_min(vector: Any) -> Any:
    """``tir.vector_reduce_min``: the ``minimum`` of all lanes."""
    lanes = np.atleast_1d(vector)
    return functools.reduce(minimum, lanes) if is_float(lanes) else lanes.min()


def reduce_max(vector: Any) -> Any:
    """``tir.vector_reduce_max``: the ``maximum`` of all lanes."""
    lanes = np.atleast_1d(vector)
    return functools.reduce(maximum, lanes) if is_float(lanes) else lanes.max()


def reduce_lanes(kind: str, vector: Any, start: Any = None) -> Any:
    """``tir.vector_reduce_<kind>``: the lanes of ``vector`` combined by ``kind``.

    Float sums and products run in lane order from ``start`` (default -0.0 / 1.0),
    as LLVM's ordered ``llvm.vector.reduce.fadd``; the ``_reassoc`` forms may run in
    any order, and this order is one of them. Integers wrap around.
    """
    lanes = np.atleast_1d(vector)
    if kind == "min":
        return reduce_min(lanes)
    if kind == "max":
        return reduce_max(lanes)
    if is_float(lanes):
        first = lanes.dtype.type(-0.0 if kind == "add" else 1.0) if start is None else start
        step = np.add if kind == "add" else np.multiply
        return functools.reduce(step, lanes, lanes.dtype.type(first))
    table = {"add": np.add, "mul": np.multiply, "and": np.bitwise_and,
             "or": np.bitwise_or, "xor": np.bitwise_xor}
    return table[kind].reduce(lanes, dtype=lanes.dtype)


def as_bool(value: Any) -> bool:
    """A scalar bool value as a Python bool."""
    return bool(value)
