"""``LowerOpaqueBlock``: blocks become the plain statements codegen takes.

Each ``BlockRealize(values, predicate, Block(iter_vars, alloc_buffers, body))``
becomes its body with every iter var replaced by its value, inside one
``Allocate(buf.data, buf.dtype, buf.shape, True, ...)`` per allocated buffer
(multi-dimensional: codegen flattens the indices), inside
``IfThenElse(predicate, ...)`` unless the predicate is true. Loops keep their
kinds and annotations; block names and annotations are dropped. This folds
TVM's ``ConvertBlocksToOpaque`` into TVM's ``tir.LowerOpaqueBlock``; a block
still holding an ``init`` is lowered as ``LowerInitBlock`` would.
Functions without blocks come back unchanged (the same object).
"""

from __future__ import annotations

from tir.block import Block, BlockRealize
from tir.buffer import Buffer
from tir.expr import IntImm, PrimExpr, Var
from tir.function import PrimFunc
from tir.functor import StmtExprMutator, deep_recursion
from tir.stmt import Allocate, IfThenElse, Stmt

from ..pass_base import PrimFuncPass, prim_func_pass
from .analysis import has_blocks
from .lower_init_block import lower_init


class OpaqueBlockLowerer(StmtExprMutator):
    """Replaces blocks by their bodies, iter vars by the values bound to them."""

    def __init__(self) -> None:
        self.values: dict[int, PrimExpr] = {}  # id(iter var) -> its value (in loop vars)

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
        return IfThenElse(predicate, body)

    def visit_block(self, block: Block) -> Stmt:
        raise ValueError(f"LowerOpaqueBlock: block {block.name_hint} is not inside a "
                         "BlockRealize (only a BlockRealize binds a block's iter vars)")


def _allocate(buf: Buffer, body: Stmt) -> Allocate:
    return Allocate(buf.data, buf.dtype, buf.shape, True, body)


def lower_opaque_block(func: PrimFunc) -> PrimFunc:
    """``func`` without blocks (see the module docstring)."""
    with deep_recursion():
        return func.with_body(OpaqueBlockLowerer()(func.body))


def LowerOpaqueBlock() -> PrimFuncPass:
    """The ``tir.LowerOpaqueBlock`` pass (see the module docstring)."""

    def transform_function(func, mod, ctx):
        return lower_opaque_block(func) if has_blocks(func) else func

    return prim_func_pass(transform_function, opt_level=0, name="tir.LowerOpaqueBlock")
