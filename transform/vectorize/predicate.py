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
guarded range: ``lane_guard`` decides whether the condition is such a guard,
``why_not_predicable`` whether the branch fits it, ``predicate_accesses``
rewrites.
"""

from __future__ import annotations

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
)
from tir.functor import StmtExprMutator, post_order_visit
from tir.node import replace
from tir.stmt import BufferStore, Stmt
from tir.structural import structural_equal

_INT_DIVISIONS = (Div, Mod, FloorDiv, FloorMod)


@attrs.frozen
class LaneGuard:
    """A vectorized condition ``Ramp(base, 1, lanes) < Broadcast(limit, lanes)``."""

    base: PrimExpr
    limit: PrimExpr
    lanes: int

    def mask(self) -> Call:
        """The lane mask the guard stands for: lane ``k`` is ``base + k < limit``."""
        return op.get_active_lane_mask(f"uint1x{self.lanes}", self.base, self.limit)


def lane_guard(cond: PrimExpr, lanes: int) -> LaneGuard | None:
    """The guard ``cond`` (a vectorized condition) is, or None if it is no such guard."""
    if not isinstance(cond, LT):
        return None
    ramp, limit = cond.a, cond.b
    if not (isinstance(ramp, Ramp) and isinstance(limit, Broadcast)):
        return None
    if not _is_one(ramp.stride) or ramp.lanes != lanes or limit.lanes != lanes:
        return None
    return LaneGuard(ramp.base, limit.value, lanes)


def why_not_predicable(branch: Stmt, guard: LaneGuard) -> str | None:
    """Why the accesses of ``branch`` cannot all take ``guard``'s mask; None if they can.

    Each must index one dimension with the guard's own ramp (the mask says
    nothing about other elements), and none may carry a predicate already.
    Masked-off lanes still compute, on zeros: an integer division by a
    non-constant would divide by zero there, so it keeps the guard.
    """
    problems: list[str | None] = []

    def check(node) -> None:
        if isinstance(node, (BufferLoad, BufferStore)):
            problems.append(_access_problem(node, guard))
        elif isinstance(node, _INT_DIVISIONS) and _divides_by_variable(node):
            problems.append(f"an integer division by {node.b} would run in masked-off lanes")

    post_order_visit(branch, check)
    if not problems:
        return "no buffer access to predicate"
    return next((p for p in problems if p), None)


def predicate_accesses(branch: Stmt, guard: LaneGuard) -> Stmt:
    """``branch`` with every load and store given ``guard``'s lane mask."""
    return _Predicate(guard.mask())(branch)


class _Predicate(StmtExprMutator):
    def __init__(self, mask: Call):
        self.mask = mask

    def visit_buffer_load(self, node: BufferLoad) -> PrimExpr:
        node = self.generic_visit(node)
        return replace(node, predicate=self.mask)

    def visit_buffer_store(self, node: BufferStore) -> Stmt:
        node = self.generic_visit(node)
        return replace(node, predicate=self.mask)


def _access_problem(node, guard: LaneGuard) -> str | None:
    what = "load from" if isinstance(node, BufferLoad) else "store to"
    name = node.buffer.name
    if node.predicate is not None:
        return f"the {what} {name} is predicated already"
    index = node.indices[-1] if len(node.indices) == 1 else None
    if not (isinstance(index, Ramp) and _is_one(index.stride) and index.lanes == guard.lanes
            and structural_equal(index.base, guard.base)):
        return f"the {what} {name} is not at the guarded elements {guard.base} + lane"
    return None


def _divides_by_variable(node) -> bool:
    if not dt.DataType(node.dtype).is_integer:
        return False  # float division of a zero lane is IEEE arithmetic, not a trap
    divisor = node.b.value if isinstance(node.b, Broadcast) else node.b
    return not (isinstance(divisor, IntImm) and divisor.value != 0)


def _is_one(e: PrimExpr) -> bool:
    return isinstance(e, IntImm) and e.value == 1


__all__ = ["LaneGuard", "lane_guard", "predicate_accesses", "why_not_predicable"]
