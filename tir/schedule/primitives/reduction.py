"""``decompose_reduction``: move a reduction block's init into a block of its own.

TVM's semantics (``reduction.cc``): the init becomes a block ``<name>_init``
over the block's spatial iter vars only, placed right before the given loop,
inside copies of the loops between that loop and the block that the spatial
bindings use. The loop must be at or above every loop a reduction iter var is
bound to, so the init runs before the first update of each output.

One difference from TVM: the update block keeps its name (TVM renames it
``<name>_update``), so that the schedule's handles, which follow blocks by
name, stay valid.
"""

from __future__ import annotations

from ...analysis.var_use import used_vars
from ...block import Block, BlockRealize, IterVar
from ...expr import And, PrimExpr, Var
from ...function import PrimFunc
from ...functor import substitute
from ...node import replace
from ...op import const, is_const_int
from ...stmt import For, SeqStmt, Stmt
from .. import tree
from ..error import fail
from .cache import unique_block_name


def decompose_reduction(func: PrimFunc, block: str, loop: Var) -> tuple[PrimFunc, str]:
    """Split ``block``'s init into a new block ``<block>_init`` placed right before ``loop``.

    Returns:
        ``(new_func, name of the init block)``.
    Raises:
        ScheduleError: the block has no init, ``loop`` is not around the block, or
        ``loop`` is below a loop that a reduction iter var is bound to.
    """
    realize = tree.find_block(func, block)
    where = f"block {block}"
    if realize.block.init is None:
        raise fail("decompose_reduction", where, "the block has no init (it is not a reduction "
                   "block, or its init was decomposed already)")
    loops = tree.loops_above(func, realize)
    at = next((i for i, f in enumerate(loops) if f.loop_var is loop), None)
    if at is None:
        raise fail("decompose_reduction", f"loop {loop.name}", f"is not a loop around {where}")
    _check_height(realize, loops, at, loop)

    name = unique_block_name(func, f"{block}_init")
    init_nest = _init_nest(realize, loops[at:], name)
    target = loops[at]
    new_block = replace(realize.block, init=None)
    func = tree.replace(func, {realize.block: new_block})
    target = tree.find_loop(func, loop)
    func = tree.replace(func, {target: SeqStmt.flatten(init_nest, target)})
    return func, name


def _check_height(realize: BlockRealize, loops: list[For], at: int, loop: Var) -> None:
    """No loop strictly above ``loop`` may feed a reduction iter var's binding."""
    above = {id(f.loop_var): f for f in loops[:at]}
    for iv, value in zip(realize.block.iter_vars, realize.iter_values):
        if not iv.is_reduce:
            continue
        for v in used_vars(value):
            if id(v) in above:
                raise fail("decompose_reduction", f"loop {loop.name}",
                           f"is below loop {v.name}, which the reduction iter var "
                           f"{iv.var.name} of block {realize.block.name_hint} is bound to; "
                           f"decompose at loop {v.name} or above")


def _init_nest(realize: BlockRealize, loops: list[For], name: str) -> Stmt:
    """The init block over the spatial iter vars, inside copies of the loops it needs."""
    block = realize.block
    ivs, values, vmap = [], [], {}
    for iv, value in zip(block.iter_vars, realize.iter_values):
        if iv.is_reduce:
            continue
        fresh = Var(iv.var.name, iv.var.dtype)
        ivs.append(IterVar(iv.dom, fresh, iv.iter_type, iv.thread_tag))
        values.append(value)
        vmap[iv.var] = fresh
    used = {id(v) for value in values for v in used_vars(value)}
    chosen = [f for f in loops if id(f.loop_var) in used]
    dropped = {id(f.loop_var) for f in loops if id(f.loop_var) not in used}
    predicate = _keep_conjuncts(realize.predicate, dropped)
    init = Block(ivs, name, body=substitute(block.init, vmap), annotations=block.annotations)
    stmt: Stmt = BlockRealize(values, predicate, init)
    loop_map = {}
    for f in reversed(chosen):
        fresh = Var(f"{f.loop_var.name}_init", f.loop_var.dtype)
        loop_map[f.loop_var] = fresh
        stmt = For(fresh, f.min, f.extent, f.kind, stmt)
    return substitute(stmt, loop_map)


def _keep_conjuncts(pred: PrimExpr, dropped: set[int]) -> PrimExpr:
    """The conjuncts of ``pred`` that use none of the ``dropped`` loop vars (TVM's rule)."""
    parts: list[PrimExpr] = []
    stack = [pred]
    while stack:
        e = stack.pop()
        if isinstance(e, And):
            stack += [e.b, e.a]
        else:
            parts.append(e)
    kept = [p for p in parts if not any(id(v) in dropped for v in used_vars(p))]
    out: PrimExpr = const(True)
    for p in kept:
        out = p if is_const_int(out, 1) else And(out, p)
    return out
