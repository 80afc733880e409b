"""``LoopPartition``: split a loop where its ``likely`` conditions are settled (TVM's pass).

For a candidate loop (analysis.py) whose conditions are provably true on an
interval ``[b, e)`` of its range ``[min, max]``, the loop becomes up to three
loops, each starting at 0 with the var shifted::

    for v in [min, b):      body                      (prologue: conditions kept)
    for v in [b, e):        body, those conditions -> True   (the middle)
    for v in [e, max + 1):  body                      (epilogue: conditions kept)

(or, when no interval makes them true, one where they are all false). A
range of one iteration is inlined without a loop (unless config
``no_unroll_loop_with_extent_one``, or the loop has annotations). The middle
is partitioned again on the conditions left, and so are the prologue and
epilogue; every copy gets fresh binders. Where the analyzer cannot prove a
piece's extent non-negative, its bounds are clamped into the loop's range
(TVM clamps only one side). Last, every ``likely(c)`` becomes ``c`` and the
``pragma_loop_partition_hint`` annotations are dropped, as in TVM; the
``if True`` and folded conditions left behind are for ``Simplify``.

Config ``tir.LoopPartition`` (TVM's keys): ``partition_const_loop`` (also
partition loops of constant bounds), ``no_unroll_loop_with_extent_one``,
``unroll_loop_with_partition_hint_no_interval`` (a hinted loop whose
conditions have no interval becomes an unrolled loop).
"""

from __future__ import annotations

from typing import Any

import attrs

from tir import op
from tir.arith import Analyzer, IntervalSet
from tir.expr import Call, PrimExpr, Var
from tir.functor import (
    StmtExprMutator,
    StmtMutator,
    copy_with_fresh_binders,
    deep_recursion,
    substitute,
)
from tir.node import replace
from tir.stmt import For, ForKind, SeqStmt, Stmt

from ..pass_base import PrimFuncPass, prim_func_pass
from .analysis import PARTITION_HINT, find_partitions, middle_interval, select_candidates

CONFIG = "tir.LoopPartition"

#: How deep partitions may nest (each level settles at least one condition; a safety net).
MAX_DEPTH = 16

#: How many prologues/epilogues deep partitioning goes on (TVM: unbounded).
MAX_END_DEPTH = 2


@attrs.frozen
class PartitionConfig:
    """The options of ``tir.LoopPartition``."""

    partition_const_loop: bool = False
    no_unroll_loop_with_extent_one: bool = False
    unroll_loop_with_partition_hint_no_interval: bool = False


class ConditionEliminator(StmtExprMutator):
    """Replace the given conditions (the very objects) by the constant ``value``."""

    def __init__(self, conds: list[PrimExpr], value: bool) -> None:
        self.ids = {id(c) for c in conds}
        self.value = op.const(value, "bool")

    def visit_expr(self, expr: PrimExpr) -> PrimExpr:
        if id(expr) in self.ids:
            return self.value
        return super().visit_expr(expr)


class LoopPartitioner(StmtMutator):
    """Partition the candidate loops of a statement (see the module docstring)."""

    def __init__(self, cfg: PartitionConfig) -> None:
        self.cfg = cfg
        self.ana = Analyzer()
        self.candidates: dict[int, For] = {}
        self.hinted: set[Var] = set()
        self.depth = 0
        self.end_depth = 0

    def run(self, stmt: Stmt) -> Stmt:
        """Select the candidates of ``stmt``, then partition them (TVM's ``VisitAndMutate``)."""
        selector = select_candidates(stmt, self.cfg.partition_const_loop)
        self.candidates.update(selector.candidates)
        self.hinted |= selector.hinted
        return self.visit_stmt(stmt)

    def visit_for(self, loop: For) -> Stmt:
        with self.ana.loop_scope(loop.loop_var, loop.min, loop.extent):
            if id(loop) in self.candidates and self.depth < MAX_DEPTH:
                self.depth += 1
                try:
                    out = self.try_partition(loop)
                finally:
                    self.depth -= 1
                if out is not None:
                    return out
            return self.generic_visit(loop)

    def _prove(self, cond: PrimExpr) -> bool:
        return self.ana.can_prove(cond)

    def try_partition(self, loop: For) -> Stmt | None:
        """``loop`` as prologue, middle and epilogue loops, or None if nothing is settled."""
        var, lo = loop.loop_var, loop.min
        hi = self.ana.simplify(op.sub(op.add(lo, loop.extent), 1))
        hinted = var in self.hinted
        parts = find_partitions(loop.body, var, self.ana, hinted)
        if not parts:
            return None
        rng = IntervalSet(lo, hi)
        for value in (True, False):
            mid, conds = middle_interval(parts, rng, value, self.ana, hinted)
            if not mid.is_nothing():
                break
        else:
            return self._unroll_hinted(loop, hinted)
        begin, end = self._middle_bounds(mid, lo, hi)
        if self._prove(op.greater_equal(begin, end)):
            return None  # the conditions are settled nowhere in the loop
        return self._split(loop, begin, end, hi, ConditionEliminator(conds, value))

    def _unroll_hinted(self, loop: For, hinted: bool) -> Stmt | None:
        cfg = self.cfg
        if not (hinted and cfg.unroll_loop_with_partition_hint_no_interval):
            return None
        if not self._prove(op.greater(loop.extent, 1)):
            return None
        return replace(loop, kind=ForKind.UNROLLED, body=self.run(loop.body))

    def _middle_bounds(self, mid: IntervalSet, lo: PrimExpr, hi: PrimExpr) -> tuple:
        """``[begin, end)``: the middle interval clamped into ``[lo, hi + 1]``."""
        simplify = self.ana.simplify
        stop = simplify(op.add(hi, 1))
        begin = simplify(mid.min_value) if mid.has_lower_bound() else lo
        if not self._prove(op.greater_equal(begin, lo)):
            begin = simplify(op.max(begin, lo))
        if not self._prove(op.less_equal(begin, stop)):
            begin = simplify(op.min(begin, stop))
        end = simplify(op.add(mid.max_value, 1)) if mid.has_upper_bound() else stop
        if not self._prove(op.less_equal(end, stop)):
            end = simplify(op.min(end, stop))
        if not self._prove(op.greater_equal(end, begin)):
            end = simplify(op.max(end, begin))
        return begin, end

    def _split(self, loop: For, begin: PrimExpr, end: PrimExpr, hi: PrimExpr,
               eliminate: ConditionEliminator) -> Stmt:
        simplify = self.ana.simplify
        stop = simplify(op.add(hi, 1))
        pre = post = None
        if not self._prove(op.less_equal(begin, loop.min)):
            pre = self._piece(loop, loop.min, simplify(op.sub(begin, loop.min)), loop.body)
        middle = self._piece(loop, begin, simplify(op.sub(end, begin)), eliminate(loop.body),
                             fresh=False)
        if not self._prove(op.greater_equal(end, stop)):
            post = self._piece(loop, end, simplify(op.sub(stop, end)), loop.body)
        # The middle may hold conditions not settled yet (each round settles one at least).
        middle = self.run(middle)
        # The guarded ends keep the conditions; they are partitioned again (TVM) only when
        # they are provably not empty and not too deep: their conditions settle on nothing
        # smaller, so recursing on them would not end on symbolic bounds.
        pre = self._run_end(pre, simplify(op.sub(begin, loop.min)))
        post = self._run_end(post, simplify(op.sub(stop, end)))
        return SeqStmt.flatten(pre, middle, post)

    def _run_end(self, piece: Stmt | None, extent: PrimExpr) -> Stmt | None:
        if piece is None or self.end_depth >= MAX_END_DEPTH or not self._prove(extent > 0):
            return piece
        self.end_depth += 1
        try:
            return self.run(piece)
        finally:
            self.end_depth -= 1

    def _piece(self, loop: For, offset: PrimExpr, extent: PrimExpr, body: Stmt,
               fresh: bool = True) -> Stmt:
        """``body`` for ``var`` in ``[offset, offset + extent)``, as a loop from 0."""
        var = loop.loop_var
        annotations = {k: v for k, v in (loop.annotations or {}).items() if k != PARTITION_HINT}
        if (self._prove(op.equal(extent, 1)) and not self.cfg.no_unroll_loop_with_extent_one
                and not annotations):
            out = substitute(body, {var: offset})
        else:
            shifted = substitute(body, {var: op.add(var, offset)})
            out = For(var, op.const(0, var.dtype), extent, loop.kind, shifted,
                      loop.annotations, loop.thread_binding)  # the hint goes at the end
        return copy_with_fresh_binders(out) if fresh else out


class RemoveLikelyTagsAndHints(StmtExprMutator):
    """``likely(c)`` -> ``c``; loops lose their ``pragma_loop_partition_hint`` annotation."""

    def visit_call(self, call: Call) -> PrimExpr:
        if call.op in ("tir.likely", "tir.ignore_loop_partition") and len(call.args) == 1:
            return self.visit_expr(call.args[0])
        return self.generic_visit(call)

    def visit_for(self, loop: For) -> Stmt:
        new = self.generic_visit(loop)
        if PARTITION_HINT not in (loop.annotations or {}):
            return new
        kept = {k: v for k, v in loop.annotations.items() if k != PARTITION_HINT}
        return replace(new, annotations=kept or None)


def loop_partition(stmt: Stmt, cfg: PartitionConfig) -> Stmt:
    """``stmt`` with its candidate loops partitioned and the hints removed."""
    stmt = LoopPartitioner(cfg).run(stmt)
    return RemoveLikelyTagsAndHints()(stmt)


def _config(ctx: Any, default: PartitionConfig) -> PartitionConfig:
    if CONFIG not in ctx.config:
        return default
    return PartitionConfig(**dict(ctx.config[CONFIG]))


def LoopPartition(partition_const_loop: bool = False) -> PrimFuncPass:
    """The ``tir.LoopPartition`` pass (see the module docstring).

    Args:
        partition_const_loop: the value of config ``tir.LoopPartition``'s key of that
            name when the context does not set ``tir.LoopPartition`` (False, TVM's
            default; ``codegen.build``'s pipeline passes True).
    """
    default = PartitionConfig(partition_const_loop=partition_const_loop)

    def transform_function(func, mod, ctx):
        with deep_recursion():
            body = loop_partition(func.body, _config(ctx, default))
        return func if body is func.body else func.with_body(body)

    return prim_func_pass(transform_function, opt_level=0, name="tir.LoopPartition")
