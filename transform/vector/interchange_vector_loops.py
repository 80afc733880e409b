"""``InterchangeVectorLoops``: a vectorized loop striding across rows moves inside its inner loop.

::

    for i in vectorized(n):                      for j in range(1, m):
        for j in range(1, m):            ->          for i in vectorized(n):
            A[j, i] = A[j - 1, i] + B[j, i]              A[j, i] = A[j - 1, i] + B[j, i]

When the swap is legal and pays is analysis/interchange.py's decision; the
rewrite keeps both loops (vars, bounds, kinds, annotations) and swaps their
places, and the later passes vectorize the now inner loop as any other. A
remark says so (``main: loop i: interchanged with loop j: ...``). Config
``tir.vectorize.interchange`` (default True) turns the pass off, as does
``tir.disable_vectorize``. Not one of TVM's passes (TVM leaves loop order to the
schedule); ``codegen.build``'s pipeline runs it first in the vector stage.
"""

from __future__ import annotations

from tir.arith import Analyzer
from tir.function import IRModule, PrimFunc
from tir.functor import StmtMutator
from tir.node import replace
from tir.stmt import For, ForKind, Stmt

from ..pass_base import PrimFuncPass, function_name, prim_func_pass
from ..pass_context import PassContext
from ..remarks import emit_remark
from .analysis.aliasing import shared_memory
from .analysis.interchange import interchange_reason
from .options import VectorOptions
from .remarks import VectorizeRemark


class _Interchanger(StmtMutator):
    def __init__(self, func_name: str, shared: frozenset):
        self.func_name = func_name
        self.shared = shared
        self.analyzer = Analyzer()

    def visit_for(self, loop: For) -> Stmt:
        if loop.kind == ForKind.VECTORIZED:
            reason = interchange_reason(loop, self.analyzer, self.shared)
            if reason is not None:
                return self._swap(loop, reason)
            return loop  # a nest is decided at its outermost vectorized loop
        with self.analyzer.loop_scope(loop.loop_var, loop.min, loop.extent):
            return self.generic_visit(loop)

    def _swap(self, outer: For, reason: str) -> Stmt:
        inner = outer.body
        emit_remark(VectorizeRemark(self.func_name, outer.loop_var.name, 0, "interchanged",
                                    reason, "InterchangeVectorLoops"), loop=outer.loop_var)
        return replace(inner, body=replace(outer, body=inner.body))


def InterchangeVectorLoops() -> PrimFuncPass:
    """The pass moving vectorized loops that stride across rows inside their inner loop
    (see the module docstring)."""

    def transform_function(func: PrimFunc, mod: IRModule, ctx: PassContext) -> PrimFunc:
        options = VectorOptions.from_context(ctx)
        if options.disable_vectorize or not options.interchange:
            return func
        body = _Interchanger(function_name(mod, func), shared_memory(func))(func.body)
        return func if body is func.body else func.with_body(body)

    return prim_func_pass(transform_function, opt_level=0, name="tir.InterchangeVectorLoops")


__all__ = ["InterchangeVectorLoops"]
