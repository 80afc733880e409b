"""TVMScript-style text for TIR nodes: what ``str(node)`` and ``node.script()`` show.

>>> from tir import Var
>>> x = Var("x")
>>> print((x + 1) * 2)
(x + 1) * 2

The output reads like TVMScript (``for i in T.vectorized(4):``,
``A[i * 4:i * 4 + 4]``, ``T.Broadcast(T.float32(1), 4)``). Variables and
buffers are printed by name; two different objects with the same name get
deterministic suffixes (``i``, ``i_1``), and a loop or let variable's name is
free again once its scope ends, so sibling loops may both print ``i``.

The printer recurses in pure Python under ``deep_recursion()`` (deep
expressions are fine), iterates over ``SeqStmt`` items and flat chains of
``LetStmt``/``AssertStmt``/``Allocate``, and writes every piece into one list
joined at the end.

One module per part: ``base`` (state, names, layout, dispatch), ``exprs``, ``stmts``,
``decls`` (functions, modules, buffer declarations), ``views`` (which buffers need
declaring) and ``text`` (literals, type names, unique names).
"""

from __future__ import annotations

from typing import Any

from ..buffer import Buffer
from ..expr import PrimExpr
from ..function import IRModule, PrimFunc
from ..functor import deep_recursion
from ..stmt import Stmt
from .decls import DeclPrinter
from .exprs import ExprPrinter
from .stmts import StmtPrinter


def script(node: Any) -> str:
    """TVMScript-style text of an expression, statement, buffer, PrimFunc or IRModule."""
    printer = _Printer()
    with deep_recursion():
        printer.print_top(node)
    return "".join(printer.out).rstrip("\n")


class _Printer(DeclPrinter, StmtPrinter, ExprPrinter):
    """The whole printer: declarations, statements and expressions."""

    def print_top(self, node: Any) -> None:
        """Print any node; functions and modules get the TVMScript import header."""
        if isinstance(node, PrimExpr):
            self.visit_expr(node)
        elif isinstance(node, Stmt):
            self.collect_views(node)
            self.visit_stmt(node)
        elif isinstance(node, Buffer):
            self.buffer_decl(node)
        elif isinstance(node, PrimFunc):
            self.out.append("# from tvm.script import tir as T\n\n")
            self.prim_func(node, node.attrs.get("global_symbol", "main"))
        elif isinstance(node, IRModule):
            self.module(node)
        else:
            self.data(node)


__all__ = ["script"]
