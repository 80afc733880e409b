"""``tune_tir``: search a function's schedules, measure them, keep the results in a database.

The loop (TVM's ``ms.tune_tir``): the search proposes a batch of candidates;
the builder compiles them in parallel worker processes; the runner checks
each against the unscheduled function on random inputs, then times it alone
on one pinned core; every correct result is appended to the database (a
killed run loses at most the batch in flight and resumes from the database);
a candidate that computes something else is reported with its trace
(``WrongCandidateWarning``, and ``wrong_candidates.json`` in ``work_dir``)
and never stored. The run ends by timing its fastest few and the default
schedule again, side by side, as ``confirmed`` records (``_confirm``).
"""

from __future__ import annotations

import json
import os
import random
import sys
import time
import warnings
from typing import Any

import attrs
import numpy as np

from codegen import Target
from tir.function import IRModule, PrimFunc

from .builder import BuilderInput, LocalBuilder
from .cost_model import CostModel, default_cost_model
from .database import JSONDatabase, MemoryDatabase, TuningRecord, target_to_json
from .flops import estimate_flops
from .reference import make_reference
from .runner import LocalRunner, RunnerInput
from .search import Candidate, EvolutionarySearch, SearchSpace
from .target_info import TargetInfo

#: A candidate whose checking call is this many times slower than the best so far is not
#: timed further (see runner.py): it cannot win, and timing it dominated tuning time.
SLOW_CUTOFF = 4.0


#: The fastest candidates measured again at the end of a run, with the default schedule,
#: in this many interleaved rounds (see ``_confirm``).
CONFIRM_TOP = 4
CONFIRM_ROUNDS = 3


class WrongCandidateWarning(UserWarning):
    """A scheduled candidate computed something other than the unscheduled function (a bug)."""


def tune_tir(mod: IRModule | PrimFunc, target: Target | str = "llvm",
             work_dir: str | None = None, max_trials_global: int = 64, *,
             num_trials_per_iter: int = 16, seed: int | None = None,
             builder: Any = None, runner: Any = None, database: Any = None,
             cost_model: CostModel | None = None, progress: bool | None = None) -> Any:
    """Tune ``mod``'s function for ``target``; return the database of measured records.

    Args:
        work_dir: where the JSON database lives (created; a run resumes from it).
            None keeps the records in memory (``MemoryDatabase``).
        max_trials_global: candidates to measure in all, this run and earlier
            runs on the same database counted together.
        num_trials_per_iter: candidates per batch (built in parallel).
        seed: the search's seed (None: a random one, stored in each record).
        builder, runner: ``LocalBuilder()`` / ``LocalRunner()`` by default; the
            Ray ones (``RayBuilder``, ``RayRunner``) spread the work over a cluster.
        database: a database to use instead of the one in ``work_dir``.
        cost_model: ``default_cost_model(seed)`` by default (XGBoost if installed).
        progress: show a progress bar (default: when stderr is a terminal).
    """
    mod = as_module(mod)
    target = Target(target)
    seed = random.SystemRandom().getrandbits(31) if seed is None else int(seed)
    db = database if database is not None else (
        JSONDatabase(work_dir) if work_dir is not None else MemoryDatabase())
    workload = db.commit_workload(mod)
    info = TargetInfo.from_target(target)
    search = EvolutionarySearch(SearchSpace(mod, info), cost_model or default_cost_model(seed),
                                seed=seed)
    done = _resume(db, workload, target, search, info)
    if done >= max_trials_global:
        return db
    reference = make_reference(mod)
    flops = estimate_flops(next(iter(mod.functions.values())))
    builder = builder if builder is not None else LocalBuilder()
    runner = runner if runner is not None else LocalRunner()
    bar = _Progress(max_trials_global, done, flops, progress)
    try:
        while done < max_trials_global:
            batch = search.next_batch(min(num_trials_per_iter, max_trials_global - done))
            if not batch:
                break  # the space is used up
            best = min((secs for _, secs in search.measured.values()), default=None)
            cutoff = SLOW_CUTOFF * best if best is not None else None
            for cand, secs, build_secs in _measure(batch, target, builder, runner, reference,
                                                   work_dir, cutoff):
                search.notify(cand, secs)
                if secs is not None:
                    db.commit_tuning_record(_record(cand, workload, target, secs, build_secs,
                                                    reference, seed, flops, done))
                done += 1
                bar.update(secs)
        _confirm(search, target, builder, runner, reference, db, workload, seed, flops)
    finally:
        bar.close()
    return db


def _confirm(search: EvolutionarySearch, target: Target, builder: Any, runner: Any,
             reference: Any, db: Any, workload: Any, seed: int, flops: float) -> None:
    """Measure the fastest few and the default again, side by side; record what they gave.

    One measurement per candidate picks the best among near-equals by noise: on a
    shared 2-core machine a record timed 101 GFLOP/s once ran at 69-90 later,
    slower than the default schedule. Here the ``CONFIRM_TOP`` fastest and the
    default are timed in ``CONFIRM_ROUNDS`` interleaved rounds; each gets a
    ``confirmed`` record with every round's time, and ``compile_tir`` picks among
    confirmed records when there are any.
    """
    ranked = sorted(search.measured.values(), key=lambda cs: cs[1])[:CONFIRM_TOP]
    cands = [c for c, _ in ranked]
    default = search.space.generate("default")
    if default is not None and all(c.decisions != default.decisions for c in cands):
        cands.append(default)
    if len(cands) < 2:
        return  # nothing to choose between
    built = builder.build([BuilderInput(c.sch.mod, target) for c in cands])
    ready = [(c, b) for c, b in zip(cands, built) if b.artifact is not None]
    rounds: dict[int, list[float]] = {id(c): [] for c, _ in ready}
    for _ in range(CONFIRM_ROUNDS):
        results = runner.run([RunnerInput(b.artifact, target, reference.args_info)
                              for _, b in ready], reference)
        for (c, _), r in zip(ready, results):
            if r.status == "ok":
                rounds[id(c)].append(float(np.median(r.run_secs)))
    for c, b in ready:
        times = rounds[id(c)]
        if len(times) == CONFIRM_ROUNDS:
            rec = _record(c, workload, target, float(np.median(times)), b.build_secs,
                          reference, seed, flops, trial=-1)  # not a trial of the search
            db.commit_tuning_record(attrs.evolve(rec, run_secs=times,
                                                 meta={**rec.meta, "confirmed": True}))


def as_module(mod: IRModule | PrimFunc) -> IRModule:
    if isinstance(mod, PrimFunc):
        return IRModule.from_expr(mod)
    if not isinstance(mod, IRModule):
        raise TypeError(f"tune_tir: expected an IRModule or PrimFunc, got {type(mod).__name__}")
    if len(mod.functions) != 1:
        raise ValueError(f"tune_tir: tunes a module of one function, got "
                         f"{len(mod.functions)} ({', '.join(sorted(mod.functions))})")
    return mod


def _resume(db: Any, workload: Any, target: Target, search: EvolutionarySearch,
            info: TargetInfo) -> int:
    """Feed the records already in ``db`` for this workload and target to the search."""
    done = 0
    want = target_to_json(target)
    for rec in db.get_all_tuning_records():
        if rec.workload != workload.key or rec.target != want or rec.meta.get("confirmed"):
            continue
        decisions = tuple(rec.meta.get("decisions", ()))
        cand = search.space.generate("default", forced=decisions)
        if cand is None or cand.decisions != decisions:
            continue  # recorded by other rules: not a point of this space
        search.mark_seen(decisions)
        search.notify(cand, float(np.median(rec.run_secs)))
        done += 1
    return done


def _measure(batch: list[Candidate], target: Target, builder: Any, runner: Any,
             reference: Any, work_dir: str | None, cutoff: float | None):
    built = builder.build([BuilderInput(c.sch.mod, target) for c in batch])
    runnable = [(c, b) for c, b in zip(batch, built) if b.artifact is not None]
    results = runner.run([RunnerInput(b.artifact, target, reference.args_info, cutoff)
                          for _, b in runnable], reference) if runnable else []
    by_cand = {id(c): r for (c, _), r in zip(runnable, results)}
    for cand, b in zip(batch, built):
        r = by_cand.get(id(cand))
        if r is not None and r.status == "wrong":
            _report_wrong(cand, r.error_msg, work_dir)
        ok = r is not None and r.status == "ok"
        yield cand, (float(np.median(r.run_secs)) if ok else None), b.build_secs


def _report_wrong(cand: Candidate, message: str | None, work_dir: str | None) -> None:
    trace = str(cand.sch.trace)
    warnings.warn(WrongCandidateWarning(
        f"a scheduled candidate computed something else than the unscheduled function "
        f"({message}); this is a tirlite bug, please report it with its trace:\n{trace}"),
        stacklevel=3)
    if work_dir is not None:
        line = json.dumps({"error": message, "trace": cand.sch.trace.as_json(),
                           "decisions": list(cand.decisions)}) + "\n"
        with open(os.path.join(work_dir, "wrong_candidates.json"), "a") as f:
            f.write(line)


def _record(cand: Candidate, workload: Any, target: Target, secs: float, build_secs: float,
            reference: Any, seed: int, flops: float, trial: int) -> TuningRecord:
    return TuningRecord(
        trace=cand.sch.trace.as_json(), workload=workload.key, target=target_to_json(target),
        run_secs=[secs], build_secs=build_secs, args_info=reference.args_info,
        meta={"decisions": list(cand.decisions), "sizes": list(cand.sizes), "seed": seed,
              "trial": trial,
              "gflops": flops / secs / 1e9 if flops else None})


class _Progress:
    """A tqdm bar of trials with the best GFLOP/s (a silent one when not shown)."""

    def __init__(self, total: int, done: int, flops: float, show: bool | None):
        self.flops, self.best = flops, None
        if show is None:
            show = sys.stderr.isatty()
        self.bar = None
        if show:
            from tqdm import tqdm

            self.bar = tqdm(total=total, initial=done, unit="trial", desc="tuning")
        self.start = time.perf_counter()

    def update(self, secs: float | None) -> None:
        if secs is not None and (self.best is None or secs < self.best):
            self.best = secs
        if self.bar is not None:
            if self.best is not None and self.flops:
                self.bar.set_postfix_str(f"best {self.flops / self.best / 1e9:.1f} GFLOP/s")
            self.bar.update(1)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
