"""IR pieces the reduction rewrites (``vectorize_reductions.py``) build from.

Local accumulator buffers and their ``Allocate``, serial loops that vanish
when they run nothing, a balanced tree of a combining op, and statement
replacement by identity.
"""

from __future__ import annotations

from tir import op
from tir.buffer import decl_buffer
from tir.expr import BufferLoad, IntImm, PrimExpr, Var
from tir.functor import StmtMutator
from tir.stmt import Allocate, BufferStore, For, ForKind, Stmt


def tree(combine, xs: list) -> PrimExpr:
    """``xs`` combined pairwise by ``combine`` (a node class such as ``Add``, or any
    function of two expressions): a balanced tree, ``log2(len(xs))`` deep."""
    while len(xs) > 1:
        xs = [combine(xs[i], xs[i + 1]) for i in range(0, len(xs) - 1, 2)] + \
             ([xs[-1]] if len(xs) % 2 else [])
    return xs[0]


def load_of(store: BufferStore) -> BufferLoad:
    """The load of the element ``store`` writes."""
    return BufferLoad(store.buffer, list(store.indices))


class ReplaceStmts(StmtMutator):
    """Replaces the statements of a table (by identity) with their new statements."""

    def __init__(self, table: dict):
        self.table = table

    def visit_stmt(self, stmt: Stmt) -> Stmt:
        new = self.table.get(id(stmt))
        return new if new is not None else super().visit_stmt(stmt)


def local_buffer(name: str, dtype: str, size: int | PrimExpr):
    """A 1-D local buffer of ``size`` elements (``size`` may be ``k * vscale()``)."""
    data = Var(name, "handle", type_annotation=dtype)
    return decl_buffer((size,), dtype, name, data=data, scope="local")


def allocate(buf, body: Stmt) -> Stmt:
    """``body`` inside the ``Allocate`` of ``buf``."""
    return Allocate(buf.data, buf.dtype, list(buf.shape), op.const(True, "bool"), body)


def serial_loop(var: Var, extent: PrimExpr, body: Stmt) -> Stmt | None:
    """``for var in range(extent): body``, or None when it runs no iteration."""
    if isinstance(extent, IntImm) and extent.value == 0:
        return None
    return For(var, op.const(0, var.dtype), extent, ForKind.SERIAL, body)


__all__ = ["ReplaceStmts", "allocate", "load_of", "local_buffer", "serial_loop", "tree"]
