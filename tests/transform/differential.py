"""Differential runs: one program built vectorized, serial and interpreted must agree.

``check(case)`` builds ``case.func`` three ways -- ``codegen.build`` (vectorized), the same
under ``tir.disable_vectorize`` (serial, as written), and ``target="interp"`` under
``tir.disable_vectorize`` (the reference interpreter on the serial program) -- runs each
on copies of ``case.make_inputs()`` and compares every array argument afterwards, bit for
bit: NaN equals NaN, -0.0 differs from 0.0. A clear error is allowed if every build raises
the same kind. ``check_many`` spreads seeds over processes and survives a crash.

Every build is strict floating point (``codegen.llvm.fp_contract`` off): by default
LLVM may fuse ``a * b + c`` into one FMA, rounding once where the interpreter rounds
twice, and a bit-for-bit comparison needs every build to round alike.
"""

from __future__ import annotations

import dataclasses
import multiprocessing
from collections import deque
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool

import numpy as np

import codegen
import tir
import transform

STRICT_FP = {"codegen.llvm.fp_contract": False}
NO_VECTORIZE = {"tir.disable_vectorize": True}
CHUNK = 20  # programs per task sent to a worker process


@dataclasses.dataclass(frozen=True)
class Outcome:
    """What one program did: ``kind`` is agree, mismatch, interp or crash."""

    seed: int
    kind: str  # mismatch: serial vs vectorized; interp: serial vs the interpreter
    vectorized: bool  # VectorizeLoop left a Ramp in the IR
    changed: bool  # the call changed some argument
    detail: str = ""
    error: str = ""  # what the serial build raised


def vectorizes(func: tir.PrimFunc) -> bool:
    """Whether VectorizeLoop turns some access into a vector one (counts Ramp nodes)."""
    try:
        mod = transform.VectorizeLoop()(tir.IRModule.from_expr(func))
    except Exception:  # the build reports the error; here it only means "no vector code"
        return False
    ramps = []
    tir.stmt_functor.post_order_visit(
        mod["main"].body, lambda node: ramps.append(node) if isinstance(node, tir.Ramp) else None)
    return bool(ramps)


def run(func: tir.PrimFunc, args: list, config: dict | None = None, target: str = "llvm"):
    """The array arguments after one call of ``func`` built under ``config``, or the error."""
    try:
        with transform.PassContext(config={**STRICT_FP, **(config or {})}):
            mod = codegen.build(func, target=target)
        out = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        mod["main"](*out)
    except Exception as err:  # a clear error is allowed, if every build raises it
        return f"{type(err).__name__}: {err}"
    return [a for a in out if isinstance(a, np.ndarray)]


def first_difference(names: list, want, got) -> str | None:
    """Where ``got`` differs from ``want`` (NaN equals NaN; -0.0 differs from 0.0), or None."""
    if isinstance(want, str) or isinstance(got, str):  # an error: the same type, or a failure
        if isinstance(want, str) and isinstance(got, str):
            return None if want.split(":")[0] == got.split(":")[0] else f"{want} vs {got}"
        return f"{_said(want)} vs {_said(got)}"
    for name, w, g in zip(names, want, got):
        same = (w == g) & (np.signbit(w) == np.signbit(g))
        if w.dtype.kind == "f":
            same |= np.isnan(w) & np.isnan(g)
        if not same.all():
            where = np.unravel_index(np.flatnonzero(~same)[0], w.shape)
            at = ", ".join(map(str, where))
            return f"{name}[{at}]: {w[where]!r} vs {g[where]!r} ({(~same).sum()} elements differ)"
    return None


def _said(result) -> str:
    return result if isinstance(result, str) else "no error"


def check(case, interp: bool = True, input_seed: int = 0) -> Outcome:
    """Build ``case.func`` vectorized, serial and (if ``interp``) interpreted; compare."""
    func, args = case.func, case.make_inputs(input_seed)
    names = [func.buffer_map[p].name for p in func.params if p in func.buffer_map]
    serial = run(func, args, NO_VECTORIZE)
    vector = run(func, args)
    inputs = [a for a in args if isinstance(a, np.ndarray)]
    changed = not isinstance(serial, str) and first_difference(names, inputs, serial) is not None
    facts = dict(seed=case.seed, vectorized=vectorizes(func), changed=changed,
                 error=serial if isinstance(serial, str) else "")
    diff = first_difference(names, serial, vector)
    if diff is not None:
        # Interpreting the vectorized TIR tells a vectorizer error from a code generation one.
        in_tir = first_difference(names, serial, run(func, args, target="interp"))
        where = "the vectorized TIR" if in_tir else "only the LLVM code (the TIR agrees)"
        return Outcome(kind="mismatch", detail=f"serial vs vectorized: {diff}; differs in {where}",
                       **facts)
    if interp:
        diff = first_difference(names, run(func, args, NO_VECTORIZE, "interp"), serial)
        if diff is not None:
            return Outcome(kind="interp", detail=f"interpreter vs serial LLVM: {diff}", **facts)
    return Outcome(kind="agree", **facts)


def check_many(check_seeds: Callable, seeds: range, workers: int, *args) -> list[Outcome]:
    """``check_seeds(seeds, *args)`` on ``workers`` processes; a program killing one crashed.

    ``check_seeds`` must be a module-level function (the workers import it).
    """
    if workers <= 1:
        return check_seeds(seeds, *args)
    chunks = deque(seeds[k:k + CHUNK] for k in range(0, len(seeds), CHUNK))
    outcomes: list[Outcome] = []
    while chunks:
        # At most `workers` chunks in flight: when a process dies, only those are suspects.
        running: dict = {}
        with _pool(workers) as pool:
            try:
                while chunks or running:
                    while chunks and len(running) < workers:
                        chunk = chunks.popleft()
                        running[pool.submit(check_seeds, chunk, *args)] = chunk
                    done, _ = wait(running, return_when=FIRST_COMPLETED)
                    for future in done:
                        outcomes += future.result()
                        del running[future]
            except BrokenProcessPool:
                _check_workers_start(check_seeds, args)
        for chunk in running.values():
            outcomes += [_isolated(check_seeds, seed, args) for seed in chunk]
    return sorted(outcomes, key=lambda o: o.seed)


def _pool(workers: int) -> ProcessPoolExecutor:
    # spawn, not fork: LLVM's JIT state is not meant to be copied into a child
    return ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"))


def _check_workers_start(check_seeds: Callable, args: tuple) -> None:
    """Raise if a worker dies before running any program (it cannot import check_seeds)."""
    with _pool(1) as pool:
        try:
            pool.submit(check_seeds, range(0), *args).result()
        except BrokenProcessPool:
            raise RuntimeError("worker processes die before running any program (is "
                               "check_seeds importable?); run with one worker to see why") from None


def _isolated(check_seeds: Callable, seed: int, args: tuple) -> Outcome:
    """One program in a process of its own: if the process dies, the program crashed it."""
    with _pool(1) as pool:
        try:
            return pool.submit(check_seeds, range(seed, seed + 1), *args).result()[0]
        except BrokenProcessPool:
            return Outcome(seed, "crash", False, False, "the process running it died")


def summary(outcomes: list[Outcome]) -> list[str]:
    """Counts of each outcome and the seeds of each kind of failure."""
    agree = [o for o in outcomes if o.kind == "agree"]
    same = len(agree) + sum(o.kind == "interp" for o in outcomes)
    lines = [
        f"  vectorized something (a Ramp in the IR): {sum(o.vectorized for o in outcomes)}",
        f"  serial == vectorized: {same}; of the {len(agree)} that also match the interpreter, "
        f"{sum(o.vectorized and o.changed for o in agree)} vectorized something and changed "
        "memory",
        f"  serial build raised: {sum(bool(o.error) for o in outcomes)}",
    ]
    for kind in ("mismatch", "interp", "crash"):
        seeds = [o.seed for o in outcomes if o.kind == kind]
        more = " ..." if len(seeds) > 40 else ""
        lines.append(f"  {kind}: {len(seeds)}: seeds {' '.join(map(str, seeds[:40]))}{more}")
    only_llvm = sum("only the LLVM code" in o.detail for o in outcomes)
    lines.append(f"  (mismatches where the vectorized TIR agrees and LLVM code does not: "
                 f"{only_llvm})")
    return lines
