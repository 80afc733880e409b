"""``compute_at`` and ``reverse_compute_at``: move a block under a loop of another stage.

``compute_at(func, "B", loop)`` moves producer ``B`` to the start of ``loop``'s
body (before the first consumer there), inside new loops that compute exactly
what the consumers under ``loop`` read in one iteration of it;
``reverse_compute_at`` moves a consumer to the end of the body, computing what
the producers there have just written. The region inference is in
``tir/schedule/region.py``; this module checks legality and rebuilds the tree.

The checks follow TVM's ``compute_at.cc``: the block and the loop sit in the
same (root) block scope and the loop is not already around the block; the
block is complete (spatial iter vars, the only writer of its outputs, not
reading them) or a reduction; for ``compute_at`` it does not write a function
parameter, every consumer is under the loop and nothing the block moves past
writes what it reads or writes; for ``reverse_compute_at`` every producer is
under the loop and nothing it moves past touches what it writes.
"""

from __future__ import annotations

from typing import Callable

from ... import op
from ...analysis.var_use import uses_any_var, uses_var
from ...arith import Analyzer
from ...arith.int_set import IntervalSet
from ...block import Block, BlockRealize
from ...expr import PrimExpr, Var
from ...function import PrimFunc
from ...functor import ExprMutator
from ...node import replace
from ...range import Range
from ...stmt import For, ForKind, SeqStmt, Stmt
from ...structural import structural_equal
from .. import analysis, region, tree
from ..error import ScheduleError, fail


def compute_at(func: PrimFunc, block: str, loop: Var, preserve_unit_loops: bool = False
               ) -> PrimFunc:
    """Move producer ``block`` under ``loop``, computing only what the consumers there read.

    Loops of extent 1 are left out unless ``preserve_unit_loops``. Raises
    ``ScheduleError`` naming the block, the loop and the broken rule.
    """
    return _move(func, block, loop, preserve_unit_loops, reverse=False)


def reverse_compute_at(func: PrimFunc, block: str, loop: Var, preserve_unit_loops: bool = False
                       ) -> PrimFunc:
    """Move consumer ``block`` under ``loop``, right after the producers there write its input."""
    return _move(func, block, loop, preserve_unit_loops, reverse=True)


# ---------------------------------------------------------------- the rewrite


def _move(func: PrimFunc, name: str, loop_var: Var, preserve: bool, reverse: bool) -> PrimFunc:
    prim = "reverse_compute_at" if reverse else "compute_at"
    realize = tree.find_block(func, name)
    loop = tree.find_loop(func, loop_var)

    def err(rule: str) -> ScheduleError:
        return fail(prim, f"block {name}, loop {loop_var.name}", rule)

    check_same_scope(func, realize, loop, err)
    check_complete_or_reduction(func, realize, err)
    if not reverse:
        check_not_output(func, realize, err)
    under = _blocks_under(loop)
    _check_order_and_dependences(func, realize, loop, under, reverse, err)

    ana = Analyzer()
    for f in tree.loops_above(func, loop) + [loop]:
        ana.bind(f.loop_var, Range.from_min_extent(f.min, f.extent))
    doms = _iter_domains(func, realize, loop, under, reverse, ana, err)
    old_loops = tree.loops_above(func, realize)
    nest = _new_nest(realize, doms, preserve, ana, old_loops)
    subtrees = list(loop.body.seq) if isinstance(loop.body, SeqStmt) else [loop.body]
    at = _insert_position(subtrees, realize, reverse)
    new_loop = replace(loop, body=SeqStmt.flatten(*subtrees[:at], nest, *subtrees[at:]))
    out = tree.replace(func, [(removal_root(func, realize), None), (loop, new_loop)])
    _check_no_reduction_across_threads(out, name, err)
    return out


def _check_no_reduction_across_threads(func: PrimFunc, name: str, err: Callable) -> None:
    """A reduce iter var of the moved block must not follow a parallel or vector loop.

    Serially, a reduction split across iterations of an outer loop still adds up in
    order; under a parallel or vectorized loop those iterations race on one output.
    """
    realize = tree.find_block(func, name)
    for f in tree.loops_above(func, realize):
        if f.kind not in (ForKind.PARALLEL, ForKind.VECTORIZED):
            continue
        for iv, value in zip(realize.block.iter_vars, realize.iter_values):
            if iv.is_reduce and uses_var(value, f.loop_var):
                kind = "parallel" if f.kind == ForKind.PARALLEL else "vectorized"
                raise err(f"the reduction iter var {iv.var.name} would be bound to the {kind} "
                          f"loop {f.loop_var.name} ({iv.var.name} = {value}): its iterations "
                          f"would combine into one output at once; move the block under a "
                          f"serial loop")


def _blocks_under(stmt: Stmt) -> list[BlockRealize]:
    return [s for s, _ in tree.walk(stmt) if isinstance(s, BlockRealize)]


def removal_root(func: PrimFunc, realize: BlockRealize) -> Stmt:
    """The outermost statement that holds ``realize`` and nothing else (its own loops)."""
    node: Stmt = realize
    for parent in reversed(tree.above(func, realize)):
        if not isinstance(parent, For):
            break
        node = parent
    return node


def _insert_position(subtrees: list[Stmt], realize: BlockRealize, reverse: bool) -> int:
    """Before the first subtree holding a consumer of the block (or at the end)."""
    written = {id(b) for b in analysis.writes(realize.block)}
    for i, s in enumerate(subtrees):
        if any(id(b) in written for r in _blocks_under(s) for b in analysis.reads(r.block)):
            return i
    return len(subtrees)


def _iter_domains(func: PrimFunc, realize: BlockRealize, loop: For, under: list, reverse: bool,
                  ana: Analyzer, err: Callable) -> list[tuple[IntervalSet, IntervalSet | None]]:
    """Per iter var: the values to cover, and the domain bound to guard with (or None)."""
    block = realize.block
    mine = analysis.reads(block) if reverse else analysis.writes(block)
    required: dict[int, list] = {}
    for other in under:
        ancestors = tree.loops_above(func, other)
        relax = ancestors[[f.loop_var for f in ancestors].index(loop.loop_var) + 1:]
        for buf in mine:
            box = region.relaxed_region(other, relax, buf, reverse, ana)
            if box is not None:
                required.setdefault(id(buf), []).append(box)
    required_box = {k: region.union_regions(v, ana) for k, v in required.items()}
    provided = {}
    for buf in mine:
        if id(buf) not in required_box:
            continue
        indices = region.provided_indices(realize, buf, is_write=not reverse)
        if indices is None:
            raise err(f"the block {'reads' if reverse else 'writes'} {buf.name} at more than "
                      "one index per instance; the region it covers cannot be inverted")
        provided[id(buf)] = indices
    try:
        solved = region.solve_iter_domains(list(block.iter_vars), provided, required_box, ana)
    except region.CannotSolve as e:
        raise err(str(e)) from None
    return [_clip(s, IntervalSet(iv.min, iv.min + iv.extent - 1), ana)
            for s, iv in zip(solved, block.iter_vars)]


def _clip(dom: IntervalSet | None, bound: IntervalSet, ana: Analyzer
          ) -> tuple[IntervalSet, IntervalSet | None]:
    """TVM's choice: the needed values when inside the domain, the domain when that is
    smaller, else the needed values guarded by the domain (a predicate)."""
    bound = IntervalSet(ana.simplify(bound.min_value), ana.simplify(bound.max_value))
    if dom is None or not (dom.has_lower_bound() and dom.has_upper_bound()):
        return bound, None
    dom = IntervalSet(ana.simplify(dom.min_value), ana.simplify(dom.max_value))
    if region.within(dom, bound, ana):
        return dom, None
    if region.within(bound, dom, ana):
        return bound, None
    return dom, bound


def _new_nest(realize: BlockRealize, doms: list, preserve: bool, ana: Analyzer,
              old_loops: list[For]) -> Stmt:
    """Fresh loops ``ax0, ax1, ...`` over the iter domains, around the moved block."""
    loops: list[tuple[Var, PrimExpr]] = []
    values: list[PrimExpr] = []
    conds: list[PrimExpr] = []
    for iv, (dom, bound) in zip(realize.block.iter_vars, doms):
        rng = region.cover_range(dom, ana)
        if preserve or not op.is_const_int(rng.extent, 1):
            v = Var(f"ax{len(loops)}", iv.var.dtype)
            loops.append((v, rng.extent))
            ana.bind(v, Range.from_min_extent(op.const(0, v.dtype), rng.extent))
            value = rng.min + v
        else:
            value = rng.min
        values.append(value)
        if bound is not None:
            for cond in (value >= bound.min_value, value < bound.max_value + 1):
                if not ana.can_prove(cond):
                    conds.append(cond)
    carried = carried_predicate(realize, values, old_loops)
    if carried is not None and not ana.can_prove(carried):
        conds.append(carried)
    predicate = ana.simplify(op.all(*conds)) if conds else op.const(True, "bool")
    stmt: Stmt = BlockRealize(values, predicate, realize.block)
    for v, extent in reversed(loops):
        stmt = For(v, op.const(0, v.dtype), extent, ForKind.SERIAL, stmt)
    return stmt


class _Rebind(ExprMutator):
    """Each subexpression equal to an old binding becomes that iter var's new value."""

    def __init__(self, pairs: list[tuple[PrimExpr, PrimExpr]]):
        self.pairs = pairs

    def visit_expr(self, e: PrimExpr) -> PrimExpr:
        for old, new in self.pairs:
            if structural_equal(e, old):
                return new
        return super().visit_expr(e)


def carried_predicate(realize: BlockRealize, values: list[PrimExpr], old_loops: list[For]
                      ) -> PrimExpr | None:
    """The moved block's predicate in its new bindings, or None (none, or not expressible).

    The new loops cover the iter domains, which a split's guard on the old loops
    (``k_0 * 4 + k_1 < 10`` for ``v_k = k_0 * 4 + k_1``) already implies, but not
    a guard over iter vars of their own (an rfactor block's ``v_k_0 * 4 + v_k_1 <
    10``): rewritten through the bindings, the guard keeps holding. A guard
    still using the old loops after the rewrite is left out, as before.
    """
    if op.is_const_int(realize.predicate, 1):
        return None
    loop_ids = {id(f.loop_var) for f in old_loops}
    pairs = [(old, new) for old, new in zip(realize.iter_values, values)
             if uses_any_var(old, loop_ids)]
    rewritten = _Rebind(pairs)(realize.predicate)
    return None if uses_any_var(rewritten, loop_ids) else rewritten


# ---------------------------------------------------------------- checks


def check_same_scope(func: PrimFunc, realize: BlockRealize, loop: For, err: Callable) -> None:
    """The block and the loop are both directly in the root block; the loop is not around it."""
    root = tree.root_realize(func).block
    outer_block = tree.above(func, realize)
    if loop in outer_block:
        raise err(f"the loop is already around the block (loop {loop.loop_var.name} is an "
                  "ancestor of it): pick a loop of another stage")
    for stmts in (outer_block, tree.above(func, loop)):
        if [s for s in stmts if isinstance(s, Block)] != [root]:
            raise err("the block and the loop must be in the same block scope (the root block)")


def check_complete_or_reduction(func: PrimFunc, realize: BlockRealize, err: Callable) -> None:
    """TVM's complete-or-reduction block: the only writer of its outputs; spatial blocks do
    not read what they write; a block with reduce iter vars has an init."""
    block = realize.block
    written = analysis.writes(block)
    for other in tree.blocks(func):
        if other is realize:
            continue
        for b in analysis.writes(other.block):
            if any(b is w for w in written):
                raise err(f"block {other.block.name_hint} also writes {b.name}: the block must "
                          f"be the only writer of what it writes")
    if analysis.is_reduction(block):
        if block.init is None:
            raise err("the block has reduce iter vars but no init: it is neither a complete "
                      "nor a reduction block")
        return
    read = {id(b) for b in analysis.reads(block)}
    for b in written:
        if id(b) in read:
            raise err(f"the block reads {b.name}, which it writes, without being a reduction: "
                      "it is not a complete block")


def check_not_output(func: PrimFunc, realize: BlockRealize, err: Callable) -> None:
    """``compute_at`` moves only blocks whose results stay inside the function."""
    params = analysis.param_buffers(func)
    for b in analysis.writes(realize.block):
        if id(b) in params:
            raise err(f"the block writes {b.name}, a parameter of the function (an output "
                      "block): compute_at only moves blocks whose results the function consumes")


def _check_order_and_dependences(func: PrimFunc, realize: BlockRealize, loop: For, under: list,
                                 reverse: bool, err: Callable) -> None:
    """The block precedes the loop (follows it for reverse), its consumers (producers) are all
    under the loop, and no block it moves past conflicts with it."""
    order = {id(s): i for i, (s, _) in enumerate(tree.walk(func.body))}
    here = order[id(realize)]
    start = order[id(loop)]
    end = max(order[id(s)] for s, _ in tree.walk(loop))
    inside = {id(r) for r in under}
    reads = {id(b) for b in analysis.reads(realize.block)}
    writes = {id(b) for b in analysis.writes(realize.block)}
    _check_order(here, start, reverse, err)
    for other in tree.blocks(func):
        if other is not realize and id(other) not in inside:
            _check_left_out(other, order[id(other)] < here, reads, writes, reverse, err)
    lo, hi = (start, here) if reverse else (here, end + 1)
    for other in tree.blocks(func):
        if other is not realize and lo < order[id(other)] < hi:
            _check_moved_past(other, id(other) in inside, reads, writes, reverse, err)


def _check_order(here: int, start: int, reverse: bool, err: Callable) -> None:
    """compute_at moves a block down to a later loop, reverse_compute_at up to an earlier one."""
    if not reverse and here > start:
        raise err("the block comes after the loop: compute_at moves a producer down to its "
                  "consumers (use reverse_compute_at for a consumer)")
    if reverse and here < start:
        raise err("the block comes before the loop: reverse_compute_at moves a consumer up to "
                  "its producers (use compute_at for a producer)")


def _check_left_out(other: BlockRealize, before: bool, reads: set[int], writes: set[int],
                    reverse: bool, err: Callable) -> None:
    """``other``, a block outside the loop, is no producer (reverse: an earlier writer of what
    the block reads) or consumer (a later reader of what it writes) of the block."""
    other_name = other.block.name_hint
    if reverse and before and _touches(other, reads, write=True):
        raise err(_producer_rule(other_name, _first(other, reads, True), reverse))
    if not reverse and not before and _touches(other, writes, write=False):
        raise err(_consumer_rule(other_name, _first(other, writes, False), reverse))


def _check_moved_past(other: BlockRealize, in_loop: bool, reads: set[int], writes: set[int],
                      reverse: bool, err: Callable) -> None:
    """``other``, between the block and its new place, does not conflict with the block."""
    other_name = other.block.name_hint
    for b in analysis.writes(other.block):
        if id(b) in writes:
            raise err(f"block {other_name} also writes {b.name}")
        if id(b) in reads and (not reverse or not in_loop):
            raise err(_producer_rule(other_name, b.name, reverse))
    for b in analysis.reads(other.block):
        if id(b) in writes and (reverse or not in_loop):
            raise err(_consumer_rule(other_name, b.name, reverse))


def _first(other: BlockRealize, buffers: set[int], write: bool) -> str:
    mine = analysis.writes(other.block) if write else analysis.reads(other.block)
    return next(b.name for b in mine if id(b) in buffers)


def _touches(other: BlockRealize, buffers: set[int], write: bool) -> bool:
    """``other`` writes (or reads) one of ``buffers``."""
    mine = analysis.writes(other.block) if write else analysis.reads(other.block)
    return any(id(b) in buffers for b in mine)


def _producer_rule(other: str, buf: str, reverse: bool) -> str:
    if reverse:
        return (f"not all producers are under the loop: block {other} writes {buf}, which the "
                "block reads")
    return (f"block {other} writes {buf}, which the block reads, between the block and its new "
            "place: moving the block past it changes what it reads")


def _consumer_rule(other: str, buf: str, reverse: bool) -> str:
    if reverse:
        return (f"block {other} reads {buf}, which the block writes, between the loop and the "
                "block: moving the block before it changes what it reads")
    return (f"not all consumers are under the loop: block {other} reads {buf}, which the block "
            "writes")
