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
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from enum import Enum
from typing import Any

import attrs

from .buffer import Buffer
from .dtype import DataType
from .expr import (
    EQ,
    GE,
    GT,
    LE,
    LT,
    NE,
    Add,
    And,
    BufferLoad,
    Div,
    FloatImm,
    FloorDiv,
    FloorMod,
    IntImm,
    Mod,
    Mul,
    Not,
    Or,
    PrimExpr,
    Ramp,
    SizeVar,
    Sub,
    Var,
)
from .function import IRModule, PrimFunc
from .functor import StmtExprVisitor, deep_recursion
from .intrin import INTRINSICS
from .node import DATA, STMT, STMTS, Node, child_fields
from .printer_decls import (
    alloc_scope,
    buffer_vars,
    buffer_views,
    is_implicit_view,
    is_zero32,
    let_vars,
)
from .printer_text import Names, const_text, quote, sanitize, type_text
from .stmt import Allocate, AssertStmt, ForKind, LetStmt, SeqStmt, Stmt

# Python operator precedence, loosest first: what decides where parentheses go.
OR, AND, NOT, CMP, ADD, MUL, UNARY, ATOM = range(1, 9)

_INFIX = {
    Add: (" + ", ADD), Sub: (" - ", ADD), Mul: (" * ", MUL), FloorDiv: (" // ", MUL),
    FloorMod: (" % ", MUL), And: (" and ", AND), Or: (" or ", OR),
    EQ: (" == ", CMP), NE: (" != ", CMP), LT: (" < ", CMP), LE: (" <= ", CMP),
    GT: (" > ", CMP), GE: (" >= ", CMP),
}
_PREC = {cls: prec for cls, (_, prec) in _INFIX.items()} | {Not: NOT}
_LOOP_FUNCS = {
    ForKind.SERIAL: "T.serial", ForKind.PARALLEL: "T.parallel",
    ForKind.VECTORIZED: "T.vectorized", ForKind.UNROLLED: "T.unroll",
    ForKind.THREAD_BINDING: "T.thread_binding",
}
# Calls whose result dtype cannot be read off their arguments print it first.
_TYPED_CALLS = {"tir.call_extern", "tir.call_pure_extern", "tir.reinterpret",
                "tir.get_active_lane_mask", "tir.call_llvm_intrin", "tir.call_llvm_pure_intrin"}
INDENT = "    "
_SCOPED = (LetStmt, AssertStmt, Allocate)
# TVMScript's names of block iter var kinds (IterVarType values: DataPar, CommReduce, ...)
_AXIS_KINDS = {0: "spatial", 2: "reduce", 3: "scan", 9: "opaque"}
_DISPATCH: dict[type, Any] = {}  # node class -> _Printer method


def _tvm_dtype_text(dtype: str) -> str:
    """``dtype`` as TVM writes it in a typed call: a bool vector is ``uint1xN`` there."""
    t = DataType(dtype)
    if t.is_bool and t.is_vector and not t.is_scalable:
        return f"uint1x{t.lanes}"
    return dtype


def script(node: Any) -> str:
    """TVMScript-style text of an expression, statement, buffer, PrimFunc or IRModule."""
    printer = _Printer()
    with deep_recursion():
        printer.print_top(node)
    return "".join(printer.out).rstrip("\n")


def _prec(e: PrimExpr) -> int:
    """How tightly the text of ``e`` binds, to decide on parentheses around it."""
    cls = type(e)
    if cls is IntImm:
        return UNARY if e.value < 0 and e.dtype == "int32" else ATOM
    if cls is Div:
        return MUL if DataType(e.dtype).is_float else ATOM
    return _PREC.get(cls, ATOM)


class _Printer(StmtExprVisitor):
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

    # ------------------------------------------------------------ entry points

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

    def module(self, mod: IRModule) -> None:
        """``@I.ir_module class Module:`` with each function, sorted by name."""
        self.out.append("# from tvm.script import ir as I\n# from tvm.script import tir as T\n\n")
        self.out.append("@I.ir_module\nclass Module:\n")
        self.indent = INDENT
        for i, name in enumerate(sorted(mod.functions)):
            if i:
                self.out.append("\n")
            self.names, self.aliased = Names(), set()  # each function names its own variables
            self.prim_func(mod.functions[name], name)
        if not mod.functions:
            self.line("pass")

    def prim_func(self, func: PrimFunc, name: str) -> None:
        """Decorator, signature, attributes, buffer declarations, then the body."""
        params = []
        for p in func.params:
            self.names.define(p, p.name)  # params stay named for the whole function
            ann = type_text(p.dtype, p.type_annotation)
            ann += "(is_size_var=True)" if isinstance(p, SizeVar) else ""
            params.append(f"{self.var_name(p)}: {ann}")
        ret = "" if func.ret_type is None else f" -> {type_text(str(func.ret_type))}"
        self.line("@T.prim_func")
        self.line(f"def {sanitize(name)}({', '.join(params)}){ret}:")
        outer = self.indent
        self.indent += INDENT
        if func.attrs:
            self.start("T.func_attr(")
            self.data(dict(sorted(func.attrs.items())))
            self.end(")")
        self.collect_views(func.body)
        self.free, top = [], len(self.out)
        for param in func.params:
            buf = func.buffer_map.get(param)
            if buf is not None:
                self.match_buffer(param, buf)
        for param in func.params:  # buffers over a handle param, or over a buffer's data
            buf = func.buffer_map.get(param)
            self.declare_views(param if buf is None else buf.data)
        self.visit_stmt(func.body)
        late, self.out = self.out, []
        for buf, data_name in self.pending:  # no let defined their vars: free, at the top
            self.view_line(buf, data_name)
        views, self.out, self.pending = self.out, late, []
        self.out[top:top] = views
        self.declare_free_vars(top)
        self.indent = outer

    def declare_free_vars(self, at: int) -> None:
        """``n = T.int32()`` at the top of the body for the variables it uses but no
        parameter, buffer or statement defines, so that the text reads back."""
        lines = []
        for v in self.free:
            size = "is_size_var=True" if isinstance(v, SizeVar) else ""
            ctor = type_text(v.dtype, v.type_annotation)
            call = ctor if ctor.endswith(")") else f"{ctor}({size})"
            lines.append(f"{self.indent}{self.names.of[id(v)]} = {call}\n")
        self.out[at:at] = lines

    def collect_views(self, body: Stmt) -> None:
        """Which buffers each data var is accessed through (see ``printer_decls``)."""
        self.views, self.let_vars = buffer_views(body), let_vars(body)

    def match_buffer(self, param: Var, buf: Buffer) -> None:
        """``A_1 = T.match_buffer(A, (n,), "float32")``, declaring new shape vars first."""
        for e in buf.shape + buf.strides + (buf.elem_offset,):
            if isinstance(e, Var) and id(e) not in self.names.of:  # defined by the match
                size = "is_size_var=True" if isinstance(e, SizeVar) else ""
                name = self.names.of[id(e)] = self.names.claim(e.name)
                self.line(f"{name} = {type_text(e.dtype)}({size})")
        name = self.names.of[id(buf)] = self.names.claim(buf.name)
        if id(buf.data) not in self.names.of:
            self.names.of[id(buf.data)] = f"{name}.data"
        self.start(f"{name} = T.match_buffer({self.var_name(param)}, ")
        self.buffer_args(buf)
        self.end(")")

    def buffer_decl(self, buf: Buffer) -> None:
        """A buffer on its own: ``A = T.Buffer((16,), "float32")``."""
        self.out.append(f"{self.buffer_name(buf)} = T.Buffer(")
        self.buffer_args(buf)
        self.out.append(")")

    def buffer_args(self, buf: Buffer) -> None:
        self.tuple_of(buf.shape)
        self.out.append(f", {quote(buf.dtype)}")
        if buf.strides:
            self.out.append(", strides=")
            self.tuple_of(buf.strides)
        if not is_zero32(buf.elem_offset):
            self.out.append(", elem_offset=")
            self.visit_expr(buf.elem_offset)
        if buf.scope:
            self.out.append(f", scope={quote(buf.scope)}")

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

    def operand(self, e: PrimExpr, min_prec: int) -> None:
        """``e``, in parentheses if it binds looser than ``min_prec``."""
        if _prec(e) < min_prec:
            self.out.append("(")
            self.visit_expr(e)
            self.out.append(")")
        else:
            self.visit_expr(e)

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

    def visit_var(self, v: Var) -> None:
        self.out.append(self.var_name(v))

    def visit_int_imm(self, e: IntImm) -> None:
        self.out.append(const_text(e))

    def visit_float_imm(self, e: FloatImm) -> None:
        self.out.append(const_text(e))

    def visit_string_imm(self, e: Any) -> None:
        self.out.append(quote(e.value))

    def visit_any(self, e: Any) -> None:
        self.out.append("T.Any()")

    def visit_binary_op_node(self, e: Any) -> None:
        self.infix(e, *_INFIX[type(e)])

    def infix(self, e: Any, text: str, prec: int) -> None:
        """``a op b``; a right operand of equal precedence is bracketed (``a - (b - c)``)."""
        if type(e.a) is IntImm and type(e.b) is IntImm and e.a.dtype == "int32":
            # `0 + 4` would read back as the Python number 4: spell the node's left constant
            self.out.append(f"T.int32({e.a.value})")
        else:
            self.operand(e.a, prec + 1 if prec == CMP else prec)  # comparisons do not chain
        self.out.append(text)
        self.operand(e.b, prec + 1)

    def visit_div(self, e: Div) -> None:
        if DataType(e.dtype).is_float:
            self.infix(e, " / ", MUL)
        else:
            self.call("T.truncdiv", e.a, e.b)

    def visit_mod(self, e: Mod) -> None:
        self.call("T.truncmod", e.a, e.b)

    def visit_min(self, e: Any) -> None:
        self.call("T.min", e.a, e.b)

    def visit_max(self, e: Any) -> None:
        self.call("T.max", e.a, e.b)

    def visit_not(self, e: Any) -> None:
        self.out.append("not ")
        self.operand(e.a, NOT)

    def visit_select(self, e: Any) -> None:
        self.call("T.Select", e.condition, e.true_value, e.false_value)

    def visit_cast(self, e: Any) -> None:
        self.out.append(f"T.Cast({quote(e.dtype)}, ")
        self.visit_expr(e.value)
        self.out.append(")")

    def visit_ramp(self, e: Ramp) -> None:
        self.out.append("T.Ramp(")
        self.args((e.base, e.stride))
        self.out.append(", ")
        self.lanes(e.lanes)
        self.out.append(")")

    def visit_broadcast(self, e: Any) -> None:
        self.out.append("T.Broadcast(")
        self.visit_expr(e.value)
        self.out.append(", ")
        self.lanes(e.lanes)
        self.out.append(")")

    def visit_shuffle(self, e: Any) -> None:
        self.out.append("T.Shuffle([")
        self.args(e.vectors)
        self.out.append("], [")
        self.args(e.indices)
        self.out.append("])")

    def visit_let(self, e: Any) -> None:
        token = self.names.define(e.var, e.var.name)
        self.out.append(f"T.let({self.var_name(e.var)}, ")
        self.args((e.value, e.body))
        self.out.append(")")
        self.names.release(token)

    def visit_call(self, e: Any) -> None:
        op = e.op
        if op in _TYPED_CALLS:
            dtype = quote(_tvm_dtype_text(e.dtype))
            self.out.append(f"T.{op[4:]}({dtype}{', ' if e.args else ''}")
            self.args(e.args)
            self.out.append(")")
        elif op.startswith("tir.") and op in INTRINSICS:
            self.call("T." + op[4:], *e.args)
        else:
            self.out.append(f"T.call_intrin({quote(e.dtype)}, {quote(op)}")
            self.out.append(", " if e.args else "")
            self.args(e.args)
            self.out.append(")")

    def visit_buffer_load(self, e: BufferLoad) -> None:
        if e.predicate is not None:
            self.out.append(f"{self.buffer_name(e.buffer)}.vload([")
            self.args(e.indices)
            self.out.append("], predicate=")
            self.visit_expr(e.predicate)
            self.out.append(")")
        else:
            self.subscript(e.buffer, e.indices)

    def subscript(self, buf: Buffer, indices: tuple) -> None:
        """``A[i, j]``; a last index ``Ramp(b, 1, n)`` prints as the slice ``b:b + n``
        when it is the only vector index (with vectors in other dimensions too, a slice
        would read as NumPy's outer indexing, so every index prints as written)."""
        if not indices:
            self.out.append(self.buffer_name(buf) + "[()]")  # a 0-d buffer
            return
        self.out.append(self.buffer_name(buf) + "[")
        last = indices[-1]
        if type(last) is Ramp and type(last.stride) is IntImm and last.stride.value == 1 \
                and not any(DataType(i.dtype).is_vector for i in indices[:-1]):
            self.args(indices[:-1])
            self.out.append(", " if len(indices) > 1 else "")
            self.operand(last.base, ADD)
            self.out.append(":")
            self.end_of(last.base, last.lanes)
        else:
            self.args(indices)
        self.out.append("]")

    def end_of(self, start: PrimExpr, length: Any) -> None:
        """``start + length`` (a slice end, a loop stop), folded when both are constants."""
        if type(start) is IntImm and isinstance(length, (int, IntImm)):
            self.out.append(const_text(IntImm(start.dtype, start.value + int(length))))
            return
        self.operand(start, ADD)
        self.out.append(" + ")
        if isinstance(length, PrimExpr):
            self.operand(length, ADD + 1)
        else:
            self.out.append(str(length))

    # ------------------------------------------------------------ statements

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

    def alloc_views(self, s: Allocate) -> None:
        """Name the buffers over an allocation: the one its shape and dtype describe takes
        the allocation's name (``p[i]``), others are declared (``B = T.Buffer(..., data=p)``)."""
        self.declare_views(s.buffer_var, s)

    def declare_views(self, data: Var, alloc: Allocate | None = None) -> None:
        """``B = T.Buffer(shape, dtype, data=p)`` for each buffer over the handle ``data``
        that has no name yet (all but the allocation's own, when ``alloc`` is given)."""
        var_name = None
        for buf in self.views.get(id(data), ()):
            if id(buf) in self.names.of:
                continue
            var_name = var_name or self.var_name(data)
            if alloc is not None and id(data) not in self.aliased and is_implicit_view(
                    buf, alloc, alloc_scope(self.views, alloc)):
                self.aliased.add(id(data))
                self.names.of[id(buf)] = var_name
                continue
            if self.waits_for_let(buf):
                self.pending.append((buf, var_name))  # its shape uses a let not printed yet
                continue
            self.view_line(buf, var_name)

    def waits_for_let(self, buf: Buffer) -> bool:
        """Whether ``buf``'s shape, strides or offset use a let var not printed yet."""
        return any(id(v) in self.let_vars and id(v) not in self.names.of
                   for v in buffer_vars(buf))

    def view_line(self, buf: Buffer, data_name: str) -> None:
        name = self.names.of.get(id(buf)) or self.names.claim(buf.name)
        self.names.of[id(buf)] = name
        self.start(f"{name} = T.Buffer(")
        self.buffer_args(buf)
        self.end(f", data={data_name})")

    def declare_pending_views(self) -> None:
        """The views whose shape vars are all defined now (after a let)."""
        waiting = []
        for buf, data_name in self.pending:
            if self.waits_for_let(buf):
                waiting.append((buf, data_name))
            else:
                self.view_line(buf, data_name)
        self.pending = waiting

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
