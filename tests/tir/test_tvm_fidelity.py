"""Small behaviours TVM v0.16 code relies on, so that a TVM script ports by changing imports."""

from __future__ import annotations

import pytest

import tir
from tir import arith

x, y = tir.Var("x", "int32"), tir.Var("y", "int32")


# ---------------------------------------------------------------- 1. IntImm acts as its value


def test_comparing_integer_constants_folds_and_has_a_truth_value():
    assert bool(tir.const(0) == 0) is True
    assert bool(tir.const(1) == 2) is False
    assert bool(tir.const(1) != 2) is True and bool(tir.const(3) != 3) is False
    assert bool(tir.const(1) < 2) and not bool(tir.const(5, "int64") <= 4)
    assert bool(tir.const(3)) and not bool(tir.const(0)) and bool(tir.const(True))
    assert hash(tir.const(3)) == 3 and hash(tir.const(-7, "int64")) == hash(-7)
    assert int(tir.const(3, "int8")) == 3
    assert {tir.const(3): "a"}[3] == "a"  # a dict key is found by value, as in TVM
    assert [4, 5][tir.const(1)] == 5


def test_comparisons_with_variables_still_build_nodes():
    e = tir.const(1) == x
    assert isinstance(e, tir.EQ) and e.b is x
    assert isinstance(x == 1, tir.EQ) and isinstance(x != 1, tir.NE)
    assert bool(x == x) and not bool(x == y)  # noqa: PLR0124  (identity, as TVM's EqualOp)
    assert (tir.const(1) == "a") is False  # not an expression operand: plain identity
    with pytest.raises(TypeError, match="tir.all / tir.any"):
        bool(x < 1)
    with pytest.raises(ValueError, match="truth value"):  # TVM raises ValueError here
        bool(x + 1)
    with pytest.raises(TypeError, match="truth value"):  # floats have no truth value in TVM
        bool(tir.const(1.0))


# ---------------------------------------------------------------- 2. structural_equal with numbers


def test_structural_equal_converts_python_numbers_as_tvm_does():
    assert tir.structural_equal(tir.const(0), 0) and tir.structural_equal(0, tir.const(0))
    assert not tir.structural_equal(tir.const(0, "int64"), 0)  # 0 converts to int32
    assert tir.structural_equal(tir.const(2**40, "int64"), 2**40)  # too big: int64
    assert tir.structural_equal(tir.const(1.5), 1.5)  # float32
    assert not tir.structural_equal(tir.const(1.5, "float64"), 1.5)
    assert tir.structural_equal(tir.const(True), True)
    assert not tir.structural_equal(tir.const(1), True) and not tir.structural_equal(1, 1.0)
    assert tir.structural_equal([tir.const(1), x], [1, x])
    assert tir.structural_hash(0) == tir.structural_hash(tir.const(0))
    tir.assert_structural_equal(x - x, x - x)
    tir.assert_structural_equal(tir.const(4), 4)
    with pytest.raises(ValueError, match="structural mismatch at <root>: node types differ"):
        tir.assert_structural_equal(x, 0)
    with pytest.raises(ValueError, match="value differs: 1 vs 2"):
        tir.assert_structural_equal(1, 2)


def test_const_infers_tvm_dtypes_for_python_numbers():
    assert tir.const(2**31 - 1).dtype == "int32" and tir.const(2**31).dtype == "int64"
    assert tir.const(-(2**31) - 1).dtype == "int64"
    assert tir.const(1e39).dtype == "float64" and tir.const(1e38).dtype == "float32"
    assert tir.const(float("inf")).dtype == "float32"  # (TVM: float64) a float32 value too
    with pytest.raises(ValueError, match="does not fit in int64"):
        tir.const(2**63)


# ---------------------------------------------------------------- 3. variables hash by identity


def test_variables_hash_by_identity_and_structural_hash_by_structure():
    assert hash(tir.var("x")) != hash(tir.var("x"))  # even when the first is freed at once
    a, b = tir.var("x"), tir.var("x")
    assert len({a: 1, b: 2}) == 2 and {a: 1}.get(b) is None
    v = tir.var("v")
    assert hash(v) == hash(v) and {v: 1}[v] == 1
    assert tir.structural_hash(a + 1) == tir.structural_hash(b + 1)
    assert tir.structural_equal(a + 1, b + 1, map_free_vars=True)
    assert hash(tir.SizeVar("n")) != hash(tir.SizeVar("n"))


# ---------------------------------------------------------------- 4. get_first_structural_mismatch


def test_first_structural_mismatch_names_the_paths():
    assert tir.get_first_structural_mismatch(x + 1, x + 1) is None
    assert tir.get_first_structural_mismatch(tir.const(0), 0) is None
    lhs, rhs = tir.get_first_structural_mismatch(x + 1, x + 2)
    assert lhs == rhs == ("b", "value")
    assert str(lhs) == "<root>.b.value"
    lhs, rhs = tir.get_first_structural_mismatch(tir.Min(x, x * 2), tir.Min(x, x * 3))
    assert lhs == ("b", "b", "value")
    assert tir.get_first_structural_mismatch(x + 1, x - 1) == ((), ())  # the roots differ
    call_a = tir.call_extern("int32", "f", x, 1)
    call_b = tir.call_extern("int32", "f", x, y)
    assert tir.get_first_structural_mismatch(call_a, call_b)[0] == ("args", 2)
    assert str(tir.get_first_structural_mismatch(call_a, call_b)[1]) == "<root>.args[2]"


# ---------------------------------------------------------------- 5. TVMError and division by zero


@pytest.mark.parametrize("node", [tir.Div, tir.Mod, tir.FloorDiv, tir.FloorMod])
def test_simplifying_a_division_by_constant_zero_raises_tvm_error(node):
    before = node(tir.Ramp(1, 1, 2), tir.Broadcast(0, 2))
    with pytest.raises(tir.TVMError, match="division by the constant zero"):
        arith.Analyzer().rewrite_simplify(before)


def test_folding_a_division_by_zero_raises_tvm_error_and_zero_division_error():
    for make in (tir.floordiv, tir.floormod, tir.truncdiv, tir.truncmod):
        with pytest.raises(tir.TVMError, match=r"Divide by zero\): 7 by 0"):
            make(tir.const(7), 0)
        with pytest.raises(ZeroDivisionError):
            make(x, 0)
    assert issubclass(tir.TVMError, RuntimeError)
    assert isinstance(tir.const(1.0) / 0.0, tir.Div)  # float division by zero is IEEE, not an error


# ---------------------------------------------------------------- 6. PrimExpr.equal


def test_equal_builds_a_folded_eq_as_tvm_expr_op_equal():
    e = x.equal(y)
    assert isinstance(e, tir.EQ) and e.a is x and e.b is y
    assert isinstance(x.equal(1), tir.EQ) and x.equal(1).b.value == 1
    assert tir.structural_equal(tir.const(1).equal(1), tir.const(True))
    assert tir.structural_equal((x + 1).equal(2, span=None), tir.EQ(x + 1, 2))
    vec = tir.Broadcast(x, 2).equal(tir.Broadcast(y, 2))
    assert vec.dtype == "boolx2"
    with pytest.raises(TypeError, match="handle"):
        x.equal(tir.Var("p", "handle"))


# ---------------------------------------------------------------- 7. uint1


def test_uint1_is_bool():
    assert tir.DataType("uint1") == "bool" and tir.DataType("uint1x2") == "boolx2"
    assert tir.DataType("uint", 1, 4) == "boolx4"
    assert tir.Var("m", "uint1").dtype == "bool"
    assert tir.const(1, "uint1").dtype == "bool" and tir.IntImm("uint1", 1).value == 1
    assert tir.const(1, "uint1x4").dtype == "boolx4"
    cond = x < y
    assert cond.astype("uint1") is cond  # already that type: no cast node
    assert tir.cast("uint1x2", tir.Ramp(x, 1, 2) < 3).dtype == "boolx2"
    assert tir.decl_buffer((4,), "uint1").dtype == "bool"
    with pytest.raises(ValueError, match="uint does not come in 2 bits"):
        tir.DataType("uint2")


# ---------------------------------------------------------------- 8. tir.Any


def test_any_is_an_int32_leaf_node():
    a, b = tir.Any(), tir.Any()
    assert a.dtype == "int32" and isinstance(a, tir.PrimExpr)
    assert str(a - b) == "T.Any() - T.Any()"
    assert tir.structural_equal(a, b)  # TVM's AnyNode compares its dtype only
    assert tir.structural_hash(a) == tir.structural_hash(b)
    assert not tir.structural_equal(a, x) and hash(a) != hash(b)


def test_visitors_and_mutators_pass_over_any():
    a = tir.Any()
    seen = []
    tir.stmt_functor.post_order_visit(a + x, lambda n: seen.append(type(n).__name__))
    assert seen == ["Any", "Var", "Add"]
    e = a * 2 + x
    assert tir.stmt_functor.substitute(e, {x: y}).b is y
    assert tir.stmt_functor.substitute(e, {y: x}) is e


def test_the_simplifier_keeps_two_any_nodes_apart():
    a, b = tir.Any(), tir.Any()
    ana = arith.Analyzer()
    assert tir.structural_equal(ana.rewrite_simplify(a - a), 0)
    kept = ana.rewrite_simplify(a - b)
    assert isinstance(kept, tir.Sub) and kept.a is a and kept.b is b
    assert isinstance(ana.simplify(a - b), tir.Sub)
    assert isinstance(ana.canonical_simplify(a + b - a - b + (b - a)), tir.PrimExpr)
    assert not ana.can_prove(a == b)  # noqa: PLR0124


def test_project_errors_are_tvm_errors():
    # TVM code catches tvm.error.TVMError around verification and vectorization.
    from tir.verify import WellFormedError
    from transform.vector.remarks import VectorizeError

    assert issubclass(WellFormedError, tir.TVMError) and issubclass(WellFormedError, ValueError)
    assert issubclass(VectorizeError, tir.TVMError) and issubclass(VectorizeError, ValueError)
    ib = tir.ir_builder.create()
    a = ib.buffer_ptr(tir.decl_buffer((4,), "float32", name="A"))
    with ib.for_range(0, 4, name="i", kind="vectorize") as i:
        a[i] = a[i + tir.var("n")]
    bad = tir.PrimFunc([], ib.get())   # A and n are not parameters: not well formed
    with pytest.raises(tir.TVMError, match="A|n"):
        tir.verify_well_formed(bad)
