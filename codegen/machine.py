"""LLVM target machines and the optimization pipeline (O3 with LLVM's vectorizers on).

LLVM is initialized once per process and a target machine is made once per
(target, role): creating them is a large part of compile latency otherwise.
The JIT takes ownership of the machine it is given, so JIT engines get a
fresh one each (``jit_target_machine``).
"""

from __future__ import annotations

import functools

import llvmlite.binding as llvm

from target import subtarget
from target.target import Target

from . import evex_workaround


@functools.cache
def _initialize(native_only: bool) -> None:
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    if not native_only:
        llvm.initialize_all_targets()
        llvm.initialize_all_asmprinters()


def _create(target: Target, jit: bool, opt: int) -> llvm.TargetMachine:
    _initialize(native_only=target.is_host)
    try:
        llvm_target = llvm.Target.from_triple(target.triple)
    except RuntimeError as err:
        raise ValueError(f"target {target}: LLVM does not know triple {target.triple!r}: {err}")
    subtarget.check(target)  # an unknown or wrong CPU would abort the process in LLVM
    return llvm_target.create_target_machine(
        cpu=target.mcpu, features=target.features, opt=opt, reloc="pic", codemodel="default",
        jit=jit,
    )


@functools.lru_cache(maxsize=32)
def target_machine(target: Target, opt: int = 3) -> llvm.TargetMachine:
    """A shared (never JIT-owned) machine for optimizing and emitting code for ``target``."""
    return _create(target, jit=False, opt=opt)


def jit_target_machine(target: Target, opt: int = 3) -> llvm.TargetMachine:
    """A new machine for one JIT engine, which takes ownership of it."""
    return _create(target, jit=True, opt=opt)


def optimize(module: llvm.ModuleRef, target: Target, opt_level: int) -> None:
    """Run LLVM's ``O<opt_level>`` pipeline in place, loop and SLP vectorizers on."""
    if opt_level == 0:
        return
    pto = llvm.create_pipeline_tuning_options(speed_level=opt_level)
    pto.loop_vectorization = opt_level >= 2
    pto.slp_vectorization = opt_level >= 2
    pto.loop_unrolling = True
    builder = llvm.create_pass_builder(target_machine(target), pto)
    builder.getModulePassManager().run(module, builder)


def machine_target(target: Target, llvm_ir: str) -> Target:
    """The target to generate machine code for from the optimized ``llvm_ir``.

    ``target`` itself, unless LLVM 22 would miscompile the code on an AVX-512
    CPU (see evex_workaround.py): then ``target`` without AVX512VL.
    """
    if not evex_workaround.may_be_miscompiled(target, llvm_ir):
        return target
    asm = target_machine(target).emit_assembly(parse(llvm_ir))
    if not evex_workaround.has_bad_mask_move(asm):
        return target
    return evex_workaround.without_avx512vl(target)


def parse(text: str) -> llvm.ModuleRef:
    """Parse and verify LLVM IR text (from ``str(llvmlite.ir.Module)``)."""
    module = llvm.parse_assembly(text)
    module.verify()
    return module
