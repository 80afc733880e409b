"""Unit tests of ``tir.arith.int_set``: the sets, the evaluator's sound choices, errors."""

from __future__ import annotations

import pytest

import tir
from tir import arith
from tir.arith import IntervalSet, IntSet
from tir.arith.int_set import neg_inf, pos_inf

x, y, z = tir.var("x"), tir.var("y"), tir.var("z")


def _ends(s):
    return (s.min_value, s.max_value)


def _same(a, b):
    return arith.Analyzer().can_prove_equal(a, b)


def _values(s):
    return (s.min_value.value, s.max_value.value)


def _int_set(e, dom, setup=None):
    a = arith.Analyzer()
    if setup is not None:
        setup(a)
    return a.int_set(e, dom)


# ---------------------------------------------------------------- the sets


def test_constructors_and_queries():
    assert _values(IntervalSet(2, 3)) == (2, 3)
    p = IntSet.single_point(x)
    assert p.is_single_point() and p.point_value() is x
    assert IntSet.nothing().is_nothing() and IntSet.everything().is_everything()
    assert not IntervalSet(0, x).is_single_point()
    assert _values(IntSet.interval(1, 4)) == (1, 4)
    assert _values(IntSet.from_min_extent(3, 4)) == (3, 6)
    assert IntSet.from_range(tir.Range(5, 6)).is_single_point()
    assert IntervalSet(neg_inf(), 0).has_upper_bound()
    assert not IntervalSet(neg_inf(), 0).has_lower_bound()
    assert repr(IntervalSet(0, pos_inf())) == "IntervalSet[0, pos_inf]"


def test_int_end_takes_the_other_ends_dtype():
    x64 = tir.var("x64", "int64")
    assert IntervalSet(0, x64).min_value.dtype == "int64"


def test_union_and_intersect():
    assert _values(IntervalSet(0, 3).union(IntervalSet(5, 9))) == (0, 9)
    assert _values(IntervalSet(0, 6).intersect(IntervalSet(5, 9))) == (5, 6)
    assert IntervalSet(0, 3).intersect(IntervalSet(5, 9)).is_nothing()
    assert IntervalSet(0, 3).union(IntSet.nothing()).max_value.value == 3
    assert IntervalSet(neg_inf(), 3).union(IntervalSet(0, 4)).min_value is neg_inf()


def test_union_lower_bound_drops_a_gap():
    s = arith.int_set.union_lower_bound([IntervalSet(0, 3), IntervalSet(10, 12)])
    assert _values(s) == (0, 3)  # [0, 3] u [10, 12] is no interval: one part is kept
    s = arith.int_set.union_lower_bound([IntervalSet(0, 3), IntervalSet(4, 12)])
    assert _values(s) == (0, 12)


def test_cover_range():
    r = IntervalSet(2, x + 2).cover_range(tir.Range(0, 100))
    assert tir.structural_equal(r.extent, x + 1)
    assert IntervalSet(0, pos_inf()).cover_range(tir.Range(0, 100)).extent.value == 100


def test_vector():
    assert _values(IntSet.vector(tir.Ramp(10, -3, 4))) == (1, 10)
    assert _values(IntSet.vector(tir.Broadcast(tir.const(7), 4))) == (7, 7)
    assert IntSet.vector(x).point_value() is x


# ---------------------------------------------------------------- the evaluator


def test_symbolic_add():
    s = _int_set(x + y, {x: IntervalSet(0, 10)})
    assert s.min_value is y and _same(s.max_value, y + 10)


def test_range_domain_and_nested_domains():
    s = _int_set(x * 2, {x: tir.Range(0, 8)})
    assert _values(s) == (0, 14)
    s = _int_set(x, {x: IntervalSet(0, y), y: IntervalSet(1, 5)})
    assert _values(s) == (0, 5)


def test_mul_by_unknown_sign_uses_select():
    s = _int_set(x * y, {x: IntervalSet(1, 4)})
    assert isinstance(s.min_value, tir.Select)


def test_mul_of_two_nonnegative_sets():
    s = _int_set(x * y, {x: IntervalSet(0, 4), y: IntervalSet(z, z + 2)},
                 lambda a: a.bind(z, tir.Range(0, 10)))
    assert s.min_value.value == 0 and _same(s.max_value, z * 4 + 8)


def test_truncmod_of_a_negative_dividend():
    # TVM says [0, 3] here; truncmod(-5, 4) is -1
    assert _values(_int_set(tir.truncmod(x, 4), {x: IntervalSet(-10, 10)})) == (-3, 3)
    assert _values(_int_set(tir.truncmod(x, 4), {x: IntervalSet(-10, -1)})) == (-3, 0)


def test_floormod_by_a_negative_divisor():
    assert _values(_int_set(tir.floormod(x, -4), {x: IntervalSet(-10, 10)})) == (-3, 0)


def test_division_by_zero_gives_everything():
    s = _int_set(tir.floordiv(x, y), {x: IntervalSet(0, 4), y: IntervalSet(0, 0)})
    assert s.is_everything()


def test_narrowing_cast_without_fit_gives_everything():
    assert _int_set(tir.Cast("int8", x), {x: IntervalSet(0, 300)}).is_everything()
    assert _values(_int_set(tir.Cast("int8", x), {x: IntervalSet(0, 100)})) == (0, 100)
    s = _int_set(tir.Cast("int64", x), {x: IntervalSet(0, y)})
    assert s.max_value.dtype == "int64"


def test_wrapping_types_keep_only_fitting_constants():
    u = tir.var("u", "uint8")
    assert _int_set(u + tir.const(250, "uint8"), {u: IntervalSet(0, 10)}).is_everything()
    s = _int_set(u + tir.const(5, "uint8"), {u: IntervalSet(0, 10)})
    assert _values(s) == (5, 15)


def test_int32_constant_end_overflow_becomes_infinite():
    s = _int_set(x * 4, {x: IntervalSet(0, 2**30)})
    assert s.min_value.value == 0 and s.max_value is pos_inf()


def test_let_select_and_if_then_else():
    v = tir.var("v")
    assert _values(_int_set(tir.Let(v, x + 1, v * 2), {x: IntervalSet(0, 4)})) == (2, 10)
    assert _values(_int_set(tir.Select(x > 2, x, 0 - x), {x: IntervalSet(0, 4)})) == (-4, 4)
    s = _int_set(tir.if_then_else(y > 0, x, 7), {x: IntervalSet(0, 4)})
    assert _values(s) == (0, 7)


def test_unrelaxed_expression_is_its_own_point():
    e = tir.min(x, y) + z
    assert _int_set(e, {}).point_value() is e


def test_comparisons_are_zero_or_one():
    s = _int_set(x < 3, {x: IntervalSet(0, 4)})
    assert _values(s) == (0, 1) and s.min_value.dtype == "bool"


def test_without_dom_map_the_analyzer_bounds_are_relaxed():
    a = arith.Analyzer()
    a.bind(x, tir.Range(0, 8))
    s = a.int_set(x + y)
    assert s.min_value is y and _same(s.max_value, y + 7)


# ---------------------------------------------------------------- errors


def test_int_set_rejects_a_non_expression():
    with pytest.raises(TypeError, match="int_set: expected a PrimExpr or a number, got str"):
        arith.Analyzer().int_set("x", {})


def test_int_set_rejects_a_non_var_key():
    with pytest.raises(TypeError, match="dom_map keys must be tir.Var, got Add"):
        arith.Analyzer().int_set(x, {x + 1: IntervalSet(0, 1)})


def test_int_set_rejects_a_bad_domain():
    with pytest.raises(TypeError, match="domain of x must be an IntSet or a tir.Range, got tuple"):
        arith.Analyzer().int_set(x, {x: (0, 1)})
    with pytest.raises(TypeError, match="dom_map must be a dict"):
        arith.Analyzer().int_set(x, [x])


def test_interval_set_rejects_a_bad_end():
    with pytest.raises(TypeError, match="IntervalSet: min_value must be a PrimExpr or an int"):
        IntervalSet("a", 1)


def test_point_value_of_an_interval():
    with pytest.raises(ValueError, match="is not a single point"):
        IntervalSet(0, 1).point_value()


def test_region_estimates_reject_bad_arguments():
    with pytest.raises(TypeError, match="region must be a list of tir.Range"):
        arith.estimate_region_lower_bound([x], {x: tir.Range(0, 4)}, True)
    with pytest.raises(TypeError, match="var_dom maps tir.Var to tir.Range"):
        arith.estimate_region_upper_bound([tir.Range(0, 4)], {x: (0, 4)}, True)
    with pytest.raises(TypeError, match="predicate must be a bool PrimExpr"):
        arith.estimate_region_strict_bound([tir.Range(0, 4)], {x: tir.Range(0, 4)}, x)


# ---------------------------------------------------------------- region estimates


def test_region_strict_bound_of_a_tiled_access():
    i, j = tir.var("i"), tir.var("j")
    dom = {i: tir.Range(0, 4), j: tir.Range(0, 8)}
    region = [tir.Range.from_min_extent(i * 8 + j, 1), tir.Range.from_min_extent(z, 2)]
    out = arith.estimate_region_strict_bound(region, dom, True)
    assert _values(out[0]) == (0, 31)
    assert tir.structural_equal(out[1].max_value, z + 1)


def test_region_lower_bound_refuses_overlapping_digits():
    i = tir.var("i")
    dom = {i: tir.Range(0, 10)}
    # i % 4 and i // 2 share a digit: not every pair is touched
    region = [tir.Range.from_min_extent(i % 4, 1), tir.Range.from_min_extent(i // 2, 1)]
    assert arith.estimate_region_lower_bound(region, dom, True) is None
    upper = arith.estimate_region_upper_bound(region, dom, True)
    assert [_values(s) for s in upper] == [(0, 3), (0, 4)]


def test_region_lower_bound_refuses_a_partial_last_block():
    i = tir.var("i")
    dom = {i: tir.Range(0, 10)}
    # (i // 4, i % 4) misses (2, 2) and (2, 3): i stops at 9
    region = [tir.Range.from_min_extent(i // 4, 1), tir.Range.from_min_extent(i % 4, 1)]
    assert arith.estimate_region_lower_bound(region, dom, True) is None


def test_docstring_example():
    import doctest

    assert doctest.testmod(arith.int_set).failed == 0
