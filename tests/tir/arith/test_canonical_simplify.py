"""Canonical forms (sums of split terms): collecting terms, division by constants, TVM's order."""

from __future__ import annotations

import pytest

import tir
from tir import arith, floordiv, floormod, truncdiv, truncmod

from .helpers import assert_same, show

x, y, z = tir.var("x"), tir.var("y"), tir.var("z")
i, j, k = tir.var("i"), tir.var("j"), tir.var("k")


def analyzer() -> arith.Analyzer:
    a = arith.Analyzer()
    a.bind(i, tir.Range(0, 16))
    a.bind(j, tir.Range(0, 4))
    a.bind(k, tir.Range(0, 8))
    return a


TABLE = [
    (x * 2 + x - 3 * x, 0),
    ((x + y) - (y + x), 0),
    (y + x, y + x),                                   # equal scales keep their order (TVM)
    (z * 3 + x - y * 2 + 7, z * 3 + x + 7 - y * 2),   # then the constant, then subtractions
    (x - y * 2 - x, 0 - y * 2),
    ((x + 1) * 4 - x * 4, 4),
    ((x - y) * 3 + y * 3 - 5, x * 3 - 5),
    (tir.Mul(y, x) - tir.Mul(x, y), 0),               # products compared up to order
    (floordiv(x * 8 + y * 4 + 12, 4), x * 2 + y + 3),
    (floordiv(x * 8 + y * 6 + 1, 4), x * 2 + floordiv(y * 3, 2)),   # 6y+1 = 2*(3y) + 1
    (floordiv(x * 8 + 7, 16), floordiv(x, 2)),
    (floordiv(x * 8 + 39, 16), floordiv(x, 2) + 2),
    (floormod(x * 8 + 7, 16), floormod(x, 2) * 8 + 7),
    (tir.min(x, y) - tir.min(y, x), 0),
    (floordiv(x * 6 + 4, 2), x * 3 + 2),
    (floordiv(x * 6 + y * 4, 8), floordiv(x * 3 + y * 2, 4)),
    (floordiv(i * 4 + j, 4), i),
    (floordiv(i * 4 + j + 4, 4), i + 1),
    (floormod(i * 4 + j + 4, 4), j),
    (floormod(x * 6 + y * 4 + 7, 2), 1),
    (floormod(x * 6 + y * 4, 8), floormod(x * 3 + y * 2, 4) * 2),
    (floormod(x * 4 + 5, 4), 1),
    (floormod(x + 13, 4), floormod(x + 1, 4)),
    (floordiv(i * 16 + j * 4 + floordiv(k, 2), 16), i),
    (floormod(i * 16 + j * 4 + floordiv(k, 2), 16), j * 4 + floordiv(k, 2)),
    (floordiv(x, 4) * 4 + floormod(x, 4), x),
    (floordiv(x + y, 8) * 16 + floormod(x + y, 8) * 2, (x + y) * 2),
    (floordiv(x + 4, 2), floordiv(x, 2) + 2),
    (truncdiv(i * 4 + j, 4), i),
    (truncmod(i * 4 + j, 4), j),
    (truncdiv(x * 4 + 3, 4), truncdiv(x * 4 + 3, 4)),   # x may be negative
    (tir.min(x + y - y, z), tir.min(x, z)),             # operands of atoms are simplified
]


@pytest.mark.parametrize("before, after", TABLE, ids=[show(b) for b, _ in TABLE])
def test_canonical_simplify(before, after):
    assert_same(analyzer().canonical_simplify(before), after, before)


@pytest.mark.parametrize("before, after", TABLE, ids=[show(b) for b, _ in TABLE])
def test_simplify_keeps_the_value(before, after):
    a = analyzer()
    assert a.can_prove_equal(a.simplify(before), after)


def test_canonical_simplify_alone_collects_terms():
    a = analyzer()
    assert_same(a.canonical_simplify(x * 2 + y - x - x), y)
    assert_same(a.canonical_simplify(floordiv(i * 4 + j, 4)), i)


def test_order_is_tvms():
    # TVM sorts terms by decreasing scale only; equal scales keep the order they came in
    a = analyzer()
    assert_same(a.canonical_simplify(z + x * 2 + y), x * 2 + z + y)
    assert_same(a.canonical_simplify(y + z + x + x), x * 2 + y + z)
    assert_same(a.canonical_simplify(y - x * 3 + 2), y + 2 - x * 3)


def test_int64_and_overflowing_coefficients():
    a = arith.Analyzer()
    v = tir.var("v", "int64")
    assert_same(a.simplify(v * 3 - v * 2), v)
    big = tir.const(2**30) * x + tir.const(2**30) * x  # 2**31 does not fit int32: left alone
    assert a.simplify(big).dtype == "int32"


def test_vectors_keep_lanes_and_simplify_their_scalars():
    a = analyzer()
    e = tir.Ramp(x + y - y, 1, 4) + tir.Broadcast(tir.const(1), 4)
    assert_same(a.simplify(e), tir.Ramp(x + 1, 1, 4))


def test_symbolic_divisors_stay_atoms():
    a = analyzer()
    e = floordiv(x, y) * y + floormod(x, y)
    out = a.simplify(e)
    assert out.dtype == "int32"
    assert_same(a.simplify(floormod(x, y) - floormod(x, y)), 0)


def test_select_branch_keeps_a_divisor_only_the_condition_makes_nonzero():
    # A Select computes both values: at z = 0, x // z would trap even though the
    # condition picks x. if_then_else runs one branch, so there the condition may be used.
    x, z = tir.var("x"), tir.var("z")
    guarded = floordiv(x, tir.max(z, 1))
    sel = tir.Select(0 < z, guarded, x)
    for method in ("canonical_simplify", "simplify"):
        out = getattr(arith.Analyzer(), method)(sel)
        assert tir.structural_equal(out.true_value, guarded), out
    ite = tir.if_then_else(0 < z, guarded, x)
    assert tir.structural_equal(arith.Analyzer().canonical_simplify(ite).args[1], floordiv(x, z))
