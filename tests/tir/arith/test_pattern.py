"""Pattern matching and rule application, the machinery behind the rule tables."""

from __future__ import annotations

import pytest

import tir
from tir.arith.pattern import Match, PConst, PVar, Rule, broadcast, match, ramp, same_expr

from .helpers import assert_same

x, y = tir.var("x"), tir.var("y")
px, py, c1 = PVar("x"), PVar("y"), PConst("c1")


def test_repeated_variable_needs_equal_expressions():
    env: dict = {}
    assert match(px - px, (x + 1) - (x + 1), env)
    assert same_expr(env["x"], x + 1)
    assert not match(px - px, (x + 1) - (x + 2), {})


def test_constants_match_constants_of_any_dtype():
    assert match(px + 1, tir.Add(tir.var("v", "int64"), tir.const(1, "int64")), {})
    assert not match(px + 1, x + 2, {})
    assert match(px * c1, x * 8, {})
    assert not match(px * c1, x * y, {})


def test_vector_patterns_bind_the_lane_count():
    env: dict = {}
    assert match(ramp(px, c1) + broadcast(py), tir.Ramp(x, 1, 8) + tir.Broadcast(y, 8), env)
    assert env["lanes"] == 8
    assert not match(ramp(px, c1), tir.Broadcast(x, 8), {})


def test_rule_applies_with_condition_and_keeps_dtype():
    rule = Rule(px * c1 + px, px * (c1 + 1), lambda m: m.v("c1") > 0)
    assert_same(rule.apply(x * 3 + x, None), x * 4)
    assert rule.apply(x * -3 + x, None) is None
    v64 = tir.var("v", "int64")
    to_zero = Rule(px - px, 0)
    out = to_zero.apply(v64 - v64, None)
    assert out.dtype == "int64" and out.value == 0
    assert to_zero.apply(x - y, None) is None


def test_match_object_names_missing_variables():
    m = Match({"x": x}, None)
    assert m.x is x
    with pytest.raises(AttributeError, match="pattern has no variable 'z'"):
        _ = m.z


def test_same_expr_on_shared_dags_and_float_zero():
    def dag(v):
        for _ in range(60):
            v = tir.Add(v, v)
        return v

    assert same_expr(dag(x), dag(x))
    assert not same_expr(dag(x), dag(y))
    zero, neg_zero = tir.FloatImm("float32", 0.0), tir.FloatImm("float32", -0.0)
    assert not same_expr(zero, neg_zero)
