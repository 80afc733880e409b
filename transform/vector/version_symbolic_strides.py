"""``VersionSymbolicStrides``: a contiguous fast path for ``A[i * s]`` under ``s == 1``.

A vectorized loop whose accesses step by a runtime value ``s`` gathers (and
scatters) every vector. When ``s`` is 1 at run time the same accesses are
contiguous vector loads and stores. The pass copies the loop into two
versions and picks one at run time, as LLVM's LoopVersioning does for the
strides its LoopAccessAnalysis speculates on::

    for i in vectorized(n):               if s == 1:
        B[i] = A[i * s] + 1f                  for i in vectorized(n):
                                      ->          B[i] = A[i] + 1f
                                          else:
                                              for i in vectorized(n):
                                                  B[i] = A[i * s] + 1f

The fast path is the loop with ``s`` replaced by 1 and simplified; the
general path is the loop as written. Both stay vectorized: the later passes
(``StripMineVectorLoops``, ``IfConvertVectorLoops``, ``VectorizeLoop``) treat
each as they treated the original, with its own dependence analysis. So the
fast path may vectorize where the original stays serial (``A[i * s] =
A[i * s] + 1`` may, for all the analysis knows, touch one element from every
iteration; with ``s == 1`` it plainly does not), and the general path is
exactly as safe as before (``s == 0`` still runs it).

What to version on, and whether it pays, is analysis/strides.py's decision
(one var in the common case, two at most: ``s == 1 && t == 1``). A nest of
vectorized loops is versioned once, at its outermost vectorized loop. No
versioning when no vector access has a runtime stride, when the stride is
bound inside the loop, or when the context already proves ``s != 1`` (the
general path of an earlier versioning); when it proves ``s == 1``, the loop
becomes its fast path without a branch.

The versioning is per vectorized loop nest: a nest inside serial loops gets
its branch there (``VectorizeReductions``' loops, a row loop), and hoisting
the invariant branch out of them is left to LLVM's loop unswitching (O3).

Each decision is reported as a ``VectorizeRemark`` on the remark
stream (``main: loop i: versioned on s == 1 (contiguous fast path for
A[i * s]); general path otherwise``); the later passes' remarks on the fast
path come before those on the general path (IR order). Config
``tir.vectorize.version_strides`` (default True) turns the pass off, as does
``tir.disable_vectorize``.
"""

from __future__ import annotations

from tir import op
from tir.arith import Analyzer
from tir.function import IRModule, PrimFunc
from tir.functor import StmtMutator, copy_with_fresh_binders
from tir.stmt import For, ForKind, IfThenElse, Stmt

from ..pass_base import PrimFuncPass, function_name, prim_func_pass
from ..pass_context import PassContext
from ..remarks import emit_remark, note_body_copy
from ..simplify import simplify_stmt
from .analysis.strides import StridePlan, plan_versioning
from .options import VERSION_STRIDES, VectorOptions
from .remarks import VectorizeRemark


def _describe(plan: StridePlan) -> str:
    """``versioned on s == 1 (contiguous fast path for A[i * s]); general path otherwise``."""
    condition = " && ".join(f"{v.name} == 1" for v in plan.vars)
    kind = "contiguous" if plan.contiguous else "constant-stride"
    texts = dict.fromkeys(a.text if a.contiguous else f"{a.text} (stride {a.stride})"
                          for a in plan.fast)
    what = f"{kind} fast path for {', '.join(texts)}"
    if plan.known:
        return f"{condition} holds here: {what}, without a branch"
    return f"versioned on {condition} ({what}); general path otherwise"


class _Versioner(StmtMutator):
    """Versions the vectorized loop nests of a body on their runtime strides."""

    def __init__(self, func_name: str):
        self.func_name = func_name
        self.analyzer = Analyzer()
        self.outer_loop_vars: set[int] = set()

    def visit_for(self, loop: For) -> Stmt:
        if loop.kind == ForKind.VECTORIZED:
            return self._version(loop)
        self.outer_loop_vars.add(id(loop.loop_var))
        try:
            with self.analyzer.loop_scope(loop.loop_var, loop.min, loop.extent):
                return self.generic_visit(loop)
        finally:
            self.outer_loop_vars.discard(id(loop.loop_var))

    def visit_if_then_else(self, node: IfThenElse) -> Stmt:
        # The general path of a versioning (run twice, the pass must not version it again)
        # and a user's own ``if s == 1`` are known from the condition.
        with self.analyzer.constraint_scope(node.condition):
            then_case = self.visit_stmt(node.then_case)
        else_case = node.else_case
        if else_case is not None:
            with self.analyzer.constraint_scope(op.logical_not(node.condition)):
                else_case = self.visit_stmt(else_case)
        if then_case is node.then_case and else_case is node.else_case:
            return node
        return IfThenElse(node.condition, then_case, else_case)

    def _version(self, loop: For) -> Stmt:
        """The loop nest, versioned if its plan says so; its remark emitted."""
        plan = plan_versioning(loop, self.analyzer, self.outer_loop_vars)
        if not plan.vars:
            if plan.reason:
                self._remark(loop, "not versioned", plan.reason)
            return loop
        self._remark(loop, "versioned", _describe(plan))
        ones = {v: op.const(1, v.dtype) for v in plan.vars}
        # A copy binds fresh vars: the loop var must not be bound by both versions.
        copy = copy_with_fresh_binders(loop, ones)
        note_body_copy(loop, copy)  # its remarks fold into the loop's
        fast = simplify_stmt(copy, Analyzer())
        return fast if plan.known else IfThenElse(plan.condition, fast, loop)


    def _remark(self, loop: For, outcome: str, reason: str) -> None:
        emit_remark(VectorizeRemark(self.func_name, loop.loop_var.name, 0, outcome, reason,
                                    "VersionSymbolicStrides"), loop=loop.loop_var)


def version_strides_function(func: PrimFunc, name: str = "main") -> PrimFunc:
    """``func`` with its vectorized loops versioned on their runtime strides."""
    body = _Versioner(name)(func.body)
    return func if body is func.body else func.with_body(body)


def VersionSymbolicStrides() -> PrimFuncPass:
    """The pass giving vectorized loops with runtime strides a contiguous fast path
    under ``s == 1`` (see the module docstring)."""

    def transform_function(func: PrimFunc, mod: IRModule, ctx: PassContext) -> PrimFunc:
        options = VectorOptions.from_context(ctx)
        if options.disable_vectorize or not options.version_strides:
            return func
        return version_strides_function(func, function_name(mod, func))

    return prim_func_pass(transform_function, opt_level=0, name="tir.VersionSymbolicStrides")


__all__ = [
    "VERSION_STRIDES",
    "VersionSymbolicStrides",
    "version_strides_function",
]
