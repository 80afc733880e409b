"""Constant integer bounds: a sound interval ``[min_value, max_value]`` for an expression.

Intervals are computed bottom-up with interval arithmetic, one visitor method
per node class. A vector's bound covers all lanes.

Infinity, as in TVM: ``ConstIntBound.POS_INF`` is ``2**63 - 1`` and
``NEG_INF`` is ``-POS_INF``; an end that reaches them means "unbounded" (an
``int64`` var without facts is ``[NEG_INF, POS_INF]``, and arithmetic whose
end leaves the int64 range saturates to infinity). Inside, the analyses use
``math.inf`` for those ends (``interval``); ``ConstIntBound`` converts.

Overflow: TIR assumes index arithmetic (signed 32/64-bit) does not overflow,
so the bound of an ``int32`` add, sub, mul or division is its exact
interval, not clipped to ``int32``: the analyses also bound expressions the
program never computes (``a - b`` to decide ``a < b``, terms regrouped by
the simplifier), whose exact value may leave ``int32``; clipping those
could prove a false comparison. Other integers (unsigned, 8/16-bit) wrap
around on the machine: their arithmetic gets the wrapped values
(``uint8(x - 255)`` is anything in ``[0, 255]``, not ``[0, 0]``). Any
other node's bound lies within its dtype's range.

Facts: a var's range from ``bind``/``update`` replaces its dtype's range
(as TVM's ``Update``); a condition in a ``constraint_scope`` narrows a var,
or any expression compared with a constant (``1 <= a % 58``).
"""

from __future__ import annotations

import functools
import math
from typing import Any

import attrs

from .. import dtype as dt
from ..expr import (
    Add,
    Broadcast,
    Cast,
    Div,
    FloorDiv,
    Let,
    Max,
    Min,
    Mul,
    PrimExpr,
    Ramp,
    Select,
    SizeVar,
    Sub,
    Var,
)
from ..functor import ExprVisitor
from .facts import EVERYTHING, Interval, intersect

INF = math.inf
#: The largest number of lanes a scalable vector may have per vscale unit (SVE: 2048 bits).
MAX_VSCALE = 16
_INT64_MAX = 2**63 - 1


@attrs.frozen
class ConstIntBound:
    """The bound ``[min_value, max_value]``; ends at POS_INF / NEG_INF mean unbounded."""

    min_value: int
    max_value: int

    POS_INF = _INT64_MAX
    NEG_INF = -_INT64_MAX

    @classmethod
    def from_interval(cls, iv: Interval) -> ConstIntBound:
        """The public form of an internal interval."""
        return cls(_to_public(iv[0]), _to_public(iv[1]))

    def to_interval(self) -> Interval:
        """The internal form (infinite ends as ``math.inf``)."""
        return saturate((self.min_value, self.max_value))


def _to_public(v: float) -> int:
    if v >= _INT64_MAX:
        return _INT64_MAX
    if v <= -_INT64_MAX:
        return -_INT64_MAX
    return int(v)


def saturate(iv: Interval) -> Interval:
    """``iv`` with ends at or beyond the int64 limits made infinite (TVM's convention)."""
    lo, hi = iv
    if lo <= -_INT64_MAX:
        lo = -INF
    if hi >= _INT64_MAX:
        hi = INF
    return (lo, hi)


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


@functools.cache
def _is_integer(dtype: str) -> bool:
    return dt.DataType(dt.element_of(dtype)).is_integer


@functools.cache
def _bits(dtype: str) -> int:
    return dt.DataType(dt.element_of(dtype)).bits


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


#: Mantissa bits (with the implicit one) of the float types: integers up to 2**p convert exactly.
_MANTISSA = {"float16": 11, "bfloat16": 8, "float32": 24, "float64": 53}


def exactly_representable(v: float, dtype: str) -> bool:
    """Integer ``v`` (or an infinite end) converts to float ``dtype`` without rounding."""
    p = _MANTISSA.get(dt.element_of(dtype))
    if p is None:
        return False
    if math.isinf(v) or v == 0:
        return True
    m = abs(int(v))
    m >>= (m & -m).bit_length() - 1  # drop trailing zero bits: the significand
    exp_max = {11: 16, 8: 128, 24: 128, 53: 1024}[p]
    return m.bit_length() <= p and abs(int(v)).bit_length() <= exp_max


def all_representable(iv: Interval, dtype: str) -> bool:
    """Every integer in ``iv`` converts to float ``dtype`` exactly (none is rounded)."""
    p = _MANTISSA.get(dt.element_of(dtype))
    return p is not None and -(2**p) <= iv[0] and iv[1] <= 2**p


#: The nodes whose exact result may leave their type (Mod/FloorMod results never do).
_MAY_WRAP = frozenset({Add, Sub, Mul, Div, FloorDiv, Ramp})
#: Nodes whose bound is not clipped to their dtype, as in TVM: vars carry their own facts (a
#: range from ``update`` may be wider than the dtype), the others pass their operands' values on.
_UNCLIPPED = frozenset({Var, SizeVar, Min, Max, Select, Let, Broadcast})


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


def _corners(a: Interval, b: Interval, f) -> Interval:
    """The bound of ``f`` monotone in each argument (on ``b`` of one sign): its corner values."""
    corners = [f(x, y) for x in a for y in b]
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


def _sign_parts(b: Interval) -> list[Interval]:
    """``b`` without zero (a valid program never divides by zero), split by sign.

    TVM's ``AssumeNoZeroDivisor``: a divisor known only to be ``>= 0`` (a
    symbolic shape) is taken as ``>= 1``.
    """
    parts = []
    if b[0] < 0:
        parts.append((b[0], min(b[1], -1)))
    if b[1] > 0:
        parts.append((max(b[0], 1), b[1]))
    return parts


def _abs_max(a: Interval) -> float:
    return max(abs(a[0]), abs(a[1]))


def iv_div(a: Interval, b: Interval, floor: bool) -> Interval:
    """``a / b`` rounding down (``floor``) or towards zero."""
    parts = _sign_parts(b)
    if not parts:  # division by zero only: undefined, any value the dividend's size allows
        m = _abs_max(a)
        return (-m, m)
    div = _floordiv if floor else _truncdiv
    bounds = [_corners(a, p, div) for p in parts]
    return (min(lo for lo, _ in bounds), max(hi for _, hi in bounds))


def _inside_smallest_divisor(a: Interval, parts: list[Interval], nonneg: bool) -> bool:
    """Every ``|a| < |b|`` (and ``a`` of the sign the remainder keeps): the remainder is ``a``."""
    smallest = min(min(abs(p[0]), abs(p[1])) for p in parts)
    if nonneg:
        return 0 <= a[0] and a[1] < smallest
    return -smallest < a[0] and a[1] < smallest


def iv_floormod(a: Interval, b: Interval) -> Interval:
    """``floormod(a, b)``: the sign of ``b``, smaller than ``|b|``."""
    parts = _sign_parts(b)
    if not parts:  # modulo zero only: undefined
        return EVERYTHING
    if len(parts) == 2:  # either sign: between b_min + 1 and b_max - 1
        return (b[0] + 1, b[1] - 1)
    lo, hi = parts[0]
    if lo > 0:
        if _inside_smallest_divisor(a, parts, True):
            return a
        return (0, min(a[1], hi - 1) if a[0] >= 0 else hi - 1)
    if a[1] <= 0 and a[0] > hi:  # hi < 0: |a| below every |b|, a already has b's sign
        return a
    return (max(a[0], lo + 1) if a[1] <= 0 else lo + 1, 0)


def iv_truncmod(a: Interval, b: Interval) -> Interval:
    """``truncmod(a, b)``: the sign of ``a``, smaller than ``|b|``."""
    parts = _sign_parts(b)
    if not parts:
        return EVERYTHING
    if _inside_smallest_divisor(a, parts, False):
        return a
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
        cls = type(e)
        if cls in _MAY_WRAP:
            if wraps(e.dtype):
                iv = wrap_interval(iv, e.dtype)
        elif cls not in _UNCLIPPED:
            iv = intersect(iv, dtype_interval(e.dtype))
        if self.facts.expr_bounds:
            iv = self._known_bound(e, iv)
        iv = saturate(iv)
        if not self._let_bounds:
            if len(self._cache) > 200_000:
                self._cache.clear()
            self._cache[id(e)] = (e, iv)
        return iv

    def __call__(self, e: PrimExpr) -> ConstIntBound:
        return ConstIntBound.from_interval(self.interval(e))

    def _known_bound(self, e: PrimExpr, iv: Interval) -> Interval:
        """``iv`` narrowed by the constraints in scope that compare ``e`` with a constant."""
        from .pattern import same_expr  # pattern imports this module

        for known, bound in self.facts.expr_bounds:
            if type(known) is type(e) and same_expr(known, e):
                iv = intersect(iv, bound)
        return iv

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
        own = self.facts.bounds.get(v)
        alias = self.facts.aliases.get(v)
        if alias is None:
            return own if own is not None else dtype_interval(v.dtype)
        base = self.interval(alias)
        return base if own is None else intersect(base, own)

    def visit_size_var(self, v) -> Interval:
        if v not in self.facts.bounds and v not in self.facts.aliases and not wraps(v.dtype):
            return self._let_bounds.get(v, (0, INF))  # TVM: a size var is [0, POS_INF]
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
        return None if _is_integer(e.dtype) else EVERYTHING

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
        if not _is_integer(e.dtype) and not dt.DataType(e.dtype).is_bool:
            return target  # float results are not tracked
        src = self.cast_source(e.value)
        if src is not None and target[0] <= src[0] and src[1] <= target[1]:
            return src
        return target  # the cast may wrap: anything of the target type

    def cast_source(self, value: PrimExpr) -> Interval | None:
        """The integer values ``value`` brings to a cast, or None if not known to be integers.

        An integer (or bool) gives its bound; a float that is an integer
        converted exactly gives that integer's bound: when both ends are
        representable, rounding (monotone) keeps every value between them.
        """
        t = dt.DataType(dt.element_of(value.dtype))
        if t.is_integer or t.is_bool:
            iv = self.interval(value)
            if iv[1] == INF and t.is_uint:
                return None  # INF stands for uint64 values that wrap to negative int64 values
            return iv
        if type(value) is not Cast or not t.is_float:
            return None
        inner = self.cast_source(value.value)
        if inner is None or any(math.isinf(v) or not exactly_representable(v, value.dtype)
                                for v in inner):
            return None
        return inner

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
        outer = self._let_bounds.get(e.var)  # a Let of the same var may be nested in its value
        self._let_bounds[e.var] = self.interval(e.value)
        try:
            return self.interval(e.body)
        finally:
            if outer is None:
                del self._let_bounds[e.var]
            else:
                self._let_bounds[e.var] = outer

    def visit_call(self, e) -> Interval:
        rule = _CALL_RULES.get(e.op)
        return rule(self, e) if rule is not None else dtype_interval(e.dtype)


def _if_then_else(an: ConstIntBoundAnalyzer, e) -> Interval:
    return iv_union(an.interval(e.args[1]), an.interval(e.args[2]))


def _bitwise_and(an: ConstIntBoundAnalyzer, e) -> Interval:
    a, b = an.interval(e.args[0]), an.interval(e.args[1])
    if a[0] >= 0 and b[0] >= 0:
        return (0, min(a[1], b[1]))
    if a[0] >= 0 or b[0] >= 0:  # a non-negative operand caps the result
        return (0, a[1] if a[0] >= 0 else b[1])
    return dtype_interval(e.dtype)


def _shift_amount_ok(b: Interval, dtype: str) -> bool:
    """Shifts by a negative amount or by the width or more are undefined on the machine.

    (An empty ``b``, from contradictory facts, is not used either.)
    """
    return 0 <= b[0] <= b[1] < _bits(dtype)


def _rshift(x: float, y: float) -> float:
    return x if math.isinf(x) else int(x) >> int(y)


def _lshift(x: float, y: float) -> float:
    return x if math.isinf(x) else int(x) << int(y)


def _shift_right(an: ConstIntBoundAnalyzer, e) -> Interval:
    a, b = an.interval(e.args[0]), an.interval(e.args[1])
    if not _is_integer(e.dtype) or not _shift_amount_ok(b, e.dtype):
        return dtype_interval(e.dtype)
    return _corners(a, b, _rshift)  # x >> y: monotone in x, and in y for each sign of x


def _shift_left(an: ConstIntBoundAnalyzer, e) -> Interval:
    a, b = an.interval(e.args[0]), an.interval(e.args[1])
    if not _is_integer(e.dtype) or a[0] < 0 or not _shift_amount_ok(b, e.dtype):
        return dtype_interval(e.dtype)  # shifting a negative value: no assumption, as in TVM
    iv = _corners(a, b, _lshift)
    if wraps(e.dtype) and not fits(iv, e.dtype):
        return dtype_interval(e.dtype)  # the bits shifted out wrap the value around
    return iv


_CALL_RULES = {
    "tir.if_then_else": _if_then_else,
    "tir.likely": lambda an, e: an.interval(e.args[0]),
    "tir.vscale": lambda an, e: (1, MAX_VSCALE),
    "tir.bitwise_and": _bitwise_and,
    "tir.shift_right": _shift_right,
    "tir.shift_left": _shift_left,
}
