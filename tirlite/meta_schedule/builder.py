"""Builders: compile candidates in worker processes into loadable bytes (TVM's names).

``LocalBuilder`` builds a batch in parallel in a pool of worker processes
(one per core by default). By default a candidate becomes
``codegen.build_tuning_artifact``'s bytes (``codegen.build`` without run-time
bounds checks, compiled once to object code: no JIT engine, no linker, so a
candidate costs about 60% of a JIT build plus ``export_library``); with a
``build_func`` (``mod, target -> codegen.Module``), its module exported as a
shared library. Either way the result is bytes that any process or cluster
node loads (``runner.load_candidate``) without a shared file system.
A candidate whose build raises gets its error text; one that kills its worker
(an LLVM abort) or outlasts ``timeout_sec`` costs that candidate only: the
pool is restarted and the rest of the batch built again, one at a time.
"""

from __future__ import annotations

import concurrent.futures as cf
import multiprocessing
import os
import tempfile
import time
from typing import Any, Callable

import attrs

from codegen import Target


@attrs.frozen
class BuilderInput:
    """A candidate to build: a scheduled module and its target."""

    mod: Any
    target: Any = "llvm"


@attrs.frozen
class BuilderResult:
    """The shared library's bytes, or why there are none."""

    artifact: bytes | None
    error_msg: str | None
    build_secs: float = 0.0


def tuning_build(mod: Any, target: Any) -> Any:
    """A candidate's build: ``codegen.build_for_tuning`` (no run-time bounds checks).

    The checks guard against accesses no analysis proved in bounds; they are
    not needed to *time* a candidate, because the runner compares every
    candidate's outputs with the unscheduled function's before its time
    counts, and the schedule the user finally builds (``compile_tir`` then
    ``codegen.build``) keeps every check. Static-shape kernels, the tuner's
    usual case, have all accesses proven in bounds, so both builds are the
    same code.
    """
    import codegen

    return codegen.build_for_tuning(mod, target)


def build_to_bytes(mod: Any, target: str, build_func: Callable | None = None) -> tuple:
    """Build ``mod`` into loadable bytes: ``(bytes, seconds)`` (run in a worker)."""
    start = time.perf_counter()
    if build_func is None:
        import codegen

        return codegen.build_tuning_artifact(mod, target), time.perf_counter() - start
    module = build_func(mod, target)
    with tempfile.TemporaryDirectory(prefix="tirlite-build-") as tmp:
        path = os.path.join(tmp, "candidate.so")
        module.export_library(path)
        with open(path, "rb") as f:
            data = f.read()
    return data, time.perf_counter() - start


def _worker_init() -> None:
    # Builds are single-threaded; a worker never needs the parallel runtime's pool.
    os.environ["TIRLITE_NUM_THREADS"] = "1"


class LocalBuilder:
    """Builds candidates in parallel worker processes of this machine."""

    def __init__(self, max_workers: int | None = None, timeout_sec: float = 30.0,
                 build_func: Callable | None = None):
        self.max_workers = max_workers or os.cpu_count() or 1
        self.timeout_sec = timeout_sec
        self.build_func = build_func
        self._pool: cf.ProcessPoolExecutor | None = None

    def _executor(self) -> cf.ProcessPoolExecutor:
        if self._pool is None:
            ctx = multiprocessing.get_context("forkserver")
            self._pool = cf.ProcessPoolExecutor(self.max_workers, mp_context=ctx,
                                                initializer=_worker_init)
        return self._pool

    def _restart(self) -> None:
        pool, self._pool = self._pool, None
        if pool is not None:
            for proc in list(getattr(pool, "_processes", {}).values()):
                proc.kill()
            pool.shutdown(wait=False, cancel_futures=True)

    def build(self, inputs: list[BuilderInput]) -> list[BuilderResult]:
        """One result per input, in order."""
        results: list[BuilderResult | None] = [None] * len(inputs)
        futures = {k: self._submit(inp) for k, inp in enumerate(inputs)}
        retry = []
        for k, fut in futures.items():
            results[k] = self._collect(fut)
            if results[k] is None:
                retry.append(k)
        if retry:  # the pool died or hung: find the culprit by building the rest alone
            self._restart()
            for k in retry:
                results[k] = self._collect(self._submit(inputs[k]), alone=True)
                if results[k] is None:
                    self._restart()
                    results[k] = BuilderResult(None, "the build crashed or hung its worker "
                                                     f"(time-out {self.timeout_sec} s)")
        return results  # type: ignore[return-value]

    def _submit(self, inp: BuilderInput) -> cf.Future:
        return self._executor().submit(build_to_bytes, inp.mod, str(Target(inp.target)),
                                       self.build_func)

    def _collect(self, fut: cf.Future, alone: bool = False) -> BuilderResult | None:
        try:
            data, secs = fut.result(timeout=self.timeout_sec)
            return BuilderResult(data, None, secs)
        except (cf.process.BrokenProcessPool, cf.TimeoutError):
            return None
        except Exception as err:  # noqa: BLE001 (a refused candidate is its own result)
            return BuilderResult(None, f"{type(err).__name__}: {err}")

    def shutdown(self) -> None:
        """Stop the worker processes."""
        self._restart()

    def __del__(self) -> None:
        try:
            self.shutdown()
        except Exception:  # noqa: BLE001 (interpreter shutdown)
            pass
