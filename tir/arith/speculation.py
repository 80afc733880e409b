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

``speculation_hazard`` names the first such node, or returns None when the
expression may be simplified under the fact. TVM's ``IRMutatorWithAnalyzer``
assumes a Select's condition in its values without this check (and documents
that a Select must not guard a load); the simplifier here assumes it only for
values without a hazard, so an ``if_then_else`` whose branches are pure
arithmetic still folds as in TVM's tests.
"""

from __future__ import annotations

from .. import dtype as dt
from ..expr import BufferLoad, Call, Div, FloorDiv, FloorMod, IntImm, Mod, PrimExpr
from ..functor import ExprVisitor
from ..intrin import is_pure

_INT_DIVISIONS = (Div, Mod, FloorDiv, FloorMod)


class _Found(Exception):
    """Stops the walk at the first hazard."""

    def __init__(self, node: PrimExpr):
        super().__init__()
        self.node = node


class _Hazards(ExprVisitor):
    def __init__(self, divisions: bool):
        self.divisions = divisions  # every risky division counts, not only guarded ones
        self.guarded = 0  # how many if_then_else branches enclose the node

    def visit_buffer_load(self, node: BufferLoad) -> None:
        raise _Found(node)

    def visit_call(self, node: Call) -> None:
        if not is_pure(node.op):
            raise _Found(node)
        if node.op != "tir.if_then_else" or len(node.args) != 3:
            self.generic_visit(node)
            return
        self.visit_expr(node.args[0])  # the condition runs unconditionally
        self.guarded += 1
        try:
            self.visit_expr(node.args[1])
            self.visit_expr(node.args[2])
        finally:
            self.guarded -= 1

    def _division(self, node) -> None:
        if (self.divisions or self.guarded) and _may_trap(node):
            raise _Found(node)
        self.generic_visit(node)

    visit_div = visit_mod = visit_floor_div = visit_floor_mod = _division


def _may_trap(node) -> bool:
    """An integer division whose divisor is not a constant other than 0 and -1."""
    if not dt.DataType(dt.element_of(node.dtype)).is_integer:
        return False  # float division never traps: x / 0 is inf or NaN
    b = node.b
    return not (type(b) is IntImm and b.value not in (0, -1))


def speculation_hazard(e: PrimExpr, divisions: bool = True) -> PrimExpr | None:
    """The first node of ``e`` that makes simplifying it under a fact that may not hold
    where it runs unsafe (see the module docstring), or None if there is none.

    ``divisions=False``: a caller that checks the divisors of the simplified
    expression itself counts only the divisions an ``if_then_else`` guards.
    """
    try:
        _Hazards(divisions).visit_expr(e)
    except _Found as found:
        return found.node
    return None


__all__ = ["speculation_hazard"]
