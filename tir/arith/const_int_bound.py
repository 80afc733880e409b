"""Constant integer bounds: a sound interval ``[min_value, max_value]`` for an expression.

Intervals are computed bottom-up with interval arithmetic, one visitor method
per node class. Infinite ends are ``math.inf`` inside and
``ConstIntBound.POS_INF`` / ``NEG_INF`` outside. A vector's bound covers all lanes.

Overflow: TIR assumes index arithmetic (signed 32/64-bit) does not overflow,
so the bound of an ``int32`` add, sub, mul or division is its exact
interval, not clipped to ``int32``: the analyses also bound expressions the
program never computes (``a - b`` to decide ``a < b``, terms regrouped by
the simplifier), whose exact value may leave ``int32``; clipping those
could prove a false comparison. Other integers (unsigned, 8/16-bit) wrap
around on the machine: their arithmetic gets the wrapped values
(``uint8(x - 255)`` is anything in ``[0, 255]``, not ``[0, 0]``). Any
other node's bound lies within its dtype's range.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import attrs

from .. import dtype as dt
from ..expr import Add, Div, FloorDiv, Mul, PrimExpr, Ramp, Sub
from ..functor import ExprVisitor
from .facts import EVERYTHING, Interval, intersect

INF = math.inf
#: The largest number of lanes a scalable vector may have per vscale unit (SVE: 2048 bits).
MAX_VSCALE = 16


@attrs.frozen
class ConstIntBound:
    """The bound ``[min_value, max_value]``; ends at POS_INF / NEG_INF mean unbounded."""

    min_value: int
    max_value: int

    POS_INF = 2**63 - 1
    NEG_INF = -(2**63)

    @classmethod
    def from_interval(cls, iv: Interval) -> ConstIntBound:
        """The public form of an internal interval."""
        return cls(_to_public(iv[0]), _to_public(iv[1]))

    def to_interval(self) -> Interval:
        """The internal form (infinite ends as ``math.inf``)."""
        lo = -INF if self.min_value <= self.NEG_INF else self.min_value
        hi = INF if self.max_value >= self.POS_INF else self.max_value
        return (lo, hi)


def _to_public(v: float) -> int:
    if v >= ConstIntBound.POS_INF:
        return ConstIntBound.POS_INF
    if v <= ConstIntBound.NEG_INF:
        return ConstIntBound.NEG_INF
    return int(v)


@functools.cache
def dtype_interval(dtype: str) -> Interval:
    """The values one lane of ``dtype`` can hold (everything for floats)."""
    t = dt.DataType(dt.element_of(dtype))
    if t.bits >= 64 and t.is_integer:
        return (0 if t.is_uint else -INF, INF)  # 64-bit ends stand for infinity, as in TVM
    if t.is_integer or t.is_bool:
        return (t.min_value(), t.max_value())
    return EVERYTHING


@functools.cache
def wraps(dtype: str) -> bool:
    """Integers of ``dtype`` wrap around on overflow: unsigned, and signed below 32 bits.

    The no-overflow assumption covers signed 32/64-bit index arithmetic only;
    the other integer types are data that does wrap in practice.
    """
    t = dt.DataType(dt.element_of(dtype))
    return t.is_integer and not (t.is_int and t.bits >= 32)


def fits(iv: Interval, dtype: str) -> bool:
    """Every value of ``iv`` is a value of ``dtype`` (an infinite end never fits 64 bits)."""
    t = dt.DataType(dt.element_of(dtype))
    return t.min_value() <= iv[0] and iv[1] <= t.max_value()


def wrap_interval(iv: Interval, dtype: str) -> Interval:
    """The values exact results in ``iv`` take after wrapping into integer ``dtype``.

    Results inside the type stay; results all in one other window of
    ``2**bits`` values shift back by a multiple of ``2**bits`` (exact);
    anything else may take every value of the type.
    """
    if iv[0] > iv[1] or fits(iv, dtype):
        return iv
    t = dt.DataType(dt.element_of(dtype))
    full = dtype_interval(dtype)
    if t.bits >= 64 or math.isinf(iv[0]) or math.isinf(iv[1]):
        return full
    span = 1 << t.bits
    k = (iv[0] - full[0]) // span
    if (iv[1] - full[0]) // span != k:
        return full
    return (iv[0] - k * span, iv[1] - k * span)


#: The nodes whose exact result may leave their type (Mod/FloorMod results never do).
_MAY_WRAP = frozenset({Add, Sub, Mul, Div, FloorDiv, Ramp})


# ---------------------------------------------------------------- interval arithmetic


def _mul(x: float, y: float) -> float:
    if x == 0 or y == 0:
        return 0  # 0 * inf is 0 here: an unbounded factor times zero is zero
    return x * y


def iv_add(a: Interval, b: Interval) -> Interval:
    """``a + b``."""
    return (a[0] + b[0], a[1] + b[1])


def iv_sub(a: Interval, b: Interval) -> Interval:
    """``a - b``."""
    return (a[0] - b[1], a[1] - b[0])


def iv_mul(a: Interval, b: Interval) -> Interval:
    """``a * b``."""
    corners = [_mul(x, y) for x in a for y in b]
    return (min(corners), max(corners))


def _div_corners(a: Interval, b: Interval, div) -> Interval:
    corners = [div(x, y) for x in a for y in b]
    return (min(corners), max(corners))


def _floordiv(x: float, y: float) -> float:
    if math.isinf(x):
        return x if y > 0 else -x
    if math.isinf(y):
        return -1 if x * y < 0 else 0
    return x // y


def _truncdiv(x: float, y: float) -> float:
    if math.isinf(x):
        return x if y > 0 else -x
    if math.isinf(y):
        return 0
    q = abs(x) // abs(y)
    return q if (x >= 0) == (y >= 0) else -q


def _nonzero_divisor(b: Interval) -> Interval | None:
    """``b`` without zero (division by zero is undefined), or None if it spans both signs."""
    lo, hi = b
    if lo == 0:
        lo = 1
    if hi == 0:
        hi = -1
    if lo > hi or lo < 0 < hi:
        return None
    return (lo, hi)


def _abs_max(a: Interval) -> float:
    return max(abs(a[0]), abs(a[1]))


def iv_div(a: Interval, b: Interval, floor: bool) -> Interval:
    """``a / b`` rounding down (``floor``) or towards zero."""
    nb = _nonzero_divisor(b)
    if nb is None:
        m = _abs_max(a)
        return (-m, m)
    return _div_corners(a, nb, _floordiv if floor else _truncdiv)


def iv_floormod(a: Interval, b: Interval) -> Interval:
    """``floormod(a, b)``: the sign of ``b``, smaller than ``|b|``."""
    nb = _nonzero_divisor(b)
    if nb is None:
        m = _abs_max(b) - 1
        return (-m, m)
    if nb[0] > 0:
        top = nb[1] - 1
        if a[0] >= 0:
            return (0, min(a[1], top))
        return (0, top)
    return (nb[0] + 1, 0)


def iv_truncmod(a: Interval, b: Interval) -> Interval:
    """``truncmod(a, b)``: the sign of ``a``, smaller than ``|b|``."""
    m = _abs_max(b) - 1
    lo = 0 if a[0] >= 0 else max(a[0], -m)
    hi = 0 if a[1] <= 0 else min(a[1], m)
    return (lo, hi)


def iv_union(a: Interval, b: Interval) -> Interval:
    """The smallest interval holding both."""
    return (min(a[0], b[0]), max(a[1], b[1]))


# ---------------------------------------------------------------- the analysis


class ConstIntBoundAnalyzer(ExprVisitor):
    """Computes intervals; the facts (var ranges, aliases) come from the owning Analyzer."""

    def __init__(self, facts: Any) -> None:
        self.facts = facts
        self._cache: dict[int, tuple] = {}
        self._epoch = -1
        self._let_bounds: dict[Any, Interval] = {}

    def interval(self, e: PrimExpr) -> Interval:
        """The interval of ``e`` (cached per expression until the facts change)."""
        if self._epoch != self.facts.epoch:
            self._cache.clear()
            self._epoch = self.facts.epoch
        hit = self._cache.get(id(e))
        if hit is not None and hit[0] is e:
            return hit[1]
        iv = self.visit_expr(e)
        if type(e) not in _MAY_WRAP:
            iv = intersect(iv, dtype_interval(e.dtype))
        elif wraps(e.dtype):
            iv = wrap_interval(iv, e.dtype)
        if not self._let_bounds:
            if len(self._cache) > 200_000:
                self._cache.clear()
            self._cache[id(e)] = (e, iv)
        return iv

    def __call__(self, e: PrimExpr) -> ConstIntBound:
        return ConstIntBound.from_interval(self.interval(e))

    def may_wrap(self, e: PrimExpr) -> bool:
        """Whether the exact result of node ``e`` (a wrapping type) may leave its type."""
        return type(e) in _MAY_WRAP and wraps(e.dtype) and not fits(self.visit_expr(e), e.dtype)

    def generic_visit(self, e: PrimExpr) -> Interval:
        return dtype_interval(e.dtype)

    def visit_int_imm(self, e) -> Interval:
        return (e.value, e.value)

    def visit_var(self, v) -> Interval:
        iv = self._let_bounds.get(v)
        if iv is not None:
            return iv
        alias = self.facts.aliases.get(v)
        base = self.interval(alias) if alias is not None else dtype_interval(v.dtype)
        return intersect(base, self.facts.bounds.get(v, EVERYTHING))

    def visit_size_var(self, v) -> Interval:
        return intersect(self.visit_var(v), (0, INF))

    def visit_add(self, e) -> Interval:
        return iv_add(self.interval(e.a), self.interval(e.b))

    def visit_sub(self, e) -> Interval:
        return iv_sub(self.interval(e.a), self.interval(e.b))

    def visit_mul(self, e) -> Interval:
        return iv_mul(self.interval(e.a), self.interval(e.b))

    def visit_floor_div(self, e) -> Interval:
        return self._int_only(e) or iv_div(self.interval(e.a), self.interval(e.b), True)

    def visit_div(self, e) -> Interval:
        return self._int_only(e) or iv_div(self.interval(e.a), self.interval(e.b), False)

    def visit_floor_mod(self, e) -> Interval:
        return self._int_only(e) or iv_floormod(self.interval(e.a), self.interval(e.b))

    def visit_mod(self, e) -> Interval:
        return self._int_only(e) or iv_truncmod(self.interval(e.a), self.interval(e.b))

    def _int_only(self, e) -> Interval | None:
        """Everything for float division, else None (go on with integer rules)."""
        return None if dt.DataType(e.dtype).is_integer else EVERYTHING

    def visit_min(self, e) -> Interval:
        a, b = self.interval(e.a), self.interval(e.b)
        return (min(a[0], b[0]), min(a[1], b[1]))

    def visit_max(self, e) -> Interval:
        a, b = self.interval(e.a), self.interval(e.b)
        return (max(a[0], b[0]), max(a[1], b[1]))

    def visit_select(self, e) -> Interval:
        return iv_union(self.interval(e.true_value), self.interval(e.false_value))

    def visit_cast(self, e) -> Interval:
        target = dtype_interval(e.dtype)
        if not dt.DataType(e.value.dtype).is_integer and not dt.DataType(e.value.dtype).is_bool:
            return target
        src = self.interval(e.value)
        from_uint = dt.DataType(e.value.dtype).is_uint
        if src[1] == INF and from_uint and not dt.DataType(e.dtype).is_uint:
            return target  # INF stands for uint64's top, which wraps to negative int64 values
        if target[0] <= src[0] and src[1] <= target[1]:
            return src
        return target  # the cast may wrap: anything of the target type

    def visit_ramp(self, e) -> Interval:
        base, stride = self.interval(e.base), self.interval(e.stride)
        last = iv_add(base, iv_mul(stride, self._lane_steps(e.lanes)))
        return iv_union(base, last)

    def _lane_steps(self, lanes: Any) -> Interval:
        if isinstance(lanes, int):
            return (0, lanes - 1)
        return (0, self.interval(lanes)[1] - 1)

    def visit_broadcast(self, e) -> Interval:
        return self.interval(e.value)

    def visit_shuffle(self, e) -> Interval:
        out = None
        for v in e.vectors:
            iv = self.interval(v)
            out = iv if out is None else iv_union(out, iv)
        return out

    def visit_let(self, e) -> Interval:
        self._let_bounds[e.var] = self.interval(e.value)
        try:
            return self.interval(e.body)
        finally:
            del self._let_bounds[e.var]

    def visit_call(self, e) -> Interval:
        rule = _CALL_RULES.get(e.op)
        return rule(self, e) if rule is not None else dtype_interval(e.dtype)


def _if_then_else(an: ConstIntBoundAnalyzer, e) -> Interval:
    return iv_union(an.interval(e.args[1]), an.interval(e.args[2]))


def _bitwise_and(an: ConstIntBoundAnalyzer, e) -> Interval:
    a, b = an.interval(e.args[0]), an.interval(e.args[1])
    if a[0] >= 0 and b[0] >= 0:
        return (0, min(a[1], b[1]))
    if a[0] >= 0 or b[0] >= 0:
        return (0, a[1] if a[0] >= 0 else b[1])
    return dtype_interval(e.dtype)


def _shift_right(an: ConstIntBoundAnalyzer, e) -> Interval:
    a, b = an.interval(e.args[0]), an.interval(e.args[1])
    if a[0] < 0 or b[0] < 0:
        return dtype_interval(e.dtype)
    lo = 0 if math.isinf(b[1]) else int(a[0]) >> int(b[1])
    hi = a[1] if math.isinf(a[1]) else int(a[1]) >> int(b[0])
    return (lo, hi)


_CALL_RULES = {
    "tir.if_then_else": _if_then_else,
    "tir.likely": lambda an, e: an.interval(e.args[0]),
    "tir.vscale": lambda an, e: (1, MAX_VSCALE),
    "tir.bitwise_and": _bitwise_and,
    "tir.shift_right": _shift_right,
}
