"""Rewrite rules for division and remainder: floordiv/floormod and truncdiv/truncmod.
"""

from __future__ import annotations

from ..op import floordiv, floormod, truncdiv, truncmod
from .pattern import Rule, broadcast, ramp
from .rule_helpers import (
    both,
    c1,
    c2,
    c3,
    divides,
    floordiv_by_bound,
    floormod_by_bound,
    floormod_by_residue,
    pos,
    same_block,
    trunc_split,
    truncdiv_by_bound,
    truncmod_by_bound,
    x,
    y,
    z,
)

FLOORDIV = [
    Rule(floordiv(broadcast(x), broadcast(y)), broadcast(floordiv(x, y))),
    Rule(floordiv(ramp(x, c1), broadcast(c2)), ramp(floordiv(x, c2), floordiv(c1, c2)),
         divides("c2", "c1")),
    Rule(floordiv(ramp(x, c1), broadcast(c2)), broadcast(floordiv(x, c2)), same_block),
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
    Rule(floordiv(x, c1), floordiv_by_bound),
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
    Rule(floormod(ramp(x, c1), broadcast(c2)), ramp(floormod(x, c2), c1), same_block),
    Rule(floormod(x * c1, c2), 0, divides("c2", "c1")),
    Rule(floormod(x * c1 + y, c2), floormod(y, c2), divides("c2", "c1")),
    Rule(floormod(y + x * c1, c2), floormod(y, c2), divides("c2", "c1")),
    Rule(floormod(x + c1, c2), floormod(x, c2), divides("c2", "c1")),
    Rule(floormod(floormod(x, c1), c2), floormod(x, c2), divides("c2", "c1")),
    Rule(floormod(x, x), 0),
    Rule(floormod(x, c1), floormod_by_residue),
    Rule(floormod(x, c1), floormod_by_bound),
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
    Rule(truncdiv(x, c1), truncdiv_by_bound),
]

TRUNCMOD = [
    Rule(truncmod(broadcast(x), broadcast(y)), broadcast(truncmod(x, y))),
    Rule(truncmod(x * c1, c2), 0, divides("c2", "c1")),
    Rule(truncmod(x * c1 + y, c2), truncmod(y, c2), trunc_split),
    Rule(truncmod(y + x * c1, c2), truncmod(y, c2), trunc_split),
    Rule(truncmod(x, x), 0),
    Rule(truncmod(x, c1), truncmod_by_bound),
]
