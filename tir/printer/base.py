"""The printer's state and the means every part of it writes with.

``PrinterBase`` holds the text pieces written so far (``out``), the indentation and
the table of printed names; it dispatches each node to its ``visit_*`` method (one
dict lookup per node), names variables and buffers, lays out lines, and prints the
non-IR values of annotations and attributes (``data``). Nodes without a printer of
their own print as ``T.ClassName(field=value, ...)`` (``generic_visit``).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from enum import Enum
from typing import Any

import attrs

from ..buffer import Buffer
from ..expr import IntImm, PrimExpr, Var
from ..functor import StmtExprVisitor
from ..node import DATA, STMT, STMTS, Node, child_fields
from ..stmt import Stmt
from .text import Names, quote

INDENT = "    "
_DISPATCH: dict[type, Any] = {}  # node class -> _Printer method


class PrinterBase(StmtExprVisitor):
    """Writes text pieces into ``self.out``; one ``visit_*`` per node class."""

    def __init__(self):
        self.out: list[str] = []
        self.indent = ""
        self.names = Names()
        self.aliased: set[int] = set()  # data vars that already lend their name to a buffer
        self.views: dict[int, list[Buffer]] = {}  # id(data var) -> the buffers accessed over it
        self.free: list[Var] = []  # variables named where first used, not where defined
        self.pending: list[tuple[Buffer, str]] = []  # views waiting for their shape's lets
        self.let_vars: set[int] = set()  # ids of the vars LetStmts bind

    # One dict lookup per node: the printer visits every node of large programs.
    def visit_expr(self, e: PrimExpr) -> None:
        fn = _DISPATCH.get(type(e))
        if fn is None:
            fn = _DISPATCH[type(e)] = self._resolve(type(e))
        fn(self, e)

    visit_stmt = visit_expr

    # ------------------------------------------------------------ names

    def var_name(self, v: Var) -> str:
        """The printed name of ``v``; a free variable is named when first met."""
        name = self.names.of.get(id(v))
        if name is None:
            name = self.names.of[id(v)] = self.names.claim(v.name)
            self.free.append(v)
        return name

    def buffer_name(self, buf: Buffer) -> str:
        """The printed name of ``buf``; a buffer named like its data var shares its name."""
        name = self.names.of.get(id(buf))
        if name is not None:
            return name
        data_name = self.names.of.get(id(buf.data))
        if (buf.name == buf.data.name and data_name is not None and data_name.isidentifier()
                and id(buf.data) not in self.aliased):
            self.aliased.add(id(buf.data))
            name = data_name
        else:
            name = self.names.claim(buf.name)
        self.names.of[id(buf)] = name
        return name

    # ------------------------------------------------------------ layout helpers

    def line(self, text: str) -> None:
        self.out.append(f"{self.indent}{text}\n")

    def start(self, text: str = "") -> None:
        self.out.append(self.indent + text)

    def end(self, text: str = "") -> None:
        self.out.append(text + "\n")

    def block(self, body: Stmt) -> None:
        """``body`` one level deeper."""
        outer = self.indent
        self.indent += INDENT
        self.visit_stmt(body)
        self.indent = outer

    def args(self, items: Any) -> None:
        """Comma-separated expressions."""
        out = self.out
        for i, e in enumerate(items):
            if i:
                out.append(", ")
            self.visit_expr(e)

    def call(self, func: str, *items: Any) -> None:
        self.out.append(func + "(")
        self.args(items)
        self.out.append(")")

    def tuple_of(self, items: tuple) -> None:
        self.out.append("(")
        self.args(items)
        self.out.append(",)" if len(items) == 1 else ")")

    def lanes(self, lanes: Any) -> None:
        if isinstance(lanes, PrimExpr):
            self.visit_expr(lanes)
        else:
            self.out.append(str(lanes))

    @functools.singledispatchmethod
    def data(self, value: Any) -> None:
        """A non-IR value: annotations, attribute values, ``AttrStmt.node``."""
        self.out.append(repr(value))

    @data.register
    def _(self, value: PrimExpr) -> None:
        if type(value) is IntImm and value.dtype == "int32":
            self.out.append(f"T.int32({value.value})")  # a bare 4 would read back as an int
        else:
            self.visit_expr(value)

    @data.register
    def _(self, value: Buffer) -> None:
        self.out.append(self.buffer_name(value))

    @data.register
    def _(self, value: str) -> None:
        self.out.append(quote(value))

    @data.register
    def _(self, value: Enum) -> None:
        self.out.append(f"{type(value).__name__}.{value.name}")

    @data.register
    def _(self, value: Mapping) -> None:
        self.out.append("{")
        for i, (k, v) in enumerate(value.items()):
            self.out.append(", " if i else "")
            self.data(k)
            self.out.append(": ")
            self.data(v)
        self.out.append("}")

    @data.register(list)
    @data.register(tuple)
    def _(self, value: Any) -> None:
        self.out.append("[")
        for i, v in enumerate(value):
            self.out.append(", " if i else "")
            self.data(v)
        self.out.append("]")

    # ------------------------------------------------------------ expressions

    def generic_visit(self, node: Node) -> None:
        """Nodes without a printer of their own: ``T.ClassName(field=value, ...)``.

        A statement prints its statement children as blocks under ``with T.ClassName(...):``.
        """
        kinds = {name: kind for name, kind, _ in child_fields(type(node))}
        fields, bodies = [], []
        for name in (f.name for f in attrs.fields(type(node)) if f.init):
            kind, value = kinds.get(name, DATA), getattr(node, name)
            if kind == STMT:
                bodies += [value] if value is not None else []
            elif kind == STMTS:
                bodies += value
            else:
                fields.append((name, value))
        is_stmt = isinstance(node, Stmt)
        if is_stmt:
            self.start("with " if bodies else "")
        self.out.append(f"T.{type(node).__name__}(")
        for i, (name, value) in enumerate(fields):
            self.out.append(f"{', ' if i else ''}{name}=")
            self.data(value)
        self.out.append(")")
        if is_stmt:
            self.end(":" if bodies else "")
            for body in bodies:
                self.block(body)
