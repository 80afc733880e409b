"""Buffer-level predication: a tail guard becomes a lane mask on the accesses it guards.

With config ``tir.enable_buffer_level_predication`` (TVM's
``TryPredicateBufferAccesses``), an ``if`` without ``else`` whose condition
vectorized to ``Ramp(base, 1, L) < Broadcast(limit, L)`` is removed, and each
load and store of its (vectorized) then-branch gets the predicate
``get_active_lane_mask("uint1xL", base, limit)``::

    for i in range(4):                               for i in range(4):
        for j in vectorized(4):                          B.vstore([Ramp(i*4, 1, 4)],
            if i*4 + j < 14:                   ->            A.vload([Ramp(i*4, 1, 4)], predicate=m)
                B[i*4 + j] = A[i*4 + j] + 1f                 + Broadcast(1f, 4), predicate=m)
                                                     (m = get_active_lane_mask("uint1x4", i*4, 14))

That is only equivalent when every access of the branch is exactly the
guarded range (an access predicated already, by ``IfConvertVectorLoops``,
takes the AND of both masks): ``lane_guard`` decides whether the condition is such a guard,
``why_not_predicable`` whether the branch fits it, ``predicate_accesses``
rewrites.
"""

from __future__ import annotations

from collections.abc import Callable

import attrs

from tir import dtype as dt
from tir import op
from tir.expr import (
    LT,
    Broadcast,
    BufferLoad,
    Call,
    Div,
    FloorDiv,
    FloorMod,
    IntImm,
    Mod,
    PrimExpr,
    Ramp,
    Select,
)
from tir.functor import StmtExprMutator, post_order_visit
from tir.node import replace
from tir.stmt import BufferStore, IfThenElse, Stmt
from tir.structural import structural_equal

from .vectorizer.lanes import ScalableLanes, lanes, lanes_arg, with_lanes

_INT_DIVISIONS = (Div, Mod, FloorDiv, FloorMod)


@attrs.frozen
class LaneGuard:
    """A vectorized condition ``Ramp(base, 1, lanes) < Broadcast(limit, lanes)``."""

    base: PrimExpr
    limit: PrimExpr
    lanes: int | ScalableLanes

    def mask(self) -> Call:
        """The lane mask the guard stands for: lane ``k`` is ``base + k < limit``."""
        return op.get_active_lane_mask(with_lanes("bool", self.lanes), self.base, self.limit)


def lane_guard(cond: PrimExpr, lanes_: int | ScalableLanes) -> LaneGuard | None:
    """The guard ``cond`` (a vectorized condition) is, or None if it is no such guard."""
    if not isinstance(cond, LT):
        return None
    ramp, limit = cond.a, cond.b
    if not (isinstance(ramp, Ramp) and isinstance(limit, Broadcast)):
        return None
    if not _is_one(ramp.stride) or lanes(ramp) != lanes_ or lanes(limit) != lanes_:
        return None
    return LaneGuard(ramp.base, limit.value, lanes_)


def why_not_predicable(branch: Stmt, guard: LaneGuard,
                       in_bounds: Callable[[BufferLoad], bool] | None = None) -> str | None:
    """Why the accesses of ``branch`` cannot all take ``guard``'s mask; None if they can.

    Each must index one dimension with the guard's own ramp (the mask says
    nothing about other elements); one that carries a predicate already keeps
    it, AND-ed with the mask, whatever its index: the mask is exact (lane ``k``
    is on exactly when iteration ``k`` runs the branch). ``in_bounds`` (given
    for ``StripMineVectorLoops``' tail loops, whose guard is ours, not TVM's)
    accepts every access of one element per lane, at any index, and every
    one-lane (uniform) load: ``predicate_accesses`` leaves it unmasked where
    ``in_bounds`` proves it inside its buffer, and otherwise reads it only if
    some lane is on (the serial program reads it iff some iteration runs).
    Masked-off lanes still compute, on zeros: an integer division by a
    non-constant would divide by zero there, so it keeps the guard (TVM's
    rule); in a tail loop it divides by ``Select(mask, d, 1)`` instead.
    """
    problems: list[str | None] = []

    def check(node) -> None:
        if isinstance(node, BufferLoad) and in_bounds is not None and _uniform(node):
            problems.append(None)
        elif isinstance(node, (BufferLoad, BufferStore)):
            problems.append(_access_problem(node, guard, in_bounds is not None))
        elif (isinstance(node, _INT_DIVISIONS) and _divides_by_variable(node)
              and (in_bounds is None or lanes(node) not in (1, guard.lanes))):
            problems.append(f"an integer division by {node.b} would run in masked-off lanes")

    post_order_visit(branch, check)
    if not problems:
        return "no buffer access to predicate"
    return next((p for p in problems if p), None)


def predicate_accesses(branch: Stmt, guard: LaneGuard,
                       in_bounds: Callable[[BufferLoad], bool] | None = None) -> Stmt:
    """``branch`` with every load and store given ``guard``'s lane mask; a uniform load
    (tail loops only, see ``why_not_predicable``) is read if some lane is on, unless
    ``in_bounds`` proves it inside its buffer."""
    return _Predicate(guard, in_bounds)(branch)


class _Predicate(StmtExprMutator):
    def __init__(self, guard: LaneGuard, in_bounds: Callable[[BufferLoad], bool] | None):
        self.mask = guard.mask()
        self.any_lane = op.less(guard.base, guard.limit)  # lane 0 is on
        self.in_bounds = in_bounds

    def visit_buffer_load(self, node: BufferLoad) -> PrimExpr:
        node = self.generic_visit(node)
        if lanes(node) == 1:
            if self.in_bounds is not None and self.in_bounds(node):
                return node
            return replace(node, predicate=_and(self.any_lane, node.predicate))
        return replace(node, predicate=self._and(node.predicate))

    def visit_buffer_store(self, node: BufferStore) -> Stmt:
        node = self.generic_visit(node)
        return replace(node, predicate=self._and(node.predicate))

    def _division(self, node: PrimExpr) -> PrimExpr:
        """Tail loops: off lanes divide by 1 (they may hold 0, or INT_MIN and -1)."""
        node = self.generic_visit(node)
        if self.in_bounds is None or not _divides_by_variable(node):
            return node
        count = lanes(node)
        on = self.any_lane if count == 1 else self.mask  # why_not_predicable checked lanes
        one = op.const(1, node.b.dtype) if count == 1 else Broadcast(
            op.const(1, dt.element_of(node.b.dtype)), lanes_arg(count))
        return replace(node, b=Select(on, node.b, one))

    visit_div = visit_mod = visit_floor_div = visit_floor_mod = _division

    def _and(self, predicate: PrimExpr | None) -> PrimExpr:
        """The lane mask, AND-ed with the access's own predicate (IfConvertVectorLoops')."""
        return self.mask if predicate is None else op.logical_and(self.mask, predicate)


def scalar_predicates_to_branches(stmt: Stmt) -> Stmt:
    """``stmt`` with each one-lane predicated access written as the branch it means.

    ``IfConvertVectorLoops`` predicates scalar accesses; where the vectorizer
    then keeps them scalar (a scalarized statement, a loop left serial), a
    branch says the same more plainly: ``B[k] = v`` with predicate ``p`` is
    ``if p: B[k] = v``, and ``A[k]`` with predicate ``p`` is
    ``if_then_else(p, A[k], 0)`` (a masked-off lane reads as zero).
    """
    return _ScalarPredicates()(stmt)


class _ScalarPredicates(StmtExprMutator):
    def visit_buffer_load(self, node: BufferLoad) -> PrimExpr:
        node = self.generic_visit(node)
        if not _one_lane(node.predicate):
            return node
        zero = op.const(0, node.dtype)
        return Call(node.dtype, "tir.if_then_else",
                    [node.predicate, replace(node, predicate=None), zero])

    def visit_buffer_store(self, node: BufferStore) -> Stmt:
        node = self.generic_visit(node)
        if not _one_lane(node.predicate):
            return node
        return IfThenElse(node.predicate, replace(node, predicate=None))


def _one_lane(predicate: PrimExpr | None) -> bool:
    return predicate is not None and lanes(predicate) == 1


def _access_problem(node, guard: LaneGuard, any_index: bool) -> str | None:
    what = "load from" if isinstance(node, BufferLoad) else "store to"
    name = node.buffer.name
    count = lanes(node if isinstance(node, BufferLoad) else node.value)
    if node.predicate is not None or any_index:  # the exact mask suits any per-lane access
        return None if count == guard.lanes else f"the {what} {name} is not one per lane"
    index = node.indices[-1] if len(node.indices) == 1 else None
    if not (isinstance(index, Ramp) and _is_one(index.stride) and lanes(index) == guard.lanes
            and structural_equal(index.base, guard.base)):
        return f"the {what} {name} is not at the guarded elements {guard.base} + lane"
    return None


def _uniform(node: BufferLoad) -> bool:
    return lanes(node) == 1


def _and(a: PrimExpr, b: PrimExpr | None) -> PrimExpr:
    return a if b is None else op.logical_and(a, b)


def _divides_by_variable(node) -> bool:
    if not dt.DataType(node.dtype).is_integer:
        return False  # float division of a zero lane is IEEE arithmetic, not a trap
    divisor = node.b.value if isinstance(node.b, Broadcast) else node.b
    return not (isinstance(divisor, IntImm) and divisor.value != 0)


def _is_one(e: PrimExpr) -> bool:
    return isinstance(e, IntImm) and e.value == 1


__all__ = [
    "LaneGuard",
    "lane_guard",
    "predicate_accesses",
    "scalar_predicates_to_branches",
    "why_not_predicable",
]
