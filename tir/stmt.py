"""Statement nodes of TIR."""

from __future__ import annotations

import enum
import types
from typing import Any

import attrs

from . import dtype as dt
from .expr import (
    IntImm,
    PrimExpr,
    StringImm,
    Var,
    _check_access,
    _check_predicate,
    _expr_of,
    access_dtype,
)
from .node import DATA, Node, buffer_field, expr_field, exprs_field, node, stmt_field, stmts_field


class Stmt(Node):
    """Base of all statements."""

    __slots__ = ()


class ForKind(enum.IntEnum):
    """How a ``For`` loop runs: in order, across threads, as a vector, or unrolled."""

    SERIAL = 0
    PARALLEL = 1
    VECTORIZED = 2
    UNROLLED = 3
    THREAD_BINDING = 4


def _frozen_map(value: Any) -> types.MappingProxyType:
    return types.MappingProxyType(dict(value or {}))


def _check_stmt(value: Any, owner: str, field: str) -> None:
    if not isinstance(value, Stmt):
        raise TypeError(f"{owner}: {field} must be a Stmt, got {type(value).__name__}")


def _check_cond(value: Any, owner: str) -> PrimExpr:
    cond = _expr_of(value, owner, "condition")
    if isinstance(value, bool):
        from .op import const

        cond = const(value, "bool")
    if cond.dtype != "bool":
        raise TypeError(f"{owner}: condition must be a scalar bool, got {cond.dtype}")
    return cond


@node
class BufferStore(Stmt):
    """``buffer[indices] = value``; ``predicate`` masks the lanes written.

    Vector indices may sit in any dimension, as for ``BufferLoad``: lane ``k``
    of ``value`` goes to ``buffer[i0[k], i1[k], ...]`` (a scalar index is the
    same for every lane).
    """

    buffer: Any = buffer_field()
    value: PrimExpr = expr_field()
    indices: tuple = exprs_field()
    predicate: PrimExpr | None = expr_field(default=None)

    def __attrs_post_init__(self):
        indices = _check_access("BufferStore", self.buffer, self.indices)
        expected = access_dtype(self.buffer, indices)
        value = self.value
        if not isinstance(value, PrimExpr):
            from .op import const

            value = const(value, expected)  # a vector access broadcasts the number
        if value.dtype != expected:
            raise TypeError(
                f"BufferStore: value dtype does not match buffer {self.buffer.name}: "
                f"expected {expected}, got {value.dtype}"
            )
        _check_predicate("BufferStore", self.predicate, expected)
        object.__setattr__(self, "indices", indices)
        object.__setattr__(self, "value", value)


@node
class For(Stmt):
    """``for loop_var in range(min, min + extent)``, run as ``kind`` says."""

    loop_var: Var = expr_field(binds=True)
    min: PrimExpr = expr_field()
    extent: PrimExpr = expr_field()
    kind: ForKind = attrs.field(converter=ForKind)
    body: Stmt = stmt_field()
    annotations: Any = attrs.field(default=None, converter=_frozen_map)
    thread_binding: Any = attrs.field(default=None, metadata={"kind": DATA})

    def __attrs_post_init__(self):
        if not isinstance(self.loop_var, Var):
            raise TypeError(f"For: loop_var must be a Var, got {type(self.loop_var).__name__}")
        name = f"For {self.loop_var.name}"
        lo = _expr_of(self.min, name, "min", self.loop_var)
        ext = _expr_of(self.extent, name, "extent", self.loop_var)
        for field, value in (("min", lo), ("extent", ext)):
            if value.dtype != self.loop_var.dtype:
                raise TypeError(
                    f"{name}: {field} dtype differs from the loop var: loop var is "
                    f"{self.loop_var.dtype}, {field} is {value.dtype}"
                )
        error = loop_range_error(self.loop_var, lo, ext)
        if error is not None:
            raise ValueError(f"{name}: {error}")
        _check_stmt(self.body, name, "body")
        object.__setattr__(self, "min", lo)
        object.__setattr__(self, "extent", ext)


def loop_range_error(loop_var: Var, lo: PrimExpr, extent: PrimExpr) -> str | None:
    """Why a loop with constant bounds cannot count in its var's dtype, or None if it can.

    Bounds that are not constants are the program's to keep in range, as any
    integer arithmetic in TIR; they are not checked here.
    """
    if type(lo) is not IntImm or type(extent) is not IntImm or lo.dtype == "bool":
        return None
    return loop_bounds_error(loop_var.name, lo.dtype, lo.value, lo.value + extent.value)


def loop_bounds_error(name: str, dtype: str, begin: int, end: int) -> str | None:
    """Why a loop var ``name`` of ``dtype`` cannot count over ``[begin, end)``, or None.

    Both ends must fit the dtype: compiled code compares the var with the end
    ``min + extent`` computed in that dtype, so an int8 loop over [120, 136)
    would wrap around to [120, -120) and run zero times.
    """
    t = dt.DataType(dtype)
    lo, hi = t.min_value(), t.max_value()
    if lo <= begin <= hi and lo <= end <= hi:
        return None
    return (
        f"the loop over [{begin}, {end}) does not fit its {dtype} loop var {name}, which "
        f"holds [{lo}, {hi}] (both ends must fit); {_wider_hint(t.bits, begin, end)}"
    )


def _wider_hint(bits: int, *values: int) -> str:
    """How to fix a loop whose bounds do not fit ``bits``-bit integers."""
    for name in ("int16", "int32", "int64"):
        w = dt.DataType(name)
        if w.bits > bits and all(w.min_value() <= v <= w.max_value() for v in values):
            return f"use a wider loop var dtype such as {name}"
    return "use smaller bounds (no integer dtype holds these)"


@node
class While(Stmt):
    """Repeat ``body`` while ``condition`` holds."""

    condition: PrimExpr = expr_field()
    body: Stmt = stmt_field()

    def __attrs_post_init__(self):
        object.__setattr__(self, "condition", _check_cond(self.condition, "While"))
        _check_stmt(self.body, "While", "body")


@node
class IfThenElse(Stmt):
    """``if condition: then_case else: else_case`` (``else_case`` may be None)."""

    condition: PrimExpr = expr_field()
    then_case: Stmt = stmt_field()
    else_case: Stmt | None = stmt_field(default=None)

    def __attrs_post_init__(self):
        object.__setattr__(self, "condition", _check_cond(self.condition, "IfThenElse"))
        _check_stmt(self.then_case, "IfThenElse", "then_case")
        if self.else_case is not None:
            _check_stmt(self.else_case, "IfThenElse", "else_case")


@node
class SeqStmt(Stmt):
    """The statements of ``seq``, one after another."""

    seq: tuple = stmts_field()

    def __attrs_post_init__(self):
        if not self.seq:
            raise ValueError("SeqStmt: needs at least one statement")
        for i, s in enumerate(self.seq):
            _check_stmt(s, "SeqStmt", f"seq[{i}]")

    def __len__(self) -> int:
        return len(self.seq)

    def __getitem__(self, i: int) -> Stmt:
        return self.seq[i]

    @staticmethod
    def flatten(*stmts: Any) -> Stmt:
        """One statement from many: nested ``SeqStmt``s and ``None``s flattened."""
        out: list = []
        _collect_stmts(stmts, out)
        if len(out) == 1:
            return out[0]
        return SeqStmt(out) if out else Evaluate(0)


def _collect_stmts(items: Any, out: list) -> None:
    """Append the statements of ``items`` to ``out``, flattening lists and ``SeqStmt``s."""
    for s in items:
        if s is None:
            continue
        if isinstance(s, SeqStmt):
            out.extend(s.seq)
        elif isinstance(s, (list, tuple)):
            _collect_stmts(s, out)
        else:
            out.append(s)


@node
class LetStmt(Stmt):
    """``body`` with ``var`` bound to ``value``."""

    var: Var = expr_field(binds=True)
    value: PrimExpr = expr_field()
    body: Stmt = stmt_field()

    def __attrs_post_init__(self):
        if not isinstance(self.var, Var):
            raise TypeError(f"LetStmt: var must be a Var, got {type(self.var).__name__}")
        value = _expr_of(self.value, "LetStmt", "value", self.var)
        if value.dtype != self.var.dtype:
            raise TypeError(
                f"LetStmt: value dtype differs from the var: var {self.var.name} is "
                f"{self.var.dtype}, value is {value.dtype}"
            )
        _check_stmt(self.body, "LetStmt", "body")
        object.__setattr__(self, "value", value)


@node
class Allocate(Stmt):
    """Memory for ``prod(extents)`` elements of ``dtype``, held by ``buffer_var``."""

    buffer_var: Var = expr_field(binds=True)
    dtype: str = attrs.field()
    extents: tuple = exprs_field()
    condition: PrimExpr = expr_field()
    body: Stmt = stmt_field()
    annotations: Any = attrs.field(default=None, converter=_frozen_map)

    def __attrs_post_init__(self):
        if not isinstance(self.buffer_var, Var) or self.buffer_var.dtype != "handle":
            raise TypeError("Allocate: buffer_var must be a handle Var")
        object.__setattr__(self, "dtype", dt.canonical(self.dtype))
        extents = tuple(_expr_of(e, "Allocate", "extent") for e in self.extents)
        for i, e in enumerate(extents):
            if not dt.DataType(e.dtype).is_integer:
                raise TypeError(f"Allocate: extents must be integers, got {e.dtype}")
            if type(e) is IntImm and e.value < 0:
                raise ValueError(negative_extent_message(self.buffer_var.name, i, e))
        object.__setattr__(self, "extents", extents)
        object.__setattr__(self, "condition", _check_cond(self.condition, "Allocate"))
        _check_stmt(self.body, "Allocate", "body")


def negative_extent_message(name: str, dim: int, extent: Any) -> str:
    """The error when ``extent`` (a constant, or a symbolic one at run time) is negative."""
    return (f"allocate {name!r}: the extent {extent} of dimension {dim} is negative; "
            "an allocation's size must be >= 0")


@node
class AttrStmt(Stmt):
    """``body`` annotated with ``attr_key = value`` about ``node``."""

    node: Any = attrs.field()
    attr_key: str = attrs.field()
    value: PrimExpr = expr_field()
    body: Stmt = stmt_field()

    def __attrs_post_init__(self):
        if not isinstance(self.attr_key, str):
            raise TypeError("AttrStmt: attr_key must be a str")
        value = self.value
        if isinstance(value, str):
            value = StringImm(value)
        object.__setattr__(self, "value", _expr_of(value, "AttrStmt", "value"))
        _check_stmt(self.body, "AttrStmt", "body")


@node
class Evaluate(Stmt):
    """Evaluate ``value`` for its effect (``Evaluate(0)`` does nothing)."""

    value: PrimExpr = expr_field()

    def __attrs_post_init__(self):
        object.__setattr__(self, "value", _expr_of(self.value, "Evaluate", "value"))


@node
class AssertStmt(Stmt):
    """Fail with ``message`` unless ``condition`` holds, then run ``body``."""

    condition: PrimExpr = expr_field()
    message: PrimExpr = expr_field()
    body: Stmt = stmt_field()

    def __attrs_post_init__(self):
        object.__setattr__(self, "condition", _check_cond(self.condition, "AssertStmt"))
        message = self.message
        if isinstance(message, str):
            message = StringImm(message)
        object.__setattr__(self, "message", message)
        _check_stmt(self.body, "AssertStmt", "body")
