"""Building and measuring on a Ray cluster: ``RayBuilder``, ``RayRunner`` (``tirlite[ray]``).

The same interfaces as ``LocalBuilder`` / ``LocalRunner``, spread over the
nodes of a cluster:

- builds are Ray tasks of one CPU each, anywhere in the cluster; a task runs
  ``builder.build_to_bytes`` and returns the library's bytes, so no shared
  file system is needed;
- a measurement is a Ray task that asks for *every* CPU of a node (the
  largest node's count), so nothing else runs on that node while it times;
  inside it the same pinned child process as ``LocalRunner`` checks and
  times the candidate. The reference (inputs, expected outputs) is put in the
  object store once per workload.

``address=None`` joins the cluster ``RAY_ADDRESS`` names, else starts a
local one on this machine (what the tests do). ``import ray`` happens only
here, so tirlite without Ray needs nothing.
"""

from __future__ import annotations

import os
from typing import Any, Callable

from .builder import BuilderInput, BuilderResult, build_to_bytes
from .runner import LocalRunner, Reference, RunnerInput, RunnerResult

_INSTALL_HINT = "the Ray builder and runner need Ray: pip install 'tirlite[ray]'"


def _ray() -> Any:
    try:
        import ray
    except ImportError as err:
        raise ImportError(_INSTALL_HINT) from err
    return ray


def connect(address: str | None = None, num_cpus: int | None = None) -> Any:
    """Join (or start) a Ray cluster once per process; returns the ``ray`` module."""
    ray = _ray()
    if not ray.is_initialized():
        address = address or os.environ.get("RAY_ADDRESS")
        if address:
            ray.init(address=address, ignore_reinit_error=True, log_to_driver=False)
        else:
            ray.init(num_cpus=num_cpus, include_dashboard=False, ignore_reinit_error=True,
                     log_to_driver=False)
    return ray


def _build_task(mod: Any, target: str, build_func: Callable | None) -> tuple:
    try:
        data, secs = build_to_bytes(mod, target, build_func)
        return data, None, secs
    except Exception as err:  # noqa: BLE001 (a refused candidate is its own result)
        return None, f"{type(err).__name__}: {err}", 0.0


def _measure_task(inputs: list, reference: Reference, opts: dict) -> list:
    runner = LocalRunner(**opts)
    try:
        return runner.run(inputs, reference)
    finally:
        runner.shutdown()


class RayBuilder:
    """Builds candidates as Ray tasks (one CPU each) across the cluster."""

    def __init__(self, address: str | None = None, timeout_sec: float = 60.0,
                 build_func: Callable | None = None, num_cpus: int | None = None):
        self.ray = connect(address, num_cpus)
        self.timeout_sec, self.build_func = timeout_sec, build_func
        self._task = self.ray.remote(num_cpus=1, max_retries=0)(_build_task)

    def build(self, inputs: list[BuilderInput]) -> list[BuilderResult]:
        """One result per input, in order; a task that dies or outlasts the time-out fails alone."""
        refs = [self._task.remote(i.mod, str(i.target), self.build_func) for i in inputs]
        out = []
        for ref in refs:
            try:
                data, err, secs = self.ray.get(ref, timeout=self.timeout_sec)
                out.append(BuilderResult(data, err, secs))
            except Exception as err:  # noqa: BLE001 (a worker crash or a time-out)
                self.ray.cancel(ref, force=True)
                out.append(BuilderResult(None, f"the build task failed: {type(err).__name__}"))
        return out

    def shutdown(self) -> None:
        """Nothing to stop (the cluster outlives the builder)."""


class RayRunner:
    """Measures candidates on the cluster's nodes, each measurement alone on its node."""

    def __init__(self, address: str | None = None, timeout_sec: float = 10.0,
                 num_cpus: int | None = None, **runner_opts: Any):
        self.ray = connect(address, num_cpus)
        node_cpus = max(int(n["Resources"].get("CPU", 1)) for n in self.ray.nodes()
                        if n.get("Alive"))
        self.opts = {"timeout_sec": timeout_sec, **runner_opts}
        self._task = self.ray.remote(num_cpus=node_cpus, max_retries=0)(_measure_task)
        self._refs: dict[str, Any] = {}

    def run(self, inputs: list[RunnerInput], reference: Reference) -> list[RunnerResult]:
        """One result per input, in order (one task per batch: candidates never overlap)."""
        if reference.key not in self._refs:
            self._refs[reference.key] = self.ray.put(reference)
        task = self._task.remote(list(inputs), self._refs[reference.key], self.opts)
        limit = 60.0 + len(inputs) * (self.opts["timeout_sec"] + 5.0)
        try:
            return self.ray.get(task, timeout=limit)
        except Exception as err:  # noqa: BLE001
            self.ray.cancel(task, force=True)
            return [RunnerResult(None, f"the measuring task failed: {type(err).__name__}",
                                 "error") for _ in inputs]

    def shutdown(self) -> None:
        """Drop the references kept in the object store."""
        self._refs.clear()
