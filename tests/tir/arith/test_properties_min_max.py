"""Property tests for the Min/Max rules (rules/min_max.py): values survive rewriting.

Random expressions shaped like the rules' patterns (``min(x + c1, x + c2)``,
``min(truncdiv(x + c1, c2) * c2, max(x, c2))``, ``min(x * c1, c2)``,
``min(c1 - x, c2)``, lattice nests, Select pairs, vector broadcasts ...) are
rewritten and compared on random points (``value_check.mismatch``: narrow and
unsigned integers wrap, a point where a signed 32/64-bit value overflows does
not count). int32/int64 get every rule; int8/uint8/uint32 only the order
identities, which must hold under wraparound too.
"""

from __future__ import annotations

import os

from hypothesis import given, settings
from hypothesis import strategies as st

import tir
from tir import arith

from .helpers import show
from .value_check import free_vars, mismatch

SETTINGS = settings(max_examples=int(os.environ.get("ARITH_EXAMPLES", "80")), deadline=None)

INDEX_DTYPES = ["int32", "int64"]
RING_DTYPES = ["int8", "uint8", "uint32"]


def _vars(dtype: str) -> tuple:
    return tir.var("x", dtype), tir.var("y", dtype), tir.var("z", dtype)


def _consts(dtype: str):
    lo = 0 if dtype.startswith("u") else -12
    return st.integers(lo, 12).map(lambda v: tir.const(v, dtype))


def _lattice(children, const):
    """Shapes of the order identities: nests of min/max, constants, Select pairs."""
    pair = st.tuples(children, children)
    triple = st.tuples(children, children, children)
    ops = st.sampled_from([tir.min, tir.max])
    return st.one_of(
        st.tuples(ops, children, children).map(lambda p: p[0](p[1], p[2])),
        st.tuples(ops, ops, triple).map(  # min(max(x, y), max(x, z))
            lambda p: p[0](p[1](p[2][0], p[2][1]), p[1](p[2][0], p[2][2]))),
        st.tuples(ops, ops, pair).map(lambda p: p[0](p[1](p[2][0], p[2][1]), p[2][1])),
        st.tuples(ops, ops, pair).map(
            lambda p: p[0](p[1](p[2][0], p[2][1]), p[1](p[2][1], p[2][0]))),
        st.tuples(ops, triple, const).map(lambda p: p[0](p[0](p[1][0], p[2]), p[1][1])),
        st.tuples(ops, children, const, const).map(lambda p: p[0](p[0](p[1], p[2]), p[3])),
        st.tuples(ops, triple, pair).map(lambda p: p[0](
            tir.Select(p[1][0] < p[1][1], p[1][2], p[2][0]),
            tir.Select(p[1][0] < p[1][1], p[2][1], p[1][0]))),
        st.tuples(ops, triple).map(lambda p: p[0](p[0](p[0](p[1][0], p[1][1]), p[1][2]), p[1][1])),
        pair.map(lambda p: p[0] + p[1]),
        pair.map(lambda p: p[0] - p[1]),
    )


def _index(children, const):
    """Shapes of the no-overflow rules (signed 32/64-bit)."""
    pair = st.tuples(children, children)
    ops = st.sampled_from([tir.min, tir.max])
    coeff = st.sampled_from([-4, -3, -2, -1, 0, 1, 2, 3, 5])
    div = st.sampled_from([tir.truncdiv, tir.floordiv])
    step = st.sampled_from([2, 3, 4, 8])
    return st.one_of(
        _lattice(children, const),
        st.tuples(ops, children, const, const).map(lambda p: p[0](p[1] + p[2], p[1] + p[3])),
        st.tuples(ops, children, const).map(lambda p: p[0](p[1] + p[2], p[1])),
        st.tuples(ops, children, const, const).map(lambda p: p[0](p[2] - p[1], p[3] - p[1])),
        st.tuples(ops, children, const).map(lambda p: p[0](p[2] - p[1], p[2] + 3)),
        st.tuples(ops, div, children, step).map(
            lambda p: p[0](p[1](p[2] + (p[3] - 1), p[3]) * p[3], p[2])),
        st.tuples(ops, div, children, step).map(
            lambda p: p[0](p[1](p[2] + (p[3] - 1), p[3]) * p[3], tir.max(p[2], p[3]))),
        st.tuples(ops, children, step).map(lambda p: p[0](tir.floordiv(p[1], p[2]) * p[2], p[1])),
        st.tuples(ops, pair, children).map(lambda p: p[0](p[1][0] + p[2], p[2] + p[1][1])),
        st.tuples(ops, pair, children).map(lambda p: p[0](p[2] - p[1][0], p[2] - p[1][1])),
        st.tuples(ops, pair, children).map(lambda p: p[0](p[1][0] - p[2], p[1][1] - p[2])),
        st.tuples(ops, div, pair, st.sampled_from([-10, -3, 3, 10])).map(
            lambda p: p[0](p[1](p[2][0], p[3]), p[1](p[2][1], p[3]))),
        st.tuples(ops, pair, coeff).map(lambda p: p[0](p[1][0] * p[2], p[1][1] * p[2])),
        st.tuples(ops, children, coeff, st.integers(-12, 12)).map(
            lambda p: p[0](p[1] * p[2], p[3])),
        st.tuples(ops, children, const, st.integers(-6, 6)).map(lambda p: p[0](p[2] - p[1], p[3])),
    )


def _exprs(dtype: str, shapes):
    x, y, z = _vars(dtype)
    const = _consts(dtype)
    leaves = st.one_of(st.sampled_from([x, y, z]), const)
    return st.recursive(leaves, lambda c: shapes(c, const), max_leaves=6)


def _rewrite_and_compare(e, ranges: dict | None = None) -> None:
    a = arith.Analyzer()
    constraint = None
    for v, (lo, hi) in (ranges or {}).items():
        a.bind(v, tir.Range(lo, hi + 1))
        c = tir.all(v >= lo, v <= hi)
        constraint = c if constraint is None else tir.all(constraint, c)
    out = a.rewrite_simplify(e)
    assert out.dtype == e.dtype
    problem = mismatch(e, out, constraint, points=300)
    assert problem is None, f"{show(e)} -> {show(out)}: {problem}"


@SETTINGS
@given(st.sampled_from(INDEX_DTYPES).flatmap(lambda d: _exprs(d, _index)))
def test_min_max_rules_preserve_values(e):
    _rewrite_and_compare(e)


@SETTINGS
@given(st.sampled_from(INDEX_DTYPES).flatmap(lambda d: _exprs(d, _index)))
def test_min_max_rules_preserve_values_with_bounds(e):
    """Bounds make the conditions (operand bounds, ``x >= 1``) provable."""
    found = {v.name: v for v in free_vars(e)}
    ranges = {found[n]: r for n, r in (("x", (1, 20)), ("y", (-5, 9)), ("z", (3, 7))) if n in found}
    _rewrite_and_compare(e, ranges)


@SETTINGS
@given(st.sampled_from(RING_DTYPES).flatmap(lambda d: _exprs(d, _lattice)))
def test_order_identities_survive_wraparound(e):
    _rewrite_and_compare(e)


@SETTINGS
@given(st.tuples(st.sampled_from(INDEX_DTYPES + RING_DTYPES), st.sampled_from([tir.min, tir.max]),
                 st.integers(0, 9), st.integers(0, 9)))
def test_vector_broadcast_rules_preserve_values(p):
    dtype, fn, a, b = p
    vx = tir.var("vx", f"{dtype}x4")
    y, z, _ = _vars(dtype)
    ca, cb = tir.const(a, dtype), tir.const(b, dtype)
    for e in (fn(fn(vx, tir.Broadcast(y, 4)), tir.Broadcast(z, 4)),
              fn(tir.Broadcast(y + ca, 4), tir.Broadcast(z, 4)),
              fn(fn(vx, tir.Broadcast(ca, 4)), tir.Broadcast(cb, 4))):
        _rewrite_and_compare(e)


def _families(x, y, z):
    """One expression per rule family, in both operand orders where TVM lists both."""
    fld, tdiv = tir.floordiv, tir.truncdiv
    out = []
    for op, other in ((tir.min, tir.max), (tir.max, tir.min)):
        out += [
            op(x + 3, x + 7), op(x - 4, x), op(x, x + 5), op(3 - x, 8 - x),
            op(tdiv(x + 3, 4) * 4, x), op(x, fld(x + 7, 8) * 8), op(fld(x, 4) * 4, x),
            op(y + x, x + z), op(x - y, x - z), op(y - x, z - x),
            op(tdiv(x, 10), tdiv(y, 10)), op(tdiv(x, -10), tdiv(y, -10)),
            op(fld(x, 10), fld(y, 10)), op(fld(x, -10), fld(y, -10)),
            op(x * 3, y * 3), op(x * -2, y * -2),
            op(x * 3, 9), op(x * -2, 4), op(x * -2, -4), op(x * 0, 4), op(x * 0, -4),
            op(3 - x, 2), op(3 - x, -5),
            *_order_families(op, other, x, y, z),
        ]
    return out


def _order_families(op, other, x, y, z):
    """The families that hold in any total order (the ring tables)."""
    c = tir.const(5, x.dtype)
    return [
        op(other(x, y), op(x, y)), op(op(x, y), y), op(other(y, x), x),
        op(op(op(x, y), z), y), op(other(x, y), other(z, x)), op(op(y, x), op(x, z)),
        op(op(x, c), tir.const(9, x.dtype)), op(op(x, c), y),
        op(tir.Select(x < y, y, z), tir.Select(x < y, z, x)),
    ]


def test_each_family_keeps_values():
    """Every family, rewritten unbounded and with ranges, on random points."""
    for dtype in INDEX_DTYPES:
        x, y, z = _vars(dtype)
        for e in _families(x, y, z):
            _rewrite_and_compare(e)
            _rewrite_and_compare(e, {x: (1, 30), y: (-6, 9), z: (2, 7)})


def test_order_families_survive_wraparound():
    for dtype in RING_DTYPES:
        x, y, z = _vars(dtype)
        for op, other in ((tir.min, tir.max), (tir.max, tir.min)):
            for e in _order_families(op, other, x, y, z):
                _rewrite_and_compare(e)
