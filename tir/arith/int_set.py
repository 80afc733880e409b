"""Integer sets: symbolic intervals ``[min_value, max_value]`` (TVM's ``tvm.arith.int_set``).

An ``IntervalSet`` holds every integer between two expressions, which may
use free variables: ``x + y`` with ``x`` in ``[0, 10]`` is ``[y, y + 10]``.
An end may be one of the symbolic infinities ``pos_inf()`` / ``neg_inf()``
(handle-typed vars, compared by identity as in TVM). ``[pos_inf, neg_inf]``
is the empty set, ``[neg_inf, pos_inf]`` everything.

>>> from tir import var
>>> from tir.arith import Analyzer, IntervalSet
>>> x, y = var("x"), var("y")
>>> s = Analyzer().int_set(x + y, {x: IntervalSet(0, 10)})
>>> print(s.min_value, s.max_value)
y 10 + y

Soundness: every value the expression takes, for the relaxed vars in their
domains and any value of the other vars, lies in the set (under the
analyzer's assumption that signed 32/64-bit index arithmetic does not
overflow; 8/16-bit and unsigned arithmetic gets constant ends that are
checked to fit the type, or no bound). The evaluator is in
``int_set_eval.py``, the region estimates in ``int_set_region.py``.
"""

from __future__ import annotations

from typing import Any

from .. import dtype as dt
from .. import op
from ..expr import PrimExpr, Var
from ..range import Range

_POS_INF = Var("pos_inf", "handle")
_NEG_INF = Var("neg_inf", "handle")


def pos_inf() -> Var:
    """TVM's symbolic positive infinity: a handle var compared by identity."""
    return _POS_INF


def neg_inf() -> Var:
    """TVM's symbolic negative infinity: a handle var compared by identity."""
    return _NEG_INF


def is_pos_inf(e: Any) -> bool:
    """``e`` is the symbolic positive infinity."""
    return e is _POS_INF


def is_neg_inf(e: Any) -> bool:
    """``e`` is the symbolic negative infinity."""
    return e is _NEG_INF


class IntSet:
    """A set of integers in one dimension (TVM's ``IntSet``); every set is an ``IntervalSet``."""

    __slots__ = ()
    min_value: PrimExpr
    max_value: PrimExpr

    # ---------------------------------------------------------- constructors

    @staticmethod
    def single_point(point: Any) -> IntervalSet:
        """The set ``{point}``."""
        p = _as_end(point, "single_point", "point")
        return IntervalSet(p, p)

    @staticmethod
    def interval(min_value: Any, max_value: Any) -> IntervalSet:
        """``[min_value, max_value]``; a single point when both are the same object."""
        if min_value is max_value:
            return IntSet.single_point(min_value)
        return IntervalSet(min_value, max_value)

    @staticmethod
    def vector(vec: Any) -> IntervalSet:
        """The set of the lanes of ``vec`` (a single point for a scalar)."""
        e = _as_end(vec, "vector", "vec")
        if dt.DataType(e.dtype).is_scalar:
            return IntSet.single_point(e)
        from .analyzer import Analyzer
        from .int_set_eval import eval_set

        return eval_set(Analyzer(), e, {})

    @staticmethod
    def from_min_extent(min_value: Any, extent: Any) -> IntervalSet:
        """``[min_value, min_value + extent - 1]``."""
        return IntSet.from_range(Range.from_min_extent(min_value, extent))

    @staticmethod
    def from_range(rng: Range) -> IntervalSet:
        """The values of ``rng``: ``[rng.min, rng.min + rng.extent - 1]``."""
        if not isinstance(rng, Range):
            raise TypeError(f"IntSet.from_range: expected a tir.Range, got {type(rng).__name__}")
        if op.is_const_int(rng.extent, 1):
            return IntSet.single_point(rng.min)
        return IntervalSet(rng.min, op.sub(op.add(rng.min, rng.extent), 1))

    @staticmethod
    def nothing() -> IntervalSet:
        """The empty set."""
        return _EMPTY

    @staticmethod
    def everything() -> IntervalSet:
        """All integers."""
        return _EVERYTHING

    # ---------------------------------------------------------- queries

    def is_nothing(self) -> bool:
        """Whether the set is (syntactically) empty."""
        return is_pos_inf(self.min_value) or is_neg_inf(self.max_value)

    def is_everything(self) -> bool:
        """Whether the set is all integers."""
        return is_neg_inf(self.min_value) and is_pos_inf(self.max_value)

    def is_single_point(self) -> bool:
        """Whether the set is one value (both ends the same expression)."""
        from .pattern import same_expr

        return not self.is_nothing() and same_expr(self.min_value, self.max_value)

    def has_lower_bound(self) -> bool:
        """Whether the set has a finite lower end."""
        return not is_neg_inf(self.min_value) and not self.is_nothing()

    def has_upper_bound(self) -> bool:
        """Whether the set has a finite upper end."""
        return not is_pos_inf(self.max_value) and not self.is_nothing()

    def point_value(self) -> PrimExpr:
        """The value of a single-point set."""
        if not self.is_single_point():
            raise ValueError(f"point_value: {self} is not a single point")
        return self.min_value

    def can_prove_single_point(self, analyzer: Any) -> bool:
        """Whether ``analyzer`` proves both ends equal."""
        if self.is_single_point():
            return True
        if not (self.has_lower_bound() and self.has_upper_bound()):
            return False
        return analyzer.can_prove_equal(self.min_value, self.max_value)

    def cover_range(self, max_range: Range) -> Range:
        """A ``Range`` covering the set, or ``max_range`` when the set is unbounded."""
        if not (self.has_lower_bound() and self.has_upper_bound()):
            return max_range
        from .analyzer import Analyzer

        ana = Analyzer()
        lo = ana.simplify(self.min_value)
        return Range.from_min_extent(lo, ana.simplify(self.max_value + 1 - self.min_value))

    # ---------------------------------------------------------- set algebra

    def union(self, other: IntSet) -> IntervalSet:
        """The smallest interval holding both sets."""
        return union([self, other])

    def intersect(self, other: IntSet) -> IntervalSet:
        """The intersection of the two intervals."""
        return intersect([self, other])


class IntervalSet(IntSet):
    """The integers in ``[min_value, max_value]`` (TVM's ``IntervalSet``)."""

    __slots__ = ("min_value", "max_value")

    def __init__(self, min_value: Any, max_value: Any) -> None:
        lo = _as_end(min_value, "IntervalSet", "min_value", like=max_value)
        hi = _as_end(max_value, "IntervalSet", "max_value", like=lo)
        object.__setattr__(self, "min_value", lo)
        object.__setattr__(self, "max_value", hi)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("IntervalSet is immutable")

    def __repr__(self) -> str:
        return f"IntervalSet[{_show(self.min_value)}, {_show(self.max_value)}]"

    __str__ = __repr__


def _show(e: PrimExpr) -> str:
    if is_pos_inf(e):
        return "pos_inf"
    if is_neg_inf(e):
        return "neg_inf"
    return str(e)


def _as_end(value: Any, who: str, field: str, like: Any = None) -> PrimExpr:
    """``value`` as an expression; a Python int takes the dtype of ``like`` when that is one."""
    if isinstance(value, PrimExpr):
        return value
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{who}: {field} must be a PrimExpr or an int, got {type(value).__name__}")
    if isinstance(like, PrimExpr) and like.dtype != "handle":
        t = dt.DataType(dt.element_of(like.dtype))
        if t.is_integer:
            return op.const(value, str(t))
    return op.const(value)


_EMPTY = IntervalSet(_POS_INF, _NEG_INF)
_EVERYTHING = IntervalSet(_NEG_INF, _POS_INF)


# ---------------------------------------------------------------- ends with infinities


def end_min(a: PrimExpr, b: PrimExpr) -> PrimExpr:
    """``min(a, b)`` where either may be an infinity."""
    if is_neg_inf(a) or is_pos_inf(b):
        return a
    if is_neg_inf(b) or is_pos_inf(a):
        return b
    return op.min(a, b)


def end_max(a: PrimExpr, b: PrimExpr) -> PrimExpr:
    """``max(a, b)`` where either may be an infinity."""
    if is_pos_inf(a) or is_neg_inf(b):
        return a
    if is_pos_inf(b) or is_neg_inf(a):
        return b
    return op.max(a, b)


def _interval_of(s: Any, who: str) -> IntervalSet:
    if isinstance(s, IntervalSet):
        return s
    if isinstance(s, Range):
        return IntSet.from_range(s)
    raise TypeError(f"{who}: expected an IntSet or a tir.Range, got {type(s).__name__}")


def union(sets: list, analyzer: Any = None) -> IntervalSet:
    """The smallest interval holding every set (TVM's ``Union``); ends simplified."""
    sets = [_interval_of(s, "union") for s in sets]
    live = [s for s in sets if not s.is_nothing()]
    if not live:
        return _EMPTY
    if len(live) == 1:
        return live[0]
    lo, hi = live[0].min_value, live[0].max_value
    for s in live[1:]:
        lo, hi = end_min(lo, s.min_value), end_max(hi, s.max_value)
    return _simplified(lo, hi, analyzer)


def intersect(sets: list, analyzer: Any = None) -> IntervalSet:
    """The intersection of the intervals (TVM's ``Intersect``); empty when provably so."""
    sets = [_interval_of(s, "intersect") for s in sets]
    if not sets:
        return _EMPTY
    if len(sets) == 1:
        return sets[0]
    if any(s.is_nothing() for s in sets):
        return _EMPTY
    lo, hi = sets[0].min_value, sets[0].max_value
    for s in sets[1:]:
        lo, hi = end_max(lo, s.min_value), end_min(hi, s.max_value)
    out = _simplified(lo, hi, analyzer)
    if out.has_lower_bound() and out.has_upper_bound() and _integer(out.min_value):
        ana = _analyzer(analyzer)
        if ana.can_prove(op.less(out.max_value, out.min_value)):
            return _EMPTY
    return out


def union_lower_bound(sets: list) -> IntervalSet:
    """A subset of the union: intervals are joined only when they touch (TVM's name)."""
    sets = [_interval_of(s, "union_lower_bound") for s in sets]
    if len(sets) == 1:
        return sets[0]
    ana = _analyzer(None)
    lo = hi = None
    for s in sets:
        if s.is_nothing():
            continue
        if lo is None:
            lo, hi = s.min_value, s.max_value
            continue
        if _touches(ana, s.min_value, hi) and _touches(ana, lo, s.max_value):
            lo, hi = end_min(lo, s.min_value), end_max(hi, s.max_value)
    if lo is None:
        return _EMPTY
    return IntSet.interval(lo, hi)


def _touches(ana: Any, lo: PrimExpr, hi: PrimExpr) -> bool:
    """``lo <= hi + 1``: an interval starting at ``lo`` joins one ending at ``hi``."""
    if is_neg_inf(lo) or is_pos_inf(hi):
        return True
    if is_pos_inf(lo) or is_neg_inf(hi):
        return False
    return ana.can_prove(op.less_equal(lo, op.add(hi, 1)))


def _simplified(lo: PrimExpr, hi: PrimExpr, analyzer: Any) -> IntervalSet:
    ana = _analyzer(analyzer)
    if not (is_pos_inf(lo) or is_neg_inf(lo)):
        lo = ana.simplify(lo)
    if not (is_pos_inf(hi) or is_neg_inf(hi)):
        hi = ana.simplify(hi)
    return IntervalSet(lo, hi)


def _analyzer(analyzer: Any) -> Any:
    if analyzer is not None:
        return analyzer
    from .analyzer import Analyzer

    return Analyzer()


def _integer(e: PrimExpr) -> bool:
    t = dt.DataType(dt.element_of(e.dtype))
    return t.is_integer


from .int_set_region import (  # noqa: E402  (the region estimates build on the sets above)
    estimate_region_lower_bound,
    estimate_region_strict_bound,
    estimate_region_upper_bound,
)

__all__ = [
    "IntSet", "IntervalSet", "estimate_region_lower_bound", "estimate_region_strict_bound",
    "estimate_region_upper_bound", "intersect", "neg_inf", "pos_inf", "union",
    "union_lower_bound",
]
