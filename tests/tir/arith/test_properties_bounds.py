"""Property tests: ``const_int_bound`` and ``modular_set`` hold at random points, in five dtypes.

Random expressions over three variables of one dtype (int32, int64, int8,
uint8, uint32), bound to random ranges, are evaluated at the corners and at
random points of those ranges (at every point of small ranges), as the
machine computes them: int32/int64
index arithmetic is exact (TIR assumes it does not overflow: points where
it would are skipped as invalid programs), the other integers wrap around.
Division by zero, shifts by a negative amount or by the width or more, and
out-of-range float-to-int conversions are undefined: such points are skipped.
Every value must lie in the bound and satisfy the modular set (``coeff == 0``
meaning exactly ``base``), also under a constraint, at the points where the
constraint holds.
"""

from __future__ import annotations

import itertools
import os
import random

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import tir
from tir import arith
from tir import expr as E
from tir.arith import ConstIntBound
from tir.arith.constraints import add_constraint

from .helpers import show

DTYPES = ["int32", "int64", "int8", "uint8", "uint32"]
SETTINGS = settings(max_examples=int(os.environ.get("ARITH_EXAMPLES", "100")), deadline=None)
POINTS = 40


class Invalid(Exception):
    """The expression is undefined at this point (division by zero, bad shift, overflow)."""


def _info(dtype: str) -> tuple[int, int, int, bool]:
    t = tir.DataType(dtype)
    return t.bits, int(t.min_value()), int(t.max_value()), t.is_uint or t.bits < 32


def wrap(v: int, dtype: str) -> int:
    """``v`` as integer ``dtype`` holds it after wrapping around."""
    bits, lo, _, _ = _info(dtype)
    v &= (1 << bits) - 1
    return v + lo * 2 if lo < 0 and v >= 1 << (bits - 1) else v


def _result(v: int, dtype: str) -> int:
    """A node's value: wrapped for wrapping types; int32/int64 index arithmetic must fit."""
    _, lo, hi, wraps = _info(dtype)
    if wraps:
        return wrap(v, dtype)
    if not lo <= v <= hi:
        raise Invalid  # TIR assumes signed index arithmetic never overflows
    return v


def _tdiv(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _divide(cls, a: int, b: int) -> int:
    if b == 0:
        raise Invalid
    if cls is E.FloorDiv:
        return a // b
    if cls is E.FloorMod:
        return a % b
    if cls is E.Div:
        return _tdiv(a, b)
    return a - _tdiv(a, b) * b


_ARITH = {E.Add: lambda a, b: a + b, E.Sub: lambda a, b: a - b, E.Mul: lambda a, b: a * b,
          E.Min: min, E.Max: max}
_CMP = {E.LT: lambda a, b: a < b, E.LE: lambda a, b: a <= b, E.EQ: lambda a, b: a == b,
        E.NE: lambda a, b: a != b, E.GT: lambda a, b: a > b, E.GE: lambda a, b: a >= b}


def evaluate(e, env: dict) -> int:
    """The value of scalar ``e`` at ``env`` (Var -> int), or Invalid."""
    if isinstance(e, E.Var):
        return env[e]
    rule = _EVAL.get(type(e))
    if rule is None:
        raise TypeError(f"evaluate: unsupported {type(e).__name__}")
    return rule(e, env)


def _arith(e, env: dict) -> int:
    return _result(_ARITH[type(e)](evaluate(e.a, env), evaluate(e.b, env)), e.dtype)


def _division(e, env: dict) -> int:
    return _result(_divide(type(e), evaluate(e.a, env), evaluate(e.b, env)), e.dtype)


def _compare(e, env: dict) -> int:
    return int(_CMP[type(e)](evaluate(e.a, env), evaluate(e.b, env)))


def _and(e, env: dict) -> int:
    return int(bool(evaluate(e.a, env)) and bool(evaluate(e.b, env)))


def _select(e, env: dict) -> int:
    return evaluate(e.true_value if evaluate(e.condition, env) else e.false_value, env)


def _let(e, env: dict) -> int:
    return evaluate(e.body, {**env, e.var: evaluate(e.value, env)})


def _cast(e, env: dict) -> int:
    inner = e.value
    if tir.DataType(inner.dtype).is_float:  # only int -> float -> int round trips are built
        f = np.float32(evaluate(inner.value, env)) if inner.dtype == "float32" else float(
            evaluate(inner.value, env))
        v = int(f)  # C conversion truncates; out of the target's range is undefined
        _, lo, hi, _ = _info(e.dtype)
        if not lo <= v <= hi:
            raise Invalid
        return v
    return wrap(evaluate(inner, env), e.dtype)


def _call(e, env: dict) -> int:
    a, b = (evaluate(x, env) for x in e.args)
    bits, lo, hi, wraps = _info(e.dtype)
    if e.op == "tir.bitwise_and":
        return _result(a & b, e.dtype)
    if not 0 <= b < bits:
        raise Invalid
    if e.op == "tir.shift_right":
        return a >> b
    return _result(a << b, e.dtype)


#: ``evaluate``'s rule per node class (a Var is looked up in the environment).
_EVAL = {
    E.IntImm: lambda e, env: e.value,
    **dict.fromkeys(_ARITH, _arith),
    **dict.fromkeys((E.FloorDiv, E.FloorMod, E.Div, E.Mod), _division),
    **dict.fromkeys(_CMP, _compare),
    E.And: _and, E.Select: _select, E.Let: _let, E.Cast: _cast, E.Call: _call,
}


# ---------------------------------------------------------------- generators


@st.composite
def problems(draw, exprs=None):
    """A dtype, three vars with ranges, an expression over them, and optionally a constraint."""
    exprs = EXPRS if exprs is None else exprs
    dtype = draw(st.sampled_from(DTYPES))
    bits, lo, hi, _ = _info(dtype)
    ranges = {}
    for v in VARS[dtype]:
        if draw(st.integers(0, 3)) or bits <= 8:  # mostly small: every point is checked
            a = draw(st.integers(max(lo, -20), min(hi, 20)))
            b = draw(st.integers(a, min(hi, a + 12)))
        else:  # wide ranges reach the type's limits (and int64's saturation to infinity)
            a = draw(st.integers(lo, hi))
            b = draw(st.integers(a, hi))
        ranges[v] = (a, b)
    expr = draw(exprs[dtype])
    cond = draw(st.none() | _conditions(dtype, expr))
    seed = draw(st.integers(0, 2**32 - 1))
    return dtype, ranges, expr, cond, seed


def _const(dtype: str):
    _, lo, hi, _ = _info(dtype)
    edges = sorted({lo, lo + 1, max(lo, -1), 0, 1, 2, 3, 4, 7, 8, 16, 31, hi - 1, hi})
    return st.one_of(st.sampled_from(edges), st.integers(lo, hi)).map(
        lambda v: tir.const(v, dtype))


def _leaves(vars_, dtype):
    return st.one_of(st.sampled_from(vars_), _const(dtype))


def _extend(children, vars_, dtype):
    bits = _info(dtype)[0]
    pair = st.tuples(children, children)
    small = st.sampled_from([1, 2, 3, 4, 8, 16, 5, -1, -4]).filter(
        lambda v: v >= 0 or not tir.DataType(dtype).is_uint).map(lambda v: tir.const(v, dtype))
    divisor = st.one_of(small, children)
    shift = st.one_of(st.integers(0, bits - 1).map(lambda v: tir.const(v, dtype)), children)
    mask = st.sampled_from([1, 3, 7, 15, 31, 6, 12]).map(lambda v: tir.const(v, dtype))
    cmp = st.sampled_from([tir.LT, tir.LE, tir.EQ, tir.NE])
    other = "int64" if dtype != "int64" else "int32"
    division = st.tuples(children, divisor)
    shifts = st.tuples(st.sampled_from(["tir.shift_right", "tir.shift_left"]), children, shift)
    return st.one_of(
        st.tuples(st.sampled_from([tir.Add, tir.Sub, tir.Mul, tir.Min, tir.Max]), pair).map(
            lambda p: p[0](*p[1])),
        st.tuples(children, small).map(lambda p: tir.Mul(*p)),
        division.map(lambda p: tir.FloorDiv(*p)),
        division.map(lambda p: tir.FloorMod(*p)),
        division.map(lambda p: tir.Div(*p)),
        division.map(lambda p: tir.Mod(*p)),
        st.tuples(cmp, children, children, children, children).map(
            lambda p: tir.Select(p[0](p[1], p[2]), p[3], p[4])),
        shifts.map(lambda p: tir.Call(dtype, p[0], [p[1], p[2]])),
        st.tuples(children, st.one_of(mask, children)).map(
            lambda p: tir.Call(dtype, "tir.bitwise_and", [*p])),
        st.tuples(st.sampled_from([other, "float32", "float64"]), children).map(
            lambda p: tir.Cast(dtype, tir.Cast(p[0], p[1]))),
        st.tuples(children, children).map(lambda p: _let(p[0], p[1], dtype)),
    )


_LET_VAR = {}


def _let(value, body, dtype):
    v = _LET_VAR.setdefault(dtype, tir.var("t", dtype))
    return tir.Let(v, value, tir.Add(body, v))


def _conditions(dtype, expr):
    var = st.sampled_from(VARS[dtype])
    _, lo, hi, _ = _info(dtype)
    const = st.integers(max(lo, -9), min(hi, 9)).map(lambda c: tir.const(c, dtype))
    pos = st.sampled_from([2, 3, 4, 8]).map(lambda m: tir.const(m, dtype))
    one = st.one_of(
        st.tuples(st.sampled_from([tir.LT, tir.LE, tir.GE, tir.GT, tir.EQ]), const).map(
            lambda p: p[0](expr, p[1])),
        st.tuples(st.sampled_from([tir.LT, tir.LE, tir.GE]), const).map(
            lambda p: p[0](p[1], expr)),
        st.tuples(var, pos).map(lambda p: tir.EQ(tir.FloorMod(p[0], p[1]), tir.const(1, dtype))),
        st.tuples(var, pos).map(lambda p: tir.EQ(tir.Mod(p[0], p[1]), tir.const(1, dtype))),
        st.tuples(var, const).map(lambda p: tir.EQ(*p)),
        st.tuples(var, var).map(lambda p: tir.LT(*p)),
    )
    return st.one_of(one, st.tuples(one, one).map(lambda p: tir.And(*p)))


VARS = {d: [tir.var(n, d) for n in ("x", "y", "z")] for d in DTYPES}
EXPRS = {d: st.recursive(_leaves(VARS[d], d), lambda ch, d=d: _extend(ch, VARS[d], d),
                         max_leaves=8) for d in DTYPES}
#: One operator over leaves: each rule on its own, where a wrong end cannot hide.
SHALLOW = {d: _extend(_leaves(VARS[d], d), VARS[d], d) for d in DTYPES}


# ---------------------------------------------------------------- the properties


def _points(ranges: dict, seed: int) -> list[dict]:
    """Every point of small ranges; else the corners and random points."""
    sizes = [hi - lo + 1 for lo, hi in ranges.values()]
    if sizes[0] * sizes[1] * sizes[2] <= 3000:
        return [dict(zip(ranges, vals)) for vals in itertools.product(
            *(range(lo, hi + 1) for lo, hi in ranges.values()))]
    rng = random.Random(seed)
    corners = [dict(zip(ranges, vals)) for vals in itertools.product(*ranges.values())]
    sampled = [{v: rng.randint(lo, hi) for v, (lo, hi) in ranges.items()}
               for _ in range(POINTS)]
    return corners + sampled


def _values(e, points: list[dict]) -> list[tuple[dict, int]]:
    out = []
    for env in points:
        try:
            out.append((env, evaluate(e, env)))
        except Invalid:
            pass
    return out


def _holds(cond, env: dict) -> bool:
    try:
        return bool(evaluate(cond, env))
    except Invalid:
        return False


def _check(a: arith.Analyzer, e, values, where: str) -> None:
    bound = a.const_int_bound(e)
    lo = -float("inf") if bound.min_value == ConstIntBound.NEG_INF else bound.min_value
    hi = float("inf") if bound.max_value == ConstIntBound.POS_INF else bound.max_value
    m = a.modular_set(e)
    for env, v in values:
        at = f"{show(e)} at {env}{where}"
        assert lo <= v <= hi, f"{at}: {v} outside [{bound.min_value}, {bound.max_value}]"
        if m.coeff == 0:
            assert v == m.base, f"{at}: {v} != {m.base}"
        else:
            assert (v - m.base) % m.coeff == 0, f"{at}: {v} not {m.coeff}k + {m.base}"


def _analyzer(ranges: dict) -> arith.Analyzer:
    a = arith.Analyzer()
    for v, (lo, hi) in ranges.items():
        a.update(v, ConstIntBound(lo, hi))
    return a


@SETTINGS
@given(problems())
def test_values_lie_in_bound_and_modular_set(problem):
    dtype, ranges, e, _, seed = problem
    _check(_analyzer(ranges), e, _values(e, _points(ranges, seed)), "")


@SETTINGS
@given(problems(SHALLOW))
def test_one_operator_values_lie_in_bound_and_modular_set(problem):
    dtype, ranges, e, _, seed = problem
    _check(_analyzer(ranges), e, _values(e, _points(ranges, seed)), "")


@SETTINGS
@given(problems())
def test_values_lie_in_bound_and_modular_set_under_a_constraint(problem):
    dtype, ranges, e, cond, seed = problem
    if cond is None:
        return
    a = _analyzer(ranges)
    points = [env for env in _points(ranges, seed) if _holds(cond, env)]
    # The raw condition, as TVM's EnterConstraint sees it: constraint_scope simplifies it
    # first, which test_properties.py covers; here the facts drawn from it are on trial.
    snap = a.facts.snapshot()
    add_constraint(a, cond)
    try:
        _check(a, e, _values(e, points), f" under {show(cond)}")
    finally:
        a.facts.restore(snap)


@SETTINGS
@given(problems())
def test_bound_of_a_bound_var_range(problem):
    """``bind(var, Range)`` instead of ``update``: the same facts, the same soundness."""
    dtype, ranges, e, _, seed = problem
    a = arith.Analyzer()
    for v, (lo, hi) in ranges.items():
        top = _info(dtype)[2]
        if hi < top and hi - lo < top // 2:  # begin, end and the extent are values of the dtype
            a.bind(v, tir.Range(tir.const(lo, dtype), tir.const(hi + 1, dtype)))
    _check(a, e, _values(e, _points(ranges, seed)), "")
