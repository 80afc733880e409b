"""Property tests for the arithmetic rule families (Add/Sub/Mul, division and remainder).

Random expressions shaped like the rules' patterns (``(x*c1 + y) // c2``,
``truncmod(x + c1, c2)``, ``floordiv(x + c1, 2) - floordiv(x + c2, 2)``,
``min(x, y + c1) + c2`` ...) are simplified and evaluated exhaustively over
small ranges that include negative values, where truncated and floor division
differ. Ramps divided by constants are checked lane by lane, with and without
the facts that make the lanes non-negative. Constant divisors include
negative ones; the symbolic divisor is never zero.
"""

from __future__ import annotations

import itertools
import os

from hypothesis import given, settings
from hypothesis import strategies as st

import tir
from tir import arith

from .helpers import evaluate, show

X, Y, Z = tir.var("x"), tir.var("y"), tir.var("z")
RANGES = {X: (-7, 7), Y: (-3, 9), Z: (1, 4)}
ASSIGNMENTS = [dict(zip(RANGES, vals)) for vals in itertools.product(
    *(range(lo, hi + 1) for lo, hi in RANGES.values()))]
SETTINGS = settings(max_examples=int(os.environ.get("ARITH_EXAMPLES", "150")), deadline=None)

DIVISIONS = [tir.floordiv, tir.floormod, tir.truncdiv, tir.truncmod]
leaves = st.one_of(st.sampled_from([X, Y, Z]), st.integers(-9, 9).map(tir.const))
coeffs = st.sampled_from([-8, -6, -4, -3, -2, -1, 1, 2, 3, 4, 6, 8, 12, 16])
divisors = st.sampled_from([-8, -4, -3, -2, 2, 3, 4, 5, 8, 16])


def _shaped(children):
    """The shapes the rules match, over smaller expressions."""
    pair = st.tuples(children, children)
    div = st.sampled_from(DIVISIONS)
    return st.one_of(
        pair.map(lambda p: p[0] + p[1]),
        pair.map(lambda p: p[0] - p[1]),
        st.tuples(children, coeffs).map(lambda p: p[0] * p[1]),
        pair.map(lambda p: tir.Mul(p[0], p[1])),
        st.tuples(div, children, coeffs, children, divisors).map(
            lambda p: p[0](p[1] * p[2] + p[3], p[4])),                 # (x*c1 + y) / c2
        st.tuples(div, children, coeffs, divisors).map(lambda p: p[0](p[1] + p[2], p[3])),
        st.tuples(div, children, divisors).map(lambda p: p[0](p[1], p[2])),
        st.tuples(div, children).map(lambda p: p[0](p[1], Z)),          # symbolic divisor
        st.tuples(div, children, children).map(lambda p: p[0](p[1] * Z + p[2], Z)),
        st.tuples(children, divisors, coeffs).map(
            lambda p: tir.floordiv(p[0] + p[1], 2) - tir.floordiv(p[0] + p[2], 2)),
        st.tuples(st.sampled_from([tir.floordiv, tir.truncdiv]), children, st.integers(-9, 9),
                  st.integers(-9, 9), st.sampled_from([2, 3, 5])).map(
            lambda p: p[0](p[1] + p[2], p[4]) - p[0](p[1] + p[3], p[4])),
        st.tuples(children, divisors).map(
            lambda p: tir.floormod(p[0] - tir.floormod(p[0], p[1]), abs(p[1]))),
        st.tuples(children, children, coeffs).map(
            lambda p: tir.min(p[0], p[1] + p[2]) + (0 - p[2])),
        st.tuples(children, children, coeffs).map(
            lambda p: tir.max(p[0] + p[2], p[1]) + (0 - p[2])),
        pair.map(lambda p: tir.min(p[0], p[1])),
        pair.map(lambda p: tir.max(p[0], p[1])),
    )


int_exprs = st.recursive(leaves, _shaped, max_leaves=6)


def _values(e, envs):
    return [evaluate(e, env) for env in envs]


@SETTINGS
@given(int_exprs)
def test_rewrite_preserves_values_with_bounds(e):
    """Bounds make the rules' conditions provable; the values must not change."""
    a = arith.Analyzer()
    for v, (lo, hi) in RANGES.items():
        a.bind(v, tir.Range(lo, hi + 1))
    out = a.rewrite_simplify(e)
    assert _values(out, ASSIGNMENTS) == _values(e, ASSIGNMENTS), f"{show(e)} -> {show(out)}"


@SETTINGS
@given(int_exprs, st.sampled_from([X >= 0, Y >= 0, tir.all(X >= 0, Y >= 0), X <= 0]))
def test_rewrite_preserves_values_under_a_constraint(e, fact):
    """Only Z's range is known; a sign fact holds in the scope (TVM's preconditions)."""
    a = arith.Analyzer()
    a.bind(Z, tir.Range(1, 5))
    envs = [env for env in ASSIGNMENTS if evaluate(fact, env)]
    with a.constraint_scope(fact):
        out = a.rewrite_simplify(e)
    assert _values(out, envs) == _values(e, envs), f"{show(e)} -> {show(out)} under {show(fact)}"


LANES = 4


@SETTINGS
@given(st.sampled_from(DIVISIONS), st.sampled_from([1, 2, 3, 4, 8]), st.integers(-9, 9),
       st.integers(-5, 9), divisors, st.sampled_from([None, X >= 0]))
def test_ramp_division_by_a_broadcast_keeps_each_lane(div, coeff, offset, stride, c, fact):
    """``ramp(x*k + b, s, 4) op broadcast(c)`` per lane, x of either sign unless a fact says."""
    a = arith.Analyzer()
    a.bind(X, tir.Range(-7, 8))
    e = div(tir.Ramp(X * coeff + offset, stride, LANES), tir.Broadcast(tir.const(c), LANES))
    envs = [env for env in ASSIGNMENTS if fact is None or evaluate(fact, env)]
    if fact is None:
        out = a.rewrite_simplify(e)
    else:
        with a.constraint_scope(fact):
            out = a.rewrite_simplify(e)
    for env in envs[::13]:
        assert evaluate(out, env) == evaluate(e, env), f"{show(e)} -> {show(out)} at {env}"


A8, B8 = tir.var("a8", "int8"), tir.var("b8", "int8")
WRAP_ASSIGNMENTS = [{A8: a, B8: b} for a in range(-128, 128, 7) for b in (-128, -77, -1, 0, 3, 127)]
int8_leaves = st.one_of(st.sampled_from([A8, B8]),
                        st.integers(-128, 127).map(lambda v: tir.const(v, "int8")))


def _ring_shaped(children):
    pair = st.tuples(children, children)
    return st.one_of(
        pair.map(lambda p: p[0] + p[1]),
        pair.map(lambda p: p[0] - p[1]),
        pair.map(lambda p: tir.Mul(p[0], p[1])),
        st.tuples(children, children, children).map(lambda p: p[0] * p[1] + p[0] * p[2]),
        st.tuples(children, children).map(lambda p: p[0] * p[1] - p[0]),
        st.tuples(children, st.integers(-128, -1)).map(
            lambda p: (p[0] - A8) * tir.const(p[1], "int8")),
        pair.map(lambda p: tir.min(p[0], p[1]) * tir.max(p[0], p[1])),
    )


@SETTINGS
@given(st.recursive(int8_leaves, _ring_shaped, max_leaves=6))
def test_int8_gets_only_wraparound_identities(e):
    out = arith.Analyzer().rewrite_simplify(e)
    for env in WRAP_ASSIGNMENTS:
        assert evaluate(out, env) == evaluate(e, env), f"{show(e)} -> {show(out)} at {env}"


def test_intrinsics_on_constants_fold_as_the_machine_computes():
    a = arith.Analyzer()
    for value, dtype in [(0, "int32"), (1, "int32"), (-1, "int32"), (255, "int64"), (-5, "int64")]:
        bits = int(dtype[3:])
        got = a.rewrite_simplify(tir.call_intrin("int32", "tir.clz", tir.const(value, dtype)))
        assert got.value == bits - (value & ((1 << bits) - 1)).bit_length()
    assert a.rewrite_simplify(tir.call_intrin("int32", "tir.shift_left", 3, 30)).value == -(2**30)
    assert a.rewrite_simplify(tir.call_intrin("int32", "tir.shift_right", -8, 1)).value == -4
    too_far = tir.call_intrin("int32", "tir.shift_left", 1, 32)
    assert isinstance(a.rewrite_simplify(too_far), tir.Call)  # undefined in C: not folded
