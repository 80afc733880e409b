"""The Analyzer facade: can_prove, can_prove_equal, bind, constraint_scope, Range."""

from __future__ import annotations

import pytest

import tir
from tir import arith, floordiv, floormod

from .helpers import assert_same

x, y, z = tir.var("x"), tir.var("y"), tir.var("z")
i, j = tir.var("i"), tir.var("j")


def test_range_fields():
    r = tir.Range(2, 10)
    assert r.min.value == 2 and r.extent.value == 8
    r = tir.Range.from_min_extent(x, 4)
    assert r.min is x and r.extent.value == 4
    assert tir.Range(5).min.value == 0
    with pytest.raises(TypeError, match="Range: begin must be an int"):
        tir.Range("a", 3)
    with pytest.raises(TypeError, match="must be a scalar integer"):
        tir.Range(tir.var("f", "float32"), 3)
    moved = tir.node.replace(r, extent=tir.const(8))   # what mutators do
    assert moved.min is x and moved.extent.value == 8
    with pytest.raises(TypeError, match="give \\(begin, end\\) or min= and extent="):
        tir.Range(0, 4, extent=3)


def test_can_prove_uses_bounds():
    a = arith.Analyzer()
    a.bind(i, tir.Range(0, 9))
    assert a.can_prove(i < 10)
    assert a.can_prove(i * 2 + 1 <= 17)
    assert not a.can_prove(i < 8)
    assert not a.can_prove(x < 10)          # unknown is False
    assert a.can_prove(tir.all(i >= 0, i < 9))
    assert a.can_prove(tir.Broadcast(tir.const(True), 4))


def test_can_prove_vector_condition_over_all_lanes():
    a = arith.Analyzer()
    a.bind(i, tir.Range(0, 4))
    lanes = tir.Ramp(i * 8, 1, 8)
    assert a.can_prove(lanes < tir.Broadcast(tir.const(32), 8))
    assert not a.can_prove(lanes < tir.Broadcast(tir.const(31), 8))


def test_can_prove_inside_constraint_scope():
    a = arith.Analyzer()
    with a.constraint_scope(x < 10):
        assert a.can_prove(x < 11)
        assert a.can_prove(x <= 9)
        assert not a.can_prove(x < 9)
    assert not a.can_prove(x < 11)


def test_constraint_scope_remembers_other_conditions():
    a = arith.Analyzer()
    cond = x * y < z
    with a.constraint_scope(cond):
        assert a.can_prove(cond)
        assert a.can_prove(tir.Not(z <= x * y))
    assert not a.can_prove(cond)


def test_can_prove_equal():
    a = arith.Analyzer()
    a.bind(j, tir.Range(0, 4))
    assert a.can_prove_equal(floordiv(x * 4 + j, 4), x)
    assert a.can_prove_equal((x + y) * 2, y * 2 + x * 2)
    assert not a.can_prove_equal(x, y)
    f = tir.var("f", "float32")
    assert a.can_prove_equal(f, f)


def test_bind_expression_is_substituted():
    a = arith.Analyzer()
    a.bind(i, tir.Range(0, 4))
    a.bind(y, x * 4 + i)
    assert_same(a.simplify(floordiv(y, 4)), x)
    assert_same(a.simplify(floormod(y, 4)), i)
    with pytest.raises(ValueError, match="already bound"):
        a.bind(y, x)
    a.bind(y, x, allow_override=True)
    assert_same(a.simplify(y + 1), x + 1)


def test_can_prove_rejects_non_bool():
    with pytest.raises(TypeError, match="condition must be bool"):
        arith.Analyzer().can_prove(x + 1)


def test_simplify_accepts_numbers():
    assert arith.Analyzer().simplify(3).value == 3


def test_infinite_constants_are_public():
    assert arith.ConstIntBound.POS_INF == 2**63 - 1
    assert arith.ConstIntBound.NEG_INF == -(2**63 - 1)  # TVM: kNegInf == -kPosInf


def test_symbolic_constraints_prove_shifted_comparisons():
    a = arith.Analyzer()
    n = tir.size_var("n")
    a.bind(j, tir.Range(0, 4))
    with a.constraint_scope(i < n):
        assert a.can_prove(i + 1 <= n)
        assert a.can_prove(i - 4 < n)
        assert a.can_prove(n > i)
        assert not a.can_prove(i + 1 < n)
        assert not a.can_prove(i + j < n)
    with a.constraint_scope(i * 8 + 8 <= n):
        assert a.can_prove(i * 8 + j < n)
        assert not a.can_prove(i * 8 + j + 5 < n)


def test_symbolic_range_proves_comparisons_with_its_end():
    a = arith.Analyzer()
    n = tir.size_var("n")
    a.bind(i, tir.Range(0, n))
    assert a.can_prove(i < n)
    assert a.can_prove(i + 1 <= n)
    assert a.can_prove(i >= 0)
    assert not a.can_prove(i + 1 < n)


def test_docstring_examples():
    import doctest

    from tir.arith import analyzer, pattern

    for module in (analyzer, pattern):
        assert doctest.testmod(module).failed == 0


def test_deep_expressions_do_not_hit_the_recursion_limit():
    a = arith.Analyzer()
    a.bind(i, tir.Range(0, 4))
    deep = i
    for _ in range(3000):
        deep = tir.Add(deep, tir.const(1))
    assert a.const_int_bound(deep).max_value == 3003
    assert a.modular_set(deep * 2).coeff == 2
    assert a.can_prove(deep < 3004)
    assert_same(a.simplify(deep), i + 3000)


def test_bind_to_itself_is_rejected():
    with pytest.raises(ValueError, match="cannot be bound to an expression that uses it"):
        arith.Analyzer().bind(x, x + 1)


def test_alias_cycles_are_rejected():
    a = arith.Analyzer()
    a.bind(x, y + 1)
    with pytest.raises(ValueError, match="uses it"):
        a.bind(y, x * 2)


def test_bind_to_a_number_takes_the_var_dtype():
    a = arith.Analyzer()
    v = tir.var("v", "int64")
    a.bind(v, 5)
    out = a.simplify(v + 1)
    assert out.dtype == "int64" and out.value == 6


def test_shared_subexpressions_are_analyzed_once():
    a = arith.Analyzer()
    a.bind(i, tir.Range(0, 4))
    dag = i
    for _ in range(60):                     # 2**60 paths, 61 distinct nodes
        dag = tir.Add(dag, dag)
    assert a.const_int_bound(dag).min_value == 0
    assert a.modular_set(dag * 4).coeff == 4
    assert a.canonical_simplify(tir.Sub(dag, dag)).value == 0
    assert a.simplify(tir.Sub(dag, dag)).value == 0


def test_loop_scope_knows_the_range_inside_and_forgets_it_after():
    i, n = tir.Var("i"), tir.SizeVar("n")
    ana = tir.arith.Analyzer()
    with ana.loop_scope(i, 0, tir.floordiv(n, 8)):
        assert ana.can_prove(i < tir.floordiv(n, 8))
        assert ana.can_prove(i * 8 + 7 < n)  # the block form of i < n // 8
    assert not ana.can_prove(i < tir.floordiv(n, 8))
    with ana.loop_scope(i, 0, 4):  # a reused var starts afresh
        assert ana.const_int_bound(i).max_value == 3


def test_can_prove_respects_wraparound_of_narrow_and_unsigned_integers():
    u8, i8 = tir.var("u8", "uint8"), tir.var("i8", "int8")
    a = arith.Analyzer()
    c8 = lambda v: tir.const(v, "uint8")  # noqa: E731
    assert not a.can_prove(u8 + c8(5) >= c8(5))            # u8 = 255: 255 + 5 wraps to 4
    assert not a.can_prove(u8 - c8(255) <= c8(0))          # u8 = 7: 7 - 255 wraps to 8
    assert not a.can_prove(i8 - tir.const(100, "int8") <= tir.const(27, "int8"))
    assert not a.can_prove(tir.const(5, "uint16") <= tir.var("u16", "uint16") + 5)
    assert a.can_prove(u8 >= c8(0)) and a.can_prove(u8 <= c8(255))
    small = tir.var("small", "uint8")
    a.bind(small, tir.Range(c8(0), c8(11)))
    assert a.can_prove(small + c8(5) >= c8(5))             # at most 15: no wrap


def test_can_prove_compares_wrapping_values_not_their_wrapped_difference():
    a8, b8 = tir.var("a8", "int8"), tir.var("b8", "int8")
    a = arith.Analyzer()
    a.bind(a8, tir.Range(tir.const(100, "int8"), tir.const(101, "int8")))
    a.bind(b8, tir.Range(tir.const(-100, "int8"), tir.const(-99, "int8")))
    assert not a.can_prove(a8 <= b8)                         # int8(100 - -100) is -56 <= 0
    assert a.can_prove(a8 > b8)
    c8, d8, one = tir.var("c8", "int8"), tir.var("d8", "int8"), tir.const(1, "int8")
    with a.constraint_scope(c8 < d8):   # c8 = -128, d8 = -127: c8 - 1 wraps to 127
        assert not a.can_prove(c8 - one < d8 - one)


def test_can_prove_is_exact_where_regrouping_int32_terms_leaves_int32():
    """(x - 2**30) - (y + 2**30) regroups as x - y - 2**31; x - y alone is 2**31 + 100."""
    a = arith.Analyzer()
    a.bind(x, tir.Range.from_min_extent(2**30 + 50, 1))
    a.bind(y, tir.Range.from_min_extent(-2**30 - 50, 1))
    lhs, rhs = x + tir.const(-2**30), y + tir.const(2**30)   # 50 and -50
    assert not a.can_prove(lhs < rhs)
    assert a.can_prove(lhs > rhs)
    assert_same(a.simplify(lhs < rhs), tir.const(False))


def test_a_constraint_proof_does_not_wrap_int32_constants():
    # v < 1 must not prove v + 2147483647 < -3: the difference 2147483647 + 4 wraps
    # in int32 (found by the fuzzer, seed 15862; Simplify then folded a floormod).
    v = tir.Var("v", "int32")
    ana = tir.arith.Analyzer()
    ana.bind(v, tir.Range(0, 4))
    with ana.constraint_scope(v < 1):
        assert not ana.can_prove(v + 2147483647 < -3)
        assert not ana.can_prove(v + 2147483644 < -3)
        assert ana.can_prove(v + 5 < 7)  # the ordinary case still works
        big = tir.Var("b", "int64")
        assert not ana.can_prove(big + tir.const(2**62, "int64") < big - 3)


def test_floormod_near_int32_max_under_a_guard_keeps_its_value():
    import numpy as np

    import codegen
    from tir import ir_builder

    ib = ir_builder.create()
    A = ib.pointer("int32", name="A")
    with ib.for_range(0, 4, name="v") as v:
        with ib.if_scope(v < 1):
            A[v] = tir.floormod(v + 2147483647, -3)
    a = np.zeros(4, "int32")
    codegen.build(tir.PrimFunc([A], ib.get()))["main"](a)
    assert a[0] == 2147483647 % -3
