"""Property tests: ``Analyzer.int_set`` and the region estimates hold every value.

Random expressions over two relaxed vars (``x`` in a constant interval, ``y``
in one that moves with the free var ``z``) and two free vars (``z``, and ``w``
used as a positive divisor) are evaluated at every point of the domains; each
value must lie between the set's ends evaluated at the free vars' values.
The free vars' ranges are known to the analyzer (``bind``), which decides
signs with them. Region estimates are checked against the enumerated touched
indices: the upper bound holds all of them, a strict bound is exactly them.
"""

from __future__ import annotations

import itertools
import os

from hypothesis import given, settings
from hypothesis import strategies as st

import tir
from tir import arith

from .helpers import COMPARISONS, evaluate, int_expressions, show

X, Y, Z, W = tir.var("x"), tir.var("y"), tir.var("z"), tir.var("w")
W_RANGE = (1, 4)

SETTINGS = settings(max_examples=int(os.environ.get("ARITH_EXAMPLES", "100")), deadline=None)

leaves = st.one_of(st.sampled_from([X, Y, Z, X, Y]), st.integers(-6, 6).map(tir.const))
divisors = st.sampled_from([1, 2, 3, 4, 8, -2, -3, W, W * 2, 0 - W, Z * Z + 1])


int_exprs = int_expressions(leaves, divisors, COMPARISONS[:3])

#: (x's lowest value, x's width, y's offset from z, y's width, z's range)
domains = st.tuples(st.integers(-6, 6), st.integers(0, 6), st.integers(-3, 3),
                    st.integers(0, 4), st.tuples(st.integers(-4, 3), st.integers(0, 4)))


def _case(dom):
    x_lo, x_w, y_off, y_w, (z_lo, z_w) = dom
    a = arith.Analyzer()
    a.bind(Z, tir.Range(z_lo, z_lo + z_w + 1))
    a.bind(W, tir.Range(W_RANGE[0], W_RANGE[1] + 1))
    dom_map = {X: arith.IntervalSet(x_lo, x_lo + x_w),
               Y: arith.IntervalSet(Z + y_off, Z + y_off + y_w)}
    frees = [dict(zip((Z, W), v)) for v in itertools.product(
        range(z_lo, z_lo + z_w + 1), range(W_RANGE[0], W_RANGE[1] + 1))]
    return a, dom_map, frees, (x_lo, x_w, y_off, y_w)


def _end(e, env):
    """The value of a set end at the free vars' values (None for an infinity)."""
    if e is arith.int_set.pos_inf() or e is arith.int_set.neg_inf():
        return None
    return evaluate(e, env)


@SETTINGS
@given(int_exprs, domains)
def test_values_lie_in_int_set(e, dom):
    a, dom_map, frees, (x_lo, x_w, y_off, y_w) = _case(dom)
    s = a.int_set(e, dom_map)
    for free in frees:
        lo, hi = _end(s.min_value, free), _end(s.max_value, free)
        z = free[Z]
        for x, y in itertools.product(range(x_lo, x_lo + x_w + 1),
                                      range(z + y_off, z + y_off + y_w + 1)):
            v = evaluate(e, {**free, X: x, Y: y})
            assert (lo is None or lo <= v) and (hi is None or v <= hi), (
                f"{show(e)} = {v} at x={x}, y={y}, {_show_env(free)}: outside {s}")


def _show_env(env):
    return ", ".join(f"{k.name}={v}" for k, v in env.items())


# ---------------------------------------------------------------- wrapping integers

X8, Y8 = tir.var("x8", "int8"), tir.var("y8", "int8")
leaves8 = st.one_of(st.sampled_from([X8, Y8]), st.integers(-100, 100).map(
    lambda v: tir.const(v, "int8")))


def _extend8(children):
    pair = st.tuples(children, children)
    return st.one_of(
        pair.map(lambda p: p[0] + p[1]),
        pair.map(lambda p: p[0] - p[1]),
        pair.map(lambda p: p[0] * p[1]),
        st.tuples(children, st.sampled_from([2, 3, -4])).map(
            lambda p: tir.floordiv(p[0], tir.const(p[1], "int8"))),
        st.tuples(children, st.sampled_from([2, 3, -4])).map(
            lambda p: tir.floormod(p[0], tir.const(p[1], "int8"))),
        pair.map(lambda p: tir.min(p[0], p[1])),
        pair.map(lambda p: tir.max(p[0], p[1])),
    )


int8_exprs = st.recursive(leaves8, _extend8, max_leaves=6)


@SETTINGS
@given(int8_exprs, st.integers(-128, 120), st.integers(0, 7), st.integers(-128, 120))
def test_int8_values_lie_in_int_set(e, x_lo, width, y_lo):
    """8-bit arithmetic wraps: the set must hold the wrapped values."""
    dom_map = {X8: arith.IntervalSet(tir.const(x_lo, "int8"), tir.const(x_lo + width, "int8")),
               Y8: arith.IntervalSet(tir.const(y_lo, "int8"), tir.const(y_lo + width, "int8"))}
    s = arith.Analyzer().int_set(e, dom_map)
    lo, hi = _end(s.min_value, {}), _end(s.max_value, {})
    for x, y in itertools.product(range(x_lo, x_lo + width + 1), range(y_lo, y_lo + width + 1)):
        v = evaluate(e, {X8: x, Y8: y})
        assert (lo is None or lo <= v) and (hi is None or v <= hi), (
            f"{show(e)} = {v} at x8={x}, y8={y}: outside {s}")


# ---------------------------------------------------------------- region estimates

I, J = tir.var("i"), tir.var("j")


def _index(kind, ci, cj, c, base):
    if kind == "affine":
        return base + I * ci + J * cj
    if kind == "div":
        return tir.floordiv(I * ci + J * cj + base, c)
    if kind == "mod":
        return tir.floormod(I * ci + J * cj + base, c)
    return tir.floordiv(I, c) * cj + tir.floormod(I, c) * ci + base


indices = st.builds(_index, st.sampled_from(["affine", "div", "mod", "digits"]),
                    st.integers(-4, 4), st.integers(-4, 4), st.integers(1, 5),
                    st.integers(-5, 5))


#: A predicate: none, one on the loop vars, or bounds on the first dimension's index.
predicates = st.one_of(
    st.none(),
    st.tuples(st.sampled_from(["vars", "index_lt", "index_ge", "index_le_gt"]),
              st.integers(-4, 30)),
)


def _predicate(kind, limit, first):
    if kind == "vars":
        return lambda env: env[I] * 2 + env[J] < limit, I * 2 + J < limit
    if kind == "index_lt":
        return lambda env: evaluate(first, env) < limit, first < limit
    if kind == "index_ge":
        return lambda env: evaluate(first, env) >= limit - 8, first >= limit - 8
    holds = lambda env: limit - 10 > evaluate(first, env) > limit - 20  # noqa: E731
    return holds, tir.all(limit - 10 > first, first > limit - 20)


@SETTINGS
@given(st.lists(st.tuples(indices, st.integers(1, 6)), min_size=1, max_size=2),
       st.integers(1, 8), st.integers(1, 5), predicates)
def test_region_estimates_hold_the_touched_indices(dims, n_i, n_j, pred):
    var_dom = {I: tir.Range(0, n_i), J: tir.Range(0, n_j)}
    holds, predicate = (lambda env: True), tir.IntImm("bool", 1)
    if pred is not None:
        holds, predicate = _predicate(pred[0], pred[1], dims[0][0])
    region = [tir.Range.from_min_extent(index, ext) for index, ext in dims]
    touched = set()
    for i, j in itertools.product(range(n_i), range(n_j)):
        env = {I: i, J: j}
        if not holds(env):
            continue
        starts = [evaluate(index, env) for index, _ in dims]
        for offsets in itertools.product(*(range(ext) for _, ext in dims)):
            touched.add(tuple(s + o for s, o in zip(starts, offsets)))
    upper = arith.estimate_region_upper_bound(region, var_dom, predicate)
    boxes = [(evaluate(s.min_value, {}), evaluate(s.max_value, {})) for s in upper]
    for point in touched:
        assert all(lo <= p <= hi for p, (lo, hi) in zip(point, boxes)), (
            f"{point} outside the upper bound {upper} of {[show(d) for d, _ in dims]}")
    strict = arith.estimate_region_strict_bound(region, var_dom, predicate)
    if strict is None:
        return
    exact = set(itertools.product(*(range(evaluate(s.min_value, {}),
                                          evaluate(s.max_value, {}) + 1) for s in strict)))
    assert exact == touched, f"strict bound {strict} of {[show(d) for d, _ in dims]}"


# ---------------------------------------------------------------- vectors

vectors = st.builds(
    lambda base, stride, lanes, other: tir.Ramp(base, stride, lanes) + tir.Broadcast(other, lanes),
    int_exprs, st.sampled_from([tir.const(3), tir.const(-2), W, Z]), st.integers(1, 4), int_exprs)


@SETTINGS
@given(vectors, domains)
def test_lanes_lie_in_the_vector_set(e, dom):
    a, dom_map, frees, (x_lo, x_w, y_off, y_w) = _case(dom)
    s = a.int_set(e, dom_map)
    for free in frees:
        lo, hi = _end(s.min_value, free), _end(s.max_value, free)
        z = free[Z]
        for x, y in itertools.product(range(x_lo, x_lo + x_w + 1),
                                      range(z + y_off, z + y_off + y_w + 1)):
            for v in evaluate(e, {**free, X: x, Y: y}):
                assert (lo is None or lo <= v) and (hi is None or v <= hi), (
                    f"{show(e)} has {v} at x={x}, y={y}, {_show_env(free)}: outside {s}")
