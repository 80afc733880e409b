"""Transfer-style access (issue 9): with config ``tir.vectorize.any_dim_access`` the
vectorizer widens an index in any dimension (columns, transposes, stores through a
column) and turns ``tir.if_then_else`` on the var into a Select of masked loads (padded
reads). Without the key it keeps TVM's rule (the statement is scalarized, with a remark).
Checked structurally and, on the interpreter, against the function before the pass.
"""

import numpy as np
import pytest
from vectorize_eval import assert_same_result

import tir
import transform
from tir.expr import Broadcast, BufferLoad, Call, Not, Ramp, Select, Shuffle
from tir.stmt import BufferStore, For, ForKind

F32 = "float32"
M = tir.decl_buffer((8, 8), F32, name="M")  # a 2-D buffer: rows and columns
T = tir.decl_buffer((8, 8), F32, name="T")
A = tir.decl_buffer((16,), F32, name="A")
B = tir.decl_buffer((16,), F32, name="B")
I = tir.decl_buffer((16,), "int32", name="I")
i, j, n = tir.var("i"), tir.var("j"), tir.var("n")
PARAMS = [M, T, A, B, I, n]
VEC = ForKind.VECTORIZED
ANY_DIM = "tir.vectorize.any_dim_access"


def arrays():
    rng = np.random.default_rng(9)
    ints = rng.integers(-3, 4, 16).astype(np.int32)
    ints[::3] = 0  # divisions by zero where the serial program does not divide
    return {"M": rng.standard_normal(64).astype(np.float32), "T": np.zeros(64, np.float32),
            "A": rng.standard_normal(16).astype(np.float32), "B": np.zeros(16, np.float32),
            "I": ints}


def vectorize(body, any_dim=True, scalars=None):
    """The vectorized function (checked against ``body`` on the interpreter) and remarks."""
    before = tir.PrimFunc(PARAMS, body)
    with transform.PassContext(config={ANY_DIM: any_dim}), \
            transform.collect_remarks() as remarks:
        after = transform.VectorizeLoop()(tir.IRModule.from_expr(before))["main"]
    for values in scalars or ({"n": 3},):
        assert_same_result(before, after, arrays(), values)
    return after, [r.line for r in remarks]


def loop(body, var=i, extent=8):
    return For(var, 0, extent, VEC, body)


def f32(value):
    return tir.const(value, F32)


def ite(cond, t, f):
    return tir.if_then_else(cond, t, f)


R8 = Ramp(0, 1, 8)


# ------------------------------------------------------------ the IR rule


def test_constructor_accepts_a_vector_in_any_dimension():
    load = BufferLoad(M, [R8, 3])
    assert load.dtype == "float32x8"
    store = BufferStore(T, load, [R8, Ramp(0, 0, 8)])
    assert store.value is load


def test_constructor_rejects_vector_indices_of_different_lanes():
    with pytest.raises(ValueError, match="vector indices into M have different lane counts"):
        BufferLoad(M, [R8, Ramp(0, 1, 4)])
    with pytest.raises(ValueError, match="vector indices into T have different lane counts"):
        BufferStore(T, Broadcast(f32(1), 8), [Ramp(0, 1, 4), R8])


def test_a_store_value_must_have_the_lanes_of_its_vector_indices():
    with pytest.raises(TypeError, match="expected float32x8, got float32x4"):
        BufferStore(T, Broadcast(f32(1), 4), [R8, 0])


# ------------------------------------------------------------ columns and broadcast dims


def test_column_load_widens_the_row_index():
    after, remarks = vectorize(loop(BufferStore(B, M[i, 3] * f32(2), [i])))
    expected = BufferStore(B, BufferLoad(M, [R8, 3]) * Broadcast(f32(2), 8), [R8])
    tir.assert_structural_equal(after.body, expected)
    assert remarks == ["main: loop i (8 lanes): vectorized"]


def test_without_the_key_a_column_stays_serial_as_in_tvm():
    after, remarks = vectorize(loop(BufferStore(B, M[i, 3], [i])), any_dim=False)
    assert isinstance(after.body, For) and after.body.kind == ForKind.SERIAL
    assert remarks == ["main: loop i (8 lanes): scalarized: buffer M is indexed by i in a "
                       "dimension other than the last"]


def test_store_through_a_column():
    after, _ = vectorize(loop(BufferStore(T, A[i] + f32(1), [i, 5])))
    tir.assert_structural_equal(
        after.body, BufferStore(T, BufferLoad(A, [R8]) + Broadcast(f32(1), 8), [R8, 5]))


def test_index_of_one_value_per_iteration_repeats_over_the_inner_lanes():
    """M[i, j] with j vectorized inside i: the row index is one value per outer iteration,
    repeated over the 4 inner lanes; the column ramp is replicated."""
    body = loop(loop(BufferStore(T, M[i, j], [i, j]), var=j, extent=4), extent=2)
    after, remarks = vectorize(body)
    rows = Shuffle([Ramp(0, 1, 2)], [q // 4 for q in range(8)])
    cols = Shuffle([Ramp(0, 1, 4)] * 2, list(range(8)))
    tir.assert_structural_equal(after.body, BufferStore(T, BufferLoad(M, [rows, cols]),
                                                        [rows, cols]))
    assert "merged with the vectorized loop(s) j" in remarks[0]


def test_transpose_of_two_nested_vectorized_loops():
    after, _ = vectorize(loop(loop(BufferStore(T, M[j, i], [i, j]), var=j)))
    outer = Shuffle([R8], [q // 8 for q in range(64)])  # i: one value per outer lane
    inner = Shuffle([R8] * 8, list(range(64)))  # j: the inner ramp in every outer lane
    tir.assert_structural_equal(after.body, BufferStore(T, BufferLoad(M, [inner, outer]),
                                                        [outer, inner]))


def test_every_iteration_reading_one_element_loads_it_once():
    after, _ = vectorize(loop(BufferStore(B, M[n, 2], [i])))
    tir.assert_structural_equal(after.body, BufferStore(B, Broadcast(M[n, 2], 8), [R8]))


def test_in_place_transpose_keeps_the_outer_loop_serial():
    """M[i, j] = M[j, i] under two vectorized loops: the outer lanes would read rows other
    lanes already wrote (the serial order differs), so the dependence analysis refuses."""
    after, remarks = vectorize(loop(loop(BufferStore(M, M[j, i], [i, j]), var=j)))
    assert remarks[0].startswith("main: loop i (8 lanes): not vectorized")
    assert isinstance(after.body, For) and after.body.kind == ForKind.SERIAL


# ------------------------------------------------------------ padded reads


def test_padded_read_is_a_select_of_a_masked_load():
    cond = tir.all(0 <= i - 1, i - 1 < 16)
    after, remarks = vectorize(loop(BufferStore(B, ite(cond, A[i - 1], f32(0.5)), [i])))
    store = after.body
    assert isinstance(store.value, Select)
    load = store.value.true_value
    assert isinstance(load, BufferLoad) and load.predicate is not None
    tir.assert_structural_equal(load.indices[0], Ramp(-1, 1, 8))
    tir.assert_structural_equal(load.predicate, store.value.condition)
    tir.assert_structural_equal(store.value.false_value, Broadcast(f32(0.5), 8))
    assert remarks == ["main: loop i (8 lanes): vectorized: if_then_else on i - 1 >= 0 and "
                       "i - 1 < 16 reads under a lane mask"]


def test_without_the_key_a_padded_read_stays_serial_as_in_tvm():
    cond = tir.all(0 <= i - 1, i - 1 < 16)
    _, remarks = vectorize(loop(BufferStore(B, ite(cond, A[i - 1], f32(0)), [i])),
                           any_dim=False)
    assert remarks == ["main: loop i (8 lanes): scalarized: if_then_else condition depends "
                       "on i"]


def test_loads_provably_in_bounds_are_not_masked():
    after, _ = vectorize(loop(BufferStore(B, ite(i < 4, A[i], A[i + 8]), [i])))
    value = after.body.value
    tir.assert_structural_equal(value, Select(R8 < Broadcast(4, 8), BufferLoad(A, [R8]),
                                              BufferLoad(A, [Ramp(8, 1, 8)])))


def test_false_branch_loads_take_the_negated_condition():
    after, _ = vectorize(loop(BufferStore(B, ite(i < n, f32(0), A[i + n]), [i])),
                         scalars=[{"n": 3}, {"n": 9}, {"n": 0}, {"n": 16}])
    load = after.body.value.false_value
    assert isinstance(load, BufferLoad)
    tir.assert_structural_equal(load.predicate, Not(R8 < Broadcast(n, 8)))


def test_a_uniform_load_outside_the_buffer_is_not_read_by_masked_lanes():
    """A[n] is read only by the iterations with i >= n (all in bounds then); with n = 200
    no iteration reads it, and neither may the vector code (the interpreter checks)."""
    after, _ = vectorize(loop(BufferStore(B, ite(n <= i, A[n], f32(1)), [i])),
                         scalars=[{"n": 3}, {"n": 200}, {"n": 0}])
    load = after.body.value.true_value
    assert isinstance(load, BufferLoad) and load.dtype == "float32x8"
    assert load.predicate is not None


def test_integer_division_in_a_branch_divides_by_one_where_it_is_not_evaluated():
    value = ite(I[i] != 0, tir.truncdiv(tir.const(100, "int32"), I[i]), tir.const(-1, "int32"))
    after, _ = vectorize(loop(BufferStore(I, value, [i + 8])))
    division = after.body.value.true_value
    assert isinstance(division.b, Select)


def test_nested_padded_reads_and_the_matrix_edge():
    """A 2-D read padded in both directions: the column mask inside the row mask."""
    inner = ite(j + 1 < 8, M[i + 1, j + 1], f32(-2))
    body = BufferStore(T, ite(i + 1 < 8, inner, f32(-3)), [i, j])
    after, _ = vectorize(loop(loop(body, var=j)))
    assert isinstance(after.body.value, Select)


def test_calls_with_side_effects_in_a_branch_still_scalarize():
    effect = Call(F32, "tir.call_extern", [tir.StringImm("f"), A[i]])
    _, remarks = vectorize(loop(BufferStore(B, ite(i < 4, effect, f32(0)), [i])))
    assert remarks == ["main: loop i (8 lanes): scalarized: the call of extern function 'f' "
                       "has side effects"]  # and no note of a masked read that did not happen


def test_the_remark_notes_masked_reads_only_of_statements_that_vectorized():
    padded = BufferStore(B, ite(i < n, A[i + n], f32(0)), [i])
    effect = BufferStore(T, ite(i < 4, Call(F32, "tir.call_extern", [tir.StringImm("f")]),
                                f32(0)), [i, 0])
    _, remarks = vectorize(loop(tir.SeqStmt([padded, effect])))
    assert remarks == ["main: loop i (8 lanes): partially vectorized: if_then_else on i < n "
                       "reads under a lane mask; the call of extern function 'f' has side "
                       "effects"]


# ------------------------------------------------------------ dependences across rows


def test_column_recurrence_stays_serial():
    """M[i + 1, 2] = M[i, 2] * 2: each row reads what the previous iteration wrote."""
    after, remarks = vectorize(loop(BufferStore(M, M[i, 2] * f32(2), [i + 1, 2]), extent=7))
    assert remarks == ["main: loop i (7 lanes): not vectorized: M[i, 2] reads what "
                       "M[i + 1, 2] writes in the previous iteration (distance 1)"]
    assert after.body.kind == ForKind.SERIAL


def test_columns_that_never_meet_vectorize():
    after, remarks = vectorize(loop(BufferStore(M, M[i, 3] * f32(2), [i, 2])))
    assert remarks == ["main: loop i (8 lanes): vectorized"]
    tir.assert_structural_equal(
        after.body, BufferStore(M, BufferLoad(M, [R8, 3]) * Broadcast(f32(2), 8), [R8, 2]))


def test_three_nested_loops_permuting_axes():
    X = tir.decl_buffer((4, 4, 4), F32, name="X", data=M.data)  # M's memory, 3-D
    a, b, c = tir.var("a"), tir.var("b"), tir.var("c")

    def nest3(body):
        return For(a, 0, 4, VEC, For(b, 0, 4, VEC, For(c, 0, 4, VEC, body)))

    after, remarks = vectorize(nest3(BufferStore(T, X[c, a, b] + f32(1), [a * 2, b + c])))
    assert remarks[0].startswith("main: loop a (4 lanes): vectorized")
    assert after.body.value.dtype == "float32x64"
    # in place, the permutation reads elements other lanes write first: serial
    _, remarks = vectorize(nest3(BufferStore(X, X[c, a, b], [a, b, c])))
    assert all("not vectorized" in r for r in remarks)


def test_a_flat_view_of_the_same_memory_is_compared_element_by_element():
    """W views M's memory flat: the analysis flattens both accesses (vector indices in
    every dimension included) and finds that column 0 and column 1 never meet."""
    W = tir.decl_buffer((64,), F32, name="W", data=M.data)
    after, remarks = vectorize(loop(BufferStore(M, W[i * 8 + 1] * f32(2), [i, 0])))
    assert remarks == ["main: loop i (8 lanes): vectorized"]
    tir.assert_structural_equal(after.body.indices[0], R8)
    # row i + 1 written by iteration i is read (flat) by iteration i + 1
    overlapping = loop(BufferStore(M, W[i * 8] * f32(2), [i + 1, 0]), extent=7)
    _, remarks = vectorize(overlapping)
    assert remarks[0].startswith("main: loop i (7 lanes): not vectorized")
    # the same after the inner loop over columns is vector code (vector indices, flattened)
    nested = loop(loop(BufferStore(M, W[i * 8 + j] * f32(2), [i + 1, j]), var=j), extent=7)
    _, remarks = vectorize(nested)
    assert remarks[0].startswith("main: loop i (7 lanes): not vectorized")
    assert remarks[1] == "main: loop j (8 lanes): vectorized"


def test_no_note_of_a_masked_read_in_a_statement_that_stayed_serial():
    call = Call(F32, "tir.call_extern", [tir.StringImm("f")])
    body = BufferStore(B, ite(i < n, A[i + n], f32(0)) + call, [i])
    _, remarks = vectorize(loop(body))
    assert remarks == ["main: loop i (8 lanes): scalarized: the call of extern function 'f' "
                       "has side effects"]
