"""Register tiling of a contraction (matmul, conv): the rule that makes them run near the FMA peak.

The block's loops become, outermost first::

    other spatial loops, vec_o, row_o,          <- parallel over the leading ones
      reduction loops (the last split by ku),
        ku (unrolled), row_i (unrolled), vec_i (vectorized: nv registers; split
                                               into nv register-wide vectors if nv = 3)

so that ``row_i x vec_i`` accumulators (mr x nv vector registers) stay in
registers over the whole reduction: each step loads nv vectors of the operand
along ``vec``, broadcasts mr values of the other, and issues mr * nv FMAs. The
accumulators live in a ``local`` cache (``cache_write``) written back once per
tile, or, when one elementwise stage reads the result (bias + ReLU), in the
intermediate buffer itself with that stage moved under the tile
(``reverse_compute_at``) so the buffer shrinks to the tile. The operand along
``vec`` (the matmul's B, the conv's filter) is packed into contiguous panels
of ``nv * lanes`` columns (``cache_read`` + ``transform_layout``), so the
reduction streams through one panel instead of striding across pages: the
AVX2 conv went from 40-52 to 80-100 GFLOP/s with its filter packed.

Tiles fit the register file: ``mr * nv`` accumulators, ``nv`` operand
vectors and one broadcast, at most the target's vector register count. The
default tile divides its loops where one does; the search also tries tiles
that do not (6 x 2 over 512 rows): the split's guard is a block predicate,
which ``codegen.build`` lowers as ``likely`` and ``LoopPartition`` peels off,
so the hot loop holds no guard and only the last partial tile keeps it.
"""

from __future__ import annotations

import math
from typing import Any

from tir.expr import Var
from tir.schedule import Schedule
from tir.schedule.index_map import IndexMap

from ..block_kinds import BlockKind
from ..sampler import Sampler
from ..target_info import TargetInfo
from . import dot_intrin

#: Accumulators beyond this many gave no speed on either x86 target measured (README).
MAX_ACCUMULATORS = 12

#: From this many output rows (all spatial iterations but the vector axis, each reading the
#: whole operand once) on, the operand is always packed (not a decision of the search):
#: the copy is then under 1% of the work, and unpacked B only ever won when timed warm,
#: back to back. The tuner picked an unpacked 512^3 AVX-512 tile at 2.47 ms against the
#: packed default's 2.58, which then ran at 2.9-3.3 ms against 2.65-2.87 interleaved with
#: other kernels (README, Tuning); at 1024^3, or on AVX2, unpacked tiles ran 1.2-3.7x slower.
PACK_ALWAYS_ROWS = 128


def register_tiles(row_extent: int, vec_extent: int, lanes: int, registers: int,
                   non_dividing: bool = False) -> list[tuple[int, int]]:
    """(mr, nv) pairs that divide their loops and fit ``registers`` vector registers.

    With ``non_dividing``, the tiles that fit but do not divide follow (each no
    larger than its loop): the build's ``LoopPartition`` peels their last partial
    tile off, so the hot loop keeps no guard.
    """
    dividing, other = [], []
    for nv in (1, 2, 3, 4):
        if nv * lanes > max(vec_extent, lanes):
            continue
        for mr in range(1, min(16, max(row_extent, 1)) + 1):
            if mr * nv + nv + 1 > registers:
                continue
            divides = row_extent % mr == 0 and vec_extent % (nv * lanes) == 0
            (dividing if divides else other).append((mr, nv))
    return dividing + (other if non_dividing else [])


def default_register_tile(tiles: list[tuple[int, int]], lanes: int,
                          extents: tuple[int, int] | None = None) -> int:
    """As many rows as keep at most ``MAX_ACCUMULATORS`` accumulators, one or two vectors wide.

    Given the loops' ``extents`` (rows, vector axis), a tile dividing them is
    preferred to one that does not, which is left to the search: on a loaded
    2-core AVX2 host (znver3 target, one thread, interleaved runs) the peeled
    6 x 2 ran matmul 512^3 and 1024^3 6-14% faster than 4 x 2, short of clear
    on a shared machine, and 12 x 1 ran slower (unmeasured elsewhere). 4 x 3, at
    a fifth of 4 x 2 while its 24-lane vector was left whole, ran level with or up
    to 9% above 4 x 2 once split into three ymm vectors (``_vectorize_tile``): within
    the noise, so it stays a search candidate, not the default.

    One vector wide where a vector is 16 lanes (a 64-byte line): on AVX-512
    (znver4) the tuner found 4 x 1 zmm running the 512^3 matmul at 102 GFLOP/s
    against 84 for 4 x 2, and 10 x 1 the fastest conv tile. Two vectors wide
    with 8 lanes (AVX2), where 5 x 2 ymm ran the conv at 70 against 54 for 10 x 1.
    """
    wide = 1 if lanes >= 16 else 2

    def score(t: tuple[int, int]) -> tuple:
        mr, nv = t
        fits = mr * nv <= MAX_ACCUMULATORS
        divides = extents is None or (extents[0] % mr == 0 and extents[1] % (nv * lanes) == 0)
        return (divides, fits, nv == wide, mr * nv if fits else -mr * nv)
    return max(range(len(tiles)), key=lambda k: score(tiles[k]))


def unroll_factors(extent: int) -> list[int]:
    """How far to unroll the innermost reduction loop: divisors of its extent up to 8."""
    return [u for u in (1, 2, 4, 8) if extent % u == 0]


def schedule_contraction(sch: Schedule, kind: BlockKind, info: TargetInfo, sampler: Sampler,
                         consumer: str | None, elem_bytes: int) -> str | None:
    """Tile ``kind``'s block for registers; returns why not when it cannot (else None).

    A uint8 x int8 matmul on a target with VNNI goes to its dot instruction instead
    (``rules.dot_intrin``), unless a stage reading its result is to join the tile."""
    dot = dot_intrin.plan(sch, kind, info) if consumer is None else "a consumer joins the tile"
    if not isinstance(dot, str):
        dot_intrin.schedule_dot(sch, kind, dot)
        return None
    c = kind.contraction
    lanes = info.lanes(elem_bytes)
    extents = (kind.extents[c.row], kind.extents[c.vec])
    tiles = register_tiles(*extents, lanes, info.vector_registers, non_dividing=True)
    if not tiles:
        return (f"no register tile fits its loops (row extent {extents[0]}, "
                f"vector extent {extents[1]} with {lanes} lanes)")
    tile = sampler.choose(sch, [f"{mr}x{nv}" for mr, nv in tiles],
                          default_register_tile(tiles, lanes, extents))
    mr, nv = (int(t) for t in tile.split("x"))
    bn = nv * lanes
    block = sch.get_block(kind.name)
    if c.vec_dim is not None:  # B[j, k]: only packed panels read j contiguously
        _pack(sch, block, c.pack_read, bn, lanes, c.vec_dim)
    elif c.pack_read is not None and (_rows_reusing(kind) >= PACK_ALWAYS_ROWS
                                      or sampler.choose(sch, [1, 0], 0)):
        _pack(sch, block, c.pack_read, bn, lanes)
    loops = sch.get_loops(block)
    row_o, row_i = sch.split(loops[c.row], [None, mr])
    vec_o, vec_i = sch.split(loops[c.vec], [None, bn])
    reduce = [loops[k] for k in c.reduce]
    ku = sampler.choose(sch, unroll_factors(kind.extents[c.reduce[-1]]),
                        _default_unroll(kind.extents[c.reduce[-1]]))
    inner = []
    if ku > 1:
        r_o, r_i = sch.split(reduce[-1], [None, ku])
        reduce, inner = reduce[:-1] + [r_o], [r_i]
    outer = [loops[k] for k in c.spatial if k not in (c.row, c.vec)]
    sch.reorder(*outer, vec_o, row_o, *reduce, *inner, row_i, vec_i)
    _accumulate_in_registers(sch, block, row_o, consumer, nv, lanes)
    _vectorize_tile(sch, block, nv, lanes)
    for r_i in inner:
        sch.unroll(r_i)
    init = sch.decompose_reduction(block, reduce[0])
    _vectorize_tile(sch, init, 1, lanes)  # its loops are copies, split already
    _parallelize(sch, outer, vec_o, sampler, kind, info)
    # LLVM unrolls the tile (UnrollLoop): the same machine code, built in half the time.
    sch.annotate(sch.get_loops(block)[0], "pragma_unroll_explicit", 0)
    return None


def _rows_reusing(kind: BlockKind) -> int:
    """How many times the block reads the operand along ``vec`` (its other spatial extents)."""
    c = kind.contraction
    return math.prod(kind.extents[k] for k in c.spatial if k != c.vec)


def _default_unroll(extent: int) -> int:
    factors = unroll_factors(extent)
    return factors.index(4) if 4 in factors else len(factors) - 1


def _pack(sch: Schedule, block: Any, read_index: int, bn: int, lanes: int,
          col_dim: int = -1) -> None:
    """Copy the operand into panels ``[cols // bn, *rows, bn]``, each read contiguously.

    ``col_dim`` is the operand's dimension along the output's last axis: the last one,
    or another (``B[j, k]``), whose copy then reads across rows to write each panel."""
    packed = sch.cache_read(block, read_index, "global")
    loops = sch.get_loops(packed)
    sch.transform_layout(packed, ("write", 0), _panel_map(len(loops), bn, col_dim))
    p_col = loops[col_dim]
    p_rows = [p for p in loops if p is not p_col]
    p_col_o, p_col_i = sch.split(p_col, [None, lanes])
    sch.reorder(p_col_o, *p_rows, p_col_i)
    sch.vectorize(p_col_i)
    # The copy runs once per call. LLVM unrolled the conv filter's whole panel loop (8 x 9
    # x 4 vector copies), which tripled its code generation time for no speed.
    sch.annotate(p_col_o, "codegen.llvm.unroll", False)


def _panel_map(ndim: int, bn: int, col_dim: int = -1) -> IndexMap:
    """``(*rows, col) -> (col // bn, *rows, col % bn)``: a panel of ``bn`` columns is contiguous
    (``col`` at position ``col_dim`` of the operand's indices)."""
    idx = [Var(f"i{k}") for k in range(ndim)]
    col = idx[col_dim]
    rows = [v for v in idx if v is not col]
    return IndexMap(idx, [col // bn, *rows, col % bn])


def _accumulate_in_registers(sch: Schedule, block: Any, row_o: Any, consumer: str | None,
                             nv: int, lanes: int) -> None:
    if consumer is not None:
        stage = sch.get_block(consumer)
    else:
        stage = sch.cache_write(block, 0, "local")
    # unit loops kept: the stage's last two loops are the tile's rows and vector, even for mr = 1
    sch.reverse_compute_at(stage, row_o, preserve_unit_loops=True)
    _vectorize_tile(sch, stage, nv, lanes)


def _vectorize_tile(sch: Schedule, block: Any, nv: int, lanes: int) -> None:
    """The (row, vec) tile under a block: rows unrolled, the vector axis vectorized.

    A vector axis of ``nv`` registers, ``nv`` not a power of two (3), is first split into
    ``nv`` unrolled register-wide vectors: LLVM 22's x86 backend legalizes loop-carried
    <24 x float> accumulators through the stack, lane by lane (some 350 stack accesses and
    200 vinsertps in the 512^3 matmul), which ran the 4 x 3 AVX2 tile at a fifth of 4 x 2's
    speed. Powers of two are left whole; LLVM halves those into registers cleanly.
    """
    *rest, vec = sch.get_loops(block)
    split = nv & (nv - 1) != 0
    if split:
        vec_o, vec = sch.split(vec, [nv, lanes])
        rest.append(vec_o)
    sch.vectorize(vec)
    for loop in rest[-2 if split else -1:]:
        sch.unroll(loop)


def _parallelize(sch: Schedule, outer: list, vec_o: Any, sampler: Sampler, kind: BlockKind,
                 info: TargetInfo) -> None:
    """The leading spatial loops over all cores, when the work pays for a launch (> 1 thread)."""
    if info.cores <= 1:
        return
    work = 1
    for e in kind.extents:
        work *= e
    default = 1 if info.cores > 1 and work >= 1 << 22 else 0
    if not sampler.choose(sch, [0, 1], default):
        return
    sch.parallel(sch.fuse(*outer) if len(outer) > 1 else (outer[0] if outer else vec_o))
