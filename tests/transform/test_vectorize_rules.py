"""One test per node kind the vectorizer rewrites: structure against the expected IR, and the
same result as the serial loop on the NumPy evaluator."""

import numpy as np
import pytest
from vectorize_eval import assert_same_result

import tir
import transform
from tir.expr import Broadcast, BufferLoad, Call, Cast, Let, Ramp, Shuffle
from tir.stmt import (
    Allocate,
    AttrStmt,
    BufferStore,
    Evaluate,
    For,
    ForKind,
    IfThenElse,
    LetStmt,
    SeqStmt,
)
from transform.vector import ExprVectorizer

F32 = "float32"
A = tir.decl_buffer((64,), F32, name="A")
B = tir.decl_buffer((64,), F32, name="B")
I = tir.decl_buffer((64,), "int32", name="I")
M = tir.decl_buffer((64,), "bool", name="M")
j, n, x = tir.var("j"), tir.var("n"), tir.var("x")
R = Ramp(0, 1, 4)
PARAMS = [A, B, I, M, n, x]


def arrays():
    rng = np.random.default_rng(0)
    return {"A": rng.standard_normal(64).astype(np.float32), "B": np.arange(64) * 0.5,
            "I": rng.integers(-5, 5, 64), "M": np.zeros(64, bool)}


def vloop(body, lanes=4, lo=0, var=j):
    return For(var, lo, lanes, ForKind.VECTORIZED, body)


def check(body, expected=None, scalars=None):
    """Vectorize ``body``; compare with ``expected`` and with the serial loop's result."""
    before = tir.PrimFunc(PARAMS, body)
    after = transform.VectorizeLoop()(tir.IRModule.from_expr(before))["main"]
    if expected is not None:
        tir.assert_structural_equal(after.body, expected)
    assert_same_result(before, after, arrays(), scalars or {"n": 3, "x": 2})
    return after


def f32(v, lanes=None):
    c = tir.const(v, F32)
    return c if lanes is None else Broadcast(c, lanes)


def test_var_becomes_ramp():
    check(vloop(BufferStore(I, j, [j])), BufferStore(I, R, [R]))


def test_constant_is_broadcast():
    check(vloop(BufferStore(A, f32(1.5), [j])), BufferStore(A, f32(1.5, 4), [R]))


@pytest.mark.parametrize("value, expected", [
    (lambda: n + j, lambda: Ramp(n, 1, 4)),
    (lambda: j + n, lambda: Ramp(n, 1, 4)),
    (lambda: n - j, lambda: Ramp(n, -1, 4)),
    (lambda: j - n, lambda: Ramp(tir.Sub(0, n), 1, 4)),
    (lambda: j + j, lambda: Ramp(0, 2, 4)),
], ids=["scalar+ramp", "ramp+scalar", "scalar-ramp", "ramp-scalar", "ramp+ramp"])
def test_add_sub_keep_ramps(value, expected):
    check(vloop(BufferStore(I, value(), [j])), BufferStore(I, expected(), [R]))


def test_mul_by_positive_constant_stays_ramp():
    check(vloop(BufferStore(I, j * 3, [j])), BufferStore(I, Ramp(0, 3, 4), [R]))


def test_mul_by_unknown_sign_is_elementwise():
    check(vloop(BufferStore(I, j * n, [j])), BufferStore(I, tir.Mul(R, Broadcast(n, 4)), [R]))


def test_mul_by_var_the_analyzer_proves_positive():
    """k runs over [1, 5): the analyzer proves k > 0, so j * k is Ramp(0, k, 4)."""
    k = tir.var("k")
    body = For(k, 1, 4, ForKind.SERIAL, vloop(BufferStore(I, j * k, [k * 4 + j])))
    k2 = tir.var("k")
    expected = For(k2, 1, 4, ForKind.SERIAL,
                   BufferStore(I, Ramp(0, k2, 4), [Ramp(k2 * 4, 1, 4)]))
    check(body, expected)


i = tir.var("i")


@pytest.mark.parametrize("value, expected", [
    (lambda: tir.floordiv(i * 8 + j, 8), lambda: Broadcast(i, 4)),
    (lambda: tir.floormod(i * 8 + j, 8), lambda: Ramp(0, 1, 4)),
    (lambda: tir.floordiv(j * 8, 4), lambda: Ramp(0, 2, 4)),
    (lambda: tir.floormod(j * 8, 4), lambda: Broadcast(0, 4)),
    (lambda: tir.truncdiv(i * 8 + j, 8), lambda: Broadcast(i, 4)),
    (lambda: tir.truncmod(i * 8 + j, 8), lambda: Ramp(0, 1, 4)),
    (lambda: tir.floordiv(j + 1, 3), lambda: tir.FloorDiv(Ramp(1, 1, 4), Broadcast(3, 4))),
    (lambda: tir.floormod(j + 1, 3), lambda: tir.FloorMod(Ramp(1, 1, 4), Broadcast(3, 4))),
    (lambda: tir.truncdiv(x * 8 + j, 8), lambda: tir.Div(Ramp(x * 8, 1, 4), Broadcast(8, 4))),
    (lambda: tir.truncmod(x * 8 + j, 8), lambda: tir.Mod(Ramp(x * 8, 1, 4), Broadcast(8, 4))),
], ids=["floordiv-one-block", "floormod-one-block", "floordiv-stride-multiple",
        "floormod-stride-multiple", "truncdiv-nonnegative", "truncmod-nonnegative",
        "floordiv-crossing", "floormod-crossing", "truncdiv-unknown-sign",
        "truncmod-unknown-sign"])
def test_division_ramp_patterns(value, expected):
    """i runs over [0, n) (so i * 8 >= 0); x is a free var of unknown sign."""
    body = For(i, 0, n, ForKind.SERIAL, vloop(BufferStore(I, value(), [i * 4 + j])))
    after = check(body)
    tir.assert_structural_equal(after.body.body.value, expected(), map_free_vars=False)


@pytest.mark.parametrize("node", [tir.Min, tir.Max])
def test_min_max_elementwise(node):
    check(vloop(BufferStore(A, node(A[j], f32(0.25)), [j])),
          BufferStore(A, node(BufferLoad(A, [R]), f32(0.25, 4)), [R]))


def test_comparisons_and_logic():
    cond = tir.And(tir.LT(j, n), tir.Not(tir.GT(I[j], 0)))
    expected = tir.And(tir.LT(R, Broadcast(n, 4)),
                       tir.Not(tir.GT(BufferLoad(I, [R]), Broadcast(0, 4))))
    check(vloop(BufferStore(M, tir.Or(cond, tir.EQ(x, 7)), [j])),
          BufferStore(M, tir.Or(expected, Broadcast(tir.EQ(x, 7), 4)), [R]))


def test_select_with_scalar_condition_broadcasts_it():
    check(vloop(BufferStore(A, tir.Select(x < n, A[j], f32(0)), [j])),
          BufferStore(A, tir.Select(Broadcast(x < n, 4), BufferLoad(A, [R]), f32(0, 4)), [R]))


def test_select_with_lane_condition():
    check(vloop(BufferStore(A, tir.Select(j < n, A[j], B[j]), [j])),
          BufferStore(A, tir.Select(R < Broadcast(n, 4), BufferLoad(A, [R]),
                                    BufferLoad(B, [R])), [R]))


def test_cast():
    check(vloop(BufferStore(A, Cast(F32, j), [j])), BufferStore(A, Cast("float32x4", R), [R]))


def test_let_expression_with_vector_value_gets_vector_var():
    v = tir.var("v")
    v4 = tir.var("v", "int32x4")
    check(vloop(BufferStore(I, Let(v, j * 2, v + v), [j])),
          BufferStore(I, Let(v4, Ramp(0, 2, 4), v4 + v4), [R]))


def test_let_expression_with_scalar_value_keeps_var():
    v = tir.var("v")
    check(vloop(BufferStore(I, Let(v, n * 2, v + j), [j])),
          BufferStore(I, Let(v, n * 2, Ramp(v, 1, 4)), [R]))


def test_elementwise_intrinsic():
    check(vloop(BufferStore(A, tir.exp(A[j]), [j])),
          BufferStore(A, Call("float32x4", "tir.exp", [BufferLoad(A, [R])]), [R]))


def test_elementwise_intrinsic_with_scalar_argument_broadcasts_it():
    check(vloop(BufferStore(A, tir.fma(A[j], B[0], f32(1)), [j])),
          BufferStore(A, Call("float32x4", "tir.fma",
                              [BufferLoad(A, [R]), Broadcast(B[0], 4), f32(1, 4)]), [R]))


def test_load_with_uniform_index_is_one_scalar_load():
    check(vloop(BufferStore(A, B[tir.floordiv(j, 8)], [j])),
          BufferStore(A, Broadcast(BufferLoad(B, [0]), 4), [R]))


def test_store_with_uniform_index_keeps_the_last_lane():
    check(vloop(BufferStore(I, j * 5, [tir.floordiv(j, 8)])), BufferStore(I, 15, [0]))


def test_gather_index_stays_a_vector_index():
    check(vloop(BufferStore(A, B[j * j], [j])),
          BufferStore(A, BufferLoad(B, [tir.Mul(R, R)]), [R]))


def test_if_with_uniform_condition_keeps_the_branch():
    body = vloop(IfThenElse(x < n, BufferStore(A, B[j], [j])))
    check(body, IfThenElse(x < n, BufferStore(A, BufferLoad(B, [R]), [R])))


def test_let_stmt():
    v, v4 = tir.var("v"), tir.var("v", "int32x4")
    check(vloop(LetStmt(v, I[j] + 1, BufferStore(I, v * 2, [j]))),
          LetStmt(v4, BufferLoad(I, [R]) + Broadcast(1, 4),
                  BufferStore(I, tir.Mul(v4, Broadcast(2, 4)), [R])))


def test_inner_serial_loop():
    k, k2 = tir.var("k"), tir.var("k")
    body = vloop(For(k, 0, 3, ForKind.SERIAL, BufferStore(A, B[k * 4 + j], [k * 4 + j])))
    index = Ramp(k2 * 4, 1, 4)
    check(body, For(k2, 0, 3, ForKind.SERIAL, BufferStore(A, BufferLoad(B, [index]), [index])))


def test_allocate_gets_one_private_copy_per_lane():
    data = tir.Var("S", "handle")
    S = tir.decl_buffer((2,), F32, name="S", data=data)
    body = vloop(Allocate(data, F32, [2], True, SeqStmt([
        BufferStore(S, A[j], [0]),
        BufferStore(S, S[0] * f32(2), [1]),
        BufferStore(A, S[1] + S[0], [j]),
    ])))
    after = check(body)
    alloc = after.body
    assert isinstance(alloc, Allocate) and alloc.extents[0].value == 8
    first, second, _ = alloc.body.seq
    tir.assert_structural_equal(first.indices[0], R)
    tir.assert_structural_equal(second.indices[0], Ramp(4, 1, 4))
    assert first.buffer.shape[0].value == 8 and first.buffer.data is data


def test_attr_stmt_with_uniform_value_is_kept():
    body = vloop(AttrStmt(None, "pragma_hint", x, BufferStore(A, B[j], [j])))
    check(body, AttrStmt(None, "pragma_hint", x, BufferStore(A, BufferLoad(B, [R]), [R])))


def test_evaluate_of_pure_elementwise_call():
    check(vloop(Evaluate(tir.exp(A[j]))),
          Evaluate(Call("float32x4", "tir.exp", [BufferLoad(A, [R])])))


def test_shuffle_per_iteration():
    """Swap neighbours: a 2-lane shuffle per iteration becomes one 8-lane shuffle."""
    pair = Ramp(j * 2, 1, 2)
    body = vloop(BufferStore(A, Shuffle([B[pair]], [1, 0]), [pair]))
    expected = BufferStore(A, Shuffle([BufferLoad(B, [Ramp(0, 1, 8)])],
                                      [1, 0, 3, 2, 5, 4, 7, 6]), [Ramp(0, 1, 8)])
    check(body, expected)


def test_vector_element_buffer_replicates_a_uniform_vector():
    data, data2 = tir.Var("V", "handle"), tir.Var("W", "handle")
    V = tir.decl_buffer((8,), "float32x4", name="V", data=data)
    W = tir.decl_buffer((8,), "float32x4", name="W", data=data2)
    body = For(j, 0, 4, ForKind.VECTORIZED, BufferStore(V, W[j] + W[7], [j]))
    before = tir.PrimFunc([V, W], body)
    after = transform.VectorizeLoop()(tir.IRModule.from_expr(before))["main"]
    value = after.body.value
    assert value.dtype == "float32x16"
    assert isinstance(value.b, Shuffle) and len(value.b.vectors) == 4
    rng = np.random.default_rng(1)
    assert_same_result(before, after, {"V": np.zeros(32), "W": rng.standard_normal(32)})


def test_non_zero_min():
    body = vloop(BufferStore(I, j * 2, [j]), lo=5)
    check(body, BufferStore(I, Ramp(10, 2, 4), [Ramp(5, 1, 4)]))


def test_symbolic_min():
    body = vloop(BufferStore(A, B[j], [j]), lo=x)
    check(body, BufferStore(A, BufferLoad(B, [Ramp(x, 1, 4)]), [Ramp(x, 1, 4)]))


def test_extent_one_replaces_the_var_by_min():
    check(vloop(BufferStore(I, j, [j]), lanes=1, lo=3), BufferStore(I, 3, [3]))


def test_unchanged_expression_is_the_same_object():
    e = A[n] + f32(1)
    assert ExprVectorizer(j, 4).visit_expr(e) is e


def test_function_without_vectorized_loops_comes_back_identical():
    body = For(j, 0, 4, ForKind.SERIAL, BufferStore(A, B[j], [j]))
    mod = tir.IRModule.from_expr(tir.PrimFunc(PARAMS, body))
    with transform.collect_remarks() as remarks:
        out = transform.VectorizeLoop()(mod)
    assert out is mod and out["main"] is mod["main"]
    assert remarks == []


def test_pass_info():
    info = transform.VectorizeLoop().info
    assert (info.name, info.opt_level) == ("tir.VectorizeLoop", 0)


def test_ramp_and_broadcast_written_in_the_loop():
    """A[j*4 : j*4+4] = B[j] (four lanes per iteration) becomes one 16-lane store."""
    body = vloop(BufferStore(A, Broadcast(B[j], 4), [Ramp(j * 4, 1, 4)]))
    repeated = Shuffle([BufferLoad(B, [R])], [q // 4 for q in range(16)])
    check(body, BufferStore(A, repeated, [Ramp(0, 1, 16)]))


def test_ramp_in_the_loop_with_gaps_is_a_concatenation():
    body = vloop(BufferStore(A, Broadcast(f32(1), 2), [Ramp(j * 8, 1, 2)]))
    index = Shuffle([Ramp(8 * q, 1, 2) for q in range(4)], list(range(8)))
    check(body, BufferStore(A, f32(1, 8), [index]))


def test_vector_element_buffer_with_uniform_index():
    """float32x4 elements: reading one element for every iteration replicates its 4 lanes;
    every iteration writing one element leaves the last iteration's 4 lanes."""
    data, data2 = tir.Var("V", "handle"), tir.Var("W", "handle")
    V = tir.decl_buffer((8,), "float32x4", name="V", data=data)
    W = tir.decl_buffer((8,), "float32x4", name="W", data=data2)
    scaled = W[tir.floordiv(j, 8)] * Broadcast(tir.Cast(F32, j), 4)
    body = For(j, 0, 4, ForKind.VECTORIZED, SeqStmt([
        BufferStore(V, scaled, [j + 4]),
        BufferStore(V, W[j] + Broadcast(tir.Cast(F32, j), 4), [tir.floordiv(j, 8)]),
    ]))
    before = tir.PrimFunc([V, W], body)
    after = transform.VectorizeLoop()(tir.IRModule.from_expr(before))["main"]
    first, second = after.body.seq
    w0 = BufferLoad(W, [0])
    tir.assert_structural_equal(first.value.a, Shuffle([w0] * 4, list(range(16))))
    assert second.value.dtype == "float32x4" and second.indices[0].value == 0
    rng = np.random.default_rng(2)
    assert_same_result(before, after, {"V": np.zeros(32), "W": rng.standard_normal(32)})
