"""Property tests for integers that wrap around (uint8, int8, int16), checked by brute force.

Random expressions over two variables are evaluated with NumPy, whose
integer arithmetic wraps like the machine's, at every pair of 8-bit values
(a sample for int16). Bounds, residues, simplification and proofs must hold
at each of them. Int32 expressions over the casts of those values check the
analyses that read narrow values from index arithmetic (a bound check).
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

from .helpers import show

DTYPES = ["uint8", "int8", "int16"]
_INT16 = np.concatenate([np.arange(-32768, -32640), np.arange(-64, 64), np.arange(32640, 32768),
                         np.random.default_rng(16).integers(-32768, 32768, 128)]).astype("int16")


def _grid(dtype: str) -> tuple[np.ndarray, np.ndarray]:
    """Values of X and Y: all 8-bit pairs, or the extremes, middle and a sample of int16."""
    values = _INT16 if dtype == "int16" else np.arange(256).astype(dtype)
    xs, ys = np.meshgrid(values, values, indexing="ij")
    return xs.ravel(), ys.ravel()


_BINARY = {
    E.Add: np.add, E.Sub: np.subtract, E.Mul: np.multiply, E.Min: np.minimum,
    E.Max: np.maximum, E.FloorDiv: np.floor_divide, E.FloorMod: np.mod,
    E.Mod: np.fmod, E.LT: np.less, E.LE: np.less_equal, E.GT: np.greater,
    E.GE: np.greater_equal, E.EQ: np.equal, E.NE: np.not_equal,
    E.And: np.logical_and, E.Or: np.logical_or,
}


def evaluate(e, env: dict, size: int) -> np.ndarray:
    """The values of ``e`` at every point of ``env`` (Var -> array), in ``e``'s dtype."""
    cls = type(e)
    if cls in _BINARY or cls is E.Div:
        a, b = evaluate(e.a, env, size), evaluate(e.b, env, size)
        if cls is E.Div:  # C division: the divisor is a positive constant here
            return ((a - np.fmod(a, b)) // b).astype(a.dtype)
        return _BINARY[cls](a, b)
    if cls is E.IntImm:
        return np.full(size, e.value, "bool" if e.dtype == "bool" else e.dtype)
    if isinstance(e, E.Var):
        return env[e]
    if cls is E.Not:
        return np.logical_not(evaluate(e.a, env, size))
    if cls is E.Select:
        c, t, f = (evaluate(v, env, size) for v in (e.condition, e.true_value, e.false_value))
        return np.where(c, t, f)
    if cls is E.Cast:
        return evaluate(e.value, env, size).astype(e.dtype)  # narrowing wraps, as in C
    raise TypeError(f"evaluate: unsupported {cls.__name__}")


def _constants(dtype: str):
    t = tir.DataType(dtype)
    lo, hi = t.min_value(), t.max_value()
    edges = st.sampled_from(sorted({lo, lo + 1, -1 if lo < 0 else 2, 0, 1, 5, hi - 1, hi}))
    return st.one_of(edges, st.integers(lo, hi)).map(lambda v: tir.const(v, dtype))


def _extend(children, dtype):
    pair = st.tuples(children, children)
    divisor = st.sampled_from([1, 2, 3, 4, 7, 16]).map(lambda v: tir.const(v, dtype))
    cmp = st.sampled_from([tir.LT, tir.LE, tir.GT, tir.GE, tir.EQ, tir.NE])
    return st.one_of(
        pair.map(lambda p: p[0] + p[1]),
        pair.map(lambda p: p[0] - p[1]),
        pair.map(lambda p: p[0] * p[1]),
        pair.map(lambda p: tir.min(p[0], p[1])),
        pair.map(lambda p: tir.max(p[0], p[1])),
        st.tuples(children, divisor).map(lambda p: tir.floordiv(p[0], p[1])),
        st.tuples(children, divisor).map(lambda p: tir.floormod(p[0], p[1])),
        st.tuples(children, divisor).map(lambda p: tir.truncdiv(p[0], p[1])),
        st.tuples(cmp, children, children, children, children).map(
            lambda p: tir.Select(p[0](p[1], p[2]), p[3], p[4])),
    )


def _problem(dtype: str):
    """(dtype, an expression, a comparison) over the vars X and Y of ``dtype``."""
    x, y = tir.var("x", dtype), tir.var("y", dtype)
    leaves = st.one_of(st.sampled_from([x, y]), _constants(dtype))
    exprs = st.recursive(leaves, lambda c: _extend(c, dtype), max_leaves=6)
    cmp = st.sampled_from([tir.LT, tir.LE, tir.GT, tir.GE, tir.EQ, tir.NE])
    wide = st.sampled_from([None, 5, -3, 251])  # also compare int32(e) + c, as index checks do
    return st.tuples(st.just((x, y)), exprs, exprs, cmp, wide)


# ARITH_EXAMPLES=5000 for a long local search; the default keeps the file at a few seconds.
SETTINGS = settings(max_examples=int(os.environ.get("ARITH_EXAMPLES", "60")), deadline=None,
                    derandomize=True)


def _check_expression(a: arith.Analyzer, e, env: dict, size: int) -> None:
    values = evaluate(e, env, size).astype("int64")
    bound = a.const_int_bound(e)
    assert bound.min_value <= values.min() and values.max() <= bound.max_value, (
        f"{show(e)}: values [{values.min()}, {values.max()}] outside {bound}")
    m = a.modular_set(e)
    if m.coeff == 0:
        assert (values == m.base).all(), f"{show(e)}: not always {m.base}"
    else:
        assert (values % m.coeff == m.base % m.coeff).all(), f"{show(e)}: not in {m}"
    out = a.simplify(e)
    assert out.dtype == e.dtype
    assert (evaluate(out, env, size) == evaluate(e, env, size)).all(), f"{show(e)} -> {show(out)}"


def _check_comparison(a: arith.Analyzer, cond, env: dict, size: int) -> None:
    truth = evaluate(cond, env, size)
    if a.can_prove(cond):
        assert truth.all(), f"proved {show(cond)}, false somewhere"
    if a.can_prove(tir.Not(cond)):
        assert not truth.any(), f"proved !{show(cond)}, true somewhere"
    out = a.simplify(cond)
    assert (evaluate(out, env, size) == truth).all(), f"{show(cond)} -> {show(out)}"


@pytest.mark.parametrize("dtype", DTYPES)
def test_analyses_agree_with_brute_force(dtype):
    xs, ys = _grid(dtype)

    @SETTINGS
    @given(_problem(dtype))
    def check(problem):
        (x, y), lhs, rhs, cmp, wide = problem
        env, size = {x: xs, y: ys}, xs.size
        a = arith.Analyzer()
        _check_expression(a, lhs, env, size)
        _check_comparison(a, cmp(lhs, rhs), env, size)
        if wide is not None:
            index = lhs.astype("int32") + tir.const(wide)
            _check_expression(a, index, env, size)
            _check_comparison(a, cmp(index, rhs.astype("int32")), env, size)

    check()
