"""Nested vectorized loops merge into one wider vector (lane = outer_lane * inner_lanes +
inner_lane); checked structurally and on the NumPy evaluator."""

import numpy as np
import pytest
from vectorize_eval import assert_same_result

import tir
import transform
from tir.expr import Broadcast, BufferLoad, Ramp, Shuffle
from tir.stmt import (
    Allocate,
    BufferStore,
    For,
    ForKind,
    IfThenElse,
    LetStmt,
    SeqStmt,
)

F32 = "float32"
A = tir.decl_buffer((128,), F32, name="A")
B = tir.decl_buffer((128,), F32, name="B")
C = tir.decl_buffer((16,), F32, name="C")
I = tir.decl_buffer((128,), "int32", name="I")
i, j, k, n = tir.var("i"), tir.var("j"), tir.var("k"), tir.var("n")
PARAMS = [A, B, C, I, n]
VEC = ForKind.VECTORIZED


def arrays():
    rng = np.random.default_rng(7)
    return {"A": np.zeros(128, np.float32), "B": rng.standard_normal(128).astype(np.float32),
            "C": np.arange(16, dtype=np.float32) * 10, "I": np.zeros(128, np.int32)}


def vectorize(body, scalars=None):
    return vectorize_with_remarks(body, scalars)[0]


def vectorize_with_remarks(body, scalars=None):
    """The vectorized function (checked against ``body`` on data) and the pass's remarks."""
    before = tir.PrimFunc(PARAMS, body)
    with transform.collect_remarks() as remarks:
        after = transform.VectorizeLoop()(tir.IRModule.from_expr(before))["main"]
    assert_same_result(before, after, arrays(), scalars or {"n": 3})
    return after, remarks


def nest(body, outer=4, inner=4):
    return For(i, 0, outer, VEC, For(j, 0, inner, VEC, body))


def test_contiguous_nest_merges_into_one_ramp():
    after = vectorize(nest(BufferStore(A, B[i * 4 + j], [i * 4 + j])))
    r16 = Ramp(0, 1, 16)
    tir.assert_structural_equal(after.body, BufferStore(A, BufferLoad(B, [r16]), [r16]))


def test_gapped_nest_concatenates_ramps():
    after = vectorize(nest(BufferStore(A, B[i * 8 + j], [i * 8 + j]), outer=2))
    index = Shuffle([Ramp(0, 1, 4), Ramp(8, 1, 4)], list(range(8)))
    tir.assert_structural_equal(after.body, BufferStore(A, BufferLoad(B, [index]), [index]))


def test_inner_value_independent_of_outer_is_replicated():
    """B[j] is the same 4 lanes in every outer iteration: [b0..b3, b0..b3, ...], not a
    broadcast of one value."""
    after = vectorize(nest(BufferStore(A, B[j], [i * 4 + j])))
    inner = BufferLoad(B, [Ramp(0, 1, 4)])
    tir.assert_structural_equal(after.body.value, Shuffle([inner] * 4, list(range(16))))


def test_outer_value_is_repeated_per_inner_lane():
    """C[i] is one value per outer iteration: each repeated over the 4 inner lanes."""
    after = vectorize(nest(BufferStore(A, C[i], [i * 4 + j])))
    expected = Shuffle([BufferLoad(C, [Ramp(0, 1, 4)])], [q // 4 for q in range(16)])
    tir.assert_structural_equal(after.body.value, expected)


def test_mixed_values():
    vectorize(nest(BufferStore(A, B[i * 4 + j] * C[i] + B[j] - C[j * 2], [i * 4 + j])))


def test_uniform_value_in_nest_is_one_broadcast():
    after = vectorize(nest(BufferStore(A, C[n], [i * 4 + j])))
    tir.assert_structural_equal(after.body.value, Broadcast(BufferLoad(C, [n]), 16))


def test_transposed_store():
    """A[j * 4 + i]: the merged index is not a ramp, but every lane lands in the right place."""
    vectorize(nest(BufferStore(A, B[i * 4 + j], [j * 4 + i])))


def test_select_on_outer_condition_with_inner_values():
    vectorize(nest(BufferStore(A, tir.Select(i < 2, B[i * 4 + j], C[j]), [i * 4 + j])))


def test_inner_scalarized_outer_vectorized():
    """The inner loop stays serial (its if depends on j); the outer one still vectorizes."""
    body = nest(IfThenElse(j < n, BufferStore(A, B[i * 4 + j], [i * 4 + j])))
    after, remarks = vectorize_with_remarks(body)
    loop = after.body
    assert isinstance(loop, For) and loop.loop_var.name == "j_s"
    assert loop.body.then_case.value.dtype == "float32x4"
    outcomes = [(r.loop_var, r.outcome) for r in remarks]
    assert outcomes == [("i", "vectorized"), ("j", "scalarized")]


def test_outer_scalarized_inner_vector_code_kept():
    body = nest(IfThenElse(i < n, BufferStore(A, B[i * 4 + j], [i * 4 + j])))
    after, remarks = vectorize_with_remarks(body)
    loop = after.body
    assert loop.loop_var.name == "i_s"
    assert loop.body.then_case.value.dtype == "float32x4"
    assert [str(r) for r in remarks] == [
        "main: loop i (4 lanes): scalarized: if condition depends on i",
        "main: loop j (4 lanes): vectorized",
    ]


def test_outer_remark_mentions_the_merge():
    _, remarks = vectorize_with_remarks(nest(BufferStore(A, B[i * 4 + j], [i * 4 + j])))
    first = remarks[0]
    assert first.reason == "merged with the vectorized loop(s) j inside it"


def test_three_levels():
    body = For(k, 0, 2, VEC, nest(BufferStore(A, B[k * 16 + i * 4 + j] + C[i],
                                              [k * 16 + i * 4 + j])))
    after = vectorize(body)
    assert after.body.value.dtype == "float32x32"
    tir.assert_structural_equal(after.body.indices[0], Ramp(0, 1, 32))


def test_let_and_allocate_in_nest():
    v = tir.var("v", F32)
    data = tir.Var("S", "handle")
    S = tir.decl_buffer((1,), F32, name="S", data=data)
    body = nest(LetStmt(v, B[i * 4 + j] + C[i], Allocate(data, F32, [1], True, SeqStmt([
        BufferStore(S, v * v, [0]),
        BufferStore(A, S[0] - C[j], [i * 4 + j]),
    ]))))
    vectorize(body)


def test_nest_inside_serial_loop_with_symbolic_base():
    body = For(k, 0, n, ForKind.SERIAL, For(i, 0, 2, VEC, For(j, 0, 4, VEC, BufferStore(
        A, B[k * 8 + i * 4 + j] + C[j], [k * 8 + i * 4 + j]))))
    after = vectorize(body)
    index = after.body.body.indices[0]
    tir.assert_structural_equal(index, Ramp(after.body.loop_var * 8, 1, 8))


@pytest.mark.parametrize("outer, inner", [(2, 3), (3, 2), (1, 4), (4, 1)])
def test_odd_shapes(outer, inner):
    vectorize(nest(BufferStore(I, i * 10 + j, [i * inner + j]), outer, inner))


def test_inner_vectorized_loop_under_an_outer_condition():
    """The if depends on i: the outer loop scalarizes around the inner vector code."""
    body = For(i, 0, 4, VEC, IfThenElse(C[i] > tir.const(5, F32), For(j, 0, 4, VEC, BufferStore(
        A, B[i * 4 + j], [i * 4 + j]))))
    after = vectorize(body)
    assert after.body.loop_var.name == "i_s"
    assert after.body.body.then_case.value.dtype == "float32x4"


def test_inner_vectorized_loop_after_a_statement_of_the_outer_loop():
    body = For(i, 0, 4, VEC, SeqStmt([
        BufferStore(I, i * 3, [i]),
        For(j, 0, 2, VEC, BufferStore(A, B[i * 2 + j] + C[j], [64 + i * 2 + j])),
    ]))
    after = vectorize(body)
    first, second = after.body.seq
    tir.assert_structural_equal(first, BufferStore(I, Ramp(0, 3, 4), [Ramp(0, 1, 4)]))
    tir.assert_structural_equal(second.indices[0], Ramp(64, 1, 8))


def test_inner_vectorized_loop_inside_serial_loop_inside_vectorized_loop():
    body = For(i, 0, 2, VEC, For(k, 0, 3, ForKind.SERIAL, For(j, 0, 4, VEC, BufferStore(
        A, B[k * 8 + i * 4 + j] * C[k], [k * 8 + i * 4 + j]))))
    after = vectorize(body)
    loop = after.body
    assert loop.kind == ForKind.SERIAL and loop.body.value.dtype == "float32x8"
