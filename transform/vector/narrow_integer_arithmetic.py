"""``NarrowIntegerArithmetic``: integer arithmetic in vectorized loops computed in the
narrowest exact type.

::

    for i in vectorized(n):
        g[i] = uint8((77 * int32(r[i]) + ... + 128) >> 8)
  ->
        g[i] = uint8((uint16(77) * uint16(r[i]) + ... + uint16(128)) >> uint16(8))

Which type is exact is analysis/narrowing.py's decision; the rewrite rebuilds
the expression under the root ``Cast`` in it, node for node. Vectors of the
narrow type take half (or a quarter) of the registers and use the narrow
instructions (``vpmullw`` instead of ``vpmulld``). Only vectorized loops are
rewritten: a scalar register holds any width alike. Config
``tir.vectorize.narrow_integers`` (default True) turns the pass off, as does
``tir.disable_vectorize``. Not one of TVM's passes; ``codegen.build``'s
pipeline runs it before the loops are vectorized.
"""

from __future__ import annotations

from tir import op
from tir.arith import Analyzer
from tir.expr import Call, Cast, IntImm, PrimExpr
from tir.function import IRModule, PrimFunc
from tir.functor import StmtExprMutator
from tir.node import replace
from tir.stmt import For, ForKind, Stmt

from ..pass_base import PrimFuncPass, prim_func_pass
from ..pass_context import PassContext
from .analysis.narrowing import BINARY, narrowing
from .options import VectorOptions


def rebuild(e: PrimExpr, dtype: str) -> PrimExpr:
    """``e`` (a tree ``narrowing`` accepted) computed in the scalar type ``dtype``."""
    if isinstance(e, IntImm):
        return IntImm(dtype, e.value)
    if isinstance(e, Cast):
        return e.value if e.value.dtype == dtype else Cast(dtype, e.value)
    if isinstance(e, BINARY):
        return type(e)(rebuild(e.a, dtype), rebuild(e.b, dtype))
    assert isinstance(e, Call)
    return replace(e, dtype=dtype, args=[rebuild(a, dtype) for a in e.args])


class _Narrower(StmtExprMutator):
    def __init__(self):
        super().__init__()
        self.analyzer = Analyzer()
        self.depth = 0  # vectorized loops around the node being visited

    def visit_for(self, loop: For) -> Stmt:
        vector = loop.kind == ForKind.VECTORIZED
        self.depth += vector
        try:
            with self.analyzer.loop_scope(loop.loop_var, loop.min, loop.extent):
                return self.generic_visit(loop)
        finally:
            self.depth -= vector

    def visit_cast(self, node: Cast) -> PrimExpr:
        node = self.generic_visit(node)
        if not self.depth or not isinstance(node, Cast):
            return node
        narrow = narrowing(node, self.analyzer)
        if narrow is None:
            return node
        return op.cast(node.dtype, rebuild(node.value, narrow))


def NarrowIntegerArithmetic() -> PrimFuncPass:
    """The pass computing vectorized integer arithmetic in the narrowest exact type."""

    def transform_function(func: PrimFunc, mod: IRModule, ctx: PassContext) -> PrimFunc:
        options = VectorOptions.from_context(ctx)
        if options.disable_vectorize or not options.narrow_integers:
            return func
        body = _Narrower()(func.body)
        return func if body is func.body else func.with_body(body)

    return prim_func_pass(transform_function, opt_level=0, name="tir.NarrowIntegerArithmetic")


__all__ = ["NarrowIntegerArithmetic", "rebuild"]
