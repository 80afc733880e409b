"""Rewrite rules for Add, Sub and Mul (and Ramp), scalar and vector.
"""

from __future__ import annotations

from ..expr import (
    Select,
)
from ..op import floordiv, floormod, max, min, truncdiv, truncmod
from .pattern import Rule, broadcast, ramp
from .rule_helpers import b1, c1, c2, pos, w, x, y, z

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


RAMP_RULES = [
    Rule(ramp(x, 0), broadcast(x)),
]
