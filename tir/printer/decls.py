"""How the printer writes declarations: functions, modules, parameters' buffers, and a
``T.Buffer(..., data=p)`` for each buffer over a handle (which ones: ``views.py``), so
that the text reads back.
"""

from __future__ import annotations

from ..buffer import Buffer
from ..expr import SizeVar, Var
from ..function import IRModule, PrimFunc
from ..stmt import Allocate, Stmt
from .base import INDENT, PrinterBase
from .text import Names, quote, sanitize, type_text
from .views import alloc_scope, buffer_vars, buffer_views, is_implicit_view, is_zero32, let_vars


class DeclPrinter(PrinterBase):
    """Functions and modules, and the declarations of their variables and buffers."""

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
        """Which buffers each data var is accessed through (see ``views``)."""
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
