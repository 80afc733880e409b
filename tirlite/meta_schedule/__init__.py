"""Tuning: target-derived schedules, a measured search, a database (TVM's MetaSchedule names).

>>> from tirlite import meta_schedule as ms
"""

from .default_schedule import apply_default_schedule, default_schedule
from .space import ScheduleRemark
from .target_info import TargetInfo

__all__ = ["ScheduleRemark", "TargetInfo", "apply_default_schedule", "default_schedule"]
