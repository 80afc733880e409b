"""``CompactBufferAllocation``: shrink a block-allocated buffer to the part its uses touch.

After ``PlanAndUpdateBufferAllocationLocation`` a buffer is allocated at the
scope of its uses; under that scope a use often touches only a tile of it
(``C_local[vi, vj]`` with ``vi = io * 4 + ii`` inside the ``io`` loop touches
rows ``io * 4 .. io * 4 + 3``). ``analysis.compact_regions`` bounds the
touched box, relaxing the loops below the allocation over their ranges (and
narrowing by block predicates); this pass gives the buffer the box's constant
shape and rebases every index by the box's min (``C_local[vi - io * 4, ...]``),
as TVM's ``tir.CompactBufferAllocation`` does.

A dimension that cannot be bounded by a constant keeps its extent, and a
buffer whose region is not smaller, or whose data var escapes into a call,
is kept as it is. Functions without blocks come back unchanged.
"""

from __future__ import annotations

from tir import op
from tir.block import Block
from tir.buffer import Buffer
from tir.expr import BufferLoad
from tir.function import PrimFunc
from tir.functor import StmtExprMutator, deep_recursion
from tir.node import replace
from tir.stmt import BufferStore

from ..pass_base import PrimFuncPass, prim_func_pass
from .analysis import compact_regions, has_blocks


class BufferCompactor(StmtExprMutator):
    """Gives the buffers of ``regions`` (id(data var) -> [(min, extent)]) their new shape."""

    def __init__(self, regions: dict):
        self.regions = regions
        self.compacted: dict[int, Buffer] = {}

    def new_buffer(self, buf: Buffer) -> Buffer:
        key = id(buf.data)
        if key not in self.compacted:
            shape = [extent for _, extent in self.regions[key]]
            self.compacted[key] = replace(buf, shape=shape)
        return self.compacted[key]

    def rebase(self, buf: Buffer, indices: tuple) -> tuple:
        return tuple(op.sub(i, lo) for i, (lo, _) in zip(indices, self.regions[id(buf.data)]))

    def visit_buffer_load(self, e: BufferLoad) -> BufferLoad:
        e = self.generic_visit(e)
        if id(e.buffer.data) not in self.regions:
            return e
        return replace(e, buffer=self.new_buffer(e.buffer),
                       indices=self.rebase(e.buffer, e.indices))

    def visit_buffer_store(self, s: BufferStore) -> BufferStore:
        s = self.generic_visit(s)
        if id(s.buffer.data) not in self.regions:
            return s
        return replace(s, buffer=self.new_buffer(s.buffer),
                       indices=self.rebase(s.buffer, s.indices))

    def visit_block(self, block: Block) -> Block:
        block = self.generic_visit(block)
        if not any(id(b.data) in self.regions for b in block.alloc_buffers):
            return block
        buffers = tuple(self.new_buffer(b) if id(b.data) in self.regions else b
                        for b in block.alloc_buffers)
        return replace(block, alloc_buffers=buffers)


def compact_buffer_allocation(func: PrimFunc) -> PrimFunc:
    """``func`` with each block-allocated buffer shrunk to the region its uses touch."""
    regions = compact_regions(func)
    if not regions:
        return func
    with deep_recursion():
        return func.with_body(BufferCompactor(regions)(func.body))


def CompactBufferAllocation() -> PrimFuncPass:
    """The ``tir.CompactBufferAllocation`` pass (see the module docstring)."""

    def transform_function(func, mod, ctx):
        return compact_buffer_allocation(func) if has_blocks(func) else func

    return prim_func_pass(transform_function, opt_level=0, name="tir.CompactBufferAllocation")
