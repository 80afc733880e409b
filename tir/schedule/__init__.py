"""Schedules: rewrite a function of blocks by named primitives (TVM's ``tir.schedule``).

``Schedule`` in ``schedule.py`` holds the state and the trace; each primitive is
a pure function ``PrimFunc -> PrimFunc`` in ``primitives/`` (one module per
family); ``analysis.py`` derives what blocks read and write; ``tree.py``
finds and replaces statements.
"""

from .error import ScheduleError
from .schedule import BlockRV, Instruction, LoopRV, Schedule, Trace

__all__ = ["BlockRV", "Instruction", "LoopRV", "Schedule", "ScheduleError", "Trace"]
