"""One program built every way and compared with its model: ``check(seed)`` -> ``Outcome``.

The builds (``BUILDS``): LLVM vectorized and serial (``tir.disable_vectorize``) in strict
floating point (``codegen.llvm.fp_contract`` False; reductions in serial order,
``tir.vectorize.ordered_reductions``), the same two with the default FMA
contraction, and the interpreter (``target="interp"``, which rounds every operation, on the
vectorized TIR). Each runs on two argument sets. The strict builds and the interpreter are
compared with the strict model: bit for bit (NaN equals NaN, -0.0 is not 0.0) wherever the
model's bound is 0, that is everywhere except downstream of math calls; the strict vector
and serial builds also with each other, bit for bit wherever the model knows the value
within any finite bound (they call the same math functions). The contracting
builds are compared with the model run in contraction mode, whose bounds allow any add to
have absorbed a product (see ``semantics``). A clear ``TypeError``/``ValueError`` raised
alike by every build is an accepted outcome; any other exception, or builds that disagree
on whether to raise, is a finding.
"""

from __future__ import annotations

import dataclasses
import time

import numpy as np

import codegen
import transform
from transform.vector import NOT_VECTORIZED, PARTIAL, SCALARIZED, VECTORIZED

from .inputs import BufSpec, has_nan
from .program import Case, generate

# Vectorized float sums and products may be reassociated (VectorizeReductions), which no
# per-element bound follows through an overflow (serial inf + -inf is NaN; another order
# may give -inf). The fuzzer's builds keep the serial order, so reductions stay checkable
# bit for bit; tests/codegen/test_reduction_build.py checks the reassociated form.
ORDERED = {"tir.vectorize.ordered_reductions": True}
STRICT = {"codegen.llvm.fp_contract": False, **ORDERED}
SERIAL = {"tir.disable_vectorize": True}
#: name -> (config, target, contracts): every way a program is built.
BUILDS = {
    "vector": (STRICT, "llvm", False),
    "serial": ({**STRICT, **SERIAL}, "llvm", False),
    "interp": (STRICT, "interp", False),
    "vector_fma": (ORDERED, "llvm", True),
    "serial_fma": (SERIAL, "llvm", True),
}
INPUT_SEEDS = (0, 1)
CLEAR_ERRORS = (TypeError, ValueError)


@dataclasses.dataclass(frozen=True)
class Outcome:
    """What one program did. ``kind``: agree, mismatch, error (a clear error raised by
    every build alike: accepted), exception (any other error), crash, hang, generator (the
    fuzzer itself failed)."""

    seed: int
    kind: str
    detail: str = ""
    tags: frozenset = frozenset()  # the program's features, and what its run showed
    counts: tuple = (0, 0, 0)  # elements compared exactly, within a bound, unchecked
    seconds: float = 0.0

    @property
    def failed(self) -> bool:
        """A finding: anything but agreement or an accepted clear error."""
        return self.kind not in ("agree", "error")


def check(seed: int, planted=None) -> Outcome:
    """Generate program ``seed``, build and run it every way, compare with the model.

    ``planted(name, arrays)`` may alter a build's results (a test plants a bug with it).
    """
    start = time.perf_counter()
    try:
        case = generate(seed)
    except Exception as err:  # the fuzzer's own bug: report it, keep fuzzing
        return Outcome(seed, "generator", f"generating: {type(err).__name__}: {err}")
    outcome = _check_case(case, planted)
    return dataclasses.replace(outcome, seconds=time.perf_counter() - start)


def _check_case(case: Case, planted) -> Outcome:
    modules = {name: _build(case, *spec[:2]) for name, spec in BUILDS.items()}
    tags = set(case.tags) | _remark_tags(modules["vector"])
    counts = np.zeros(3, dtype=int)
    for input_seed in INPUT_SEEDS:
        args = case.make_inputs(input_seed)
        tags |= _input_tags(case, args)
        try:
            models = {c: case.run_model(args, contract=c) for c in (False, True)}
        except Exception as err:  # ModelError: undefined behaviour generated; else a bug
            return Outcome(case.seed, "generator", f"model: {type(err).__name__}: {err}",
                           frozenset(tags))
        results = {name: _run(mod, args, case) for name, mod in modules.items()}
        if planted is not None:
            results = {name: planted(name, r) for name, r in results.items()}
        failure = _errors(results)
        if failure is not None:
            kind, detail = failure
            return Outcome(case.seed, kind, detail, frozenset(tags), tuple(counts))
        for name, result in results.items():
            want, bound = models[BUILDS[name][2]]
            diff = first_difference(case, result, want, bound)
            if diff is not None:
                detail = f"{name} build, argument set {input_seed}: {diff}"
                return Outcome(case.seed, "mismatch", detail + _diagnose(case, name, args),
                               frozenset(tags), tuple(counts))
        # Strict vector and serial code call the same math (lowered, or libm lane by lane):
        # they must agree bit for bit wherever the model knows anything at all.
        exact = [np.where(np.isinf(b), b, 0.0) for b in models[False][1]]
        diff = first_difference(case, results["vector"], results["serial"], exact)
        if diff is not None:
            return Outcome(case.seed, "mismatch", f"vector vs serial build, argument set "
                           f"{input_seed}: {diff.replace('the model says', 'serial')}",
                           frozenset(tags), tuple(counts))
        counts += _count(models[False][1]) + _count(models[True][1])
    return Outcome(case.seed, "agree", "", frozenset(tags), tuple(counts))


def _build(case: Case, config: dict, target: str):
    try:
        with transform.PassContext(config=config):
            return codegen.build(case.func, target=target)
    except Exception as err:  # judged with the others' results in _errors
        return err


def _run(module, args: list, case: Case):
    """The buffer arguments after one call, or the exception it (or its build) raised."""
    if isinstance(module, Exception):
        return module
    out = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    try:
        module["main"](*out)
    except Exception as err:
        return err
    return [a for a, p in zip(out, case.params) if isinstance(p, BufSpec)]


def _said(err: Exception) -> str:
    return f"{type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}"


def _errors(results: dict):
    """None if no build raised; else (kind, detail): error if all raised one clear kind."""
    raised = {n: r for n, r in results.items() if isinstance(r, Exception)}
    if not raised:
        return None
    if len(raised) < len(results):
        ok = sorted(set(results) - set(raised))
        return "exception", "; ".join(f"{n}: {_said(e)}" for n, e in raised.items()) + \
            f" (but {', '.join(ok)} ran)"
    kinds = {type(e) for e in raised.values()}
    first = next(iter(raised.values()))
    if len(kinds) == 1 and isinstance(first, CLEAR_ERRORS) and str(first):
        return "error", _said(first)
    return "exception", "; ".join(f"{n}: {_said(e)}" for n, e in raised.items())


def first_difference(case: Case, got: list, want: list, bound: list) -> str | None:
    """Where ``got`` leaves the model's bounds, or None."""
    names = [p.name for p in case.params if isinstance(p, BufSpec)]
    for name, g, w, e in zip(names, got, want, bound):
        ok = agrees(g, w, e)
        if not ok.all():
            at = np.unravel_index(np.flatnonzero(~ok)[0], g.shape)
            where = ", ".join(map(str, at))
            return (f"{name}[{where}] = {g[at]!r}, the model says {w[at]!r} (bound {e[at]:g}; "
                    f"{int((~ok).sum())} elements differ)")
    return None


def agrees(got: np.ndarray, want: np.ndarray, bound: np.ndarray) -> np.ndarray:
    """Per element: bit for bit where ``bound`` is 0, within it where finite, any if inf."""
    if got.dtype.kind != "f":
        return (got == want) | (bound != 0)
    same = ((got == want) & (np.signbit(got) == np.signbit(want))) | (np.isnan(got) &
                                                                      np.isnan(want))
    tol = bound * (1 + 1e-9)  # the bound's own float64 rounding
    wide_got, wide_want = got.astype(np.float64), want.astype(np.float64)
    close = np.abs(wide_got - wide_want) <= tol
    # within the bound of a finite value beyond which the type overflows
    top = np.finfo(got.dtype).max
    over = np.isinf(got) & np.isfinite(want) & (np.abs(wide_want) + tol >= top) \
        & (np.sign(wide_got) == np.sign(wide_want))
    return np.where(bound == 0, same, np.isinf(bound) | same | close | over)


def _count(bounds: list) -> np.ndarray:
    flat = np.concatenate([b.ravel() for b in bounds]) if bounds else np.zeros(0)
    inf = np.isinf(flat)
    return np.array([(flat == 0).sum(), (~inf & (flat != 0)).sum(), inf.sum()])


def _remark_tags(module) -> set:
    """vectorized / kept_serial (legality) / scalarized, from the vectorized build's remarks."""
    if isinstance(module, Exception):
        return set()
    outcomes = {getattr(r, "outcome", "") for r in module.remarks}
    tags = set()
    if outcomes & {VECTORIZED, PARTIAL}:
        tags.add("vectorized")
    if NOT_VECTORIZED in outcomes:
        tags.add("kept_serial")
    if outcomes & {SCALARIZED, PARTIAL}:
        tags.add("scalarized")
    return tags


def _input_tags(case: Case, args: list) -> set:
    tags = {"nan_input"} if has_nan(args) else set()
    for p, a in zip(case.params, args):
        if getattr(p, "role", "") == "n":
            tags.add("n_zero" if a == 0 else "n_positive")
    return tags


def _diagnose(case: Case, name: str, args: list) -> str:
    """For a vectorized build that differs: is the vectorized TIR wrong, or its LLVM code?"""
    if not name.startswith("vector"):
        return ""
    interp = _run(_build(case, BUILDS[name][0], "interp"), args, case)
    if isinstance(interp, Exception):
        return ""
    want, bound = case.run_model(args, contract=BUILDS[name][2])
    if first_difference(case, interp, want, bound) is None:
        return "; the vectorized TIR, interpreted, agrees: the LLVM code differs"
    return "; the vectorized TIR, interpreted, differs too: the vectorizer's output is wrong"
