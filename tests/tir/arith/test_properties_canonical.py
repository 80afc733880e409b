"""Property tests of the canonical simplifier: sums of splits keep every value.

Random index expressions (int32 and int64) mix the operations the sum form
handles (``+ - *``, division and modulus by constants of both signs, nested
splits that recombine, products that cancel against symbolic divisors, casts)
and are evaluated at random points, with and without bounds on the variables.
Integers that wrap (int8, uint8) must keep their wrapped value: the sum form
never applies to them, and a cast down to them is pushed into a sum only
where every partial sum fits.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tir
from tir import arith
from tir import expr as E

from .helpers import evaluate, show

SETTINGS = settings(max_examples=int(os.environ.get("ARITH_EXAMPLES", "150")), deadline=None)


_VARS = {d: (tir.var("x", d), tir.var("y", d), tir.var("z", d)) for d in ("int32", "int64")}


def _vars(dtype: str) -> tuple:
    return _VARS[dtype]


def _index_exprs(dtype: str):
    x, y, z = _vars(dtype)
    pos = tir.max(z, tir.const(1, dtype))  # a symbolic divisor that is never 0
    leaves = st.one_of(st.sampled_from([x, y, z, pos]),
                       st.integers(-20, 20).map(lambda v: tir.const(v, dtype)))
    consts = st.sampled_from([1, 2, 3, 4, 6, 8, 16, -2, -3, -8]).map(
        lambda v: tir.const(v, dtype))
    divisors = st.one_of(consts, st.sampled_from([pos, pos * 2, pos * pos]))

    def extend(children):
        pair = st.tuples(children, children)
        return st.one_of(
            pair.map(lambda p: p[0] + p[1]),
            pair.map(lambda p: p[0] - p[1]),
            st.tuples(children, st.integers(-4, 8)).map(lambda p: p[0] * p[1]),
            pair.map(lambda p: tir.Mul(p[0], p[1])),
            st.tuples(children, divisors).map(lambda p: tir.floordiv(p[0], p[1])),
            st.tuples(children, divisors).map(lambda p: tir.floormod(p[0], p[1])),
            st.tuples(children, divisors).map(lambda p: tir.truncdiv(p[0], p[1])),
            st.tuples(children, divisors).map(lambda p: tir.truncmod(p[0], p[1])),
            # a split and its recombination: x / c * c + x % c, and the nested form
            st.tuples(children, consts).map(
                lambda p: tir.floordiv(p[0], p[1]) * p[1] + tir.floormod(p[0], p[1])),
            st.tuples(children, st.sampled_from([2, 3, 4])).map(
                lambda p: tir.truncdiv(p[0], p[1] * 2) * (p[1] * 2)
                + tir.truncmod(tir.truncdiv(p[0], p[1]), 2) * p[1] + tir.truncmod(p[0], p[1])),
            pair.map(lambda p: tir.min(p[0], p[1])),
            # branches are simplified under their condition
            st.tuples(children, children, children, children).map(
                lambda p: tir.Select(p[0] < p[1], p[2], p[3])),
        )

    return st.recursive(leaves, extend, max_leaves=7)


def _points(n: int = 12, lo: int = -60, hi: int = 60):
    return st.lists(st.tuples(st.integers(lo, hi), st.integers(lo, hi), st.integers(lo, hi)),
                    min_size=n, max_size=n)


def _values(e, dtype: str, points) -> list:
    x, y, z = _vars(dtype)
    out = []
    for p in points:
        try:
            out.append(evaluate(e, dict(zip((x, y, z), p))))
        except ZeroDivisionError:
            out.append("undefined")
    return out


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_canonical_simplify_keeps_values(dtype):
    @SETTINGS
    @given(_index_exprs(dtype), _points())
    def check(e, points):
        out = arith.Analyzer().canonical_simplify(e)
        assert out.dtype == e.dtype
        before, after = _values(e, dtype, points), _values(out, dtype, points)
        for b, a in zip(before, after):
            if b != "undefined":  # a division by zero may be simplified away
                assert a == b, f"{show(e)} -> {show(out)}"

    check()


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_canonical_simplify_under_bounds_keeps_values(dtype):
    bounds = st.tuples(*(st.tuples(st.integers(-30, 10), st.integers(0, 40))
                         for _ in range(3)))

    @SETTINGS
    @given(_index_exprs(dtype), bounds, st.data())
    def check(e, ranges, data):
        a = arith.Analyzer()
        spans = [(lo, lo + width) for lo, width in ranges]
        for v, (lo, hi) in zip(_vars(dtype), spans):
            a.update(v, arith.ConstIntBound(lo, hi))
        out = a.canonical_simplify(e)
        points = data.draw(st.lists(st.tuples(*(st.integers(lo, hi) for lo, hi in spans)),
                                    min_size=10, max_size=10))
        before, after = _values(e, dtype, points), _values(out, dtype, points)
        for b, v in zip(before, after):
            if b != "undefined":
                assert v == b, f"{show(e)} -> {show(out)} under {spans}"

    check()


def test_canonical_comparisons_keep_their_truth():
    x, y, z = _vars("int32")
    exprs = _index_exprs("int32")

    @SETTINGS
    @given(exprs, exprs, st.data())
    def check(lhs, rhs, data):
        a = arith.Analyzer()
        a.bind(y, tir.Range(0, 8))
        a.bind(z, tir.Range(0, 2))
        cond = lhs < rhs
        out = a.canonical_simplify(cond)
        points = data.draw(st.lists(st.tuples(st.integers(-40, 40), st.integers(0, 7),
                                              st.integers(0, 1)), min_size=16, max_size=16))
        for b, v in zip(_values(cond, "int32", points), _values(out, "int32", points)):
            if b != "undefined":
                assert v == b, f"{show(cond)} -> {show(out)}"

    check()


# ------------------------------------------------------------ wrapping integers

_NP = {
    E.Add: np.add, E.Sub: np.subtract, E.Mul: np.multiply, E.Min: np.minimum,
    E.Max: np.maximum, E.FloorDiv: np.floor_divide, E.FloorMod: np.mod, E.Mod: np.fmod,
}


def _np_eval(e, env: dict, size: int) -> np.ndarray:
    """``e`` at every point, with NumPy's wrapping integer arithmetic."""
    cls = type(e)
    if cls in _NP or cls is E.Div:
        a, b = _np_eval(e.a, env, size), _np_eval(e.b, env, size)
        with np.errstate(over="ignore"):
            if cls is E.Div:  # C division (the divisors here are positive constants)
                return ((a - np.fmod(a, b)) // b).astype(a.dtype)
            return _NP[cls](a, b)
    if cls is E.IntImm:
        return np.full(size, e.value, e.dtype)
    if isinstance(e, E.Var):
        return env[e]
    if cls is E.Cast:
        return _np_eval(e.value, env, size).astype(e.dtype)  # narrowing wraps, as in C
    raise TypeError(f"unsupported {cls.__name__}")


@pytest.mark.parametrize("dtype", ["int8", "uint8"])
def test_narrow_integers_keep_their_wrapped_value(dtype):
    values = np.arange(256).astype(dtype)
    xs, ys = (g.ravel() for g in np.meshgrid(values, values, indexing="ij"))
    x, y = tir.var("x", dtype), tir.var("y", dtype)
    wx, wy = tir.Cast("int32", x), tir.Cast("int32", y)
    t = tir.DataType(dtype)
    consts = st.integers(t.min_value(), t.max_value()).map(lambda v: tir.const(v, dtype))
    divisor = st.sampled_from([1, 2, 3, 4, 16])

    def narrow(children):
        pair = st.tuples(children, children)
        return st.one_of(
            pair.map(lambda p: p[0] + p[1]),
            pair.map(lambda p: p[0] - p[1]),
            pair.map(lambda p: p[0] * p[1]),
            st.tuples(children, divisor).map(
                lambda p: tir.floordiv(p[0], tir.const(p[1], dtype))),
            st.tuples(children, divisor).map(
                lambda p: tir.floormod(p[0], tir.const(p[1], dtype))),
            st.tuples(children, divisor).map(
                lambda p: tir.truncdiv(p[0], tir.const(p[1], dtype))),
            # int32 arithmetic on the widened values, cast back down (wraps)
            st.tuples(st.sampled_from([wx, wy]), st.integers(-300, 300),
                      st.sampled_from([wx, wy]), st.integers(-3, 3)).map(
                lambda p: tir.Cast(dtype, p[0] * p[3] + p[2] + p[1])),
            st.tuples(st.sampled_from([wx, wy]), divisor).map(
                lambda p: tir.Cast(dtype, tir.floordiv(p[0] * 8 + 300, p[1]) - p[0])),
        )

    exprs = st.recursive(st.one_of(st.sampled_from([x, y]), consts), narrow, max_leaves=6)

    @SETTINGS
    @given(exprs)
    def check(e):
        a = arith.Analyzer()
        out = a.canonical_simplify(e)
        assert out.dtype == e.dtype
        env = {x: xs, y: ys}
        got, want = _np_eval(out, env, xs.size), _np_eval(e, env, xs.size)
        assert (got == want).all(), f"{show(e)} -> {show(out)}"

    check()


def test_casts_into_a_narrow_type_are_pushed_only_when_every_step_fits():
    i, j = tir.var("i", "int64"), tir.var("j", "int64")
    a = arith.Analyzer()
    a.update(i, arith.ConstIntBound(0, 2**31 - 1))
    a.update(j, arith.ConstIntBound(0, 10))
    e = tir.Cast("int32", i + j - 100)
    assert tir.structural_equal(a.canonical_simplify(e), e)  # i + j may not fit int32
