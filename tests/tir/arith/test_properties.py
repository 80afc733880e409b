"""Property tests: simplification preserves values; bounds, residues and proofs are sound.

Random integer expressions over three variables bound to small ranges are
checked exhaustively over every assignment inside those ranges.
"""

from __future__ import annotations

import itertools
import os

from hypothesis import given, settings
from hypothesis import strategies as st

import tir
from tir import arith

from .helpers import evaluate, int_expressions, lift, show

X, Y, Z = tir.var("x"), tir.var("y"), tir.var("z")
RANGES = {X: (-4, 4), Y: (0, 6), Z: (1, 5)}
ASSIGNMENTS = [dict(zip(RANGES, vals)) for vals in itertools.product(
    *(range(lo, hi + 1) for lo, hi in RANGES.values()))]


def analyzer() -> arith.Analyzer:
    a = arith.Analyzer()
    for v, (lo, hi) in RANGES.items():
        a.bind(v, tir.Range(lo, hi + 1))
    return a


leaves = st.one_of(st.sampled_from([X, Y, Z]), st.integers(-6, 6).map(tir.const))
divisors = st.sampled_from([1, 2, 3, 4, 8, -2, -4, Z, Z * 2, 0 - Z])  # Z is never 0


int_exprs = int_expressions(leaves, divisors)
comparisons = st.tuples(
    st.sampled_from(["lt", "le", "eq", "ne", "ge"]), int_exprs, int_exprs
).map(lambda p: {"lt": tir.LT, "le": tir.LE, "eq": tir.EQ, "ne": tir.NE, "ge": tir.GE}[p[0]](
    p[1], p[2]))

# ARITH_EXAMPLES=5000 for a long local search; the default keeps the file at a few seconds.
SETTINGS = settings(max_examples=int(os.environ.get("ARITH_EXAMPLES", "100")), deadline=None)


def _values(e):
    return [evaluate(e, env) for env in ASSIGNMENTS]


@SETTINGS
@given(int_exprs)
def test_simplify_preserves_values(e):
    a = analyzer()
    for fn in (a.simplify, a.rewrite_simplify, a.canonical_simplify):
        out = fn(e)
        assert out.dtype == e.dtype
        assert _values(out) == _values(e), f"{fn.__name__}: {show(e)} -> {show(out)}"


@SETTINGS
@given(int_exprs)
def test_simplify_reaches_a_fixpoint(e):
    a = analyzer()
    once = a.simplify(e)
    assert tir.structural_equal(a.simplify(once), once), show(once)


@SETTINGS
@given(int_exprs)
def test_values_lie_in_const_int_bound(e):
    bound = analyzer().const_int_bound(e)
    for v in _values(e):
        assert bound.min_value <= v <= bound.max_value, f"{show(e)}: {v} outside {bound}"


@SETTINGS
@given(int_exprs)
def test_values_satisfy_modular_set(e):
    m = analyzer().modular_set(e)
    for v in _values(e):
        if m.coeff == 0:
            assert v == m.base, f"{show(e)}: {v} != {m.base}"
        else:
            assert v % m.coeff == m.base % m.coeff, f"{show(e)}: {v} not in {m}"


@SETTINGS
@given(comparisons)
def test_can_prove_is_sound(cond):
    a = analyzer()
    values = _values(cond)
    if a.can_prove(cond):
        assert all(values), f"proved {show(cond)} but it is false somewhere"
    if a.can_prove(tir.Not(cond)):
        assert not any(values), f"proved !{show(cond)} but it is true somewhere"


@SETTINGS
@given(comparisons)
def test_simplify_preserves_comparisons(cond):
    a = analyzer()
    out = a.simplify(cond)
    assert _values(out) == _values(cond), f"{show(cond)} -> {show(out)}"


@SETTINGS
@given(int_exprs, st.integers(-3, 3))
def test_vector_simplify_preserves_lanes(e, stride):
    """Substituting x by a 4-lane ramp: the simplified vector equals the original per lane."""
    ramp = tir.Ramp(X, tir.const(stride), 4)
    v = lift(e, X, ramp)
    if v.dtype == e.dtype:  # x did not occur
        return
    a = analyzer()
    a.bind(X, tir.Range(0, 2), allow_override=True)
    out = a.simplify(v)
    bound = a.const_int_bound(v)
    envs = [env for env in ASSIGNMENTS if 0 <= env[X] < 2]
    for env in envs:
        got, want = evaluate(out, env), evaluate(v, env)
        assert got == want, f"{show(v)} -> {show(out)} at {env}"
        assert all(bound.min_value <= w <= bound.max_value for w in want)


@SETTINGS
@given(comparisons, comparisons)
def test_can_prove_under_a_constraint_is_sound(assumption, goal):
    a = analyzer()
    holds = [env for env in ASSIGNMENTS if evaluate(assumption, env)]
    with a.constraint_scope(assumption):
        proved = a.can_prove(goal)
        simplified = a.simplify(goal)
    if proved:
        assert all(evaluate(goal, env) for env in holds), (
            f"proved {show(goal)} under {show(assumption)}")
    for env in holds:
        assert evaluate(simplified, env) == evaluate(goal, env), (
            f"{show(goal)} -> {show(simplified)} under {show(assumption)} at {env}")


A8, B8 = tir.var("a8", "int8"), tir.var("b8", "int8")
WRAP_ASSIGNMENTS = [{A8: a, B8: b} for a in range(-128, 128, 9) for b in (-128, -77, -1, 0, 5, 127)]
int8_leaves = st.one_of(st.sampled_from([A8, B8]),
                        st.integers(-128, 127).map(lambda v: tir.const(v, "int8")))


def _extend8(children):
    pair = st.tuples(children, children)
    return st.one_of(
        pair.map(lambda p: p[0] + p[1]),
        pair.map(lambda p: p[0] - p[1]),
        pair.map(lambda p: tir.Mul(p[0], p[1])),
        pair.map(lambda p: tir.min(p[0], p[1])),
        pair.map(lambda p: tir.max(p[0], p[1])),
        st.tuples(children, children, children, children).map(
            lambda p: tir.Select(p[0] < p[1], p[2], p[3])),
    )


@SETTINGS
@given(st.recursive(int8_leaves, _extend8, max_leaves=8))
def test_int8_simplify_respects_wraparound(e):
    a = arith.Analyzer()
    out = a.simplify(e)
    for env in WRAP_ASSIGNMENTS:
        assert evaluate(out, env) == evaluate(e, env), f"{show(e)} -> {show(out)} at {env}"
