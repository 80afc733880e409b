"""The interval evaluator behind ``Analyzer.int_set`` (TVM's ``IntervalSetEvaluator``).

Each node's set is built from its operands' sets, one rule per node class
(``COMBINE`` below). Signs of symbolic divisors and factors are decided by
the owning analyzer (its ``bind`` / ``update`` facts); when a sign is unknown
the rule uses a ``Select`` on it (as TVM) or gives up with "everything".

Two rules keep the result sound where TVM's is not:

- ``truncmod`` takes the sign of the dividend into account (TVM assumes a
  non-negative dividend), and casts keep their bounds only when every value
  fits the target type.
- Integers that wrap (8/16-bit, unsigned) get constant ends computed
  exactly and kept only when they fit the type; a constant end of a 32/64-bit
  set that would leave the type becomes an infinity instead of wrapping.
"""

from __future__ import annotations

import math
import operator
from typing import Any, Callable

from .. import dtype as dt
from .. import op
from ..analysis.var_use import uses_any_var
from ..expr import (
    EQ,
    GE,
    GT,
    LE,
    LT,
    NE,
    Add,
    And,
    Div,
    FloorDiv,
    FloorMod,
    IntImm,
    Max,
    Min,
    Mod,
    Mul,
    Or,
    PrimExpr,
    Select,
    Sub,
    Var,
)
from ..functor import ExprVisitor, deep_recursion
from ..op_fold import trunc_div
from ..range import Range
from .const_int_bound import fits, iv_add, iv_div, iv_floormod, iv_mul, iv_sub, iv_truncmod, wraps
from .int_set import (
    IntervalSet,
    IntSet,
    end_max,
    end_min,
    is_neg_inf,
    is_pos_inf,
    neg_inf,
    pos_inf,
)

EVERYTHING = IntSet.everything()
EMPTY = IntSet.nothing()
_ARITH = (Add, Sub, Mul, Div, Mod, FloorDiv, FloorMod, Min, Max)
_LOGICAL = (EQ, NE, LT, LE, GT, GE, And, Or)

#: How each binary node is built from two ends (with TVM's folding and promotion).
BUILD: dict[type, Callable] = {
    Add: op.add, Sub: op.sub, Mul: op.mul, Div: op.truncdiv, Mod: op.truncmod,
    FloorDiv: op.floordiv, FloorMod: op.floormod, Min: op.min, Max: op.max,
    EQ: op.equal, NE: op.not_equal, LT: op.less, LE: op.less_equal, GT: op.greater,
    GE: op.greater_equal, And: op.logical_and, Or: op.logical_or,
}

_EXACT: dict[type, Callable] = {
    Add: operator.add, Sub: operator.sub, Mul: operator.mul, Div: trunc_div,
    Mod: lambda x, y: x - trunc_div(x, y) * y, FloorDiv: operator.floordiv,
    FloorMod: operator.mod, Min: min, Max: max,
}

#: Exact interval arithmetic on constant ends (for integers that wrap).
_CONST_OPS: dict[type, Callable] = {
    Add: iv_add, Sub: iv_sub, Mul: iv_mul, Div: lambda a, b: iv_div(a, b, False),
    FloorDiv: lambda a, b: iv_div(a, b, True), Mod: iv_truncmod, FloorMod: iv_floormod,
    Min: lambda a, b: (min(a[0], b[0]), min(a[1], b[1])),
    Max: lambda a, b: (max(a[0], b[0]), max(a[1], b[1])),
}


def point(e: PrimExpr) -> IntervalSet:
    """The set ``{e}``."""
    return IntervalSet(e, e)


def arith(kind: type, x: PrimExpr, y: PrimExpr) -> PrimExpr | None:
    """``x kind y`` for set ends; constants fold exactly (None if the result leaves the type)."""
    if type(x) is IntImm and x.value == 0 and kind in (Mul, Div, Mod, FloorDiv, FloorMod):
        return op.promote(x, y, kind.__name__)[0]  # 0 / y is 0 (y == 0 is undefined), as TVM folds
    if type(x) is IntImm and type(y) is IntImm and kind in _EXACT:
        x, y = op.promote(x, y, kind.__name__)
        if kind in (Div, Mod, FloorDiv, FloorMod) and y.value == 0:
            return None
        v = _EXACT[kind](x.value, y.value)
        t = dt.DataType(x.dtype)
        return IntImm(x.dtype, v) if t.min_value() <= v <= t.max_value() else None
    return BUILD[kind](x, y)


def lo_end(kind: type, x: PrimExpr, y: PrimExpr) -> PrimExpr:
    """A lower end ``x kind y``; an overflowing constant gives no bound."""
    v = arith(kind, x, y)
    return neg_inf() if v is None else v


def hi_end(kind: type, x: PrimExpr, y: PrimExpr) -> PrimExpr:
    """An upper end ``x kind y``; an overflowing constant gives no bound."""
    v = arith(kind, x, y)
    return pos_inf() if v is None else v


def _zero(like: PrimExpr) -> PrimExpr:
    return op.const(0, dt.element_of(like.dtype))


def _bounded(s: IntervalSet) -> bool:
    return s.has_lower_bound() and s.has_upper_bound()


# ---------------------------------------------------------------- the evaluator


class IntervalSetEvaluator(ExprVisitor):
    """Computes the ``IntervalSet`` of an expression with vars relaxed to their domains."""

    def __init__(self, analyzer: Any, dom_map: dict) -> None:
        self.analyzer = analyzer
        self.dom_map = dict(dom_map)
        self._depth = 0

    def eval(self, e: PrimExpr) -> IntervalSet:
        """The set of ``e``."""
        return self.visit_expr(e)

    # ------------------------------------------------------------ sign facts

    def nonneg(self, e: PrimExpr) -> bool:
        """The analyzer proves ``e >= 0``."""
        return self._proves(e, 0, op.greater_equal)

    def positive(self, e: PrimExpr) -> bool:
        """The analyzer proves ``e >= 1``."""
        return self._proves(e, 1, op.greater_equal)

    def nonpos(self, e: PrimExpr) -> bool:
        """The analyzer proves ``e <= 0``."""
        return self._proves(e, 0, op.less_equal)

    def negative(self, e: PrimExpr) -> bool:
        """The analyzer proves ``e <= -1``."""
        return self._proves(e, -1, op.less_equal)

    def _proves(self, e: PrimExpr, c: int, cmp: Callable) -> bool:
        if is_pos_inf(e) or is_neg_inf(e):
            return False
        lo, hi = self.analyzer.bound_analyzer.interval(e)
        if (lo >= c) if cmp is op.greater_equal else (hi <= c):
            return True
        if type(e) is IntImm:
            return False
        return self.analyzer.can_prove(cmp(e, op.const(c, e.dtype)))

    def const_interval(self, s: IntervalSet) -> tuple:
        """Constant ends holding ``s`` (infinite where unknown)."""
        bound = self.analyzer.bound_analyzer
        lo = bound.interval(s.min_value)[0] if s.has_lower_bound() else -math.inf
        hi = bound.interval(s.max_value)[1] if s.has_upper_bound() else math.inf
        return (lo, hi)

    def relaxes(self, e: PrimExpr) -> bool:
        """``e`` uses a var of the domain map."""
        if not self.dom_map:
            return False
        return uses_any_var(e, self.dom_map)

    # ------------------------------------------------------------ leaves

    def generic_visit(self, e: PrimExpr) -> IntervalSet:
        if dt.DataType(e.dtype).is_scalar and not self.relaxes(e):
            return point(e)
        return EVERYTHING

    def visit_var(self, v: Var) -> IntervalSet:
        dom = self.dom_map.get(v)
        if dom is None:
            return point(v) if dt.DataType(v.dtype).is_scalar else EVERYTHING
        if dom.is_nothing():
            return EMPTY
        if dom.min_value is v and dom.max_value is v:
            return point(v)
        if self._depth > len(self.dom_map):  # a domain that refers back to itself
            return EVERYTHING
        self._depth += 1
        try:
            lo = self.eval(dom.min_value).min_value if dom.has_lower_bound() else neg_inf()
            hi = self.eval(dom.max_value).max_value if dom.has_upper_bound() else pos_inf()
        finally:
            self._depth -= 1
        return IntervalSet(lo, hi)

    # ------------------------------------------------------------ operators

    def _binary(self, e: PrimExpr) -> IntervalSet:
        a, b = self.eval(e.a), self.eval(e.b)
        if a.min_value is e.a and a.max_value is e.a and b.min_value is e.b and (
                b.max_value is e.b):
            return point(e)
        if a.is_nothing() or b.is_nothing():
            return EMPTY
        kind = type(e)
        if kind in _LOGICAL:
            if a.is_single_point() and b.is_single_point():
                return point(BUILD[kind](a.min_value, b.min_value))
            return _bool01()
        t = dt.DataType(dt.element_of(e.dtype))
        if not t.is_integer:
            if a.is_single_point() and b.is_single_point():
                return point(BUILD[kind](a.min_value, b.min_value))
            return EVERYTHING
        if wraps(e.dtype):
            return self.wrapping(kind, (a, b), e.dtype)
        if a.is_single_point() and b.is_single_point():
            v = arith(kind, a.min_value, b.min_value)
            return EVERYTHING if v is None else point(v)
        return COMBINE[kind](self, a, b)

    visit_add = visit_sub = visit_mul = visit_div = visit_mod = _binary
    visit_floor_div = visit_floor_mod = visit_min = visit_max = _binary
    visit_eq = visit_ne = visit_lt = visit_le = visit_gt = visit_ge = _binary
    visit_and = visit_or = _binary

    def wrapping(self, kind: type, sets: tuple, dtype: str) -> IntervalSet:
        """Constant ends for a type that wraps: exact, and kept only if they fit ``dtype``."""
        iv = _CONST_OPS[kind](*(self.const_interval(s) for s in sets))
        if not fits(iv, dtype):
            return EVERYTHING
        elem = dt.element_of(dtype)
        return IntervalSet(op.const(int(iv[0]), elem), op.const(int(iv[1]), elem))

    def visit_not(self, e) -> IntervalSet:
        a = self.eval(e.a)
        if a.min_value is e.a and a.max_value is e.a:
            return point(e)
        if a.is_single_point():
            return point(op.logical_not(a.min_value))
        return _bool01()

    def visit_select(self, e) -> IntervalSet:
        return self._choice(e, e.condition, e.true_value, e.false_value)

    def _choice(self, e: PrimExpr, cond: PrimExpr, yes: PrimExpr, no: PrimExpr) -> IntervalSet:
        c = self.eval(cond)
        if c.is_single_point() and type(c.min_value) is IntImm:
            return self.eval(yes if c.min_value.value else no)
        t, f = self.eval(yes), self.eval(no)
        unchanged = c.min_value is cond and t.min_value is yes and f.min_value is no
        if unchanged and c.is_single_point() and t.is_single_point() and f.is_single_point():
            return point(e) if dt.DataType(e.dtype).is_scalar else EVERYTHING
        if not dt.DataType(dt.element_of(e.dtype)).is_integer:
            return EVERYTHING
        if t.is_nothing():
            return f
        if f.is_nothing():
            return t
        return IntervalSet(end_min(f.min_value, t.min_value), end_max(f.max_value, t.max_value))

    def visit_cast(self, e) -> IntervalSet:
        v = self.eval(e.value)
        if v.min_value is e.value and v.max_value is e.value:
            return point(e)
        if v.is_nothing():
            return EMPTY
        target = dt.element_of(e.dtype)
        if v.is_single_point():
            return point(op.cast(target, v.min_value))
        if not self._cast_keeps_order(v, dt.element_of(e.value.dtype), target):
            return EVERYTHING
        lo = op.cast(target, v.min_value) if v.has_lower_bound() else neg_inf()
        hi = op.cast(target, v.max_value) if v.has_upper_bound() else pos_inf()
        return IntervalSet(lo, hi)

    def _cast_keeps_order(self, v: IntervalSet, source: str, target: str) -> bool:
        """Casting every value of ``v`` is monotone and exact enough to keep the ends."""
        s, t = dt.DataType(source), dt.DataType(target)
        if t.is_float:
            return s.is_integer or s.is_bool or s.is_float  # rounding is monotone
        if not (t.is_integer and (s.is_integer or s.is_bool)):
            return False
        if t.min_value() <= s.min_value() and s.max_value() <= t.max_value():
            return True
        return fits(self.const_interval(v), target)

    def visit_ramp(self, e) -> IntervalSet:
        base, stride = self.eval(e.base), self.eval(e.stride)
        if base.is_nothing() or stride.is_nothing():
            return EMPTY
        zero = _zero(e.base)
        last = (op.const(e.lanes - 1, zero.dtype) if isinstance(e.lanes, int) else pos_inf())
        lanes = IntervalSet(zero, last)
        if wraps(e.dtype):
            offsets = iv_mul(self.const_interval(lanes), self.const_interval(stride))
            iv = iv_add(self.const_interval(base), offsets)
            if not fits(iv, e.dtype):
                return EVERYTHING
            return IntervalSet(op.const(int(iv[0]), zero.dtype), op.const(int(iv[1]), zero.dtype))
        if not dt.DataType(zero.dtype).is_integer:
            return EVERYTHING
        return _add(self, base, _mul(self, lanes, stride))

    def visit_broadcast(self, e) -> IntervalSet:
        return self.eval(e.value)

    def visit_shuffle(self, e) -> IntervalSet:
        sets = [self.eval(v) for v in e.vectors]
        if not dt.DataType(dt.element_of(e.dtype)).is_integer:
            return EVERYTHING
        out = sets[0]
        for s in sets[1:]:
            out = IntervalSet(end_min(out.min_value, s.min_value), end_max(out.max_value,
                                                                          s.max_value))
        return out

    def visit_let(self, e) -> IntervalSet:
        value = self.eval(e.value)
        old = self.dom_map.get(e.var)
        self.dom_map[e.var] = value
        try:
            return self.eval(e.body)
        finally:
            if old is None:
                del self.dom_map[e.var]
            else:
                self.dom_map[e.var] = old

    def visit_call(self, e) -> IntervalSet:
        if e.op == "tir.if_then_else" and len(e.args) == 3:
            return self._choice(e, *e.args)
        if e.op == "tir.likely" and len(e.args) == 1:
            return self.eval(e.args[0])
        return self.generic_visit(e)


def _bool01() -> IntervalSet:
    return IntervalSet(op.const(False, "bool"), op.const(True, "bool"))


# ---------------------------------------------------------------- one rule per node


def _add(ev: IntervalSetEvaluator, a: IntervalSet, b: IntervalSet) -> IntervalSet:
    lo = lo_end(Add, a.min_value, b.min_value) if (
        a.has_lower_bound() and b.has_lower_bound()) else neg_inf()
    hi = hi_end(Add, a.max_value, b.max_value) if (
        a.has_upper_bound() and b.has_upper_bound()) else pos_inf()
    return IntervalSet(lo, hi)


def _sub(ev: IntervalSetEvaluator, a: IntervalSet, b: IntervalSet) -> IntervalSet:
    lo = lo_end(Sub, a.min_value, b.max_value) if (
        a.has_lower_bound() and b.has_upper_bound()) else neg_inf()
    hi = hi_end(Sub, a.max_value, b.min_value) if (
        a.has_upper_bound() and b.has_lower_bound()) else pos_inf()
    return IntervalSet(lo, hi)


def _scaled(ev: IntervalSetEvaluator, kind: type, a: IntervalSet, c: PrimExpr) -> IntervalSet:
    """``a * c`` or ``a / c`` for one value ``c``: monotone, direction by the sign of ``c``."""
    if ev.nonneg(c):
        lo = lo_end(kind, a.min_value, c) if a.has_lower_bound() else neg_inf()
        hi = hi_end(kind, a.max_value, c) if a.has_upper_bound() else pos_inf()
        return IntervalSet(lo, hi)
    if ev.nonpos(c):
        lo = lo_end(kind, a.max_value, c) if a.has_upper_bound() else neg_inf()
        hi = hi_end(kind, a.min_value, c) if a.has_lower_bound() else pos_inf()
        return IntervalSet(lo, hi)
    if not _bounded(a):
        return EVERYTHING
    e1, e2 = arith(kind, a.min_value, c), arith(kind, a.max_value, c)
    if e1 is None or e2 is None:
        return EVERYTHING
    sign = op.greater_equal(c, _zero(c))
    return IntervalSet(Select(sign, e1, e2), Select(sign, e2, e1))


def _corners(ev: IntervalSetEvaluator, kind: type, a: IntervalSet, b: IntervalSet,
             dtype: str) -> IntervalSet:
    """Constant ends from the analyzer's bounds of both sets' ends (TVM gives up here)."""
    ia, ib = ev.const_interval(a), ev.const_interval(b)
    if any(math.isinf(x) for x in ia + ib):
        return EVERYTHING
    lo, hi = _CONST_OPS[kind](ia, ib)
    t = dt.DataType(dtype)
    lo_e = op.const(int(lo), dtype) if t.min_value() <= lo <= t.max_value() else neg_inf()
    hi_e = op.const(int(hi), dtype) if t.min_value() <= hi <= t.max_value() else pos_inf()
    return IntervalSet(lo_e, hi_e)


def _dtype(a: IntervalSet, b: IntervalSet) -> str:
    for e in (a.min_value, a.max_value, b.min_value, b.max_value):
        if e.dtype != "handle":
            return dt.element_of(e.dtype)
    return "int32"


def _mul(ev: IntervalSetEvaluator, a: IntervalSet, b: IntervalSet) -> IntervalSet:
    if a.is_single_point():
        a, b = b, a
    if b.is_single_point():
        c = b.min_value
        if op.is_const_int(c, 0):
            return b
        if op.is_const_int(c, 1):
            return a
        return _scaled(ev, Mul, a, c)
    if a.has_lower_bound() and b.has_lower_bound() and ev.nonneg(a.min_value) and ev.nonneg(
            b.min_value):
        lo = lo_end(Mul, a.min_value, b.min_value)
        hi = hi_end(Mul, a.max_value, b.max_value) if (
            a.has_upper_bound() and b.has_upper_bound()) else pos_inf()
        return IntervalSet(lo, hi)
    return _corners(ev, Mul, a, b, _dtype(a, b))


def _div(kind: type) -> Callable:
    def rule(ev: IntervalSetEvaluator, a: IntervalSet, b: IntervalSet) -> IntervalSet:
        if b.is_single_point():
            c = b.min_value
            if op.is_const_int(c, 0):
                return EVERYTHING  # division by zero is undefined
            if op.is_const_int(c, 1):
                return a
            return _scaled(ev, kind, a, c)
        nonneg_a = a.has_lower_bound() and ev.nonneg(a.min_value)
        if nonneg_a and b.has_lower_bound() and ev.positive(b.min_value):
            zero = _zero(a.min_value)
            lo = lo_end(kind, a.min_value, b.max_value) if b.has_upper_bound() else zero
            hi = hi_end(kind, a.max_value, b.min_value) if a.has_upper_bound() else pos_inf()
            return IntervalSet(lo, hi)
        return _corners(ev, kind, a, b, _dtype(a, b))
    return rule


def _one_period(ev: IntervalSetEvaluator, a: IntervalSet, c: PrimExpr) -> IntervalSet | None:
    """``a mod c`` as ``a - c * q`` when all of ``a`` lies in one block ``[q*c, q*c + c)``."""
    if not _bounded(a):
        return None
    q_lo, q_hi = arith(FloorDiv, a.min_value, c), arith(FloorDiv, a.max_value, c)
    if q_lo is None or q_hi is None or q_lo.dtype != q_hi.dtype:
        return None
    if not ev.analyzer.can_prove(op.equal(q_hi, q_lo)):
        return None
    shift = arith(Mul, c, q_lo)
    if shift is None:
        return None
    lo, hi = arith(Sub, a.min_value, shift), arith(Sub, a.max_value, shift)
    if lo is None or hi is None:
        return None
    return IntervalSet(lo, hi)


def _floormod(ev: IntervalSetEvaluator, a: IntervalSet, b: IntervalSet) -> IntervalSet:
    one = op.const(1, _dtype(a, b))
    if b.is_single_point():
        c = b.min_value
        if op.is_const_int(c, 0):
            return EVERYTHING
        if ev.positive(c):
            return _one_period(ev, a, c) or IntervalSet(_zero(c), op.sub(c, one))
        if ev.negative(c):
            return IntervalSet(op.add(c, one), _zero(c))
        bound = op.sub(op.abs(c), one)
        return IntervalSet(op.neg(bound), bound)
    if b.has_upper_bound() and b.has_lower_bound() and ev.positive(b.min_value):
        return IntervalSet(_zero(b.max_value), op.sub(b.max_value, one))
    if b.has_upper_bound() and b.has_lower_bound() and ev.negative(b.max_value):
        return IntervalSet(op.add(b.min_value, one), _zero(b.min_value))
    return EVERYTHING


def _truncmod(ev: IntervalSetEvaluator, a: IntervalSet, b: IntervalSet) -> IntervalSet:
    """``truncmod(a, b)`` has the sign of ``a`` and is smaller than ``|b|`` (and ``|a|``)."""
    one = op.const(1, _dtype(a, b))
    nonneg_a = a.has_lower_bound() and ev.nonneg(a.min_value)
    nonpos_a = a.has_upper_bound() and ev.nonpos(a.max_value)
    top = None  # |b| - 1
    if b.is_single_point():
        c = b.min_value
        if op.is_const_int(c, 0):
            return EVERYTHING
        if ev.positive(c):
            if nonneg_a:
                return _one_period(ev, a, c) or IntervalSet(_zero(c), op.sub(c, one))
            top = op.sub(c, one)
        elif ev.negative(c):
            top = op.sub(op.neg(c), one)
    elif _bounded(b) and ev.positive(b.min_value):
        top = op.sub(b.max_value, one)
    if top is not None:
        lo = _zero(top) if nonneg_a else op.neg(top)
        hi = _zero(top) if nonpos_a else top
        return IntervalSet(lo, hi)
    if _bounded(a):
        zero = _zero(a.min_value)
        return IntervalSet(end_min(zero, a.min_value), end_max(zero, a.max_value))
    return EVERYTHING


def _min(ev: IntervalSetEvaluator, a: IntervalSet, b: IntervalSet) -> IntervalSet:
    return IntervalSet(end_min(a.min_value, b.min_value), end_min(a.max_value, b.max_value))


def _max(ev: IntervalSetEvaluator, a: IntervalSet, b: IntervalSet) -> IntervalSet:
    return IntervalSet(end_max(a.min_value, b.min_value), end_max(a.max_value, b.max_value))


COMBINE: dict[type, Callable] = {
    Add: _add, Sub: _sub, Mul: _mul, Div: _div(Div), FloorDiv: _div(FloorDiv),
    Mod: _truncmod, FloorMod: _floormod, Min: _min, Max: _max,
}


# ---------------------------------------------------------------- entry points


def as_dom_map(dom_map: Any, who: str) -> dict:
    """``{Var: IntervalSet}`` from a dict of ``Var`` to ``IntSet`` or ``Range``."""
    if not isinstance(dom_map, dict):
        raise TypeError(f"{who}: dom_map must be a dict of tir.Var to IntSet or Range, "
                        f"got {type(dom_map).__name__}")
    out = {}
    for var, dom in dom_map.items():
        if not isinstance(var, Var):
            raise TypeError(f"{who}: dom_map keys must be tir.Var, got {type(var).__name__} "
                            f"({var!r})")
        if isinstance(dom, Range):
            dom = IntSet.from_range(dom)
        elif not isinstance(dom, IntervalSet):
            raise TypeError(f"{who}: the domain of {var.name} must be an IntSet or a tir.Range, "
                            f"got {type(dom).__name__}")
        out[var] = dom
    return out


def bound_domains(analyzer: Any) -> dict:
    """The analyzer's known constant ranges as a domain map (used when none is given)."""
    out = {}
    for var, (lo, hi) in analyzer.facts.bounds.items():
        lo_e = neg_inf() if math.isinf(lo) else op.const(int(lo), var.dtype)
        hi_e = pos_inf() if math.isinf(hi) else op.const(int(hi), var.dtype)
        out[var] = IntervalSet(lo_e, hi_e)
    return out


def eval_set(analyzer: Any, e: PrimExpr, dom_map: dict) -> IntervalSet:
    """The set of ``e`` with ``dom_map``'s vars relaxed, signs decided by ``analyzer``."""
    with deep_recursion():
        return IntervalSetEvaluator(analyzer, dom_map).eval(e)
