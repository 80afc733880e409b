"""speculation_hazard, and the rewrites that evaluate an expression where a fact may not hold.

``Select`` values and both sides of ``&&`` / ``||`` run whatever the other parts say, so
they are simplified under such a fact only when they hold no load, no impure call and no
division an ``if_then_else`` guards. Each case below changed meaning before: the load or
division it shows would run where its guard is false.
"""

import pytest

import tir
from tir import arith
from tir.arith.speculation import Speculation, speculation_hazard

x, n = tir.var("x"), tir.var("n")
A = tir.decl_buffer((8,), "int32", name="A")


@pytest.mark.parametrize("expr, hazard", [
    (x * 2 + tir.min(x, n), False),
    (tir.if_then_else(x < 4, x + 1, 0), False),
    (tir.floordiv(x, 4) + tir.floormod(x, 3), False),
    (tir.Let(tir.var("t"), x + 1, x * 2), False),
    (A[x] + 1, True),
    (tir.if_then_else(x < 8, A[x], 0), True),
    (tir.Select(x < 8, 0, A[tir.min(x, 7)]), True),
    (tir.Let(tir.var("t"), A[0], x), True),
    (tir.call_extern("int32", "f", x), True),
    (tir.if_then_else(n != 0, tir.floordiv(x, n), 0), True),
])
def test_speculation_hazard(expr, hazard):
    assert speculation_hazard(expr, divisions=False) is hazard


def test_unguarded_divisions_count_unless_the_caller_checks_divisors():
    div = tir.floordiv(x, n) + 1
    assert not speculation_hazard(div, divisions=False)
    assert speculation_hazard(div)
    assert speculation_hazard(tir.FloorDiv(x, tir.const(-1)) + 1)  # INT_MIN // -1
    assert not speculation_hazard(tir.floordiv(x, 3))  # a constant divisor never traps
    assert not speculation_hazard(tir.Div(tir.const(1.0), tir.var("f", "float32")))


def test_answers_are_remembered_per_node():
    """A deep nest of Selects costs one visit per node, however often it is asked about."""
    spec, e = Speculation(), x
    for k in range(3000):
        e = tir.Select(x < k, e + 1, x * k)
    assert not spec.hazard(e)
    assert spec.hazard(tir.Select(x < 0, e, A[0]))
    assert len(spec._memo) <= 8 * 3000 + 10  # each Select brings 8 nodes


def test_select_values_keep_load_guards_and_simplify_arithmetic():
    a = arith.Analyzer()
    guarded = tir.Select(x < 5, tir.if_then_else(x < 7, A[x], 0), 0)
    tir.assert_structural_equal(a.simplify(guarded), guarded)
    pure = tir.Select(x < 5, tir.if_then_else(x < 7, x * 2, 0), 0)
    tir.assert_structural_equal(a.simplify(pure), tir.Select(x < 5, x * 2, 0))
    # An if_then_else runs only its chosen value: its own condition is a sound fact.
    tir.assert_structural_equal(a.simplify(tir.if_then_else(x < 5, tir.if_then_else(x < 7, A[x],
                                                                                    0), 0)),
                                tir.if_then_else(x < 5, A[x], 0))


def test_nested_if_then_else_merges_only_a_condition_without_hazard():
    """``if c then (if d then a else k) else k`` to ``if c && d``: d then runs where c fails."""
    a = arith.Analyzer()
    merged = a.rewrite_simplify(tir.if_then_else(x < 5, tir.if_then_else(x > 1, 1, 0), 0))
    tir.assert_structural_equal(merged, tir.if_then_else(tir.And(x < 5, tir.LT(1, x)), 1, 0))
    loads = tir.if_then_else(x < 8, tir.if_then_else(A[x] > 1, 1, 0), 0)
    tir.assert_structural_equal(a.rewrite_simplify(loads),
                                tir.if_then_else(x < 8, tir.if_then_else(tir.LT(1, A[x]), 1,
                                                                         0), 0))


def test_boolean_branches_leave_a_side_that_loads():
    """ApplyConstraintsToBooleanBranches: both sides of && run, so A[min(x, 7)] stays."""
    a = arith.Analyzer()
    a.enabled_extensions = arith.Extension.ApplyConstraintsToBooleanBranches
    cond = tir.And(x < 8, A[tir.min(x, 7)] > 0)
    tir.assert_structural_equal(a.rewrite_simplify(cond),
                                tir.And(x < 8, tir.LT(0, A[tir.min(x, 7)])))
    pure = tir.And(x < 8, tir.min(x, 7) > 0)
    tir.assert_structural_equal(a.rewrite_simplify(pure), tir.And(x < 8, tir.LT(0, x)))
