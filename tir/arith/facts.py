"""What an ``Analyzer`` knows: var ranges and residues, aliases, constraints, expression bounds.

Every change bumps ``epoch`` so that the analyses can drop results cached
under older facts. ``snapshot``/``restore`` let a ``constraint_scope`` undo
what it added.
"""

from __future__ import annotations

import math
from typing import Any

#: An interval of integers, the ends possibly ``-math.inf`` / ``math.inf``.
Interval = tuple

EVERYTHING: Interval = (-math.inf, math.inf)


class Facts:
    """Per-variable facts, shared by the analyses of one ``Analyzer``."""

    def __init__(self) -> None:
        self.bounds: dict[Any, Interval] = {}
        self.mods: dict[Any, tuple[int, int]] = {}
        self.aliases: dict[Any, Any] = {}
        self.constraints: list[Any] = []
        #: ``(expr, interval)`` from constraints comparing a non-var expression with a constant
        self.expr_bounds: list[tuple[Any, Interval]] = []
        self.epoch = 0

    def changed(self) -> None:
        """Note that facts changed (cached analysis results are stale)."""
        self.epoch += 1

    def snapshot(self) -> tuple:
        """A copy of the facts, for ``restore``."""
        return (dict(self.bounds), dict(self.mods), dict(self.aliases), list(self.constraints),
                list(self.expr_bounds))

    def restore(self, snap: tuple) -> None:
        """Go back to the facts of a ``snapshot``."""
        self.bounds, self.mods, self.aliases, self.constraints, self.expr_bounds = snap
        self.changed()


def intersect(a: Interval, b: Interval) -> Interval:
    """The intersection of two intervals (may be empty: lo > hi)."""
    return (max(a[0], b[0]), min(a[1], b[1]))
