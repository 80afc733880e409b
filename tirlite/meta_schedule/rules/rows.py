"""Row-wise stages (softmax, layernorm): everything a row needs, computed in the row loop.

A *row group* is an output stage and the reductions and elementwise stages
that feed it over the same leading (row) axis. The output's row loop runs in
parallel and its inner loop is vectorized; every producer of the group moves
into that row loop (``compute_at``), so each intermediate shrinks to one row
that stays in the L1 cache, and is vectorized there: an elementwise stage by
splitting its inner loop by the lanes, a reduction by ``rfactor`` over a
lanes-wide split (vector partial results, summed once per row).

A reduction outside any group keeps its loops; its spatial loops run in
parallel when large.
"""

from __future__ import annotations

from typing import Any

from tir.schedule import Schedule

from ..block_kinds import BlockKind
from ..sampler import Sampler
from ..target_info import TargetInfo
from .elementwise import parallel_outer


def schedule_row_group(sch: Schedule, output: BlockKind, members: list[BlockKind],
                       info: TargetInfo, sampler: Sampler, elem_bytes: int) -> str | None:
    """Schedule ``output`` and move ``members`` (its producers, program order) into its row loop."""
    lanes = info.lanes(elem_bytes)
    out_block = sch.get_block(output.name)
    loops = sch.get_loops(out_block)
    if len(loops) < 2:
        return "its output has one loop"
    row = loops[0]
    _vectorize_inner(sch, loops[-1], output.extents[-1], lanes, sampler)
    parallel_outer(sch, [row], output, info, sampler)
    for kind in reversed(members):
        sch.compute_at(sch.get_block(kind.name), row)
    for kind in members:
        block = sch.get_block(kind.name)
        inner = sch.get_loops(block)[-1]
        if kind.kind == "reduction":
            _vectorize_reduction(sch, block, inner, kind.extents[-1], lanes)
        else:
            _vectorize_inner(sch, inner, kind.extents[-1], lanes, sampler)
    return None


def _vectorize_inner(sch: Schedule, loop: Any, extent: int, lanes: int, sampler: Sampler) -> None:
    widths = [w for w in (lanes, 2 * lanes, 4 * lanes) if extent % w == 0 and w < extent]
    if widths:
        loop = sch.split(loop, [None, sampler.choose(sch, widths, len(widths) - 1)])[1]
    sch.vectorize(loop)


def _vectorize_reduction(sch: Schedule, block: Any, loop: Any, extent: int, lanes: int) -> None:
    """``rfactor`` over a lanes-wide split: partial results in one vector, summed at the end."""
    if extent % lanes or extent == lanes:
        return
    _, inner = sch.split(loop, [None, lanes])
    rf = sch.rfactor(inner, 0)
    sch.vectorize(sch.get_loops(rf)[-1])  # under the reduction loop: one vector of partials


def schedule_reduction(sch: Schedule, kind: BlockKind, info: TargetInfo, sampler: Sampler,
                       elem_bytes: int) -> str | None:
    """A reduction outside any row group: its spatial loops in parallel."""
    block = sch.get_block(kind.name)
    ivs = sch.get(block).iter_vars
    loops = sch.get_loops(block)
    spatial = [lp for lp, iv in zip(loops, ivs) if not iv.is_reduce]
    parallel_outer(sch, spatial, kind, info, sampler)
    return None
