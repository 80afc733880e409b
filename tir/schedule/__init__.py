"""Schedules: rewrite a function of blocks by named primitives (TVM's ``tir.schedule``).

``Schedule`` in ``schedule.py`` holds the state; each primitive is a pure
function ``PrimFunc -> PrimFunc`` in ``primitives/`` (one module per family);
``trace.py`` records the calls, writes them as JSON (values encoded by
``trace_json.py``) and replays them; ``sampling.py`` draws the random choices
a tuner makes; ``analysis.py`` derives what blocks read and write; ``tree.py``
finds and replaces statements.
"""

from .error import ScheduleError
from .index_map import IndexMap
from .schedule import Schedule
from .trace import BlockRV, ExprRV, Instruction, LoopRV, Trace

__all__ = ["BlockRV", "ExprRV", "IndexMap", "Instruction", "LoopRV", "Schedule",
           "ScheduleError", "Trace"]
