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

from tir.analysis.var_use import used_vars
from tir.schedule import Schedule, tree

from ..block_kinds import BlockKind
from ..sampler import Sampler
from ..target_info import TargetInfo
from .elementwise import parallel_outer


def schedule_row_group(sch: Schedule, output: BlockKind, members: list[BlockKind],
                       info: TargetInfo, sampler: Sampler, elem_bytes: int) -> str | None:
    """Schedule ``output`` and move ``members`` (its producers, program order) into its row loop."""
    lanes = info.lanes(elem_bytes)
    # rfactor first, while each reduction has its loop nest to itself
    names: list[tuple[str, str]] = []  # (block, "rf" | "reduction" | "elementwise")
    for kind in members:
        if kind.kind == "reduction" and kind.extents[-1] % lanes == 0 \
                and kind.extents[-1] > lanes:
            block = sch.get_block(kind.name)
            _, inner = sch.split(sch.get_loops(block)[-1], [None, lanes])
            names.append((sch.rfactor(inner, 0).name, "rf"))
        names.append((kind.name, kind.kind))
    out_block = sch.get_block(output.name)
    loops = sch.get_loops(out_block)
    if len(loops) < 2:
        return "its output has one loop"
    row = loops[0]
    _vectorize_inner(sch, loops[-1], output.extents[-1], lanes, sampler)
    parallel_outer(sch, [row], output, info, sampler)
    for name, _ in reversed(names):
        sch.compute_at(sch.get_block(name), row)
    for name, role in names:
        block = sch.get_block(name)
        if role == "rf":
            _vectorize_partials(sch, block)
        elif role == "elementwise":
            inner = sch.get_loops(block)[-1]
            _vectorize_inner(sch, inner, tree.loops_above(
                sch.func, tree.find_block(sch.func, name))[-1].extent.value, lanes, sampler)
    return None


def _vectorize_partials(sch: Schedule, block: Any) -> None:
    """The rf block's lanes loop (bound to its new spatial iter var) innermost, vectorized."""
    realize = tree.find_block(sch.func, block.name)
    loops = sch.get_loops(block)[1:]  # under the row loop
    spatial = {id(v) for iv, val in zip(realize.block.iter_vars, realize.iter_values)
               if not iv.is_reduce for v in used_vars(val)}
    lane_loops = [lp for lp in loops if id(lp.var) in spatial]
    if len(lane_loops) != 1:
        return
    others = [lp for lp in loops if lp is not lane_loops[0]]
    if others:
        sch.reorder(*others, lane_loops[0])
    sch.vectorize(lane_loops[0])


def _vectorize_inner(sch: Schedule, loop: Any, extent: int, lanes: int, sampler: Sampler) -> None:
    widths = [w for w in (lanes, 2 * lanes, 4 * lanes) if extent % w == 0 and w < extent]
    if widths:
        loop = sch.split(loop, [None, sampler.choose(sch, widths, len(widths) - 1)])[1]
    sch.vectorize(loop)
