"""Const-int bounds through every operator, dtypes, casts, vectors, bound vars and constraints."""

from __future__ import annotations

import pytest

import tir
from tir import arith, floordiv, floormod, truncdiv, truncmod
from tir.arith import ConstIntBound

from .helpers import show

POS_INF, NEG_INF = ConstIntBound.POS_INF, ConstIntBound.NEG_INF
x, y = tir.var("x"), tir.var("y")
i, j = tir.var("i"), tir.var("j")
n = tir.size_var("n")
u = tir.var("u", "uint8")
x64 = tir.var("x64", "int64")


def analyzer() -> arith.Analyzer:
    a = arith.Analyzer()
    a.bind(i, tir.Range(0, 16))            # [0, 15]
    a.bind(j, tir.Range.from_min_extent(-4, 8))  # [-4, 3]
    return a


TABLE = [
    (tir.const(7), (7, 7)),
    (x, (-2**31, 2**31 - 1)),
    (x64, (NEG_INF, POS_INF)),
    (n, (0, POS_INF)),                     # TVM: a size var without facts is [0, POS_INF]
    (u, (0, 255)),
    (i, (0, 15)),
    (j, (-4, 3)),
    (i + j, (-4, 18)),
    (i - j, (-3, 19)),
    (i * j, (-60, 45)),
    (i * 4 + 3, (3, 63)),
    (floordiv(i, 4), (0, 3)),
    (floordiv(j, 4), (-1, 0)),
    (truncdiv(j, 4), (-1, 0)),
    (truncdiv(j, 5), (0, 0)),
    (floordiv(i, j), (-15, 15)),           # j may be zero (excluded); the sign is unknown
    (floormod(i, 4), (0, 3)),
    (floormod(j, 4), (0, 3)),
    (floormod(x, 8), (0, 7)),
    (floormod(x, -8), (-7, 0)),
    (truncmod(j, 4), (-3, 3)),
    (truncmod(i, 4), (0, 3)),
    (truncmod(x, 8), (-7, 7)),
    (tir.min(i, j), (-4, 3)),
    (tir.max(i, j), (0, 15)),
    (tir.Select(x < y, i, j), (-4, 15)),
    (tir.Cast("int8", i), (0, 15)),
    (tir.Cast("int8", x), (-128, 127)),              # may wrap: the full target range
    (tir.Cast("int64", x), (-2**31, 2**31 - 1)),
    (tir.Cast("uint8", j), (0, 255)),
    (tir.Cast("int32", tir.var("f", "float32")), (-2**31, 2**31 - 1)),
    (x < y, (0, 1)),
    (tir.Ramp(i * 4, 1, 4), (0, 63)),
    (tir.Ramp(j, -2, 4), (-10, 3)),
    (tir.Broadcast(j, 8), (-4, 3)),
    (tir.Let(y, i + 1, y * 2), (2, 32)),
    (tir.if_then_else(x < y, i, tir.const(100)), (0, 100)),
    (tir.vscale() * 4, (4, 64)),
]


@pytest.mark.parametrize("e, expected", TABLE, ids=[show(e) for e, _ in TABLE])
def test_bound(e, expected):
    b = analyzer().const_int_bound(e)
    assert (b.min_value, b.max_value) == expected


def test_infinite_ends_propagate():
    a = arith.Analyzer()
    assert not a.const_int_bound_is_bound(x64)
    a.update(x64, ConstIntBound(0, POS_INF))
    assert a.const_int_bound_is_bound(x64)
    with pytest.raises(ValueError, match="already has the range"):
        a.update(x64, ConstIntBound(0, 5))
    with pytest.raises(TypeError, match="expected a ConstIntBound"):
        a.update(x64, (0, 5))
    b = a.const_int_bound(x64 * 2 + 1)
    assert (b.min_value, b.max_value) == (1, POS_INF)
    b = a.const_int_bound(floordiv(x64, 4) - 5)
    assert (b.min_value, b.max_value) == (-5, POS_INF)


def test_constraint_scope_narrows_and_restores():
    a = analyzer()
    with a.constraint_scope(x < 10):
        assert a.const_int_bound(x).max_value == 9
        with a.constraint_scope(tir.all(x >= 2, y <= x)):
            b = a.const_int_bound(x)
            assert (b.min_value, b.max_value) == (2, 9)
            assert a.const_int_bound(y).max_value == 9
        assert a.const_int_bound(x).min_value == -2**31
    assert a.const_int_bound(x).max_value == 2**31 - 1


def test_constraint_with_constant_on_the_left_and_equality():
    a = arith.Analyzer()
    with a.constraint_scope(tir.all(3 < x, tir.EQ(y, tir.const(5)))):
        assert a.const_int_bound(x).min_value == 4
        b = a.const_int_bound(y)
        assert (b.min_value, b.max_value) == (5, 5)


def test_bind_expression_gives_its_bound():
    a = analyzer()
    a.bind(y, i * 2 + 1)
    b = a.const_int_bound(y)
    assert (b.min_value, b.max_value) == (1, 31)


def test_bind_conflicting_range_raises():
    a = analyzer()
    a.bind(i, tir.Range(0, 16))  # the same range again is fine
    with pytest.raises(ValueError, match="already has the range"):
        a.bind(i, tir.Range(0, 8))
    a.bind(i, tir.Range(0, 8), allow_override=True)
    assert a.const_int_bound(i).max_value == 7


def test_bad_arguments():
    a = arith.Analyzer()
    with pytest.raises(TypeError, match="expected a PrimExpr"):
        a.const_int_bound("x")
    with pytest.raises(TypeError, match="expected a tir.Var"):
        a.bind(tir.const(1), tir.Range(0, 4))
    with pytest.raises(TypeError, match="int32 but the value is int64"):
        a.bind(x, x64)


# ---------------------------------------------------------------- wrap-around and overflow

u8, i8, i16 = tir.var("u8", "uint8"), tir.var("i8", "int8"), tir.var("i16", "int16")
u32, u64 = tir.var("u32", "uint32"), tir.var("u64", "uint64")
small_u8, small_i8 = tir.var("small_u8", "uint8"), tir.var("small_i8", "int8")
min_i8 = tir.var("min_i8", "int8")


def _c(value, dtype):
    return tir.const(value, dtype)


def wrap_analyzer() -> arith.Analyzer:
    a = arith.Analyzer()
    a.bind(small_u8, tir.Range(_c(0, "uint8"), _c(11, "uint8")))          # [0, 10]
    a.bind(small_i8, tir.Range(_c(20, "int8"), _c(28, "int8")))           # [20, 27]
    a.bind(min_i8, tir.Range(_c(-128, "int8"), _c(-127, "int8")))         # [-128, -128]
    return a


WRAP_TABLE = [
    (u8 - _c(255, "uint8"), (0, 255)),      # exact [-255, 0]: wraps onto every uint8
    (u8 + _c(5, "uint8"), (0, 255)),
    (u8 * _c(2, "uint8"), (0, 255)),
    (small_u8 + _c(5, "uint8"), (5, 15)),   # no wrap possible: the exact interval
    (small_u8 - _c(20, "uint8"), (236, 246)),  # always wraps, by exactly 256
    (small_u8 - _c(5, "uint8"), (0, 255)),  # wraps for some values only
    (i8 - _c(100, "int8"), (-128, 127)),
    (small_i8 + _c(100, "int8"), (120, 127)),
    (small_i8 + _c(110, "int8"), (-126, -119)),
    (small_i8 * _c(8, "int8"), (-96, -40)),    # [160, 216] - 256
    (i8 * _c(2, "int8"), (-128, 127)),
    (i16 + _c(1, "int16"), (-32768, 32767)),
    (tir.Div(min_i8, _c(-1, "int8")), (-128, -128)),   # 128 wraps to -128
    (tir.FloorDiv(min_i8, _c(-1, "int8")), (-128, -128)),
    (u32 - _c(1, "uint32"), (0, 2**32 - 1)),
    (u64 - _c(1, "uint64"), (0, POS_INF)),
    (tir.Ramp(small_u8, _c(100, "uint8"), 4), (0, 255)),  # lane 3 may reach 310
    (tir.Ramp(small_u8, _c(10, "uint8"), 4), (0, 40)),
    (tir.Cast("int32", u8 - _c(5, "uint8")), (0, 255)),
]


@pytest.mark.parametrize("e, expected", WRAP_TABLE, ids=[show(e) for e, _ in WRAP_TABLE])
def test_bound_of_wrapping_arithmetic_covers_the_wrapped_values(e, expected):
    b = wrap_analyzer().const_int_bound(e)
    assert (b.min_value, b.max_value) == expected


def test_int32_arithmetic_bound_is_exact_not_clipped():
    """``a - b`` of two int32 values may leave int32: its bound says so (it decides a < b)."""
    a = arith.Analyzer()
    a.bind(i, tir.Range.from_min_extent(2**30 + 50, 1))
    a.bind(j, tir.Range.from_min_extent(-2**30 - 50, 1))
    b = a.const_int_bound(i - j)
    assert (b.min_value, b.max_value) == (2**31 + 100, 2**31 + 100)
    assert a.const_int_bound(tir.Cast("int32", i - j)).max_value == 2**31 - 1


# ---------------------------------------------------------------- TVM's conventions


def test_int64_ends_saturate_to_infinity():
    a = arith.Analyzer()
    a.update(x64, ConstIntBound(0, 2**62))
    b = a.const_int_bound(x64 * 4)
    assert (b.min_value, b.max_value) == (0, POS_INF)   # 2**64 is past int64: unbounded
    b = a.const_int_bound(x64 * 4 - x64 * 4)
    assert (b.min_value, b.max_value) == (NEG_INF, POS_INF)
    assert ConstIntBound(NEG_INF, 5).to_interval()[0] == float("-inf")


def test_update_may_widen_past_the_dtype_as_in_tvm():
    a = arith.Analyzer()
    a.update(x, ConstIntBound(NEG_INF, 4))
    b = a.const_int_bound(tir.min(x, y))
    assert (b.min_value, b.max_value) == (NEG_INF, 4)


SHIFT_TABLE = [
    (tir.shift_right(j, tir.const(1)), (-2, 1)),
    (tir.shift_right(i, j), (-2**31, 2**31 - 1)),        # j may be negative: undefined
    (tir.shift_left(i, tir.const(2)), (0, 60)),
    (tir.shift_left(j, tir.const(2)), (-2**31, 2**31 - 1)),  # a negative value: no assumption
    (tir.shift_left(small_u8, _c(5, "uint8")), (0, 255)),    # 10 << 5 wraps in uint8
    (tir.shift_left(small_u8, _c(4, "uint8")), (0, 160)),
    (tir.shift_right(u8, _c(8, "uint8")), (0, 255)),          # by the width: undefined
    (tir.bitwise_and(j, tir.const(6)), (0, 6)),
]


@pytest.mark.parametrize("e, expected", SHIFT_TABLE, ids=[show(e) for e, _ in SHIFT_TABLE])
def test_shifts_and_bitwise_and(e, expected):
    a = wrap_analyzer()
    a.bind(i, tir.Range(0, 16))
    a.bind(j, tir.Range.from_min_extent(-4, 8))
    b = a.const_int_bound(e)
    assert (b.min_value, b.max_value) == expected


def test_division_by_a_divisor_of_either_sign():
    a = arith.Analyzer()
    a.update(x, ConstIntBound(0, 6))
    a.update(y, ConstIntBound(-5, 7))
    for e, expected in [(floormod(x, y), (-4, 6)), (truncmod(x, y), (0, 6)),
                        (floordiv(x, y), (-6, 6)), (truncdiv(x, y), (-6, 6))]:
        b = a.const_int_bound(e)
        assert (b.min_value, b.max_value) == expected, show(e)


def test_float_round_trip_keeps_the_bound_when_exact():
    a = arith.Analyzer()
    a.update(x, ConstIntBound(-3, 2**24))
    e = tir.Cast("int32", tir.Cast("float32", x))
    assert (a.const_int_bound(e).min_value, a.const_int_bound(e).max_value) == (-3, 2**24)
    a.update(x, ConstIntBound(-3, 2**24 + 1), override=True)  # 2**24 + 1 rounds in float32
    assert a.const_int_bound(e).max_value == 2**31 - 1


def test_constraint_on_an_expression_with_a_constant():
    a = arith.Analyzer()
    a.update(x, ConstIntBound(0, 128))
    with a.constraint_scope(tir.all(1 <= floormod(x, 58), floormod(x, 58) < 57)):
        b = a.const_int_bound(floormod(x, 58) - 1)
        assert (b.min_value, b.max_value) == (0, 55)
    assert a.const_int_bound(floormod(x, 58) - 1).min_value == -1


def test_nested_let_of_the_same_var():
    t = tir.var("t")
    e = tir.Let(t, tir.const(3), tir.Let(t, tir.const(5), t) + t)
    b = arith.Analyzer().const_int_bound(e)
    assert (b.min_value, b.max_value) == (8, 8)
