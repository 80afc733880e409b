"""What the block-lowering passes need to know: where buffers are used, and which part.

Two analyses, read-only (the rewrites are in the pass modules):

- ``detect_buffer_access_lca``: for each buffer a block allocates, the lowest
  ``For`` or ``Block`` containing all its uses (TVM's ``DetectBufferAccessLCA``).
- ``compact_regions``: for each buffer a block allocates, the box of indices
  its uses touch below that block, as ``(min, extent)`` per dimension with
  constant extents (the region TVM's ``CompactBufferAllocation`` shrinks to).

Scopes (``For`` and ``Block`` statements) are numbered in pre-order, the order
in which a ``StmtExprVisitor`` or ``StmtExprMutator`` reaches them. A rewrite
that numbers them the same way (``ScopeNumbering``) finds the scope an
analysis named, even when one statement object appears twice in the tree.
"""

from __future__ import annotations

from typing import Any

from tir import dtype as dt
from tir import op
from tir.analysis.var_use import used_var_ids, used_vars, uses_only
from tir.arith import Analyzer, estimate_region_upper_bound
from tir.arith.int_set import is_neg_inf, is_pos_inf
from tir.block import Block, BlockRealize
from tir.buffer import Buffer
from tir.expr import Broadcast, BufferLoad, IntImm, PrimExpr, Ramp, Var
from tir.function import PrimFunc
from tir.functor import StmtExprVisitor, StmtVisitor, deep_recursion, substitute
from tir.range import Range
from tir.stmt import BufferStore, For
from tir.structural import structural_equal


class _BlockFinder(StmtVisitor):
    """Stops at the first block (statements only: cheap on block-free functions)."""

    def __init__(self) -> None:
        self.found = False

    def visit_block_realize(self, s: BlockRealize) -> None:
        self.found = True

    def visit_stmt(self, stmt: Any) -> Any:
        if not self.found:
            return super().visit_stmt(stmt)
        return None


def has_blocks(func: PrimFunc) -> bool:
    """Whether ``func`` holds a ``BlockRealize`` (the passes leave other functions alone)."""
    if isinstance(func.body, BlockRealize):
        return True
    finder = _BlockFinder()
    with deep_recursion():
        finder.visit_stmt(func.body)
    return finder.found


class ScopeNumbering:
    """Numbers ``For``/``Block`` scopes in pre-order; mix into a visitor or mutator."""

    next_scope = 0

    def enter_scope(self) -> int:
        sid = self.next_scope
        self.next_scope = sid + 1
        return sid


# ---------------------------------------------------------------- where buffers are used


_UNLIMITED = 1 << 30  # no reduction above: uses stay where they are


class _LCADetector(ScopeNumbering, StmtExprVisitor):
    """Records, for each allocated buffer, the scope path of every use."""

    def __init__(self) -> None:
        self.stack: list[int] = []  # scope ids, outer first
        self.ceiling: list[int] = []  # how deep uses may sit, per enclosing block
        self.loop_depth: dict[int, int] = {}  # id(loop var) -> its index in the stack
        self.allocated: dict[int, Buffer] = {}  # id(data var) -> buffer, in allocation order
        self.home: dict[int, int] = {}  # id(data var) -> depth of the block allocating it
        self.lca: dict[int, tuple | None] = {}

    def visit_for(self, s: For) -> None:
        self.stack.append(self.enter_scope())
        self.loop_depth[id(s.loop_var)] = len(self.stack) - 1
        super().generic_visit(s)
        del self.loop_depth[id(s.loop_var)]
        self.stack.pop()

    def visit_block_realize(self, s: BlockRealize) -> None:
        for value in s.iter_values:
            self.visit_expr(value)
        self.visit_expr(s.predicate)
        # A value a reduction block reads may come from an earlier iteration of the
        # loops its reduce iter vars run over: its buffers must live across them.
        depth = self.ceiling[-1] if self.ceiling else _UNLIMITED
        for iv, value in zip(s.block.iter_vars, s.iter_values):
            if iv.is_reduce:
                depth = min([depth] + self._loops_in(value))
        self.ceiling.append(depth)
        self.visit_stmt(s.block)
        self.ceiling.pop()

    def _loops_in(self, e: PrimExpr) -> list[int]:
        return [self.loop_depth[id(v)] for v in used_vars(e) if id(v) in self.loop_depth]

    def visit_block(self, s: Block) -> None:
        self.stack.append(self.enter_scope())
        for buf in s.alloc_buffers:
            self.allocated.setdefault(id(buf.data), buf)
            self.home.setdefault(id(buf.data), len(self.stack))
        super().generic_visit(s)
        self.stack.pop()

    def visit_buffer_load(self, e: BufferLoad) -> None:
        self.use(e.buffer.data)
        super().generic_visit(e)

    def visit_buffer_store(self, s: BufferStore) -> None:
        self.use(s.buffer.data)
        super().generic_visit(s)

    def visit_var(self, v: Var) -> None:  # the data var passed on as a handle
        self.use(v)

    def use(self, data: Var) -> None:
        if id(data) not in self.allocated:
            return
        path = tuple(self.stack)
        if self.ceiling and self.ceiling[-1] < len(path):
            # never above the block that allocates it (a parallel loop there would share it)
            path = path[:max(self.ceiling[-1], self.home[id(data)])]
        old = self.lca.get(id(data))
        self.lca[id(data)] = path if old is None else _common_prefix(old, path)


def _common_prefix(a: tuple, b: tuple) -> tuple:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return a[:n]


def detect_buffer_access_lca(func: PrimFunc) -> list[tuple[Buffer, int | None]]:
    """``(buffer, scope id)`` for each buffer a block allocates, in allocation order.

    The scope is the lowest ``For`` or ``Block`` (numbered as ``ScopeNumbering``
    does) containing every use of the buffer, raised above the loops that a
    reduction block using it reduces over; None when the buffer is never used.
    """
    detector = _LCADetector()
    with deep_recursion():
        detector.visit_stmt(func.body)
    out = []
    for key, buf in detector.allocated.items():
        path = detector.lca.get(key)
        out.append((buf, path[-1] if path else None))
    return out


# ---------------------------------------------------------------- which part is used


class _Use:
    """One access: indices in loop vars, the loops and predicates above it."""

    def __init__(self, indices: tuple, loops: tuple, predicates: tuple) -> None:
        self.indices = indices
        self.loops = loops
        self.predicates = predicates


class _Allocation:
    """A buffer a block allocates and where: the loops and predicates above that block."""

    def __init__(self, buf: Buffer, loops: int, predicates: int) -> None:
        self.buf = buf
        self.loops = loops
        self.predicates = predicates
        self.uses: list[_Use] = []
        self.opaque = False  # the data var escapes (a call argument): the layout must stay


class _UseCollector(StmtExprVisitor):
    """Collects every access to block-allocated buffers, iter vars replaced by their values."""

    def __init__(self) -> None:
        self.vmap: dict[int, PrimExpr] = {}  # block iter var -> its value in loop vars
        self.loops: list[tuple[Var, Range]] = []
        self.predicates: list[PrimExpr] = []
        self.allocations: dict[int, _Allocation] = {}  # id(data var) -> allocation

    def visit_for(self, s: For) -> None:
        self.visit_expr(s.min)
        self.visit_expr(s.extent)
        self.loops.append((s.loop_var, Range.from_min_extent(self.sub(s.min), self.sub(s.extent))))
        self.visit_stmt(s.body)
        self.loops.pop()

    def visit_block_realize(self, s: BlockRealize) -> None:
        for value in s.iter_values:
            self.visit_expr(value)
        self.visit_expr(s.predicate)
        for iv, value in zip(s.block.iter_vars, s.iter_values):
            self.vmap[id(iv.var)] = self.sub(value)
        pred = s.predicate
        if not (isinstance(pred, IntImm) and pred.value):
            self.predicates.append(self.sub(pred))
        for buf in s.block.alloc_buffers:
            self.allocations[id(buf.data)] = _Allocation(buf, len(self.loops),
                                                         len(self.predicates))
        self.visit_stmt(s.block)
        if not (isinstance(pred, IntImm) and pred.value):
            self.predicates.pop()

    def sub(self, e: PrimExpr) -> PrimExpr:
        return substitute(e, lambda v: self.vmap.get(id(v))) if self.vmap else e

    def visit_buffer_load(self, e: BufferLoad) -> None:
        self.use(e.buffer, e.indices)
        super().generic_visit(e)

    def visit_buffer_store(self, s: BufferStore) -> None:
        self.use(s.buffer, s.indices)
        super().generic_visit(s)

    def visit_var(self, v: Var) -> None:
        alloc = self.allocations.get(id(v))
        if alloc is not None:
            alloc.opaque = True

    def use(self, buf: Buffer, indices: tuple) -> None:
        alloc = self.allocations.get(id(buf.data))
        if alloc is None:
            return
        if not _plain_view(buf, alloc.buf) or len(indices) != len(buf.shape):
            alloc.opaque = True  # viewed through another shape: leave the layout alone
            return
        alloc.uses.append(_Use(tuple(self.sub(i) for i in indices), tuple(self.loops),
                               tuple(self.predicates)))


def _plain_view(buf: Buffer, allocated: Buffer) -> bool:
    """``buf`` reads the allocation with its own shape, dense, from its start."""
    if buf.strides or allocated.strides or len(buf.shape) != len(allocated.shape):
        return False
    if not all(_same(a, b) for a, b in zip(buf.shape, allocated.shape)):
        return False
    return all(isinstance(b.elem_offset, IntImm) and b.elem_offset.value == 0
               for b in (buf, allocated))


def _same(a: PrimExpr, b: PrimExpr) -> bool:
    return a is b or structural_equal(a, b)


def compact_regions(func: PrimFunc) -> dict[int, list[tuple[PrimExpr, PrimExpr]]]:
    """``id(data var) -> [(min, extent)]`` for the block-allocated buffers worth shrinking.

    Each ``min`` uses only vars bound above the allocating block (its loops,
    the function's params and shapes), each extent is a constant, and every use
    of the buffer under the block indexes inside ``[min, min + extent)``.
    A dimension that cannot be bounded keeps ``(0, shape)``. Buffers whose
    region is not smaller than their shape are left out.
    """
    collector = _UseCollector()
    with deep_recursion():
        collector.visit_stmt(func.body)
    outer_ok = _function_vars(func)
    out = {}
    for key, alloc in collector.allocations.items():
        if alloc.opaque or not alloc.uses:
            continue
        region = _region(alloc, outer_ok)
        if region is not None and _smaller(region, alloc.buf.shape):
            out[key] = region
    return out


def _function_vars(func: PrimFunc) -> set[int]:
    """ids of the vars a function defines for its whole body: params, buffer shapes."""
    found: set[int] = {id(p) for p in func.params}
    for buf in func.buffer_map.values():
        found |= used_var_ids((*buf.shape, *buf.strides, buf.elem_offset))
    return found


def _region(alloc: _Allocation, function_vars: set[int]) -> list | None:
    """The union of the uses' boxes, one ``(min, extent)`` per dimension."""
    outer = alloc.uses[0].loops[:alloc.loops]
    allowed = function_vars | {id(v) for v, _ in outer}
    ana = Analyzer()
    for v, rng in outer:
        ana.bind(v, rng)
    boxes = [_use_box(use, alloc) for use in alloc.uses]
    region = []
    for d, extent in enumerate(alloc.buf.shape):
        dim = _union_dim(ana, [box[d] for box in boxes], allowed)
        region.append(dim if dim is not None else (op.const(0, extent.dtype), extent))
    return region


def _use_box(use: _Use, alloc: _Allocation) -> list:
    """The intervals one use touches, its loops below the allocation relaxed."""
    inner = dict(use.loops[alloc.loops:])
    predicate = op.const(True, "bool")
    for p in use.predicates[alloc.predicates:]:
        predicate = op.logical_and(predicate, p)
    region = [_index_range(i) for i in use.indices]
    if any(r is None for r in region):
        return [None] * len(region)
    try:
        return estimate_region_upper_bound(region, inner, predicate)
    except (TypeError, ValueError):  # vector indices and the like: no bound
        return [None] * len(region)


def _index_range(index) -> Range | None:
    """The elements an index covers: a scalar's one, a constant-stride Ramp's span (a
    tensorized block loads whole vectors); None for other vector indices."""
    if isinstance(index, Broadcast):
        index = index.value
    if not dt.DataType(index.dtype).is_vector:
        return Range.from_min_extent(index, 1)
    if isinstance(index, Ramp) and isinstance(index.stride, IntImm) \
            and isinstance(index.lanes, int):
        span = index.stride.value * (index.lanes - 1)
        first = index.base if span >= 0 else index.base + span
        return Range.from_min_extent(first, abs(span) + 1)
    return None


def _union_dim(ana: Analyzer, sets: list, allowed: set[int]) -> tuple | None:
    """``(min, constant extent)`` covering every set, in vars from ``allowed`` only."""
    lows, highs = [], []
    for s in sets:
        if s is None or is_neg_inf(s.min_value) or is_pos_inf(s.max_value):
            return None
        _add_unique(lows, s.min_value)
        _add_unique(highs, s.max_value)
    lo, hi = lows[0], highs[0]
    for e in lows[1:]:
        lo = op.min(lo, e)
    for e in highs[1:]:
        hi = op.max(hi, e)
    lo, hi = ana.simplify(lo), ana.simplify(hi)
    if not (uses_only(lo, allowed) and uses_only(hi, allowed)):
        return None
    extent = ana.simplify(op.add(op.sub(hi, lo), 1))
    if not isinstance(extent, IntImm):
        bound = ana.const_int_bound(extent).max_value
        if not isinstance(bound, int) or abs(bound) >= 2**31:
            return None
        extent = op.const(bound, extent.dtype)
    if extent.value < 1:
        return None
    return lo, extent


def _add_unique(items: list, e: PrimExpr) -> None:
    if not any(structural_equal(e, x) for x in items):
        items.append(e)


def _smaller(region: list, shape: tuple) -> bool:
    """The region holds fewer elements than ``shape``: each dimension kept or made constant,
    and the product smaller (a constant extent counts as smaller than a symbolic one)."""
    new_size, old_size, made_constant = 1, 1, False
    for (_, extent), old in zip(region, shape):
        if extent is old:  # a dimension left as it was
            continue
        if not isinstance(extent, IntImm):
            return False
        new_size *= extent.value
        if isinstance(old, IntImm):
            old_size *= old.value
        else:
            made_constant = True
    return made_constant or new_size < old_size
