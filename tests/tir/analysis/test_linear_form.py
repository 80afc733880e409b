"""tir.analysis.linear_form: an integer index as sum(coeff * var) + rest."""

import pytest

import tir
from tir.analysis import (
    LinearForm,
    int_const,
    is_widening_int_cast,
    linear_coefficient,
    linear_form,
)

i, j, n = tir.Var("i"), tir.Var("j"), tir.Var("n")
A = tir.decl_buffer((16,), "int32", "A")


def _named(form: LinearForm) -> dict:
    names = {id(v): v.name for v in (i, j, n)}
    return {names[k]: c for k, c in form.coeffs.items()}


@pytest.mark.parametrize("expr, vars, coeffs, const", [
    (i, [i], {"i": 1}, 0),
    (tir.const(7), [i], {}, 7),
    (i * 4 + 3, [i], {"i": 4}, 3),
    (tir.Mul(tir.const(4), i), [i], {"i": 4}, 0),        # the constant on the left
    ((i + 1) * 4 - j * 2, [i, j], {"i": 4, "j": -2}, 4),
    (tir.Sub(i, i), [i], {"i": 0}, 0),                    # a cancelled var stays, with 0
    (tir.Cast("int64", i * 3 + 1), [i], {"i": 3}, 1),     # a widening cast is looked through
    (i * 2 + j * 5, None, {"i": 2, "j": 5}, 0),           # None: every var
])
def test_linear(expr, vars, coeffs, const):
    form = linear_form(expr, vars)
    assert form is not None
    assert _named(form) == coeffs
    assert form.const == const
    assert form.terms == ()
    assert form.is_constant_offset


def test_vectors():
    two = tir.Broadcast(tir.const(2), 4)
    # a broadcast constant factor scales; a vector free of the vars is a term
    wide_n = tir.Broadcast(n, 4)
    form = linear_form(tir.Mul(wide_n, two), [i])
    assert form.terms == ((2, wide_n),)
    # a vector that uses the var is not a linear form (its lanes differ)
    assert linear_form(tir.Mul(tir.Broadcast(i, 4), two), [i]) is None
    assert linear_form(tir.Ramp(i, 1, 4), [i]) is None


def test_vars_can_be_ids():
    form = linear_form(i * 3 + j, {id(i)})
    assert _named(form) == {"i": 3}


def test_terms_free_of_the_vars():
    form = linear_form((i + n) * 4 - n * j, [i])
    assert _named(form) == {"i": 4}
    assert form.const == 0
    assert [(s, str(t)) for s, t in form.terms] == [(4, "n"), (-1, "n * j")]
    assert not form.is_constant_offset
    assert form.coeff(i) == 4 and form.coeff(j) == 0


def test_a_var_absent():
    form = linear_form(j * 2 + 1, [i])
    assert form.coeffs == {} and form.const == 1
    assert [(s, t) for s, t in form.terms] == [(2, j)]


def test_load_of_invariant_index_is_a_term():
    load = tir.BufferLoad(A, [j])
    form = linear_form(i + load, [i])
    assert form.terms == ((1, load),)
    assert linear_form(i + load) is None  # over every var: the load uses j, not linearly


@pytest.mark.parametrize("expr", [
    i * i,                                       # a product of two vars
    i * j,
    tir.floordiv(i, 2),
    tir.floormod(i + 1, 4),
    tir.Cast("int16", i),                        # narrowing: may change the value
    tir.Cast("float32", i),
    tir.Let(j, i, j + 1),                        # a Let is not looked into
    tir.Ramp(i, 1, 4),
    tir.BufferLoad(A, [i]),
    tir.Select(i < 2, i, 0),
])
def test_not_linear(expr):
    assert linear_form(expr, [i]) is None


def test_nested_let_free_of_the_vars_is_a_term():
    inner = tir.Let(j, n, tir.Let(n, j + 1, n * 2))
    form = linear_form(i + inner, [i])
    assert _named(form) == {"i": 1}
    assert form.terms == ((1, inner),)


def test_plus_and_scaled():
    a = linear_form(i * 2 + n, [i])
    b = linear_form(i + 3, [i])
    assert _named(a.plus(b, -1)) == {"i": 1}
    assert a.plus(b, -1).const == -3
    assert a.scaled(3).terms == ((3, n),)


@pytest.mark.parametrize("expr, expected", [
    (n + (i + 1) * j * 4, "j * 4"),
    (n - i * j, "0 - j"),
    (i * 3 + 2, "3"),
    (j + n, "0"),                                  # absent: 0
    (tir.Cast("int64", i * n), "T.Cast(\"int64\", n)"),
])
def test_linear_coefficient(expr, expected):
    coeff = linear_coefficient(expr, i)
    assert coeff is not None
    assert str(tir.arith.Analyzer().simplify(coeff)) == expected


@pytest.mark.parametrize("expr", [
    i * i * n,
    tir.floordiv(i * n, 2),
    tir.Cast("int8", i),
    tir.Let(j, i, j),
    tir.BufferLoad(A, [i]),
])
def test_linear_coefficient_not_linear(expr):
    assert linear_coefficient(expr, i) is None


def test_helpers():
    assert int_const(tir.const(5)) == 5
    assert int_const(tir.Broadcast(tir.const(5), 4)) == 5
    assert int_const(i) is None
    assert is_widening_int_cast(tir.Cast("int64", i))
    assert not is_widening_int_cast(tir.Cast("int16", i))
    assert not is_widening_int_cast(tir.Cast("uint64", i))
