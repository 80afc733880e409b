"""rfactor (TVM's semantics): the IR it builds, builds against NumPy, and each refusal.

A structural test writes the expected function by hand; the differential tests
build the scheduled function (``codegen.build``) and compare with NumPy on
random inputs: sums of rows and matmuls over a split of the reduction (guarded
or not), max with its -inf init, integer sums exactly, with the partials'
loop parallel or vectorized, and the rfactor and write-back blocks moved by
compute_at / reverse_compute_at or decomposed. The other reducers run on the
reference interpreter, which costs no LLVM build.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import codegen
import tir
from codegen.interp.backend import build_interpreter
from tir import te
from tir.block import Block, BlockRealize, IterVar, IterVarType
from tir.expr import BufferLoad
from tir.schedule import ScheduleError, tree
from tir.stmt import BufferStore, For, ForKind, SeqStmt

S, R = IterVarType.DataPar, IterVarType.CommReduce
RNG = np.random.default_rng(7)


# ------------------------------------------------------------------ functions and runs


def row_reduce(m, n, dtype="float32", reducer=te.sum, **kw):
    """``B[i] = reducer(A[i, k])`` over ``k < n`` (``kw``: te's ``where`` / ``init``)."""
    A = te.placeholder((m, n), dtype, name="A")
    k = te.reduce_axis((0, n), name="k")
    B = te.compute((m,), lambda i: reducer(A[i, k], axis=k, **kw), name="B")
    return te.create_prim_func([A, B])


def matmul(m, n, p):
    A = te.placeholder((m, p), name="A")
    B = te.placeholder((p, n), name="B")
    k = te.reduce_axis((0, p), name="k")
    C = te.compute((m, n), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    return te.create_prim_func([A, B, C])


def split_reduction(func, block="B", factors=(None, 4)):
    """A schedule of ``func`` with the reduction loop (the last) of ``block`` split."""
    sch = tir.Schedule(func)
    b = sch.get_block(block)
    *spatial, k = sch.get_loops(b)
    ko, ki = sch.split(k, list(factors))
    return sch, b, spatial, ko, ki


def run(sch, *arrays, interpret=False):
    """The scheduled function built (or interpreted) and run on copies of ``arrays``."""
    arrays = [a.copy() for a in arrays]
    func = sch.mod["main"]
    tir.verify_well_formed(func)
    lib = build_interpreter(func) if interpret else codegen.build(sch.mod)
    lib["main"](*arrays)
    return arrays


def floats(*shape):
    return RNG.uniform(-2.0, 2.0, size=shape).astype("float32")


def ints(*shape, lo=-50, hi=50):
    return RNG.integers(lo, hi, size=shape).astype("int32")


def rf_buffer(sch):
    root = tree.root_realize(sch.mod["main"]).block
    (buf,) = [b for b in root.alloc_buffers if b.name.endswith("_rf")]
    return buf


def kinds(sch, name):
    return [(iv.var.name, iv.iter_type) for iv in sch.get(sch.get_block(name)).iter_vars]


# ------------------------------------------------------------------ the IR


def test_row_sum_rfactor_ir():
    before = row_reduce(8, 10)
    sch, b, _, ko, ki = split_reduction(before)
    rf = sch.rfactor(ki, 0)
    after = sch.mod["main"]

    A, B = (before.buffer_map[p] for p in before.params)
    B_rf = tir.decl_buffer((4, 8), "float32", "B_rf")
    i, k0, k1, i2, k1b = (tir.Var(n) for n in ("i", "k_0", "k_1", "i", "k_1"))
    vk1, vi, vk0, wk1, wi = (tir.Var(n) for n in ("v_k_1", "v_i", "v_k_0", "v_k_1", "v_i"))
    rf_block = Block(
        [IterVar(4, vk1, S), IterVar(8, vi, S), IterVar(3, vk0, R)], "B_rf",
        init=BufferStore(B_rf, tir.const(0.0, "float32"), [vk1, vi]),
        body=BufferStore(B_rf, BufferLoad(B_rf, [vk1, vi]) + BufferLoad(A, [vi, vk0 * 4 + vk1]),
                         [vk1, vi]))
    wb_block = Block(
        [IterVar(4, wk1, R), IterVar(8, wi, S)], "B",
        init=BufferStore(B, tir.const(0.0, "float32"), [wi]),
        body=BufferStore(B, BufferLoad(B, [wi]) + BufferLoad(B_rf, [wk1, wi]), [wi]))
    rf_nest = For(i, 0, 8, ForKind.SERIAL, For(k0, 0, 3, ForKind.SERIAL, For(
        k1, 0, 4, ForKind.SERIAL, BlockRealize([k1, i, k0], k0 * 4 + k1 < 10, rf_block))))
    wb_nest = For(i2, 0, 8, ForKind.SERIAL, For(
        k1b, 0, 4, ForKind.SERIAL, BlockRealize([k1b, i2], True, wb_block)))
    root = Block([], "root", alloc_buffers=[B_rf], body=SeqStmt([rf_nest, wb_nest]))
    expected = tir.PrimFunc([A, B], BlockRealize([], True, root), attrs=before.attrs)
    tir.assert_structural_equal(after, expected)

    assert rf.name == "B_rf" and sch.get(b).name_hint == "B"
    assert str(sch.trace).splitlines()[-1] == "b5 = sch.rfactor(l4, factor_axis=0)"
    # the handles of the kept loops follow the write-back nest
    assert sch.get_loops(b)[1].var is ki.var
    with pytest.raises(ScheduleError, match="no longer in the function"):
        sch.get(ko)


def test_factor_axis_places_the_new_dimension_and_counts_from_the_end():
    shapes = {}
    for axis in (0, 1, 2, -1, -2, -3):
        sch, _, _, _, ki = split_reduction(matmul(3, 5, 8), "C")
        sch.rfactor(ki, axis)
        shapes[axis] = [int(s.value) for s in rf_buffer(sch).shape]
    assert shapes[0] == shapes[-3] == [4, 3, 5]
    assert shapes[1] == shapes[-2] == [3, 4, 5]
    assert shapes[2] == shapes[-1] == [3, 5, 4]


def test_iter_var_kinds_of_the_two_blocks():
    sch, _, _, _, ki = split_reduction(matmul(3, 5, 8), "C")
    sch.rfactor(ki, 1)
    assert kinds(sch, "C_rf") == [("v_k_1", S), ("v_i", S), ("v_j", S), ("v_k_0", R)]
    assert kinds(sch, "C") == [("v_k_1", R), ("v_i", S), ("v_j", S)]


def test_write_back_keeps_the_guard_of_partials_no_iteration_writes():
    # extent 3 split by 4: partial 3 is never written, so the write-back must skip it
    sch, b, _, _, ki = split_reduction(row_reduce(2, 3, "int32"))
    sch.rfactor(ki)
    wb = tree.find_block(sch.mod["main"], "B")
    assert str(wb.predicate) == "k_1 < 3"


# ------------------------------------------------------------------ builds against NumPy


def test_matmul_over_a_guarded_split_negative_factor_axis():
    sch, _, _, _, ki = split_reduction(matmul(6, 7, 11), "C")  # 11 = 3 * 4 - 1: a guard
    sch.rfactor(ki, -1)
    a, b = floats(6, 11), floats(11, 7)
    *_, c = run(sch, a, b, np.zeros((6, 7), "float32"))
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)


def test_parallel_partials_of_a_float_row_sum():
    # the classic parallel reduction: 4 partials, each summed by its own thread
    sch, b, _, ko, _ = split_reduction(row_reduce(5, 13), factors=(4, None))
    rf = sch.rfactor(ko, 1)
    ri, rko, _ = sch.get_loops(rf)
    sch.reorder(rko, ri)
    sch.parallel(rko)
    assert sch.get(rko).kind == ForKind.PARALLEL
    a = floats(5, 13)
    _, out = run(sch, a, np.zeros(5, "float32"))
    np.testing.assert_allclose(out, a.sum(axis=1), rtol=1e-5, atol=1e-5)


def test_vectorized_partials_of_an_int_sum_are_exact_and_decompose():
    sch, b, _, _, ki = split_reduction(row_reduce(3, 37, "int32"), factors=(None, 8))
    rf = sch.rfactor(ki, -1)
    _, rko, rki = sch.get_loops(rf)
    sch.vectorize(rki)
    sch.decompose_reduction(rf, rko)
    sch.decompose_reduction(b, sch.get_loops(b)[1])
    a = ints(3, 37, lo=-2**20, hi=2**20)
    _, out = run(sch, a, np.zeros(3, "int32"))
    np.testing.assert_array_equal(out, a.sum(axis=1, dtype="int32"))


def test_max_keeps_its_minus_inf_init_with_the_write_back_moved_under_the_partials():
    sch, b, _, _, ki = split_reduction(row_reduce(4, 9, reducer=te.max), factors=(None, 2))
    rf = sch.rfactor(ki)
    sch.reverse_compute_at(b, sch.get_loops(rf)[0])
    a = floats(4, 9) - 10.0  # all negative: a zero init would show
    _, out = run(sch, a, np.zeros(4, "float32"))
    np.testing.assert_array_equal(out, a.max(axis=1))


def test_partials_computed_at_the_write_back_keep_their_guard():
    sch, b, (i,), _, ki = split_reduction(row_reduce(4, 9, "int32"), factors=(None, 2))
    rf = sch.rfactor(ki)
    sch.compute_at(rf, i)
    assert "T.where" in str(sch.mod["main"])  # 5 * 2 > 9: the moved partials keep the guard
    a = ints(4, 9)
    _, out = run(sch, a, np.zeros(4, "int32"))
    np.testing.assert_array_equal(out, a.sum(axis=1))


@pytest.mark.parametrize("n, factors", [(3, (None, 4)), (5, (None, 1)), (1, (None, 4))],
                         ids=["partial-never-written", "rf-loop-extent-1", "reduction-extent-1"])
def test_small_and_unit_extents(n, factors):
    sch, _, _, _, ki = split_reduction(row_reduce(3, n, "int32"), factors=factors)
    sch.rfactor(ki)
    a = ints(3, n)
    _, out = run(sch, a, np.full(3, 99, "int32"))
    np.testing.assert_array_equal(out, a.sum(axis=1))


def test_unsplit_loop_starting_at_two_indexes_the_partials_from_zero():
    A = te.placeholder((3, 10), "int32", name="A")
    k = te.reduce_axis((2, 10), name="k")
    B = te.compute((3,), lambda i: te.sum(A[i, k], axis=k), name="B")
    sch = tir.Schedule(te.create_prim_func([A, B]))
    rf = sch.rfactor(sch.get_loops(sch.get_block("B"))[1], 1)
    assert [int(s.value) for s in rf_buffer(sch).shape] == [3, 8]
    assert str(sch.get(rf).body.indices[1]) == "v_k - 2"
    a = ints(3, 10)
    _, out = run(sch, a, np.zeros(3, "int32"), interpret=True)
    np.testing.assert_array_equal(out, a[:, 2:].sum(1))


def test_a_second_reduction_axis_stays_a_reduction_of_the_rfactor_block():
    A = te.placeholder((3, 4, 5), "int32", name="A")
    k, r = te.reduce_axis((0, 4), name="k"), te.reduce_axis((0, 5), name="r")
    B = te.compute((3,), lambda i: te.sum(A[i, k, r], axis=[k, r]), name="B")
    sch, *_, ri = split_reduction(te.create_prim_func([A, B]), factors=(None, 2))
    sch.rfactor(ri)
    assert kinds(sch, "B_rf") == [("v_r_1", S), ("v_i", S), ("v_k", R), ("v_r_0", R)]
    assert [f.loop_var.name for f in tree.loops_above(
        sch.mod["main"], tree.find_block(sch.mod["main"], "B"))] == ["i", "r_1"]
    a = ints(3, 4, 5)
    _, out = run(sch, a, np.zeros(3, "int32"), interpret=True)
    np.testing.assert_array_equal(out, a.sum((1, 2)))


# ------------------------------------------------------------------ other reducers (interpreted)


def _reduced(func, factors=(None, 4), axis=0):
    sch, *_, ki = split_reduction(func, factors=factors)
    sch.rfactor(ki, axis)
    return sch


def test_init_and_where_of_te_sum_are_kept():
    A = te.placeholder((3, 10), "int32", name="A")
    k = te.reduce_axis((0, 10), name="k")
    B = te.compute((3,), lambda i: te.sum(A[i, k], axis=k, where=k % 3 != 1,
                                          init=tir.const(100, "int32")), name="B")
    func = te.create_prim_func([A, B])
    sch = _reduced(func)
    wb = sch.get(sch.get_block("B"))
    assert str(wb.init.value) == "100"  # the partials start from 0, the output from 100
    a = ints(3, 10)
    _, out = run(sch, a, np.zeros(3, "int32"), interpret=True)
    np.testing.assert_array_equal(out, 100 + a[:, [k for k in range(10) if k % 3 != 1]].sum(1))


def _custom(combine, identity, name):
    return te.comm_reducer(combine, identity, name=name)


@pytest.mark.parametrize("name, reducer, dtype, expect", [
    ("min", te.min, "int32", lambda a: a.min(1)),
    ("product", _custom(lambda x, y: x * y, lambda t: tir.const(1, t), "prod"), "int32",
     lambda a: a.prod(1, dtype="int32")),
    ("bitwise and", _custom(tir.bitwise_and, lambda t: tir.const(-1, t), "band"), "int32",
     lambda a: np.bitwise_and.reduce(a, axis=1)),
    ("bitwise or", _custom(tir.bitwise_or, lambda t: tir.const(0, t), "bor"), "int32",
     lambda a: np.bitwise_or.reduce(a, axis=1)),
    ("bitwise xor", _custom(tir.bitwise_xor, lambda t: tir.const(0, t), "bxor"), "int32",
     lambda a: np.bitwise_xor.reduce(a, axis=1)),
    ("logical and", _custom(lambda x, y: x & y, lambda t: tir.const(True, t), "land"), "bool",
     lambda a: a.all(1)),
    ("logical or", _custom(lambda x, y: x | y, lambda t: tir.const(False, t), "lor"), "bool",
     lambda a: a.any(1)),
])
def test_other_reducers(name, reducer, dtype, expect):
    sch = _reduced(row_reduce(4, 7, dtype, reducer), axis=1)
    if dtype == "bool":
        a = RNG.random((4, 7)) < 0.8
    else:
        a = ints(4, 7, lo=-3, hi=4) if name == "product" else ints(4, 7, lo=0, hi=1 << 12)
    _, out = run(sch, a, np.zeros(4, dtype), interpret=True)
    np.testing.assert_array_equal(out, expect(a))


def test_accumulator_on_the_right_keeps_its_side():
    rsub = _custom(lambda x, y: tir.max(y, x), lambda t: tir.min_value(t), "rmax")
    sch = _reduced(row_reduce(2, 6, "int32", rsub))
    wb = sch.get(sch.get_block("B"))
    assert str(wb.body.value) == "T.max(B_rf[v_k_1, v_i], B[v_i])"
    a = ints(2, 6)
    _, out = run(sch, a, np.zeros(2, "int32"), interpret=True)
    np.testing.assert_array_equal(out, a.max(1))


# ------------------------------------------------------------------ refusals


def elementwise():
    A = te.placeholder((4, 6), name="A")
    B = te.compute((4, 6), lambda i, j: A[i, j] * 2.0, name="B")
    return te.create_prim_func([A, B])


def producer_and_sum():
    A = te.placeholder((4, 6), name="A")
    P = te.compute((4, 6), lambda i, k: A[i, k] * 2.0, name="P")
    k = te.reduce_axis((0, 6), name="k")
    B = te.compute((4,), lambda i: te.sum(P[i, k], axis=k), name="B")
    return te.create_prim_func([A, B])


def unbound_loop_under_the_reduction():
    """A row sum with a loop ``u`` bound to nothing between the reduction loop and the block."""
    func = row_reduce(4, 6)
    r = tree.find_block(func, "B")
    return tree.replace(func, {r: For(tir.Var("u"), 0, 2, ForKind.SERIAL, r)})


def _not_reduction(sch):
    return sch.get_loops(sch.get_block("B"))[1]


def _spatial(sch):
    return sch.get_loops(sch.get_block("B"))[0]


def _unbound(sch):
    _, k = sch.get_loops(sch.get_block("B"))
    return sch.split(k, [1, None], preserve_unit_iters=False)[0]


def _two_blocks(sch):
    _, k = sch.get_loops(sch.get_block("B"))
    sch.compute_at(sch.get_block("P"), k)
    return k


def _producer_first(sch):
    i, k = sch.get_loops(sch.get_block("B"))
    sch.compute_at(sch.get_block("P"), i)
    return k


def _unrolled(sch):
    _, k = sch.get_loops(sch.get_block("B"))
    sch.unroll(k)
    return k


def _both_kinds(sch):
    i, k = sch.get_loops(sch.get_block("B"))
    ko, ki = sch.split(k, [2, None])
    sch.reorder(ko, i)
    sch.fuse(ko, i)
    return ki


@pytest.mark.parametrize("func, pick, axis, message", [
    (elementwise, _not_reduction, 0,
     "rfactor: block B: the block is not a reduction block (it has no init)"),
    (lambda: row_reduce(4, 6), _spatial, 0,
     "rfactor: loop i of block B: the loop is bound to the spatial iter var v_i"),
    (lambda: row_reduce(4, 6), _unbound, 0,
     "rfactor: loop k_0 of block B: the loop is bound to no reduction iter var"),
    (lambda: row_reduce(4, 6, reducer=_custom(lambda x, y: x - y, lambda t: tir.const(0, t),
                                              "sub")), _not_reduction, 0,
     "rfactor: block B: the update B[...] = B[v_i] - A[v_i, v_k] is not a reduction "
     "rfactor recognises (sum, product, min, max, logical and, logical or, bitwise and, "
     "bitwise or, bitwise xor of the accumulator B[...] and a value not reading it)"),
    (producer_and_sum, _two_blocks, 0,
     "rfactor: loop k: the loop has 2 blocks under it (P, B); rfactor needs the reduction "
     "block alone under it"),
    (producer_and_sum, _producer_first, 0,
     "rfactor: loop i: block P comes before block B under the outermost loop"),
    (lambda: row_reduce(4, 6), _unrolled, 0, "rfactor: loop k of block B: the loop is unrolled"),
    (lambda: row_reduce(4, 6), _both_kinds, 0,
     "rfactor: loop k_0_i_fused of block B: the loop is bound to both spatial iter var v_i "
     "and reduction iter var v_k"),
    (unbound_loop_under_the_reduction, _not_reduction, 0,
     "rfactor: loop u of block B: the loop is bound to no iter var and runs under a "
     "reduction loop"),
    (lambda: row_reduce(4, 6), _not_reduction, 2,
     "rfactor: factor_axis 2: is out of range for buffer B of 1 dimension(s): it must be "
     "in [-2, 1]"),
    (lambda: row_reduce(4, 6), _not_reduction, -3, "factor_axis -3: is out of range"),
], ids=["not-reduction", "spatial-loop", "unbound-loop", "unknown-reducer", "two-blocks",
        "producer-first", "unrolled", "both-kinds", "unbound-under-reduction", "axis-too-big",
        "axis-too-small"])
def test_refusals_leave_the_schedule_unchanged(func, pick, axis, message):
    sch = tir.Schedule(func())
    loop = pick(sch)
    before, steps = sch.mod["main"], len(sch.trace)
    with pytest.raises(ScheduleError, match=re.escape(message)):
        sch.rfactor(loop, axis)
    assert sch.mod["main"] is before and len(sch.trace) == steps
