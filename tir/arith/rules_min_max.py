"""Rewrite rules for Min and Max.
"""

from __future__ import annotations

from ..expr import (
    Max,
    Min,
)
from ..op import floordiv, max, min
from .pattern import Rule, broadcast
from .rule_helpers import c1, c2, le, pos, x, y, z

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
