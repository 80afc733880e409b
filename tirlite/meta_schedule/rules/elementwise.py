"""Elementwise and broadcast stages: the innermost loop vectorized, the outer ones over the cores.

The innermost loop is split by a multiple of the vector lanes that divides
it (so no guard lands in the vector loop) and vectorized; a loop whose extent
no such multiple divides is vectorized whole, and the vectorizer predicates
its tail. The loops above are fused and run in parallel when the stage is
large enough to pay for a launch.
"""

from __future__ import annotations

from tir.schedule import Schedule

from ..block_kinds import BlockKind
from ..sampler import Sampler
from ..target_info import TargetInfo

#: Elements below which a parallel launch (tens of microseconds today) costs more than it saves.
PARALLEL_MIN_ELEMENTS = 1 << 18


def schedule_elementwise(sch: Schedule, kind: BlockKind, info: TargetInfo, sampler: Sampler,
                         elem_bytes: int) -> str | None:
    """Vectorize and parallelize a spatial block; returns why not when it cannot."""
    if not kind.extents:
        return "it has no loops"
    block = sch.get_block(kind.name)
    loops = sch.get_loops(block)
    lanes = info.lanes(elem_bytes)
    last = kind.extents[-1]
    widths = [w for w in (lanes, 2 * lanes, 4 * lanes) if last % w == 0 and w < last]
    if widths:
        width = sampler.choose(sch, widths, len(widths) - 1)
        outer_last, inner = sch.split(loops[-1], [None, width])
        outer = list(loops[:-1]) + [outer_last]
    else:
        inner, outer = loops[-1], list(loops[:-1])
    sch.vectorize(inner)
    parallel_outer(sch, outer, kind, info, sampler)
    return None


def parallel_outer(sch: Schedule, outer: list, kind: BlockKind, info: TargetInfo,
                   sampler: Sampler) -> None:
    """Fuse ``outer`` and run it in parallel, if the sampler (by default: the size) says so.

    With one thread (``TIRLITE_NUM_THREADS=1``, or a target that is not this
    machine) there is no choice to make: a parallel loop would only add a launch.
    """
    if not outer or info.cores <= 1:
        return
    size = 1
    for e in kind.extents:
        size *= e
    default = 1 if info.cores > 1 and size >= PARALLEL_MIN_ELEMENTS else 0
    if sampler.choose(sch, [0, 1], default):
        sch.parallel(sch.fuse(*outer) if len(outer) > 1 else outer[0])
