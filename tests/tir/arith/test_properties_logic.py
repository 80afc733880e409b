"""Property tests for the comparison and logic rules (rules/compare.py, rules/logic.py).

The rules rewrite comparisons of unbounded variables (``x * -2 <= 3`` into
``-1 <= x``), so the inputs here use variables without ranges and are checked
on a grid of points; conditions on floats are checked with NaN among the values.
"""

from __future__ import annotations

import itertools
import math
import os

from hypothesis import given, settings
from hypothesis import strategies as st

import tir
from tir import arith
from tir import expr as E

from .helpers import evaluate, show

X, Y, Z = tir.var("x"), tir.var("y"), tir.var("z")
GRID = [{X: a, Y: b, Z: c} for a, b, c in itertools.product(
    range(-13, 14), range(-13, 14, 2), (-3, 0, 2))]

SETTINGS = settings(max_examples=int(os.environ.get("ARITH_EXAMPLES", "100")), deadline=None)

consts = st.integers(-9, 9)
divisors = st.sampled_from([1, 2, 3, 4, 5, -2, -3])


def _atom(children):
    """A side of a comparison: the shapes the rules look for."""
    pair = st.tuples(children, children)
    return st.one_of(
        st.tuples(children, consts).map(lambda p: p[0] + p[1]),
        st.tuples(children, consts).map(lambda p: p[0] - p[1]),
        st.tuples(consts, children).map(lambda p: tir.const(p[0]) - p[1]),
        st.tuples(children, consts).map(lambda p: p[0] * p[1]),
        pair.map(lambda p: p[0] + p[1]),
        pair.map(lambda p: p[0] - p[1]),
        st.tuples(children, divisors).map(lambda p: tir.floordiv(p[0], p[1])),
        st.tuples(children, divisors).map(lambda p: tir.floormod(p[0], p[1])),
        st.tuples(children, divisors).map(lambda p: tir.truncdiv(p[0], p[1])),
        st.tuples(children, divisors).map(lambda p: tir.truncmod(p[0], p[1])),
        st.tuples(children, divisors).map(lambda p: tir.floordiv(p[0], p[1]) * p[1]),
        st.tuples(children, divisors).map(lambda p: tir.truncdiv(p[0], p[1]) * p[1]),
        pair.map(lambda p: tir.min(p[0], p[1])),
        pair.map(lambda p: tir.max(p[0], p[1])),
    )


leaves = st.one_of(st.sampled_from([X, Y, Z]), consts.map(tir.const))
sides = st.recursive(leaves, _atom, max_leaves=4)
CMP = {"lt": tir.LT, "le": tir.LE, "gt": tir.GT, "ge": tir.GE, "eq": tir.EQ, "ne": tir.NE}
comparisons = st.tuples(st.sampled_from(sorted(CMP)), sides, sides).map(
    lambda p: CMP[p[0]](p[1], p[2]))


def _bools(children):
    pair = st.tuples(children, children)
    return st.one_of(
        pair.map(lambda p: tir.And(p[0], p[1])),
        pair.map(lambda p: tir.Or(p[0], p[1])),
        children.map(tir.Not),
    )


# conditions like x < 3, 2 <= x, x == 1, floordiv(x, 5) == 2, floormod(x, 5) < 3, 0 <= x - y*5
var_terms = st.one_of(
    st.sampled_from([X, Y]),
    st.tuples(st.sampled_from([X, Y]), st.integers(2, 5)).map(lambda p: tir.floordiv(*p)),
    st.tuples(st.sampled_from([X, Y]), st.integers(2, 5)).map(lambda p: tir.floormod(*p)),
    st.tuples(st.integers(-4, 4)).map(lambda p: X - Y * p[0]),
    st.tuples(st.integers(-4, 4)).map(lambda p: X + Y * p[0]),
)
simple_conds = st.one_of(
    comparisons,
    st.tuples(st.sampled_from(sorted(CMP)), var_terms, consts).map(
        lambda p: CMP[p[0]](p[1], p[2])),
    st.tuples(st.sampled_from(sorted(CMP)), consts, var_terms).map(
        lambda p: CMP[p[0]](tir.const(p[1]), p[2])),
)
conditions = st.recursive(simple_conds, _bools, max_leaves=4)


def _truth(e, points=GRID):
    return [bool(evaluate(e, env)) for env in points]


@SETTINGS
@given(comparisons)
def test_comparison_rules_preserve_truth(cond):
    out = arith.Analyzer().rewrite_simplify(cond)
    assert out.dtype == cond.dtype
    assert _truth(out) == _truth(cond), f"{show(cond)} -> {show(out)}"


@SETTINGS
@given(conditions)
def test_logic_rules_preserve_truth(cond):
    out = arith.Analyzer().rewrite_simplify(cond)
    assert _truth(out) == _truth(cond), f"{show(cond)} -> {show(out)}"


@SETTINGS
@given(conditions, st.integers(-6, 0), st.integers(0, 6))
def test_comparisons_decided_under_bounds_hold(cond, lo, hi):
    """With ranges bound, conditions fold to constants by bounds and residues: still right."""
    a = arith.Analyzer()
    a.bind(X, tir.Range(lo, hi + 1))
    a.bind(Y, tir.Range(-1, 4))
    points = [env for env in GRID if lo <= env[X] <= hi and -1 <= env[Y] <= 3]
    out = a.rewrite_simplify(cond)
    assert _truth(out, points) == _truth(cond, points), f"{show(cond)} -> {show(out)}"


# ---------------------------------------------------------------- narrow integers wrap

X8, Y8 = tir.var("x8", "int8"), tir.var("y8", "int8")
GRID8 = [{X8: a, Y8: b} for a in range(-128, 128) for b in (-128, -7, 0, 5, 127)]
conds8 = st.tuples(
    st.sampled_from(sorted(CMP)), st.sampled_from(sorted(CMP)), st.booleans(),
    st.integers(2, 100), st.integers(-130, 130), st.integers(-130, 130),
).map(lambda p: (tir.And if p[2] else tir.Or)(
    CMP[p[0]](tir.floordiv(X8, tir.const(p[3], "int8")), tir.const(max(-128, min(127, p[4])),
                                                                   "int8")),
    CMP[p[1]](tir.floormod(X8, tir.const(p[3], "int8")), tir.const(max(-128, min(127, p[5])),
                                                                  "int8"))))


@SETTINGS
@given(conds8)
def test_logic_rules_on_int8_do_not_assume_no_overflow(cond):
    """``floordiv(x, 100) == 3 && floormod(x, 100) == 4`` is never true in int8, unlike x == 304."""
    out = arith.Analyzer().rewrite_simplify(cond)
    assert _truth(out, GRID8) == _truth(cond, GRID8), f"{show(cond)} -> {show(out)}"


# ---------------------------------------------------------------- floats and NaN

FA, FB = tir.var("fa", "float32"), tir.var("fb", "float32")
FLOATS = [math.nan, -1.0, 0.0, 0.5, 1.0, 2.0]
FGRID = [{FA: a, FB: b} for a in FLOATS for b in FLOATS]
_FCMP = {E.LT: lambda a, b: a < b, E.LE: lambda a, b: a <= b, E.GT: lambda a, b: a > b,
         E.GE: lambda a, b: a >= b, E.EQ: lambda a, b: a == b, E.NE: lambda a, b: a != b}


def _feval(e, env):
    cls = type(e)
    if cls in _FCMP:
        return _FCMP[cls](_feval(e.a, env), _feval(e.b, env))
    if cls is E.And:
        return _feval(e.a, env) and _feval(e.b, env)
    if cls is E.Or:
        return _feval(e.a, env) or _feval(e.b, env)
    if cls is E.Not:
        return not _feval(e.a, env)
    if cls in (E.FloatImm, E.IntImm):
        return e.value
    return env[e]


fleaves = st.one_of(st.sampled_from([FA, FB]),
                    st.sampled_from([0.0, 1.0, 0.5, -1.0]).map(lambda v: tir.const(v, "float32")))
fconds = st.recursive(
    st.tuples(st.sampled_from(sorted(CMP)), fleaves, fleaves).map(
        lambda p: CMP[p[0]](p[1], p[2])),
    _bools, max_leaves=4)


@SETTINGS
@given(fconds)
def test_float_conditions_respect_nan(cond):
    """NaN compares false both ways: ``!(a < b)`` is not ``b <= a``, ``a < 1 || 0 < a`` not true."""
    out = arith.Analyzer().rewrite_simplify(cond)
    got = [bool(_feval(out, env)) for env in FGRID]
    want = [bool(_feval(cond, env)) for env in FGRID]
    assert got == want, f"{show(cond)} -> {show(out)}"


# ---------------------------------------------------------------- ComparisonOfProductAndSum


@SETTINGS
@given(st.integers(1, 40), st.integers(1, 40), st.integers(-60, 60), st.integers(-60, 60),
       st.booleans(), st.booleans())
def test_product_and_sum_extension_is_sound(hx, hy, c, d, swap, flip):
    """``x * y * d < (x + y) * c`` decided by the extension holds on every point of the ranges."""
    a = arith.Analyzer()
    a.enabled_extensions = arith.Extension.ComparisonOfProductAndSum
    prod, total = X * Y * tir.const(d), (Y + X if swap else X + Y) * tir.const(c)
    cond = tir.LT(total, prod) if flip else tir.LT(prod, total)
    points = [{X: i, Y: j} for i in range(1, hx + 1) for j in range(1, hy + 1)]
    with a.constraint_scope(tir.all(X > 0, Y > 0, X <= hx, Y <= hy)):
        out = a.rewrite_simplify(cond)
    if isinstance(out, E.IntImm):
        assert all(bool(evaluate(cond, env)) == bool(out.value) for env in points), show(cond)


def test_extension_flags_match_tvm():
    ext = arith.Extension
    assert ext.NoExtensions.value == 0
    assert ext.ComparisonOfProductAndSum.value == 8
    assert arith.Analyzer().enabled_extensions == ext.NoExtensions


# ---------------------------------------------------------------- constraints in scope


def test_constraint_in_scope_decides_the_same_comparison():
    """TVM's TryMatchLiteralConstraint: ``x < n`` under ``x < n`` is true, ``n <= x`` false."""
    n = tir.var("n")
    a = arith.Analyzer()
    with a.constraint_scope(X < n):
        assert a.rewrite_simplify(X < n).value == 1
        assert a.rewrite_simplify(n <= X).value == 0
        assert a.rewrite_simplify(X + 1 <= n).value == 1
        assert a.rewrite_simplify(tir.Not(X < n)).value == 0
    assert tir.structural_equal(a.rewrite_simplify(X < n), X < n)


def test_bool_var_in_scope():
    b = tir.var("b", "bool")
    a = arith.Analyzer()
    with a.constraint_scope(b):
        assert a.rewrite_simplify(b).value == 1
        assert a.rewrite_simplify(tir.Not(b)).value == 0
    with a.constraint_scope(tir.Not(b)):
        assert a.rewrite_simplify(b).value == 0
    assert a.rewrite_simplify(b) is b


@SETTINGS
@given(conditions)
def test_boolean_branches_extension_preserves_truth(cond):
    """ApplyConstraintsToBooleanBranches: each side of && / || simplified assuming the other."""
    a = arith.Analyzer()
    a.enabled_extensions = arith.Extension.ApplyConstraintsToBooleanBranches
    out = a.rewrite_simplify(cond)
    assert _truth(out) == _truth(cond), f"{show(cond)} -> {show(out)}"


def test_boolean_branches_extension_uses_the_other_side():
    b, c, n = tir.var("b", "bool"), tir.var("c", "bool"), tir.var("n")
    a = arith.Analyzer()
    cases = [(tir.And(b, tir.Or(b, c)), b), (tir.Or(b, tir.And(b, c)), b),
             (tir.And(X < n, tir.Or(X < n, c)), X < n)]
    for before, _ in cases:
        assert tir.structural_equal(a.rewrite_simplify(before), before)
    a.enabled_extensions = arith.Extension.ApplyConstraintsToBooleanBranches
    for before, after in cases:
        assert tir.structural_equal(a.rewrite_simplify(before), after), show(before)
