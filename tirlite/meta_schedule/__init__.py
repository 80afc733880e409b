"""Tuning: target-derived schedules, a measured search, a database (TVM's MetaSchedule names).

>>> from tirlite import meta_schedule as ms
"""

from . import builder, cost_model, database, runner, tir_integration, tune
from .builder import BuilderInput, BuilderResult, LocalBuilder
from .ray_backend import RayBuilder, RayRunner
from .database import JSONDatabase, MemoryDatabase, TuningRecord, Workload
from .default_schedule import apply_default_schedule, default_schedule
from .runner import LocalRunner, Reference, RunnerInput, RunnerResult
from .space import ScheduleRemark
from .target_info import TargetInfo
from .tune import WrongCandidateWarning, tune_tir

__all__ = ["BuilderInput", "BuilderResult", "JSONDatabase", "LocalBuilder", "LocalRunner",
           "MemoryDatabase", "RayBuilder", "RayRunner", "Reference", "RunnerInput",
           "RunnerResult", "ScheduleRemark", "TargetInfo", "TuningRecord", "Workload",
           "WrongCandidateWarning", "apply_default_schedule", "builder", "cost_model",
           "database", "default_schedule", "runner", "tir_integration", "tune", "tune_tir"]
