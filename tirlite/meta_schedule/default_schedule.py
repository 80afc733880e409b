"""``apply_default_schedule``: a rule-based schedule for every block, sized for the target.

TVM's DLight in spirit, for CPUs: the rules of ``space`` run with every choice
at its target-derived default (``Sampler("default")``). The remarks of blocks
the rules leave as written go to the listeners of ``transform.collect_remarks``
and the entered ``PassContext``, as the vectorizer's do.

>>> from tirlite import meta_schedule as ms                  # doctest: +SKIP
>>> mod = ms.apply_default_schedule(te.create_prim_func([A, B, C]), target="llvm")
>>> codegen.build(mod)(a, b, c)                              # doctest: +SKIP
"""

from __future__ import annotations

from codegen import Target
from tir.function import IRModule, PrimFunc
from tir.schedule import Schedule
from transform.remarks import deliver

from .sampler import Sampler
from .space import apply_rules
from .target_info import TargetInfo


def apply_default_schedule(mod: IRModule | PrimFunc, target: Target | str = "llvm"
                           ) -> IRModule:
    """``mod`` with every function's recognized blocks scheduled for ``target``.

    Functions without blocks (written with the ir_builder) pass through
    unchanged. Returns a new ``IRModule``; ``mod`` is not modified.
    """
    sch = default_schedule(mod, target)
    return sch.mod if not isinstance(sch, IRModule) else sch


def default_schedule(mod: IRModule | PrimFunc, target: Target | str = "llvm"
                     ) -> Schedule | IRModule:
    """The ``tir.Schedule`` of the default rules (its trace replays them), per function.

    For a module of one scheduled function this is that function's schedule;
    for several, the scheduled ``IRModule``.
    """
    if isinstance(mod, PrimFunc):
        mod = IRModule.from_expr(mod)
    if not isinstance(mod, IRModule):
        raise TypeError(f"apply_default_schedule: expected an IRModule or PrimFunc, "
                        f"got {type(mod).__name__}")
    info = TargetInfo.from_target(target)
    functions = dict(mod.functions)
    schedules = {}
    for name, func in functions.items():
        if not _has_blocks(func):
            continue
        sch = Schedule(IRModule({name: func}), func_name=name)
        deliver(apply_rules(sch, info, Sampler("default")))
        schedules[name] = sch
    if len(schedules) == 1 and len(functions) == 1:
        return next(iter(schedules.values()))
    for name, sch in schedules.items():
        functions[name] = sch.func
    return IRModule(functions)


def _has_blocks(func: PrimFunc) -> bool:
    from tir.block import BlockRealize

    return isinstance(func.body, BlockRealize)
