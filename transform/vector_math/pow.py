"""float32 ``pow(x, y)`` as TIR: 2^(y log2|x|) in float64, then C's special cases.

float64 carries log2|x| with about 2^-40 relative error, so y * log2|x|
(|y log2|x|| <= 152 where the result is neither 0 nor inf) keeps an
absolute error far below the 2^-25 a float32 result can notice; 2^t is
scaled exactly in float64 and rounded to float32 once, which also rounds
denormal results and overflow correctly. The sign and the special cases
follow C's ``powf`` (C11 F.10.4.4), written as a chain of ``Select``s whose
later links override earlier ones.
"""

from __future__ import annotations

from tir import op
from tir.expr import Cast, PrimExpr

from . import coefficients as K
from .float32 import INF, NAN, Lets, horner, like


def _log2_abs(b: Lets, ax: PrimExpr) -> PrimExpr:
    """log2 of a float64 ``ax`` >= 0 (a widened float32, never denormal): 2^e * m with
    sqrt(1/2) <= m < sqrt(2), log m = 2 atanh(s), s = (m-1)/(m+1), by an odd polynomial."""
    i64 = like(ax, "int64")
    normal = op.logical_and(ax > 0.0, ax < INF)
    ix = b("pow_ix", op.reinterpret(i64, op.select(normal, ax, 1.0)))
    e = b("pow_e", op.shift_right(ix - K.SQRT_HALF_BITS64, 52))
    m = b("pow_m", op.reinterpret(ax.dtype, ix - op.shift_left(e, 52)))
    s = b("pow_s", (m - 1.0) / (m + 1.0))
    u = b("pow_u", s * s)
    log_m = op.fma(s * u, horner(u, K.POW_LOG), s + s)
    log2 = op.fma(log_m, K.LOG2E_F64, Cast(ax.dtype, e))
    edge = op.select(ax == 0.0, op.const(-INF, ax.dtype), op.const(INF, ax.dtype))
    return op.select(normal, log2, edge)


def _exp2(b: Lets, t: PrimExpr) -> PrimExpr:
    """2^t in float64 for t clamped to [-200, 200] (NaN lanes compute 2^-200)."""
    i64 = like(t, "int64")
    tc = b("pow_t", op.select(t > -200.0, op.select(t < 200.0, t, 200.0), -200.0))
    shifted = b("pow_shifted", tc + K.SHIFTER64)
    r = b("pow_r", tc - (shifted - K.SHIFTER64))
    k = op.reinterpret(i64, shifted) - K.SHIFTER64_BITS
    scale = op.reinterpret(t.dtype, op.shift_left(k + 1023, 52))
    return op.fma(horner(r, K.POW_EXP2), r, 1.0) * scale


def pow(x: PrimExpr, y: PrimExpr) -> PrimExpr:  # noqa: A001 (the function's name)
    """x^y for float32 vars ``x`` and ``y``, as C's powf."""
    b = Lets()
    f64 = like(x, "float64")
    ax = b("pow_ax", op.abs(x))
    ax64 = b("pow_ax64", Cast(f64, ax))
    t = b("pow_y_log2x", Cast(f64, y) * _log2_abs(b, ax64))
    mag = b("pow_mag", Cast(x.dtype, _exp2(b, t)))
    y_int = b("pow_y_int", op.logical_and(op.floor(y) == y, op.abs(y) < INF))
    y_odd = op.logical_and(y_int, op.floor(y * 0.5) * 2.0 != y)
    negative = op.bitwise_and(op.reinterpret(like(x, "int32"), x), -(2**31)) != 0
    out = op.select(op.logical_and(negative, y_odd), -mag, mag)
    # a negative finite base and a finite non-integer exponent: no real result
    out = op.select(op.logical_and(op.logical_and(x < 0.0, x > -INF),
                                   op.logical_and(op.abs(y) < INF, op.logical_not(y_int))),
                    NAN, out)
    out = op.select(op.logical_or(x != x, y != y), x + y, out)
    out = op.select(op.logical_and(ax == 1.0, op.abs(y) == INF), 1.0, out)  # pow(-1, +-inf)
    out = op.select(op.logical_or(x == 1.0, y == 0.0), 1.0, out)  # even for a NaN other side
    return b.wrap(out)
