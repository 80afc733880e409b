"""Checking that a simplification keeps the value: evaluate before and after on random points.

``evaluate`` computes an integer/bool expression at P points at once (one
row per point, one column per lane) with exact Python integers, then applies
the dtype: narrow and unsigned integers wrap, as the machine does, while a
point where a signed 32/64-bit intermediate leaves its range is marked
invalid (TIR assumes index arithmetic does not overflow, and so do the
rules). A division by zero marks its point invalid too. ``same_value``
samples points (keeping those where the preconditions hold) and compares.
"""

from __future__ import annotations

import numpy as np

import tir
from tir import expr as E

#: A check on fewer valid points than this proves too little to count.
MIN_VALID = 20
#: How many points a row whose preconditions rarely hold is sampled at.
MAX_POINTS = 6000


class Unsupported(Exception):
    """The expression holds a node or dtype the evaluator does not model."""


class TooFewPoints(Exception):
    """Too few sampled points satisfy the preconditions (and divide by non-zero)."""


def _fix(values: np.ndarray, dtype: str, bad: np.ndarray) -> np.ndarray:
    """Apply ``dtype`` to exact values: wrap narrow/unsigned, flag signed 32/64 overflow."""
    t = tir.DataType(tir.DataType(dtype).element_of)
    if str(t) == "bool":
        return (values != 0).astype(object) * 1
    if not (t.is_int or t.is_uint):
        raise Unsupported(f"dtype {dtype}")
    bits = t.bits
    if t.is_int and bits >= 32:
        lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
        bad |= ((values < lo) | (values > hi)).any(axis=1)
        return values
    mask = (1 << bits) - 1
    wrapped = np.vectorize(lambda v: int(v) & mask, otypes=[object])(values)
    if t.is_int:
        half = 1 << (bits - 1)
        wrapped = np.vectorize(lambda v: v - (1 << bits) if v >= half else v, otypes=[object])(
            wrapped)
    return wrapped


def _tdiv(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


_BINARY = {
    E.Add: lambda a, b: a + b, E.Sub: lambda a, b: a - b, E.Mul: lambda a, b: a * b,
    E.Min: min, E.Max: max,
    E.FloorDiv: lambda a, b: a // b, E.FloorMod: lambda a, b: a % b,
    E.Div: _tdiv, E.Mod: lambda a, b: a - _tdiv(a, b) * b,
    E.LT: lambda a, b: int(a < b), E.LE: lambda a, b: int(a <= b),
    E.GT: lambda a, b: int(a > b), E.GE: lambda a, b: int(a >= b),
    E.EQ: lambda a, b: int(a == b), E.NE: lambda a, b: int(a != b),
    E.And: lambda a, b: int(bool(a) and bool(b)), E.Or: lambda a, b: int(bool(a) or bool(b)),
}
_DIVISIONS = (E.FloorDiv, E.FloorMod, E.Div, E.Mod)


def _lanes(e) -> int:
    lanes = tir.DataType(e.dtype).lanes
    if not isinstance(lanes, int):
        raise Unsupported("scalable lanes")
    return lanes


def evaluate(e, env: dict, points: int, bad: np.ndarray, zero: np.ndarray | None = None):
    """Values of ``e``, shape (points, lanes).

    ``bad`` collects (in place) the points where a signed 32/64-bit value
    overflows, ``zero`` those that divide by zero (``bad`` when not given).
    """
    return _Points(env, points, bad, bad if zero is None else zero).value(e)


class _Points:
    """One ``evaluate`` call: the points' var values and the masks it marks."""

    def __init__(self, env: dict, points: int, bad: np.ndarray, zero: np.ndarray):
        self.env, self.points, self.bad, self.zero = env, points, bad, zero

    def value(self, e) -> np.ndarray:
        lanes = _lanes(e)
        if isinstance(e, E.Var):
            if e not in self.env:
                raise Unsupported(f"free var {e.name} of dtype {e.dtype}")
            return self.env[e]
        rule = _RULES.get(type(e))
        if rule is None:
            raise Unsupported(type(e).__name__)
        return rule(self, e, lanes)

    def full(self, e, lanes: int) -> np.ndarray:
        """The values of ``e`` with every lane (a scalar broadcast), read-only."""
        return np.broadcast_to(self.value(e), (self.points, lanes))

    def binary(self, e, lanes: int) -> np.ndarray:
        a, b = self.full(e.a, lanes), self.full(e.b, lanes)
        if type(e) in _DIVISIONS:
            self.zero |= (b == 0).any(axis=1)
            b = np.where(b == 0, 1, b)
        out = np.vectorize(_BINARY[type(e)], otypes=[object])(a, b)
        return _fix(out, e.dtype, self.bad)

    def int_imm(self, e, lanes: int) -> np.ndarray:
        return np.full((self.points, 1), int(e.value), dtype=object)

    def not_(self, e, lanes: int) -> np.ndarray:
        return 1 - self.value(e.a)

    def select(self, e, lanes: int) -> np.ndarray:
        c = self.full(e.condition, lanes)
        t, f = self.full(e.true_value, lanes), self.full(e.false_value, lanes)
        return np.where(c != 0, t, f)

    def ramp(self, e, lanes: int) -> np.ndarray:
        base, stride = self.value(e.base), self.value(e.stride)
        return _fix(base + stride * np.arange(lanes, dtype=object)[None, :], e.dtype, self.bad)

    def broadcast(self, e, lanes: int) -> np.ndarray:
        return self.full(e.value, lanes).copy()

    def cast(self, e, lanes: int) -> np.ndarray:
        v = self.value(e.value)
        src = tir.DataType(tir.DataType(e.value.dtype).element_of)
        if not (src.is_int or src.is_uint or str(src) == "bool"):
            raise Unsupported("cast from a non-integer")
        return _fix(np.broadcast_to(v, (self.points, lanes)).copy(), e.dtype, self.bad)


#: ``_Points.value``'s rule per node class (a Var is looked up in the environment).
_RULES = {
    **dict.fromkeys(_BINARY, _Points.binary),
    E.IntImm: _Points.int_imm,
    E.Not: _Points.not_,
    E.Select: _Points.select,
    E.Ramp: _Points.ramp,
    E.Broadcast: _Points.broadcast,
    E.Cast: _Points.cast,
}


def free_vars(e) -> list:
    found = []
    tir.stmt_functor.post_order_visit(
        e, lambda n: found.append(n) if isinstance(n, E.Var) and n not in found else None)
    return found


def sample_env(variables: list, points: int, rng: np.random.Generator) -> dict:
    """Random values per var: mostly small (where rules have edge cases), some large."""
    env = {}
    for v in variables:
        t = tir.DataType(v.dtype)
        lanes = t.lanes if isinstance(t.lanes, int) else 1
        elem = tir.DataType(t.element_of)
        if str(elem) == "bool":
            vals = rng.integers(0, 2, (points, lanes))
        elif elem.is_int or elem.is_uint:
            bits = elem.bits
            lo = 0 if elem.is_uint else -(1 << (bits - 1))
            hi = (1 << bits) - 1 if elem.is_uint else (1 << (bits - 1)) - 1
            small = rng.integers(max(lo, -24), min(hi, 24) + 1, (points, lanes))
            wide = rng.integers(max(lo, -(1 << 20)), min(hi, 1 << 20) + 1, (points, lanes))
            edge = rng.choice([lo, lo + 1, hi - 1, hi, 0, 1, -1 if lo < 0 else 2], (points, lanes))
            pick = rng.integers(0, 10, (points, 1))
            vals = np.where(pick < 7, small, np.where(pick < 9, wide, edge))
        else:
            raise Unsupported(f"var dtype {v.dtype}")
        if isinstance(v, E.SizeVar):  # a size is never negative
            vals = np.abs(vals)
        env[v] = vals.astype(object)
    return env


def mismatch(before, after, constraint=None, points: int = 400, seed: int = 0) -> str | None:
    """None if ``after`` equals ``before`` at every valid sampled point, else a counterexample.

    Raises ``Unsupported`` when the evaluator cannot model the expressions,
    and ``TooFewPoints`` when fewer than ``MIN_VALID`` sampled points are
    valid (the preconditions rarely hold), since that would prove nothing.
    """
    rng = np.random.default_rng(seed)
    variables = free_vars(before)
    for v in free_vars(after) + (free_vars(constraint) if constraint is not None else []):
        if v not in variables:
            variables.append(v)
    env = sample_env(variables, points, rng)
    bad = np.zeros(points, dtype=bool)
    want = evaluate(before, env, points, bad)
    if constraint is not None:
        holds = np.broadcast_to(evaluate(constraint, env, points, bad), (points, 1))
        bad |= holds[:, 0] == 0
    # Only a new division by zero counts against ``after``: the exact value of a
    # signed 32/64-bit intermediate is what the no-overflow rules preserve.
    after_zero = np.zeros(points, dtype=bool)
    got = evaluate(after, env, points, np.zeros(points, dtype=bool), after_zero)
    if (~bad).sum() < MIN_VALID and points < MAX_POINTS:
        return mismatch(before, after, constraint, MAX_POINTS, seed)
    if (~bad).sum() < MIN_VALID:
        raise TooFewPoints(f"{(~bad).sum()} of {points} sampled points are valid")
    lanes = max(want.shape[1], got.shape[1])
    want = np.broadcast_to(want, (points, lanes))
    got = np.broadcast_to(got, (points, lanes))
    for p in range(points):
        if bad[p]:
            continue
        if after_zero[p] or not (want[p] == got[p]).all():
            where = ", ".join(f"{v.name}={list(env[v][p]) if env[v].shape[1] > 1 else env[v][p][0]}"
                              for v in variables)
            return f"at {where}: before gives {list(want[p])}, after gives " + (
                "a division by zero" if after_zero[p] else f"{list(got[p])}")
    return None
