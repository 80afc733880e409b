"""What the printer declares so that its text reads back: the buffers over each data var.

A buffer is printed by name; for the name to mean something when the text is
parsed again, each buffer must be declared somewhere: in ``T.match_buffer``,
``T.alloc_buffer``, or, for a buffer that views an allocation, a let-bound
handle or a parameter, with ``B = T.Buffer(shape, dtype, data=p)``. The one
buffer that ``p = T.allocate(extents, dtype, scope)`` describes exactly is
indexed through ``p`` itself and needs no declaration.
"""

from __future__ import annotations

from typing import Any

from ..buffer import Buffer
from ..expr import IntImm, PrimExpr, Var
from ..functor import post_order_visit
from ..stmt import Allocate, LetStmt, Stmt


def buffer_views(body: Stmt) -> dict[int, list[Buffer]]:
    """``id(data var) -> the buffers accessed over it``, in the order first met."""
    views: dict[int, list[Buffer]] = {}

    def visit(node: Any) -> None:
        buf = getattr(node, "buffer", None)
        if isinstance(buf, Buffer):
            seen = views.setdefault(id(buf.data), [])
            if all(b is not buf for b in seen):
                seen.append(buf)

    post_order_visit(body, visit)
    return views


def let_vars(body: Stmt) -> set[int]:
    """The ids of the variables ``LetStmt``s in ``body`` bind."""
    out: set[int] = set()

    def visit(node: Any) -> None:
        if isinstance(node, LetStmt):
            out.add(id(node.var))

    post_order_visit(body, visit)
    return out


def buffer_vars(buf: Buffer) -> list:
    """The variables in ``buf``'s shape, strides and offset (what its declaration needs)."""
    out: list = []

    def visit(node: Any) -> None:
        if isinstance(node, Var):
            out.append(node)

    for e in buf.shape + buf.strides + (buf.elem_offset,):
        post_order_visit(e, visit)
    return out


def alloc_scope(views: dict, s: Allocate) -> str:
    """The storage scope an allocation prints: its buffers' (``"global"`` when unset)."""
    for buf in views.get(id(s.buffer_var), ()):
        if buf.scope and buf.scope != "global":
            return buf.scope
    return "global"


def is_implicit_view(buf: Buffer, s: Allocate, scope: str) -> bool:
    """Whether ``buf`` is the buffer that ``p = T.allocate(extents, dtype, scope)`` reads as:
    the allocation's dtype and extents, compact, at offset 0, of the printed ``scope``
    (``"global"`` reads back as the unset scope ``""``)."""
    if buf.dtype != s.dtype or buf.strides or len(buf.shape) != len(s.extents):
        return False
    if not is_zero32(buf.elem_offset) or buf.scope != ("" if scope == "global" else scope):
        return False
    return all(a is b or type(a) is IntImm and type(b) is IntImm and a.value == b.value
               and a.dtype == b.dtype for a, b in zip(buf.shape, s.extents))


def is_zero32(e: PrimExpr) -> bool:
    """Whether ``e`` is the int32 ``0``, the offset a buffer has unless told otherwise."""
    return type(e) is IntImm and e.value == 0 and e.dtype == "int32"
