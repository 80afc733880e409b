"""The contraction rule's register tiles, every vector width: the same numbers as the serial matmul.

A tile ``mr x nv`` keeps ``mr * nv`` vector accumulators; ``nv = 3`` (not a power of two) is
split into register-wide vectors, which these tests check along with the results.
"""

from __future__ import annotations

import numpy as np
import pytest

import codegen
from tir.node import replace
from tir.schedule import tree
from tir.stmt import For, ForKind
from tirlite import meta_schedule as ms
from tirlite.meta_schedule.rules import contraction
from tirlite.meta_schedule.search import SearchSpace
from tirlite.meta_schedule.target_info import TargetInfo
from tirlite.meta_schedule.testing import te_workload as W

AVX2 = "llvm -mcpu=znver3"
TARGETS = ["llvm"] + ([AVX2] if not codegen.Target(AVX2).missing_host_features else [])
TILES = [(4, 1), (4, 2), (4, 3), (6, 2), (3, 3), (2, 4), (1, 3)]


def _schedule(func, tile, target, monkeypatch):
    monkeypatch.setattr(contraction, "default_register_tile",
                        lambda tiles, lanes, extents=None: tiles.index(tile))
    return ms.apply_default_schedule(func, target=target)


def _vector_extents(func):
    loops = []
    for r in tree.blocks(func):
        loops += tree.loops_above(func, r)
    return {lp.extent.value for lp in loops if lp.kind == ForKind.VECTORIZED}


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("tile", TILES)
def test_tile_matches_numpy_and_the_unscheduled_function(tile, target, monkeypatch):
    lanes = codegen.Target(target).vector_width_bits // 32
    mr, nv = tile
    if mr * nv + nv + 1 > codegen.Target(target).vector_registers:
        pytest.skip(f"{mr} x {nv} does not fit {target}'s registers")
    # two whole tiles and a partial one along each axis, so the peeled tails run too
    m, n, k = 2 * mr + 1, 2 * nv * lanes + lanes, 13
    func = W.matmul(m, n, k)
    scheduled = _schedule(func, tile, target, monkeypatch)
    rng = np.random.default_rng(mr * 10 + nv)
    a = rng.uniform(-1, 1, (m, k)).astype(np.float32)
    b = rng.uniform(-1, 1, (k, n)).astype(np.float32)
    got, serial = np.zeros((m, n), np.float32), np.zeros((m, n), np.float32)
    codegen.build(scheduled, target)(a, b, got)
    codegen.build(func, target)(a, b, serial)
    np.testing.assert_allclose(got, serial, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("target", TARGETS)
def test_three_register_tile_is_vectorized_register_wide(target, monkeypatch):
    lanes = codegen.Target(target).vector_width_bits // 32
    scheduled = _schedule(W.matmul(8, 6 * lanes, 16), (4, 3), target, monkeypatch)["main"]
    assert _vector_extents(scheduled) == {lanes}


@pytest.mark.parametrize("target", TARGETS)
def test_power_of_two_tiles_keep_their_whole_vector(target, monkeypatch):
    lanes = codegen.Target(target).vector_width_bits // 32
    scheduled = _schedule(W.matmul(8, 4 * lanes, 16), (2, 4), target, monkeypatch)["main"]
    assert 4 * lanes in _vector_extents(scheduled)


@pytest.mark.parametrize("target", TARGETS)
def test_three_register_tile_with_a_fused_bias_relu(target, monkeypatch):
    """The conv's bias + ReLU stage is moved under the tile: its vector axis is split too."""
    lanes = codegen.Target(target).vector_width_bits // 32
    n, h, w, ci, co = 1, 3, 9, 4, 3 * lanes + lanes
    func = W.conv2d_nhwc_bias_relu(n, h, w, ci, co)
    scheduled = _schedule(func, (4, 3), target, monkeypatch)
    assert _vector_extents(scheduled["main"]) == {lanes}
    rng = np.random.default_rng(co)
    args = [rng.uniform(-1, 1, s).astype(np.float32)
            for s in ((n, h + 2, w + 2, ci), (ci, 3, 3, co), (co,))]
    got, serial = np.zeros((n, h, w, co), np.float32), np.zeros((n, h, w, co), np.float32)
    codegen.build(scheduled, target)(*args, got)
    codegen.build(func, target)(*args, serial)
    np.testing.assert_allclose(got, serial, rtol=1e-5, atol=1e-5)



def _loops(func, keep):
    """The loops of ``func`` for which ``keep(loop)`` holds."""
    return [s for s, _ in tree.walk(func.body) if isinstance(s, For) and keep(s)]


def _has_unrolled_loops(func):
    return bool(_loops(func, lambda lp: lp.kind == ForKind.UNROLLED))


@pytest.mark.parametrize("target", TARGETS)
def test_llvm_unrolls_the_tile_to_the_same_results(target):
    """The tile's loops reach code generation as loops marked UNROLLED (LLVM unrolls them
    from one copy of the body) instead of the copies TIR's UnrollLoop makes without the
    tile's ``pragma_unroll_explicit = 0``: bit for bit the same results either way."""
    lanes = codegen.Target(target).vector_width_bits // 32
    m, n, k = 29, 9 * lanes + 3, 37  # partial tiles on both axes, k not a multiple of ku
    func = W.matmul(m, n, k)
    scheduled = ms.apply_default_schedule(func, target=target)["main"]
    annotated = _loops(scheduled, lambda lp: "pragma_unroll_explicit" in lp.annotations)
    packing = _loops(scheduled, lambda lp: lp.annotations.get("codegen.llvm.unroll") is False)
    assert len(packing) == 1  # B's panel copy (n > 64): LLVM leaves it rolled
    assert annotated and all(lp.annotations["pragma_unroll_explicit"] == 0 for lp in annotated)
    assert _has_unrolled_loops(codegen.lower(scheduled, target)["main"])
    copied = tree.replace(scheduled, {lp: replace(lp, annotations={}) for lp in annotated})
    assert not _has_unrolled_loops(codegen.lower(copied, target)["main"])
    rng = np.random.default_rng(n)
    a = rng.uniform(-1, 1, (m, k)).astype(np.float32)
    b = rng.uniform(-1, 1, (k, n)).astype(np.float32)
    by_llvm, by_tir = np.zeros((m, n), np.float32), np.zeros((m, n), np.float32)
    codegen.build(scheduled, target)(a, b, by_llvm)
    codegen.build(copied, target)(a, b, by_tir)
    np.testing.assert_array_equal(by_llvm, by_tir)
    np.testing.assert_allclose(by_llvm, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("target", TARGETS)
def test_operand_always_packed_from_128_rows(target):
    """From 128 output rows on, packing B is not a decision of the search; below, it is
    (copying B then costs more than 1% of the work)."""
    info = TargetInfo.from_target(target)

    def pack_choices(m):
        space = SearchSpace(W.matmul(m, 256, 64), info)
        cand = space.generate("default")
        trace = str(cand.sch.trace)
        packed = "cache_read" in trace
        return trace.count("candidates=[1, 0]"), packed

    assert pack_choices(128) == (0, True)
    assert pack_choices(16) == (1, True)  # offered, and packing is the default
