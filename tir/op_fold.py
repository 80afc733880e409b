"""Constant arithmetic as the machine computes it, for folding in ``tir.op``.

Python numbers are exact (ints) or float64; a kernel computes in its
operands' type. Each function here gives the kernel's result: integers wrap
in two's complement, C division rounds towards zero, an integer converts to
a float with one rounding, and a float division is rounded to its type
before ``floor`` sees it.
"""

from __future__ import annotations

import math

from . import dtype as dt

#: Significand bits (with the implicit one) of each float type.
_SIGNIFICAND_BITS = {"float16": 11, "bfloat16": 8, "float32": 24, "float64": 53}


def wrap(v: int, t: dt.DataType) -> int:
    """Two's-complement wrap of ``v`` into integer or bool type ``t``."""
    if t.is_bool:
        return 1 if v else 0
    v &= (1 << t.bits) - 1
    if t.is_int and v >= 1 << (t.bits - 1):
        v -= 1 << t.bits
    return v


def trunc_div(x: int, y: int) -> int:
    """C division of Python ints: the quotient rounded towards zero."""
    q = x // y
    return q + 1 if q < 0 and q * y != x else q


def to_float(v: int | float, t: dt.DataType) -> float:
    """``v`` as float type ``t``: an int is rounded once, half to even, as the machine does.

    ``float(v)`` would round to float64 first, and rounding that again to
    float32 can land on the other side of a tie (``2**60 + 2**36 + 1``).
    """
    if isinstance(v, bool) or not isinstance(v, int):
        return float(v)
    drop = abs(v).bit_length() - _SIGNIFICAND_BITS[str(t.element_of)]
    if drop <= 0:
        return float(v)
    q, r = divmod(abs(v), 1 << drop)
    half = 1 << (drop - 1)
    if r > half or (r == half and q & 1):
        q += 1
    return math.copysign(float(q << drop), v)  # exact in float64; may overflow t to inf later


def float_floordiv(dtype: str, x: float, y: float) -> float:
    """``floor(x / y)`` with the quotient rounded to float ``dtype`` first, as a kernel does.

    In float64, ``1f // 0.1f`` would be ``floor(9.99999985) = 9``; the kernel
    computes ``floor(10.0f) = 10``. NaN and infinities come out as on the machine.
    """
    import numpy as np  # loaded on first use, as in tir.expr

    from .low_precision import numpy_dtype

    if dt.element_of(dtype) in ("float16", "bfloat16"):  # in float32, rounded once
        with np.errstate(all="ignore"):
            quotient = np.float32(x) / np.float32(y)
            return float(np.floor(quotient.astype(numpy_dtype(dtype))))
    ftype = numpy_dtype(dtype).type
    with np.errstate(all="ignore"):
        return float(np.floor(ftype(x) / ftype(y)))
