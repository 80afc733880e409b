"""May an expression be simplified with a fact that need not hold where it is evaluated?

``Select(c, t, f)`` evaluates both ``t`` and ``f`` on every iteration (TVM's
semantics: only ``tir.if_then_else`` evaluates the chosen value alone), and
``a && b`` evaluates both sides. Simplifying ``t`` assuming ``c`` gives an
expression equal to ``t`` where ``c`` holds and possibly something else
where it does not. For pure arithmetic that is harmless: the Select discards
the value there. It is not harmless when *computing* the value can do harm:

- a load: its index or predicate rewritten under ``c`` may leave the buffer
  where ``c`` is false (``Select(i < 4, A[min(i, 3)], 0)`` to ``A[i]``), and
  the guard of a padded read would be dropped (``Select(j != 1, 1,
  if_then_else(j < 7, A[j], 0))`` to ``A[j]`` in the false value);
- a call with side effects: it would run with other arguments;
- an integer division by a non-constant inside an ``if_then_else`` branch:
  the guard may be dropped, and the division then runs where its divisor is 0.

``Speculation.hazard(e)`` says whether ``e`` holds such a node. TVM's
``IRMutatorWithAnalyzer`` assumes a Select's condition in its values without
this check (and documents that a Select must not guard a load); the
simplifier here assumes it only for values without a hazard, so an
``if_then_else`` whose branches are pure arithmetic still folds as in TVM's
tests. The answer depends on the expression alone: it is memoized per node,
so that asking about every Select of a deep nest stays linear.
"""

from __future__ import annotations

import functools

from .. import dtype as dt
from ..expr import BufferLoad, Call, Div, FloorDiv, FloorMod, IntImm, Mod, PrimExpr
from ..functor import deep_recursion
from ..intrin import is_pure
from ..node import EXPR, EXPRS, child_fields

_INT_DIVISIONS = (Div, Mod, FloorDiv, FloorMod)

# What a subtree holds, as bits: a load or impure call; an integer division that may
# trap; such a division inside a branch of an if_then_else.
_EFFECT, _DIVISION, _GUARDED_DIVISION = 1, 2, 4
_MEMO_LIMIT = 200_000


class Speculation:
    """Answers ``hazard`` for expressions, remembering the answer of every node it visits."""

    def __init__(self) -> None:
        self._memo: dict[int, tuple] = {}

    def hazard(self, e: PrimExpr, divisions: bool = True) -> bool:
        """Whether simplifying ``e`` under a fact that may be false where it runs is unsafe
        (see the module docstring).

        ``divisions=False``: a caller that checks the divisors of the simplified
        expression itself counts only the divisions an ``if_then_else`` guards.
        """
        if len(self._memo) > _MEMO_LIMIT:
            self._memo.clear()
        with deep_recursion():
            flags = self._flags(e)
        mask = _EFFECT | _GUARDED_DIVISION | (_DIVISION if divisions else 0)
        return bool(flags & mask)

    def _flags(self, e: PrimExpr) -> int:
        hit = self._memo.get(id(e))
        if hit is not None and hit[0] is e:
            return hit[1]
        flags = self._compute(e)
        self._memo[id(e)] = (e, flags)
        return flags

    def _compute(self, e: PrimExpr) -> int:
        cls = type(e)
        if cls is BufferLoad or (cls is Call and not is_pure(e.op)):
            return _EFFECT
        flags = 0
        for child in _children(e):
            flags |= self._flags(child)
        if cls is Call and e.op == "tir.if_then_else" and len(e.args) == 3:
            if (self._flags(e.args[1]) | self._flags(e.args[2])) & _DIVISION:
                flags |= _GUARDED_DIVISION
        elif cls in _INT_DIVISIONS and _may_trap(e):
            flags |= _DIVISION
        return flags


def _children(e: PrimExpr) -> list:
    out = []
    for name, kind in _expr_fields(type(e)):
        value = getattr(e, name)
        if kind == EXPR:
            if value is not None:
                out.append(value)
        else:
            out.extend(value)
    return out


@functools.cache
def _expr_fields(cls: type) -> tuple:
    """The expression-valued child fields of ``cls`` (a Let's bound var is not one)."""
    return tuple((name, kind) for name, kind, binds in child_fields(cls)
                 if not binds and kind in (EXPR, EXPRS))


def _may_trap(node) -> bool:
    """An integer division whose divisor is not a constant other than 0 and -1."""
    if not dt.DataType(dt.element_of(node.dtype)).is_integer:
        return False  # float division never traps: x / 0 is inf or NaN
    b = node.b
    return not (type(b) is IntImm and b.value not in (0, -1))


def speculation_hazard(e: PrimExpr, divisions: bool = True) -> bool:
    """``Speculation().hazard(e, divisions)``, for a one-off question."""
    return Speculation().hazard(e, divisions)


__all__ = ["Speculation", "speculation_hazard"]
