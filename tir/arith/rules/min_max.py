"""Rewrite rules for Min and Max, in TVM's order (``rewrite_simplify.cc``, v0.16).

Each table is one ordered list; the first rule that applies wins and its
result is simplified again. Rules wrapped in ``no_wrap`` assume index
arithmetic does not overflow (``min(x + y, x + z)`` is ``min(y, z) + x``
only then) and serve signed 32/64-bit integers; the others are identities of
any total order (lattice laws, constant choice, vector lifting, Select
distribution), so ``MIN_RING``/``MAX_RING`` also serve 8/16-bit and unsigned
integers. After TVM's rules come ours: ``min(x, y) -> x`` when ``x <= y`` is
provable from the bound of the simplified difference, which is stronger than
TVM's operand bounds. Constants keep the side they were written on (TVM
does not move them): ``min(0, z)`` stays as is.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ... import dtype as dt
from ...expr import Max, Min, PrimExpr, Select
from ...op import const, floordiv, max, min, truncdiv
from ..pattern import Match, PVar, Rule, broadcast
from .helpers import b1, c1, c2, le, pos, x, xv, y, z

s1, s2 = PVar("s1"), PVar("s2")

_NO_WRAP: set[int] = set()


def no_wrap(*rules: Rule | Sequence[Rule]) -> list[Rule]:
    """Mark rules that assume no overflow: signed 32/64-bit integers only."""
    flat = [r for item in rules for r in (item if isinstance(item, (list, tuple)) else [item])]
    _NO_WRAP.update(id(r) for r in flat)
    return flat


def ring(rules: Sequence[Rule]) -> list[Rule]:
    """The rules of a table that hold in any total order, wraparound included."""
    return [r for r in rules if id(r) not in _NO_WRAP]


def one_of(patterns: Sequence[PrimExpr], result, when: Callable | None = None) -> list[Rule]:
    """One rule per pattern, all with the same result (TVM's ``matches_one_of``)."""
    return [Rule(p, result, when) for p in patterns]


# ---------------------------------------------------------------- conditions and results


def below(a: str, b: str) -> Callable:
    """The bounds of the operands alone show ``a <= b`` (TVM's ``const_int_bound`` check)."""
    return lambda m: m.s.interval(m.env[a])[1] <= m.s.interval(m.env[b])[0]


def lt(a: str, b: str) -> Callable:
    """Constant ``a`` is less than constant ``b``."""
    return lambda m: m.v(a) < m.v(b)


def negative(name: str) -> Callable:
    """The constant ``name`` is negative."""
    return lambda m: m.v(name) < 0


def zero(name: str) -> Callable:
    """The constant ``name`` is zero."""
    return lambda m: m.v(name) == 0


def nonzero(name: str) -> Callable:
    """The constant ``name`` is not zero."""
    return lambda m: m.v(name) != 0


def rounds_up(m: Match) -> bool:
    """``(x + c1) / c2 * c2`` rounds ``x`` up to a multiple of ``c2``: ``c1 = c2 - 1 >= 0``."""
    return m.v("c2") > 0 and m.v("c1") + 1 == m.v("c2")


def rounds_up_positive(m: Match) -> bool:
    """``rounds_up`` and ``x >= 1``, so the rounded value is at least ``c2``."""
    return rounds_up(m) and m.s.interval(m.x)[0] >= 1


def scaled_bound(inner: Callable, flipped: Callable) -> Callable:
    """``op(x * c1, c2)`` as ``op'(x, c2 / c1) * c1`` when ``c1`` divides ``c2``.

    ``inner`` is the operation kept for ``c1 > 0``, ``flipped`` the one for
    ``c1 < 0`` (multiplying by a negative reverses the order).
    """
    def result(m: Match) -> PrimExpr | None:
        a, b = m.v("c1"), m.v("c2")
        if a == 0 or b % a != 0:
            return None
        q, bits = b // a, dt.DataType(dt.element_of(m.x.dtype)).bits
        if not -(2 ** (bits - 1)) <= q < 2 ** (bits - 1):  # INT_MIN / -1
            return None
        bound = const(q, m.x.dtype)
        return (inner if a > 0 else flipped)(m.x, bound) * m.env["c1"]

    return result


# ---------------------------------------------------------------- Min

MIN = [
    # vector rules
    Rule(min(broadcast(x), broadcast(y)), broadcast(min(x, y))),
    Rule(min(min(xv, broadcast(y)), broadcast(z)), min(xv, broadcast(min(y, z)))),
    Rule(Min(x, x), x),
    # the operands' bounds decide
    *no_wrap(Rule(min(x, y), x, below("x", "y")), Rule(min(x, y), y, below("y", "x"))),
    # constant comparison
    *no_wrap(
        Rule(min(x + c1, x + c2), x + c1, lt("c1", "c2")),
        Rule(min(x + c1, x + c2), x + c2),
        Rule(min(x + c1, x), x + c1, negative("c1")),
        Rule(min(x + c1, x), x),
        Rule(min(x, x + c1), x + c1, negative("c1")),
        Rule(min(x, x + c1), x),
        Rule(min(c1 - x, c2 - x), c1 - x, lt("c1", "c2")),
        Rule(min(c1 - x, c2 - x), c2 - x),
    ),
    # rounding up to a multiple of c2 (truncdiv rounds up too where x + c1 < 0)
    *no_wrap(
        one_of([min(truncdiv(x + c1, c2) * c2, x), min(x, truncdiv(x + c1, c2) * c2),
                min(floordiv(x + c1, c2) * c2, x), min(x, floordiv(x + c1, c2) * c2)],
               x, rounds_up),
        one_of([min(truncdiv(x + c1, c2) * c2, max(x, c2)),
                min(max(x, c2), truncdiv(x + c1, c2) * c2),
                min(floordiv(x + c1, c2) * c2, max(x, c2)),
                min(max(x, c2), floordiv(x + c1, c2) * c2)],
               max(x, c2), rounds_up_positive),
        one_of([min(x, floordiv(x, c2) * c2), min(floordiv(x, c2) * c2, x)],
               floordiv(x, c2) * c2, pos("c2")),
    ),
    # lattice laws
    *one_of([min(max(x, y), min(x, y)), min(max(x, y), min(y, x)),
             min(min(x, y), max(x, y)), min(min(x, y), max(y, x)),
             min(min(x, y), x), min(min(x, y), y), min(x, min(x, y)), min(y, min(x, y))],
            min(x, y)),
    *one_of([min(max(x, y), x), min(max(y, x), x), min(x, max(x, y)), min(x, max(y, x))], x),
    Rule(min(min(min(x, y), z), y), min(min(x, y), z)),
    Rule(min(min(min(min(x, y), z), s1), y), min(min(min(x, y), z), s1)),
    Rule(min(min(min(min(min(x, y), z), s1), s2), y), min(min(min(min(x, y), z), s1), s2)),
    *one_of([min(max(x, y), max(x, z)), min(max(x, y), max(z, x)),
             min(max(y, x), max(x, z)), min(max(y, x), max(z, x))], max(min(y, z), x)),
    *one_of([min(min(x, y), min(x, z)), min(min(x, y), min(z, x)),
             min(min(y, x), min(x, z)), min(min(y, x), min(z, x))], min(min(y, z), x)),
    # add and sub distribution
    *no_wrap(
        one_of([min(y + x, z + x), min(y + x, x + z), min(x + y, x + z), min(x + y, z + x)],
               min(y, z) + x),
        Rule(min(y - x, z - x), min(y, z) - x),
        Rule(min(x - y, x - z), x - max(y, z)),
    ),
    Rule(min(min(x, c1), c2), min(x, min(c1, c2))),
    # scaling: a monotone map commutes with min; a decreasing one turns it into max
    *no_wrap(
        Rule(min(truncdiv(x, c1), truncdiv(y, c1)), truncdiv(min(x, y), c1), pos("c1")),
        Rule(min(truncdiv(x, c1), truncdiv(y, c1)), truncdiv(max(x, y), c1), negative("c1")),
        Rule(min(floordiv(x, c1), floordiv(y, c1)), floordiv(min(x, y), c1), pos("c1")),
        Rule(min(floordiv(x, c1), floordiv(y, c1)), floordiv(max(x, y), c1), negative("c1")),
        Rule(min(x * c1, y * c1), min(x, y) * c1, pos("c1")),
        Rule(min(x * c1, y * c1), max(x, y) * c1, negative("c1")),
        Rule(min(x * c1, c2), c2, lambda m: m.v("c1") == 0 and m.v("c2") < 0),
        Rule(min(x * c1, c2), c1, zero("c1")),
        Rule(min(x * c1, c2), scaled_bound(min, max)),
    ),
    # canonicalization: constants outward
    Rule(min(min(x, c1), y), min(min(x, y), c1)),
    *no_wrap(Rule(min(c1 - x, c2), c1 - max(x, c1 - c2), nonzero("c2"))),
    # condition rules
    Rule(min(Select(b1, y, z), Select(b1, s1, s2)), Select(b1, min(y, s1), min(z, s2))),
    # ours: the bound of the simplified difference decides
    *no_wrap(Rule(min(x, y), x, le("x", "y")), Rule(min(x, y), y, le("y", "x"))),
]

# ---------------------------------------------------------------- Max

MAX = [
    # vector rules
    Rule(max(broadcast(x), broadcast(y)), broadcast(max(x, y))),
    Rule(max(max(xv, broadcast(y)), broadcast(z)), max(xv, broadcast(max(y, z)))),
    Rule(Max(x, x), x),
    # the operands' bounds decide
    *no_wrap(Rule(max(x, y), x, below("y", "x")), Rule(max(x, y), y, below("x", "y"))),
    # constant comparison
    *no_wrap(
        Rule(max(x + c1, x + c2), x + c1, lt("c2", "c1")),
        Rule(max(x + c1, x + c2), x + c2),
        Rule(max(x + c1, x), x + c1, pos("c1")),
        Rule(max(x + c1, x), x),
        Rule(max(x, x + c1), x + c1, pos("c1")),
        Rule(max(x, x + c1), x),
        Rule(max(c1 - x, c2 - x), c1 - x, lt("c2", "c1")),
        Rule(max(c1 - x, c2 - x), c2 - x),
    ),
    # rounding up to a multiple of c2
    *no_wrap(
        one_of([max(truncdiv(x + c1, c2) * c2, x), max(x, truncdiv(x + c1, c2) * c2)],
               truncdiv(x + c1, c2) * c2, rounds_up),
        one_of([max(floordiv(x + c1, c2) * c2, x), max(x, floordiv(x + c1, c2) * c2)],
               floordiv(x + c1, c2) * c2, rounds_up),
        one_of([max(floordiv(x, c2) * c2, x), max(x, floordiv(x, c2) * c2)], x, pos("c2")),
    ),
    # lattice laws
    *one_of([max(min(x, y), x), max(min(y, x), x), max(x, min(x, y)), max(x, min(y, x))], x),
    *one_of([max(min(x, y), max(x, y)), max(min(x, y), max(y, x)),
             max(max(x, y), min(x, y)), max(max(x, y), min(y, x)),
             max(max(x, y), x), max(max(x, y), y), max(x, max(x, y)), max(y, max(x, y))],
            max(x, y)),
    Rule(max(max(max(x, y), z), y), max(max(x, y), z)),
    Rule(max(max(max(max(x, y), z), s1), y), max(max(max(x, y), z), s1)),
    Rule(max(max(max(max(max(x, y), z), s1), s2), y), max(max(max(max(x, y), z), s1), s2)),
    *one_of([max(max(x, y), max(x, z)), max(max(x, y), max(z, x)),
             max(max(y, x), max(x, z)), max(max(y, x), max(z, x))], max(max(y, z), x)),
    *one_of([max(min(x, y), min(x, z)), max(min(x, y), min(z, x)),
             max(min(y, x), min(x, z)), max(min(y, x), min(z, x))], min(max(y, z), x)),
    # add and sub distribution
    *no_wrap(
        one_of([max(y + x, z + x), max(y + x, x + z), max(x + y, x + z), max(x + y, z + x)],
               max(y, z) + x),
        Rule(max(y - x, z - x), max(y, z) - x),
        Rule(max(x - y, x - z), x - min(y, z)),
    ),
    Rule(max(max(x, c1), c2), max(x, max(c1, c2))),
    # scaling
    *no_wrap(
        Rule(max(truncdiv(x, c1), truncdiv(y, c1)), truncdiv(max(x, y), c1), pos("c1")),
        Rule(max(truncdiv(x, c1), truncdiv(y, c1)), truncdiv(min(x, y), c1), negative("c1")),
        Rule(max(floordiv(x, c1), floordiv(y, c1)), floordiv(max(x, y), c1), pos("c1")),
        Rule(max(floordiv(x, c1), floordiv(y, c1)), floordiv(min(x, y), c1), negative("c1")),
        Rule(max(x * c1, y * c1), max(x, y) * c1, pos("c1")),
        Rule(max(x * c1, y * c1), min(x, y) * c1, negative("c1")),
        Rule(max(x * c1, c2), c2, lambda m: m.v("c1") == 0 and m.v("c2") > 0),
        Rule(max(x * c1, c2), c1, zero("c1")),
        Rule(max(x * c1, c2), scaled_bound(max, min)),
    ),
    # canonicalization: constants outward
    Rule(max(max(x, c1), y), max(max(x, y), c1)),
    *no_wrap(Rule(max(c1 - x, c2), c1 - min(x, c1 - c2), nonzero("c2"))),
    # condition rules
    Rule(max(Select(b1, y, z), Select(b1, s1, s2)), Select(b1, max(y, s1), max(z, s2))),
    # ours: the bound of the simplified difference decides
    *no_wrap(Rule(max(x, y), y, le("x", "y")), Rule(max(x, y), x, le("y", "x"))),
]

#: Min and Max for integers that may wrap (8/16-bit, unsigned): order identities only.
MIN_RING = ring(MIN)
MAX_RING = ring(MAX)
