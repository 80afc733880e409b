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
from ..expr import Cast, PrimExpr
from ..functor import ExprVisitor
from .const_int_bound import all_representable, wraps

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
    """Values in both sets, by the Chinese remainder theorem (TVM's ``Intersect``).

    Contradictory facts (no common value) keep ``a``: it is still sound for
    the code that can run.
    """
    if a[0] == 0 or b[0] == 0:
        return a if a[0] == 0 else b
    g, p, _ = _extended_gcd(a[0], b[0])  # p * a.coeff == g (mod b.coeff)
    diff = b[1] - a[1]
    if diff % g:
        return a
    # a.base + a.coeff * k hits b's residue for k == p * diff / g (mod b.coeff / g)
    k = p * (diff // g) % (b[0] // g)
    return normalize(a[0] // g * b[0], a[1] + a[0] * k)


def _extended_gcd(a: int, b: int) -> tuple[int, int, int]:
    """``(g, p, q)`` with ``a * p + b * q == g == gcd(a, b)``."""
    p0, p1, q0, q1 = 1, 0, 0, 1
    while b:
        t = a // b
        a, b = b, a - t * b
        p0, p1 = p1, p0 - t * p1
        q0, q1 = q1, q0 - t * q1
    return a, p0, q0


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
        c = self._const(e.b)
        return NOTHING if c is None else self.div_by_const(e.a, c, True)

    def visit_div(self, e) -> Mod:
        c = self._const(e.b)
        return NOTHING if c is None else self.div_by_const(e.a, c, False)

    def visit_floor_mod(self, e) -> Mod:
        c = self._const(e.b)
        return NOTHING if c is None else self.mod_by_const(e.a, c, True)

    def visit_mod(self, e) -> Mod:
        c = self._const(e.b)
        return NOTHING if c is None else self.mod_by_const(e.a, c, False)

    def _const(self, e: PrimExpr) -> int | None:
        """The value of ``e`` if its set is one nonzero constant."""
        coeff, base = self.mod(e)
        return base if coeff == 0 and base != 0 else None

    def _nonneg(self, e: PrimExpr) -> bool:
        return self.bounds.interval(e)[0] >= 0

    def div_by_const(self, a: PrimExpr, c: int, floor: bool) -> Mod:
        """``a / c`` rounding down (``floor``) or towards zero (TVM's ``DivByConst``)."""
        coeff, base = self.mod(a)
        if coeff == 0:  # one value: divide it
            q = abs(base) // abs(c)
            if floor:
                return (0, base // c)
            return (0, q if (base >= 0) == (c > 0) else -q)
        if coeff % c:
            return NOTHING
        if base == 0:  # c divides every value: the division is exact whatever the rounding
            return (abs(coeff // c), 0)
        if c > 0 and (floor or self._nonneg(a)):
            # (c*q*k + base) // c == q*k + base // c, base in [0, coeff)
            return normalize(coeff // c, base // c)
        return NOTHING

    def mod_by_const(self, a: PrimExpr, c: int, floor: bool) -> Mod:
        """``a % c`` (TVM's ``ModByConst``): the residue modulo ``gcd(coeff, c)`` survives.

        As in TVM, a set whose base is not a multiple of that gcd is kept for
        floormod, or truncmod of a non-negative dividend, only.
        """
        coeff, base = self.mod(a)
        if coeff == 0:  # one value: its remainder
            r = base % c if floor else base - c * _truncdiv(base, c)
            return (0, r)
        g = math.gcd(coeff, c)
        if base % g == 0 or floor or self._nonneg(a):
            return (g, base % g)
        return NOTHING

    def visit_min(self, e) -> Mod:
        return union(self.mod(e.a), self.mod(e.b))

    visit_max = visit_min

    def visit_select(self, e) -> Mod:
        return union(self.mod(e.true_value), self.mod(e.false_value))

    def visit_cast(self, e) -> Mod:
        src = self._cast_source(e.value)
        if src is None:
            return NOTHING
        value, iv = src
        target = dt.DataType(dt.element_of(e.dtype))
        out = self.mod(value)
        if target.min_value() <= iv[0] and iv[1] <= target.max_value():
            return out
        return _wrapped(out, target)  # a cast to an integer type keeps the value mod 2**bits

    def _cast_source(self, value: PrimExpr) -> tuple | None:
        """``(integer expression, its bound)`` the cast converts, looking through exact floats.

        A float keeps the residue only if no value is rounded: every integer
        of the bound must be representable, not just the ends.
        """
        if _is_int(value.dtype):
            return value, self.bounds.interval(value)
        floats = []
        inner = value
        while type(inner) is Cast and not _is_int(inner.dtype):
            floats.append(inner.dtype)
            inner = inner.value
        if not _is_int(inner.dtype) or not floats:
            return None
        iv = self.bounds.interval(inner)
        if not all(all_representable(iv, f) for f in floats):
            return None
        return inner, iv

    def visit_ramp(self, e) -> Mod:
        base, stride = self.mod(e.base), self.mod(e.stride)
        if e.lanes == 1:
            return base
        return union(base, normalize(math.gcd(*stride), base[1] + stride[1]))

    def visit_broadcast(self, e) -> Mod:
        return self.mod(e.value)

    def visit_call(self, e) -> Mod:
        if e.op == "tir.shift_right":
            coeff, s = self.mod(e.args[1])
            if coeff == 0 and 0 <= s < 64:  # x >> s == floordiv(x, 2**s), signed or not
                return self.div_by_const(e.args[0], 1 << s, True)
            return NOTHING
        if e.op == "tir.bitwise_and":
            c = self._const(e.args[1])
            if c is not None and c > 0 and c & (c + 1) == 0:  # x & (2**k - 1) == floormod(x, 2**k)
                return self.mod_by_const(e.args[0], c + 1, True)
        return NOTHING

    def visit_let(self, e) -> Mod:
        outer = self._let.get(e.var)  # a Let of the same var may be nested in its value
        self._let[e.var] = self.mod(e.value)
        try:
            return self.mod(e.body)
        finally:
            if outer is None:
                del self._let[e.var]
            else:
                self._let[e.var] = outer


def _wrapped(m: Mod, t: dt.DataType) -> Mod:
    """``m`` after wrapping into integer type ``t``: values move by multiples of ``2**bits``."""
    span = 1 << t.bits
    if m[0] == 0:  # one exact value: wrap it as the machine does
        v = m[1] % span
        return (0, v - span if t.is_int and v > t.max_value() else v)
    return normalize(math.gcd(m[0], span), m[1])


def _truncdiv(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def _is_int(dtype: str) -> bool:
    return dt.DataType(dt.element_of(dtype)).is_integer
