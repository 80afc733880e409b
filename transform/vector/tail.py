"""The tail policy: how a vectorized loop's last, partial vector runs, in one place.

- ``StripMineVectorLoops`` peels it: ``peeled_tail`` builds the guarded last vector
  (``if base + v < limit``), marked ``PREDICATE_TAIL``; on SVE ``vla_loop`` makes
  every vector such a guarded one (seed 000's vector-length-agnostic loop). Both
  mark their loops ``STRIP_MINED`` with the note their remarks start with.
- ``is_tail_guard`` recognizes such a guard before vectorization
  (``IfConvertVectorLoops`` leaves it to predication); ``lane_guard`` after it.
- Predication, below: the guard becomes a lane mask on the accesses it guards.

Buffer-level predication.

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
from tir.arith import Analyzer
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
    Var,
)
from tir.functor import StmtExprMutator, copy_with_fresh_binders, post_order_visit, substitute
from tir.node import replace
from tir.stmt import BufferStore, For, ForKind, IfThenElse, Stmt
from tir.structural import structural_equal

from ..remarks import note_body_copy, note_loop_copy
from .vector_length import VECTOR_LENGTH
from .vectorizer.lanes import ScalableLanes, lanes, lanes_arg, with_lanes

_INT_DIVISIONS = (Div, Mod, FloorDiv, FloorMod)

#: The annotation the strip-mined loops carry: the note their remarks start with
#: (``strip-mined by 16 (the target's 512-bit registers / float32)``).
STRIP_MINED = "tir.vectorize.strip_mined"
#: The annotation on a peeled tail loop: predicate its guard, as config
#: ``tir.enable_buffer_level_predication`` does for every loop.
PREDICATE_TAIL = "tir.vectorize.predicate_tail"
#: How a peeled tail's ``STRIP_MINED`` note ends (its remark folds into its loop's).
TAIL_NOTE = ", tail"


# ---------------------------------------------------------------- peeling the tail


def peeled_tail(loop: For, vl: int, full: PrimExpr, count: PrimExpr, keep: dict,
                note: str) -> Stmt:
    """The last, partial vector of a strip-mined ``loop`` (``full`` vectors of ``vl`` done,
    ``count`` the loop's extent, at least 0)::

        for v in vectorized(vl):
            if min + full * vl + v < min + count:        # the tail guard
                body(min + full * vl + v)

    Marked ``PREDICATE_TAIL``: ``VectorizeLoop`` makes its guard a lane mask."""
    var, dtype = loop.loop_var, loop.loop_var.dtype
    inner = Var(var.name, dtype)
    # The guard and the accesses share the base ``start``: predication needs them equal.
    start = op.add(loop.min, op.mul(full, op.const(vl, dtype)))
    index = op.add(start, inner)
    guard = op.less(index, op.add(loop.min, count))
    # A second copy of the body: its binders are fresh, no var is bound twice.
    copy = copy_with_fresh_binders(loop.body, {var: index})
    note_loop_copy(inner, var, index)
    note_body_copy(loop.body, copy)
    body = IfThenElse(guard, copy)
    annotations = {**keep, STRIP_MINED: f"{note}{TAIL_NOTE}", PREDICATE_TAIL: True}
    return For(inner, op.const(0, dtype), op.const(vl, dtype), ForKind.VECTORIZED, body,
               annotations)


def vla_loop(loop: For, vl: PrimExpr, note: str, lane: Var | None = None) -> Stmt:
    """``loop`` as seed 000's vector-length-agnostic loop: every vector predicated::

        for i_outer in range(ceildiv(n, VL)):
            for i in vectorized(VL):                 # VL = vscale() * k
                if i_outer * VL + i < n:             # -> get_active_lane_mask
                    body(min + i_outer * VL + i)

    One loop for any vector length and any ``n``: no tail loop, no fixed width.
    ``lane``, if given, is the var of the inner loop (``loop.body`` may use it).
    """
    var, dtype = loop.loop_var, loop.loop_var.dtype
    width = vl if dtype == vl.dtype else op.cast(dtype, vl)
    count = loop.extent
    if not Analyzer().can_prove(op.greater_equal(count, op.const(0, dtype))):
        count = op.max(count, op.const(0, dtype))  # a negative extent runs no iteration
    outer = Var(f"{var.name}_outer", dtype)
    inner = Var(var.name, dtype) if lane is None else lane
    done = op.add(op.mul(outer, width), inner)
    guard = op.less(done, count)
    note_loop_copy(inner, var, op.add(loop.min, done))
    body = IfThenElse(guard, substitute(loop.body, {var: op.add(loop.min, done)}))
    keep = {k: v for k, v in (loop.annotations or {}).items() if k != VECTOR_LENGTH}
    vector = For(inner, op.const(0, dtype), width, ForKind.VECTORIZED, body,
                 {**keep, STRIP_MINED: note, PREDICATE_TAIL: True})
    # ceildiv without the overflow of n + VL - 1; (0 - 1) // VL + 1 = 0
    steps = op.add(op.floordiv(op.sub(count, op.const(1, dtype)), width), op.const(1, dtype))
    return For(outer, op.const(0, dtype), steps, ForKind.SERIAL, vector)


def is_tail_guard(node: IfThenElse, var: Var, analyzer: Analyzer,
                  varies: Callable[[PrimExpr], bool]) -> bool:
    """Whether ``node`` is ``if base + var < limit`` (no else) before vectorization, ``var``
    the innermost vectorized loop's var and ``varies`` true of what changes across its
    iterations otherwise: a guard predication turns into a lane mask."""
    cond = node.condition
    if node.else_case is not None or not isinstance(cond, LT):
        return False
    base = analyzer.simplify(op.sub(cond.a, var))
    return not varies(base) and not varies(cond.b)


# ---------------------------------------------------------------- predication


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
