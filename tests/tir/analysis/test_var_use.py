"""tir.analysis.var_use: which vars an expression or statement uses."""

import pytest

import tir
from tir.analysis import used_var_ids, used_vars, uses_a_var, uses_any_var, uses_only, uses_var

i, j, n = tir.Var("i"), tir.Var("j"), tir.Var("n")
A = tir.decl_buffer((n,), "float32", "A")


@pytest.mark.parametrize("expr, var, expected", [
    (i + 1, i, True),
    (i + 1, j, False),
    (tir.Cast("int64", i * 2), i, True),
    (tir.Ramp(i, 1, 4), i, True),
    (tir.Broadcast(j, 4), i, False),
    (tir.Let(j, i + 1, j * 2), i, True),   # used in the value
    (tir.Let(i, j, i + 1), i, True),       # used in the body (the binding is not a use)
    (tir.Let(i, j, j + 1), i, False),      # only bound: no use
    (tir.BufferLoad(A, [i]), i, True),
    (tir.BufferLoad(A, [j]), n, False),    # the buffer's shape is not walked
    (tir.const(3), i, False),
])
def test_uses_var_expressions(expr, var, expected):
    assert uses_var(expr, var) is expected


def test_uses_var_is_identity_not_name():
    other_i = tir.Var("i")
    assert not uses_var(i + 1, other_i)


def test_uses_var_statements():
    store = tir.BufferStore(A, tir.FloatImm("float32", 1.0), [j])
    loop = tir.For(i, 0, n, tir.ForKind.SERIAL, store)
    assert uses_var(loop, j)
    assert uses_var(loop, n)              # the extent
    assert not uses_var(loop, i)          # bound by the loop, not used in the body
    guarded = tir.IfThenElse(i < n, store)
    assert uses_var(guarded, i)
    assert uses_var(tir.LetStmt(i, j, tir.Evaluate(i)), j)
    assert not uses_var(tir.LetStmt(i, tir.const(0), tir.Evaluate(j)), i)


def test_uses_var_on_a_sequence_of_nodes():
    assert uses_var((j, i + 1), i)
    assert not uses_var([j, n], i)
    assert not uses_var((), i)


@pytest.mark.parametrize("given", [[i, n], {id(i), id(n)}, {id(i): 0, id(n): 1}.keys()])
def test_uses_any_var_takes_vars_or_ids(given):
    assert uses_any_var(j + n, given)
    assert not uses_any_var(j * 2, given)


def test_uses_any_var_with_no_vars():
    assert not uses_any_var(i + j, set())
    assert not uses_any_var(i + j, [])


def test_uses_a_var():
    assert uses_a_var(tir.Cast("int64", i))
    assert not uses_a_var(tir.const(1) + tir.const(2))
    assert not uses_a_var(tir.BufferLoad(A, [tir.const(0)]))  # buffers are leaves


def test_uses_only():
    assert uses_only(i * n + 1, [i, n])
    assert not uses_only(i * n + j, [i, n])
    assert uses_only(tir.const(4), [])
    # an occurrence of a var bound inside still counts (as in TVM's UsesVar)
    assert not uses_only(tir.Let(j, i, j + 1), {id(i)})
    assert uses_only(tir.Let(j, i, j + 1), {id(i), id(j)})


def test_used_vars_in_order_once():
    e = (j + i) * (i + n) + j
    assert [v.name for v in used_vars(e)] == ["j", "i", "n"]
    assert used_var_ids(e) == {id(i), id(j), id(n)}
    assert [v.name for v in used_vars([n + 1, i + n])] == ["n", "i"]
    assert used_vars(tir.const(1)) == []
