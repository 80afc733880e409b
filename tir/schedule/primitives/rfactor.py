"""``rfactor``: factor a reduction over one of its loops into partial results, then combine them.

TVM's primitive (``reduction.cc``'s rfactor), for the case where the loops
the reduction iter vars are bound to are innermost (a *reduction suffix*):

    for i, ko, ki:  C[i] += A[i, ko * 4 + ki]          (block "C", init 0)

becomes, with ``rfactor(ki, 0)``::

    for i:
        for ko, ki:  C_rf[ki, i] += A[i, ko * 4 + ki]   (block "C_rf": ki spatial now)
        for ki_1:    C[i] += C_rf[ki_1, i]               (block "C", its init kept)

The rf block starts each partial from the reducer's identity (0 for a sum, 1
for a product, -inf / the dtype's minimum for a max, +inf / maximum for a
min); the write-back block keeps the original init (a bias stays applied
once). The write-back takes the original block's name, so handles to it stay
valid; the rf block is returned. With the factored loop now spatial in the rf
block, it can be vectorized or run in parallel.

Refused (``ScheduleError``): a loop with other than one block under it; a
block that is not a reduction ``B[s] = B[s] OP rhs`` with OP one of + * max
min; a loop not bound to a reduction iter var, or bound to a spatial one
too; a loop below the reduction loops that binds a spatial axis (reorder the
reduction loops innermost first); ``factor_axis`` out of range.
"""

from __future__ import annotations

from typing import Any

from ...block import Block, BlockRealize, IterVar, IterVarType
from ...buffer import decl_buffer
from ...dtype import DataType
from ...expr import Add, BufferLoad, Max, Min, Mul, Var
from ...function import PrimFunc
from ...functor import post_order_visit, substitute
from ...node import replace
from ...op import const
from ...stmt import BufferStore, For, ForKind, SeqStmt
from .. import tree
from ..error import fail
from .cache import unique_block_name
from .reduction import _keep_conjuncts

_COMBINERS = {Add: "sum", Mul: "product", Max: "max", Min: "min"}


def rfactor(func: PrimFunc, loop: Var, factor_axis: int = 0) -> tuple[PrimFunc, str]:
    """Factor the reduction under ``loop``; returns ``(new_func, rf block name)``."""
    where = f"loop {loop.name}"
    f_loop = tree.find_loop(func, loop)
    realizes = [s for s, _ in tree.walk(f_loop) if isinstance(s, BlockRealize)]
    if len(realizes) != 1:
        raise fail("rfactor", where, f"has {len(realizes)} blocks under it; rfactor needs "
                   "exactly one reduction block")
    realize = realizes[0]
    block = realize.block
    op, store, rhs = _reduction_update(block)
    loops = tree.loops_above(func, realize)
    first = _reduction_suffix(realize, loops, loop, where)
    ndim = len(store.buffer.shape)
    if not -(ndim + 1) <= factor_axis <= ndim:
        raise fail("rfactor", where, f"factor_axis {factor_axis} is out of range for a "
                   f"{ndim}-d buffer (from {-(ndim + 1)} to {ndim})")
    axis = factor_axis if factor_axis >= 0 else factor_axis + ndim + 1
    rf_buf = decl_buffer(tuple(store.buffer.shape[:axis]) + (f_loop.extent,)
                         + tuple(store.buffer.shape[axis:]), store.buffer.dtype,
                         f"{store.buffer.name}_rf", scope=store.buffer.scope)
    rf_name = unique_block_name(func, f"{block.name_hint}_rf")
    rf_realize = _rf_block(realize, loops[first:], f_loop, op, store, rhs, rf_buf, axis, rf_name)
    wb_nest = _write_back(realize, loops, first, f_loop, op, store, rf_buf, axis)
    top = loops[first]
    func = tree.replace(func, {realize: rf_realize})
    top = tree.find_loop(func, top.loop_var)
    func = tree.replace(func, {top: SeqStmt.flatten(top, wb_nest)})
    root = tree.root_realize(func)
    new_root = replace(root.block, alloc_buffers=tuple(root.block.alloc_buffers) + (rf_buf,))
    return tree.replace(func, {root.block: new_root}), rf_name


def _reduction_update(block: Block) -> tuple[type, BufferStore, Any]:
    store = block.body
    if block.init is None or not isinstance(store, BufferStore):
        raise fail("rfactor", f"block {block.name_hint}", "is not a reduction block with an "
                   "init and one store")
    value = store.value
    op = type(value)
    if op not in _COMBINERS:
        raise fail("rfactor", f"block {block.name_hint}", f"its update is a {op.__name__}, not "
                   "a sum, product, max or min of the accumulator")
    for acc, rhs in ((value.a, value.b), (value.b, value.a)):
        if (isinstance(acc, BufferLoad) and acc.buffer is store.buffer
                and len(acc.indices) == len(store.indices)
                and all(a is b for a, b in zip(acc.indices, store.indices))):
            return op, store, rhs
    raise fail("rfactor", f"block {block.name_hint}", "its update does not combine the "
               "accumulator it stores to")


def _uses(e: Any, v: Var) -> bool:
    found = []
    post_order_visit(e, lambda n: found.append(n) if n is v else None)
    return bool(found)


def _reduction_suffix(realize: BlockRealize, loops: list[For], loop: Var, where: str) -> int:
    """Index of the outermost loop a reduction binding uses; checks the rules of the doc."""
    ivs, values = realize.block.iter_vars, realize.iter_values
    binds = [iv for iv, val in zip(ivs, values) if _uses(val, loop)]
    if not binds or any(not iv.is_reduce for iv in binds):
        raise fail("rfactor", where, "is not bound to reduction iter vars only (rfactor "
                   "factors a reduction loop)")
    reduce_loops = [k for k, f in enumerate(loops)
                    if any(iv.is_reduce and _uses(val, f.loop_var) for iv, val in zip(ivs, values))]
    first = min(reduce_loops)
    for f in loops[first:]:
        spatial = [iv.var.name for iv, val in zip(ivs, values)
                   if not iv.is_reduce and _uses(val, f.loop_var)]
        if spatial:
            raise fail("rfactor", where, f"loop {f.loop_var.name}, below the reduction loops, "
                       f"binds the spatial axis {spatial[0]}: reorder the reduction loops "
                       "innermost first")
    return first


def _identity(op: type, dtype: str) -> Any:
    if op is Add:
        return const(0, dtype)
    if op is Mul:
        return const(1, dtype)
    is_float = DataType(dtype).is_float
    if op is Max:
        return const(float("-inf"), dtype) if is_float else const(DataType(dtype).min_value(),
                                                                  dtype)
    return const(float("inf"), dtype) if is_float else const(DataType(dtype).max_value(), dtype)


def _rf_block(realize: BlockRealize, red_loops: list[For], f_loop: For, op: type,
              store: BufferStore, rhs: Any, rf_buf: Any, axis: int, name: str) -> BlockRealize:
    """The partial reductions: the factored loop a spatial iter var, the others reduce ones."""
    block = realize.block
    spatial = [(iv, val) for iv, val in zip(block.iter_vars, realize.iter_values)
               if not iv.is_reduce]
    loop_iv = {}
    new_ivs, new_vals = [iv for iv, _ in spatial], [val for _, val in spatial]
    for f in red_loops:
        kind = IterVarType.DataPar if f is f_loop else IterVarType.CommReduce
        var = Var(f"v_{f.loop_var.name}", f.loop_var.dtype)
        new_ivs.append(IterVar(f.extent, var, kind))
        new_vals.append(f.loop_var)
        loop_iv[f.loop_var] = var
    vmap = {iv.var: substitute(val, loop_iv) for iv, val in
            zip(block.iter_vars, realize.iter_values) if iv.is_reduce}
    rf_var = loop_iv[f_loop.loop_var]
    idx = list(store.indices[:axis]) + [rf_var] + list(store.indices[axis:])
    acc = BufferLoad(rf_buf, idx)
    value = op(acc, substitute(rhs, vmap))
    init = BufferStore(rf_buf, _identity(op, store.buffer.dtype), idx)
    rf_block = Block(new_ivs, name, body=BufferStore(rf_buf, value, idx), init=init,
                     annotations=block.annotations)
    return BlockRealize(new_vals, realize.predicate, rf_block)


def _write_back(realize: BlockRealize, loops: list[For], first: int, f_loop: For, op: type,
                store: BufferStore, rf_buf: Any, axis: int) -> For:
    """The original block combining the partials over a fresh copy of the factored loop."""
    block = realize.block
    fresh_loop = Var(f"{f_loop.loop_var.name}_1", f_loop.loop_var.dtype)
    red_var = Var(f"v_{f_loop.loop_var.name}", f_loop.loop_var.dtype)
    ivs, vals, vmap = [], [], {}
    for iv, val in zip(block.iter_vars, realize.iter_values):
        if iv.is_reduce:
            continue
        var = Var(iv.var.name, iv.var.dtype)
        ivs.append(IterVar(iv.extent, var, iv.iter_type))
        vals.append(val)
        vmap[iv.var] = var
    ivs.append(IterVar(f_loop.extent, red_var, IterVarType.CommReduce))
    vals.append(fresh_loop)
    out_idx = [substitute(i, vmap) for i in store.indices]
    rf_idx = out_idx[:axis] + [red_var] + out_idx[axis:]
    value = op(BufferLoad(store.buffer, out_idx), BufferLoad(rf_buf, rf_idx))
    wb = Block(ivs, block.name_hint, body=BufferStore(store.buffer, value, out_idx),
               init=substitute(block.init, vmap), annotations=block.annotations)
    dropped = {id(f.loop_var) for f in loops[first:]}
    predicate = _keep_conjuncts(realize.predicate, dropped)
    return For(fresh_loop, 0, f_loop.extent, ForKind.SERIAL, BlockRealize(vals, predicate, wb))
