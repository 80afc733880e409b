"""Rewrite rules for division and remainder: floordiv/floormod and truncdiv/truncmod.

TVM's rules in TVM's order, then a few of ours that use bounds. Truncated
division (C's ``/`` and ``%``) rounds towards zero, so most of its rules need
non-negative operands; where TVM's vector rules for it omit that (a ramp
whose lanes change sign), the condition is added here. The vector rules that
look at a ramp's lanes are functions in ``rules.div_mod_vector``.
"""

from __future__ import annotations

from collections.abc import Callable

from ...op import floordiv, floormod, max, min, truncdiv, truncmod
from ..pattern import Rule, broadcast, ramp
from .add_sub_mul import one_of
from .div_mod_vector import (
    floordiv_ramp,
    floormod_ramp,
    split_floordiv,
    truncdiv_ramp,
    truncmod_ramp,
)
from .helpers import (
    c1,
    c2,
    c3,
    floordiv_by_bound,
    floormod_by_bound,
    truncdiv_by_bound,
    truncmod_by_bound,
    x,
    y,
    z,
)

# ---------------------------------------------------------------- conditions


def cpos(*names: str) -> Callable:
    """Every named constant is positive."""
    return lambda m: all(m.v(n) > 0 for n in names)


def multiple(a: str, b: str) -> Callable:
    """Positive constant ``b`` divides constant ``a`` (TVM's ``c2 > 0 && c1 % c2 == 0``)."""
    return lambda m: m.v(b) > 0 and m.v(a) % m.v(b) == 0


def trunc_multiple(a: str, b: str) -> Callable:
    """``a >= 0`` and ``b > 0`` divides it: splitting a truncated division by ``b``."""
    return lambda m: m.v(a) >= 0 and multiple(a, b)(m)


def ge0(*parts: Callable) -> Callable:
    """Each expression ``part(m)`` is provably ``>= 0`` (by its bound, else once simplified)."""
    def test(m) -> bool:
        for part in parts:
            e = part(m)
            if not m.s.nonneg(e) and m.s.diff_interval(e, 0)[0] < 0:
                return False
        return True

    return test


def is_zero(part: Callable) -> Callable:
    """``part(m)`` simplifies to an expression whose bound is exactly 0."""
    return lambda m: m.s.diff_interval(part(m), 0) == (0, 0)


def both(*conds: Callable) -> Callable:
    """All the conditions hold (cheap ones first)."""
    return lambda m: all(c(m) for c in conds)


def changes(a: str, b: str) -> Callable:
    """``b > 0`` and ``floormod(a, b) != a``: reducing constant ``a`` modulo ``b`` changes it."""
    return lambda m: m.v(b) > 0 and m.v(a) % m.v(b) != m.v(a)


def _var(name: str) -> Callable:
    return lambda m: m.env[name]


X, Y, Z = _var("x"), _var("y"), _var("z")


def _sum(a: Callable, b: Callable) -> Callable:
    return lambda m: a(m) + b(m)


def _diff(a: Callable, b: Callable) -> Callable:
    return lambda m: a(m) - b(m)


def _times_c1(a: Callable) -> Callable:
    return lambda m: a(m) * m.c1


# ---------------------------------------------------------------- floordiv / floormod

FLOORDIV = [
    Rule(floordiv(0, x), 0),
    Rule(floordiv(broadcast(x), broadcast(y)), broadcast(floordiv(x, y))),
    Rule(floordiv(ramp(x, c1), broadcast(c2)), floordiv_ramp),
    Rule(floordiv(floordiv(x, c1), c2), floordiv(x, c1 * c2), cpos("c1", "c2")),
    Rule(floordiv(floordiv(x, c1) + c2, c3), floordiv(x + c1 * c2, c1 * c3), cpos("c1", "c3")),
    *one_of([floordiv(x * c1 + y, c2), floordiv(x * c1, c2), floordiv(y + x * c1, c2)],
            split_floordiv),
    Rule(floordiv(x, x), 1),
    Rule(floordiv(x * c1, x), c1),
    Rule(floordiv(floormod(x, 2) + 1, 2), floormod(x, 2)),
    Rule(floordiv(min(x * c1, y), c2), min(x * floordiv(c1, c2), floordiv(y, c2)),
         multiple("c1", "c2")),
    Rule(floordiv(max(x * c1, y), c2), max(x * floordiv(c1, c2), floordiv(y, c2)),
         multiple("c1", "c2")),
    Rule(floordiv(min(y, x * c1), c2), min(floordiv(y, c2), x * floordiv(c1, c2)),
         multiple("c1", "c2")),
    Rule(floordiv(max(y, x * c1), c2), max(floordiv(y, c2), x * floordiv(c1, c2)),
         multiple("c1", "c2")),
    Rule(floordiv(x * c1 + y + z, c2), x * floordiv(c1, c2) + floordiv(y + z, c2),
         multiple("c1", "c2")),
    Rule(floordiv(x * c1 + y + z, c2), floordiv(x, floordiv(c2, c1)),
         both(multiple("c2", "c1"), lambda m: m.v("c2") > 0,
              is_zero(lambda m: floordiv(m.y + m.z, m.c1)))),
    *one_of([floordiv(x * c1 - y + z, c2), floordiv(x * c1 + z - y, c2)],
            x * floordiv(c1, c2) + floordiv(z - y, c2), multiple("c1", "c2")),
    Rule(floordiv(y + x * c1 + z, c2), x * floordiv(c1, c2) + floordiv(y + z, c2),
         multiple("c1", "c2")),
    Rule(floordiv(x + c1, c2), floordiv(x, c2) + floordiv(c1, c2), multiple("c1", "c2")),
    Rule(floordiv(x * c1, x * c2), floordiv(c1, c2), cpos("c2")),
    *one_of([floordiv(x + y, x), floordiv(y + x, x)], floordiv(y, x) + 1, ge0(X)),
    *one_of([floordiv((x + y) + z, x), floordiv((y + x) + z, x), floordiv(y + (z + x), x),
             floordiv(y + (x + z), x)], floordiv(y + z, x) + 1, ge0(X)),
    *one_of([floordiv(x * y, y), floordiv(y * x, y)], x, ge0(Y)),
    *one_of([floordiv(x * z + y, z), floordiv(z * x + y, z)], x + floordiv(y, z), ge0(Z)),
    *one_of([floordiv(y + x * z, z), floordiv(y + z * x, z)], floordiv(y, z) + x, ge0(Z)),
    Rule(floordiv(x - floormod(x, c1), c1), floordiv(x, c1), lambda m: m.v("c1") != 0),
    # ours: a dividend within one block of the divisor
    Rule(floordiv(x, c1), floordiv_by_bound),
    Rule(floordiv(x, y), 0, lambda m: m.s.nonneg(m.x) and m.s.prove_lt(m.x, m.y)),
]

FLOORMOD = [
    Rule(floormod(0, x), 0),
    Rule(floormod(broadcast(x), broadcast(y)), broadcast(floormod(x, y))),
    Rule(floormod(ramp(x, c1), broadcast(c2)), floormod_ramp),
    Rule(floormod(x * c1, c2), floormod(x * floormod(c1, c2), c2), changes("c1", "c2")),
    Rule(floormod(x * c1 + y, c2), floormod(x, floordiv(c2, c1)) * c1 + y,
         both(multiple("c2", "c1"), lambda m: m.v("c2") > 0,
              is_zero(lambda m: floordiv(m.y, m.c1)))),
    Rule(floormod(x * c1 + y, c2), floormod(x * floormod(c1, c2) + y, c2), changes("c1", "c2")),
    Rule(floormod(x + c1, c2), floormod(x + floormod(c1, c2), c2), changes("c1", "c2")),
    Rule(floormod(x + y * c1, c2), floormod(x + y * floormod(c1, c2), c2), changes("c1", "c2")),
    Rule(floormod(x * c1, x * c2), x * floormod(c1, c2), lambda m: m.v("c2") != 0),
    *one_of([floormod(x * y, y), floormod(y * x, y)], 0),
    # x = a*y + b: (x + (n*y - x) % y) % y == 0 when y divides x + z
    *one_of([floormod(x + floormod(z, y), y), floormod(floormod(z, y) + x, y)], 0,
            is_zero(lambda m: floormod(m.x + m.z, m.y))),
    *one_of([floormod(x - floormod(x, z), y), floormod(floormod(x, z) - x, y)], 0,
            lambda m: m.s.diff_interval(m.y, m.z) == (0, 0)
            or m.s.diff_interval(m.y + m.z, 0) == (0, 0)),
    Rule(floormod(x, c1), lambda m: _floormod_by_residue(m)),
    Rule(floormod(x, c1), x, lambda m: m.v("c1") > 0 and m.s.within(m.x, 0, m.v("c1") - 1)),
    # ours: symbolic divisors and a dividend within one block
    Rule(floormod(x * y + z, y), floormod(z, y)),
    Rule(floormod(y * x + z, y), floormod(z, y)),
    Rule(floormod(z + x * y, y), floormod(z, y)),
    Rule(floormod(z + y * x, y), floormod(z, y)),
    Rule(floormod(x, c1), floormod_by_bound),
    Rule(floormod(x, y), x, lambda m: m.s.nonneg(m.x) and m.s.prove_lt(m.x, m.y)),
]


def _floormod_by_residue(m):
    c = m.v("c1")
    if c <= 0:
        return None
    coeff, base = m.s.modular(m.x)
    return floormod(base, m.c1) if coeff % c == 0 else None


# ---------------------------------------------------------------- truncdiv / truncmod

TRUNC_SPLIT = both(lambda m: m.v("c1") >= 0, multiple("c1", "c2"), ge0(X, Y))

TRUNCDIV = [
    Rule(truncdiv(0, x), 0),
    Rule(truncdiv(broadcast(x), broadcast(y)), broadcast(truncdiv(x, y))),
    Rule(truncdiv(ramp(x, c1), broadcast(c2)), truncdiv_ramp),
    Rule(truncdiv(truncdiv(x, c1), c2), truncdiv(x, c1 * c2), cpos("c1", "c2")),
    Rule(truncdiv(truncdiv(x, c1) + c2, c3), truncdiv(x + c1 * c2, c1 * c3),
         both(cpos("c1", "c3"), lambda m: m.v("c2") >= 0, ge0(X))),
    Rule(truncdiv(x * c1, c2), x * truncdiv(c1, c2), both(cpos("c1"), multiple("c1", "c2"))),
    Rule(truncdiv(x * c1, c2), truncdiv(x, truncdiv(c2, c1)),
         both(cpos("c2"), multiple("c2", "c1"))),
    Rule(truncdiv(x, x), 1),
    Rule(truncdiv(x * c1, x), c1),
    Rule(truncdiv(x * c1 + y, c2), x * truncdiv(c1, c2) + truncdiv(y, c2), TRUNC_SPLIT),
    Rule(truncdiv(min(x * c1, y), c2), min(x * truncdiv(c1, c2), truncdiv(y, c2)), TRUNC_SPLIT),
    Rule(truncdiv(max(x * c1, y), c2), max(x * truncdiv(c1, c2), truncdiv(y, c2)), TRUNC_SPLIT),
    Rule(truncdiv(y + x * c1, c2), truncdiv(y, c2) + x * truncdiv(c1, c2), TRUNC_SPLIT),
    Rule(truncdiv(min(y, x * c1), c2), min(truncdiv(y, c2), x * truncdiv(c1, c2)), TRUNC_SPLIT),
    Rule(truncdiv(max(y, x * c1), c2), max(truncdiv(y, c2), x * truncdiv(c1, c2)), TRUNC_SPLIT),
    Rule(truncdiv(x * c1 + y + z, c2), x * truncdiv(c1, c2) + truncdiv(y + z, c2),
         both(trunc_multiple("c1", "c2"), ge0(X, _sum(Y, Z)))),
    Rule(truncdiv(x * c1 - y + z, c2), x * truncdiv(c1, c2) + truncdiv(z - y, c2),
         both(trunc_multiple("c1", "c2"), ge0(X, _diff(Z, Y)))),
    Rule(truncdiv(x * c1 + y - z, c2), x * truncdiv(c1, c2) + truncdiv(y - z, c2),
         both(trunc_multiple("c1", "c2"), ge0(X, _diff(Y, Z)))),
    Rule(truncdiv(y + x * c1 + z, c2), x * truncdiv(c1, c2) + truncdiv(y + z, c2),
         both(cpos("c1"), multiple("c1", "c2"), ge0(X, _sum(Y, Z)))),
    Rule(truncdiv(x + c1, c2), truncdiv(x, c2) + truncdiv(c1, c2),
         both(cpos("c1"), multiple("c1", "c2"), ge0(X))),
    *one_of([truncdiv(x + y, x), truncdiv(y + x, x)], truncdiv(y, x) + 1, ge0(X, Y)),
    *one_of([truncdiv((x + y) + z, x), truncdiv((y + x) + z, x), truncdiv(y + (z + x), x),
             truncdiv(y + (x + z), x)], truncdiv(y + z, x) + 1, ge0(X, _sum(Y, Z))),
    *one_of([truncdiv(x * y, y), truncdiv(y * x, y)], x, ge0(X, Y)),
    *one_of([truncdiv(x * z + y, z), truncdiv(z * x + y, z)], x + truncdiv(y, z), ge0(X, Y, Z)),
    *one_of([truncdiv(y + x * z, z), truncdiv(y + z * x, z)], truncdiv(y, z) + x, ge0(X, Y, Z)),
    # ours: a dividend smaller than the divisor in magnitude
    Rule(truncdiv(x, c1), truncdiv_by_bound),
]

TRUNCMOD = [
    Rule(truncmod(0, x), 0),
    Rule(truncmod(broadcast(x), broadcast(y)), broadcast(truncmod(x, y))),
    Rule(truncmod(ramp(x, c1), broadcast(c2)), truncmod_ramp),
    Rule(truncmod(x * c1, c2), 0, lambda m: m.v("c2") != 0 and m.v("c1") % m.v("c2") == 0),
    Rule(truncmod(x * c1 + y, c2), truncmod(y, c2),
         both(multiple("c1", "c2"), ge0(_times_c1(X), Y))),
    Rule(truncmod(x + c1, c2), truncmod(x, c2),
         both(trunc_multiple("c1", "c2"), ge0(X))),
    Rule(truncmod(x + y * c1, c2), truncmod(x, c2),
         both(multiple("c1", "c2"), ge0(X, lambda m: m.y * m.c1))),
    Rule(truncmod(x, c1), truncmod(x, 0 - c1), lambda m: m.v("c1") < 0),  # x % c == x % -c
    Rule(truncmod(x, c1), lambda m: _truncmod_by_residue(m)),
    # ours: a dividend smaller than the divisor in magnitude
    Rule(truncmod(x, c1), truncmod_by_bound),
]


def _truncmod_by_residue(m):
    c = m.v("c1")
    if c <= 0:
        return None
    coeff, base = m.s.modular(m.x)
    if coeff % c != 0 or not m.s.nonneg(m.x):
        return None
    return truncmod(base, m.c1)
