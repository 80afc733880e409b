"""MergeInterleavedAccesses: interleave groups of strided vector accesses (transform/vector/)."""

import re

import numpy as np
import pytest

import codegen
import tir
import transform
from tir.expr import Broadcast, BufferLoad, Ramp, Shuffle
from tir.stmt import BufferStore, SeqStmt

F32 = "float32"
A = tir.decl_buffer((256,), F32, name="A")
C = tir.decl_buffer((256,), F32, name="C")
b = tir.var("b")


def run(body):
    func = tir.PrimFunc([A, C, b], body)
    return transform.MergeInterleavedAccesses()(tir.IRModule.from_expr(func))["main"].body


def ramp(offset, stride=2, lanes=4):
    return Ramp(b * 8 + offset, stride, lanes)


def test_two_stores_at_stride_two_become_one_interleaving_store():
    re, im = A[ramp(0)], A[ramp(1)] * tir.const(2.0, F32)
    body = SeqStmt([BufferStore(C, re, [ramp(0)]), BufferStore(C, im, [ramp(1)])])
    expected_value = Shuffle(
        [Shuffle([BufferLoad(A, [Ramp(b * 8, 1, 8)])], [0, 2, 4, 6]),
         Shuffle([BufferLoad(A, [Ramp(b * 8, 1, 8)])], [1, 3, 5, 7]) * tir.const(2.0, F32)],
        [0, 4, 1, 5, 2, 6, 3, 7])
    tir.assert_structural_equal(run(body), BufferStore(C, expected_value, [Ramp(b * 8, 1, 8)]))


def test_stores_in_any_order_and_predicated():
    p = tir.var("p", "boolx4")
    x, y, z = (Broadcast(tir.const(float(k), F32), 4) for k in range(3))
    body = SeqStmt([BufferStore(C, y, [ramp(2, 3)], p), BufferStore(C, x, [ramp(1, 3)]),
                    BufferStore(C, z, [ramp(3, 3)])])
    out = run(body)
    assert isinstance(out, BufferStore)
    tir.assert_structural_equal(out.indices[0], Ramp(b * 8 + 1, 1, 12))
    tir.assert_structural_equal(out.value, Shuffle([x, y, z], [0, 4, 8, 1, 5, 9, 2, 6, 10,
                                                               3, 7, 11]))
    true4 = Broadcast(tir.const(True, "bool"), 4)
    tir.assert_structural_equal(out.predicate, Shuffle([true4, p, true4],
                                                       [0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11]))


@pytest.mark.parametrize("case", ["reads_target", "incomplete", "gap", "lanes"])
def test_not_a_store_group(case):
    one = Broadcast(tir.const(1.0, F32), 4)
    second = {
        "reads_target": BufferStore(C, C[ramp(0)], [ramp(1)]),  # reads what the first wrote
        "incomplete": BufferStore(C, one, [ramp(1, 3)]),        # 2 of 3 residues
        "gap": BufferStore(C, one, [ramp(3)]),                   # offsets 0 and 3
        "lanes": BufferStore(C, Broadcast(tir.const(1.0, F32), 8), [ramp(1, 2, 8)]),
    }[case]
    first = BufferStore(C, one, [ramp(0, 3 if case == "incomplete" else 2)])
    body = SeqStmt([first, second])
    assert run(body) is body


def test_loads_of_one_statement_share_one_contiguous_load():
    body = BufferStore(C, A[ramp(0, 3)] + A[ramp(2, 3)], [Ramp(b * 4, 1, 4)])
    out = run(body)
    wide = BufferLoad(A, [Ramp(b * 8, 1, 12)])  # 3 * 3 + 2 + 1 elements, both ends read
    tir.assert_structural_equal(
        out.value, Shuffle([wide], [0, 3, 6, 9]) + Shuffle([wide], [2, 5, 8, 11]))


def test_far_apart_loads_are_not_merged():
    body = BufferStore(C, A[ramp(0)] + A[ramp(5)], [Ramp(b * 4, 1, 4)])
    assert run(body) is body


def test_nothing_to_merge_returns_the_same_function():
    func = tir.PrimFunc([A, C, b], BufferStore(C, A[ramp(0)], [ramp(0)]))
    mod = tir.IRModule.from_expr(func)
    assert transform.MergeInterleavedAccesses()(mod)["main"] is mod["main"]


@pytest.mark.parametrize("n", [0, 1, 7, 8, 9, 16, 17, 100, 1001])
def test_interleave_then_deinterleave_round_trip(n):
    """C[3i+c] = A[3i+2-c] for c = 0..2 (RGB -> BGR): loads and stores both grouped."""
    m = tir.var("n")
    ib = tir.ir_builder.create()
    src, dst = ib.pointer(F32, name="src"), ib.pointer(F32, name="dst")
    with ib.for_range(0, m, name="i", kind="vectorize") as i:
        for c in range(3):
            dst[3 * i + c] = src[3 * i + 2 - c]
    func = tir.PrimFunc([src, dst, m], ib.get())
    data = np.random.default_rng(n).standard_normal(3 * n + 1).astype(np.float32)
    data[::5] = np.nan
    expected = np.full(3 * n + 1, -1.0, np.float32)
    expected[:3 * n] = data[:3 * n].reshape(-1, 3)[:, ::-1].ravel()
    with transform.PassContext(config={"tir.disable_vectorize": True}):
        serial = codegen.build(func)
    for mod in (codegen.build(func), serial, codegen.build(func, "interp")):
        out = np.full(3 * n + 1, -1.0, np.float32)
        mod(data, out, np.int32(n))
        np.testing.assert_array_equal(out, expected)
    ll = codegen.build(func).get_source("ll")
    assert "scatter" not in ll and "gather" not in ll
    assert not re.search(r"(load|store) float", ll)  # no lane-by-lane emulation either
    # the main loop's group is one full-width store: an unmasked vector store exists
    assert re.search(r"store <\d+ x float>", ll)


def test_loads_in_if_then_else_branches_are_not_merged():
    """Only the chosen branch runs: a wide load of both branches' span could read past
    what the taken branch reads (the other branch may be untaken exactly for that)."""
    k = tir.var("k")
    value = tir.if_then_else(k < 3, A[ramp(1)], A[ramp(0)])
    body = BufferStore(C, value, [Ramp(b * 4, 1, 4)])
    assert run(body) is body
    # the condition itself is always evaluated: its loads still group
    cond_loads = A[ramp(0)] + A[ramp(1)]
    body = BufferStore(C, cond_loads, [Ramp(b * 4, 1, 4)])
    assert run(body) is not body
