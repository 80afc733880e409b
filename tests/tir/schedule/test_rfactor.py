"""Schedule.rfactor: structure, differential results against NumPy, and every refusal."""

from __future__ import annotations

import numpy as np
import pytest

import codegen
import tir
from tir import te
from tir.schedule import ScheduleError, Trace


def _row_reduce(kind: str, dtype: str, rows: int = 6, cols: int = 40):
    a = te.placeholder((rows, cols), dtype, "A")
    k = te.reduce_axis((0, cols), "k")
    reducer = {"sum": te.sum, "max": te.max, "min": te.min}[kind]
    b = te.compute((rows,), lambda i: reducer(a[i, k], axis=k), name="B")
    return te.create_prim_func([a, b])


def _split_rfactor(func, factor: int, factor_axis: int = 0):
    sch = tir.Schedule(func)
    _, k = sch.get_loops(sch.get_block("B"))
    _, ki = sch.split(k, [None, factor])
    rf = sch.rfactor(ki, factor_axis)
    return sch, rf


def test_structure_of_a_factored_sum():
    sch, rf = _split_rfactor(_row_reduce("sum", "float32", cols=64), 16)
    func = sch.mod["main"]
    root = func.body.block
    assert [b.name for b in root.alloc_buffers] == ["B_rf"]
    assert [int(d) for d in root.alloc_buffers[0].shape] == [16, 6]
    rf_block = sch.get(rf)
    kinds = [(iv.var.name, iv.is_reduce) for iv in rf_block.iter_vars]
    assert kinds == [("v_i", False), ("v_k_0", True), ("v_k_1", False)]
    wb = sch.get(sch.get_block("B"))
    assert [iv.is_reduce for iv in wb.iter_vars] == [False, True]
    text = str(func)
    assert "B_rf[v_k_1, v_i] = T.float32(0)" in text  # the identity, not the original init


@pytest.mark.parametrize("kind,dtype", [("sum", "float32"), ("max", "float32"),
                                        ("min", "float32"), ("sum", "int32"), ("max", "int32")])
@pytest.mark.parametrize("factor,axis", [(8, 0), (5, -1), (1, 1)])
def test_factored_reductions_compute_what_numpy_does(kind, dtype, factor, axis):
    rng = np.random.default_rng(factor)
    rows, cols = 6, 40
    if dtype == "float32":
        a = (rng.standard_normal((rows, cols)) * 100).astype(dtype)
        a[0, 3], a[1, :] = -np.inf, np.float32(-3.4e38)
    else:
        a = rng.integers(-1000, 1000, (rows, cols)).astype(dtype)
    sch, rf = _split_rfactor(_row_reduce(kind, dtype, rows, cols), factor, axis)
    if factor == 8:  # the factored loop is spatial now: it vectorizes
        sch.vectorize(sch.get_loops(rf)[-1])
    got = np.zeros(rows, dtype)
    codegen.build(sch.mod)(a, got)
    with np.errstate(over="ignore"):  # a row of -3.4e38s sums to -inf, in both
        want = {"sum": a.sum, "max": a.max, "min": a.min}[kind](axis=1)
    if dtype == "float32" and kind == "sum":
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-2)
    else:
        np.testing.assert_array_equal(got, want)  # max/min and integers: exact


def test_init_stays_in_the_write_back_and_trace_replays():
    a = te.placeholder((4, 24), "float32", "A")
    bias = te.placeholder((4,), "float32", "bias")
    k = te.reduce_axis((0, 24), "k")
    b = te.compute((4,), lambda i: te.sum(a[i, k], axis=k, init=bias[i]), name="B")
    func = te.create_prim_func([a, bias, b])
    sch, _ = _split_rfactor(func, 6)
    x = np.random.default_rng(0).random((4, 24), dtype=np.float32)
    bb = np.arange(4, dtype=np.float32) * 10
    got = np.zeros(4, np.float32)
    codegen.build(sch.mod)(x, bb, got)
    np.testing.assert_allclose(got, x.sum(1) + bb, rtol=1e-5)  # the bias added once
    again = tir.Schedule(func)
    Trace.apply_json_to_schedule(sch.trace.as_json(), again)
    tir.assert_structural_equal(again.mod["main"], sch.mod["main"])


def test_refusals():
    func = _row_reduce("sum", "float32")
    sch = tir.Schedule(func)
    i, k = sch.get_loops(sch.get_block("B"))
    with pytest.raises(ScheduleError, match="not bound to reduction iter vars"):
        sch.rfactor(i, 0)
    with pytest.raises(ScheduleError, match="factor_axis 3 is out of range"):
        sch.rfactor(k, 3)
    sch.reorder(k, i)
    with pytest.raises(ScheduleError, match="binds the spatial axis"):
        sch.rfactor(k, 0)
    a = te.placeholder((8,), "float32", "A")
    c = te.compute((8,), lambda j: a[j] * 2.0, name="C")
    sch2 = tir.Schedule(te.create_prim_func([a, c]))
    with pytest.raises(ScheduleError, match="not a reduction block"):
        sch2.rfactor(sch2.get_loops(sch2.get_block("C"))[0], 0)
