"""``compile_tir``: the schedule a database holds for a function (TVM's ``ms.tir_integration``).

>>> db = ms.tune_tir(func, target="llvm", work_dir="tune", max_trials_global=64)  # doctest: +SKIP
>>> sch = ms.tir_integration.compile_tir(db, func, target="llvm")                 # doctest: +SKIP
>>> kernel = codegen.build(sch.mod)                                               # doctest: +SKIP
"""

from __future__ import annotations

from typing import Any

from codegen import Target
from tir.function import IRModule, PrimFunc
from tir.schedule import Schedule, Trace

from .default_schedule import default_schedule


def compile_tir(database: Any, mod: IRModule | PrimFunc, target: Target | str = "llvm"
                ) -> Schedule:
    """The ``tir.Schedule`` of ``database``'s best record for ``mod`` on ``target``.

    The record is looked up by the function's structural hash and the target
    (the nearest compatible target when there is no exact one, see
    ``JSONDatabase.query_tuning_record``) and its trace replayed on ``mod``. With
    no record, the default schedule (``apply_default_schedule``).
    """
    if isinstance(mod, PrimFunc):
        mod = IRModule.from_expr(mod)
    record = database.query_tuning_record(mod, Target(target))
    if record is None:
        sch = default_schedule(mod, target)
        if isinstance(sch, IRModule):
            raise ValueError("compile_tir: schedules a module of one function")
        return sch
    sch = Schedule(mod)
    Trace.apply_json_to_schedule(record.trace, sch)
    return sch
