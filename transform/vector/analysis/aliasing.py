"""Which buffers may share memory: the params of a function declaring ``tir.noalias`` False.

Buffer params are distinct memory by default: they are compiled ``noalias``
and calls refuse arrays that overlap (codegen/runtime/args.py). A function with the
attribute ``"tir.noalias": False`` (``PrimFunc.params_may_alias``) is called
with any overlap, so any two of its buffer params may be the same memory at
an unknown offset. The vectorizers then take an access to one and an access
to another as possibly the same element, an unknown distance apart: the
dependence analysis keeps such pairs in serial order, and a reduction or
search whose accumulator may share memory with another param is not
rewritten. Buffers the function allocates never alias a param.
"""

from __future__ import annotations

from typing import Any

from tir.expr import BufferLoad, Var
from tir.function import PrimFunc
from tir.functor import post_order_visit
from tir.stmt import BufferStore

#: No two buffers share memory (a function whose params do not alias).
DISTINCT: frozenset = frozenset()


def shared_memory(func: PrimFunc) -> frozenset:
    """The ids of the data vars that may share memory with one another (see the module doc)."""
    if not func.params_may_alias:
        return DISTINCT
    ids = frozenset(id(buf.data) for buf in func.buffer_map.values())
    return ids if len(ids) > 1 else DISTINCT


def may_share(a: Var | None, b: Var | None, shared: frozenset) -> bool:
    """Whether data vars ``a`` and ``b`` may be one memory (``None``: opaque calls' state)."""
    return a is b or (a is not None and b is not None and id(a) in shared and id(b) in shared)


def other_shared_buffer(node: Any, data: Var, shared: frozenset) -> Any:
    """The first buffer over memory other than ``data`` that ``node`` accesses and that may
    share memory with ``data``; None when there is none."""
    if id(data) not in shared:
        return None
    found: list = []

    def visit(n: Any) -> None:
        if isinstance(n, (BufferLoad, BufferStore)) and n.buffer.data is not data \
                and id(n.buffer.data) in shared:
            found.append(n.buffer)

    post_order_visit(node, visit)
    return found[0] if found else None


def sharing_reason(a: Any, b: Any) -> str:
    """Words for a remark: buffers ``a`` and ``b`` may be one memory."""
    return (f"{a.name} and {b.name} may share memory (the function declares "
            "tir.noalias False)")


__all__ = ["DISTINCT", "may_share", "other_shared_buffer", "sharing_reason", "shared_memory"]
