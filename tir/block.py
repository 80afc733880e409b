"""Blocks: the named stages that ``te.create_prim_func`` builds and ``tir.Schedule`` moves.

A block is TVM's unit of scheduling. ``BlockRealize(iter_values, predicate,
block)`` runs ``block`` once for one point of its iteration space: each of the
block's ``IterVar``s takes the matching ``iter_values`` entry (an expression
of the loops around it), when ``predicate`` holds. Inside, the body only
sees its iter vars, so a schedule can rebuild the loops around a block
(split, reorder, compute_at) without touching the body.

What tirlite keeps lighter than TVM: a block stores no ``reads``/``writes``
regions. They are derived from the body when a schedule primitive needs them
(``tir.schedule.analysis``), so no primitive can leave them stale.
``match_buffers`` are not supported.

Blocks never reach codegen: ``transform.LowerInitBlock`` and
``transform.LowerOpaqueBlock`` (the first passes of ``codegen.build``'s
pipeline) turn them into plain loops and allocations.
"""

from __future__ import annotations

import enum
from typing import Any

import attrs

from .expr import PrimExpr, Var, _expr_of
from .node import DATA, Node, buffers_field, expr_field, exprs_field, node, nodes_field, stmt_field
from .range import Range
from .stmt import Stmt, _check_cond, _check_stmt, _frozen_map


class IterVarType(enum.IntEnum):
    """The role of a block iter var (TVM's names and values)."""

    DataPar = 0  # spatial: each value writes its own output
    ThreadIndex = 1
    CommReduce = 2  # reduction: values combine into one output
    Ordered = 3
    DimInfo = 4
    Unrolled = 5
    Vectorized = 6
    Parallelized = 7
    Tensorized = 8
    Opaque = 9


@node
class IterVar(Node):
    """A block iter var: ``var`` over ``dom``, spatial (``DataPar``) or ``CommReduce``.

    ``IterVar(dom, var, iter_type)`` as in TVM; ``dom`` is a ``Range``, an
    ``(begin, end)`` pair or an extent.

    >>> vi = IterVar(128, Var("vi"), IterVarType.DataPar)
    """

    var: Var = expr_field(binds=True)
    min: PrimExpr = expr_field()
    extent: PrimExpr = expr_field()
    iter_type: IterVarType = attrs.field(converter=IterVarType, metadata={"kind": DATA})
    thread_tag: str = attrs.field(default="")

    def __init__(self, dom: Any = None, var: Any = None, iter_type: Any = IterVarType.DataPar,
                 thread_tag: str = "", **fields: Any):
        if fields:  # node.replace rebuilds through the fields
            self.__attrs_init__(fields.pop("var", var), fields.pop("min"), fields.pop("extent"),
                                fields.pop("iter_type", iter_type),
                                fields.pop("thread_tag", thread_tag))
            return
        if isinstance(var, str):
            var = Var(var, "int32")
        if not isinstance(var, Var):
            raise TypeError(f"IterVar: var must be a Var, got {type(var).__name__}")
        if not isinstance(dom, Range):
            dom = Range(*dom) if isinstance(dom, (tuple, list)) else Range(dom)
        self.__attrs_init__(var, dom.min, dom.extent, iter_type, thread_tag)

    def __attrs_post_init__(self):
        for field in ("min", "extent"):
            value = _expr_of(getattr(self, field), f"IterVar {self.var.name}", field)
            if value.dtype != self.var.dtype:
                raise TypeError(f"IterVar {self.var.name}: {field} is {value.dtype}, "
                                f"the var is {self.var.dtype}")
            object.__setattr__(self, field, value)

    @property
    def dom(self) -> Range:
        """The values the var takes: ``[min, min + extent)``."""
        return Range.from_min_extent(self.min, self.extent)

    @property
    def is_reduce(self) -> bool:
        return self.iter_type == IterVarType.CommReduce

    # In te bodies an IterVar stands for its var (TVM converts it the same way).
    def as_operand(self) -> Var:
        return self.var

    def __add__(self, other: Any) -> PrimExpr:
        return self.var + other

    def __radd__(self, other: Any) -> PrimExpr:
        return other + self.var

    def __sub__(self, other: Any) -> PrimExpr:
        return self.var - other

    def __rsub__(self, other: Any) -> PrimExpr:
        return other - self.var

    def __mul__(self, other: Any) -> PrimExpr:
        return self.var * other

    def __rmul__(self, other: Any) -> PrimExpr:
        return other * self.var

    def __floordiv__(self, other: Any) -> PrimExpr:
        return self.var // other

    def __mod__(self, other: Any) -> PrimExpr:
        return self.var % other

    def script(self) -> str:
        kind = "reduce" if self.is_reduce else "spatial"
        return f"IterVar({self.var.name}: {kind} {self.dom.script()})"


@node
class Block(Stmt):
    """A named stage: ``body`` over ``iter_vars``, with an optional reduction ``init``.

    ``alloc_buffers`` are the buffers the block allocates for its subtree (the
    root block holds the intermediates of ``create_prim_func``). ``init``, when
    given, runs before the first iteration of the reduction iter vars.
    """

    iter_vars: tuple = nodes_field()
    name_hint: str = attrs.field()
    alloc_buffers: tuple = buffers_field(binds=True, default=(), kw_only=True)
    init: Stmt | None = stmt_field(default=None, kw_only=True)
    body: Stmt = stmt_field(kw_only=True)
    annotations: Any = attrs.field(default=None, converter=_frozen_map, kw_only=True)

    def __attrs_post_init__(self):
        if not isinstance(self.name_hint, str) or not self.name_hint:
            raise TypeError("Block: name_hint must be a non-empty str")
        for iv in self.iter_vars:
            if not isinstance(iv, IterVar):
                raise TypeError(f"Block {self.name_hint}: iter_vars must be IterVars, "
                                f"got {type(iv).__name__}")
        _check_stmt(self.body, f"Block {self.name_hint}", "body")
        if self.init is not None:
            _check_stmt(self.init, f"Block {self.name_hint}", "init")


@node
class BlockRealize(Stmt):
    """Run ``block`` with its iter vars bound to ``iter_values`` when ``predicate`` holds."""

    iter_values: tuple = exprs_field()
    predicate: PrimExpr = expr_field()
    block: Block = stmt_field()

    def __attrs_post_init__(self):
        if not isinstance(self.block, Block):
            raise TypeError(f"BlockRealize: block must be a Block, got {type(self.block).__name__}")
        name = f"BlockRealize {self.block.name_hint}"
        if len(self.iter_values) != len(self.block.iter_vars):
            raise ValueError(f"{name}: {len(self.iter_values)} iter values for "
                             f"{len(self.block.iter_vars)} iter vars")
        values = []
        for iv, value in zip(self.block.iter_vars, self.iter_values):
            value = _expr_of(value, name, "iter_values")
            if value.dtype != iv.var.dtype:
                raise TypeError(f"{name}: the value bound to {iv.var.name} is {value.dtype}, "
                                f"the iter var is {iv.var.dtype}")
            values.append(value)
        object.__setattr__(self, "iter_values", tuple(values))
        object.__setattr__(self, "predicate", _check_cond(self.predicate, name))


@node
class BufferRegion(Node):
    """The part of ``buffer`` that ``region`` (one ``Range`` per dimension) covers."""

    buffer: Any = attrs.field()
    region: tuple = attrs.field(converter=tuple)

    def script(self) -> str:
        dims = ", ".join(
            f"{r.min}:{r.min + r.extent}" if not _is_one(r.extent) else f"{r.min}"
            for r in self.region
        )
        return f"{self.buffer.name}[{dims}]"


def _is_one(e: PrimExpr) -> bool:
    return getattr(e, "value", None) == 1
