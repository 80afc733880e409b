"""``rfactor``: factor a reduction over one of its loops into partial results and a final one.

TVM's semantics (``reduction.cc``). For a reduction block under loop ``r``
(bound to a reduction iter var, typically the inner part of a split), a new
buffer ``<buf>_rf`` gets an extra dimension of ``r``'s extent at
``factor_axis``, and the block becomes two:

- the *rfactor block* ``<block>_rf``, in a copy of the whole loop nest placed
  before it, reduces into ``<buf>_rf``: ``r``'s iter var is spatial there
  (each value of ``r`` owns one partial result), so ``r`` can then run in
  parallel or vectorized;
- the *write-back block*, which keeps the block's name and the original loops
  minus the other reduction loops, reduces the partials into the buffer.

A reduction iter var whose binding uses ``r`` (``v_k = k_0 * 4 + k_1``) is
replaced in the rfactor block by one reduction iter var per other loop of
its binding; the iter vars not touching ``r`` are kept as they are.

Where tirlite differs from TVM:

- The init need not be the reducer's identity (``te.sum(..., init=...)``):
  the rfactor block starts from the identity and the write-back block keeps
  the original init, so the result is the same.
- The write-back block keeps the part of the predicate (a split's guard)
  that decides whether a partial result exists at all: the predicate with
  the dropped reduction loops at their minimum, the iteration where the
  rfactor block's init runs. TVM drops the predicate, so a partial that no
  iteration writes (extent 3 split by 4) would be read uninitialized.
- A reduction under ``if`` (``te.sum(..., where=...)``) is accepted: the
  condition stays in the rfactor block.
- Loops need not start at zero: ``<buf>_rf`` is indexed by ``v - min``.
"""

from __future__ import annotations

from typing import Any, Callable

import attrs

from ... import dtype as dt
from ...analysis.var_use import used_vars
from ...arith import Analyzer
from ...block import Block, BlockRealize, IterVar, IterVarType
from ...buffer import Buffer, decl_buffer
from ...expr import Add, And, BufferLoad, Call, Max, Min, Mul, Or, PrimExpr, Var
from ...function import PrimFunc
from ...functor import StmtMutator, post_order_visit, substitute
from ...node import replace
from ...op import const, max_value, min_value
from ...range import Range
from ...stmt import BufferStore, For, ForKind, IfThenElse, SeqStmt, Stmt
from ...structural import structural_equal
from .. import tree
from ..error import ScheduleError, fail
from .cache import unique_block_name

# ------------------------------------------------------------------ reducers

# update value class (or intrinsic name) -> (reducer name, identity of a dtype)
_BINARY: dict[type, tuple[str, Callable[[str], PrimExpr]]] = {
    Add: ("sum", lambda t: const(0, t)),
    Mul: ("product", lambda t: const(1, t)),
    Min: ("min", max_value),
    Max: ("max", min_value),
    And: ("logical and", lambda t: const(True, t)),
    Or: ("logical or", lambda t: const(False, t)),
}
_INTRINSICS: dict[str, tuple[str, Callable[[str], PrimExpr]]] = {
    "tir.bitwise_and": ("bitwise and", lambda t: const(_all_ones(t), t)),
    "tir.bitwise_or": ("bitwise or", lambda t: const(0, t)),
    "tir.bitwise_xor": ("bitwise xor", lambda t: const(0, t)),
}
KNOWN_REDUCERS = ", ".join(name for name, _ in (*_BINARY.values(), *_INTRINSICS.values()))


def _all_ones(dtype: str) -> int:
    return dt.DataType(dtype).max_value() if dt.DataType(dtype).is_uint else -1


@attrs.frozen
class _Reduction:
    """A block's update ``buf[idx] = combine(buf[idx], rhs)`` (maybe under ``if cond``)."""

    store: BufferStore
    rhs: PrimExpr
    acc_first: bool  # whether the accumulator is the combiner's first operand
    make: Callable[[PrimExpr, PrimExpr], PrimExpr]
    identity: PrimExpr
    cond: PrimExpr | None

    def update(self, buf: Buffer, indices: list, rhs: PrimExpr) -> Stmt:
        """``buf[indices] = combine(buf[indices], rhs)`` with the original operand order."""
        acc = BufferLoad(buf, indices)
        value = self.make(acc, rhs) if self.acc_first else self.make(rhs, acc)
        return BufferStore(buf, value, indices)


def _match_reduction(block: Block, where: str) -> _Reduction:
    """The update and reducer of ``block``; ``ScheduleError`` if rfactor cannot read them."""
    body, cond = block.body, None
    if isinstance(body, IfThenElse) and body.else_case is None:
        body, cond = body.then_case, body.condition
    init = block.init
    if not isinstance(body, BufferStore):
        raise fail("rfactor", where, "the block's body is not one store into the reduced "
                   "buffer (optionally under an if)")
    if (not isinstance(init, BufferStore) or init.buffer is not body.buffer
            or not structural_equal(tuple(init.indices), tuple(body.indices))):
        raise fail("rfactor", where, f"the block's init is not one store into "
                   f"{body.buffer.name} at the element its body updates")
    found = _combiner(body)
    if found is None:
        raise fail("rfactor", where, f"the update {body.buffer.name}[...] = {body.value} is "
                   f"not a reduction rfactor recognises ({KNOWN_REDUCERS} of the "
                   f"accumulator {body.buffer.name}[...] and a value not reading it)")
    rhs, acc_first, make, identity = found
    return _Reduction(body, rhs, acc_first, make, identity(body.value.dtype), cond)


def _combiner(store: BufferStore) -> tuple | None:
    """``(rhs, acc_first, make, identity)`` when ``store`` combines its element with a value."""
    v = store.value
    if type(v) in _BINARY:
        pair, make = (v.a, v.b), type(v)
        identity = _BINARY[type(v)][1]
    elif isinstance(v, Call) and v.op in _INTRINSICS and len(v.args) == 2:
        pair = tuple(v.args)
        make = _call_maker(v.dtype, v.op)
        identity = _INTRINSICS[v.op][1]
    else:
        return None
    for k in (0, 1):
        acc, rhs = pair[k], pair[1 - k]
        if (isinstance(acc, BufferLoad) and acc.buffer is store.buffer
                and structural_equal(tuple(acc.indices), tuple(store.indices))
                and not _loads(rhs, store.buffer)):
            return rhs, k == 0, make, identity
    return None


def _call_maker(dtype: str, op: str) -> Callable[[PrimExpr, PrimExpr], PrimExpr]:
    return lambda a, b: Call(dtype, op, [a, b])


def _loads(e: PrimExpr, buf: Buffer) -> bool:
    found: list = []
    post_order_visit(e, lambda n: found.append(n)
                     if isinstance(n, BufferLoad) and n.buffer is buf else None)
    return bool(found)


# ------------------------------------------------------------------ checks


def _child_blocks(loop: For) -> list[BlockRealize]:
    """The block realizes under ``loop`` that no other block encloses."""
    return [s for s, above in tree.walk(loop.body)
            if isinstance(s, BlockRealize) and not any(isinstance(a, Block) for a in above)]


def _only_block(loop: For) -> BlockRealize:
    """The one block under ``loop``; ``ScheduleError`` when there are none or several."""
    found = _child_blocks(loop)
    where = f"loop {loop.loop_var.name}"
    if not found:
        raise fail("rfactor", where, "no block is under the loop")
    if len(found) > 1:
        names = ", ".join(r.block.name_hint for r in found)
        raise fail("rfactor", where, f"the loop has {len(found)} blocks under it ({names}); "
                   "rfactor needs the reduction block alone under it")
    return found[0]


def _check_reduction_block(block: Block, where: str) -> None:
    """A block with an init, spatial and reduction iter vars, reduction ones not indexing out."""
    if block.init is None or not any(iv.is_reduce for iv in block.iter_vars):
        why = "no init" if block.init is None else "no reduction iter var"
        raise fail("rfactor", where, f"the block is not a reduction block (it has {why})")
    for iv in block.iter_vars:
        if iv.iter_type not in (IterVarType.DataPar, IterVarType.CommReduce):
            raise fail("rfactor", where, f"iter var {iv.var.name} is neither spatial nor a "
                       "reduction")
    if block.alloc_buffers:
        raise fail("rfactor", where, "the block allocates buffers")


def _touched(realize: BlockRealize) -> tuple[dict[int, str], dict[int, str]]:
    """id(loop var) -> iter var name, for the spatial and for the reduction iter vars."""
    spatial: dict[int, str] = {}
    reduce: dict[int, str] = {}
    for iv, value in zip(realize.block.iter_vars, realize.iter_values):
        side = reduce if iv.is_reduce else spatial
        for v in used_vars(value):
            side.setdefault(id(v), iv.var.name)
    return spatial, reduce


def _check_loops(loops: list[For], rf: For, realize: BlockRealize) -> None:
    """TVM's loop rules: the rfactor loop is a reduction loop, the nest can be split in two."""
    spatial, reduce = _touched(realize)
    name = realize.block.name_hint
    rv = rf.loop_var
    where = f"loop {rv.name} of block {name}"
    if id(rv) in spatial:
        raise fail("rfactor", where, f"the loop is bound to the spatial iter var "
                   f"{spatial[id(rv)]}; rfactor takes a loop of the reduction")
    if id(rv) not in reduce:
        raise fail("rfactor", where, "the loop is bound to no reduction iter var of the "
                   "block; rfactor takes a loop of the reduction (or a split of one)")
    if rf.kind != ForKind.SERIAL:
        raise fail("rfactor", where, f"the loop is {rf.kind.name.lower()}; rfactor takes a "
                   "serial loop")
    first = _child_blocks(loops[0])
    if first[0] is not realize:
        raise fail("rfactor", f"loop {loops[0].loop_var.name}", f"block "
                   f"{first[0].block.name_hint} comes before block {name} under the "
                   "outermost loop; rfactor needs the reduction block first there")
    in_reduction = False
    for f in loops:
        v = f.loop_var
        if id(v) in spatial and id(v) in reduce:
            raise fail("rfactor", f"loop {v.name} of block {name}", f"the loop is bound to "
                       f"both spatial iter var {spatial[id(v)]} and reduction iter var "
                       f"{reduce[id(v)]}")
        if id(v) in reduce and not in_reduction:
            in_reduction = True
            if len(_child_blocks(f)) > 1:
                _only_block(f)  # raises, naming the blocks
        elif in_reduction and id(v) not in spatial | reduce and not _is_one(f.extent):
            raise fail("rfactor", f"loop {v.name} of block {name}", "the loop is bound to "
                       "no iter var and runs under a reduction loop")
    _check_invariant_ranges(loops, rf, realize, reduce)


def _check_invariant_ranges(loops: list[For], rf: For, realize: BlockRealize,
                            reduce: dict[int, str]) -> None:
    """Loops that become iter vars (and the buffer's new extent) need ranges free of loops."""
    loop_ids = {id(f.loop_var) for f in loops}
    for f in loops:
        if id(f.loop_var) not in reduce:
            continue
        used = [v for v in used_vars(f.min) + used_vars(f.extent) if id(v) in loop_ids]
        if used:
            raise fail("rfactor", f"loop {f.loop_var.name} of block {realize.block.name_hint}",
                       f"its range depends on loop {used[0].name}")


def _is_one(e: PrimExpr) -> bool:
    return getattr(e, "value", None) == 1


def _factor_axis(factor_axis: Any, buf: Buffer) -> int:
    """``factor_axis`` in ``[0, ndim]`` (negative counts from the end, as in TVM)."""
    ndim = len(buf.shape)
    if not isinstance(factor_axis, int) or isinstance(factor_axis, bool):
        raise fail("rfactor", f"factor_axis {factor_axis!r}", "must be an int")
    if not -ndim - 1 <= factor_axis <= ndim:
        raise fail("rfactor", f"factor_axis {factor_axis}", f"is out of range for buffer "
                   f"{buf.name} of {ndim} dimension(s): it must be in [{-ndim - 1}, {ndim}]")
    return factor_axis + ndim + 1 if factor_axis < 0 else factor_axis


# ------------------------------------------------------------------ the primitive


def rfactor(func: PrimFunc, loop: Var, factor_axis: int = 0) -> tuple[PrimFunc, str]:
    """Factor the reduction of the block under ``loop`` over ``loop`` (see the module doc).

    Returns:
        ``(new_func, name of the rfactor block)``; the write-back block keeps
        the original block's name and loops (but the other reduction loops).
    Raises:
        ScheduleError: the loop does not hold exactly one reduction block, is
        not a serial loop of its reduction, the nest cannot be split in two,
        the reducer is not recognised, or ``factor_axis`` is out of range.
    """
    rf_loop = tree.loop_for(func, loop, "rfactor")
    realize = _only_block(rf_loop)
    block = realize.block
    where = f"block {block.name_hint}"
    _check_reduction_block(block, where)
    loops = tree.loops_above(func, realize)
    _check_loops(loops, rf_loop, realize)
    red = _match_reduction(block, where)
    _check_init(block, where)
    buf = red.store.buffer
    axis = _factor_axis(factor_axis, buf)
    shape = list(buf.shape)
    shape.insert(axis, rf_loop.extent)
    rf_buf = decl_buffer(shape, buf.dtype, _unique_buffer_name(func, f"{buf.name}_rf"),
                         scope=buf.scope)
    rf_name = unique_block_name(func, f"{block.name_hint}_rf")
    rf_nest = _rf_stage(realize, loops, rf_loop, red, rf_buf, axis, rf_name)
    wb = _write_back(realize, loops, rf_loop, red, rf_buf, axis)
    dropped = _dropped_loops(loops, rf_loop, realize)
    nest = _StripLoops(loops, dropped, realize, wb).visit_stmt(loops[0])
    scope = _scope_name(func, loops[0])
    func = tree.replace(func, {loops[0]: SeqStmt.flatten(rf_nest, nest)})
    return _allocate(func, scope, rf_buf), rf_name


def _check_init(block: Block, where: str) -> None:
    """The write-back block runs the init once per output: it may not use reduction iter vars."""
    reduce_ids = {id(iv.var) for iv in block.iter_vars if iv.is_reduce}
    used = [v for v in used_vars(block.init) if id(v) in reduce_ids]
    if used:
        raise fail("rfactor", where, f"the block's init uses the reduction iter var "
                   f"{used[0].name}")


def _unique_buffer_name(func: PrimFunc, base: str) -> str:
    taken = {b.name for b in func.buffer_map.values()}
    for s, _ in tree.walk(func.body):
        if isinstance(s, Block):
            taken |= {b.name for b in s.alloc_buffers}
    name, n = base, 0
    while name in taken:
        n += 1
        name = f"{base}_{n}"
    return name


def _rf_index(indices: Any, axis: int, v: Var, loop: For) -> list[PrimExpr]:
    """The reduced element's indices with the partial's index ``v - min`` at ``axis``."""
    out = list(indices)
    out.insert(axis, v if _is_zero(loop.min) else v - loop.min)
    return out


def _is_zero(e: PrimExpr) -> bool:
    return getattr(e, "value", None) == 0


def _rf_stage(realize: BlockRealize, loops: list[For], rf_loop: For, red: _Reduction,
              rf_buf: Buffer, axis: int, name: str) -> Stmt:
    """The rfactor block inside a copy of all of ``realize``'s loops (fresh loop vars)."""
    by_var = {id(f.loop_var): f for f in loops}
    rf_iv = _iter_of(rf_loop, IterVarType.DataPar)
    loop2iter: dict[int, Var] = {id(rf_loop.loop_var): rf_iv.var}
    ivs, values, vmap = [rf_iv], [rf_loop.loop_var], {}
    for iv, value in zip(realize.block.iter_vars, realize.iter_values):
        if not iv.is_reduce or id(rf_loop.loop_var) not in {id(v) for v in used_vars(value)}:
            ivs.append(iv)
            values.append(value)
            continue
        # split this iter var into one reduction iter var per loop of its binding
        for v in used_vars(value):
            if id(v) in by_var and id(v) not in loop2iter:
                new = _iter_of(by_var[id(v)], IterVarType.CommReduce)
                loop2iter[id(v)] = new.var
                ivs.append(new)
                values.append(v)
        vmap[iv.var] = substitute(value, lambda v: loop2iter.get(id(v)))
    idx = _rf_index(red.store.indices, axis, rf_iv.var, rf_loop)
    body: Stmt = red.update(rf_buf, idx, red.rhs)
    if red.cond is not None:
        body = IfThenElse(red.cond, body)
    block = Block(ivs, name, body=substitute(body, vmap),
                  init=BufferStore(rf_buf, red.identity, idx),
                  annotations=realize.block.annotations)
    stmt: Stmt = BlockRealize(values, realize.predicate, block)
    fresh = {f.loop_var: Var(f.loop_var.name, f.loop_var.dtype) for f in loops}
    for f in reversed(loops):
        stmt = replace(f, loop_var=fresh[f.loop_var], body=stmt)
    return substitute(stmt, fresh)


def _iter_of(loop: For, kind: IterVarType) -> IterVar:
    """A block iter var over ``loop``'s range, named after it."""
    v = loop.loop_var
    return IterVar(Range.from_min_extent(loop.min, loop.extent), Var(f"v_{v.name}", v.dtype),
                   kind)


def _write_back(realize: BlockRealize, loops: list[For], rf_loop: For, red: _Reduction,
                rf_buf: Buffer, axis: int) -> BlockRealize:
    """The block reducing the partials into the buffer, over the spatial iter vars and ``r``."""
    block = realize.block
    rf_iv = _iter_of(rf_loop, IterVarType.CommReduce)
    ivs, values, vmap = [rf_iv], [rf_loop.loop_var], {}
    for iv, value in zip(block.iter_vars, realize.iter_values):
        if iv.is_reduce:
            continue
        fresh = IterVar(iv.dom, Var(iv.var.name, iv.var.dtype), IterVarType.DataPar)
        ivs.append(fresh)
        values.append(value)
        vmap[iv.var] = fresh.var
    out_idx = [substitute(i, vmap) for i in red.store.indices]
    partial = BufferLoad(rf_buf, _rf_index(out_idx, axis, rf_iv.var, rf_loop))
    body = red.update(red.store.buffer, out_idx, partial)
    new = Block(ivs, block.name_hint, body=body, init=substitute(block.init, vmap),
                annotations=block.annotations)
    return BlockRealize(values, _write_back_predicate(realize, loops, rf_loop), new)


def _dropped_loops(loops: list[For], rf_loop: For, realize: BlockRealize) -> set[int]:
    """ids of the loops the write-back block leaves out: reduction loops other than ``r``."""
    _, reduce = _touched(realize)
    return {id(f.loop_var) for f in loops if id(f.loop_var) in reduce and f is not rf_loop}


def _write_back_predicate(realize: BlockRealize, loops: list[For], rf_loop: For) -> PrimExpr:
    """The predicate at the dropped loops' minimum: whether the partial was written at all."""
    dropped = _dropped_loops(loops, rf_loop, realize)
    at_min = {f.loop_var: f.min for f in loops if id(f.loop_var) in dropped}
    pred = substitute(realize.predicate, at_min)
    ana = Analyzer()
    for f in loops:
        if id(f.loop_var) not in dropped:
            ana.bind(f.loop_var, Range.from_min_extent(f.min, f.extent), allow_override=True)
    return ana.simplify(pred)


class _StripLoops(StmtMutator):
    """The original nest with the dropped loops removed and the block replaced."""

    def __init__(self, loops: list[For], dropped: set[int], old: BlockRealize,
                 new: BlockRealize):
        self.loop_ids = {id(f) for f in loops}
        self.dropped, self.old, self.new = dropped, old, new

    def visit_for(self, f: For) -> Stmt:
        if id(f) not in self.loop_ids:
            return f
        body = self.visit_stmt(f.body)
        return body if id(f.loop_var) in self.dropped else replace(f, body=body)

    def visit_block_realize(self, r: BlockRealize) -> Stmt:
        return self.new if r is self.old else r


def _scope_name(func: PrimFunc, stmt: Stmt) -> str | None:
    """The name of the block whose body holds ``stmt``; None for the root block."""
    for s in reversed(tree.above(func, stmt)):
        if isinstance(s, Block):
            return None if s is tree.root_realize(func).block else s.name_hint
    raise ScheduleError("rfactor: internal: the loop nest is under no block")


def _allocate(func: PrimFunc, scope: str | None, buf: Buffer) -> PrimFunc:
    """``func`` with ``buf`` allocated by block ``scope`` (the root block for None)."""
    owner = tree.root_realize(func) if scope is None else tree.find_block(func, scope)
    block = replace(owner.block, alloc_buffers=owner.block.alloc_buffers + (buf,))
    return tree.replace(func, {owner: replace(owner, block=block)})


__all__ = ["KNOWN_REDUCERS", "rfactor"]
