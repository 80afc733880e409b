"""Blocks in TVMScript: ``with T.block(...)``, its ``T.axis`` lines, and the root block.

A mixin of ``FunctionParser``: the block being parsed is a ``BlockState`` on
``self.blocks``; ``T.axis.*`` lines add iter vars to it, ``T.init``,
``T.where``, ``T.block_attr`` and ``T.alloc_buffer`` set its other fields, and
``block`` builds the ``BlockRealize`` when the ``with`` ends.
"""

from __future__ import annotations

import ast
from typing import Any

import attrs

from .. import op
from ..block import Block, BlockRealize, IterVar, IterVarType
from ..expr import IntImm, PrimExpr, Var
from ..stmt import Stmt
from . import builtins as T
from .expr import as_index, extent_between, offset_of

_AXES = {"spatial": IterVarType.DataPar, "reduce": IterVarType.CommReduce,
         "scan": IterVarType.Ordered, "opaque": IterVarType.Opaque}
_REMAP = {"S": "spatial", "R": "reduce"}


@attrs.define
class BlockState:
    """What the lines of a ``with T.block(...)`` have declared so far."""

    name: str
    iter_vars: list = attrs.field(factory=list)
    values: list = attrs.field(factory=list)
    allocs: list = attrs.field(factory=list)
    init: Stmt | None = None
    predicate: Any = True
    annotations: dict = attrs.field(factory=dict)


class BlockMixin:
    """The block-related statements of ``FunctionParser``."""

    def with_root_block(self, body: Stmt) -> Stmt:
        """TVM's rule: blocks in a function live in a root block (added when not written)."""
        if not self.saw_block and not self.root_allocs:
            return body
        if isinstance(body, BlockRealize) and not body.block.iter_vars and not self.root_allocs:
            return body
        root = Block([], "root", alloc_buffers=self.root_allocs, body=body)
        return BlockRealize([], op.const(True), root)

    def axis(self, name: str, spec: T.Axis, node: ast.AST) -> None:
        """``v = T.axis.spatial(dom, value)``: a block iter var bound to ``value``."""
        if not self.blocks:
            raise self.error(node, "T.axis.* declares an iter var of a T.block; it belongs "
                             "inside one")
        value = spec.value if isinstance(spec.value, PrimExpr) else op.const(spec.value)
        dtype = spec.dtype or value.dtype
        lo, extent = self.axis_dom(spec.dom, node, dtype)
        var = Var(name, dtype)
        iv = self.build(node, _iter_var, var, lo, extent, _AXES[spec.kind])
        blk = self.blocks[-1]
        blk.iter_vars.append(iv)
        blk.values.append(value)
        self.known.add(id(var))
        self.ev.define(name, var)

    def axis_dom(self, dom: Any, node: ast.AST, dtype: str) -> tuple[PrimExpr, PrimExpr]:
        """``(min, extent)`` of an axis domain: an extent, or ``(begin, end)``."""
        written = _axis_extent_node(node)
        if isinstance(dom, (tuple, list)):
            if len(dom) != 2:
                raise self.error(node, "an axis domain is an extent or a (begin, end) pair")
            lo = as_index(dom[0], dtype)
            if written is not None:
                extent = self.ev.eval(written)
            else:
                extent = extent_between(dom[0], dom[1])
            return lo, as_index(extent, dtype)
        return as_index(0, dtype), as_index(dom, dtype)

    def remap(self, spec: T.Remap, node: ast.AST) -> list[T.Axis]:
        """``T.axis.remap("SR", [i, j])``: each iter var over its loop's domain."""
        kinds = spec.kinds
        if len(kinds) != len(spec.values) or any(k not in _REMAP for k in kinds):
            raise self.error(node, f"T.axis.remap expects one of 'S'/'R' per loop var, got "
                             f"{kinds!r} for {len(spec.values)} vars")
        out = []
        for k, v in zip(kinds, spec.values):
            dom = self.loops.get(id(v))
            if dom is None:
                raise self.error(node, f"T.axis.remap binds loop vars; {v} is not one")
            lo, extent = dom
            out.append(T.Axis(_REMAP[k], extent if _is_zero(lo) else (lo, op.add(lo, extent)),
                              v))
        return out

    def block(self, frame: T.BlockFrame, node: ast.With) -> Stmt:
        self.saw_block = True
        state = BlockState(frame.name or "b")
        self.blocks.append(state)
        self.ev.push()
        try:
            body = self.visit_body(node.body)
        finally:
            self.ev.pop()
            self.blocks.pop()
        blk = self.build(node, Block, state.iter_vars, state.name, alloc_buffers=state.allocs,
                         init=state.init, body=body, annotations=state.annotations or None)
        pred = state.predicate
        pred = op.const(bool(pred)) if isinstance(pred, (bool, int)) else pred
        return self.build(node, BlockRealize, state.values, pred, blk)


def _iter_var(var: Var, lo: PrimExpr, extent: PrimExpr, kind: IterVarType) -> IterVar:
    return IterVar(None, var, kind, min=lo, extent=extent)


def _axis_extent_node(node: ast.AST) -> ast.expr | None:
    """``n`` of an axis written ``T.axis.spatial((lo, lo + n), v)``, else None."""
    value = getattr(node, "value", None)
    if not isinstance(value, ast.Call) or not value.args:
        return None
    dom = value.args[0]
    if isinstance(dom, ast.Tuple) and len(dom.elts) == 2:
        return offset_of(dom.elts[0], dom.elts[1])
    return None


def _is_zero(e: Any) -> bool:
    return isinstance(e, IntImm) and e.value == 0
