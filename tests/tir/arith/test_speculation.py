"""speculation_hazard, and the rewrites that evaluate an expression where a fact may not hold.

``Select`` values and both sides of ``&&`` / ``||`` run whatever the other parts say, so
they are simplified under such a fact only when they hold no load, no impure call and no
division an ``if_then_else`` guards. Each case below changed meaning before: the load or
division it shows would run where its guard is false.
"""

import pytest

import tir
from tir import arith
from tir.arith.speculation import speculation_hazard

x, n = tir.var("x"), tir.var("n")
A = tir.decl_buffer((8,), "int32", name="A")


@pytest.mark.parametrize("expr, hazard", [
    (x * 2 + tir.min(x, n), None),
    (tir.if_then_else(x < 4, x + 1, 0), None),
    (tir.floordiv(x, 4) + tir.floormod(x, 3), None),
    (A[x] + 1, "A[x]"),
    (tir.if_then_else(x < 8, A[x], 0), "A[x]"),
    (tir.Select(x < 8, 0, A[tir.min(x, 7)]), "A[T.min(x, 7)]"),
    (tir.call_extern("int32", "f", x), 'T.call_extern("int32", "f", x)'),
    (tir.if_then_else(n != 0, tir.floordiv(x, n), 0), "x // n"),
])
def test_speculation_hazard_names_the_first_hazard(expr, hazard):
    found = speculation_hazard(expr, divisions=False)
    assert (None if found is None else str(found)) == hazard


def test_unguarded_divisions_count_unless_the_caller_checks_divisors():
    div = tir.floordiv(x, n) + 1
    assert speculation_hazard(div, divisions=False) is None
    assert str(speculation_hazard(div)) == "x // n"
    assert speculation_hazard(tir.floordiv(x, 3)) is None  # a constant divisor never traps
    assert speculation_hazard(tir.Div(tir.const(1.0), tir.var("f", "float32"))) is None


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
