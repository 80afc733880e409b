"""Rewrite rules for Add, Sub and Mul (and Ramp), scalar and vector, in TVM's order.

Each table is one ordered list, as TVM's ``VisitExpr_`` tries its rewrites;
the first rule that applies wins and its result is simplified again. Rules
wrapped in ``no_wrap`` assume index arithmetic does not overflow (TVM's
``IsIndexType`` block) and serve signed 32/64-bit integers only; the others
are ring identities that hold modulo ``2**bits`` too, so ``ring`` of a table
also serves 8/16-bit and unsigned integers (see ``rules.RING_RULES``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ... import dtype as dt
from ...expr import Cast, IntImm, Max, Min, PrimExpr, Select
from ...op import floordiv, floormod, max, min, truncdiv, truncmod
from ..pattern import PVar, Rule, broadcast, ramp
from .helpers import b1, both, c1, c2, c3, w, x, xv, y, z

# integer pattern variables named as in TVM's vector rules (ramp bases and strides)
s1, s2, r1, r2 = PVar("s1"), PVar("s2"), PVar("r1"), PVar("r2")

_NO_WRAP: set[int] = set()


def no_wrap(*rules: Rule) -> list[Rule]:
    """Mark rules that assume no overflow: signed 32/64-bit integers only."""
    _NO_WRAP.update(id(r) for r in rules)
    return list(rules)


def ring(rules: Sequence[Rule]) -> list[Rule]:
    """The rules of a table that survive two's-complement wraparound."""
    return [r for r in rules if id(r) not in _NO_WRAP]


def one_of(patterns: Sequence[PrimExpr], result, when: Callable | None = None) -> list[Rule]:
    """One rule per pattern, all with the same result (TVM's ``matches_one_of``)."""
    return [Rule(p, result, when) for p in patterns]


# ---------------------------------------------------------------- conditions


def neg(a: str, b: str) -> Callable:
    """Constant ``a`` is minus constant ``b``."""
    return lambda m: m.v(a) == -m.v(b)


def odd(name: str) -> Callable:
    """Constant ``name`` is odd."""
    return lambda m: m.v(name) % 2 == 1


def nonconst(name: str) -> Callable:
    """The match is not a constant (factoring a constant out would undo ``(x + c1) * c2``)."""
    return lambda m: type(m.env[name]) is not IntImm


def nonzero(name: str) -> Callable:
    """Constant ``name`` is not zero."""
    return lambda m: m.v(name) != 0


def negative(name: str) -> Callable:
    """Constant ``name`` is negative."""
    return lambda m: m.v(name) < 0


def product(c3_: str, c1_: str, c2_: str) -> Callable:
    """``c3 == c1 * c2`` with ``c1 != 0``."""
    return lambda m: m.v(c1_) != 0 and m.v(c3_) == m.v(c1_) * m.v(c2_)


def at_least_minus(name: str, c: str) -> Callable:
    """``m.name >= -c`` provably."""
    return lambda m: m.s.interval(m.env[name])[0] >= -m.v(c)


def equal_differences(m) -> bool:
    """``r1 - s1 == r2 - s2`` provably (so ``min(r1, r2) - min(s1, s2) == r1 - s1``)."""
    return m.s.diff_interval(m.r1 - m.s1, m.r2 - m.s2) == (0, 0)


def not_min_max(name: str) -> Callable:
    """The match is no min/max (moving one min/max behind another would never end)."""
    return lambda m: type(m.env[name]) not in (Min, Max)


# ---------------------------------------------------------------- Add

ADD_RULES = [
    Rule(c1 + x, x + c1),                                   # constants on the right
    Rule(ramp(r1, s1) + ramp(r2, s2), ramp(r1 + r2, s1 + s2)),
    Rule(ramp(r1, s1) + broadcast(x), ramp(r1 + x, s1)),
    Rule(broadcast(x) + ramp(r1, s1), ramp(x + r1, s1)),
    Rule(broadcast(x) + broadcast(y), broadcast(x + y)),
    Rule((x - y) + y, x),
    Rule(x + (y - x), y),
    Rule((x - y) + (y - z), x - z),
    Rule((x - y) + (z - x), z - y),
    *no_wrap(
        Rule(min(x, y - z) + z, min(x + z, y)),
        Rule(min(x - z, y) + z, min(x, y + z)),
        Rule(max(x, y - z) + z, max(x + z, y)),
        Rule(max(x - z, y) + z, max(x, y + z)),
        Rule(min(x, y + z * c1) + z * c2, min(x + z * c2, y), neg("c1", "c2")),
        Rule(max(x, y + z * c1) + z * c2, max(x + z * c2, y), neg("c1", "c2")),
        Rule(min(y + z * c1, x) + z * c2, min(x + z * c2, y), neg("c1", "c2")),
        Rule(max(y + z * c1, x) + z * c2, max(x + z * c2, y), neg("c1", "c2")),
        # the same with the constant term on the right, our canonical order
        Rule(min(x, z * c1 + y) + z * c2, min(x + z * c2, y), neg("c1", "c2")),
        Rule(max(x, z * c1 + y) + z * c2, max(x + z * c2, y), neg("c1", "c2")),
        Rule(min(z * c1 + y, x) + z * c2, min(x + z * c2, y), neg("c1", "c2")),
        Rule(max(z * c1 + y, x) + z * c2, max(x + z * c2, y), neg("c1", "c2")),
    ),
    *one_of([max(x, y) + min(x, y), min(x, y) + max(x, y), max(x, y) + min(y, x),
             min(x, y) + max(y, x)], x + y),
    *no_wrap(
        Rule(min(x, y + c1) + c2, min(x + c2, y), neg("c1", "c2")),
        Rule(min(x + c1, y) + c2, min(x, y + c2), neg("c1", "c2")),
        Rule(max(x, y + c1) + c2, max(x + c2, y), neg("c1", "c2")),
        Rule(max(x + c1, y) + c2, max(x, y + c2), neg("c1", "c2")),
    ),
    Rule((x + c1) + c2, x + (c1 + c2)),
    Rule((x - c1) + c2, x + (c2 - c1)),
    Rule((c1 - x) + c2, (c1 + c2) - x),
    Rule(x + x, x * 2),
    *one_of([x * y + x, y * x + x, x + y * x, x + x * y], x * (y + 1), nonconst("x")),
    *one_of([x * y + x * z, y * x + x * z, x * y + z * x, y * x + z * x], x * (y + z),
            nonconst("x")),
    Rule(truncdiv(x, c1) * c1 + truncmod(x, c1), x),
    *one_of([floordiv(x, y) * y + floormod(x, y), y * floordiv(x, y) + floormod(x, y),
             floormod(x, y) + floordiv(x, y) * y, floormod(x, y) + y * floordiv(x, y)], x),
    Rule(truncmod(x, c1) + truncdiv(x, c1) * c1, x),
    *no_wrap(
        Rule(floordiv(floormod(x, c2) + c1, c2) + floordiv(x, c2), floordiv(x + c1, c2),
             lambda m: m.v("c2") > 0),
        Rule(floordiv(x, 2) + floormod(x, 2), floordiv(x + 1, 2)),
        Rule(floormod(x + c1, 2) + floormod(x, 2), 1, odd("c1")),  # (x + 1) % 2 + x % 2
        Rule(floormod(x, 2) + floormod(x + c1, 2), 1, odd("c1")),
    ),
    # canonical order: constants outwards, min/max first, the multiple before the residue
    *one_of([x + (c1 - y), (c1 - y) + x], (x - y) + c1),
    *one_of([(x + c1) + y, x + (y + c1)], (x + y) + c1),
    Rule((x - c1) + y, (x + y) - c1),
    Rule(x + (y - c1), (x + y) - c1),
    Rule(x + max(y, z), max(y, z) + x, not_min_max("x")),
    Rule(x + min(y, z), min(y, z) + x, not_min_max("x")),
    Rule(truncmod(y, c1) + x * c1, x * c1 + truncmod(y, c1)),
    Rule(floormod(y, c1) + x * c1, x * c1 + floormod(y, c1)),
    Rule(Select(b1, x, y) + Select(b1, z, w), Select(b1, x + z, y + w)),
]

# ---------------------------------------------------------------- Sub

SUB_RULES = [
    Rule(ramp(r1, s1) - ramp(r2, s2), ramp(r1 - r2, s1 - s2)),
    Rule(ramp(r1, s1) - broadcast(x), ramp(r1 - x, s1)),
    Rule(broadcast(x) - ramp(r1, s1), ramp(x - r1, 0 - s1)),
    Rule(broadcast(x) - broadcast(y), broadcast(x - y)),
    *one_of([(x + y) - y, (y + x) - y], x),
    *one_of([x - (y + x), x - (x + y)], 0 - y),
    *no_wrap(
        *one_of([min(x, y) - y, x - max(y, x)], min(x - y, 0)),
        *one_of([x - max(x, y), min(y, x) - y], min(0, x - y)),
        *one_of([max(x, y) - y, x - min(y, x)], max(x - y, 0)),
        *one_of([x - min(x, y), max(y, x) - y], max(0, x - y)),
    ),
    Rule(x - x, 0),
    *one_of([x * y - x, y * x - x], x * (y - 1), nonconst("x")),
    *one_of([x - y * x, x - x * y], x * (1 - y), nonconst("x")),
    *one_of([x * y - x * z, y * x - x * z, x * y - z * x, y * x - z * x], x * (y - z),
            nonconst("x")),
    Rule((x + c1) - c2, x + (c1 - c2)),
    Rule((c1 - x) - (c2 - y), (y - x) + (c1 - c2)),
    *one_of([(x + y) - (x + z), (x + y) - (z + x), (y + x) - (z + x), (y + x) - (x + z)], y - z),
    *no_wrap(
        *one_of([min(x + y, z) - x, min(y + x, z) - x], min(y, z - x)),
        *one_of([min(z, x + y) - x, min(z, y + x) - x], min(z - x, y)),
        *one_of([max(x + y, z) - x, max(y + x, z) - x], max(y, z - x)),
        *one_of([max(z, x + y) - x, max(z, y + x) - x], max(z - x, y)),
        *one_of([x - min(x + y, z), x - min(y + x, z)], max(0 - y, x - z)),
        *one_of([x - min(z, x + y), x - min(z, y + x)], max(x - z, 0 - y)),
        *one_of([x - max(x + y, z), x - max(y + x, z)], min(0 - y, x - z)),
        *one_of([x - max(z, x + y), x - max(z, y + x)], min(x - z, 0 - y)),
    ),
    Rule(min(x, y) - min(y, x), 0),
    Rule(max(x, y) - max(y, x), 0),
    *no_wrap(
        *one_of([min(r1, r2) - min(s1, s2), min(r1, r2) - min(s2, s1)], r1 - s1,
                equal_differences),
        *one_of([max(r1, r2) - max(s1, s2), max(r1, r2) - max(s2, s1)], r1 - s1,
                equal_differences),
    ),
]

# c * (x / c) + x % c == x in both division modes: the quotient terms cancel.
SUB_DIV_RULES = no_wrap(
    Rule(x - truncdiv(x, c1) * c1, truncmod(x, c1), nonzero("c1")),
    Rule(truncdiv(x, c1) * c1 - x, 0 - truncmod(x, c1), nonzero("c1")),
    Rule(x - truncdiv(x + y, c1) * c1, truncmod(x + y, c1) - y, nonzero("c1")),
    Rule(truncdiv(x + y, c1) * c1 - x, y - truncmod(x + y, c1), nonzero("c1")),
    Rule(x - truncdiv(x - y, c1) * c1, truncmod(x - y, c1) + y, nonzero("c1")),
    Rule(truncdiv(x - y, c1) * c1 - x, 0 - truncmod(x - y, c1) - y, nonzero("c1")),
    Rule(x * c2 - truncdiv(x, c1) * c3, truncmod(x, c1) * c2, product("c3", "c1", "c2")),
    Rule(truncdiv(x, c1) * c3 - x * c2, 0 - truncmod(x, c1) * c2, product("c3", "c1", "c2")),
    Rule(x * c2 - truncdiv(x + y, c1) * c3, (truncmod(x + y, c1) - y) * c2,
         product("c3", "c1", "c2")),
    Rule(truncdiv(x + y, c1) * c3 - x * c2, (y - truncmod(x + y, c1)) * c2,
         product("c3", "c1", "c2")),
    Rule(x * c2 - truncdiv(x - y, c1) * c3, (truncmod(x - y, c1) + y) * c2,
         product("c3", "c1", "c2")),
    Rule(truncdiv(x - y, c1) * c3 - x * c2, (0 - truncmod(x - y, c1) - y) * c2,
         product("c3", "c1", "c2")),
    # x + c2 = a * c3 + r, all non-negative: (x + c1) / c3 - (x + c2) / c3 depends on r only.
    # TVM asks x >= -c2 only; x + c2 % c3 must be >= 0 too for its truncmod to be r
    # (x = -4, c1 = 7, c2 = 5, c3 = 3: 1 - 0, but TVM's result is 0).
    Rule(truncdiv(x + c1, c3) - truncdiv(x + c2, c3),
         truncdiv(truncmod(x + floormod(c2, c3), c3) + (c1 - c2), c3),
         lambda m: m.v("c3") > 0 and m.v("c1") >= m.v("c2") and at_least_minus("x", "c2")(m)
         and m.s.interval(m.x)[0] >= -(m.v("c2") % m.v("c3"))),
    Rule(truncdiv(x + c1, c3) - truncdiv(x, c3), truncdiv(truncmod(x, c3) + c1, c3),
         lambda m: m.v("c3") > 0 and m.v("c1") >= 0 and m.s.nonneg(m.x)),
    Rule(x - floordiv(x, c1) * c1, floormod(x, c1), nonzero("c1")),
    Rule(floordiv(x, c1) * c1 - x, 0 - floormod(x, c1), nonzero("c1")),
    Rule(x - floordiv(x + y, c1) * c1, floormod(x + y, c1) - y, nonzero("c1")),
    Rule(floordiv(x + y, c1) * c1 - x, y - floormod(x + y, c1), nonzero("c1")),
    Rule(x - floordiv(x - y, c1) * c1, floormod(x - y, c1) + y, nonzero("c1")),
    Rule(floordiv(x - y, c1) * c1 - x, 0 - floormod(x - y, c1) - y, nonzero("c1")),
    Rule(floordiv(x + c1, 2) - floordiv(x + c2, 2),
         floormod(x, 2) * (floormod(c1, 2) - floormod(c2, 2))
         + (floordiv(c1, 2) - floordiv(c2, 2))),
    Rule(floordiv(x, 2) - floordiv(x + c2, 2),
         floormod(x, 2) * (0 - floormod(c2, 2)) - floordiv(c2, 2)),
    Rule(floordiv(x + c1, 2) - floordiv(x, 2), floormod(x, 2) * floormod(c1, 2) + floordiv(c1, 2)),
    Rule(x * c2 - floordiv(x, c1) * c3, floormod(x, c1) * c2, product("c3", "c1", "c2")),
    Rule(floordiv(x, c1) * c3 - x * c2, 0 - floormod(x, c1) * c2, product("c3", "c1", "c2")),
    Rule(x * c2 - floordiv(x + y, c1) * c3, (floormod(x + y, c1) - y) * c2,
         product("c3", "c1", "c2")),
    Rule(floordiv(x + y, c1) * c3 - x * c2, (y - floormod(x + y, c1)) * c2,
         product("c3", "c1", "c2")),
    Rule(x * c2 - floordiv(x - y, c1) * c3, (floormod(x - y, c1) + y) * c2,
         product("c3", "c1", "c2")),
    Rule(floordiv(x - y, c1) * c3 - x * c2, (0 - floormod(x - y, c1) - y) * c2,
         product("c3", "c1", "c2")),
    Rule(floordiv(x + 1, 2) - floormod(x, 2), floordiv(x, 2)),
    Rule(floordiv(x + c1, c3) - floordiv(x + c2, c3),
         floordiv(floormod(x + floormod(c2, c3), c3) + (c1 - c2), c3), lambda m: m.v("c3") > 0),
    Rule(floordiv(x + c1, c3) - floordiv(x, c3), floordiv(floormod(x, c3) + c1, c3),
         lambda m: m.v("c3") > 0),
)

SUB_CANONICAL_RULES = [
    *no_wrap(Rule(x - c1, x + (0 - c1))),
    Rule((x - c1) - c2, x - (c1 + c2)),
    Rule((c1 - x) - c2, (c1 - c2) - x),
    Rule(c1 - (x + c2), (c1 - c2) - x),
    Rule(c1 - (c2 - x), x + (c1 - c2)),
    Rule((x + c1) - y, (x - y) + c1),
    *no_wrap(Rule(x - (y + c1), (x - y) + (0 - c1))),
    Rule(x - (y + c1), (x - y) - c1),             # wrapping types: no negated constant
    Rule(x - (y - z), (x + z) - y),
    *no_wrap(Rule(x - y * c1, x + y * (0 - c1))),
    Rule(Select(b1, x, y) - Select(b1, z, w), Select(b1, x - z, y - w)),
    Rule(Select(b1, y, z) - z, Select(b1, y - z, 0)),
    Rule(Select(b1, y, z) - y, Select(b1, 0, z - y)),
]

SUB_ALL = SUB_RULES + SUB_DIV_RULES + SUB_CANONICAL_RULES

# ---------------------------------------------------------------- Mul

MUL_RULES = [
    Rule(c1 * x, x * c1),
    Rule(broadcast(x) * broadcast(y), broadcast(x * y)),
    *one_of([ramp(r1, s1) * broadcast(x), broadcast(x) * ramp(r1, s1)], ramp(r1 * x, s1 * x)),
    Rule((x + c1) * c2, x * c2 + c1 * c2),
    Rule((x - c1) * c2, x * c2 - c1 * c2),
    Rule((x * c1) * c2, x * (c1 * c2)),
    *one_of([min(x, y) * max(x, y), max(x, y) * min(x, y)], x * y),
    *no_wrap(
        # two forms of c * ceildiv(x, c)
        Rule(floordiv(x - floormod(x, c2), c1) * c1, x - floormod(x, c2), neg("c1", "c2")),
    ),
    Rule(x * (y * c1), (x * y) * c1),
    Rule((x * c1) * y, (x * y) * c1),
    *no_wrap(Rule((x - y) * c1, (y - x) * (0 - c1), negative("c1"))),
]

RAMP_RULES = [
    Rule(ramp(x, 0), broadcast(x)),
]


def never_negative_zero(name: str) -> Callable:
    """The float match is an integer converted to float: never ``-0.0``, NaN or infinite."""
    def test(m) -> bool:
        e = m.env[name]
        return type(e) is Cast and dt.DataType(dt.element_of(e.value.dtype)).is_integer

    return test


# Floats: ``x + 0.0`` is ``x`` except for ``x = -0.0`` (TVM drops the exception; we keep it).
FLOAT_ADD = [
    Rule(xv + broadcast(c1), xv, both(lambda m: m.v("c1") == 0, never_negative_zero("xv"))),
]

#: The tables by node kind: all rules (signed 32/64-bit) and the ring identities.
ADD, SUB, MUL = ADD_RULES, SUB_ALL, MUL_RULES
ADD_RING, SUB_RING, MUL_RING = ring(ADD), ring(SUB), ring(MUL)
