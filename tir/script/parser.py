"""The statement walker: a ``def`` of TVMScript (as a Python ``ast``) into a ``PrimFunc``.

Statements map one to one onto TIR, with ``tir.script.builtins`` saying what
each ``T.`` call means:

- a statement that binds a name for the rest of its scope (``x = expr``,
  ``p = T.allocate(...)``, ``assert``, ``T.Assert``, ``T.decl_buffer`` without
  ``data``) wraps the statements after it: ``visit_body`` collects these
  wrappers and applies them innermost first, iterating (long functions do not
  recurse);
- ``for``, ``while``, ``if`` and ``with`` build their node around their body;
- ``T.func_attr``, ``T.where``, ``T.block_attr``, ``T.alloc_buffer`` and
  ``T.axis.*`` set properties of the enclosing function or block.

As in TVM, a function with blocks in it gets a ``"root"`` block around its body
unless it has one (a block without iter vars as the whole body).
"""

from __future__ import annotations

import ast
from typing import Any, Callable

import attrs

from .. import dtype as dt
from .. import op
from ..buffer import Buffer
from ..expr import PrimExpr, StringImm, Var, access_dtype
from ..function import PrimFunc
from ..stmt import (
    Allocate,
    AssertStmt,
    AttrStmt,
    BufferStore,
    Evaluate,
    For,
    ForKind,
    IfThenElse,
    LetStmt,
    SeqStmt,
    Stmt,
    While,
)
from . import builtins as T
from .blocks import BlockMixin, BlockState
from .errors import Source
from .expr import Evaluator, as_index, offset_of

_KINDS = {"serial": ForKind.SERIAL, "parallel": ForKind.PARALLEL,
          "vectorized": ForKind.VECTORIZED, "unroll": ForKind.UNROLLED,
          "thread_binding": ForKind.THREAD_BINDING}
Wrapper = Callable[[Stmt], Stmt]


@attrs.define
class _Wrap:
    """A statement that holds the rest of its scope as its body."""

    build: Wrapper


class FunctionParser(BlockMixin):
    """Parses one ``ast.FunctionDef`` into a ``PrimFunc``."""

    def __init__(self, source: Source, outer: dict[str, Any]):
        self.source = source
        self.ev = Evaluator(source, outer)
        self.known: set[int] = set()  # ids of the vars defined so far
        self.attrs: dict[str, Any] = {}
        self.params: list[Var] = []
        self.buffer_map: dict[Var, Buffer] = {}
        self.blocks: list[BlockState] = []
        self.root_allocs: list[Buffer] = []
        self.loops: dict[int, tuple[PrimExpr, PrimExpr]] = {}  # loop var -> (min, extent)
        self.saw_block = False

    def error(self, node: Any, message: str) -> Exception:
        return self.source.error(node, message)

    # ------------------------------------------------------------ the function

    def parse(self, node: ast.FunctionDef) -> PrimFunc:
        """The ``PrimFunc`` of ``node``."""
        if node.args.vararg or node.args.kwarg or node.args.kwonlyargs:
            raise self.error(node, "a prim_func takes plain parameters only (no *args, **kw)")
        for arg in node.args.posonlyargs + node.args.args:
            self.param(arg)
        ret_type = None
        if node.returns is not None:
            ret = self.ev.eval(node.returns)
            ret_type = None if ret is None else self.dtype_of(ret, node.returns)  # -> None
        body = node.body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            body = body[1:]  # the docstring
        stmt = self.visit_body(body)
        stmt = self.with_root_block(stmt)
        return self.build(node, PrimFunc, self.params, stmt, ret_type=ret_type,
                          buffer_map=self.buffer_map, attrs=self.attrs or None)

    def param(self, arg: ast.arg) -> None:
        """``A: T.Buffer((n,), "float32")``, ``a: T.handle``, ``n: T.int32``."""
        if arg.annotation is None:
            raise self.error(arg, f"parameter {arg.arg!r} needs a type annotation such as "
                             "T.int32, T.handle or T.Buffer((16,), \"float32\")")
        ann = arg.annotation
        value = self.ev.eval(ann, name=arg.arg)
        if isinstance(value, Buffer):
            if value.name != arg.arg:
                value = attrs.evolve(value, name=arg.arg)
            var = Var(arg.arg, "handle")
            self.buffer_map[var] = value
            self.define_buffer_vars(value)
        elif isinstance(value, T.HandleType):
            var = Var(arg.arg, "handle", type_annotation=value.annotation)
        elif isinstance(value, Var):  # n: T.int32(is_size_var=True)
            var = type(value)(arg.arg, value.dtype)
        else:
            var = Var(arg.arg, self.dtype_of(value, ann))
        self.params.append(var)
        self.known.add(id(var))
        self.ev.define(arg.arg, value if isinstance(value, Buffer) else var)

    def define_buffer_vars(self, buf: Buffer) -> None:
        self.known.add(id(buf.data))
        for e in buf.shape + buf.strides + (buf.elem_offset,):
            if isinstance(e, Var):
                self.known.add(id(e))

    def dtype_of(self, value: Any, node: ast.AST) -> str:
        """The dtype a type annotation names (``T.int32``, ``"float32"``, ``T.handle``)."""
        if isinstance(value, (T.DType, T.HandleType)):
            return value.dtype
        if isinstance(value, str):
            try:
                return dt.canonical(value)
            except (TypeError, ValueError):
                pass
        raise self.error(node, f"expected a type such as T.int32 or T.handle, got "
                         f"{type(value).__name__}")

    # ------------------------------------------------------------ bodies

    def visit_body(self, stmts: list[ast.stmt]) -> Stmt:
        """The statements of one scope; binding statements wrap the ones after them."""
        self.ev.push()
        try:
            levels: list[tuple[list[Stmt], _Wrap]] = []
            out: list[Stmt] = []
            for node in stmts:
                result = self.visit(node)
                if isinstance(result, _Wrap):
                    levels.append((out, result))
                    out = []
                elif result is not None:
                    out.append(result)
            body = SeqStmt.flatten(out)
            while levels:
                out, wrap = levels.pop()
                out.append(wrap.build(body))
                body = SeqStmt.flatten(out)
            return body
        finally:
            self.ev.pop()

    def visit(self, node: ast.stmt) -> Stmt | _Wrap | None:
        method = getattr(self, f"visit_{type(node).__name__}", None)
        if method is None:
            raise self.error(node, f"unsupported statement: {type(node).__name__} "
                             "(a prim_func holds loops, blocks, assignments, if/while, "
                             "with, assert and T.* calls)")
        return method(node)

    def visit_Pass(self, node: ast.Pass) -> None:
        return None

    def visit_Expr(self, node: ast.Expr) -> Stmt | _Wrap | None:
        call = node.value
        if isinstance(call, ast.Call):
            func = self.ev.eval(call.func)
            if func is T.reads or func is T.writes:
                return None  # tirlite derives a block's regions from its body
        value = self.ev.eval(call)
        if isinstance(value, Stmt):
            return value
        if isinstance(value, T.Directive):
            return self.directive(value, node)
        if isinstance(value, T.AssertFrame):
            return self.assert_wrap(value.condition, value.message, node)
        if isinstance(value, PrimExpr):
            return Evaluate(value)
        if isinstance(value, str) or value is None:
            return None  # a string on its own line is a comment; a Python call did its work
        raise self.error(node, f"expected a statement, got {type(value).__name__}")

    def directive(self, d: T.Directive, node: ast.AST) -> None:
        if d.kind == "func_attr":
            if self.blocks:
                raise self.error(node, "T.func_attr belongs at the top of the function")
            self.attrs.update(d.value)
            return None
        if not self.blocks:
            raise self.error(node, f"T.{d.kind} belongs inside a T.block")
        blk = self.blocks[-1]
        if d.kind == "where":
            blk.predicate = d.value
        elif d.kind == "block_attr":
            blk.annotations.update(d.value)
        return None

    def visit_Assert(self, node: ast.Assert) -> _Wrap:
        cond = self.ev.eval(node.test)
        msg = self.ev.eval(node.msg) if node.msg is not None else ""
        return self.assert_wrap(cond, msg, node)

    def assert_wrap(self, cond: Any, msg: Any, node: ast.AST) -> _Wrap:
        if isinstance(msg, str):
            msg = StringImm(msg)
        return _Wrap(lambda body: self.build(node, AssertStmt, cond, msg, body))

    def build(self, node: ast.AST, cls: Any, *args: Any, **kwargs: Any) -> Any:
        """``cls(*args)``; a failure is a ``ParseError`` at ``node``."""
        try:
            return cls(*args, **kwargs)
        except (TypeError, ValueError) as err:
            raise self.error(node, str(err)) from None

    def visit_Return(self, node: ast.Return) -> Stmt:
        value = self.ev.eval_expr(node.value, "a returned value") if node.value else 0
        return Evaluate(op.ret(value))

    # ------------------------------------------------------------ assignments

    def visit_Assign(self, node: ast.Assign) -> Stmt | _Wrap | None:
        if len(node.targets) != 1:
            raise self.error(node, "assign to one target at a time (a = b = c is not TIR)")
        target = node.targets[0]
        if isinstance(target, ast.Subscript):
            return self.store(target, self.ev.eval(node.value), node)
        if isinstance(target, ast.Name):
            return self.bind(target, self.ev.eval(node.value, name=target.id), node)
        if isinstance(target, (ast.Tuple, ast.List)):
            return self.bind_tuple(target, self.ev.eval(node.value), node)
        raise self.error(target, "expected a name, a tuple of names or buffer[indices]")

    def visit_AnnAssign(self, node: ast.AnnAssign) -> _Wrap:
        """``x: T.int32 = value``: a ``LetStmt`` of that dtype."""
        if not isinstance(node.target, ast.Name) or node.value is None:
            raise self.error(node, "expected name: type = value")
        ann = self.ev.eval(node.annotation)
        dtype = self.dtype_of(ann, node.annotation)
        annotation = getattr(ann, "annotation", None)
        value = self.ev.eval(node.value)
        if not isinstance(value, PrimExpr):
            value = self.build(node.value, op.const, value, dtype)
        var = Var(node.target.id, dtype, type_annotation=annotation)
        return self.let_wrap(node.target.id, var, value, node)

    def visit_AugAssign(self, node: ast.AugAssign) -> Stmt:
        """``A[i] += v``: a store of ``A[i] + v``."""
        target = node.target
        if not isinstance(target, ast.Subscript):
            raise self.error(node, "only buffer elements can be updated in place (A[i] += v); "
                             "a name is bound once")
        load = ast.Subscript(value=target.value, slice=target.slice, ctx=ast.Load())
        expr = ast.BinOp(left=load, op=node.op, right=node.value)
        ast.copy_location(load, target)
        ast.copy_location(expr, node)
        return self.store(target, self.ev.eval(expr), node)

    def store(self, target: ast.Subscript, value: Any, node: ast.AST) -> Stmt:
        buf = self.ev.as_buffer(self.ev.eval(target.value))
        if buf is None:
            raise self.error(target.value, "only buffers can be stored to")
        indices = self.ev.indices(buf, target.slice)
        if isinstance(value, PrimExpr):
            value = self.build(node, _store_cast, buf, value, indices)
        return self.build(node, BufferStore, buf, value, indices)

    def bind_tuple(self, target: ast.Tuple, value: Any, node: ast.AST) -> _Wrap | None:
        if isinstance(value, T.Remap):
            value = self.remap(value, node)
        if not isinstance(value, (list, tuple)) or len(value) != len(target.elts):
            raise self.error(node, f"cannot unpack {type(value).__name__} into "
                             f"{len(target.elts)} names")
        wraps = []
        for elt, item in zip(target.elts, value):
            if not isinstance(elt, ast.Name):
                raise self.error(elt, "expected a name")
            result = self.bind(elt, item, node)
            if result is not None:
                wraps.append(result)
        if not wraps:
            return None
        return _Wrap(lambda body: _wrap_all(wraps, body))

    #: ``name = T.<declaration>(...)``: the method binding each kind of declaration; each
    #: takes ``(name, declaration, node)``, the node placing its errors.
    _DECLARATIONS = {
        T.MatchBuffer: "match_buffer",
        T.AllocBuffer: "alloc_buffer",
        T.DeclBuffer: "decl_buffer",
        T.Allocate: "allocate",
        T.Axis: "axis",
        T.MetaVar: "meta_var",
    }

    def bind(self, target: ast.Name, value: Any, node: ast.AST) -> _Wrap | None:
        """``name = value``: what it means depends on what ``value`` is."""
        if isinstance(value, T.Remap):
            value = self.single_axis(value, node)
        method = self._DECLARATIONS.get(type(value))
        if method is not None:
            return getattr(self, method)(target.id, value, node)
        return self.bind_value(target.id, value, node)

    def single_axis(self, value: T.Remap, node: ast.AST) -> Any:
        """``v = T.axis.remap("S", [i])``: the one iter var it makes."""
        axes = self.remap(value, node)
        if len(axes) != 1:
            raise self.error(node, f"T.axis.remap makes {len(axes)} iter vars; unpack them "
                             "into as many names")
        return axes[0]

    def bind_value(self, name: str, value: Any, node: ast.AST) -> _Wrap | None:
        """``name = value`` for a value that is no declaration: a new var, a let, or a name."""
        if isinstance(value, T.HandleType):  # p = T.handle("float32"): a new handle var
            value = Var(name, "handle", type_annotation=value.annotation)
        if isinstance(value, Var) and id(value) not in self.known:
            var = type(value)(name, value.dtype, value.type_annotation)  # n = T.int32()
            self.known.add(id(var))
            self.ev.define(name, var)
            return None
        if isinstance(value, (PrimExpr, bool, int, float)):
            expr = value if isinstance(value, PrimExpr) else op.const(value)
            return self.let_wrap(name, Var(name, expr.dtype), expr, node)
        self.ev.define(name, value)  # a Python value (a buffer alias, a list, a string)
        return None

    def alloc_buffer(self, name: str, spec: T.AllocBuffer, node: ast.AST) -> None:
        """``B = T.alloc_buffer(...)``: allocated by the enclosing block (or the root block)."""
        (self.blocks[-1].allocs if self.blocks else self.root_allocs).append(spec.buffer)
        self.define_buffer_vars(spec.buffer)
        self.ev.define(name, spec.buffer)

    def meta_var(self, name: str, spec: T.MetaVar, node: ast.AST) -> None:
        """``x = T.meta_var(value)``: ``x`` names the Python value itself."""
        self.ev.define(name, spec.value)

    def let_wrap(self, name: str, var: Var, value: PrimExpr, node: ast.AST) -> _Wrap:
        self.known.add(id(var))
        self.ev.define(name, var)
        return _Wrap(lambda body: self.build(node, LetStmt, var, value, body))

    def match_buffer(self, name: str, spec: T.MatchBuffer, node: ast.AST) -> None:
        param = spec.param
        is_handle = isinstance(param, Var) and param.dtype == "handle"
        if self.blocks or not is_handle or not any(param is p for p in self.params):
            raise self.error(node, "T.match_buffer binds a handle parameter of the function "
                             "(match_buffer inside blocks is not supported)")
        if param in self.buffer_map:
            raise self.error(node, f"parameter {param.name!r} already has a buffer")
        self.buffer_map[param] = spec.buffer
        self.define_buffer_vars(spec.buffer)
        self.ev.define(name, spec.buffer)
        return None

    def decl_buffer(self, name: str, spec: T.DeclBuffer, node: ast.AST) -> _Wrap | None:
        """``B = T.decl_buffer(...)``: a view over ``data``, or an allocation without it."""
        buf = spec.buffer
        self.define_buffer_vars(buf)
        self.ev.define(name, buf)
        if not spec.allocates:
            return None
        return _Wrap(lambda body: Allocate(buf.data, buf.dtype, buf.shape, op.const(True), body))

    def allocate(self, name: str, spec: T.Allocate, node: ast.AST) -> _Wrap:
        """``p = T.allocate(...)``: ``p`` is the handle, and ``p[i]`` indexes it directly."""
        var = Var(name, "handle", type_annotation=spec.dtype)
        scope = "" if spec.scope == "global" else spec.scope
        buf = self.build(node, Buffer, var, spec.dtype, spec.extents, name=name, scope=scope)
        self.ev.handle_buffers[id(var)] = buf
        self.known.add(id(var))
        self.ev.define(name, var)
        cond = spec.condition
        return _Wrap(lambda body: self.build(node, Allocate, var, spec.dtype, spec.extents,
                                             cond, body, spec.annotations))

    # ------------------------------------------------------------ blocks

    def visit_With(self, node: ast.With) -> Stmt | _Wrap | None:
        if len(node.items) != 1:
            raise self.error(node, "one frame per with statement")
        item = node.items[0]
        frame = self.ev.eval(item.context_expr)
        target = item.optional_vars
        if isinstance(frame, T.BlockFrame):
            return self.block(frame, node)
        if isinstance(frame, T.InitFrame):
            if not self.blocks:
                raise self.error(node, "T.init() belongs inside a T.block")
            self.blocks[-1].init = self.visit_body(node.body)
            return None
        if isinstance(frame, T.AttrFrame):
            body = self.visit_body(node.body)
            return self.build(node, AttrStmt, frame.node, frame.key, frame.value, body)
        if isinstance(frame, (T.Allocate, T.DeclBuffer, T.LetFrame)) and isinstance(
                target, ast.Name):
            return self.with_binding(frame, target, node)
        if isinstance(frame, T.AssertFrame):
            return self.assert_wrap(frame.condition, frame.message, node).build(
                self.visit_body(node.body))
        raise self.error(item.context_expr, f"expected a frame such as T.block(...), "
                         f"T.init() or T.attr(...), got {type(frame).__name__}")

    def with_binding(self, frame: Any, target: ast.Name, node: ast.With) -> Stmt:
        """``with T.allocate(...) as p:`` (TVM's older form): the binding holds the body."""
        self.ev.push()
        try:
            if isinstance(frame, T.LetFrame):
                value = frame.value
                if not isinstance(value, PrimExpr):
                    value = self.build(node, op.const, value)
                var = frame.var if frame.var is not None else Var(target.id, value.dtype)
                wrap = self.let_wrap(target.id, var, value, node)
            elif isinstance(frame, T.Allocate):
                wrap = self.allocate(target.id, frame, node)
            else:
                wrap = self.decl_buffer(target.id, frame, node)
            body = self.visit_body(node.body)
        finally:
            self.ev.pop()
        return wrap.build(body) if wrap is not None else body

    # ------------------------------------------------------------ control flow

    def visit_For(self, node: ast.For) -> Stmt:
        if node.orelse:
            raise self.error(node, "for ... else has no meaning in TIR")
        loops = self.loop_specs(node.iter)
        targets = node.target.elts if isinstance(node.target, ast.Tuple) else [node.target]
        if len(targets) != len(loops):
            raise self.error(node.target, f"{len(loops)} loops but {len(targets)} loop vars")
        self.ev.push()
        try:
            made = []
            for t, loop in zip(targets, loops):
                if not isinstance(t, ast.Name):
                    raise self.error(t, "a loop var is a plain name")
                made.append(self.loop_var(t, loop, node))
            body = self.visit_body(node.body)
        finally:
            self.ev.pop()
        for var, lo, extent, loop in reversed(made):
            self.loops.pop(id(var), None)
            body = self.build(node, For, var, lo, extent, _KINDS[loop.kind], body,
                              loop.annotations, loop.thread)
        return body

    def loop_specs(self, it: ast.expr) -> list[T.Loop]:
        """The loops of a ``for`` header, with ``range(lo, lo + n)`` read back as extent ``n``."""
        func = None
        if isinstance(it, ast.Call):
            func = self.ev.eval(it.func)
            if func is range:
                func = T.serial
        if func is None or func not in (T.serial, T.parallel, T.vectorized, T.unroll,
                                        T.thread_binding, T.grid):
            raise self.error(it, "expected range(...), T.serial/parallel/vectorized/unroll"
                             "(...), T.thread_binding(...) or T.grid(...) in a for header")
        args = [self.ev.eval(a) for a in it.args]
        kwargs = {k.arg: self.ev.eval(k.value) for k in it.keywords}
        try:
            spec = func(*args, **kwargs)
        except TypeError as err:
            raise self.error(it, str(err)) from None
        loops = spec if isinstance(spec, list) else [spec]
        if func is not T.grid and len(it.args) >= 2:
            written = offset_of(it.args[0], it.args[1])
            if written is not None:
                loops[0].extent = self.ev.eval(written)
        where = "T.grid" if func is T.grid else "a loop"
        for loop, arg in zip(loops, it.args if func is T.grid else [it] * len(loops)):
            for part in (loop.min, loop.extent):
                kind = _int_kind(part)
                if kind is not None:
                    raise self.error(arg, f"{where} expects integer extents, got {kind}")
        return loops

    def loop_var(self, target: ast.Name, loop: T.Loop, node: ast.AST) -> tuple:
        dtype = next((x.dtype for x in (loop.extent, loop.min) if isinstance(x, PrimExpr)),
                     "int32")
        var = Var(target.id, dtype)
        lo, extent = as_index(loop.min, dtype), as_index(loop.extent, dtype)
        self.known.add(id(var))
        self.loops[id(var)] = (lo, extent)
        self.ev.define(target.id, var)
        return var, lo, extent, loop

    def visit_While(self, node: ast.While) -> Stmt:
        if node.orelse:
            raise self.error(node, "while ... else has no meaning in TIR")
        cond = self.ev.eval(node.test)
        return self.build(node, While, cond, self.visit_body(node.body))

    def visit_If(self, node: ast.If) -> Stmt | None:
        cond = self.ev.eval(node.test)
        if not isinstance(cond, PrimExpr):  # a Python condition picks a branch now
            branch = node.body if cond else node.orelse
            return self.visit_body(branch) if branch else None
        then = self.visit_body(node.body)
        other = self.visit_body(node.orelse) if node.orelse else None
        return self.build(node, IfThenElse, cond, then, other)


def _store_cast(buf: Buffer, value: PrimExpr, indices: list) -> PrimExpr:
    """``value`` in the element type the store expects, as TVM converts (``B[i] = vi`` into a
    float buffer); a lane count that differs stays an error."""
    want = access_dtype(buf, tuple(op.convert(i) for i in indices))
    if value.dtype == want or dt.lanes_of(value.dtype) != dt.lanes_of(want):
        return value
    return op.cast(want, value)


def _wrap_all(wraps: list[_Wrap], body: Stmt) -> Stmt:
    for w in reversed(wraps):
        body = w.build(body)
    return body


def _int_kind(value: Any) -> str | None:
    """None when ``value`` can bound a loop, else the dtype or type it has instead."""
    if isinstance(value, PrimExpr):
        t = dt.DataType(value.dtype)
        return None if t.is_integer and not t.is_vector else value.dtype
    if isinstance(value, int) and not isinstance(value, bool):
        return None
    return "float32" if isinstance(value, float) else type(value).__name__
