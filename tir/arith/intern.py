"""Hash-consing: a small integer per distinct expression structure.

``StructureIds.of(e)`` gives structurally equal expressions the same number
(free variables are compared by identity). Each node is keyed by its class,
its plain data and the numbers of its children, so one lookup per node
suffices and keys stay flat. The analyzer uses these numbers to reuse a
simplification across separately built but equal expressions.
"""

from __future__ import annotations

import itertools
from typing import Any

from .. import expr as E
from ..expr import FloatImm, IntImm, PrimExpr, Var
from .pattern import _shape

_LIMIT = 500_000
_BINARY = frozenset((E.Add, E.Sub, E.Mul, E.Div, E.Mod, E.FloorDiv, E.FloorMod, E.Min, E.Max,
                     E.EQ, E.NE, E.LT, E.LE, E.GT, E.GE, E.And, E.Or))


class StructureIds:
    """Numbers expression structures; cached per node object."""

    def __init__(self) -> None:
        self._by_node: dict[int, tuple] = {}
        self._by_key: dict[tuple, int] = {}
        self._counter = itertools.count()

    def clear(self) -> None:
        """Forget the table (structures met again get fresh numbers; memos stay valid)."""
        self._by_node.clear()
        self._by_key.clear()

    def of(self, e: Any) -> int:
        """The number of ``e``'s structure."""
        hit = self._by_node.get(id(e))
        if hit is not None and hit[0] is e:
            return hit[1]
        key = self._key(e)
        num = self._by_key.get(key)
        if num is None:
            num = next(self._counter)  # never reused, so memos keyed by old numbers stay right
            self._by_key[key] = num
        if len(self._by_node) > _LIMIT:
            self.clear()
        self._by_node[id(e)] = (e, num)
        return num

    def _key(self, e: Any) -> tuple:
        cls = type(e)
        if cls in _BINARY:
            return (cls, self.of(e.a), self.of(e.b))  # the operands fix the dtype
        if cls is IntImm:
            return (cls, e.dtype, e.value)
        if cls is FloatImm:
            return (cls, e.dtype, repr(e.value))  # keeps -0.0 apart from 0.0
        if isinstance(e, Var):
            return (Var, id(e), e)  # the var itself keeps its id from being reused
        children, data = _shape(cls)
        parts: list = [cls, e.dtype]
        for name in data:
            v = getattr(e, name)
            parts.append(self.of(v) if isinstance(v, PrimExpr) else _plain(v))
        for name, _ in children:
            v = getattr(e, name)
            if isinstance(v, tuple):
                parts.append(tuple(self.of(i) for i in v))
            elif isinstance(v, PrimExpr):
                parts.append(self.of(v))
            else:
                parts.append(id(v) if v is not None else None)  # buffers: by identity
        return tuple(parts)


def _plain(v: Any) -> Any:
    try:
        hash(v)
        return v
    except TypeError:
        return id(v)
