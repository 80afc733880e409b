"""``VectorizeReductions``: vectorized loops that accumulate into one element.

``acc[c] = acc[c] OP f(i)`` carries a value from each iteration to the next,
so ``VectorizeLoop``'s legality keeps such a loop serial. OP being
associative (``+ * min max & | ^``, see ``analysis/reductions.py``), the
iterations can instead accumulate into K independent vector accumulators of
VL lanes each, folded into ``acc[c]`` by one horizontal reduction::

    for i in vectorized(n):              allocate S_acc[K*VL], S_tail[VL] (local)
        S[0] = S[0] + A[i]                 S_acc[Ramp(k*VL, 1, VL)] = Broadcast(-0f, VL)  (each k)
                                  ->       S_tail[Ramp(0, 1, VL)] = Broadcast(-0f, VL)
                                           for i_outer in range(n // (K*VL)):
                                               for i in vectorized(VL):       (k = 0 .. K-1)
                                                   S_acc[k*VL + i] = S_acc[k*VL + i]
                                                                     + A[i_outer*K*VL + k*VL + i]
                                           for i_rest in range(n % (K*VL) // VL):
                                               for i in vectorized(VL):
                                                   S_acc[i] = S_acc[i] + A[n // (K*VL)*K*VL
                                                                           + i_rest*VL + i]
                                           for i in vectorized(VL):
                                               if n // VL * VL + i < n:
                                                   S_tail[i] = S_tail[i] + A[n // VL * VL + i]
                                           S[0] = S[0] + vector_reduce_add_reassoc(
                                                      S_acc[0:VL] + ... + S_tail[0:VL])

The tail's ``if`` becomes lane masks in ``IfConvertVectorLoops`` (run after
``StripMineVectorLoops``); it accumulates into ``S_tail`` so that its masked
store does not pin the main accumulators to memory. Searches (below) keep
the last ``n % VL`` iterations as the serial loop they were.

An index-of-max/min search (``if A[i] > M[0]: M[0] = A[i]; K[0] = i``, see
``analysis/searches.py``) becomes K x VL lanes of best values (starting at
``M[0]``) and indices (starting at a sentinel no iteration has) updated by
``Select``; after the loop, the best value M over the lanes, the smallest
(``>``/``<``: first occurrence) or largest (``>=``/``<=``: last) index among
the lanes holding M, and that lane's value (M, up to the sign of a zero) are
stored unless no lane was ever updated. A NaN compares false, so it is never
taken, as in the serial loop; a NaN start is never replaced. A first match
(``if K[0] == -1 and cond(i): K[0] = i``) keeps per lane the smallest ``i``
where ``cond`` holds, and stores the smallest lane if ``K[0]`` still holds
the marker after the loop (or a flag ``F[0]`` its start, then raises it); its
blocks run in a ``while`` that stops after the first block holding a match:
the lanes of later blocks could only hold larger indices.

A reduction inside ``if``s (a conditional reduction) keeps its ``if`` around
the accumulator update; ``IfConvertVectorLoops`` then masks it per lane.

Every accumulator access has a constant offset, so LLVM keeps the
accumulators in registers. The other statements of the body run once per
``i`` as before (``VectorizeLoop`` then vectorizes the VL-wide loops, after
its own dependence analysis). K is 4 where one step has a long latency
(float add/mul/min/max, integer mul: 4 chains in flight keep the units busy), else
2 (integer add/and/or/xor/min/max: one-cycle ops, loads are the limit), and
never more than the trip count fills. VL is ``StripMineVectorLoops``'s:
the target's register over the widest element, or ``tir.vector_length``.

Floats: a sum or product in a vectorized loop may be reassociated (as
OpenMP's ``simd reduction``); the remark says so, and the horizontal
reduction is ``tir.vector_reduce_add_reassoc``. With config
``tir.vectorize.ordered_reductions`` the order stays serial: each vector of
VL values is folded in lane order by ``tir.vector_reduce_add(v, start)``
(bit-exact to the serial loop when ``codegen.llvm.fp_contract`` is off: a
serial ``acc + a*b`` may otherwise become one fma). Float min/max are exact
in any order. A statement that looks like an accumulation but is not
reduced gets a remark saying why; the loop is left to ``VectorizeLoop``.
``codegen.build`` runs the pass before ``StripMineVectorLoops``; it does
nothing under ``tir.disable_vectorize``.

This module decides which rewrite a loop gets and says why (remarks); the rewrites
themselves are the plans of ``reduction_plans.py`` and ``search_plans.py``.
"""

from __future__ import annotations

from tir import dtype as dt
from tir import op
from tir.arith import Analyzer
from tir.expr import IntImm, PrimExpr, Var, scalable_factor
from tir.function import IRModule, PrimFunc
from tir.functor import StmtMutator
from tir.stmt import For, ForKind, Stmt

from ..pass_base import PrimFuncPass, function_name, prim_func_pass
from ..pass_context import PassContext
from ..remarks import emit_remark
from .analysis.aliasing import DISTINCT, shared_memory
from .analysis.reductions import Reduction, describe, find_reductions
from .analysis.searches import FirstMatch, Search, find_search
from .analysis.strided_terms import shuffled_terms
from .options import ORDERED, VectorOptions, function_has_sve
from .reduction_ir import load_of
from .reduction_plans import ReductionPlan, ScalablePlan
from .remarks import VECTORIZED, VectorizeRemark
from .search_plans import FirstMatchPlan, SearchPlan
from .vector_length import is_scalable_extent, register_bits, scalable_vector_length, vector_length

#: The outcome of a remark on a statement that looks like a reduction but is not one.
NOT_A_REDUCTION = "not a reduction"


class _ReductionRewriter(StmtMutator):
    """Rewrites the reductions of the vectorized loops below a statement."""

    def __init__(self, func_name: str, register_bits: int, ordered: bool, sve: bool = False,
                 shared: frozenset = DISTINCT):
        self.func_name = func_name
        self.shared = shared  # the data vars that may be one memory (analysis/aliasing.py)
        self.register_bits = register_bits
        self.ordered = ordered
        #: The target has SVE: reductions accumulate in scalable vectors (``ScalablePlan``).
        self.sve = sve
        self.analyzer = Analyzer()

    def visit_for(self, loop: For) -> Stmt:
        if loop.kind != ForKind.VECTORIZED:
            return self.generic_visit(loop)
        reductions, refused = find_reductions(loop, self.shared)
        search, why_not = (None, None) if reductions or refused else find_search(loop, self.shared)
        vl, why = vector_length(loop, self.register_bits, self.func_name)
        if self._refused(loop, vl, reductions, refused, why_not) or not (reductions or search):
            return loop
        if is_scalable_extent(loop.extent):
            return loop  # already k * vscale() lanes: no accumulator plan for it
        scalable = self._scalable(loop, reductions, search)
        if scalable is not None:
            plan = ScalablePlan(loop, reductions, scalable[0])
            self._remark(loop, f"vscale x {plan.factor}", VECTORIZED, plan.reason(scalable[1]))
            return plan.rewrite()
        return self._rewrite_fixed(loop, reductions, search, vl, why)

    def _refused(self, loop: For, vl: int, reductions: list[Reduction], refused: list,
                 why_not: str | None) -> bool:
        """Remark each reduction-like statement that is not one; True if the loop has any.

        A float sum or product kept in serial order (``ORDERED``) that would have to be
        regrouped counts as refused.
        """
        for r in refused:
            self._remark(loop, vl, NOT_A_REDUCTION, f"{describe(r.store)}: {r.reason}")
        if why_not:
            self._remark(loop, vl, NOT_A_REDUCTION, why_not)
        regrouped = [r for r in reductions if self.ordered and r.is_float and r.regrouped]
        for r in regrouped:
            self._remark(loop, vl, NOT_A_REDUCTION, f"{describe(r.store)}: taking its terms "
                         f"together would change the float rounding ({ORDERED})")
        return bool(refused or regrouped)

    def _rewrite_fixed(self, loop: For, reductions: list[Reduction],
                       search: Search | FirstMatch | None, vl: int, why: str) -> Stmt:
        """The loop with its reductions (or its search) in fixed-length vectors of ``vl``."""
        count = loop.extent
        if not self.analyzer.can_prove(op.greater_equal(count, op.const(0, count.dtype))):
            count = op.max(count, op.const(0, count.dtype))  # a negative extent runs nothing
        if isinstance(count, IntImm) and count.value < vl:
            return loop  # no full vector: VectorizeLoop keeps it serial and says why
        if search is not None:  # 4 chains of compare-and-selects in flight
            kind = FirstMatchPlan if isinstance(search, FirstMatch) else SearchPlan
            found = kind(loop, search, vl, count, self._cap(4, count, vl))
            self._remark(loop, vl, VECTORIZED, found.reason(why))
            return found.rewrite()
        k = self._unroll(reductions, loop.loop_var, count, vl)
        plan = ReductionPlan(loop, reductions, vl, count, k)
        ordered = self.ordered and any(r.is_float for r in reductions)
        self._remark(loop, vl, VECTORIZED, _reason(plan, why, ordered))
        return plan.ordered() if ordered else plan.reassociated()

    def _scalable(self, loop: For, reductions: list, search) -> tuple[PrimExpr, str] | None:
        """SVE's VL and its note where the loop's reductions accumulate in scalable vectors:
        an SVE target, no search, no float sum kept in serial order."""
        if not self.sve or search is not None:
            return None
        if self.ordered and any(r.is_float for r in reductions):
            return None
        found = scalable_vector_length(loop)
        if found is not None and isinstance(loop.extent, IntImm) and \
                loop.extent.value < scalable_factor(found[0]):
            return None  # not one vector even at vscale 1: the fixed rule keeps it serial
        return found

    def _unroll(self, reductions: list[Reduction], var: Var, count: PrimExpr, vl: int
                ) -> int:
        """K: independent accumulators to hide the latency of one OP, at most what n fills."""
        # Float min/max too: IEEE maximum/minimum is a chain of ~5 dependent ops on x86
        # (the NaN and -0 checks around vmaxps); measured, 4 chains beat 2 (and 8).
        long_latency = any(r.is_float or r.kind == "mul" or _is_float_min_max(r)
                           for r in reductions)
        if long_latency and shuffled_terms([r.value for r in reductions], var):
            long_latency = False  # bound by its shuffles and memory (analysis/strided_terms.py)
        return self._cap(4 if long_latency else 2, count, vl)

    @staticmethod
    def _cap(k: int, count: PrimExpr, vl: int) -> int:
        """``k``, but no more accumulators than a constant trip count fills."""
        return max(1, min(k, count.value // vl)) if isinstance(count, IntImm) else k

    def _remark(self, loop: For, vl: int | str, outcome: str, reason: str) -> None:
        emit_remark(VectorizeRemark(self.func_name, loop.loop_var.name, vl, outcome, reason,
                                    "VectorizeReductions"), loop=loop.loop_var)


def _reason(plan: ReductionPlan, why: str, ordered: bool) -> str:
    kinds = ", ".join(f"{load_of(r.store)} ({r.kind}{', under an if' if r.conditional else ''})"
                      for r in plan.reductions)
    if ordered:
        text = f"reduction {kinds}: vectors of {plan.vl} lanes ({why}) folded in serial order"
    else:
        text = (f"reduction {kinds}: {plan.k} accumulators of {plan.vl} lanes ({why}), "
                "one horizontal reduction after the loop")
    for r in plan.reductions:
        if r.is_float and not ordered:
            what = "sum" if r.kind == "add" else "product"
            text += (f"; float {what} reassociated: results may differ from the serial order "
                     f"in rounding (config {ORDERED} keeps it)")
    return text


def vectorize_reductions(func: PrimFunc, name: str = "main", ordered: bool = False) -> PrimFunc:
    """``func`` with the reductions of its vectorized loops rewritten (see the module doc)."""
    rewriter = _ReductionRewriter(name, register_bits(func), ordered, function_has_sve(func),
                                  shared_memory(func))
    body = rewriter(func.body)
    return func if body is func.body else func.with_body(body)


def VectorizeReductions() -> PrimFuncPass:
    """The pass turning ``acc[c] = acc[c] OP f(i)`` in vectorized loops into vector accumulators.

    Config ``tir.vectorize.ordered_reductions`` keeps float sums and products in serial
    order; ``tir.disable_vectorize`` turns the pass off.

    Raises:
        ValueError: a ``tir.vector_length`` annotation that is not a positive power of two.
    """

    def transform_function(func: PrimFunc, mod: IRModule, ctx: PassContext) -> PrimFunc:
        options = VectorOptions.from_context(ctx)
        if options.disable_vectorize:
            return func
        return vectorize_reductions(func, function_name(mod, func), options.ordered_reductions)

    return prim_func_pass(transform_function, opt_level=0, name="tir.VectorizeReductions")


__all__ = ["NOT_A_REDUCTION", "ORDERED", "VectorizeReductions", "vectorize_reductions"]


def _is_float_min_max(r: Reduction) -> bool:
    return dt.DataType(r.dtype).is_float and r.kind in ("min", "max")
