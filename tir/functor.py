"""Visitors and mutators over TIR, dispatching by node class.

A visitor method is named after the node class it handles: ``visit_add`` for
``Add``, ``visit_buffer_load`` for ``BufferLoad``, ``visit_for`` for ``For``.
Dispatch looks the name up once per (visitor class, node class), walking the
node's bases, so ``visit_var`` also receives ``SizeVar`` unless
``visit_size_var`` is defined. A node without a method of its own goes to
``generic_visit``, which walks its children.

Mutators return the very same object when nothing below changed: the rule is
written once, in ``generic_visit``, and every node falls back to it.

>>> class Rename(StmtExprMutator):
...     def __init__(self, old, new):
...         self.old, self.new = old, new
...     def visit_var(self, v):
...         return self.new if v is self.old else v
"""

from __future__ import annotations

import functools
import re
import sys
from typing import Any, Callable

from .buffer import Buffer
from .expr import PrimExpr, Var
from .node import BUFFER, BUFFERS, EXPR, EXPRS, NODES, STMT, STMTS, Node, child_fields, replace
from .stmt import Stmt

_DEEP_LIMIT = 200_000


class deep_recursion:  # noqa: N801 (used as a function: ``with deep_recursion():``)
    """Let deep (for example left-deep 5,000-term) programs recurse.

    CPython 3.11+ runs Python-to-Python calls without growing the C stack, so
    raising the limit is safe for our pure-Python walkers. A class rather than a
    ``contextlib.contextmanager``: the analyzer enters it on every query, and a
    generator costs several times more per ``with``.
    """

    __slots__ = ("old",)

    def __enter__(self) -> None:
        self.old = sys.getrecursionlimit()
        if self.old < _DEEP_LIMIT:
            sys.setrecursionlimit(_DEEP_LIMIT)

    def __exit__(self, *exc: object) -> None:
        if self.old < _DEEP_LIMIT:
            sys.setrecursionlimit(self.old)


def method_name(cls: type) -> str:
    """``visit_`` plus the snake-case class name: ``BufferLoad`` -> ``visit_buffer_load``."""
    return "visit_" + re.sub(r"(?<!^)(?=[A-Z][a-z])", "_", cls.__name__).lower()


class _Functor:
    """Dispatch by node class through a per-class table of methods."""

    #: node class -> method; every visitor class gets a table of its own (__init_subclass__)
    _dispatch_table: dict = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._dispatch_table = {}

    def _method_for(self, node_cls: type) -> Callable:
        table = self._dispatch_table
        fn = table.get(node_cls)
        if fn is None:
            fn = table[node_cls] = self._resolve(node_cls)
        return fn

    def _resolve(self, node_cls: type) -> Callable:
        for base in node_cls.__mro__:
            if base in _ABSTRACT:  # their names are the dispatchers themselves
                break
            fn = getattr(type(self), method_name(base), None)
            if fn is not None:
                return fn
        return type(self).generic_visit

    def __call__(self, node: Any) -> Any:
        with deep_recursion():
            return self.visit(node)

    def visit(self, node: Any) -> Any:
        """Visit an expression, statement, buffer or function."""
        if isinstance(node, PrimExpr):
            return self.visit_expr(node)
        if isinstance(node, Stmt):
            return self.visit_stmt(node)
        if isinstance(node, Buffer):
            return self.visit_buffer(node)
        if hasattr(node, "body") and hasattr(node, "params"):  # a PrimFunc
            return self._visit_func(node)
        raise TypeError(f"{type(self).__name__}: cannot visit {type(node).__name__}")

    def visit_expr(self, expr: PrimExpr) -> Any:
        """Visit one expression through the dispatch table."""
        # the table inlined: this runs once per node of every walk
        fn = self._dispatch_table.get(type(expr))
        if fn is None:
            fn = self._method_for(type(expr))
        return fn(self, expr)

    def visit_stmt(self, stmt: Stmt) -> Any:
        """Visit one statement through the dispatch table."""
        fn = self._dispatch_table.get(type(stmt))
        if fn is None:
            fn = self._method_for(type(stmt))
        return fn(self, stmt)

    def visit_buffer(self, buffer: Buffer) -> Any:
        """Buffers are leaves by default (their shapes are not walked)."""
        return buffer

    def _visit_func(self, func: Any) -> Any:
        return self.visit_stmt(func.body)


_ABSTRACT = (PrimExpr, Stmt, Node, object)


class _Visitor(_Functor):
    visits_exprs = True
    visits_stmts = True

    def generic_visit(self, node: Node) -> None:
        """Visit every child of ``node`` (binding vars are not visited)."""
        for name, kind in _walked_fields(type(node)):
            if kind == EXPR:  # most fields: inlined, one call less per node
                value = getattr(node, name)
                if value is not None and self.visits_exprs:
                    self.visit_expr(value)
            else:
                _VISIT_FIELD[kind](self, getattr(node, name))

    # One method per field kind (tir.node's EXPR, STMT, ...), called through _VISIT_FIELD.

    def _visit_expr_field(self, value: PrimExpr | None) -> None:
        if value is not None and self.visits_exprs:
            self.visit_expr(value)

    def _visit_stmt_field(self, value: Stmt | None) -> None:
        if value is not None:
            self.visit_stmt(value)

    def _visit_exprs_field(self, values: tuple) -> None:
        if self.visits_exprs:
            for v in values:
                self.visit_expr(v)

    def _visit_stmts_field(self, values: tuple) -> None:
        for v in values:
            self.visit_stmt(v)

    def _visit_buffer_field(self, value: Buffer) -> None:
        self.visit_buffer(value)

    def _visit_buffers_field(self, values: tuple) -> None:
        for v in values:
            self.visit_buffer(v)

    def _visit_nodes_field(self, values: tuple) -> None:
        for v in values:
            self._method_for(type(v))(self, v)


#: How ``_Visitor.generic_visit`` walks a child field, by the field's kind.
_VISIT_FIELD = {
    EXPR: _Visitor._visit_expr_field,
    STMT: _Visitor._visit_stmt_field,
    EXPRS: _Visitor._visit_exprs_field,
    STMTS: _Visitor._visit_stmts_field,
    BUFFER: _Visitor._visit_buffer_field,
    BUFFERS: _Visitor._visit_buffers_field,
    NODES: _Visitor._visit_nodes_field,
}


class _Mutator(_Functor):
    visits_exprs = True
    visits_stmts = True

    def generic_visit(self, node: Node) -> Node:
        """Mutate the children of ``node``; the same object if none changed."""
        changes = None
        for name, kind in _walked_fields(type(node)):
            old = getattr(node, name)
            if old is None:
                continue
            if kind == EXPR:  # most fields: inlined, one call less per node
                new = self.visit_expr(old) if self.visits_exprs else old
            else:
                new = _MUTATE_FIELD[kind](self, old)
            if new is not old:
                if changes is None:
                    changes = {}
                changes[name] = new
        return node if changes is None else replace(node, **changes)

    def _mutate_field(self, kind: str, old: Any) -> Any:
        return None if old is None else _MUTATE_FIELD[kind](self, old)

    # One method per field kind (tir.node's EXPR, STMT, ...), called through _MUTATE_FIELD.

    def _mutate_expr_field(self, old: PrimExpr) -> PrimExpr:
        return self.visit_expr(old) if self.visits_exprs else old

    def _mutate_stmt_field(self, old: Stmt) -> Stmt:
        return self.visit_stmt(old)

    def _mutate_exprs_field(self, old: tuple) -> tuple:
        return self._mutate_tuple(old, self.visit_expr) if self.visits_exprs else old

    def _mutate_stmts_field(self, old: tuple) -> tuple:
        return self._mutate_tuple(old, self.visit_stmt)

    def _mutate_buffer_field(self, old: Buffer) -> Buffer:
        return self.visit_buffer(old)

    def _mutate_buffers_field(self, old: tuple) -> tuple:
        return self._mutate_tuple(old, self.visit_buffer)

    def _mutate_nodes_field(self, old: tuple) -> tuple:
        return self._mutate_tuple(old, lambda v: self._method_for(type(v))(self, v))

    @staticmethod
    def _mutate_tuple(items: tuple, fn: Callable) -> tuple:
        out = None
        for i, item in enumerate(items):
            new = fn(item)
            if new is not item and out is None:
                out = list(items[:i])
            if out is not None:
                out.append(new)
        return items if out is None else tuple(out)

    def _visit_func(self, func: Any) -> Any:
        return func.with_body(self.visit_stmt(func.body))


#: How ``_Mutator.generic_visit`` mutates a child field, by the field's kind.
_MUTATE_FIELD = {
    EXPR: _Mutator._mutate_expr_field,
    STMT: _Mutator._mutate_stmt_field,
    EXPRS: _Mutator._mutate_exprs_field,
    STMTS: _Mutator._mutate_stmts_field,
    BUFFER: _Mutator._mutate_buffer_field,
    BUFFERS: _Mutator._mutate_buffers_field,
    NODES: _Mutator._mutate_nodes_field,
}


@functools.cache
def _walked_fields(cls: type) -> tuple[tuple[str, str], ...]:
    """``(name, kind)`` of the child fields of ``cls`` a walk enters (binding vars are not)."""
    return tuple((name, kind) for name, kind, binds in child_fields(cls) if not binds)


class ExprVisitor(_Visitor):
    """Walks expressions; override ``visit_<node>`` methods."""

    def visit_stmt(self, stmt: Stmt) -> Any:
        raise TypeError("ExprVisitor visits expressions only; use StmtExprVisitor")


class ExprMutator(_Mutator):
    """Rebuilds expressions; unchanged subtrees come back as the same object."""

    def visit_stmt(self, stmt: Stmt) -> Any:
        raise TypeError("ExprMutator mutates expressions only; use StmtExprMutator")


class StmtVisitor(_Visitor):
    """Walks statements only; expressions are not entered."""

    visits_exprs = False

    def visit_expr(self, expr: PrimExpr) -> Any:
        return None


class StmtMutator(_Mutator):
    """Rebuilds statements; expressions are kept as they are."""

    visits_exprs = False

    def visit_expr(self, expr: PrimExpr) -> Any:
        return expr


class StmtExprVisitor(_Visitor):
    """Walks statements and the expressions inside them."""


class StmtExprMutator(_Mutator):
    """Rebuilds statements and the expressions inside them."""


# ---------------------------------------------------------------- helpers


def post_order_visit(node: Any, fvisit: Callable[[Any], None]) -> None:
    """Call ``fvisit`` on every expression and statement below ``node``, children first.

    Each node object is visited once, even when it is shared. (A walk of its own,
    without the visitors' dispatch: analyses call this on every index they look at.)
    """
    root = _walk_root(node)
    seen: set[int] = set()
    stack = [] if root is None else [root]
    while stack:
        n = stack.pop()
        if type(n) is tuple:  # (node,): its children are done
            fvisit(n[0])
            continue
        if id(n) in seen:
            continue
        seen.add(id(n))
        stack.append((n,))
        stack.extend(reversed(_children(n)))


def contains(node: Any, predicate: Callable[[Any], bool]) -> bool:
    """Whether ``predicate`` holds for an expression or statement below ``node`` (or itself).

    The nodes are those ``post_order_visit`` calls ``fvisit`` on; the walk stops
    at the first match, for the hot "does this index hold a load / a huge
    constant" questions of the analyses.
    """
    root = _walk_root(node)
    seen: set[int] = set()
    stack = [] if root is None else [root]
    while stack:
        n = stack.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        if predicate(n):
            return True
        stack.extend(_children(n))
    return False


def _walk_root(node: Any) -> Any:
    """Where a walk of ``node`` starts: itself, a function's body, or None for a buffer."""
    if isinstance(node, (PrimExpr, Stmt)):
        return node
    if isinstance(node, Buffer):
        return None  # buffers are leaves
    if hasattr(node, "body") and hasattr(node, "params"):  # a PrimFunc
        return node.body
    raise TypeError(f"post_order_visit: cannot visit {type(node).__name__}")


def _children(node: Any) -> list:
    """The expressions, statements and helper nodes a ``StmtExprVisitor`` visits below
    ``node``, in its order (binding vars and buffers left out)."""
    out = []
    for name, kind, binds in child_fields(type(node)):
        if binds or kind == BUFFER or kind == BUFFERS:
            continue
        value = getattr(node, name)
        if value is None:
            continue
        if kind == EXPR or kind == STMT:
            out.append(value)
        else:  # EXPRS, STMTS, NODES
            out.extend(value)
    return out


def _normalize_types(only_enable: Any) -> tuple | None:
    if only_enable is None:
        return None
    from . import expr as expr_mod
    from . import stmt as stmt_mod

    out = []
    for t in only_enable:
        if isinstance(t, str):
            name = t.split(".")[-1]
            t = getattr(stmt_mod, name, None) or getattr(expr_mod, name, None)
            if t is None:
                raise ValueError(f"ir_transform: unknown node type {name!r}")
        out.append(t)
    return tuple(out)


def ir_transform(
    stmt: Any,
    preorder: Callable | None,
    postorder: Callable | None,
    only_enable: Any = None,
) -> Any:
    """Rewrite ``stmt`` with callbacks, as TVM's ``ir_transform``.

    ``preorder(node)`` may return a replacement, which is used without
    visiting its children; otherwise the children are rewritten and then
    ``postorder(node)`` may return a replacement. ``only_enable`` limits the
    callbacks to some node types (classes or names such as ``"tir.For"``).
    """
    return _Transform(preorder, postorder, _normalize_types(only_enable))(stmt)


class _Transform(StmtExprMutator):
    """``ir_transform``'s mutator (one class: see ``_PostOrder``)."""

    def __init__(self, preorder: Callable | None, postorder: Callable | None,
                 types: tuple | None):
        self.preorder, self.postorder, self.types = preorder, postorder, types

    def _enabled(self, n: Any) -> bool:
        return self.types is None or isinstance(n, self.types)

    def generic_visit(self, n: Any) -> Any:
        if self.preorder is not None and self._enabled(n):
            out = self.preorder(n)
            if out is not None:
                return out
        n = super().generic_visit(n)
        if self.postorder is not None and self._enabled(n):
            out = self.postorder(n)
            if out is not None:
                return out
        return n


class _Substitute(StmtExprMutator):
    def __init__(self, vmap: Callable[[Var], Any]):
        self.vmap = vmap
        self.buffers: dict[int, Buffer] = {}

    def visit_var(self, v: Var) -> PrimExpr:
        new = self.vmap(v)
        return v if new is None else new

    def visit_buffer(self, buf: Buffer) -> Buffer:
        if id(buf) in self.buffers:
            return self.buffers[id(buf)]
        data = self.vmap(buf.data)
        new = buf if not isinstance(data, Var) or data is buf.data else replace(buf, data=data)
        self.buffers[id(buf)] = new
        return new


def substitute(node: Any, vmap: Any) -> Any:
    """``node`` with uses of variables replaced: ``vmap`` is a dict or a function.

    A dict maps ``Var`` to an expression (or a number); a function returns the
    replacement or None to keep the var. Buffers whose data var is mapped to
    another var are remapped too.
    """
    if callable(vmap):
        fn = vmap
    else:
        table = {id(k): v for k, v in dict(vmap).items()}

        def fn(v: Var) -> Any:
            return table.get(id(v))

    def convert(v: Var) -> Any:
        out = fn(v)
        if out is None or isinstance(out, PrimExpr):
            return out
        from .op import const

        return const(out, v.dtype)

    return _Substitute(convert)(node)


class _FreshCopy(StmtExprMutator):
    """A copy with every var bound inside made fresh (``copy_with_fresh_binders``)."""

    def __init__(self, vmap: dict[int, PrimExpr]):
        self.vmap = vmap
        self.buffers: dict[tuple[int, int], Buffer] = {}

    def visit_var(self, v: Var) -> PrimExpr:
        return self.vmap.get(id(v), v)

    def generic_visit(self, node: Any) -> Any:
        fresh = {}
        for name, kind in _binding_fields(type(node)):  # none for most nodes
            if kind == BUFFERS:  # allocated buffers: fresh data vars
                bufs = getattr(node, name)
                for buf in bufs:
                    self.vmap[id(buf.data)] = replace(buf.data)
                fresh[name] = tuple(self.visit_buffer(buf) for buf in bufs)
            else:
                old = getattr(node, name)
                fresh[name] = self.vmap[id(old)] = replace(old)  # same name and dtype, new object
        if fresh:
            node = replace(node, **fresh)
        return super().generic_visit(node)

    def visit_buffer(self, buf: Buffer) -> Buffer:
        # Keyed by the data var's current mapping too: a body may bind one var twice
        # (two allocations in sequence), and each binding gets its own fresh var.
        data = self.vmap.get(id(buf.data))
        key = (id(buf), id(data))
        if key not in self.buffers:
            self.buffers[key] = buf if data is None else replace(buf, data=data)
        return self.buffers[key]


@functools.cache
def _binding_fields(cls: type) -> tuple[tuple[str, str], ...]:
    """``(name, kind)`` of the fields of ``cls`` that bind a variable or buffers."""
    return tuple((name, kind) for name, kind, binds in child_fields(cls) if binds)


def copy_with_fresh_binders(stmt: Any, vmap: Any = None) -> Any:
    """``stmt`` with ``vmap``'s vars replaced and every var it binds (loop vars, let vars,
    allocations) replaced by a fresh ``Var`` of the same name and dtype (TVM's RenewDefs).

    A pass that repeats a body (unrolling, strip-mining, peeling) uses it for each copy,
    so that no var is bound twice in its output (``tir.verify_well_formed``).
    """
    table = {id(k): v for k, v in dict(vmap or {}).items()}
    return _FreshCopy(table)(stmt)
