"""Runners: check each built candidate against the reference, then time it, alone on pinned cores.

``LocalRunner`` measures in one persistent child process pinned to
``num_threads`` cores of this machine (the last ones), started on first use
and restarted after a crash or a time-out. For each candidate it:

1. loads the candidate from its bytes (``load_candidate``);
2. runs it once on copies of the reference inputs and compares every output
   with the expected one (NaN equal to NaN): a difference is status
   ``"wrong"`` with the largest error, and the time does not count;
3. warms up, then times ``repeat`` rounds of ``number`` calls each, ``number``
   chosen so that a round lasts at least ``min_repeat_ms``; ``run_secs`` are
   the rounds' seconds per call. A candidate whose checking call already took
   longer than its input's ``cutoff_secs`` (the tuner passes a multiple of
   the best time so far) is not timed further: ``run_secs`` is that one call.
   A slow candidate cannot become the best, and timing it properly cost most
   of a 1024^3 matmul's tuning time (0.8 s a call for a tile with a guard).

The reference (inputs and expected outputs, possibly megabytes) goes to the
child once per workload, not once per candidate. A candidate that kills the
child is ``"crash"``; one that runs past ``timeout_sec`` is ``"timeout"``;
either costs that candidate only.
"""

from __future__ import annotations

import math
import multiprocessing
import os
import tempfile
import time
from typing import Any

import attrs
import numpy as np


@attrs.frozen(eq=False)
class Reference:
    """What every candidate of one workload must compute (see ``reference.make_reference``)."""

    inputs: list            # every argument in call order (outputs zeroed)
    output_indices: list    # which arguments are outputs
    expected: list          # the expected outputs, in ``output_indices`` order
    rtol: float = 0.0
    atol: float = 0.0
    key: str = attrs.field(factory=lambda: os.urandom(8).hex())

    @property
    def args_info(self) -> list:
        """``[dtype, shape]`` of every argument, as records store it."""
        return [[str(a.dtype), list(a.shape)] for a in self.inputs]


@attrs.frozen
class RunnerInput:
    """A built candidate to measure."""

    artifact: bytes
    target: Any = "llvm"
    args_info: list | None = None
    cutoff_secs: float | None = None  # slower than this on the checking call: not timed further


@attrs.frozen
class RunnerResult:
    """``status`` is ``"ok"``, ``"wrong"``, ``"error"``, ``"crash"`` or ``"timeout"``."""

    run_secs: list | None
    error_msg: str | None
    status: str


def load_candidate(data: bytes) -> Any:
    """The ``codegen.Module`` of a builder's bytes: an artifact of
    ``codegen.build_tuning_artifact``, or a shared library (a ``build_func``'s module)."""
    import codegen

    if not data.startswith(b"\x7fELF"):
        return codegen.load_artifact(data)
    with tempfile.TemporaryDirectory(prefix="tirlite-run-") as tmp:
        path = os.path.join(tmp, "candidate.so")
        with open(path, "wb") as f:
            f.write(data)
        return codegen.load_module(path)  # dlopen keeps its mapping after the file is gone


def measure_one(module_bytes: bytes, ref: Reference, number: int | None, repeat: int,
                min_repeat_ms: float, warmup: int, cutoff_secs: float | None = None
                ) -> RunnerResult:
    """Load, check and time one candidate (in the measuring process)."""
    try:
        module = load_candidate(module_bytes)
    except Exception as err:  # noqa: BLE001 (a bad artifact is this candidate's error)
        return RunnerResult(None, f"load failed: {type(err).__name__}: {err}", "error")
    args = [a.copy() for a in ref.inputs]
    try:
        start = time.perf_counter()
        module(*args)
        checking = time.perf_counter() - start
    except Exception as err:  # noqa: BLE001
        return RunnerResult(None, f"{type(err).__name__}: {err}", "error")
    wrong = _compare(args, ref)
    if wrong is not None:
        return RunnerResult(None, wrong, "wrong")
    if cutoff_secs is not None and checking > cutoff_secs:
        return RunnerResult([checking], None, "ok")
    return RunnerResult(_time_rounds(module, args, number, repeat, min_repeat_ms, warmup),
                        None, "ok")


def _time_rounds(module: Any, args: list, number: int | None, repeat: int,
                 min_repeat_ms: float, warmup: int) -> list:
    """Seconds per call of ``repeat`` rounds of ``number`` calls (chosen if None)."""
    for _ in range(warmup):
        module(*args)
    if number is None:
        start = time.perf_counter()
        module(*args)
        once = max(time.perf_counter() - start, 1e-7)
        number = max(1, math.ceil(min_repeat_ms / 1e3 / once))
    rounds = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            module(*args)
        rounds.append((time.perf_counter() - start) / number)
    return rounds


def _compare(args: list, ref: Reference) -> str | None:
    for k, want in zip(ref.output_indices, ref.expected):
        got = args[k]
        if got.dtype.kind == "f":
            ok = np.allclose(got, want, rtol=ref.rtol, atol=ref.atol, equal_nan=True)
        else:
            ok = np.array_equal(got, want)
        if not ok:
            diff = np.abs(got.astype(np.float64) - want.astype(np.float64))
            return f"output {k} differs: max error {np.nanmax(diff):.3g}"
    return None


def _child(conn: Any, cpus: list[int], threads: int) -> None:
    """The measuring process: pinned, one candidate at a time, references cached by key."""
    for var in ("TIRLITE_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ[var] = str(threads)
    if cpus and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, cpus)
    refs: dict[str, Reference] = {}
    while True:
        try:
            msg = conn.recv()
        except EOFError:
            return
        if msg[0] == "ref":
            refs[msg[1].key] = msg[1]
            conn.send(("ok", len(refs)))
        elif msg[0] == "run":
            _, data, key, opts = msg
            conn.send(("result", measure_one(data, refs[key], **opts)))
        else:
            return


class LocalRunner:
    """Measures candidates in an isolated child process pinned to ``num_threads`` cores."""

    def __init__(self, timeout_sec: float = 10.0, number: int | None = None, repeat: int = 5,
                 min_repeat_ms: float = 20.0, warmup: int = 1, num_threads: int = 1,
                 cpus: list[int] | None = None):
        self.timeout_sec, self.repeat, self.number = timeout_sec, repeat, number
        self.min_repeat_ms, self.warmup, self.num_threads = min_repeat_ms, warmup, num_threads
        available = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") \
            else list(range(os.cpu_count() or 1))
        self.cpus = cpus if cpus is not None else available[-num_threads:]
        self._proc: Any = None
        self._conn: Any = None
        self._sent: set[str] = set()
        self.references_sent = 0  # how many references crossed to a child (for tests)

    def _start(self) -> None:
        ctx = multiprocessing.get_context("spawn")
        parent, child = ctx.Pipe()
        self._proc = ctx.Process(target=_child, args=(child, self.cpus, self.num_threads),
                                 daemon=True)
        self._proc.start()
        child.close()
        self._conn, self._sent = parent, set()

    def _stop(self) -> None:
        if self._proc is not None:
            self._proc.kill()
            self._proc.join()
        self._proc = self._conn = None

    def _ask(self, msg: tuple, timeout: float) -> Any:
        """Send ``msg`` and wait for the reply; None if the child died or timed out."""
        if self._proc is None:
            self._start()
        try:
            self._conn.send(msg)
            if not self._conn.poll(timeout):
                self._stop()
                return "timeout"
            return self._conn.recv()
        except (EOFError, BrokenPipeError, ConnectionResetError, OSError):
            self._stop()
            return "crash"

    def run(self, inputs: list[RunnerInput], reference: Reference) -> list[RunnerResult]:
        """One result per input, in order, measured one after another."""
        return [self._run_one(inp, reference) for inp in inputs]

    def _run_one(self, inp: RunnerInput, ref: Reference) -> RunnerResult:
        if self._proc is None or ref.key not in self._sent:
            reply = self._ask(("ref", ref), 60.0)
            if not isinstance(reply, tuple):
                return RunnerResult(None, f"the measuring process failed ({reply})", "error")
            self._sent.add(ref.key)
            self.references_sent += 1
        opts = {"number": self.number, "repeat": self.repeat,
                "min_repeat_ms": self.min_repeat_ms, "warmup": self.warmup,
                "cutoff_secs": inp.cutoff_secs}
        reply = self._ask(("run", inp.artifact, ref.key, opts), self.timeout_sec)
        if reply == "timeout":
            return RunnerResult(None, f"ran past the time-out of {self.timeout_sec} s",
                                "timeout")
        if reply == "crash":
            return RunnerResult(None, "the candidate crashed the measuring process", "crash")
        return reply[1]

    def shutdown(self) -> None:
        """Stop the measuring process."""
        if self._conn is not None:
            try:
                self._conn.send(("stop",))
            except OSError:
                pass
        self._stop()

    def __del__(self) -> None:
        try:
            self.shutdown()
        except Exception:  # noqa: BLE001
            pass
