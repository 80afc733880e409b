"""Reductions outside any row group (``sum(A)``, a column sum): vector partials, parallel chunks.

A block whose innermost loop is a reduction gets its partial results in
vector lanes: the loop is split by the lanes and ``rfactor`` over the inner
part gives an rfactor block whose lanes loop is spatial, vectorized (the
partials are summed once, after the loop). When the spatial loops are too few
to keep the cores busy and the reduction is long, the reduction is first
split into ``chunks`` parts by another ``rfactor``, whose chunk loop runs in
parallel; each chunk's lane partials lie in one contiguous row::

    B[i] = sum(A[i, k])            B_rf[c, i, l] = sum over kc(A[i, c*m + kc*L + l])   parallel c
                          ->       B[i] = sum over c, l (B_rf[c, i, l])

The chunk count is fixed by the shape (not the thread count), so the rounding
of a float sum is the same on every machine that runs this schedule.
"""

from __future__ import annotations

import math

from tir.schedule import Schedule

from ..block_kinds import BlockKind
from ..sampler import Sampler
from ..target_info import TargetInfo
from .elementwise import PARALLEL_MIN_ELEMENTS, parallel_outer

#: Chunk counts a long reduction may be split into for threads (the sampler's choices).
CHUNK_COUNTS = (64, 32, 16)


def schedule_reduction(sch: Schedule, kind: BlockKind, info: TargetInfo, sampler: Sampler,
                       elem_bytes: int) -> str | None:
    """Vectorize a reduction's innermost loop and run it on the cores (see the module doc)."""
    block = sch.get_block(kind.name)
    ivs = sch.get(block).iter_vars
    loops = sch.get_loops(block)
    if not loops or not ivs[-1].is_reduce or len(ivs) != len(loops):
        spatial = [lp for lp, iv in zip(loops, ivs) if not iv.is_reduce]
        parallel_outer(sch, spatial, kind, info, sampler)
        return None
    lanes = info.lanes(elem_bytes)
    extent = kind.extents[-1]
    spatial_size = math.prod(e for e, iv in zip(kind.extents, ivs) if not iv.is_reduce)
    chunks = _chunks(extent, lanes, spatial_size, info, sampler, sch)
    if chunks:
        outer, _ = sch.split(loops[-1], [chunks, None])
        chunked = sch.rfactor(outer, 0)
        loops = sch.get_loops(chunked)  # the block's loops, the chunk loop now spatial
        sch.parallel(loops[-2])
        extent //= chunks
    else:
        spatial = [lp for lp, iv in zip(loops, ivs) if not iv.is_reduce]
        parallel_outer(sch, spatial, kind, info, sampler)
    if extent % lanes == 0 and extent > lanes:
        _, inner = sch.split(loops[-1], [None, lanes])
        partials = sch.rfactor(inner, -1)  # the lanes last: one contiguous vector per row
        sch.vectorize(sch.get_loops(partials)[-1])
    return None


def _chunks(extent: int, lanes: int, spatial_size: int, info: TargetInfo, sampler: Sampler,
            sch: Schedule) -> int | None:
    """How many parallel chunks the reduction loop is split into, or None (no split)."""
    if info.cores <= 1 or spatial_size >= info.cores:
        return None
    fits = [c for c in CHUNK_COUNTS if extent % (c * lanes) == 0 and extent // c > lanes]
    if not fits:
        return None
    worth = extent * spatial_size >= PARALLEL_MIN_ELEMENTS
    return sampler.choose(sch, [0, *fits], 1 if worth else 0) or None
