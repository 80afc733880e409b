"""apply_default_schedule: every workload computes what the unscheduled function computes.

Differential tests against the unscheduled build (and NumPy) on random
shapes, including shapes no tile divides, and for one shape of each
workload against the reference interpreter running the scheduled IR (its
serial reading, without LLVM); structural checks that the tiles
fit the target's registers, that no guard lands in a tile, and that blocks
the rules cannot schedule are left as written with a remark.
"""

from __future__ import annotations

import numpy as np
import pytest

import codegen
import tir
import transform
from tir.schedule import tree
from tir.stmt import ForKind
from tirlite import meta_schedule as ms
from tirlite.meta_schedule.testing import te_workload as W

AVX2 = "llvm -mcpu=znver3"


def _run(func, args, target="llvm"):
    out = [np.zeros_like(a) for a in args[-1:]]
    codegen.build(func, target)(*args[:-1], *out)
    return out[0]


def _random(shape, rng, low=-1.0):
    return (rng.random(shape) * (1 - low) + low).astype(np.float32)


def _check_against_unscheduled(func, args, rtol=1e-4, atol=1e-4):
    scheduled = ms.apply_default_schedule(func)
    got = _run(scheduled, args)
    want = _run(func, args)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)
    return scheduled


@pytest.mark.parametrize("m,n,k", [(64, 64, 64), (37, 53, 29), (1, 48, 7), (96, 17, 128),
                                   (128, 256, 1)])
def test_matmul_matches_unscheduled(m, n, k):
    rng = np.random.default_rng(m * 1000 + n * 10 + k)
    a, b = _random((m, k), rng), _random((k, n), rng)
    c = np.zeros((m, n), np.float32)
    _check_against_unscheduled(W.matmul(m, n, k), [a, b, c])
    np.testing.assert_allclose(_run(ms.apply_default_schedule(W.matmul(m, n, k)), [a, b, c]),
                               a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("m,n,k", [(64, 64, 64), (37, 53, 29), (1, 48, 7), (96, 17, 128),
                                   (5, 130, 3)])
def test_matmul_with_a_transposed_operand_is_packed_and_tiled(m, n, k):
    """``A @ B.T``: B[j, k] along the output's last axis is packed into panels (before,
    the row-reduction rules took it: 1024^3 at 16 GFLOP/s)."""
    rng = np.random.default_rng(m * 1000 + n * 10 + k)
    a, b = _random((m, k), rng), _random((n, k), rng)
    b[0, 0], a[-1, -1] = np.nan, -np.inf
    c = np.zeros((m, n), np.float32)
    func = W.matmul_bt(m, n, k)
    scheduled = ms.apply_default_schedule(func)
    assert "B_global" in str(scheduled["main"])  # the panels
    got = _run(scheduled, [a, b, c])
    np.testing.assert_allclose(got, _run(func, [a, b, c]), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(got, a.astype(np.float64) @ b.T.astype(np.float64),
                               rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("n,h,w,ci,co", [(1, 4, 10, 8, 32), (2, 3, 7, 5, 48)])
def test_conv_matches_unscheduled(n, h, w, ci, co):
    rng = np.random.default_rng(h * w)
    args = [_random((n, h + 2, w + 2, ci), rng), _random((ci, 3, 3, co), rng),
            _random((co,), rng), np.zeros((n, h, w, co), np.float32)]
    _check_against_unscheduled(W.conv2d_nhwc_bias_relu(n, h, w, ci, co), args)
    got = _run(ms.apply_default_schedule(W.conv2d_nhwc_bias_relu(n, h, w, ci, co)), args)
    np.testing.assert_allclose(got, W.reference("conv2d_nhwc_bias_relu")(*args[:3]),
                               rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("rows,cols", [(8, 64), (5, 37), (3, 1)])
def test_softmax_rows(rows, cols):
    rng = np.random.default_rng(rows + cols)
    x = _random((rows, cols), rng) * 30  # large enough that a missing max subtraction overflows
    x[0, 0] = np.float32(-1e30)
    args = [x, np.zeros((rows, cols), np.float32)]
    _check_against_unscheduled(W.softmax_rows(rows, cols), args, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("rows,cols", [(8, 64), (4, 29)])
def test_layernorm_rows(rows, cols):
    rng = np.random.default_rng(rows * cols)
    args = [_random((rows, cols), rng), _random((cols,), rng), _random((cols,), rng),
            np.zeros((rows, cols), np.float32)]
    scheduled = _check_against_unscheduled(W.layernorm_rows(rows, cols), args,
                                           rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(_run(scheduled, args), W.reference("layernorm_rows")(*args[:3]),
                               rtol=1e-3, atol=1e-3)


def _interpreter_cases():
    rng = np.random.default_rng(11)
    x = _random((5, 37), rng) * 30
    x[1, :3] = [np.nan, np.inf, -np.inf]
    return {
        "matmul": (W.matmul(37, 53, 29), [_random((37, 29), rng), _random((29, 53), rng),
                                          np.zeros((37, 53), np.float32)]),
        "conv": (W.conv2d_nhwc_bias_relu(2, 3, 7, 5, 48),
                 [_random((2, 5, 9, 5), rng), _random((5, 3, 3, 48), rng),
                  _random((48,), rng), np.zeros((2, 3, 7, 48), np.float32)]),
        "softmax": (W.softmax_rows(5, 37), [x, np.zeros((5, 37), np.float32)]),
        "layernorm": (W.layernorm_rows(4, 29), [_random((4, 29), rng), _random((29,), rng),
                                                _random((29,), rng),
                                                np.zeros((4, 29), np.float32)]),
    }


@pytest.mark.parametrize("name", ["matmul", "conv", "softmax", "layernorm"])
def test_scheduled_build_matches_the_interpreter(name):
    """The LLVM build of the scheduled IR computes what the interpreter reads in it."""
    func, args = _interpreter_cases()[name]
    scheduled = ms.apply_default_schedule(func)
    got = _run(scheduled, args)
    want = _run(scheduled, args, "interp")
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    if name == "softmax":  # the NaN row stays NaN in both, not silently dropped
        assert np.isnan(got[1]).all() and np.isnan(want[1]).all()


def test_elementwise_broadcast_with_nan_and_extremes():
    rng = np.random.default_rng(3)
    x = _random((33, 70), rng)
    x[0, :4] = [np.nan, np.inf, -np.inf, np.finfo(np.float32).max]
    args = [x, _random((70,), rng), np.zeros((33, 70), np.float32)]
    got = _run(ms.apply_default_schedule(W.add_bias_relu(33, 70)), args)
    np.testing.assert_array_equal(got, _run(W.add_bias_relu(33, 70), args))


@pytest.mark.parametrize("target", ["llvm", AVX2, "llvm -mcpu=skylake-avx512"])
def test_register_tile_fits_the_target(target):
    info = ms.TargetInfo.from_target(target)
    func = ms.apply_default_schedule(W.matmul(256, 256, 256), target=target)["main"]
    conv = tree.find_block(func, "C")
    loops = tree.loops_above(func, conv)
    unrolled = [lp.extent.value for lp in loops if lp.kind == ForKind.UNROLLED]
    vector = [lp.extent.value for lp in loops if lp.kind == ForKind.VECTORIZED]
    lanes = info.lanes(4)
    mr, nv = unrolled[-1], vector[0] // lanes
    assert vector[0] % lanes == 0
    assert mr * nv + nv + 1 <= info.vector_registers, (target, mr, nv)


def test_no_guard_in_any_tile():
    for func in (W.matmul(96, 80, 40), W.conv2d_nhwc_bias_relu(1, 3, 10, 4, 32),
                 W.softmax_rows(6, 40)):
        scheduled = ms.apply_default_schedule(func)["main"]
        for r in tree.blocks(scheduled):
            assert isinstance(r.predicate, tir.IntImm) and r.predicate.value == 1, \
                (r.block.name_hint, r.predicate)


def test_accumulators_stay_off_the_heap():
    """The register tile's accumulators live on the stack (registers after LLVM), never the heap.

    Only the packed operand (a copy of B, 64 KB here) is a heap allocation.
    """
    scheduled = ms.apply_default_schedule(W.matmul(128, 128, 128))
    text = str(scheduled["main"])
    assert 'scope="local"' in text
    ir = codegen.build(scheduled).get_source("ll")
    assert ir.count("call ptr @aligned_alloc") <= 1
    unpacked = ms.apply_default_schedule(W.matmul(8, 32, 128))  # no packing at this width
    assert "call ptr @aligned_alloc" not in codegen.build(unpacked).get_source("ll")


def test_unschedulable_block_is_left_with_a_remark():
    n = tir.size_var("n")
    from tir import te

    a = te.placeholder((n,), "float32", "A")
    b = te.compute((n,), lambda i: a[i] * 2.0, name="B")
    func = te.create_prim_func([a, b])
    with transform.collect_remarks() as remarks:
        scheduled = ms.apply_default_schedule(func)
    tir.assert_structural_equal(scheduled["main"], func)
    assert any("block B" in str(r) and "constant extents" in str(r) for r in remarks), remarks


def test_function_without_blocks_passes_through():
    buf = tir.decl_buffer((8,), "float32", "A")
    ib = tir.ir_builder.create()
    a = ib.buffer_ptr(buf)
    with ib.for_range(0, 8) as i:
        a[i] = a[i] + 1.0
    func = tir.PrimFunc([buf], ib.get())
    assert ms.apply_default_schedule(func)["main"] is func


def test_bad_input_is_a_type_error():
    with pytest.raises(TypeError, match="IRModule or PrimFunc"):
        ms.apply_default_schedule("not a module")


def test_non_dividing_register_tile_is_correct_and_peeled(monkeypatch):
    """A 6 x 2 tile over 100 rows and 52 columns (neither divides): correct against NumPy,
    and LoopPartition leaves no guard in the lowered loops (the tails are peeled)."""
    from codegen.build import lower
    from tirlite.meta_schedule.rules import contraction

    tiles = contraction.register_tiles(100, 52, 8, 16, non_dividing=True)
    assert (6, 2) in tiles and (6, 2) not in contraction.register_tiles(100, 52, 8, 16)
    monkeypatch.setattr(contraction, "default_register_tile",
                        lambda tiles, lanes, extents=None: tiles.index((6, 2)))
    scheduled = ms.apply_default_schedule(W.matmul(100, 52, 24), target=AVX2)
    rng = np.random.default_rng(6)
    a, b = _random((100, 24), rng), _random((24, 52), rng)
    got = _run(scheduled, [a, b, np.zeros((100, 52), np.float32)])
    np.testing.assert_allclose(got, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)
    guards = []
    tir.stmt_functor.post_order_visit(
        lower(scheduled)["main"].body,
        lambda x: guards.append(x) if isinstance(x, tir.IfThenElse) else None)
    assert not guards


def test_default_tile_prefers_dividing_tiles():
    from tirlite.meta_schedule.rules import contraction

    tiles = contraction.register_tiles(512, 512, 8, 16, non_dividing=True)
    assert (6, 2) in tiles
    assert tiles[contraction.default_register_tile(tiles, 8, (512, 512))] == (4, 2)
