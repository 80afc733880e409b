"""``LowerInitBlock``: a block's reduction ``init`` becomes a guarded first statement.

``Block(init=I, body=B)`` with reduce iter vars ``k1 .. kn`` becomes
``Block(body=SeqStmt([if k1 == min1 and .. kn == minn: I, B]))``: the init
runs at the first point of the reduction, before the update (TVM's
``tir.LowerInitBlock``). Without reduce iter vars the init simply comes first.
Functions without blocks come back unchanged (the same object).
"""

from __future__ import annotations

from tir import op
from tir.block import Block
from tir.functor import StmtMutator, deep_recursion
from tir.node import replace
from tir.stmt import IfThenElse, SeqStmt, Stmt

from ..pass_base import PrimFuncPass, prim_func_pass
from .analysis import has_blocks


def lower_init(block: Block, body: Stmt) -> Stmt:
    """``body`` preceded by ``block``'s init, guarded by its reduce iter vars being at their min."""
    init = block.init
    cond = None
    for iv in block.iter_vars:
        if iv.is_reduce:
            first = op.equal(iv.var, iv.min)
            cond = first if cond is None else op.logical_and(cond, first)
    if cond is not None:
        init = IfThenElse(cond, init)
    return SeqStmt.flatten(init, body)


class InitBlockLowerer(StmtMutator):
    """Moves every block's ``init`` into its body."""

    def visit_block(self, block: Block) -> Block:
        block = self.generic_visit(block)
        if block.init is None:
            return block
        return replace(block, init=None, body=lower_init(block, block.body))


def LowerInitBlock() -> PrimFuncPass:
    """The ``tir.LowerInitBlock`` pass (see the module docstring)."""

    def transform_function(func, mod, ctx):
        if not has_blocks(func):
            return func
        with deep_recursion():
            return func.with_body(InitBlockLowerer()(func.body))

    return prim_func_pass(transform_function, opt_level=0, name="tir.LowerInitBlock")
