"""Random programs: whatever the vectorizer does with them (vectorize, merge, scalarize),
the result must compute what the serial loops compute.

A vectorized loop promises that its iterations do not depend on each other, so the programs
keep that promise: I is only read, and each iteration of the vectorized loops writes its own
region of O and F (or a shared element, with a value that does not depend on those loops).
"""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from vectorize_eval import assert_same_result

import tir
import transform
from tir.stmt import Allocate, BufferStore, For, ForKind, IfThenElse, LetStmt, SeqStmt

I = tir.decl_buffer((64,), "int32", name="I")
O = tir.decl_buffer((256,), "int32", name="O")
F = tir.decl_buffer((256,), "float32", name="F")
n = tir.var("n")
i, j, k = tir.var("i"), tir.var("j"), tir.var("k")


def _index(e):
    return tir.floormod(e, 64)


@st.composite
def int_exprs(draw, scope, depth=3):
    """An int32 expression over the vars in ``scope``, small enough never to overflow."""
    if depth == 0 or draw(st.integers(0, 3)) == 0:
        leaf = draw(st.sampled_from([*scope, "const", "load"]))
        if leaf == "const":
            return tir.const(draw(st.integers(-8, 8)))
        if leaf == "load":
            return I[_index(draw(int_exprs(scope, 0)))]
        return leaf
    a = draw(int_exprs(scope, depth - 1))
    b = draw(int_exprs(scope, depth - 1))
    c = tir.const(draw(st.sampled_from([-5, -3, -1, 1, 2, 3, 4, 8])))
    kind = draw(st.sampled_from(["add", "sub", "mul_c", "fdiv", "fmod", "tdiv", "tmod", "min",
                                 "max", "select", "let", "cast", "load"]))
    if kind == "let":
        v = tir.var("v")
        return tir.Let(v, a, v * 2 + b)
    table = {
        "add": lambda: tir.Add(a, b), "sub": lambda: tir.Sub(a, b), "mul_c": lambda: a * c,
        "fdiv": lambda: tir.FloorDiv(a, c), "fmod": lambda: tir.FloorMod(a, c),
        "tdiv": lambda: tir.Div(a, c), "tmod": lambda: tir.Mod(a, c),
        "min": lambda: tir.Min(a, b), "max": lambda: tir.Max(a, b),
        "select": lambda: tir.Select(tir.LT(a, b), a, b),
        "cast": lambda: tir.Cast("int32", tir.Cast("float32", a) * tir.const(0.5, "float32")),
        "load": lambda: I[_index(a + b)],
    }
    return table[kind]()


@st.composite
def conditions(draw, scope):
    a, b = draw(int_exprs(scope, 1)), draw(int_exprs(scope, 1))
    cond = draw(st.sampled_from([tir.LT, tir.EQ, tir.GE]))(a, b)
    if draw(st.booleans()):
        cond = tir.Not(cond)
    return cond


def _region(lo, e):
    """An element of the region of O / F that belongs to iteration (i, j) alone."""
    return (i * 8 + (j - lo)) * 8 + tir.floormod(e, 8)


@st.composite
def stmts(draw, scope, lo, depth=2):
    kinds = ["store", "store", "fstore", "shared"]
    kind = draw(st.sampled_from(kinds + ["if", "seq", "let", "loop", "alloc"] if depth else kinds))
    if kind == "store":
        index, value = draw(int_exprs(scope, 2)), draw(int_exprs(scope))
        return BufferStore(O, value, [_region(lo, index)])
    if kind == "shared":  # every iteration writes the same element, with the same value
        uniform = [v for v in scope if v is k or v is n]
        index, value = draw(int_exprs(uniform, 1)), draw(int_exprs(uniform, 2))
        return BufferStore(O, value, [200 + tir.floormod(index, 8)])
    if kind == "fstore":
        value = tir.exp(tir.Cast("float32", draw(int_exprs(scope, 2))) * tir.const(0.1, "float32"))
        return BufferStore(F, value, [_region(lo, draw(int_exprs(scope, 1)))])
    if kind == "if":
        else_case = draw(st.none() | stmts(scope, lo, depth - 1))
        return IfThenElse(draw(conditions(scope)), draw(stmts(scope, lo, depth - 1)), else_case)
    if kind == "seq":
        return SeqStmt([draw(stmts(scope, lo, depth - 1)), draw(stmts(scope, lo, depth - 1))])
    if kind == "let":
        v = tir.var("w")
        return LetStmt(v, draw(int_exprs(scope, 2)), draw(stmts([*scope, v], lo, depth - 1)))
    if kind == "alloc":  # scratch memory private to each iteration
        data = tir.Var("S", "handle")
        scratch = tir.decl_buffer((4,), "int32", name="S", data=data)
        where = tir.floormod(draw(int_exprs(scope, 1)), 4)
        fill = BufferStore(scratch, draw(int_exprs(scope)), [where])
        use = BufferStore(O, scratch[tir.floormod(draw(int_exprs(scope, 1)), 4)] + 1,
                          [_region(lo, draw(int_exprs(scope, 1)))])
        middle = draw(stmts(scope, lo, depth - 1))
        return Allocate(data, "int32", [4], True, SeqStmt([fill, middle, use]))
    extent = draw(st.sampled_from([tir.const(3), tir.floormod(j, 3) + 1]))
    return For(k, 0, extent, ForKind.SERIAL, draw(stmts([*scope, k], lo, depth - 1)))


@st.composite
def programs(draw):
    lanes = draw(st.sampled_from([2, 4, 8]))
    lo = draw(st.sampled_from([0, 0, 3, n]))
    body = For(j, lo, lanes, ForKind.VECTORIZED, draw(stmts([i, j, n], lo)))
    if draw(st.booleans()):  # nested: i vectorized too
        body = For(i, 0, draw(st.sampled_from([2, 3])), ForKind.VECTORIZED, body)
    else:
        body = For(i, 0, 3, ForKind.SERIAL, body)
    return tir.PrimFunc([I, O, F, n], body)


@settings(max_examples=100, deadline=None)
@given(programs())
def test_vectorized_program_computes_what_the_serial_one_does(func):
    after = transform.VectorizeLoop()(tir.IRModule.from_expr(func))["main"]
    rng = np.random.default_rng(0)
    arrays = {"I": rng.integers(-9, 9, 64), "O": np.zeros(256, np.int32),
              "F": np.zeros(256, np.float32)}
    assert_same_result(func, after, arrays, {"n": 5})
