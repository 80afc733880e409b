"""The error every schedule primitive raises when its preconditions do not hold."""

from __future__ import annotations

from ..node import TVMError


class ScheduleError(TVMError, ValueError):
    """A schedule primitive was asked for something it cannot do.

    The message names the primitive, the block or loop, and the rule broken,
    for example ``split: loop i of block C: the factors 3 * 5 = 15 do not
    cover the extent 16``. The schedule is left as it was before the call.
    """


def fail(primitive: str, where: str, rule: str) -> ScheduleError:
    """A ``ScheduleError`` reading ``<primitive>: <where>: <rule>`` (raise it)."""
    return ScheduleError(f"{primitive}: {where}: {rule}")
