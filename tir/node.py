"""The base of every IR node, and the field kinds visitors and equality walk.

Nodes are immutable ``attrs`` classes. Each field says, in its metadata, what
kind of child it holds, so that one generic walker (``child_fields``) serves
the visitors, the mutators, structural equality and hashing alike:

- ``EXPR`` / ``STMT``: one child expression or statement (possibly ``None``);
- ``EXPRS`` / ``STMTS``: a tuple of them;
- ``BUFFER``: a ``Buffer``; ``BUFFERS``: a tuple of them (``Block.alloc_buffers``,
  which bind their data vars);
- ``NODES``: a tuple of helper nodes that are neither expressions nor statements
  but hold children of their own (``Block.iter_vars``: ``IterVar``s);
- anything else is plain data (names, dtypes, kinds, lane counts).

A field marked ``binds=True`` defines a variable (``For.loop_var``,
``Let.var``): structural equality matches such variables by position, not by
name or identity.
"""

from __future__ import annotations

import functools
from typing import Any

import attrs

EXPR, STMT, EXPRS, STMTS, BUFFER, DATA = "expr", "stmt", "exprs", "stmts", "buffer", "data"
NODES, BUFFERS = "nodes", "buffers"

#: The decorator every node class uses: frozen, slotted, identity equality.
node = attrs.frozen(eq=False, repr=False)


class TVMError(RuntimeError):
    """Base of the errors tirlite raises where TVM raises ``tvm.error.TVMError``.

    Catching ``tir.TVMError`` works as in a ported TVM test; each subclass also
    derives from the builtin exception Python code would expect.
    """


class DivideByZeroError(TVMError, ZeroDivisionError):
    """A division or modulo whose divisor is the constant zero (TVM: "Divide by zero")."""


class Node:
    """Common base of expressions, statements, buffers and functions."""

    __slots__ = ()

    def script(self) -> str:
        """TVMScript-style text of this node."""
        from .printer import script

        return script(self)

    def __str__(self) -> str:
        return self.script()

    def __repr__(self) -> str:
        return self.script()


def expr_field(**kwargs: Any) -> Any:
    """An expression child."""
    return attrs.field(metadata={"kind": EXPR, "binds": kwargs.pop("binds", False)}, **kwargs)


def stmt_field(**kwargs: Any) -> Any:
    """A statement child."""
    return attrs.field(metadata={"kind": STMT}, **kwargs)


def exprs_field(**kwargs: Any) -> Any:
    """A tuple of expression children (a list is accepted and frozen)."""
    return attrs.field(metadata={"kind": EXPRS}, converter=_to_tuple, **kwargs)


def stmts_field(**kwargs: Any) -> Any:
    """A tuple of statement children."""
    return attrs.field(metadata={"kind": STMTS}, converter=_to_tuple, **kwargs)


def buffer_field(**kwargs: Any) -> Any:
    """A buffer child."""
    return attrs.field(metadata={"kind": BUFFER}, **kwargs)


def buffers_field(**kwargs: Any) -> Any:
    """A tuple of buffers; ``binds=True`` when the node allocates them."""
    binds = kwargs.pop("binds", False)
    return attrs.field(metadata={"kind": BUFFERS, "binds": binds}, converter=_to_tuple, **kwargs)


def nodes_field(**kwargs: Any) -> Any:
    """A tuple of helper nodes walked field by field (``IterVar``s)."""
    return attrs.field(metadata={"kind": NODES}, converter=_to_tuple, **kwargs)


def _to_tuple(value: Any) -> tuple:
    if isinstance(value, tuple):
        return value
    if isinstance(value, (list, range)) or hasattr(value, "__iter__") and not isinstance(
        value, (str, bytes, Node)
    ):
        return tuple(value)
    return (value,)


@functools.lru_cache(maxsize=None)
def child_fields(cls: type) -> tuple[tuple[str, str, bool], ...]:
    """``(name, kind, binds)`` of the fields of ``cls`` that hold children."""
    out = []
    for field in attrs.fields(cls):
        kind = field.metadata.get("kind", DATA)
        if kind != DATA:
            out.append((field.name, kind, field.metadata.get("binds", False)))
    return tuple(out)


@functools.lru_cache(maxsize=None)
def init_fields(cls: type) -> tuple[str, ...]:
    """Names of the constructor fields of ``cls``, in order."""
    return tuple(f.name for f in attrs.fields(cls) if f.init)


@functools.lru_cache(maxsize=None)
def _init_args(cls: type) -> tuple[tuple[str, str], ...]:
    """``(field name, constructor argument name)`` of the constructor fields of ``cls``."""
    return tuple((f.name, f.alias) for f in attrs.fields(cls) if f.init)


def replace(obj: Any, **changes: Any) -> Any:
    """A copy of node ``obj`` with some constructor fields changed.

    ``attrs.evolve``, with the fields looked up once per class: passes call this
    for every node they rebuild.
    """
    for name, arg in _init_args(type(obj)):
        if arg not in changes:
            changes[arg] = getattr(obj, name)
    return type(obj)(**changes)
