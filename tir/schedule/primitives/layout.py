"""``transform_layout``: store an allocated buffer in a new (for example packed) layout.

Element ``idx`` of the buffer moves to ``index_map(*idx)``; the new shape is
the bound of the mapped indices over the old shape, and every load and store
of the buffer in the function is rewritten (indices simplified). Packing a
matmul operand into ``[N // 16, K, 16]`` is ``cache_read`` of ``B`` then a
``transform_layout`` of the cache with ``lambda k, n: (n // 16, k, n % 16)``.

As TVM's ``layout_transformation.cc``, with two differences:

- Only buffers the function allocates change layout. TVM also rewrites a
  parameter (changing the function's signature); here that is refused with
  the hint to ``cache_read`` / ``cache_write`` it first.
- A map that leaves holes (padding: ``lambda i: (i // 16, i % 16)`` over 20
  elements gives a ``2 x 16`` buffer) is accepted without ``pad_value``: no
  rewritten access reads a hole. What must hold is injectivity (two elements
  never share a place); it is checked by evaluating the map on every index
  when the shape is constant and has at most ``2**20`` elements, and is the
  caller's promise otherwise. ``pad_value`` (fill the holes) is not supported.
"""

from __future__ import annotations

import inspect
from typing import Any, Callable

import numpy as np

from ...analysis.var_use import used_var_ids, used_vars
from ...arith import Analyzer, IntervalSet
from ...arith.int_set import is_neg_inf, is_pos_inf
from ...block import Block
from ...buffer import Buffer
from ...expr import Add, BufferLoad, FloorDiv, FloorMod, IntImm, Max, Min, Mul, PrimExpr, Sub, Var
from ...function import PrimFunc
from ...functor import StmtExprMutator, post_order_visit, substitute
from ...node import replace
from ...op import const
from ...stmt import BufferStore
from .. import analysis, tree
from ..error import fail
from ..index_map import IndexMap
from .cache import indexed_reads

_CHECK_LIMIT = 1 << 20  # elements: larger constant shapes are not checked for injectivity


def transform_layout(func: PrimFunc, block: str, buffer: Any, index_map: Callable,
                     pad_value: Any = None) -> PrimFunc:
    """Store ``buffer`` so that element ``idx`` sits at ``index_map(*idx)``.

    Args:
        block: the block the buffer is named relative to.
        buffer: ``("read", i)`` / ``("write", i)``: the ``i``-th buffer ``block``
            reads / writes; or the buffer's name (or the ``Buffer``).
        index_map: a callable from the old indices to a tuple of new indices.
        pad_value: not supported (a map with holes needs none, see the module doc).
    Raises:
        ScheduleError: the buffer is a parameter, the map sends two elements to
        one place or gives a negative index, or ``pad_value`` is given for a map
        with holes.
    """
    realize = tree.find_block(func, block)
    buf = _resolve(func, realize.block, buffer, block)
    where = f"buffer {buf.name}"
    if id(buf) in analysis.param_buffers(func):
        raise fail("transform_layout", where, "is a parameter of the function, whose layout is "
                   "the caller's; copy it into a buffer of its own first (sch.cache_read for an "
                   "input, sch.cache_write for an output) and transform the cache")
    owner = _allocating_block(func, buf)
    if owner is None:
        raise fail("transform_layout", where, "is not allocated by a block of the function")
    if buf.strides:
        raise fail("transform_layout", where, "has explicit strides; only compact buffers "
                   "change layout")
    old_vars, new_exprs = _apply_map(index_map, buf, where)
    _check_free_vars(func, old_vars, new_exprs, where)
    shape, holes = _new_shape(old_vars, new_exprs, buf, where)
    if holes and pad_value is not None:
        raise fail("transform_layout", where, "pad_value is not supported (the holes the map "
                   "leaves are never read; drop pad_value)")
    new_buf = replace(buf, shape=tuple(shape))
    rewriter = _Rewrite(buf, new_buf, old_vars, new_exprs)
    new_owner = replace(owner, alloc_buffers=tuple(new_buf if b is buf else b
                                                   for b in owner.alloc_buffers))
    func = tree.replace(func, {owner: new_owner})
    return func.with_body(rewriter.visit_stmt(func.body))


def index_map_of(func: PrimFunc, block: str, buffer: Any, index_map: Callable) -> IndexMap:
    """``index_map`` as an ``IndexMap`` over the indices of the buffer it would transform.

    Raises the ``ScheduleError`` ``transform_layout`` would for a buffer that
    cannot be named or a map of the wrong arity or result.
    """
    buf = _resolve(func, tree.find_block(func, block).block, buffer, block)
    return IndexMap(*_apply_map(index_map, buf, f"buffer {buf.name}"))


def buffer_named(func: PrimFunc, name: str) -> Buffer | None:
    """The one buffer of ``func`` called ``name`` (None if there is none or several)."""
    found = [b for b in _all_buffers(func) if b.name == name]
    return found[0] if len(found) == 1 else None


def _resolve(func: PrimFunc, block: Block, buffer: Any, name: str) -> Buffer:
    """The buffer ``buffer`` names: ``("read"|"write", i)``, a name or a ``Buffer``."""
    where = f"block {name}"
    if isinstance(buffer, tuple) and len(buffer) == 2 and buffer[0] in ("read", "write"):
        kind, i = buffer
        bufs = indexed_reads(block) if kind == "read" else analysis.writes(block)
        if not isinstance(i, int) or not 0 <= i < len(bufs):
            names = ", ".join(b.name for b in bufs) or "none"
            raise fail("transform_layout", where, f"{kind} buffer index {i} is out of range: "
                       f"the block {kind}s {len(bufs)} buffer(s) ({names})")
        return bufs[i]
    known = _all_buffers(func)
    if isinstance(buffer, Buffer):
        if any(b is buffer for b in known):
            return buffer
        raise fail("transform_layout", where, f"buffer {buffer.name} is not used by the function")
    if isinstance(buffer, str):
        found = [b for b in known if b.name == buffer]
        if len(found) == 1:
            return found[0]
        names = ", ".join(sorted({b.name for b in known}))
        what = "no buffer" if not found else f"{len(found)} buffers"
        raise fail("transform_layout", where, f"{what} named {buffer!r} (buffers: {names})")
    raise fail("transform_layout", where, "buffer must be ('read', i), ('write', i) or a "
               f"buffer name, got {buffer!r}")


def _all_buffers(func: PrimFunc) -> list[Buffer]:
    seen: dict[int, Buffer] = {id(b): b for b in func.buffer_map.values()}
    for s, _ in tree.walk(func.body):
        if isinstance(s, Block):
            for b in s.alloc_buffers:
                seen.setdefault(id(b), b)
    post_order_visit(func.body, lambda n: seen.setdefault(id(n.buffer), n.buffer)
                     if isinstance(n, (BufferLoad, BufferStore)) else None)
    return list(seen.values())


def _allocating_block(func: PrimFunc, buf: Buffer) -> Block | None:
    for s, _ in tree.walk(func.body):
        if isinstance(s, Block) and any(b is buf for b in s.alloc_buffers):
            return s
    return None


def _apply_map(index_map: Callable, buf: Buffer, where: str) -> tuple[list[Var], list[PrimExpr]]:
    """Placeholder vars for the old indices and the new index expressions in them."""
    if not callable(index_map):
        raise fail("transform_layout", where, f"index_map must be a callable, got {index_map!r}")
    try:
        params = list(inspect.signature(index_map).parameters.values())
    except (TypeError, ValueError):
        params = []
    names = [p.name for p in params]
    varargs = any(p.kind == inspect.Parameter.VAR_POSITIONAL for p in params)
    if params and not varargs and len(params) != buf.ndim:
        raise fail("transform_layout", where, f"index_map takes {len(params)} indices but "
                   f"buffer {buf.name} has {buf.ndim} dimensions {list(buf.shape)}")
    if len(names) != buf.ndim:
        names = [f"i{d}" for d in range(buf.ndim)]
    old_vars = [Var(n, s.dtype) for n, s in zip(names, buf.shape)]
    out = index_map(*old_vars)
    out = list(out) if isinstance(out, (tuple, list)) else [out]
    exprs = []
    for e in out:
        e = const(e, old_vars[0].dtype if old_vars else "int32") if isinstance(e, int) else e
        if not isinstance(e, PrimExpr) or not e.dtype.startswith("int"):
            raise fail("transform_layout", where, f"index_map must return integer indices, "
                       f"got {e!r}")
        exprs.append(e)
    if not exprs:
        raise fail("transform_layout", where, "index_map returned no indices")
    return old_vars, exprs


def _check_free_vars(func: PrimFunc, old_vars: list[Var], exprs: list[PrimExpr],
                     where: str) -> None:
    """The new indices may use the old ones and the function's scalars and shape vars only."""
    allowed = {id(v) for v in old_vars} | {id(p) for p in func.params}
    for b in func.buffer_map.values():
        for dim in b.shape:
            allowed |= used_var_ids(dim)
    for e in exprs:
        bad = [v for v in used_vars(e) if id(v) not in allowed]
        if bad:
            raise fail("transform_layout", where, f"the new index {e} uses {bad[0].name}, which "
                       "is neither an old index nor a parameter of the function")


def _new_shape(old_vars: list[Var], exprs: list[PrimExpr], buf: Buffer, where: str
               ) -> tuple[list[PrimExpr], bool]:
    """The extents of the mapped indices, and whether the new buffer has holes."""
    ana = Analyzer()
    doms = {v: IntervalSet(0, s - 1) for v, s in zip(old_vars, buf.shape)}
    shape = []
    for e in exprs:
        s = ana.int_set(e, doms)
        if is_pos_inf(s.max_value) or is_neg_inf(s.min_value):
            raise fail("transform_layout", where, f"the new index {e} has no bound over the "
                       "buffer's shape")
        if not ana.can_prove(s.min_value >= 0):
            raise fail("transform_layout", where, f"the new index {e} may be negative")
        shape.append(ana.simplify(s.max_value + 1))
    return shape, _check_injective(old_vars, exprs, buf, shape, where)


def _check_injective(old_vars: list[Var], exprs: list[PrimExpr], buf: Buffer,
                     shape: list[PrimExpr], where: str) -> bool:
    """Whether the map leaves holes; raises if two elements land on one place."""
    old = [_int(s) for s in buf.shape]
    new = [_int(s) for s in shape]
    if None in old or None in new or int(np.prod(old)) > _CHECK_LIMIT:
        return False  # unchecked: the caller's promise (see the module doc)
    grids = dict(zip((id(v) for v in old_vars), np.indices(old).reshape(len(old), -1)))
    try:
        coords = [np.broadcast_to(_eval(e, grids), grids[id(old_vars[0])].shape) for e in exprs]
    except _Unsupported:
        return False
    flat = np.ravel_multi_index(coords, new)
    # A mask of the places hit, not np.unique: linear time (unique's hash took 0.8 s on 1M)
    hit = np.zeros(int(np.prod(new)), np.bool_)
    hit[flat] = True
    places = int(np.count_nonzero(hit))
    if places != flat.size:
        raise fail("transform_layout", where, "the index map sends two elements to the same "
                   "place (it is not injective over the buffer's shape)")
    return places != hit.size


class _Unsupported(Exception):
    pass


# How each node kind evaluates on NumPy integer arrays (floor division, as TIR's).
_OPS = {Add: np.add, Sub: np.subtract, Mul: np.multiply, FloorDiv: np.floor_divide,
        FloorMod: np.mod, Min: np.minimum, Max: np.maximum}


def _eval(e: PrimExpr, grids: dict[int, np.ndarray]) -> Any:
    if isinstance(e, Var) and id(e) in grids:
        return grids[id(e)]
    if isinstance(e, IntImm):
        return e.value
    fn = _OPS.get(type(e))
    if fn is None:
        raise _Unsupported(type(e).__name__)
    return fn(_eval(e.a, grids), _eval(e.b, grids))


def _int(e: PrimExpr) -> int | None:
    return e.value if isinstance(e, IntImm) else None


class _Rewrite(StmtExprMutator):
    """Every load and store of ``old`` goes to ``new`` at the mapped, simplified indices."""

    def __init__(self, old: Buffer, new: Buffer, old_vars: list[Var], exprs: list[PrimExpr]):
        self.old, self.new, self.old_vars, self.exprs = old, new, old_vars, exprs
        self.analyzer = Analyzer()

    def _indices(self, indices: tuple) -> list[PrimExpr]:
        vmap = dict(zip(self.old_vars, indices))
        return [self.analyzer.simplify(substitute(e, vmap)) for e in self.exprs]

    def visit_buffer_load(self, e: BufferLoad) -> Any:
        e = self.generic_visit(e)
        if e.buffer is not self.old:
            return e
        return BufferLoad(self.new, self._indices(e.indices), e.predicate)

    def visit_buffer_store(self, s: BufferStore) -> Any:
        s = self.generic_visit(s)
        if s.buffer is not self.old:
            return s
        return BufferStore(self.new, s.value, self._indices(s.indices), s.predicate)
