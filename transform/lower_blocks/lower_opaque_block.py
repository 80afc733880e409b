"""``LowerOpaqueBlock``: blocks become the plain statements codegen takes.

Each ``BlockRealize(values, predicate, Block(iter_vars, alloc_buffers, body))``
becomes its body with every iter var replaced by its value, inside one
``Allocate(buf.data, buf.dtype, buf.shape, True, ...)`` per allocated buffer
(multi-dimensional: codegen flattens the indices), inside
``IfThenElse(predicate, ...)`` unless the predicate is true. Loops keep their
kinds and annotations; block names and annotations are dropped. This folds
TVM's ``ConvertBlocksToOpaque`` into TVM's ``tir.LowerOpaqueBlock``; a block
still holding an ``init`` is lowered as ``LowerInitBlock`` would.

Beyond TVM, config ``tir.lower_opaque_block.likely_predicate`` (which
``codegen.build``'s pipeline sets) lowers the predicate as
``likely(p1) and likely(p2) ...``, one ``likely`` per conjunct: the guard of
a split that does not divide (``i0 * 6 + i1 < 512``) is then what
``LoopPartition`` acts on, and each conjunct is settled on its own.
Functions without blocks come back unchanged (the same object).
"""

from __future__ import annotations

from tir import op
from tir.block import Block, BlockRealize
from tir.buffer import Buffer
from tir.expr import And, IntImm, PrimExpr, Var
from tir.function import PrimFunc
from tir.functor import StmtExprMutator, deep_recursion
from tir.stmt import Allocate, IfThenElse, Stmt

from ..pass_base import PrimFuncPass, prim_func_pass
from .analysis import has_blocks
from .lower_init_block import lower_init


class OpaqueBlockLowerer(StmtExprMutator):
    """Replaces blocks by their bodies, iter vars by the values bound to them."""

    def __init__(self, likely_predicate: bool = False) -> None:
        self.values: dict[int, PrimExpr] = {}  # id(iter var) -> its value (in loop vars)
        self.likely_predicate = likely_predicate

    def visit_var(self, v: Var) -> PrimExpr:
        return self.values.get(id(v), v)

    def visit_block_realize(self, realize: BlockRealize) -> Stmt:
        block = realize.block
        for iv, value in zip(block.iter_vars, realize.iter_values):
            self.values[id(iv.var)] = self.visit_expr(value)
        predicate = self.visit_expr(realize.predicate)
        body = block.body if block.init is None else lower_init(block, block.body)
        body = self.visit_stmt(body)
        for iv in block.iter_vars:
            del self.values[id(iv.var)]
        for buf in reversed(block.alloc_buffers):
            body = _allocate(buf, body)
        if isinstance(predicate, IntImm) and predicate.value:
            return body
        if self.likely_predicate:
            predicate = _likely_conjuncts(predicate)
        return IfThenElse(predicate, body)

    def visit_block(self, block: Block) -> Stmt:
        raise ValueError(f"LowerOpaqueBlock: block {block.name_hint} is not inside a "
                         "BlockRealize (only a BlockRealize binds a block's iter vars)")


def _likely_conjuncts(cond: PrimExpr) -> PrimExpr:
    """``likely(a) and likely(b)`` for ``a and b`` (a bound per conjunct for LoopPartition)."""
    if isinstance(cond, And):
        return And(_likely_conjuncts(cond.a), _likely_conjuncts(cond.b))
    return op.likely(cond)


def _allocate(buf: Buffer, body: Stmt) -> Allocate:
    return Allocate(buf.data, buf.dtype, buf.shape, True, body)


def lower_opaque_block(func: PrimFunc, likely_predicate: bool = False) -> PrimFunc:
    """``func`` without blocks (see the module docstring)."""
    with deep_recursion():
        return func.with_body(OpaqueBlockLowerer(likely_predicate)(func.body))


LIKELY_PREDICATE = "tir.lower_opaque_block.likely_predicate"


def LowerOpaqueBlock(likely_predicate: bool = False) -> PrimFuncPass:
    """The ``tir.LowerOpaqueBlock`` pass (see the module docstring).

    ``likely_predicate`` is the value of config ``tir.lower_opaque_block.likely_predicate``
    when the context does not set it (False, as TVM lowers).
    """

    def transform_function(func, mod, ctx):
        if not has_blocks(func):
            return func
        return lower_opaque_block(func, ctx.config.get(LIKELY_PREDICATE, likely_predicate))

    return prim_func_pass(transform_function, opt_level=0, name="tir.LowerOpaqueBlock")
