"""``build``: TIR to a runnable ``Module``, through the pass pipeline and LLVM.

The steps, in order::

    tir.verify_well_formed  ->  set attr "target"
      ->  default_pipeline() under the current PassContext
      -> CodeGenLLVM (llvmlite.ir)  ->  parse + verify  ->  LLVM O3 for the target
      -> MCJIT (host targets)  ->  Module

A module built once is reused when the same IR (``structural_equal``) is
built again for the same target under the same config (a small cache); with
the config ``codegen.disk_cache`` on, also by later processes (disk_cache.py).
"""

from __future__ import annotations

import collections
import threading
import types
from collections.abc import Mapping
from typing import Any

import transform
from target.target import Target
from tir.function import IRModule, PrimFunc
from tir.structural import structural_digest, structural_equal
from tir.verify import verify_well_formed
from transform import PassContext

from .runtime import disk_cache

#: The target string that selects the reference interpreter backend.
INTERPRETER = "interp"

#: How many built modules the cache keeps.
CACHE_SIZE = 64

#: The config ``build_for_tuning`` adds to the current ``PassContext``'s: no bounds checks,
#: at build time or at run time (see ``build_for_tuning`` for why that is safe for timing).
TUNING_BUILD_CONFIG: Mapping[str, Any] = types.MappingProxyType(
    {"tir.instrument_bound_checkers": False})


def default_pipeline() -> list:
    """The passes ``build`` runs before code generation, in order."""
    return [
        # Scheduled stages (tir.Block) -> plain loops; functions without blocks pass untouched
        # (transform/lower_blocks/: a reduction's init -> `if k == 0: init`; buffers a block
        # allocates -> placed at the lowest loop holding their uses and shrunk to the tile
        # used there; blocks -> their bodies, the predicate as `if likely(...)`).
        *transform.lower_blocks.lower_blocks_passes(likely_predicate=True),
        # An access out of bounds whenever the function runs -> ValueError naming it
        # (tir.instrument_bound_checkers; before Simplify: the index as the user wrote it).
        transform.RejectOutOfBoundsAccesses(),
        # Accesses of vectorized loops -> one assert before the loop, naming them as written.
        transform.HoistVectorBoundChecks(),
        # Loops around a likely guard (a split that does not divide) -> a guard-free middle
        # loop plus guarded prologue/epilogue; likely(c) -> c (config tir.LoopPartition).
        transform.LoopPartition(partition_const_loop=True),
        # Fold constants and normalize index arithmetic: clean affine loops and indices.
        transform.Simplify(),
        # Parallel loops whose iterations share memory -> a parallel reduction (partial
        # results per chunk, folded in order), else a serial loop; a remark says which.
        transform.LegalizeParallelLoops(),
        # A vectorized loop over columns holding a serial loop over rows -> the row loop
        # outside (its vectors then read each row contiguously), when independent.
        transform.InterchangeVectorLoops(),
        # uint8((77 * int32(r) + ...) >> 8) in vectorized loops -> the same in uint16 (the
        # narrowest type the analyzer proves exact): half the registers.
        transform.NarrowIntegerArithmetic(),
        # while I[0] < n and keep(I[0]): I[0] += 1 -> a vectorized first match (when exact;
        # VectorizeReductions then vectorizes it with an early exit; tir.vectorize.while_search).
        transform.VectorizeWhileSearch(),
        # B[i] = B[i - 1] OP f(i) in vectorized loops -> in-register scans, a carried total.
        transform.VectorizeScans(),
        # acc[c] = acc[c] OP f(i) in vectorized loops -> vector accumulators + one reduction.
        transform.VectorizeReductions(),
        # A[i * s] in vectorized loops -> if s == 1: contiguous copy of the loop, else: as is.
        transform.VersionSymbolicStrides(),
        # Vectorized loops -> serial loop of register-wide vectors + a predicated tail.
        transform.StripMineVectorLoops(),
        # ifs on a vectorized var -> predicated stores, masked loads and Selects.
        transform.IfConvertVectorLoops(),
        # ForKind.VECTORIZED loops -> Ramp/Broadcast vector code (serial when
        # tir.disable_vectorize is set: the pass then runs VectorizeSkipper). Beyond
        # TVM, an index in any dimension may widen and if_then_else on the var masks its
        # loads (padded reads), unless config tir.vectorize.any_dim_access says False.
        transform.VectorizeLoop(any_dim_access=True),
        # ForKind.UNROLLED loops (and small loops, if tir.UnrollLoop asks) -> straight-line code.
        transform.UnrollLoop(),
        # float32 exp/log/sin/pow/... calls -> range reduction + polynomial TIR (tir.vector_math).
        transform.LowerVectorMath(),
        # Fold what vectorizing and unrolling exposed (constant ramp bases, x * 1, ...).
        transform.Simplify(),
        # Strided loads summed into an accumulator only read summed over its lanes (a
        # vectorized reduction's) -> contiguous loads, the terms in another lane order.
        transform.ContiguousAccumulation(),
        # uint8 x int8 products summed into such an accumulator -> vpdpbusd, 4 products per
        # int32 lane, on AVX512-VNNI/AVX-VNNI targets (config tir.vectorize.dot_instructions).
        transform.ByteDotAccumulation(),
        # Strided accesses that interleave (re/im, RGB) -> one contiguous access + Shuffles.
        transform.MergeInterleavedAccesses(),
        # Drop the empty loops, Evaluate(0)s and no-op branches left behind.
        transform.RemoveNoOp(),
        # Assert in bounds each access not proven so (tir.instrument_bound_checkers).
        transform.InstrumentBoundCheckers(),
    ]


def lower(mod: IRModule | PrimFunc, target: Target | str = "llvm") -> IRModule:
    """Verify ``mod`` (``tir.verify_well_formed``), then run ``default_pipeline`` on it."""
    mod = _as_module(mod)
    verify_well_formed(mod)
    target = Target(target)
    tagged = IRModule({name: f.with_attr("target", str(target)) for name, f in mod.items()},
                      mod.attrs)
    return transform.Sequential(default_pipeline(), name="codegen.build")(tagged)


def build(mod_or_func: IRModule | PrimFunc, target: Target | str = "llvm") -> Any:
    """Compile TIR to native code for ``target``.

    Args:
        mod_or_func: an ``IRModule`` or a single ``PrimFunc`` (named ``"main"``).
        target: a target string such as ``"llvm"`` or ``"llvm -mcpu=skylake"``,
            or a ``Target``; ``"interp"`` runs the same pipeline and then the
            NumPy reference interpreter instead of LLVM.

    Returns:
        A ``codegen.Module``: ``mod["main"](*arrays)`` runs the code;
        ``.remarks`` holds what the pipeline's passes reported (the
        vectorizer's ``VectorizeRemark`` per vectorized loop).

    Raises:
        TypeError: ``mod_or_func`` is neither an IRModule nor a PrimFunc.
        ValueError: a bad target string, or a program the pipeline rejects;
            ``tir.verify.WellFormedError`` (a ValueError) names the function and
            statement of IR that ``tir.verify_well_formed`` rejects.
    """
    mod = _as_module(mod_or_func)
    # Passes assume well-formed IR: Simplify would substitute a var bound twice
    # everywhere. Checked before the cache, whose structural match would not notice.
    verify_well_formed(mod)
    if isinstance(target, str) and target.strip() == INTERPRETER:
        from .interp.backend import build_interpreter

        lowered, remarks = _lower_with_remarks(mod, "llvm")
        result = build_interpreter(lowered)
        result.remarks = remarks
        return result
    target = Target(target)
    ctx = PassContext.current()
    # Names are part of the key: structural equality ignores them, but the
    # module's error messages and get_source("tir") quote them (loop vars too).
    key = (str(target), tuple(sorted((k, repr(v)) for k, v in ctx.config.items())),
           ctx.opt_level, tuple(sorted(ctx.disabled_pass)), tuple(sorted(ctx.required_pass)),
           _names(mod))
    # Instruments watch the passes run: a build under them always runs them.
    cached = None if ctx.instruments else _CACHE.find(mod, key)
    disk = None
    if cached is None:
        disk = _disk_slot(mod, target, ctx)  # codegen.disk_cache, when enabled
        cached = _load_from_disk(disk, target)
        if cached is not None:
            _CACHE.add(mod, key, cached)
    if cached is not None:
        transform.remarks.deliver(cached.remarks)  # listeners hear them as if it had run
        return cached
    lowered, remarks = _lower_with_remarks(mod, target)
    result = _compile(lowered, target, ctx, remarks, disk)
    result.remarks = remarks
    _CACHE.add(mod, key, result)
    return result


def build_for_tuning(mod_or_func: IRModule | PrimFunc, target: Target | str = "llvm") -> Any:
    """``build`` under ``TUNING_BUILD_CONFIG``: the fastest build computing the same thing.

    For a tuner timing thousands of scheduled candidates. The current
    ``PassContext`` still applies (its other config keys, opt level, passes
    and instruments, which are entered again for this build); only the bounds
    checks are dropped, all three passes of config ``tir.instrument_bound_checkers``:

    - ``RejectOutOfBoundsAccesses``: a ``ValueError`` at build time for an
      access out of bounds whenever the function runs;
    - ``HoistVectorBoundChecks`` and ``InstrumentBoundCheckers``: an assert
      before each access not proven in bounds, raising ``RuntimeError`` at run time.

    They are about a tenth of a scheduled kernel's build (benchmarks/bench_build_time.py)
    and, for the static shapes a tuner works on, usually add no code: schedule
    primitives keep accesses inside the buffers, the checkers prove it, and
    both builds give the same machine code. LLVM's pipeline is not lightened:
    a candidate is timed as ``build`` compiles it. What a candidate computes is not
    checked here: the tuner (tirlite.meta_schedule) runs every candidate in a
    child process on random inputs and compares its outputs with those of the
    unscheduled function (built with ``build``, checks on) before its time
    counts. Without checks, a wrong schedule that indexes out of bounds can
    read garbage (its outputs then differ: rejected), write outside its arrays
    or crash the child (a lost candidate); a stray access that happens to
    change nothing the comparison sees goes unnoticed, so the winning schedule
    must be built again with ``build``, whose checks then guard every call the
    user makes (and reject it at build time if an access is always out of
    bounds). Never hand a module built here to users.
    """
    ctx = PassContext.current()
    config = {**ctx.config, **TUNING_BUILD_CONFIG}
    with PassContext(opt_level=ctx.opt_level, required_pass=ctx.required_pass,
                     disabled_pass=ctx.disabled_pass, instruments=ctx.instruments,
                     config=config):
        return build(mod_or_func, target)


def build_tuning_artifact(mod_or_func: IRModule | PrimFunc, target: Target | str = "llvm"
                          ) -> bytes:
    """``build_for_tuning``'s code as bytes, for ``load_artifact`` in another process.

    A tuner builds candidates in worker processes and times them in another:
    this compiles to object code once, with neither the JIT engine nor a
    linker that ``build_for_tuning`` followed by ``Module.export_library``
    would add (together about 40% of that path; benchmarks/bench_build_time.py).
    The bytes hold the object code, the functions' signatures and assertion
    messages, behind a checksum; no sources and no remarks. The same warnings
    as ``build_for_tuning``'s apply: never hand the loaded module to users.

    >>> data = codegen.build_tuning_artifact(func)           # doctest: +SKIP
    >>> codegen.load_artifact(data)["main"](a, b)             # doctest: +SKIP
    """
    mod = _as_module(mod_or_func)
    verify_well_formed(mod)
    target = Target(target)
    ctx = PassContext.current()
    with PassContext(opt_level=ctx.opt_level, required_pass=ctx.required_pass,
                     disabled_pass=ctx.disabled_pass, instruments=ctx.instruments,
                     config={**ctx.config, **TUNING_BUILD_CONFIG}) as tuning:
        lowered = lower(mod, target)
        llvm_module, symbols, messages = _optimized_llvm(lowered, target, tuning)
        with tuning.phase("llvm.codegen"):
            from .runtime import cached_module

            return cached_module.to_bytes(target, dict(lowered.items()), symbols, messages,
                                          llvm_module)


def load_artifact(data: bytes) -> Any:
    """The runnable ``Module`` of bytes from ``build_tuning_artifact``.

    Raises:
        ValueError: ``data`` is not such an artifact (truncated, altered, another
            format), or its code calls an external function this process lacks.
    """
    from .runtime import cached_module

    return cached_module.from_bytes(data)


def _disk_slot(mod: IRModule, target: Target, ctx: PassContext) -> tuple | None:
    """``(cache, key)`` where the disk cache keeps this build, or None when it is off."""
    cache = disk_cache.open_cache(ctx, target)
    return None if cache is None else (cache, disk_cache.entry_key(mod, target, ctx))


def _load_from_disk(disk: tuple | None, target: Target) -> Any:
    if disk is None:
        return None
    from .runtime import cached_module

    return cached_module.load(*disk, target)


def _lower_with_remarks(mod: IRModule, target: Target | str) -> tuple[IRModule, tuple]:
    """``lower(mod, target)`` and the remarks its passes emitted (outer scopes hear them too)."""
    with transform.collect_remarks() as remarks:
        lowered = lower(mod, target)
    return lowered, tuple(remarks)


def _names(mod: IRModule) -> tuple:
    return tuple((name, structural_digest(f, with_names=True)) for name, f in mod.items())


def _as_module(mod: Any) -> IRModule:
    if isinstance(mod, PrimFunc):
        return IRModule.from_expr(mod)
    if isinstance(mod, IRModule):
        return mod
    raise TypeError(f"build: expected an IRModule or a PrimFunc, got {type(mod).__name__}")


def _compile(mod: IRModule, target: Target, ctx: PassContext, remarks: tuple,
             disk: tuple | None) -> Any:
    """LLVM IR, optimized, then machine code: JIT, or through the disk cache ``disk``."""
    from .runtime.module import jit_module

    llvm_module, symbols, messages = _optimized_llvm(mod, target, ctx)
    with ctx.phase("llvm.codegen"):
        if disk is not None:
            from .runtime import cached_module

            stored = cached_module.store(*disk, target, dict(mod.items()), symbols, messages,
                                         llvm_module, remarks)
            if stored is not None:
                return stored
        return jit_module(target, dict(mod.items()), symbols, messages, llvm_module,
                          str(llvm_module))


def _optimized_llvm(mod: IRModule, target: Target, ctx: PassContext) -> tuple:
    """``(LLVM module after O3, symbols by function name, assertion messages)`` of ``mod``."""
    from . import machine
    from .llvm import CodeGenLLVM
    from .runtime import metadata

    with ctx.phase("codegen.tir_to_llvm"):  # instruments time these like passes
        cg = CodeGenLLVM(target, fast_math=ctx.config.get("codegen.llvm.fast_math"),
                         noalias=ctx.config.get("tir.noalias"),
                         fp_contract=ctx.config.get("codegen.llvm.fp_contract"))
        symbols, described = {}, {}
        for name, func in mod.items():
            symbols[name] = cg.add_function(name, func)
            described[name] = metadata.describe(func, symbols[name])
        cg.add_exported_string(metadata.METADATA_SYMBOL,
                               # a library records the CPU features its code uses, so
                               # loading it on a CPU without them fails cleanly
                               metadata.dumps(str(target.resolved()), described, cg.messages))
        text = str(cg.module)
    with ctx.phase("llvm.parse_verify"):
        llvm_module = machine.parse(text)
    opt_level = target.opt_level
    if opt_level is None:
        opt_level = ctx.config.get("codegen.llvm.opt_level")
    with ctx.phase("llvm.optimize"):
        machine.optimize(llvm_module, target, opt_level)
    return llvm_module, symbols, cg.messages


class _BuildCache:
    """Recently built modules, keyed by IR structure, target and config.

    The key already holds each function's ``structural_digest`` with names
    (``_names``); ``structural_equal`` confirms a hit.
    """

    def __init__(self, size: int):
        self.size = size
        self.entries: collections.OrderedDict = collections.OrderedDict()
        self.lock = threading.Lock()

    def find(self, mod: IRModule, key: tuple) -> Any:
        with self.lock:
            for stored, result in self.entries.get(key, ()):
                if _same_functions(stored, mod):
                    self.entries.move_to_end(key)
                    return result
        return None

    def add(self, mod: IRModule, key: tuple, result: Any) -> None:
        with self.lock:
            self.entries.setdefault(key, []).append((IRModule(dict(mod.items())), result))
            self.entries.move_to_end(key)
            while len(self.entries) > self.size:
                self.entries.popitem(last=False)

    def clear(self) -> None:
        with self.lock:
            self.entries.clear()


def _same_functions(a: IRModule, b: IRModule) -> bool:
    if list(a.functions) != list(b.functions):
        return False
    return all(structural_equal(a[n], b[n]) for n in a.functions)


_CACHE = _BuildCache(CACHE_SIZE)


def clear_cache() -> None:
    """Forget every built module (the next ``build`` compiles again)."""
    _CACHE.clear()
