"""``LegalizeParallelLoops``: a parallel loop computes what its serial reading computes.

Threads run the iterations of a ``ForKind.PARALLEL`` loop at once, so a loop
whose iterations share memory (``conflicts.py``) would give an answer that
depends on timing. TVM leaves that to the user; tirlite does not. For each
parallel loop, innermost first:

- no conflict: the loop stays as it is (no remark);
- the only conflicts are accumulators, ``S[c] = S[c] OP f(i)`` with OP
  associative (``+ * min max & | ^``, the recognizer of
  ``analysis/reductions.py``, here also inside nested loops): a *parallel
  reduction* with one partial result per chunk, folded in chunk order after
  the loop (``partials.py``). Float sums and products are then reassociated,
  as in a vectorized loop, the same way at any thread count; under config
  ``tir.vectorize.ordered_reductions`` they stay serial instead;
- anything else: the loop runs serially, with a remark naming the conflict.

The loop annotation ``tir.parallel.assume_independent`` (a true value) is
the user's promise that the iterations are independent: the loop is left
alone, unchecked. ``codegen.build`` runs the pass after the first
``Simplify``, before the vector passes (which then vectorize the chunks).
"""

from __future__ import annotations

import attrs

from tir.arith import Analyzer
from tir.function import IRModule, PrimFunc
from tir.functor import StmtMutator
from tir.node import replace
from tir.stmt import For, ForKind, Stmt

from ..pass_base import PrimFuncPass, function_name, prim_func_pass
from ..pass_context import PassContext
from ..remarks import emit_remark
from ..vector.analysis.aliasing import DISTINCT, shared_memory
from ..vector.analysis.reductions import Reduction, find_reductions
from ..vector.options import ORDERED
from .conflicts import ParallelAnalysis, analyze_parallel_loop
from .partials import chunk_count, parallel_reduction

#: The loop annotation by which a user promises that the iterations are independent.
ASSUME_INDEPENDENT = "tir.parallel.assume_independent"
#: Remark outcomes: the loop became a parallel reduction, or runs serially.
PARALLEL_REDUCTION = "parallel reduction"
SERIAL = "serial"


@attrs.frozen(repr=False)
class ParallelRemark:
    """What ``LegalizeParallelLoops`` did with one parallel loop, and why."""

    func_name: str
    loop_var: str
    outcome: str
    reason: str = ""

    def __str__(self) -> str:
        return f"{self.func_name}: parallel loop {self.loop_var}: {self.outcome}: {self.reason}"

    def __repr__(self) -> str:
        return repr(str(self))


class _Legalizer(StmtMutator):
    """Rewrites or serializes the parallel loops of one function whose iterations conflict."""

    def __init__(self, func_name: str, ordered: bool, shared: frozenset = DISTINCT):
        self.func_name = func_name
        self.ordered = ordered
        self.shared = shared
        self.analyzer = Analyzer()

    def visit_for(self, loop: For) -> Stmt:
        with self.analyzer.loop_scope(loop.loop_var, loop.min, loop.extent):
            new = self.generic_visit(loop)  # inner parallel loops first
        return self.loop(new)

    def loop(self, loop: For) -> Stmt:
        """``loop`` as it may run: unchanged, a parallel reduction, or serial."""
        if loop.kind != ForKind.PARALLEL or loop.annotations.get(ASSUME_INDEPENDENT):
            return loop
        analysis = analyze_parallel_loop(loop, self.analyzer, self.shared)
        if analysis.independent:
            return loop
        if analysis.unanalyzable:
            return self._serial(loop, f"{analysis.unanalyzable} in the body is not analyzed")
        reductions, refused = find_reductions(loop, self.shared, nested=True)
        why = self._why_serial(analysis, reductions, refused)
        if why:
            return self._serial(loop, why)
        used = [r for r in reductions
                if any(id(r.store.buffer.data) in c.memory for c in analysis.conflicts)]
        self._remark(loop, PARALLEL_REDUCTION, self._note(loop, used))
        return parallel_reduction(loop, used)

    def _why_serial(self, analysis: ParallelAnalysis, reductions: list[Reduction],
                    refused: list) -> str | None:
        accumulators = {id(r.store.buffer.data) for r in reductions}
        for conflict in analysis.conflicts:
            if conflict.memory <= accumulators:
                continue
            for refusal in refused:  # a look-alike of a reduction: say why it is not one
                if id(refusal.store.buffer.data) in conflict.memory:
                    return f"{refusal.reason} ({_shown(refusal.store)})"
            return conflict.describe(self.analyzer.simplify)
        floats = [r for r in reductions if r.is_float]
        if self.ordered and floats:
            return (f"{_shown(floats[0].store)}: float {floats[0].kind} kept in serial order "
                    f"({ORDERED})")
        return None

    def _note(self, loop: For, used: list[Reduction]) -> str:
        names = ", ".join(f"{_shown(r.store)} ({r.kind})" for r in used)
        note = (f"{names} accumulated in {chunk_count(loop.extent)} chunks, "
                "folded in chunk order")
        if any(r.is_float for r in used):
            note += "; float rounding as reassociated, the same at any thread count"
        return note

    def _serial(self, loop: For, why: str) -> Stmt:
        self._remark(loop, SERIAL, why)
        return replace(loop, kind=ForKind.SERIAL)

    def _remark(self, loop: For, outcome: str, reason: str) -> None:
        emit_remark(ParallelRemark(self.func_name, loop.loop_var.name, outcome, reason))


def _shown(store) -> str:
    return f"{store.buffer.name}[{', '.join(str(i) for i in store.indices)}]"


def legalize_parallel_loops(func: PrimFunc, name: str = "main",
                            ordered: bool = False) -> PrimFunc:
    """``func`` with every parallel loop made safe to run on threads (see the module doc)."""
    body = _Legalizer(name, ordered, shared_memory(func))(func.body)
    return func if body is func.body else func.with_body(body)


def LegalizeParallelLoops() -> PrimFuncPass:
    """The pass making parallel loops compute their serial result (see the module doc).

    Example: ``for i in parallel(n): S[0] = S[0] + A[i]`` becomes a parallel
    reduction over 64 chunks; ``for i in parallel(n): B[i + 1] = B[i]`` runs
    serially, with a remark saying why.
    """

    def transform_function(func: PrimFunc, mod: IRModule, ctx: PassContext) -> PrimFunc:
        ordered = bool(ctx.config.get(ORDERED, False))
        return legalize_parallel_loops(func, function_name(mod, func), ordered)

    return prim_func_pass(transform_function, opt_level=0, name="tir.LegalizeParallelLoops")


__all__ = ["ASSUME_INDEPENDENT", "PARALLEL_REDUCTION", "SERIAL", "LegalizeParallelLoops",
           "ParallelRemark", "legalize_parallel_loops"]
