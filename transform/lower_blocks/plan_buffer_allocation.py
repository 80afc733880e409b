"""``PlanAndUpdateBufferAllocationLocation``: allocate each buffer where it is used.

``te.create_prim_func`` allocates every intermediate in the root block. This
pass moves each block-allocated buffer down to the lowest ``For`` or ``Block``
that contains all its uses (``analysis.detect_buffer_access_lca``), as TVM's
pass does:

- a ``Block``: the buffer joins its ``alloc_buffers``;
- a ``For``: the loop's body is wrapped in a new block without iter vars,
  ``BlockRealize([], True, Block([], "alloc", alloc_buffers=[...], body=body))``,
  so the buffer is allocated per iteration of that loop (after
  ``LowerOpaqueBlock``: an ``Allocate`` inside the loop, which LLVM can keep
  in registers, and which each thread of a parallel loop gets for itself).

A buffer used by a reduction block stays above the loops that block reduces
over (its value carries from one iteration to the next). A buffer never used
is dropped. Functions without blocks come back unchanged (the same object).
"""

from __future__ import annotations

from tir.block import Block, BlockRealize
from tir.function import PrimFunc
from tir.functor import StmtMutator, deep_recursion
from tir.node import replace
from tir.stmt import For

from ..pass_base import PrimFuncPass, prim_func_pass
from .analysis import ScopeNumbering, detect_buffer_access_lca, has_blocks

#: The name of the blocks this pass creates to hold allocations under a loop.
ALLOC_BLOCK_NAME = "alloc"


class BufferAllocationLocator(ScopeNumbering, StmtMutator):
    """Puts each buffer of ``plan`` (scope id -> buffers) at its scope."""

    def __init__(self, plan: dict[int, list]):
        self.plan = plan

    def visit_for(self, loop: For) -> For:
        sid = self.enter_scope()
        loop = self.generic_visit(loop)
        buffers = self.plan.get(sid)
        if not buffers:
            return loop
        holder = Block([], ALLOC_BLOCK_NAME, alloc_buffers=buffers, body=loop.body)
        return replace(loop, body=BlockRealize([], True, holder))

    def visit_block(self, block: Block) -> Block:
        sid = self.enter_scope()
        block = self.generic_visit(block)
        buffers = tuple(self.plan.get(sid, ()))
        if len(buffers) == len(block.alloc_buffers) and all(
                a is b for a, b in zip(buffers, block.alloc_buffers)):
            return block
        return replace(block, alloc_buffers=buffers)


def plan_buffer_allocation(func: PrimFunc) -> PrimFunc:
    """``func`` with each block-allocated buffer moved to the lowest scope of its uses."""
    plan: dict[int, list] = {}
    for buf, sid in detect_buffer_access_lca(func):
        if sid is not None:  # never used: dropped
            plan.setdefault(sid, []).append(buf)
    with deep_recursion():
        return func.with_body(BufferAllocationLocator(plan)(func.body))


def PlanAndUpdateBufferAllocationLocation() -> PrimFuncPass:
    """The ``tir.PlanAndUpdateBufferAllocationLocation`` pass (see the module docstring)."""

    def transform_function(func, mod, ctx):
        return plan_buffer_allocation(func) if has_blocks(func) else func

    return prim_func_pass(transform_function, opt_level=0,
                          name="tir.PlanAndUpdateBufferAllocationLocation")
