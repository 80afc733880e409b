"""Lowering scheduled blocks to plain loops (TVM's names), run first by ``codegen.build``.

In order: ``LowerInitBlock`` (reduction inits become guarded statements),
``PlanAndUpdateBufferAllocationLocation`` (buffers move down to where they are
used), ``CompactBufferAllocation`` (they shrink to the part used there),
``LowerOpaqueBlock`` (blocks become their bodies, allocations ``Allocate``s).
The analyses they share are in ``analysis.py``.
"""
# ruff: noqa: F401  (this file is the package's list of exports)

from .analysis import compact_regions, detect_buffer_access_lca, has_blocks
from .compact_buffer_allocation import CompactBufferAllocation
from .lower_init_block import LowerInitBlock
from .lower_opaque_block import LowerOpaqueBlock
from .plan_buffer_allocation import PlanAndUpdateBufferAllocationLocation


def lower_blocks_passes(likely_predicate: bool = False) -> list:
    """The four passes, in the order that turns a scheduled function into plain loops.

    ``likely_predicate`` is ``LowerOpaqueBlock``'s: a block predicate becomes
    ``if likely(...)`` for ``LoopPartition`` (``codegen.build``'s pipeline asks for it).
    """
    return [LowerInitBlock(), PlanAndUpdateBufferAllocationLocation(),
            CompactBufferAllocation(), LowerOpaqueBlock(likely_predicate=likely_predicate)]
