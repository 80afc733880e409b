"""Rewrite rules for comparisons (LT LE GT GE EQ NE), Not, And, Or and Select.
"""

from __future__ import annotations

from ..expr import (
    EQ,
    NE,
    And,
    Or,
    Select,
)
from ..op import floordiv, max, min
from .pattern import Rule, broadcast, ramp
from .rule_helpers import (
    FALSE,
    TRUE,
    b1,
    b2,
    bc,
    both,
    c1,
    c2,
    decide,
    eq_by_residue,
    eq_diff,
    is_int,
    le_diff,
    lt_diff,
    ne_by_residue,
    ne_diff,
    pick_by_const,
    pos,
    x,
    xv,
    y,
    yv,
    z,
)

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
    Rule(x < y, decide(lt_diff)),
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
    Rule(x <= y, decide(le_diff)),
]

GT_RULES = [Rule(x > y, y < x)]
GE_RULES = [Rule(x >= y, y <= x)]

EQ_RULES = [
    Rule(EQ(c1, x), EQ(x, c1)),
    Rule(EQ(broadcast(x), broadcast(y)), broadcast(EQ(x, y))),
    Rule(EQ(x + c1, c2), EQ(x, c2 - c1)),
    Rule(EQ(x - c1, c2), EQ(x, c2 + c1)),
    Rule(EQ(c1 - x, c2), EQ(x, c1 - c2)),
    Rule(EQ(x, y), decide(eq_diff)),
    Rule(EQ(x, y), eq_by_residue),
]

NE_RULES = [
    Rule(NE(c1, x), NE(x, c1)),
    Rule(NE(broadcast(x), broadcast(y)), broadcast(NE(x, y))),
    Rule(NE(x + c1, c2), NE(x, c2 - c1)),
    Rule(NE(x - c1, c2), NE(x, c2 + c1)),
    Rule(NE(x, y), decide(ne_diff)),
    Rule(NE(x, y), ne_by_residue),
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
    Rule(Select(broadcast(bc), xv, yv), pick_by_const),
    Rule(Select(~b1, x, y), Select(b1, y, x)),
    Rule(Select(b1, Select(b1, x, y), z), Select(b1, x, z)),
    Rule(Select(b1, x, Select(b1, y, z)), Select(b1, x, z)),
]
