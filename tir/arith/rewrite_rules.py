"""The rewrite rules, one block per node kind, one rule per line: ``Rule(before, after, when)``.

Pattern variables: ``x y z w`` match any expression, ``c1 c2 c3`` constants,
``b1 b2`` booleans. Conditions get the match ``m`` (``m.x``, ``m.v("c1")``
for a constant's value, ``m.s`` the simplifier for proofs). ``RULES`` serve
32/64-bit signed integers, which index arithmetic uses and which TIR assumes
never overflow; ``RING_RULES`` (identities that survive wraparound) serve
the other integers; ``ANY_DTYPE_KINDS`` run on every dtype and guard
themselves (see ``RewriteSimplifier._table``). Constants are
moved to the right of commutative operators first, so rules need one order.
All rules hold for overflow-free integer arithmetic.
"""

from __future__ import annotations

from collections.abc import Callable

from .. import dtype as dt
from ..expr import (
    EQ,
    GE,
    GT,
    LE,
    LT,
    NE,
    Add,
    And,
    Div,
    FloorDiv,
    FloorMod,
    Max,
    Min,
    Mod,
    Mul,
    Not,
    Or,
    Ramp,
    Select,
    Sub,
)
from ..op import const, floordiv, floormod, max, min, truncdiv, truncmod
from .pattern import PConst, PVar, Rule, broadcast, ramp

x, y, z, w = PVar("x"), PVar("y"), PVar("z"), PVar("w")
c1, c2, c3 = PConst("c1"), PConst("c2"), PConst("c3")
b1, b2 = PVar("b1", "bool"), PVar("b2", "bool")
bc = PConst("bc", "bool")
xv, yv = PVar("xv", "int32x65521"), PVar("yv", "int32x65521")   # any vector
TRUE, FALSE = True, False


# ---------------------------------------------------------------- condition helpers


def pos(name: str) -> Callable:
    """The constant ``name`` is positive."""
    return lambda m: m.v(name) > 0


def divides(d: str, n: str) -> Callable:
    """Positive constant ``d`` divides constant ``n``."""
    return lambda m: m.v(d) > 0 and m.v(n) % m.v(d) == 0


def le(a: str, b: str) -> Callable:
    """Provably ``m.a <= m.b``."""
    return lambda m: m.s.le(m.env[a], m.env[b])


def nonneg(*names: str) -> Callable:
    """Every named match is provably non-negative."""
    return lambda m: all(m.s.nonneg(m.env[n]) for n in names)


def is_int(name: str) -> Callable:
    """The named match has an integer dtype (needed where NaN would break a rule)."""
    return lambda m: dt.DataType(dt.element_of(m.env[name].dtype)).is_integer


def trunc_split(m) -> bool:
    """``x * c1 + y`` splits under truncated division: c2 divides c1 > 0, x and y >= 0."""
    return divides("c2", "c1")(m) and m.v("c1") > 0 and nonneg("x", "y")(m)


def both(f: Callable, g: Callable) -> Callable:
    """Both conditions hold."""
    return lambda m: f(m) and g(m)


def floor_quotient(iv: tuple, c: int) -> int | None:
    """``k`` if every value in interval ``iv`` lies in ``[k*c, (k+1)*c)``, else None."""
    if abs(iv[0]) == float("inf") or abs(iv[1]) == float("inf"):
        return None
    k = int(iv[0]) // c
    return k if int(iv[1]) // c == k else None


def _same_block(m) -> bool:
    """All lanes of ``ramp(x, c1)`` fall in one block of ``c2`` (by x's residue)."""
    lanes, c, s = m.env["lanes"], m.v("c2"), m.v("c1")
    if not isinstance(lanes, int) or c <= 0 or s < 0:
        return False
    coeff, base = m.s.modular(m.x)
    return coeff % c == 0 and base % c + s * (lanes - 1) < c


def _floordiv_by_bound(m):
    k = floor_quotient(m.s.interval(m.x), m.v("c1")) if m.v("c1") > 0 else None
    return None if k is None else const(k)


def _floormod_by_bound(m):
    c = m.v("c1")
    k = floor_quotient(m.s.interval(m.x), c) if c > 0 else None
    return None if k is None else m.x - k * c


def _floormod_by_residue(m):
    c = m.v("c1")
    coeff, base = m.s.modular(m.x)
    return const(base % c) if c > 0 and coeff % c == 0 else None


def _truncdiv_by_bound(m):
    lo, hi = m.s.interval(m.x)
    c = abs(m.v("c1"))
    return const(0) if c > 0 and -c < lo and hi < c else None


def _truncmod_by_bound(m):
    lo, hi = m.s.interval(m.x)
    c = abs(m.v("c1"))
    return m.x if c > 0 and -c < lo and hi < c else None


def _decide(test: Callable) -> Callable:
    """A comparison decided by the bound of ``x - y``: ``test(lo, hi)`` is True/False/None."""
    def result(m):
        lo, hi = m.s.diff_interval(m.x, m.y)
        out = test(lo, hi)
        return None if out is None else const(out, "bool")

    return result


def _eq_by_residue(m):
    coeff, base = m.s.modular(m.x - m.y)
    return const(False, "bool") if coeff > 0 and base % coeff != 0 else None


def _ne_by_residue(m):
    out = _eq_by_residue(m)
    return None if out is None else const(True, "bool")


def _lt(lo, hi):
    return True if hi < 0 else False if lo >= 0 else None


def _le(lo, hi):
    return True if hi <= 0 else False if lo > 0 else None


def _eq(lo, hi):
    return True if lo == hi == 0 else False if lo > 0 or hi < 0 else None


def _ne(lo, hi):
    out = _eq(lo, hi)
    return None if out is None else not out


def _pick_by_const(m):
    return m.xv if m.v("bc") else m.yv


# ---------------------------------------------------------------- the rules

# Add, Sub and Mul rules are ring identities: they hold with two's-complement wraparound
# too, so they also serve 8/16-bit and unsigned integers (see RING_RULES).
ADD = [
    Rule(c1 + x, x + c1),
    Rule(ramp(x, y) + ramp(z, w), ramp(x + z, y + w)),
    Rule(ramp(x, y) + broadcast(z), ramp(x + z, y)),
    Rule(broadcast(x) + ramp(y, z), ramp(x + y, z)),
    Rule(broadcast(x) + broadcast(y), broadcast(x + y)),
    Rule((x + c1) + c2, x + (c1 + c2)),
    Rule((x - c1) + c2, x + (c2 - c1)),
    Rule((c1 - x) + c2, (c1 + c2) - x),
    Rule((x - y) + y, x),
    Rule(x + (y - x), y),
    Rule((x - y) + (y - z), x - z),
    Rule(x + x, x * 2),
    Rule(x * c1 + x, x * (c1 + 1)),
    Rule(x + x * c1, x * (c1 + 1)),
    Rule(x * c1 + x * c2, x * (c1 + c2)),
    Rule(floordiv(x, c1) * c1 + floormod(x, c1), x, pos("c1")),   # q*c + r == x
    Rule(floormod(x, c1) + floordiv(x, c1) * c1, x, pos("c1")),
    Rule(truncdiv(x, c1) * c1 + truncmod(x, c1), x, pos("c1")),   # also for trunc division
    Rule(truncmod(x, c1) + truncdiv(x, c1) * c1, x, pos("c1")),
    Rule(min(x, y) + max(x, y), x + y),
    Rule(max(x, y) + min(x, y), x + y),
    Rule((x + c1) + y, (x + y) + c1),                             # constants float outwards
    Rule(x + (y + c1), (x + y) + c1),
    Rule((x - c1) + y, (x + y) - c1),
    Rule(x + (y - c1), (x + y) - c1),
    Rule(Select(b1, x, y) + Select(b1, z, w), Select(b1, x + z, y + w)),
]

ADD_NO_OVERFLOW = [
    Rule(min(x, y - z) + z, min(x + z, y)),
    Rule(max(x, y - z) + z, max(x + z, y)),
]

SUB_NO_OVERFLOW = [
    Rule(min(x, y) - x, min(y - x, 0)),
    Rule(min(x, y) - y, min(x - y, 0)),
    Rule(max(x, y) - x, max(y - x, 0)),
    Rule(max(x, y) - y, max(x - y, 0)),
    Rule(x - min(x, y), max(x - y, 0)),
    Rule(y - min(x, y), max(y - x, 0)),
    Rule(x - max(x, y), min(x - y, 0)),
    Rule(y - max(x, y), min(y - x, 0)),
]

SUB = [
    Rule(x - x, 0),
    Rule(ramp(x, y) - ramp(z, w), ramp(x - z, y - w)),
    Rule(ramp(x, y) - broadcast(z), ramp(x - z, y)),
    Rule(broadcast(x) - ramp(y, z), ramp(x - y, 0 - z)),
    Rule(broadcast(x) - broadcast(y), broadcast(x - y)),
    Rule((x + y) - y, x),
    Rule((x + y) - x, y),
    Rule(x - (x + y), 0 - y),
    Rule(y - (x + y), 0 - x),
    Rule(x - (x - y), y),
    Rule((x - y) - x, 0 - y),
    Rule((x + y) - (x + z), y - z),
    Rule((x + y) - (z + x), y - z),
    Rule((y + x) - (x + z), y - z),
    Rule((y + x) - (z + x), y - z),
    Rule(x - c1, x + (0 - c1), lambda m: m.v("c1") < 0),
    Rule((x + c1) - c2, x + (c1 - c2)),
    Rule((x - c1) - c2, x - (c1 + c2)),
    Rule((c1 - x) - c2, (c1 - c2) - x),
    Rule(c1 - (x + c2), (c1 - c2) - x),
    Rule(c1 - (c2 - x), x + (c1 - c2)),
    Rule((x + c1) - (y + c2), (x - y) + (c1 - c2)),
    Rule((x + c1) - y, (x - y) + c1),
    Rule(x - (y + c1), (x - y) - c1),
    Rule(x * c1 - x * c2, x * (c1 - c2)),
    Rule(x * c1 - x, x * (c1 - 1)),
    Rule(x - x * c1, x * (1 - c1)),
    Rule(x - floordiv(x, c1) * c1, floormod(x, c1), pos("c1")),
    Rule(x - truncdiv(x, c1) * c1, truncmod(x, c1), pos("c1")),
    Rule(Select(b1, x, y) - Select(b1, z, w), Select(b1, x - z, y - w)),
]

MUL = [
    Rule(c1 * x, x * c1),
    Rule(broadcast(x) * broadcast(y), broadcast(x * y)),
    Rule(ramp(x, y) * broadcast(z), ramp(x * z, y * z)),
    Rule(broadcast(z) * ramp(x, y), ramp(x * z, y * z)),
    Rule((x * c1) * c2, x * (c1 * c2)),
    Rule((x + c1) * c2, x * c2 + c1 * c2),
    Rule((x - c1) * c2, x * c2 - c1 * c2),
    Rule((x * c1) * y, (x * y) * c1),
    Rule(x * (y * c1), (x * y) * c1),
]

FLOORDIV = [
    Rule(floordiv(broadcast(x), broadcast(y)), broadcast(floordiv(x, y))),
    Rule(floordiv(ramp(x, c1), broadcast(c2)), ramp(floordiv(x, c2), floordiv(c1, c2)),
         divides("c2", "c1")),
    Rule(floordiv(ramp(x, c1), broadcast(c2)), broadcast(floordiv(x, c2)), _same_block),
    Rule(floordiv(x * c1, c2), x * floordiv(c1, c2), divides("c2", "c1")),
    Rule(floordiv(x * c1, c2), floordiv(x, floordiv(c2, c1)), divides("c1", "c2")),
    Rule(floordiv(x * c1 + y, c2), x * floordiv(c1, c2) + floordiv(y, c2), divides("c2", "c1")),
    Rule(floordiv(y + x * c1, c2), floordiv(y, c2) + x * floordiv(c1, c2), divides("c2", "c1")),
    Rule(floordiv(x + c1, c2), floordiv(x, c2) + floordiv(c1, c2), divides("c2", "c1")),
    Rule(floordiv(floordiv(x, c1), c2), floordiv(x, c1 * c2), both(pos("c1"), pos("c2"))),
    Rule(floordiv(floordiv(x, c1) + c2, c3), floordiv(x + c1 * c2, c1 * c3),
         both(pos("c1"), pos("c3"))),                       # floor(floor(a/b)/c) == floor(a/bc)
    Rule(floordiv(x - floormod(x, c1), c1), floordiv(x, c1), pos("c1")),
    Rule(floordiv(x, x), 1),                                 # division by zero is undefined
    Rule(floordiv(x, c1), _floordiv_by_bound),
    Rule(floordiv(x * y, y), x),                             # symbolic divisors (never zero)
    Rule(floordiv(y * x, y), x),
    Rule(floordiv(x * y + z, y), x + floordiv(z, y)),
    Rule(floordiv(y * x + z, y), x + floordiv(z, y)),
    Rule(floordiv(z + x * y, y), floordiv(z, y) + x),
    Rule(floordiv(z + y * x, y), floordiv(z, y) + x),
    Rule(floordiv(x, y), 0, lambda m: m.s.nonneg(m.x) and m.s.prove_lt(m.x, m.y)),
]

FLOORMOD = [
    Rule(floormod(broadcast(x), broadcast(y)), broadcast(floormod(x, y))),
    Rule(floormod(ramp(x, c1), broadcast(c2)), broadcast(floormod(x, c2)), divides("c2", "c1")),
    Rule(floormod(ramp(x, c1), broadcast(c2)), ramp(floormod(x, c2), c1), _same_block),
    Rule(floormod(x * c1, c2), 0, divides("c2", "c1")),
    Rule(floormod(x * c1 + y, c2), floormod(y, c2), divides("c2", "c1")),
    Rule(floormod(y + x * c1, c2), floormod(y, c2), divides("c2", "c1")),
    Rule(floormod(x + c1, c2), floormod(x, c2), divides("c2", "c1")),
    Rule(floormod(floormod(x, c1), c2), floormod(x, c2), divides("c2", "c1")),
    Rule(floormod(x, x), 0),
    Rule(floormod(x, c1), _floormod_by_residue),
    Rule(floormod(x, c1), _floormod_by_bound),
    Rule(floormod(x * y, y), 0),
    Rule(floormod(y * x, y), 0),
    Rule(floormod(x * y + z, y), floormod(z, y)),
    Rule(floormod(y * x + z, y), floormod(z, y)),
    Rule(floormod(z + x * y, y), floormod(z, y)),
    Rule(floormod(z + y * x, y), floormod(z, y)),
    Rule(floormod(x, y), x, lambda m: m.s.nonneg(m.x) and m.s.prove_lt(m.x, m.y)),
]

TRUNCDIV = [
    Rule(truncdiv(broadcast(x), broadcast(y)), broadcast(truncdiv(x, y))),
    Rule(truncdiv(x * c1, c2), x * truncdiv(c1, c2), divides("c2", "c1")),
    Rule(truncdiv(x * c1 + y, c2), x * truncdiv(c1, c2) + truncdiv(y, c2),
         trunc_split),               # both parts >= 0
    Rule(truncdiv(y + x * c1, c2), truncdiv(y, c2) + x * truncdiv(c1, c2),
         trunc_split),
    Rule(truncdiv(truncdiv(x, c1), c2), truncdiv(x, c1 * c2), both(pos("c1"), pos("c2"))),
    Rule(truncdiv(x, x), 1),
    Rule(truncdiv(x, c1), _truncdiv_by_bound),
]

TRUNCMOD = [
    Rule(truncmod(broadcast(x), broadcast(y)), broadcast(truncmod(x, y))),
    Rule(truncmod(x * c1, c2), 0, divides("c2", "c1")),
    Rule(truncmod(x * c1 + y, c2), truncmod(y, c2), trunc_split),
    Rule(truncmod(y + x * c1, c2), truncmod(y, c2), trunc_split),
    Rule(truncmod(x, x), 0),
    Rule(truncmod(x, c1), _truncmod_by_bound),
]

MIN = [
    Rule(Min(c1, x), min(x, c1)),
    Rule(min(broadcast(x), broadcast(y)), broadcast(min(x, y))),
    Rule(Min(x, x), x),
    Rule(min(min(x, c1), c2), min(x, min(c1, c2))),
    Rule(min(min(x, y), x), min(x, y)),
    Rule(min(min(x, y), y), min(x, y)),
    Rule(min(x, min(x, y)), min(x, y)),
    Rule(min(max(x, y), x), x),
    Rule(min(max(x, y), y), y),
    Rule(min(x, max(x, y)), x),
    Rule(min(y, max(x, y)), y),
    Rule(min(x + c1, y + c1), min(x, y) + c1),
    Rule(min(x + z, y + z), min(x, y) + z),
    Rule(min(z + x, z + y), z + min(x, y)),
    Rule(min(x * c1, y * c1), min(x, y) * c1, pos("c1")),
    Rule(min(x * c1, y * c1), max(x, y) * c1, lambda m: m.v("c1") < 0),
    Rule(min(floordiv(x, c1), floordiv(y, c1)), floordiv(min(x, y), c1), pos("c1")),
    Rule(min(x, y), x, le("x", "y")),
    Rule(min(x, y), y, le("y", "x")),
]

MAX = [
    Rule(Max(c1, x), max(x, c1)),
    Rule(max(broadcast(x), broadcast(y)), broadcast(max(x, y))),
    Rule(Max(x, x), x),
    Rule(max(max(x, c1), c2), max(x, max(c1, c2))),
    Rule(max(max(x, y), x), max(x, y)),
    Rule(max(max(x, y), y), max(x, y)),
    Rule(max(x, max(x, y)), max(x, y)),
    Rule(max(min(x, y), x), x),
    Rule(max(min(x, y), y), y),
    Rule(max(x, min(x, y)), x),
    Rule(max(y, min(x, y)), y),
    Rule(max(x + c1, y + c1), max(x, y) + c1),
    Rule(max(x + z, y + z), max(x, y) + z),
    Rule(max(z + x, z + y), z + max(x, y)),
    Rule(max(x * c1, y * c1), max(x, y) * c1, pos("c1")),
    Rule(max(x * c1, y * c1), min(x, y) * c1, lambda m: m.v("c1") < 0),
    Rule(max(floordiv(x, c1), floordiv(y, c1)), floordiv(max(x, y), c1), pos("c1")),
    Rule(max(x, y), y, le("x", "y")),
    Rule(max(x, y), x, le("y", "x")),
]

LT_RULES = [
    Rule(broadcast(x) < broadcast(y), broadcast(x < y)),
    Rule(ramp(x, y) < ramp(z, y), broadcast(x < z)),
    Rule(x + c1 < c2, x < c2 - c1),
    Rule(x - c1 < c2, x < c2 + c1),
    Rule(c1 - x < c2, c1 - c2 < x),
    Rule(c1 < x + c2, c1 - c2 < x),
    Rule(c1 < x - c2, c1 + c2 < x),
    Rule(x * c1 < c2, x < floordiv(c2 + c1 - 1, c1), pos("c1")),     # x*c < k <=> x < ceil(k/c)
    Rule(c1 < x * c2, floordiv(c1, c2) < x, pos("c2")),
    Rule(x + c1 < y + c2, x < y + (c2 - c1)),
    Rule(x + y < x + z, y < z),
    Rule(y + x < z + x, y < z),
    Rule(x + y < x, y < 0),
    Rule(x < x + y, 0 < y),
    Rule(x < y, _decide(_lt)),
]

LE_RULES = [
    Rule(broadcast(x) <= broadcast(y), broadcast(x <= y)),
    Rule(ramp(x, y) <= ramp(z, y), broadcast(x <= z)),
    Rule(x + c1 <= c2, x <= c2 - c1),
    Rule(x - c1 <= c2, x <= c2 + c1),
    Rule(c1 - x <= c2, c1 - c2 <= x),
    Rule(c1 <= x + c2, c1 - c2 <= x),
    Rule(c1 <= x - c2, c1 + c2 <= x),
    Rule(x * c1 <= c2, x <= floordiv(c2, c1), pos("c1")),             # x*c <= k <=> x <= k//c
    Rule(c1 <= x * c2, floordiv(c1 + c2 - 1, c2) <= x, pos("c2")),
    Rule(x + y <= x + z, y <= z),
    Rule(y + x <= z + x, y <= z),
    Rule(x + y <= x, y <= 0),
    Rule(x <= x + y, 0 <= y),
    Rule(x <= y, _decide(_le)),
]

GT_RULES = [Rule(x > y, y < x)]
GE_RULES = [Rule(x >= y, y <= x)]

EQ_RULES = [
    Rule(EQ(c1, x), EQ(x, c1)),
    Rule(EQ(broadcast(x), broadcast(y)), broadcast(EQ(x, y))),
    Rule(EQ(x + c1, c2), EQ(x, c2 - c1)),
    Rule(EQ(x - c1, c2), EQ(x, c2 + c1)),
    Rule(EQ(c1 - x, c2), EQ(x, c1 - c2)),
    Rule(EQ(x, y), _decide(_eq)),
    Rule(EQ(x, y), _eq_by_residue),
]

NE_RULES = [
    Rule(NE(c1, x), NE(x, c1)),
    Rule(NE(broadcast(x), broadcast(y)), broadcast(NE(x, y))),
    Rule(NE(x + c1, c2), NE(x, c2 - c1)),
    Rule(NE(x - c1, c2), NE(x, c2 + c1)),
    Rule(NE(x, y), _decide(_ne)),
    Rule(NE(x, y), _ne_by_residue),
]

NOT_RULES = [
    Rule(~broadcast(b1), broadcast(~b1)),
    Rule(~~b1, b1),
    Rule(~(x < y), y <= x, is_int("x")),          # not for floats: NaN compares false
    Rule(~(x <= y), y < x, is_int("x")),
    Rule(~EQ(x, y), NE(x, y)),
    Rule(~NE(x, y), EQ(x, y)),
    Rule(~(b1 & b2), ~b1 | ~b2),
    Rule(~(b1 | b2), ~b1 & ~b2),
]

AND_RULES = [
    Rule(broadcast(b1) & broadcast(b2), broadcast(b1 & b2)),
    Rule(And(b1, b1), b1),
    Rule(b1 & ~b1, FALSE),
    Rule(~b1 & b1, FALSE),
    Rule(b1 & (b1 & b2), b1 & b2),
    Rule((b1 & b2) & b1, b1 & b2),
    Rule((b1 & b2) & b2, b1 & b2),
    Rule((x < y) & (y < x), FALSE, is_int("x")),
    Rule((x < y) & (y <= x), FALSE, is_int("x")),
    Rule((x <= y) & (y < x), FALSE, is_int("x")),
    Rule((x < c1) & (x < c2), x < min(c1, c2), is_int("x")),
    Rule((c1 < x) & (c2 < x), max(c1, c2) < x, is_int("x")),
    Rule((x < c1) & (c2 < x), FALSE, both(is_int("x"), lambda m: m.v("c1") <= m.v("c2") + 1)),
    Rule((c2 < x) & (x < c1), FALSE, both(is_int("x"), lambda m: m.v("c1") <= m.v("c2") + 1)),
]

OR_RULES = [
    Rule(broadcast(b1) | broadcast(b2), broadcast(b1 | b2)),
    Rule(Or(b1, b1), b1),
    Rule(b1 | ~b1, TRUE),
    Rule(~b1 | b1, TRUE),
    Rule(b1 | (b1 | b2), b1 | b2),
    Rule((b1 | b2) | b1, b1 | b2),
    Rule((b1 | b2) | b2, b1 | b2),
    Rule((x < y) | (y <= x), TRUE, is_int("x")),
    Rule((x <= y) | (y < x), TRUE, is_int("x")),
    Rule((x < c1) | (x < c2), x < max(c1, c2), is_int("x")),
    Rule((c1 < x) | (c2 < x), min(c1, c2) < x, is_int("x")),
]

SELECT_RULES = [
    Rule(Select(b1, x, x), x),
    Rule(Select(broadcast(bc), xv, yv), _pick_by_const),
    Rule(Select(~b1, x, y), Select(b1, y, x)),
    Rule(Select(b1, Select(b1, x, y), z), Select(b1, x, z)),
    Rule(Select(b1, x, Select(b1, y, z)), Select(b1, x, z)),
]

RAMP_RULES = [
    Rule(ramp(x, 0), broadcast(x)),
]

RULES = {
    Add: ADD + ADD_NO_OVERFLOW, Sub: SUB + SUB_NO_OVERFLOW, Mul: MUL, FloorDiv: FLOORDIV,
    FloorMod: FLOORMOD, Div: TRUNCDIV, Mod: TRUNCMOD, Min: MIN, Max: MAX,
    LT: LT_RULES, LE: LE_RULES, GT: GT_RULES, GE: GE_RULES,
    EQ: EQ_RULES, NE: NE_RULES, Not: NOT_RULES, And: AND_RULES, Or: OR_RULES,
    Select: SELECT_RULES, Ramp: RAMP_RULES,
}

#: The rules for integers that may wrap (8/16-bit, unsigned): ring identities only.
RING_RULES = {Add: ADD, Sub: SUB, Mul: MUL, Ramp: RAMP_RULES}

#: Node kinds whose rules run on any dtype (each rule that needs integers checks it).
ANY_DTYPE_KINDS = frozenset({Not, And, Or, Select, GT, GE})
