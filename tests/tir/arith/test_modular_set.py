"""Modular sets through arithmetic, exact divisions, ramps, aliases and constraints."""

from __future__ import annotations

import pytest

import tir
from tir import arith, floordiv, floormod, truncdiv

from .helpers import show

x, y, z = tir.var("x"), tir.var("y"), tir.var("z")
i = tir.var("i")

TABLE = [
    (tir.const(7), (0, 7)),
    (x, (1, 0)),
    (x * 4, (4, 0)),
    (x * 4 + 6, (4, 2)),
    (x * 4 - 1, (4, 3)),
    (x * 4 + y * 6, (2, 0)),
    (x * 4 * (y * 2 + 1), (4, 0)),
    ((x * 4 + 2) * (y * 6 + 3), (12, 6)),
    (floordiv(x * 8 + 4, 4), (2, 1)),
    (floordiv(x * 8 + 5, 4), (2, 1)),
    (floordiv(x * 6, 4), (1, 0)),          # not exact: nothing known
    (floormod(x * 6 + 1, 4), (2, 1)),
    (floormod(x * 8 + 5, 4), (4, 1)),      # TVM's ModByConst: (gcd(coeff, c), base), not a constant
    (tir.min(x * 4, y * 8 + 2), (2, 0)),
    (tir.Select(x < y, x * 6 + 3, tir.const(9)), (6, 3)),
    (tir.Ramp(x * 8, 2, 4), (2, 0)),        # every lane is even
    (tir.Broadcast(x * 8 + 3, 4), (8, 3)),
    (truncdiv(x * 8, 4), (2, 0)),           # exact whatever x's sign (TVM's DivByConst, base 0)
    (truncdiv(x * 8 + 4, 8), (1, 0)),       # x may be negative: rounding is unknown
]


@pytest.mark.parametrize("e, expected", TABLE, ids=[show(e) for e, _ in TABLE])
def test_modular_set(e, expected):
    m = arith.Analyzer().modular_set(e)
    assert (m.coeff, m.base) == expected


def test_truncdiv_of_nonnegative_is_exact():
    a = arith.Analyzer()
    a.bind(i, tir.Range(0, 100))
    m = a.modular_set(truncdiv(i * 8, 4))
    assert (m.coeff, m.base) == (2, 0)


def test_alias_and_constraint():
    a = arith.Analyzer()
    a.bind(y, x * 16 + 4)
    m = a.modular_set(y + 1)
    assert (m.coeff, m.base) == (16, 5)
    with a.constraint_scope(tir.EQ(floormod(z, 4), tir.const(0))):
        m = a.modular_set(z * 2 + 1)
        assert (m.coeff, m.base) == (8, 1)
        assert a.can_prove(tir.EQ(floormod(z + 8, 4), tir.const(0)))
    assert a.modular_set(z).coeff == 1


def test_modular_set_feeds_floordiv_of_ramp():
    a = arith.Analyzer()
    with a.constraint_scope(tir.EQ(floormod(z, 4), tir.const(0))):
        e = floordiv(tir.Ramp(z, 1, 4), tir.Broadcast(tir.const(4), 4))
        out = a.simplify(e)
        assert isinstance(out, tir.Broadcast)


def test_wrapping_arithmetic_keeps_only_residues_modulo_a_power_of_two():
    u8, i16 = tir.var("u8", "uint8"), tir.var("i16", "int16")
    small = tir.var("small", "uint8")
    a = arith.Analyzer()
    a.bind(small, tir.Range(tir.const(0, "uint8"), tir.const(10, "uint8")))
    three, four = tir.const(3, "uint8"), tir.const(4, "uint8")
    cases = [
        (u8 * three, (1, 0)),                        # 255 * 3 wraps to 253: not a multiple of 3
        (u8 * four + tir.const(1, "uint8"), (4, 1)),  # 4 divides 256: the residue survives
        (small * three, (3, 0)),                     # at most 30: no wrap, the exact set
        (tir.Add(tir.const(200, "uint8"), tir.const(100, "uint8")), (0, 44)),
        (tir.Mul(tir.const(200, "int16"), tir.const(200, "int16")), (0, -25536)),
        (i16 * tir.const(6, "int16"), (2, 0)),
        (u8 - tir.const(3, "uint8"), (1, 0)),
    ]
    for e, expected in cases:
        m = a.modular_set(e)
        assert (m.coeff, m.base) == expected, show(e)


def test_shift_right_and_bitwise_and():
    a = arith.Analyzer()
    m = a.modular_set(tir.shift_right(x * 8 + 4, 2))      # floordiv by 4, whatever x's sign
    assert (m.coeff, m.base) == (2, 1)
    m = a.modular_set(tir.bitwise_and(x * 16 + y * 4 + 1, 31))
    assert (m.coeff, m.base) == (4, 1)
    m = a.modular_set(tir.bitwise_and(x * 16, 17))      # not 2**k - 1: nothing known
    assert (m.coeff, m.base) == (1, 0)


def test_casts_keep_the_residue_when_no_value_changes():
    a = arith.Analyzer()
    a.bind(i, tir.Range(0, 1000))
    m = a.modular_set(tir.Cast("int32", tir.Cast("float32", i * 6 + 1)))
    assert (m.coeff, m.base) == (6, 1)
    m = a.modular_set(tir.Cast("int64", x * 4 + 1))
    assert (m.coeff, m.base) == (4, 1)
    m = a.modular_set(tir.Cast("int8", x * 4 + 1))      # wraps: residue modulo gcd(4, 256)
    assert (m.coeff, m.base) == (4, 1)
    m = a.modular_set(tir.Cast("int32", tir.Cast("float32", x * 6 + 1)))  # x large: rounds
    assert (m.coeff, m.base) == (1, 0)


def test_constraints_give_residues_and_intersect():
    a = arith.Analyzer()
    with a.constraint_scope(tir.EQ(tir.truncmod(z, 4), tir.const(1))):
        with a.constraint_scope(tir.EQ(floormod(z, 6), tir.const(3))):
            m = a.modular_set(z)
            assert (m.coeff, m.base) == (12, 9)
    with a.constraint_scope(tir.EQ(z, tir.const(7))):
        m = a.modular_set(z * 2)
        assert (m.coeff, m.base) == (0, 14)


def test_nested_let_of_the_same_var():
    t = tir.var("t")
    e = tir.Let(t, x * 4, tir.Let(t, x * 6 + 3, t) + t)
    m = arith.Analyzer().modular_set(e)
    assert (m.coeff, m.base) == (2, 1)
