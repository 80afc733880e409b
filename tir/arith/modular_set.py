"""Modular sets: every value of an expression is ``coeff * k + base`` for some integer ``k``.

``coeff == 0`` means the value is exactly ``base``; ``coeff == 1`` says
nothing. Results are normalized so that ``0 <= base < coeff`` when
``coeff > 0``. A vector's set holds for every lane.

A result that may wrap around (unsigned and 8/16-bit integers, see
``const_int_bound.wraps``) loses a multiple of ``2**bits``: it keeps only
its residue modulo ``gcd(coeff, 2**bits)``.
"""

from __future__ import annotations

import math
from typing import Any

import attrs

from .. import dtype as dt
from ..expr import IntImm, PrimExpr
from ..functor import ExprVisitor
from .const_int_bound import wraps

Mod = tuple  # (coeff, base)
NOTHING: Mod = (1, 0)


@attrs.frozen
class ModularSet:
    """Values are ``coeff * k + base``; ``coeff == 0`` means exactly ``base``."""

    coeff: int
    base: int


def normalize(coeff: int, base: int) -> Mod:
    """The canonical form: non-negative coeff, base reduced modulo it."""
    coeff = abs(coeff)
    return (coeff, base % coeff if coeff else base)


def union(a: Mod, b: Mod) -> Mod:
    """The set covering values of both."""
    return normalize(math.gcd(a[0], b[0], a[1] - b[1]), a[1])


def intersect(a: Mod, b: Mod) -> Mod:
    """Values in both sets (kept as ``a`` when the combination is not simple)."""
    if a[0] == 0 or b[0] == 0:
        return a if a[0] == 0 else b
    g = math.gcd(a[0], b[0])
    if (a[1] - b[1]) % g:
        return a  # contradictory facts: keep the first, it is still sound for reachable code
    lcm = a[0] // g * b[0]
    if b[0] // g > 4096:
        return a
    for k in range(b[0] // g):  # small moduli in practice (alignments)
        v = a[1] + a[0] * k
        if (v - b[1]) % b[0] == 0:
            return normalize(lcm, v)
    return a


class ModularSetAnalyzer(ExprVisitor):
    """Computes modular sets; var facts come from the owning Analyzer."""

    def __init__(self, facts: Any, bounds: Any) -> None:
        self.facts = facts
        self.bounds = bounds
        self._let: dict[Any, Mod] = {}
        self._cache: dict[int, tuple] = {}
        self._epoch = -1

    def mod(self, e: PrimExpr) -> Mod:
        """The ``(coeff, base)`` of ``e`` (cached per expression until the facts change)."""
        if not _is_int(e.dtype):
            return NOTHING
        if self._epoch != self.facts.epoch or len(self._cache) > 200_000:
            self._cache.clear()
            self._epoch = self.facts.epoch
        hit = self._cache.get(id(e))
        if hit is not None and hit[0] is e:
            return hit[1]
        out = self.visit_expr(e)
        if wraps(e.dtype) and self.bounds.may_wrap(e):
            out = _wrapped(out, dt.DataType(dt.element_of(e.dtype)))
        if not self._let:
            self._cache[id(e)] = (e, out)
        return out

    def __call__(self, e: PrimExpr) -> ModularSet:
        return ModularSet(*self.mod(e))

    def generic_visit(self, e: PrimExpr) -> Mod:
        return NOTHING

    def visit_int_imm(self, e) -> Mod:
        return (0, e.value)

    def visit_var(self, v) -> Mod:
        if v in self._let:
            return self._let[v]
        alias = self.facts.aliases.get(v)
        out = self.mod(alias) if alias is not None else NOTHING
        known = self.facts.mods.get(v)
        return intersect(out, known) if known is not None else out

    def visit_add(self, e) -> Mod:
        a, b = self.mod(e.a), self.mod(e.b)
        return normalize(math.gcd(a[0], b[0]), a[1] + b[1])

    def visit_sub(self, e) -> Mod:
        a, b = self.mod(e.a), self.mod(e.b)
        return normalize(math.gcd(a[0], b[0]), a[1] - b[1])

    def visit_mul(self, e) -> Mod:
        (ca, ba), (cb, bb) = self.mod(e.a), self.mod(e.b)
        # (ca*i + ba) * (cb*j + bb) = ca*cb*i*j + ca*bb*i + cb*ba*j + ba*bb
        return normalize(math.gcd(ca * cb, ca * bb, cb * ba), ba * bb)

    def visit_floor_div(self, e) -> Mod:
        c = _positive_const(e.b)
        if c is None:
            return NOTHING
        coeff, base = self.mod(e.a)
        if coeff % c:
            return NOTHING
        return normalize(coeff // c, base // c)  # (c*q*k + base) // c == q*k + base // c

    def visit_div(self, e) -> Mod:
        if self.bounds.interval(e.a)[0] < 0:
            return NOTHING
        return self.visit_floor_div(e)  # truncation equals floor for a non-negative dividend

    def visit_floor_mod(self, e) -> Mod:
        c = _positive_const(e.b)
        if c is None:
            return NOTHING
        coeff, base = self.mod(e.a)
        g = math.gcd(coeff, c)  # the remainder keeps the residue modulo any divisor of c
        return (0, base % c) if g == c else normalize(g, base)

    def visit_mod(self, e) -> Mod:
        if self.bounds.interval(e.a)[0] < 0:
            return NOTHING
        return self.visit_floor_mod(e)

    def visit_min(self, e) -> Mod:
        return union(self.mod(e.a), self.mod(e.b))

    visit_max = visit_min

    def visit_select(self, e) -> Mod:
        return union(self.mod(e.true_value), self.mod(e.false_value))

    def visit_cast(self, e) -> Mod:
        if not _is_int(e.value.dtype):
            return NOTHING
        src = self.bounds.interval(e.value)
        target = dt.DataType(dt.element_of(e.dtype))
        if target.min_value() <= src[0] and src[1] <= target.max_value():
            return self.mod(e.value)
        return NOTHING

    def visit_ramp(self, e) -> Mod:
        base, stride = self.mod(e.base), self.mod(e.stride)
        if e.lanes == 1:
            return base
        return union(base, normalize(math.gcd(*stride), base[1] + stride[1]))

    def visit_broadcast(self, e) -> Mod:
        return self.mod(e.value)

    def visit_let(self, e) -> Mod:
        self._let[e.var] = self.mod(e.value)
        try:
            return self.mod(e.body)
        finally:
            del self._let[e.var]


def _wrapped(m: Mod, t: dt.DataType) -> Mod:
    """``m`` after wrapping into integer type ``t``: values move by multiples of ``2**bits``."""
    span = 1 << t.bits
    if m[0] == 0:  # one exact value: wrap it as the machine does
        v = m[1] % span
        return (0, v - span if t.is_int and v > t.max_value() else v)
    return normalize(math.gcd(m[0], span), m[1])


def _is_int(dtype: str) -> bool:
    return dt.DataType(dt.element_of(dtype)).is_integer


def _positive_const(e: PrimExpr) -> int | None:
    if type(e) is IntImm and e.value > 0:
        return e.value
    return None
