"""Running many seeds: in worker processes, so that a crash or a hang is one finding.

Each worker (a spawned process: LLVM's JIT state is not meant to be forked) receives one
seed at a time over a pipe and sends back its ``Outcome``. A worker that dies while
running a seed (a segfault in compiled code, say) is reported as a crash of that seed,
one that exceeds the per-case timeout is killed and reported as a hang; either way a
fresh worker takes its place. Workers are also replaced every ``RECYCLE`` cases, which
bounds the memory that JIT-compiled modules hold.
"""

from __future__ import annotations

import itertools
import multiprocessing
import time
from collections.abc import Iterable, Iterator
from multiprocessing.connection import wait

import numpy as np

from .check import Outcome, check

RECYCLE = 200  # cases per worker process before a fresh one


def _serve(conn) -> None:
    """A worker's loop: seed in, outcome out, until it receives None."""
    np.seterr(all="ignore")
    while True:
        seed = conn.recv()
        if seed is None:
            return
        conn.send(check(seed))


class _Worker:
    """One process and the case it is running."""

    def __init__(self, ctx):
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_serve, args=(child,), daemon=True)
        self.proc.start()
        child.close()
        self.seed: int | None = None
        self.started = 0.0
        self.done = 0

    def give(self, seed: int) -> None:
        self.seed, self.started = seed, time.monotonic()
        self.conn.send(seed)

    def stop(self) -> None:
        try:
            self.conn.send(None)
        except OSError:
            pass
        self.proc.join(5)
        if self.proc.is_alive():
            self.proc.kill()
            self.proc.join()


def run_in_process(seeds: Iterable[int], deadline: float) -> Iterator[Outcome]:
    """Check ``seeds`` in this process (no protection against crashes) until ``deadline``."""
    with np.errstate(all="ignore"):
        for seed in seeds:
            if time.monotonic() >= deadline:
                return
            yield check(seed)


def run_in_workers(seeds: Iterable[int], jobs: int, deadline: float,
                   timeout: float) -> Iterator[Outcome]:
    """Check ``seeds`` on ``jobs`` worker processes until ``deadline``; yields outcomes as
    they finish (not in seed order). Cases under way at the deadline are finished."""
    ctx = multiprocessing.get_context("spawn")
    pending = iter(seeds)
    workers = [_Worker(ctx) for _ in range(jobs)]
    try:
        for w in workers:
            _feed(w, pending, deadline)
        while any(w.seed is not None for w in workers):
            busy = [w for w in workers if w.seed is not None]
            ready = wait([w.conn for w in busy], timeout=1.0)
            for k, w in enumerate(workers):
                outcome = _collect(w, ready, timeout)
                if outcome is None:
                    continue
                yield outcome
                if outcome.kind in ("crash", "hang") or w.done >= RECYCLE:
                    w.stop()
                    workers[k] = w = _Worker(ctx)
                _feed(w, pending, deadline)
    finally:
        for w in workers:
            w.stop()


def _feed(w: _Worker, pending: Iterator[int], deadline: float) -> None:
    if time.monotonic() >= deadline:
        return
    seed = next(pending, None)
    if seed is not None:
        w.give(seed)


def _collect(w: _Worker, ready: list, timeout: float) -> Outcome | None:
    """The outcome of ``w``'s case if it has one: finished, crashed, or hung."""
    if w.seed is None:
        return None
    seed, elapsed = w.seed, time.monotonic() - w.started
    if w.conn in ready:
        try:
            outcome = w.conn.recv()
        except (EOFError, OSError):
            w.proc.join(1)
            outcome = Outcome(seed, "crash", f"the worker process died (exit code "
                              f"{w.proc.exitcode}) while running this program",
                              seconds=elapsed)
    elif elapsed > timeout:
        w.proc.kill()
        outcome = Outcome(seed, "hang", f"no result after {timeout:.0f} s", seconds=elapsed)
    else:
        return None
    w.seed = None
    w.done += 1
    return outcome


def seeds_from(first: int, count: int | None) -> Iterable[int]:
    """``count`` seeds from ``first`` (endless if count is None)."""
    return itertools.count(first) if count is None else range(first, first + count)
