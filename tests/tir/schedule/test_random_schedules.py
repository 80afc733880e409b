"""Random sequences of every schedule primitive: each schedule computes what the original does.

A primitive may refuse a random request (``ScheduleError``, the schedule stays
as it was); anything else it does must keep the results, which the compiled
and interpreted runs check against the unscheduled function.
"""

from __future__ import annotations

import random

import pytest
from schedule_helpers import assert_same

import tir
from tir import te


def pipeline(m: int, n: int, k: int) -> tir.PrimFunc:
    """scale -> matmul-like reduction -> bias + relu, odd sizes so splits leave tails."""
    A = te.placeholder((m, k), name="A")
    B = te.placeholder((k, n), name="B")
    bias = te.placeholder((n,), name="bias")
    S = te.compute((m, k), lambda i, j: A[i, j] * 0.5, name="S")
    r = te.reduce_axis((0, k), name="r")
    C = te.compute((m, n), lambda i, j: te.sum(S[i, r] * B[r, j], axis=r), name="C")
    D = te.compute((m, n), lambda i, j: tir.max(C[i, j] + bias[j], 0.0), name="D")
    return te.create_prim_func([A, B, bias, D])


BLOCKS = ("S", "C", "D")


def _loops(sch: tir.Schedule, rng: random.Random) -> list:
    block = sch.get_block(rng.choice(_live_blocks(sch)))
    return sch.get_loops(block)


def _live_blocks(sch: tir.Schedule) -> list[str]:
    from tir.schedule import tree

    return [r.block.name_hint for r in tree.blocks(sch.func)]


def _step(sch: tir.Schedule, rng: random.Random) -> None:
    """One random primitive call (it may raise ScheduleError)."""
    kind = rng.choice(["split", "split", "reorder", "fuse", "compute_at", "reverse_compute_at",
                       "inline", "cache_read", "cache_write", "decompose", "kind", "layout"])
    names = _live_blocks(sch)
    block = sch.get_block(rng.choice(names))
    _STEPS[kind](sch, rng, kind, names, block, sch.get_loops(block))


# One function per primitive kind: (schedule, rng, kind, live block names, block, its loops).
# Each draws from rng in a fixed order, so a seed always makes the same schedule.


def _split(sch, rng, kind, names, block, loops) -> None:
    if loops:
        sch.split(rng.choice(loops), [None, rng.choice([2, 3, 4, 5, 8])])


def _reorder(sch, rng, kind, names, block, loops) -> None:
    if len(loops) >= 2:
        sch.reorder(*rng.sample(loops, rng.randint(2, len(loops))))


def _fuse(sch, rng, kind, names, block, loops) -> None:
    if len(loops) >= 2:
        at = rng.randrange(len(loops) - 1)
        sch.fuse(loops[at], loops[at + 1])


def _compute_at(sch, rng, kind, names, block, loops) -> None:
    """compute_at or reverse_compute_at (``kind``) under a loop of a random block."""
    target = sch.get_loops(sch.get_block(rng.choice(names)))
    if target:
        getattr(sch, kind)(block, rng.choice(target))


def _inline(sch, rng, kind, names, block, loops) -> None:
    (sch.compute_inline if rng.random() < 0.6 else sch.reverse_compute_inline)(block)


def _cache_read(sch, rng, kind, names, block, loops) -> None:
    sch.cache_read(block, rng.randrange(3), "global")


def _cache_write(sch, rng, kind, names, block, loops) -> None:
    sch.cache_write(block, 0, "local")


def _decompose(sch, rng, kind, names, block, loops) -> None:
    if loops:
        sch.decompose_reduction(block, rng.choice(loops))


def _loop_kind(sch, rng, kind, names, block, loops) -> None:
    if loops:
        getattr(sch, rng.choice(["vectorize", "unroll", "parallel"]))(rng.choice(loops))


def _layout(sch, rng, kind, names, block, loops) -> None:
    if rng.random() < 0.5:
        sch.transform_layout(block, ("write", 0), lambda i, j: (j, i))
    else:
        sch.transform_layout(block, ("write", 0), lambda i, j: (j // 4, i, j % 4))


_STEPS = {
    "split": _split,
    "reorder": _reorder,
    "fuse": _fuse,
    "compute_at": _compute_at,
    "reverse_compute_at": _compute_at,
    "inline": _inline,
    "cache_read": _cache_read,
    "cache_write": _cache_write,
    "decompose": _decompose,
    "kind": _loop_kind,
    "layout": _layout,
}


@pytest.mark.parametrize("seed", range(24))
def test_random_schedule_keeps_results(seed):
    rng = random.Random(seed)
    m, n, k = rng.choice([5, 7, 9]), rng.choice([6, 11, 13]), rng.choice([3, 4, 7])
    func = pipeline(m, n, k)
    sch = tir.Schedule(func)
    applied = 0
    for _ in range(8):
        before = len(sch.trace)
        try:
            _step(sch, rng)
        except tir.ScheduleError:
            continue  # refused: nothing changed
        applied += len(sch.trace) > before
    tir.verify_well_formed(sch.mod["main"])
    assert_same(func, sch, seed=seed)


def test_random_schedules_apply_real_changes():
    """The generator is not vacuous: most seeds apply several primitives that change the IR."""
    changed = 0
    for seed in range(24):
        rng = random.Random(seed)
        func = pipeline(7, 11, 4)
        sch = tir.Schedule(func)
        for _ in range(8):
            try:
                _step(sch, rng)
            except tir.ScheduleError:
                pass
        changed += not tir.structural_equal(func, sch.mod["main"])
    assert changed >= 18


@pytest.mark.parametrize("seed", range(8))
def test_random_schedule_after_rfactor_keeps_results(seed):
    """rfactor over a split of the reduction, then random primitives on all the blocks."""
    rng = random.Random(100 + seed)
    func = pipeline(rng.choice([5, 7]), rng.choice([6, 11]), rng.choice([7, 9]))
    sch = tir.Schedule(func)
    c = sch.get_block("C")
    r = sch.get_loops(c)[-1]
    outer, inner = sch.split(r, [None, rng.choice([2, 4])])
    sch.rfactor(rng.choice([outer, inner]), rng.choice([0, 1, 2, -1]))
    for _ in range(8):
        try:
            _step(sch, rng)
        except tir.ScheduleError:
            continue
    tir.verify_well_formed(sch.mod["main"])
    assert_same(func, sch, seed=seed)
