"""How the printer writes statements: loops, ifs, blocks, stores, and lets, asserts and
allocates (flat before the rest of a body, or under ``with`` when statements follow).
"""

from __future__ import annotations

from typing import Any

from ..expr import IntImm, PrimExpr
from ..stmt import Allocate, AssertStmt, ForKind, LetStmt, SeqStmt, Stmt
from .base import INDENT, PrinterBase
from .text import quote, type_text
from .views import alloc_scope

_LOOP_FUNCS = {
    ForKind.SERIAL: "T.serial", ForKind.PARALLEL: "T.parallel",
    ForKind.VECTORIZED: "T.vectorized", ForKind.UNROLLED: "T.unroll",
    ForKind.THREAD_BINDING: "T.thread_binding",
}
_SCOPED = (LetStmt, AssertStmt, Allocate)
# TVMScript's names of block iter var kinds (IterVarType values: DataPar, CommReduce, ...)
_AXIS_KINDS = {0: "spatial", 2: "reduce", 3: "scan", 9: "opaque"}


class StmtPrinter(PrinterBase):
    """One ``visit_*`` per statement node; chains of scoped statements iterated."""

    def visit_buffer_store(self, s: Any) -> None:
        self.start()
        if s.predicate is not None:
            self.out.append(f"{self.buffer_name(s.buffer)}.vstore([")
            self.args(s.indices)
            self.out.append("], ")
            self.visit_expr(s.value)
            self.out.append(", predicate=")
            self.visit_expr(s.predicate)
            self.end(")")
            return
        self.subscript(s.buffer, s.indices)
        self.out.append(" = ")
        self.visit_expr(s.value)
        self.end()

    def visit_seq_stmt(self, s: Any) -> None:
        visit = self.visit_stmt
        items = s.seq
        if any(type(item) is SeqStmt for item in items):  # nested: one flat list, as printed
            items = _flat_seq(items)
        last = len(items) - 1
        for k, item in enumerate(items):
            if k < last and type(item) in _SCOPED:
                self.scoped(item)  # printed flat, the statements after it would join its body
            else:
                visit(item)

    def scoped(self, s: Stmt) -> None:
        """A let, assert or allocate before other statements: ``with`` shows where it ends."""
        if type(s) is LetStmt:
            token = self.names.define(s.var, s.var.name)
            self.start("with T.LetStmt(")
            self.visit_expr(s.value)
            self.end(f") as {self.var_name(s.var)}:")
        elif type(s) is AssertStmt:
            token = None
            self.start("with T.Assert(")
            self.args((s.condition, s.message))
            self.end("):")
        else:
            token = self.names.define(s.buffer_var, s.buffer_var.name)
            self.start("with ")
            self.alloc_call(s)
            self.end(f" as {self.var_name(s.buffer_var)}:")
            outer = self.indent
            self.indent += INDENT
            self.alloc_views(s)
            self.indent = outer
        self.block(s.body)
        if token is not None:
            self.names.release(token)

    def visit_for(self, s: Any) -> None:
        token = self.names.define(s.loop_var, s.loop_var.name)
        self.start(f"for {self.var_name(s.loop_var)} in ")
        plain = s.kind == ForKind.SERIAL and not s.annotations
        self.out.append("range(" if plain else _LOOP_FUNCS[s.kind] + "(")
        self.loop_range(s.min, s.extent)
        if s.kind == ForKind.THREAD_BINDING:
            self.out.append(", thread=")
            self.data(s.thread_binding)
        if s.annotations:
            self.out.append(", annotations=")
            self.data(dict(s.annotations))
        self.end("):")
        self.block(s.body)
        self.names.release(token)

    def loop_range(self, lo: PrimExpr, extent: PrimExpr) -> None:
        """``n`` from 0, else ``lo, lo + extent`` (folded when both are constants)."""
        if type(lo) is IntImm and lo.value == 0:
            self.visit_expr(extent)
            return
        self.visit_expr(lo)
        self.out.append(", ")
        self.end_of(lo, extent)

    def visit_while(self, s: Any) -> None:
        self.start("while ")
        self.visit_expr(s.condition)
        self.end(":")
        self.block(s.body)

    def visit_if_then_else(self, s: Any) -> None:
        self.start("if ")
        self.visit_expr(s.condition)
        self.end(":")
        self.block(s.then_case)
        if s.else_case is not None:
            self.line("else:")
            self.block(s.else_case)

    def visit_attr_stmt(self, s: Any) -> None:
        self.start("with T.attr(")
        self.data(s.node)
        self.out.append(f", {quote(s.attr_key)}, ")
        self.visit_expr(s.value)
        self.end("):")
        self.block(s.body)

    def visit_evaluate(self, s: Any) -> None:
        self.start("T.evaluate(")
        self.visit_expr(s.value)
        self.end(")")

    def visit_block_realize(self, s: Any) -> None:
        """``with T.block(name):`` then the iter var bindings, as TVMScript prints them."""
        b = s.block
        self.start(f"with T.block({quote(b.name_hint)}):")
        self.end()
        outer = self.indent
        self.indent += INDENT
        tokens = []
        for iv, value in zip(b.iter_vars, s.iter_values):
            tokens.append(self.names.define(iv.var, iv.var.name))
            kind = _AXIS_KINDS.get(iv.iter_type, "spatial")
            self.start(f"{self.var_name(iv.var)} = T.axis.{kind}(")
            if type(iv.min) is IntImm and iv.min.value == 0:
                self.visit_expr(iv.extent)
            else:
                self.out.append("(")
                self.visit_expr(iv.min)
                self.out.append(", ")
                self.end_of(iv.min, iv.extent)
                self.out.append(")")
            self.out.append(", ")
            self.visit_expr(value)
            self.end(")")
        if not (type(s.predicate) is IntImm and s.predicate.value):
            self.start("T.where(")
            self.visit_expr(s.predicate)
            self.end(")")
        self.block_contents(b)
        for token in reversed(tokens):
            self.names.release(token)
        self.indent = outer

    def visit_block(self, b: Any) -> None:
        """A block without its realize (printed alone): its iter vars, then its contents."""
        self.start(f"with T.block({quote(b.name_hint)}):")
        self.end()
        outer = self.indent
        self.indent += INDENT
        tokens = [self.names.define(iv.var, iv.var.name) for iv in b.iter_vars]
        for iv in b.iter_vars:
            self.start(f"# {iv.script()}")
            self.end()
        self.block_contents(b)
        for token in reversed(tokens):
            self.names.release(token)
        self.indent = outer

    def block_contents(self, b: Any) -> None:
        tokens = []
        for buf in b.alloc_buffers:
            tokens.append(self.names.define(buf.data, buf.name))
            name = self.names.of[id(buf)] = self.var_name(buf.data)  # the buffer is named so
            self.aliased.add(id(buf.data))
            self.start(f"{name} = T.alloc_buffer(")
            self.buffer_args(buf)
            self.end(")")
            self.declare_views(buf.data)
        if b.annotations:
            self.start("T.block_attr(")
            self.data(dict(b.annotations))
            self.end(")")
        if b.init is not None:
            self.start("with T.init():")
            self.end()
            self.block(b.init)
        self.visit_stmt(b.body)
        for token in reversed(tokens):
            self.names.release(token)

    def visit_let_stmt(self, s: Stmt) -> None:
        self.flat_chain(s)

    visit_assert_stmt = visit_allocate = visit_let_stmt

    def flat_chain(self, s: Stmt) -> None:
        """Statements whose body prints at their own indentation, iterated, not recursed."""
        tokens = []
        heads = {LetStmt: self.let_head, AssertStmt: self.assert_head, Allocate: self.alloc_head}
        head = heads.get(type(s))
        while head is not None:
            token = head(s)
            if token is not None:
                tokens.append(token)
            s = s.body
            head = heads.get(type(s))
        self.visit_stmt(s)
        for token in reversed(tokens):
            self.names.release(token)

    def let_head(self, s: LetStmt) -> Any:
        token = self.names.define(s.var, s.var.name)
        self.start(f"{self.var_name(s.var)}: {type_text(s.var.dtype, s.var.type_annotation)} = ")
        self.visit_expr(s.value)
        self.end()
        if s.var.dtype == "handle":
            self.declare_views(s.var)
        if self.pending:
            self.declare_pending_views()
        return token

    def assert_head(self, s: AssertStmt) -> None:
        self.start("assert ")
        self.visit_expr(s.condition)
        self.out.append(", ")
        self.visit_expr(s.message)
        self.end()

    def alloc_head(self, s: Allocate) -> Any:
        token = self.names.define(s.buffer_var, s.buffer_var.name)
        self.start(f"{self.var_name(s.buffer_var)} = ")
        self.alloc_call(s)
        self.end()
        self.alloc_views(s)
        return token

    def alloc_call(self, s: Allocate) -> None:
        """``T.allocate([16], "float32", "global")`` with its condition and annotations."""
        self.out.append("T.allocate([")
        self.args(s.extents)
        self.out.append(f"], {quote(s.dtype)}, {quote(alloc_scope(self.views, s))}")
        if not (type(s.condition) is IntImm and s.condition.value):
            self.out.append(", condition=")
            self.visit_expr(s.condition)
        if s.annotations:
            self.out.append(", annotations=")
            self.data(dict(s.annotations))
        self.out.append(")")


def _flat_seq(items: tuple) -> list:
    """The statements of nested ``SeqStmt``s at any depth, in order (iterated)."""
    out: list = []
    stack = [iter(items)]
    while stack:
        for item in stack[-1]:
            if type(item) is SeqStmt:
                stack.append(iter(item.seq))
                break
            out.append(item)
        else:
            stack.pop()
    return out
