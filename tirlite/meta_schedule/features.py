"""What the cost model sees of a candidate: numbers read off its scheduled loop nests.

For each block the loops above it say how it will run once lowered: how many
iterations, how many lanes a vectorized loop gives, how much straight-line
code unrolling makes, how many iterations run in parallel, how long the
innermost serial loop is (the trip count between reloads of a register tile),
and how many vector registers the tile under it keeps live. The features of a
candidate are these for its hottest block (the most iterations), summed over
all blocks where a sum means something, and the rules' decisions themselves.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from tir.block import BlockRealize
from tir.function import PrimFunc
from tir.schedule import tree
from tir.stmt import ForKind

from .target_info import TargetInfo

#: Per-block features, in order (``block_features``).
BLOCK_FEATURES = ("log_iters", "log_vector_lanes", "log_unrolled", "log_parallel",
                  "log_inner_serial", "tile_registers_ratio", "depth", "is_reduction")


def block_features(func: PrimFunc, realize: BlockRealize, info: TargetInfo) -> list[float]:
    """The ``BLOCK_FEATURES`` of one block."""
    loops = tree.loops_above(func, realize)
    iters, vec, unrolled, par, inner_serial = 1, 1, 1, 1, 1
    for loop in loops:
        extent = _extent(loop)
        iters *= extent
        if loop.kind == ForKind.VECTORIZED:
            vec *= extent
        elif loop.kind == ForKind.UNROLLED:
            unrolled *= extent
        elif loop.kind == ForKind.PARALLEL:
            par *= extent
    for loop in reversed(loops):
        if loop.kind == ForKind.SERIAL:
            inner_serial = _extent(loop)
            break
    lanes = info.lanes(4)
    tile_vectors = unrolled * max(1, vec // lanes)
    is_reduction = any(iv.is_reduce for iv in realize.block.iter_vars)
    return [math.log2(iters), math.log2(vec), math.log2(unrolled), math.log2(par),
            math.log2(inner_serial), tile_vectors / info.vector_registers, float(len(loops)),
            float(is_reduction)]


def _extent(loop: Any) -> int:
    value = getattr(loop.extent, "value", None)
    return value if isinstance(value, int) and value > 0 else 1


def candidate_features(func: PrimFunc, info: TargetInfo, decisions: Sequence[int],
                       sizes: Sequence[int]) -> np.ndarray:
    """One row for the cost model: hottest block, sums over blocks, normalized decisions."""
    rows = [block_features(func, r, info) for r in tree.blocks(func)]
    if not rows:
        rows = [[0.0] * len(BLOCK_FEATURES)]
    table = np.array(rows)
    hottest = table[int(np.argmax(table[:, 0]))]
    totals = [len(rows), math.log2(sum(2.0 ** r[0] for r in rows))]
    chosen = [d / max(1, s - 1) for d, s in zip(decisions, sizes)]
    return np.concatenate([hottest, totals, chosen]).astype(np.float64)
