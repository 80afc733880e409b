"""The fuzzer's own meaning of every operation it generates, and how far a build may stray.

A model value is a pair ``(v, e)``: ``v`` is what the strict serial reading of the
program computes (a Python ``int`` or ``bool`` for integers and bools, exact and wrapped
to the dtype; a NumPy ``float32``/``float64`` scalar for floats, IEEE arithmetic), and
``e`` is a bound on how far a correct build's value may be from ``v``:

- ``e == 0``: the build must give ``v`` bit for bit (NaN equals NaN, -0.0 is not 0.0).
- ``0 < e < inf`` (floats only): ``|build - v| <= e``.
- ``e == inf``: any value (an int or bool computed from a float comparison whose
  operands were only known within their bounds, say).

Bounds come from two sources only. Math calls (``exp``, ``sin``, ...) may be any
implementation within ``MATH_ULPS`` ulps of the true result. Under FMA contraction
(``Mode.contract``) every float add or subtract may have fused a product into it. Both
bounds are propagated through the arithmetic that follows with the usual worst-case
rules (a product ``|a| eb + |b| ea + ea eb``, a quotient, a comparison that is decided
only if its operands are further apart than their bounds), plus two ulps of rounding at
each step whose inputs are inexact. Everything else is exact IEEE arithmetic, so without
math calls and without contraction every bound is 0 and every comparison is bit exact.

Integers are computed on Python ints; a signed 32/64-bit result out of range means the
generator built a program with undefined behaviour, which raises ``ModelError``.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from fractions import Fraction

import numpy as np

from tir import dtype as dt

INF = math.inf

#: Max error of a math call in ulps of the true result, (float32, float64). float32: the
#: bound documented for the vector polynomials (``transform.vector_math``: sigmoid 2.41,
#: sin/cos 1.58, ...) plus the model's own rounding (0.5), rounded up. float64 calls go to
#: libm (within 1 ulp) while NumPy's float64 functions, which compute the model, may be
#: off by up to 4 ulps (its SIMD versions); sqrt is correctly rounded everywhere.
MATH_ULPS = {
    "exp": (2, 6), "exp2": (2, 6), "log": (2, 6), "log2": (2, 6), "sqrt": (1, 1),
    "rsqrt": (2, 6), "sin": (3, 6), "cos": (3, 6), "tanh": (2, 6), "sigmoid": (3, 6),
    "erf": (3, 6),
}
#: Functions whose derivative is bounded by 1.2 but which are not monotonic.
_LIPSCHITZ = ("sin", "cos")


class ModelError(AssertionError):
    """The generator made a program whose meaning is undefined (a fuzzer bug)."""


@dataclasses.dataclass
class Mode:
    """How the build under test may round: ``contract`` allows fused multiply-adds."""

    contract: bool = False


# ---------------------------------------------------------------- dtypes


@functools.cache
def np_type(dtype: str) -> type:
    """The NumPy scalar type of ``dtype`` (``np.bool_`` for bool)."""
    return np.dtype("bool" if dtype == "bool" else dtype).type


@functools.cache
def int_range(dtype: str) -> tuple[int, int]:
    """The smallest and largest value of an integer dtype."""
    t = dt.DataType(dtype)
    return int(t.min_value()), int(t.max_value())


@functools.cache
def kind(dtype: str) -> str:
    """``"int"``, ``"uint"``, ``"float"`` or ``"bool"``."""
    t = dt.DataType(dtype)
    return "bool" if t.is_bool else "float" if t.is_float else "uint" if t.is_uint else "int"


def wraps(dtype: str) -> bool:
    """Whether overflow of ``dtype`` wraps around (8/16-bit and unsigned ints) or is undefined."""
    return kind(dtype) == "uint" or (kind(dtype) == "int" and dt.DataType(dtype).bits < 32)


def wrap(v: int, dtype: str) -> int:
    """``v`` reduced to ``dtype``'s range, two's complement."""
    lo, hi = int_range(dtype)
    return (v - lo) % (hi - lo + 1) + lo


def check_int(v: int, dtype: str, what: str) -> int:
    """``v`` wrapped if ``dtype`` wraps; else ``v`` itself, which must fit."""
    if wraps(dtype):
        return wrap(v, dtype)
    lo, hi = int_range(dtype)
    if not lo <= v <= hi:
        raise ModelError(f"{what} overflows {dtype}: {v}")
    return v


# ---------------------------------------------------------------- floats: helpers


def spacing(x) -> float:
    """The distance from ``|x|`` to the next float of its type (inf for inf and NaN)."""
    if not np.isfinite(x):
        return INF
    return float(np.spacing(abs(x)))


def _settle(v, e: float) -> tuple:
    """An inexact non-finite result can be anything: overflow and NaN are not continuous.
    (A NaN bound comes from 0 * inf: nothing is known either.)"""
    if e != e or (e and not np.isfinite(v)):
        return v, INF
    return v, e


def _rounding(v, e: float) -> float:
    """``e`` plus the rounding of an inexact result (the build may round the other way)."""
    return e + 2 * spacing(v.dtype.type(abs(v) + e)) if e else 0.0


def _big(v) -> bool:
    return abs(v) > np.finfo(v.dtype).max / 4


def _contraction(a, b, v) -> float:
    """How far ``a + b`` may move if one operand was a product fused into the add: the
    product's rounding error (below its ulp) plus the two results' roundings."""
    if _big(a) or _big(b) or _big(v):
        return INF
    return spacing(a) + spacing(b) + 2 * spacing(v)


# ---------------------------------------------------------------- float arithmetic


def fadd(a: tuple, b: tuple, mode: Mode) -> tuple:
    """``a + b`` on floats."""
    v = a[0] + b[0]
    e = _rounding(v, a[1] + b[1])
    if mode.contract:
        e += _contraction(a[0], b[0], v)
    return _settle(v, e)


def fsub(a: tuple, b: tuple, mode: Mode) -> tuple:
    """``a - b`` on floats."""
    return fadd(a, (-b[0], b[1]), mode)


def fmul(a: tuple, b: tuple, mode: Mode) -> tuple:
    """``a * b`` on floats."""
    v = a[0] * b[0]
    e = 0.0
    if a[1] or b[1]:
        e = _rounding(v, abs(a[0]) * b[1] + abs(b[0]) * a[1] + a[1] * b[1])
        if v == 0 and not e and any(0 < x[1] and abs(x[0]) <= x[1] for x in (a, b)):
            # x * 0 with x known only near 0 (a contracted a*b - a*b): the zero's sign
            # follows x's, which either rounding may flip; allow it (any nonzero bound)
            e = float(np.finfo(v.dtype).smallest_subnormal)
    return _settle(v, e)


def fdiv(a: tuple, b: tuple, mode: Mode) -> tuple:
    """``a / b`` on floats (IEEE: a zero divisor gives inf or NaN)."""
    v = a[0] / b[0]
    if not (a[1] or b[1]):
        return v, 0.0
    if abs(b[0]) <= 2 * b[1]:
        return v, INF
    return _settle(v, _rounding(v, (a[1] + abs(v) * b[1]) / (abs(b[0]) - b[1])))


def fneg(a: tuple) -> tuple:
    """``-a``."""
    return -a[0], a[1]


def fmin(a: tuple, b: tuple) -> tuple:
    """IEEE 754-2019 ``minimum``: NaN if either is NaN, -0.0 below +0.0."""
    return _minmax(a, b, smaller=True)


def fmax(a: tuple, b: tuple) -> tuple:
    """IEEE 754-2019 ``maximum``."""
    return _minmax(a, b, smaller=False)


def _minmax(a: tuple, b: tuple, smaller: bool) -> tuple:
    x, y = a[0], b[0]
    e = max(a[1], b[1])
    if x != x or y != y:
        return _settle(x if x != x else y, e)
    if x == y:
        pick_x = bool(np.signbit(x)) == smaller
    else:
        pick_x = (x < y) == smaller
    return _settle(x if pick_x else y, e)


def ffma(a: tuple, b: tuple, c: tuple, mode: Mode) -> tuple:
    """``tir.fma``: ``a * b + c`` rounded once."""
    v = fused(a[0], b[0], c[0])
    e = 0.0
    if a[1] or b[1] or c[1]:
        e = _rounding(v, abs(a[0]) * b[1] + abs(b[0]) * a[1] + a[1] * b[1] + c[1])
    return _settle(v, e)


def fused(a, b, c):
    """``a * b + c`` exactly, rounded once to the type (a double rounding can be wrong)."""
    t = type(a)
    if np.isfinite(a) and np.isfinite(b) and not np.isfinite(c):
        return c  # the exact product is finite, however large: inf + finite, NaN stays
    if not (np.isfinite(a) and np.isfinite(b)):
        return t(a * b + c)  # an infinite (or NaN) product is exact: IEEE's rules only
    exact = Fraction(float(a)) * Fraction(float(b)) + Fraction(float(c))
    if exact == 0:  # the sign of an exact zero sum: IEEE's rules for a*b + c
        return t(np.float64(a) * np.float64(b) + np.float64(c)) if t is np.float32 else \
            a * b + c
    return round_fraction(exact, t)


def round_fraction(x: Fraction, t: type):
    """``x`` rounded to nearest-even in type ``t`` (float32 or float64), once."""
    try:
        d = x.numerator / x.denominator  # Python rounds an int quotient correctly to float64
    except OverflowError:  # beyond float64: rounds to infinity
        return t(INF if x > 0 else -INF)
    if t is np.float64 or not np.isfinite(d):
        return t(d)
    r = np.float32(d)
    # float64 -> float32 rounds a second time; that is wrong only when d fell exactly on a
    # float32 midpoint though x did not: then round towards x instead of to even.
    if Fraction(d) != x and np.isfinite(r):
        other = np.nextafter(r, np.float32(np.inf if Fraction(float(r)) < Fraction(d) else -np.inf))
        if np.isfinite(other) and Fraction(d) == (Fraction(float(r)) + Fraction(float(other))) / 2:
            r = r if abs(Fraction(float(r)) - x) < abs(Fraction(float(other)) - x) else other
    return r


# ---------------------------------------------------------------- comparisons and selects


def compare(op: str, a: tuple, b: tuple) -> tuple:
    """``a op b`` (op one of < <= == != > >=) as a bool model value."""
    x, y = a[0], b[0]
    v = bool({"<": x < y, "<=": x <= y, "==": x == y, "!=": x != y, ">": x > y,
              ">=": x >= y}[op])
    e = a[1] + b[1]
    if not e:
        return v, 0.0
    decided = (x != x and not a[1]) or (y != y and not b[1])  # an exact NaN: always false
    if not decided and np.isfinite(x) and np.isfinite(y):
        decided = abs(float(x) - float(y)) > 2 * e
    return v, 0.0 if decided else INF


def select(c: tuple, t: tuple, f: tuple) -> tuple:
    """``Select(c, t, f)``: an uncertain condition makes the result uncertain."""
    if c[1]:
        return (t[0] if c[0] else f[0]), INF
    return t if c[0] else f


# ---------------------------------------------------------------- casts


def cast(x: tuple, src: str, dst: str) -> tuple:
    """``Cast(dst, x)`` for ``x`` of dtype ``src``; float to int only for values in range."""
    v, e = x
    s, d = kind(src), kind(dst)
    if d == "bool":
        out = bool(v != 0)
        if e and s == "float" and not abs(v) > 2 * e:
            return out, INF
        return out, e
    if s == "float":
        return _cast_float(v, e, dst)
    if d == "float":  # NumPy converts with one rounding, as LLVM's [su]itofp
        out = np.array([int(v)], dtype=src if s != "bool" else "int8").astype(dst)[0]
        return out, (INF if e else 0.0)
    return wrap(int(v), dst), e


def _cast_float(v, e: float, dst: str) -> tuple:
    if kind(dst) == "float":
        out = np_type(dst)(v)
        if e and np.isfinite(out):
            e = e + 2 * spacing(out)
        return _settle(out, e)
    lo, hi = int_range(dst)
    if not (np.isfinite(v) and lo <= int(v) <= hi):  # int() truncates towards zero
        raise ModelError(f"float {v!r} cast to {dst} is out of range (undefined)")
    out = int(v)
    if e and (e == INF or not int(float(v) - e) == out == int(float(v) + e)):
        return out, INF
    return out, 0.0


# ---------------------------------------------------------------- integers


def iarith(op: str, a: tuple, b: tuple, dtype: str) -> tuple:
    """Integer ``+ - * min max & | ^ << >>`` and the four divisions of ``dtype``."""
    x, y = a[0], b[0]
    e = a[1] + b[1]
    if op in ("floordiv", "floormod", "truncdiv", "truncmod") and y == 0:
        raise ModelError(f"{op} by zero")
    if op in ("<<", ">>") and not 0 <= y < dt.DataType(dtype).bits:
        raise ModelError(f"shift by {y} on {dtype}")
    v = _INT_OPS[op](x, y)
    return check_int(v, dtype, f"{x} {op} {y}"), (INF if e else 0.0)


def _truncdiv(x: int, y: int) -> int:
    q = abs(x) // abs(y)
    return q if (x < 0) == (y < 0) else -q


_INT_OPS = {
    "+": lambda x, y: x + y, "-": lambda x, y: x - y, "*": lambda x, y: x * y,
    "min": min, "max": max, "&": lambda x, y: x & y, "|": lambda x, y: x | y,
    "^": lambda x, y: x ^ y, "<<": lambda x, y: x << y, ">>": lambda x, y: x >> y,
    "floordiv": lambda x, y: x // y, "floormod": lambda x, y: x % y,
    "truncdiv": _truncdiv, "truncmod": lambda x, y: x - y * _truncdiv(x, y),
}


def inot(a: tuple, dtype: str) -> tuple:
    """``~a`` on an integer."""
    return wrap(~a[0], dtype), a[1]


# ---------------------------------------------------------------- math calls

_FN64 = {
    "exp": np.exp, "exp2": np.exp2, "log": np.log, "log2": np.log2, "sqrt": np.sqrt,
    "rsqrt": lambda x: 1.0 / np.sqrt(x), "sin": np.sin, "cos": np.cos, "tanh": np.tanh,
    "sigmoid": lambda x: 1.0 / (1.0 + np.exp(-x)),
    "erf": lambda x: np.float64(math.erf(x)),
}


def mathcall(name: str, x: tuple) -> tuple:
    """``tir.<name>(x)``: computed in float64, rounded once to the type; ``MATH_ULPS`` of slack."""
    v, e = x
    t = type(v)
    wide = _FN64[name](np.float64(v))
    out = t(wide)
    if not np.isfinite(v) or not np.isfinite(out):
        # Special values are exact (exp(-inf) = 0, log(0) = -inf, sqrt(-1) = NaN), but a
        # finite result that only overflowed in the last rounding may be either side.
        return out, (INF if e or np.isfinite(wide) != np.isfinite(out) else 0.0)
    ulps = MATH_ULPS[name][t is np.float64]
    slack = ulps * spacing(out)
    if e:
        ends = [_FN64[name](np.float64(v) + s * e) for s in (-1, 1)]
        moved = max(abs(end - wide) for end in ends)
        if name in _LIPSCHITZ:
            moved = max(moved, 1.2 * e)
        if not np.isfinite(moved):
            return out, INF
        slack += 2 * float(moved) + 2 * spacing(out)
    return out, slack
