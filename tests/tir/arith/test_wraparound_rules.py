"""The rewrite rules that hold under wraparound, on 8/16-bit and unsigned integers (and bool).

Each row is ``(name, before, after)`` as functions of the vars ``x``, ``y``
of a dtype and a constant maker ``c``; the simplifier must give ``after``
for every dtype, and ``before`` and ``after`` must agree at every pair of
8-bit values (a sample with the extremes for wider types), computed by
NumPy, whose integers wrap as the machine's do. The rules that need
no-overflow (``x + 1 > x``) must not fire on these types.
"""

from __future__ import annotations

import numpy as np
import pytest

import tir
from tir import arith
from tir import expr as E
from tir.op_intrin import bitwise_and, bitwise_or, bitwise_xor

from .helpers import assert_same, show

DTYPES = ["int8", "int16", "uint8", "uint16", "uint32", "uint64"]
TRUE, FALSE = tir.const(True), tir.const(False)


def top(dtype: str) -> int:
    """A constant near the type's maximum, so that moving it across ``==`` wraps."""
    return int(tir.DataType(dtype).max_value()) - 2


IDENTITIES = [
    ("x == x", lambda x, y, c: E.EQ(x, x), lambda x, y, c: TRUE),
    ("x != x", lambda x, y, c: E.NE(x, x), lambda x, y, c: FALSE),
    ("x < x", lambda x, y, c: E.LT(x, x), lambda x, y, c: FALSE),
    ("x <= x", lambda x, y, c: E.LE(x, x), lambda x, y, c: TRUE),
    ("x > x", lambda x, y, c: E.GT(x, x), lambda x, y, c: FALSE),
    ("x >= x", lambda x, y, c: E.GE(x, x), lambda x, y, c: TRUE),
    ("x - x", lambda x, y, c: E.Sub(x, x), lambda x, y, c: c(0)),
    ("x ^ x", lambda x, y, c: bitwise_xor(x, x), lambda x, y, c: c(0)),
    ("x & x", lambda x, y, c: bitwise_and(x, x), lambda x, y, c: x),
    ("x | x", lambda x, y, c: bitwise_or(x, x), lambda x, y, c: x),
    ("min(x, x)", lambda x, y, c: E.Min(x, x), lambda x, y, c: x),
    ("max(x, x)", lambda x, y, c: E.Max(x, x), lambda x, y, c: x),
    ("x * 0", lambda x, y, c: E.Mul(x, c(0)), lambda x, y, c: c(0)),
    ("x * 1", lambda x, y, c: E.Mul(x, c(1)), lambda x, y, c: x),
    ("x + 0", lambda x, y, c: E.Add(x, c(0)), lambda x, y, c: x),
    ("x - 0", lambda x, y, c: E.Sub(x, c(0)), lambda x, y, c: x),
    ("(x + c) - c", lambda x, y, c: E.Sub(E.Add(x, c(top)), c(top)), lambda x, y, c: x),
    ("(x + y) - y", lambda x, y, c: E.Sub(E.Add(x, y), y), lambda x, y, c: x),
    ("x + y == y + x", lambda x, y, c: E.EQ(x + y, y + x), lambda x, y, c: TRUE),
    ("x + y != y + x", lambda x, y, c: E.NE(x + y, y + x), lambda x, y, c: FALSE),
    ("x + 1 == x", lambda x, y, c: E.EQ(x + c(1), x), lambda x, y, c: FALSE),
    ("x * 2 == x * 2 + 1", lambda x, y, c: E.EQ(x * c(2), x * c(2) + c(1)),
     lambda x, y, c: FALSE),
    # constants move across == and wrap: c2 + c1 may leave the type's range
    ("x - c1 == c2", lambda x, y, c: E.EQ(x - c(5), c(top)),
     lambda x, y, c: E.EQ(x, c(top) + c(5))),
    ("c1 - x == c2", lambda x, y, c: E.EQ(c(3) - x, c(top)),
     lambda x, y, c: E.EQ(x, c(3) - c(top))),
    ("x + c1 != c2", lambda x, y, c: E.NE(x + c(top), c(3)),
     lambda x, y, c: E.NE(x, c(3) - c(top))),
    ("c1 == x", lambda x, y, c: E.EQ(c(7), x), lambda x, y, c: E.EQ(x, c(7))),
]

# Rules that assume no overflow: each is false somewhere under wraparound.
NO_OVERFLOW_ONLY = [
    ("x + 1 > x", lambda x, y, c: E.GT(x + c(1), x)),
    ("x < x + 1", lambda x, y, c: E.LT(x, x + c(1))),
    ("x + 1 < x + 3", lambda x, y, c: E.LT(x + c(1), x + c(3))),
    ("x + y < x + 1", lambda x, y, c: E.LT(x + y, x + c(1))),  # not y < 1
    ("x * 4 < y * 4", lambda x, y, c: E.LT(x * c(4), y * c(4))),  # not x < y
    ("x * 16 == 0", lambda x, y, c: E.EQ(x * c(16), c(0))),  # not x == 0
]


def maker(dtype: str):
    """``c(v)``: a constant of ``dtype``; ``v`` may be a function of the dtype."""
    return lambda v: tir.const(v(dtype) if callable(v) else v, dtype)


def grid(dtype: str) -> tuple[np.ndarray, np.ndarray]:
    """Values of x and y: all 8-bit pairs, else the extremes, small values and a sample."""
    info = np.iinfo(dtype)
    if info.bits == 8:
        values = np.arange(info.min, info.max + 1)
    else:
        rng = np.random.default_rng(info.bits)
        edges = [info.min, info.min + 1, info.max - 1, info.max, 0, 1, 2]
        sample = rng.integers(info.min, info.max, 200, dtype=dtype, endpoint=True)
        values = np.concatenate([np.array(edges, dtype=object), np.arange(-8, 9), sample])
        values = values[(values >= info.min) & (values <= info.max)]
    xs, ys = np.meshgrid(np.array(values, dtype=dtype), np.array(values, dtype=dtype))
    return xs.ravel(), ys.ravel()


_NP = {
    E.Add: np.add, E.Sub: np.subtract, E.Mul: np.multiply, E.Min: np.minimum, E.Max: np.maximum,
    E.EQ: np.equal, E.NE: np.not_equal, E.LT: np.less, E.LE: np.less_equal, E.GT: np.greater,
    E.GE: np.greater_equal,
}
_NP_CALLS = {"tir.bitwise_and": np.bitwise_and, "tir.bitwise_or": np.bitwise_or,
             "tir.bitwise_xor": np.bitwise_xor}


def evaluate(e, env: dict, size: int) -> np.ndarray:
    """``e`` at every point of ``env`` (Var -> array), in ``e``'s NumPy dtype (wrapping)."""
    if type(e) in _NP:
        return _NP[type(e)](evaluate(e.a, env, size), evaluate(e.b, env, size))
    if type(e) is E.Call:
        return _NP_CALLS[e.op](*(evaluate(a, env, size) for a in e.args))
    if type(e) is E.IntImm:
        return np.full(size, e.value, e.dtype)
    if isinstance(e, E.Var):
        return env[e]
    raise TypeError(f"evaluate: unsupported {type(e).__name__}")


def simplify(e):
    return arith.Analyzer().simplify(e)


def parts(dtype: str):
    x, y = tir.var("x", dtype), tir.var("y", dtype)
    xs, ys = grid(dtype)
    return x, y, maker(dtype), {x: xs, y: ys}, xs.size


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("name", "before", "after"), IDENTITIES, ids=[r[0] for r in IDENTITIES])
def test_identities_simplify_and_keep_the_value(dtype, name, before, after):
    x, y, c, env, size = parts(dtype)
    e, want = before(x, y, c), after(x, y, c)
    assert_same(simplify(e), want, e)
    with np.errstate(over="ignore"):
        assert (evaluate(e, env, size) == evaluate(want, env, size)).all(), show(e)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("name", "before"), NO_OVERFLOW_ONLY, ids=[r[0] for r in NO_OVERFLOW_ONLY])
def test_rules_that_need_no_overflow_do_not_fire(dtype, name, before):
    x, y, c, env, size = parts(dtype)
    e = before(x, y, c)
    out = simplify(e)
    with np.errstate(over="ignore"):
        assert (evaluate(out, env, size) == evaluate(e, env, size)).all(), show(out)
    assert type(out) is not E.IntImm, f"{show(e)} folded to {show(out)} in {dtype}"


def test_int32_gets_the_no_overflow_rules():
    x = tir.var("x")
    assert_same(simplify(E.GT(x + 1, x)), TRUE)
    assert_same(simplify(E.LT(x + 1, x + 3)), TRUE)


@pytest.mark.parametrize("dtype", ["int8", "uint8"])
def test_vectors_compare_by_lane(dtype):
    x, y = tir.var("x", dtype), tir.var("y", dtype)
    one = tir.const(1, dtype)
    v = tir.Broadcast(x, 4)
    assert_same(simplify(E.EQ(v, v)), tir.Broadcast(TRUE, 4))
    assert_same(simplify(E.LT(tir.Broadcast(x, 4), tir.Broadcast(y, 4))),
                tir.Broadcast(E.LT(x, y), 4))
    # lanes x + k of two ramps wrap at different k: no rule compares their bases
    ramps = E.LT(tir.Ramp(x, one, 4), tir.Ramp(y, one, 4))
    assert_same(simplify(ramps), ramps)


def test_bools_compare_equal_to_themselves():
    b = tir.var("b", "bool")
    for before, after in [(E.EQ(b, b), TRUE), (E.NE(b, b), FALSE), (E.LT(b, b), FALSE),
                          (E.LE(b, b), TRUE), (E.GE(b, b), TRUE), (E.GT(b, b), FALSE)]:
        assert_same(simplify(before), after, before)


def test_floats_keep_x_eq_x():  # NaN == NaN is false
    f = tir.var("f", "float32")
    assert_same(simplify(E.EQ(f, f)), E.EQ(f, f))
    assert_same(simplify(E.LE(f, f)), E.LE(f, f))
