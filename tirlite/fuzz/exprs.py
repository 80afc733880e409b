"""Random expressions, each built through the public ``tir`` API together with its model.

An ``X`` pairs a TIR expression with a function of the model ``State`` that computes
the same value by ``semantics`` (never by the interpreter). Signed 32/64-bit integers
also carry a static bound on their value: overflow of those types is undefined, so an
operation whose bound would leave the type first reduces its operands (``truncmod`` by
1024); 8/16-bit and unsigned integers wrap around and need no bound.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable

import numpy as np

import tir

from . import semantics as sem

FLOATS = ("float32", "float64")
INTS = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
#: Float constants that reach the edges: signed zeros, a denormal, huge, inf, NaN.
FLOAT_CONSTS = (0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, 0.1, 1e-40, 1e30, -1e30, float("inf"),
                float("nan"))
MATH = tuple(sem.MATH_ULPS)
COMPARES = {"<": tir.LT, "<=": tir.LE, "==": tir.EQ, "!=": tir.NE, ">": tir.GT, ">=": tir.GE}
SMALL = 1024  # operands that could overflow are first reduced below this


@dataclasses.dataclass
class State:
    """The model's memory and variables while a program runs."""

    bufs: dict  # buffer name -> np.ndarray of values
    errs: dict  # buffer name -> float64 array: the bound ``e`` of each element
    env: dict  # var name -> (v, e)
    mode: sem.Mode


@dataclasses.dataclass(frozen=True)
class X:
    """A generated expression: TIR, model function, dtype and (integers) a value bound."""

    expr: tir.PrimExpr
    fn: Callable[[State], tuple]
    dtype: str
    lo: int | None = None
    hi: int | None = None


def const(value, dtype: str) -> X:
    """A constant: its TIR node and its model value."""
    k = sem.kind(dtype)
    if k == "float":
        v = sem.np_type(dtype)(value)
        return X(tir.const(float(value), dtype), lambda st: (v, 0.0), dtype)
    if k == "bool":
        return X(tir.const(bool(value), "bool"), lambda st: (bool(value), 0.0), dtype)
    return X(tir.const(int(value), dtype), lambda st: (int(value), 0.0), dtype, value, value)


def full_bound(dtype: str) -> tuple:
    """The bound of an integer of ``dtype`` about which nothing is known."""
    return sem.int_range(dtype) if sem.kind(dtype) in ("int", "uint") else (None, None)


def fits(lo: int, hi: int, dtype: str) -> bool:
    """Whether every value in [lo, hi] is representable (always true for wrapping types)."""
    if sem.wraps(dtype):
        return True
    tlo, thi = sem.int_range(dtype)
    return tlo <= lo and hi <= thi


def _bound(lo: int, hi: int, dtype: str) -> tuple:
    return (lo, hi) if not sem.wraps(dtype) else sem.int_range(dtype)


class ExprGen:
    """Draws expressions of a dtype from leaves that the caller supplies."""

    def __init__(self, rng: random.Random, leaves: Callable[[str], list], dtypes: tuple):
        self.rng = rng
        self.leaves = leaves  # dtype -> list of zero-argument factories of X
        self.dtypes = dtypes  # the dtypes a cast may come from
        self.tags: set = set()  # what the expressions used (math, casts, ...), for the report
        self.fresh: Callable[[str], str] = lambda prefix: f"{prefix}{rng.getrandbits(24)}"

    # ------------------------------------------------------------ entry points

    def gen(self, dtype: str, depth: int) -> X:
        """A random expression of ``dtype`` at most ``depth`` operators deep."""
        if depth <= 0 or self.rng.random() < 0.25:
            return self.leaf(dtype)
        k = sem.kind(dtype)
        if k == "float":
            return self._float(dtype, depth)
        if k == "bool":
            return self.condition(depth)
        return self._int(dtype, depth)

    def leaf(self, dtype: str) -> X:
        """A load, a var, a constant, or a cast of a leaf of another dtype."""
        rng = self.rng
        factories = self.leaves(dtype)
        roll = rng.random()
        if factories and roll < 0.65:
            return rng.choice(factories)()
        if roll < 0.8:
            return self._constant(dtype)
        return self.cast(dtype, self.leaf(rng.choice(self.dtypes)))

    def _constant(self, dtype: str) -> X:
        k = sem.kind(dtype)
        if k == "float":
            return const(self.rng.choice(FLOAT_CONSTS), dtype)
        if k == "bool":
            return const(self.rng.random() < 0.5, dtype)
        lo, hi = sem.int_range(dtype)
        return const(self.rng.choice([0, 1, -1 if lo else 2, 7, 100, lo, hi, hi - 1]), dtype)

    # ------------------------------------------------------------ floats

    def _float(self, dtype: str, depth: int) -> X:
        rng = self.rng
        op = rng.choices(["+", "-", "*", "/", "min", "max", "neg", "abs", "fma", "select",
                          "ite", "math", "let"], [14, 10, 12, 5, 6, 6, 3, 3, 3, 6, 3, 6, 3])[0]
        a = self.gen(dtype, depth - 1)
        if op in ("neg", "abs"):
            return self._funary(op, a)
        if op == "math":
            return self.math(rng.choice(MATH), a)
        if op in ("select", "ite"):
            return self.select(self.condition(depth - 1), a, self.gen(dtype, depth - 1),
                               ite=op == "ite")
        b = self.gen(dtype, depth - 1)
        if op == "fma":
            return self._fma(a, b, self.gen(dtype, depth - 1))
        if op == "let":
            return self.let(a, lambda w: self.binary(rng.choice(["+", "*", "min"]), w, b))
        return self.binary(op, a, b)

    def _funary(self, op: str, a: X) -> X:
        if op == "neg":
            return X(-a.expr, lambda st: sem.fneg(a.fn(st)), a.dtype)
        return X(tir.abs(a.expr), lambda st: (abs(a.fn(st)[0]), a.fn(st)[1]), a.dtype)

    def math(self, name: str, a: X) -> X:
        """``tir.<name>(a)`` on a float."""
        self.tags.add("math")
        expr = getattr(tir, name)(a.expr)
        return X(expr, lambda st: sem.mathcall(name, a.fn(st)), a.dtype)

    def _fma(self, a: X, b: X, c: X) -> X:
        self.tags.add("fma")
        return X(tir.fma(a.expr, b.expr, c.expr),
                 lambda st: sem.ffma(a.fn(st), b.fn(st), c.fn(st), st.mode), a.dtype)

    def let(self, value: X, body: Callable[[X], X]) -> X:
        """``Let(w, value, body(w))``: an expression-level let."""
        name = self.fresh("w")
        var = tir.Var(name, value.dtype)
        w = X(var, lambda st: st.env[name], value.dtype, value.lo, value.hi)
        inner = body(w)

        def fn(st):
            st.env[name] = value.fn(st)
            return inner.fn(st)

        return X(tir.Let(var, value.expr, inner.expr), fn, inner.dtype, inner.lo, inner.hi)

    # ------------------------------------------------------------ integers

    def _int(self, dtype: str, depth: int) -> X:
        rng = self.rng
        op = rng.choices(["+", "-", "*", "min", "max", "div", "&", "|", "^", "<<", ">>",
                          "select", "let", "not"], [12, 10, 8, 5, 5, 10, 4, 3, 3, 4, 4, 5, 2, 2])[0]
        a = self.gen(dtype, depth - 1)
        if op == "not":
            return X(tir.bitwise_not(a.expr), lambda st: sem.inot(a.fn(st), dtype), dtype,
                     *full_bound(dtype))
        if op == "select":
            return self.select(self.condition(depth - 1), a, self.gen(dtype, depth - 1))
        if op == "div":
            return self.divide(rng.choice(["floordiv", "floormod", "truncdiv", "truncmod"]),
                               a, self.divisor(dtype))
        if op in ("<<", ">>"):
            return self.shift(op, a)
        b = self.gen(dtype, depth - 1)
        if op == "let":
            return self.let(a, lambda w: self.binary("+", w, b))
        return self.binary(op, a, b)

    def divisor(self, dtype: str) -> X:
        """A nonzero divisor, never -1 (``MIN / -1`` overflows): a constant or a leaf."""
        factories = [f for f in self.leaves(dtype + ":divisor")]
        if factories and self.rng.random() < 0.5:
            return self.rng.choice(factories)()
        signed = sem.kind(dtype) == "int"
        return const(self.rng.choice([2, 3, 7, 16] + ([-2, -3, -7] if signed else [255])), dtype)

    def divide(self, op: str, a: X, b: X) -> X:
        """One of the four integer divisions; ``b`` never holds 0 or -1."""
        self.tags.add(op)
        expr = getattr(tir, op)(a.expr, b.expr)
        m = max(abs(b.lo), abs(b.hi))
        if op.endswith("div"):
            lo, hi = -max(abs(a.lo), abs(a.hi)), max(abs(a.lo), abs(a.hi))
        else:
            lo, hi = -(m - 1), m - 1
        return X(expr, lambda st: sem.iarith(op, a.fn(st), b.fn(st), a.dtype), a.dtype,
                 *_bound(lo, hi, a.dtype))

    def shift(self, op: str, a: X) -> X:
        """A shift by a constant or by ``x & (bits - 1)``: always below the bit width."""
        dtype = a.dtype
        bits = tir.DataType(dtype).bits
        if self.rng.random() < 0.6:
            b = const(self.rng.randrange(bits), dtype)
        else:
            x = self.leaf(dtype)
            b = X(tir.bitwise_and(x.expr, bits - 1),
                  lambda st: sem.iarith("&", x.fn(st), (bits - 1, 0.0), dtype), dtype, 0, bits - 1)
        if op == ">>":
            lo, hi = min(a.lo, 0), max(a.hi, 0)
            return X(tir.shift_right(a.expr, b.expr),
                     lambda st: sem.iarith(">>", a.fn(st), b.fn(st), dtype), dtype,
                     *_bound(lo, hi, dtype))
        scale = 1 << b.hi
        if not fits(a.lo * scale, a.hi * scale, dtype):
            a = self.small(a)
            if not fits(a.lo * scale, a.hi * scale, dtype):
                return a
        return X(tir.shift_left(a.expr, b.expr),
                 lambda st: sem.iarith("<<", a.fn(st), b.fn(st), dtype), dtype,
                 *_bound(min(a.lo * scale, 0), max(a.hi * scale, 0), dtype))

    def small(self, a: X) -> X:
        """``truncmod(a, 1024)``: a value that no further + - * overflows."""
        return self.divide("truncmod", a, const(SMALL, a.dtype))

    # ------------------------------------------------------------ both

    def binary(self, op: str, a: X, b: X) -> X:
        """``a op b`` for + - * / min max & | ^ on ints or floats."""
        dtype = a.dtype
        if sem.kind(dtype) == "float":
            return self._fbinary(op, a, b)
        lo, hi = _interval(op, a, b)
        if not fits(lo, hi, dtype):
            a, b = self.small(a), self.small(b)
            lo, hi = _interval(op, a, b)
        expr = _INT_EXPR[op](a.expr, b.expr)
        return X(expr, lambda st: sem.iarith(op, a.fn(st), b.fn(st), dtype), dtype,
                 *_bound(lo, hi, dtype))

    def _fbinary(self, op: str, a: X, b: X) -> X:
        fn = _FLOAT_MODEL[op]
        return X(_FLOAT_EXPR[op](a.expr, b.expr), lambda st: fn(a.fn(st), b.fn(st), st.mode),
                 a.dtype)

    def select(self, c: X, t: X, f: X, ite: bool = False) -> X:
        """``Select`` (both sides evaluated) or ``if_then_else`` (one side)."""
        make = tir.if_then_else if ite else tir.Select
        lo = None if t.lo is None else min(t.lo, f.lo)
        hi = None if t.hi is None else max(t.hi, f.hi)
        return X(make(c.expr, t.expr, f.expr),
                 lambda st: sem.select(c.fn(st), t.fn(st), f.fn(st)), t.dtype, lo, hi)

    def condition(self, depth: int) -> X:
        """A bool: a comparison, isnan, a bool leaf, or and/or/not of conditions."""
        rng = self.rng
        roll = rng.random()
        if depth > 0 and roll < 0.2:
            a, b = self.condition(depth - 1), self.condition(depth - 1)
            if rng.random() < 0.5:
                return X(tir.And(a.expr, b.expr), lambda st: _and(a.fn(st), b.fn(st)), "bool")
            return X(tir.Or(a.expr, b.expr), lambda st: _or(a.fn(st), b.fn(st)), "bool")
        if depth > 0 and roll < 0.25:
            a = self.condition(depth - 1)
            return X(tir.Not(a.expr), lambda st: (not a.fn(st)[0], a.fn(st)[1]), "bool")
        if roll < 0.35:
            return self.leaf("bool")
        dtype = rng.choice(self.dtypes)
        a = self.gen(dtype, max(depth - 1, 0))
        if sem.kind(dtype) == "float" and rng.random() < 0.1:
            return X(tir.isnan(a.expr), lambda st: _isnan(a.fn(st)), "bool")
        b = self.gen(dtype, max(depth - 1, 0)) if rng.random() < 0.7 else self.leaf(dtype)
        op = rng.choice(list(COMPARES))
        return X(COMPARES[op](a.expr, b.expr), lambda st: sem.compare(op, a.fn(st), b.fn(st)),
                 "bool")

    def cast(self, dtype: str, a: X) -> X:
        """``a`` converted to ``dtype``; a float becomes an int only once clamped in range."""
        if a.dtype == dtype:
            return a
        self.tags.add("cast")
        src = a.dtype
        if sem.kind(src) == "float" and sem.kind(dtype) in ("int", "uint"):
            a = self._in_range(a, dtype)
        lo, hi = full_bound(dtype)
        if sem.kind(src) == "bool" and lo is not None:
            lo, hi = 0, 1
        elif a.lo is not None and lo is not None and lo <= a.lo and a.hi <= hi:
            lo, hi = a.lo, a.hi  # the value survives the conversion
        return X(tir.Cast(dtype, a.expr), lambda st: sem.cast(a.fn(st), src, dtype), dtype,
                 lo, hi)

    def _in_range(self, a: X, dtype: str) -> X:
        """``Select(a == a, min(max(a, lo), hi), 0)``: NaN and out-of-range never reach a cast."""
        lo, top = sem.int_range(dtype)  # lo = -2**(bits-1) or 0: exact in any float type
        t = sem.np_type(a.dtype)
        hi = t(top)  # rounds up when the type cannot hold top: step back below it
        hi = float(np.nextafter(hi, t(0)) if int(hi) > top else hi)
        lo_x, hi_x, zero = const(float(lo), a.dtype), const(hi, a.dtype), const(0.0, a.dtype)
        clamped = self._fbinary("min", self._fbinary("max", a, lo_x), hi_x)
        return self.select(self._fcompare("==", a, a), clamped, zero)

    def _fcompare(self, op: str, a: X, b: X) -> X:
        return X(COMPARES[op](a.expr, b.expr), lambda st: sem.compare(op, a.fn(st), b.fn(st)),
                 "bool")


def _interval(op: str, a: X, b: X) -> tuple:
    if op in ("+", "-", "*", "min", "max"):
        corners = [_INT_PY[op](x, y) for x in (a.lo, a.hi) for y in (b.lo, b.hi)]
        return min(corners), max(corners)
    # & | ^ of values in [lo, hi]: below the next power of two of the largest magnitude
    top = 1 << max(abs(a.lo), abs(a.hi), abs(b.lo), abs(b.hi)).bit_length()
    return (0 if min(a.lo, b.lo) >= 0 else -top), top - 1


def _and(a: tuple, b: tuple) -> tuple:
    v = a[0] and b[0]
    # a certain false side decides the result, whatever the other side
    if (not a[0] and not a[1]) or (not b[0] and not b[1]):
        return False, 0.0
    return bool(v), max(a[1], b[1])


def _or(a: tuple, b: tuple) -> tuple:
    if (a[0] and not a[1]) or (b[0] and not b[1]):
        return True, 0.0
    return bool(a[0] or b[0]), max(a[1], b[1])


def _isnan(a: tuple) -> tuple:
    return bool(a[0] != a[0]), (sem.INF if a[1] == sem.INF else 0.0)


_INT_PY = {"+": lambda x, y: x - -y, "-": lambda x, y: x - y, "*": lambda x, y: x * y,
           "min": min, "max": max}
_INT_EXPR = {
    "+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
    "min": tir.min, "max": tir.max, "&": tir.bitwise_and, "|": tir.bitwise_or,
    "^": tir.bitwise_xor,
}
_FLOAT_EXPR = {
    "+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
    "/": tir.truncdiv, "min": tir.min, "max": tir.max,
}
_FLOAT_MODEL = {
    "+": sem.fadd, "-": sem.fsub, "*": sem.fmul, "/": sem.fdiv,
    "min": lambda a, b, mode: sem.fmin(a, b), "max": lambda a, b, mode: sem.fmax(a, b),
}
