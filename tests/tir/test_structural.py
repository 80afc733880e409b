"""Structural equality and hashing: alpha-equivalence, free vars, buffers, paths, hash agreement."""

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tir
from tir import ForKind, assert_structural_equal, structural_equal, structural_hash

A = tir.decl_buffer((16,), "float32", "A")


def loop(dtype="int32", kind=ForKind.SERIAL, value=1.0, annotations=None):
    """``for i in range(16): A[i] = A[i] + value`` with a fresh loop var."""
    i = tir.Var("i", dtype)
    index = i if dtype == "int32" else tir.Cast("int32", i)
    body = tir.BufferStore(A, A[index] + value, [index])
    return tir.For(i, tir.const(0, dtype), tir.const(16, dtype), kind, body, annotations)


def seed_function(extent=4):
    n = tir.Var("n")
    ib = tir.ir_builder.create()
    a = ib.pointer("float32", name="A")
    with ib.for_range(0, n, name="i") as i:
        with ib.for_range(0, extent, kind="vectorize", name="j") as j:
            a[i * 4 + j] += tir.const(1, "float32")
    return tir.PrimFunc([a, n], ib.get())


def assert_equal_and_same_hash(a, b, map_free_vars=False):
    assert structural_equal(a, b, map_free_vars)
    assert structural_hash(a, map_free_vars) == structural_hash(b, map_free_vars)


# ---------------------------------------------------------------- alpha-equivalence


def test_independently_built_loops_are_equal():
    assert_equal_and_same_hash(loop(), loop())


def test_loop_var_dtype_matters():
    assert not structural_equal(loop("int32"), loop("int64"))


def test_independently_built_lets_are_equal():
    def let():
        v = tir.Var("v")
        return tir.Let(v, 3, v * v)

    def let_stmt():
        v = tir.Var("w")
        return tir.LetStmt(v, 3, tir.Evaluate(v + 1))

    assert_equal_and_same_hash(let(), let())
    assert_equal_and_same_hash(let_stmt(), let_stmt())


def test_independently_built_functions_are_equal():
    assert_equal_and_same_hash(seed_function(), seed_function())
    assert not structural_equal(seed_function(4), seed_function(8))
    assert_equal_and_same_hash(tir.IRModule.from_expr(seed_function()),
                               tir.IRModule.from_expr(seed_function()))


def test_bound_vars_pair_one_to_one():
    a, b, c, d = (tir.Var(n) for n in "abcd")
    lhs = tir.Let(a, 1, tir.Let(b, 2, a + b))
    assert structural_equal(lhs, tir.Let(c, 1, tir.Let(d, 2, c + d)))
    assert not structural_equal(lhs, tir.Let(c, 1, tir.Let(d, 2, c + c)))
    assert not structural_equal(lhs, tir.Let(c, 1, tir.Let(d, 2, d + c)))


def test_shadowing_is_not_confused_with_the_outer_binding():
    i, j, k = tir.Var("i"), tir.Var("j"), tir.Var("k")
    lhs = tir.Let(i, 1, tir.Let(j, 2, i))
    rhs = tir.Let(k, 1, tir.Let(k, 2, k))  # the use means the inner k, not the outer
    assert not structural_equal(lhs, rhs)
    assert not structural_equal(rhs, lhs)


def test_a_var_rebound_in_sibling_scopes():
    v = tir.Var("v")
    reused = tir.SeqStmt([tir.LetStmt(v, 1, tir.Evaluate(v)), tir.LetStmt(v, 2, tir.Evaluate(v))])
    w1, w2 = tir.Var("w"), tir.Var("w")
    fresh = tir.SeqStmt([tir.LetStmt(w1, 1, tir.Evaluate(w1)),
                         tir.LetStmt(w2, 2, tir.Evaluate(w2))])
    assert_equal_and_same_hash(reused, fresh)


def test_size_var_differs_from_var():
    assert not structural_equal(tir.SizeVar("n") + 1, tir.Var("n") + 1, map_free_vars=True)


# ---------------------------------------------------------------- free variables


def test_free_vars_are_equal_only_to_themselves_by_default():
    x, y = tir.Var("x"), tir.Var("y")
    assert structural_equal(x + 1, x + 1)
    assert not structural_equal(x + 1, y + 1)
    assert not structural_equal(x + 1, tir.Var("x") + 1)  # the name does not make it the same


def test_map_free_vars_pairs_them_on_first_meeting():
    x, y, u, v = (tir.Var(n) for n in "xyuv")
    assert_equal_and_same_hash(x + y, u + v, map_free_vars=True)
    assert not structural_equal(x + y, u + u, map_free_vars=True)
    assert not structural_equal(x + x, u + v, map_free_vars=True)
    assert not structural_equal(x + 1, tir.Var("f", "float32") + 1.0, map_free_vars=True)


def test_hash_ignores_names_and_identity():
    assert structural_hash(tir.Var("x") * 2) == structural_hash(tir.Var("y") * 2)
    e = tir.Var("x") + 2
    assert structural_hash(e) == structural_hash(e)
    assert structural_hash(tir.Var("x") * 2) != structural_hash(tir.Var("x") * 3)


# ---------------------------------------------------------------- data fields


def test_annotations_compare_as_dicts():
    first = loop(annotations={"a": 1, "b": "x"})
    second = loop(annotations={"b": "x", "a": 1})
    assert_equal_and_same_hash(first, second)
    assert not structural_equal(first, loop(annotations={"a": 2, "b": "x"}))
    assert not structural_equal(first, loop())


def test_float_constants_compare_bit_for_bit():
    nan = float("nan")
    assert_equal_and_same_hash(tir.FloatImm("float32", nan), tir.FloatImm("float32", nan))
    assert not structural_equal(tir.FloatImm("float32", 0.0), tir.FloatImm("float32", -0.0))
    assert not structural_equal(tir.FloatImm("float32", 1.0), tir.FloatImm("float64", 1.0))


def test_scalable_lanes_compare_structurally():
    x = tir.Var("x")
    assert_equal_and_same_hash(tir.Ramp(x, 1, 4 * tir.vscale()), tir.Ramp(x, 1, 4 * tir.vscale()))
    assert not structural_equal(tir.Ramp(x, 1, 4 * tir.vscale()), tir.Ramp(x, 1, 8 * tir.vscale()))


# ---------------------------------------------------------------- buffers and functions


def test_buffers_identical_or_structurally_alike_pair_one_to_one():
    data = tir.Var("B", "handle")
    b1 = tir.decl_buffer((16,), "float32", "B", data=data)
    b2 = tir.decl_buffer((16,), "float32", "other name", data=data)
    assert_equal_and_same_hash(b1[0], b1[0])
    assert_equal_and_same_hash(b1[0], b2[0])
    assert not structural_equal(b1[0] + b1[1], b1[0] + b2[1])
    assert not structural_equal(b1[0] + b2[1], b1[0] + b1[1])


def test_buffers_with_other_shapes_differ():
    data = tir.Var("B", "handle")
    b1 = tir.decl_buffer((16,), "float32", "B", data=data)
    b2 = tir.decl_buffer((8,), "float32", "B", data=data)
    with pytest.raises(ValueError, match=r"at buffer\.shape\[0\]: value differs: 16 vs 8"):
        assert_structural_equal(b1[0], b2[0])


def test_function_buffers_map_param_by_param():
    def func(shape_dtype="int32", swap=False):
        m = tir.Var("m", shape_dtype)
        B = tir.decl_buffer((m,), "float32", "B")
        C = tir.decl_buffer((m,), "float32", "C")
        i = tir.Var("i", shape_dtype)
        src, dst = (C, B) if swap else (B, C)
        body = tir.For(i, tir.const(0, shape_dtype), m, ForKind.SERIAL,
                       tir.BufferStore(dst, src[i], [i]))
        return tir.PrimFunc([B, C], body)

    assert_equal_and_same_hash(func(), func())
    assert not structural_equal(func(), func(swap=True))
    with pytest.raises(ValueError, match=r"at buffer_map\[B\]\.shape\[0\]: variable dtypes"):
        assert_structural_equal(func(), func("int64"))


def test_a_shape_var_first_met_inside_an_expression_is_defined_there():
    # (w + 2,) defines w as (w,) would: TVM's DefEqual maps the free vars below a
    # definition point. Two such functions built apart are equal; swapped uses are not.
    def func(swap=False):
        w = tir.size_var("w")
        A = tir.decl_buffer((w + 2,), "float32", "A")
        B = tir.decl_buffer((w,), "float32", "B")
        i = tir.Var("i")
        src, dst = (B, A) if swap else (A, B)
        body = tir.For(i, 0, w, ForKind.SERIAL, tir.BufferStore(dst, src[i], [i]))
        return tir.PrimFunc([A, B], body)

    assert_equal_and_same_hash(func(), func())
    assert not structural_equal(func(), func(swap=True))
    h, w = tir.size_var("h"), tir.size_var("w")
    two = tir.PrimFunc([tir.decl_buffer((h + w,), "float32", "A"),
                        tir.decl_buffer((h,), "float32", "B")], tir.Evaluate(0))
    h2, w2 = tir.size_var("h"), tir.size_var("w")
    other = tir.PrimFunc([tir.decl_buffer((h2 + w2,), "float32", "A"),
                          tir.decl_buffer((w2,), "float32", "B")], tir.Evaluate(0))
    with pytest.raises(ValueError, match=r"buffer_map\[B\]\.shape\[0\]"):
        assert_structural_equal(two, other)  # B's extent is the first var of A's, not the second


def test_param_count_and_kinds():
    n, m = tir.Var("n"), tir.Var("m")
    with pytest.raises(ValueError, match=r"at params: lengths differ: 1 vs 2"):
        assert_structural_equal(tir.PrimFunc([n], tir.Evaluate(n)),
                                tir.PrimFunc([n, m], tir.Evaluate(n)))
    f64 = tir.Var("n", "int64")
    with pytest.raises(ValueError, match=r"at params\[0\]: variable dtypes differ"):
        assert_structural_equal(tir.PrimFunc([n], tir.Evaluate(0)),
                                tir.PrimFunc([f64], tir.Evaluate(0)))


# ---------------------------------------------------------------- mismatch messages


def test_mismatch_path_names_fields_and_shows_both_sides():
    def func(c):
        i, j = tir.Var("i"), tir.Var("j")
        store = tir.BufferStore(A, tir.Add(A[i + j], tir.FloatImm("float32", c)), [i + j])
        body = tir.For(i, 0, 4, ForKind.SERIAL, tir.For(j, 0, 4, ForKind.SERIAL, store))
        return body

    with pytest.raises(ValueError) as info:
        assert_structural_equal(func(1.0), func(2.0))
    message = str(info.value)
    assert message.startswith("structural mismatch at body.body.value.b: value differs: 1.0 vs 2.0")
    assert "lhs: T.float32(1)" in message and "rhs: T.float32(2)" in message


def test_mismatch_path_in_sequences():
    stores = [tir.BufferStore(A, tir.FloatImm("float32", k), [k]) for k in range(5)]
    other = stores[:3] + [tir.BufferStore(A, tir.FloatImm("float32", 3.0), [9])] + stores[4:]
    with pytest.raises(ValueError, match=r"at seq\[3\]\.indices\[0\]: value differs: 3 vs 9"):
        assert_structural_equal(tir.SeqStmt(stores), tir.SeqStmt(other))
    with pytest.raises(ValueError, match=r"at seq: lengths differ: 5 vs 4"):
        assert_structural_equal(tir.SeqStmt(stores), tir.SeqStmt(stores[:4]))


def test_mismatch_messages_for_kinds_types_and_vars():
    with pytest.raises(ValueError, match=r"at <root>: kind differs"):
        assert_structural_equal(loop(), loop(kind=ForKind.PARALLEL))
    with pytest.raises(ValueError, match=r"at loop_var: variable dtypes differ: int32 vs int64"):
        assert_structural_equal(loop(), loop("int64"))
    x, y = tir.Var("x"), tir.Var("y")
    with pytest.raises(ValueError, match=r"at b: node types differ: IntImm vs Var"):
        assert_structural_equal(x + 1, x + y)
    with pytest.raises(ValueError, match=r"at a: free variables x and y differ .*map_free_vars"):
        assert_structural_equal(x + 1, y + 1)
    assert_structural_equal(x + 1, y + 1, map_free_vars=True)


def test_mismatch_sides_are_truncated():
    big = tir.SeqStmt([tir.Evaluate(k) for k in range(200)])
    with pytest.raises(ValueError) as info:
        assert_structural_equal(big, tir.Evaluate(0))
    lines = str(info.value).splitlines()
    assert lines[0].startswith("structural mismatch at <root>: node types differ: SeqStmt")
    assert len(str(info.value)) < 800 and "..." in str(info.value)


# ---------------------------------------------------------------- random programs


def random_program(seed: int, tweak: bool = False):
    """A random statement over fresh vars; the same seed gives the same structure.

    With ``tweak``, one constant somewhere differs by one.
    """
    rng = random.Random(seed)
    x, y = tir.Var("x"), tir.Var("y")
    buf = tir.decl_buffer((64,), "int32", "B", data=A.data)
    target = rng.randrange(1, 4)
    counter = [0]

    def const():
        counter[0] += 1
        return rng.randrange(1, 9) + (1 if tweak and counter[0] == target else 0)

    def expr(depth, scope):
        if depth == 0 or rng.random() < 0.2:
            choice = rng.randrange(3)
            return rng.choice(scope) if choice < 2 else tir.IntImm("int32", const())
        kind = rng.randrange(7)
        a, b = expr(depth - 1, scope), expr(depth - 1, scope)
        if kind == 5:
            v = tir.Var("v")
            return tir.Let(v, a, tir.Add(expr(depth - 1, scope + [v]), b))
        if kind == 6:
            return tir.Select(tir.LT(a, b), a, buf[tir.FloorMod(b, 64)])
        return (tir.Add, tir.Sub, tir.Mul, tir.Min, tir.Max)[kind](a, b)

    def stmt(depth, scope):
        kind = rng.randrange(4) if depth else 0
        if kind == 0:
            return tir.BufferStore(buf, expr(3, scope), [tir.FloorMod(expr(2, scope), 64)])
        if kind == 1:
            i = tir.Var("i")
            return tir.For(i, 0, const(), ForKind.SERIAL, stmt(depth - 1, scope + [i]))
        if kind == 2:
            return tir.SeqStmt([stmt(depth - 1, scope) for _ in range(rng.randrange(1, 4))])
        return tir.IfThenElse(tir.LT(expr(2, scope), const()), stmt(depth - 1, scope))

    return tir.SeqStmt([stmt(4, [x, y]), tir.Evaluate(x + y)]), (x, y)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10**6))
def test_random_programs_equal_copies_hash_equal(seed):
    a, _ = random_program(seed)
    b, _ = random_program(seed)
    assert structural_equal(a, b, map_free_vars=True)
    assert structural_hash(a) == structural_hash(b)
    assert not structural_equal(a, b)  # the free vars x, y are new objects in b


def test_random_tweaked_programs_usually_differ():
    differ = same_hash = 0
    for seed in range(60):
        a, _ = random_program(seed)
        b, _ = random_program(seed, tweak=True)
        if not structural_equal(a, b, map_free_vars=True):
            differ += 1
            same_hash += structural_hash(a) == structural_hash(b)
    assert differ > 40  # the tweak lands on a constant in most programs
    assert same_hash == 0


def test_ranges_compare_by_fields_and_unknown_plain_nodes_by_identity():
    assert_equal_and_same_hash(tir.Range(0, 8), tir.Range(0, 8))
    assert not structural_equal(tir.Range(0, 8), tir.Range(1, 8))

    class Opaque(tir.Node):
        """A node without attrs fields."""

    one, two = Opaque(), Opaque()
    assert structural_equal([one], [one]) and not structural_equal([one], [two])
    assert structural_hash(one) == structural_hash(two)
