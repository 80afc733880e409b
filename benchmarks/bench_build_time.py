"""Time ``codegen.build`` of scheduled kernels, pass by pass: what a tuning candidate costs.

Run from the repository root::

    .venv/bin/python benchmarks/bench_build_time.py              # default and tuning builds
    .venv/bin/python benchmarks/bench_build_time.py --rounds 9 --profile matmul512

Kernels: bench_schedule.py's scheduled matmul (512^3 and 1024^3) and conv layer
(N=5, CI=CO=128, 100 x 80), single-threaded schedules, ``lanes`` from the host
target. Each is built once to warm the process up (LLVM initialised, imports
done), then ``--rounds`` times with the build cache cleared before each build
and a ``PassTimingInstrument`` recording every pass and build phase
(``codegen.tir_to_llvm``: LLVM IR emission; ``llvm.optimize``: O3;
``llvm.codegen``: MCJIT). The table shows the median of each, in ms, for the
default ``codegen.build`` and for ``codegen.build_for_tuning`` (when present).
``--profile KERNEL`` prints a cProfile of one more build of that kernel.

``--candidates N`` times instead what the tuner's builder does with N
candidates of each kernel's design space (the default schedule, then random
ones; the unscheduled te workloads of tirlite.meta_schedule.testing), one
at a time in this process: ``export``, the JIT build plus
``Module.export_library`` (the shared library a ``build_func`` gives), and
``artifact``, ``codegen.build_tuning_artifact`` (the builder's default). With
``--phases``, the median ms of each pass and build phase of the artifact builds follows
(median over the candidates of each row on its own, so the rows need not sum to the total).
"""

from __future__ import annotations

import os

os.environ.setdefault("TIRLITE_NUM_THREADS", "1")

import argparse
import cProfile
import json
import pstats
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_schedule import te_conv, te_matmul

import codegen
import tir
import transform

KERNELS = {
    "matmul512": (te_matmul, dict(M=512)),
    "matmul1024": (te_matmul, dict(M=1024)),
    "conv": (te_conv, dict(N=5, CI=128, CO=128, W=100, H=80)),
}


def _builders() -> dict[str, tuple[Callable, dict]]:
    """Build function and PassContext config of each way to build."""
    builders = {"default": (codegen.build, {}),
                "nochecks": (codegen.build, {"tir.instrument_bound_checkers": False})}
    if hasattr(codegen, "build_for_tuning"):
        builders["tuning"] = (codegen.build_for_tuning, {})
    if hasattr(codegen, "build_tuning_artifact"):
        builders["artifact"] = (codegen.build_tuning_artifact, {})
    return builders


class CpuTiming(transform.PassInstrument):
    """Wall and thread-CPU ms of every pass and build phase (CPU time: less noise on a
    shared machine, where the wall clock also counts waiting for a core)."""

    def __init__(self, clock: Callable[[], float]):
        self.clock = clock
        self.ms: dict[str, float] = {}
        self._starts: list[float] = []

    def run_before_pass(self, mod, info) -> None:
        self._starts.append(self.clock())

    def run_after_pass(self, mod, info) -> None:
        self._record(info.name)

    def run_before_phase(self, name: str) -> None:
        self._starts.append(self.clock())

    def run_after_phase(self, name: str) -> None:
        self._record(name)

    def _record(self, name: str) -> None:
        ms = (self.clock() - self._starts.pop()) * 1e3
        self.ms[name] = self.ms.get(name, 0.0) + ms


def time_build(func, build: Callable, config: dict, rounds: int,
               clock: Callable[[], float]) -> list[dict]:
    """Per-pass and total ms by ``clock`` of ``rounds`` builds of ``func`` under ``config``
    (cache cleared before each)."""
    with transform.PassContext(config=config):
        build(func, "llvm")  # warm-up: LLVM initialised, lazy imports done
    out = []
    for _ in range(rounds):
        codegen.clear_cache()
        timing = CpuTiming(clock)
        start = clock()
        with transform.PassContext(config=config, instruments=[timing]):
            build(func, "llvm")
        total = clock() - start
        row = {name: ms for name, ms in timing.ms.items()
               if name != "codegen.build"}  # the Sequential holding the passes
        row["total"] = total * 1e3
        out.append(row)
    return out


def medians(rows: list[dict[str, float]]) -> dict[str, float]:
    return {name: statistics.median(r.get(name, 0.0) for r in rows) for name in rows[0]}


def render(results: dict[tuple[str, str], dict[str, float]]) -> str:
    """One column per (kernel, build), one row per pass, in pipeline order."""
    columns = list(results)
    names = list(dict.fromkeys(n for col in columns for n in results[col]))
    names.remove("total")
    names.append("total")
    width = max(len(n) for n in names)
    heads = [f"{k}/{b}" for k, b in columns]
    cw = max(12, *(len(h) for h in heads))
    lines = [f"{'ms (median)':<{width}}" + "".join(f"{h:>{cw + 2}}" for h in heads)]
    for name in names:
        cells = "".join(f"{results[col].get(name, 0.0):>{cw + 2}.1f}" for col in columns)
        lines.append(f"{name:<{width}}{cells}")
    return "\n".join(lines)


def profile(func, build: Callable, config: dict) -> None:
    codegen.clear_cache()
    prof = cProfile.Profile()
    with transform.PassContext(config=config):
        prof.enable()
        build(func, "llvm")
        prof.disable()
    pstats.Stats(prof).sort_stats("cumulative").print_stats(40)
    pstats.Stats(prof).sort_stats("tottime").print_stats(25)


def candidate_times(kernel: str, count: int, clock: Callable[[], float],
                    phases: list | None = None) -> dict[str, list]:
    """Per-candidate ms of the builder's two paths on ``count`` candidates of ``kernel``
    (and, into ``phases``, each artifact build's ms per pass and phase)."""
    import tempfile

    from tirlite.meta_schedule.search import SearchSpace
    from tirlite.meta_schedule.target_info import TargetInfo
    from tirlite.meta_schedule.testing import te_workload as W

    shape = KERNELS[kernel][1]
    mod = (W.matmul(shape["M"]) if kernel.startswith("matmul") else
           W.conv2d_nhwc_bias_relu(shape["N"], shape["H"], shape["W"], shape["CI"],
                                     shape["CO"]))
    space = SearchSpace(tir.IRModule.from_expr(mod), TargetInfo.from_target("llvm"))
    cands = [space.generate("default")]
    seed = 0
    while len(cands) < count:
        seed += 1
        cands.append(space.generate("random", seed=seed))
    cands = [c for c in cands if c is not None]
    codegen.build_tuning_artifact(cands[0].sch.mod)  # warm-up
    times: dict[str, list] = {"export": [], "artifact": []}
    with tempfile.TemporaryDirectory() as tmp:
        for cand in cands:
            codegen.clear_cache()
            start = clock()
            codegen.build_for_tuning(cand.sch.mod).export_library(f"{tmp}/c.so")
            times["export"].append((clock() - start) * 1e3)
            timing = CpuTiming(clock)
            start = clock()
            with transform.PassContext(instruments=[timing] if phases is not None else []):
                codegen.build_tuning_artifact(cand.sch.mod)
            times["artifact"].append((clock() - start) * 1e3)
            if phases is not None:
                phases.append({k: v for k, v in timing.ms.items() if k != "codegen.build"})
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--kernels", default=",".join(KERNELS))
    parser.add_argument("--builds", default="", help="default,tuning (all available if empty)")
    parser.add_argument("--profile", default="", help="cProfile one build of this kernel")
    parser.add_argument("--cpu", action="store_true",
                        help="thread CPU time instead of wall time (less noise when shared)")
    parser.add_argument("--json", default="", help="also write every build's times here")
    parser.add_argument("--candidates", type=int, default=0,
                        help="time N tuning candidates of each kernel instead (see above)")
    parser.add_argument("--phases", action="store_true",
                        help="with --candidates: also the median ms of each pass and phase")
    args = parser.parse_args()
    if args.candidates:
        clock = time.process_time if args.cpu else time.perf_counter
        for kernel in args.kernels.split(","):
            phases = [] if args.phases else None
            times = candidate_times(kernel, args.candidates, clock, phases)
            cells = ", ".join(f"{k} median {statistics.median(v):.1f} ms "
                              f"(min {min(v):.1f}, max {max(v):.1f})" for k, v in times.items())
            print(f"{kernel}, {len(times['artifact'])} candidates: {cells}")
            for name, ms in (medians(phases) if phases else {}).items():
                print(f"  {name:<44}{ms:8.1f}")
        return
    lanes = codegen.Target("llvm").vector_width_bits // 32
    builders = _builders()
    if args.builds:
        builders = {k: v for k, v in builders.items() if k in args.builds.split(",")}
    results, raw = {}, {}
    for kernel in args.kernels.split(","):
        make, shape = KERNELS[kernel]
        func = make(shape, lanes, False)
        for name, (build, config) in builders.items():
            clock = time.thread_time if args.cpu else time.perf_counter
            rows = time_build(func, build, config, args.rounds, clock)
            results[kernel, name] = medians(rows)
            raw[f"{kernel}/{name}"] = rows
            if args.profile == kernel:  # after time_build's warm-up: no imports in it
                print(f"=== cProfile: {kernel}, {name} build ===")
                profile(func, build, config)
    print(f"host CPU {codegen.Target('llvm').resolved().mcpu}, lanes {lanes}, "
          f"median of {args.rounds} builds, {'thread CPU' if args.cpu else 'wall'} time")
    print(render(results))
    if args.json:
        Path(args.json).write_text(json.dumps(raw, indent=1))


if __name__ == "__main__":
    main()
