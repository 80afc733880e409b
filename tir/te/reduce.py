"""Reductions in compute bodies: ``comm_reducer``, ``sum``, ``max``, ``min`` and ``Reduce``."""

from __future__ import annotations

from typing import Any, Callable

import attrs

from .. import op
from ..block import IterVar
from ..expr import PrimExpr
from ..functor import post_order_visit
from ..node import DATA, expr_field, node


class CommReducer:
    """A commutative reducer: ``combine(x, y)`` with ``identity(dtype)`` as its neutral element.

    Calling it builds a ``Reduce``: ``reducer(expr, axis=[k], where=None, init=None)``.
    """

    def __init__(self, fcombine: Callable, fidentity: Callable, name: str):
        self.fcombine, self.fidentity, self.name = fcombine, fidentity, name

    def combine(self, x: PrimExpr, y: PrimExpr) -> PrimExpr:
        return self.fcombine(x, y)

    def identity(self, dtype: str) -> PrimExpr:
        value = self.fidentity(dtype)
        return value if isinstance(value, PrimExpr) else op.const(value, dtype)

    def __call__(self, expr: Any, axis: Any, where: Any = None, init: Any = None) -> Reduce:
        if not isinstance(expr, PrimExpr):
            expr = op.const(expr)
        axes = tuple(axis) if isinstance(axis, (list, tuple)) else (axis,)
        for a in axes:
            if not isinstance(a, IterVar) or not a.is_reduce:
                raise TypeError(f"te.{self.name}: axis must be te.reduce_axis IterVars, "
                                f"got {a!r}")
        cond = op.const(True, "bool") if where is None else where
        if init is not None and not isinstance(init, PrimExpr):
            init = op.const(init, expr.dtype)
        return Reduce(self, expr, axes, cond, init)

    def __repr__(self) -> str:
        return f"CommReducer({self.name})"


@node
class Reduce(PrimExpr):
    """The reduction of ``source`` over ``axis`` by ``combiner`` where ``condition`` holds.

    Only valid as the whole body of a ``te.compute``; ``create_prim_func`` turns
    it into a block with an ``init`` and an update.
    """

    combiner: Any = attrs.field(metadata={"kind": DATA})
    source: PrimExpr = expr_field()
    axis: tuple = attrs.field(converter=tuple, metadata={"kind": DATA})
    condition: PrimExpr = expr_field()
    init: PrimExpr | None = expr_field(default=None)
    dtype: str = attrs.field(init=False, default="")

    def __attrs_post_init__(self):
        object.__setattr__(self, "dtype", self.source.dtype)
        if self.condition.dtype != "bool":
            raise TypeError(f"te.{self.combiner.name}: where= must be a bool condition, "
                            f"got {self.condition.dtype}")
        if self.init is not None and self.init.dtype != self.dtype:
            raise TypeError(f"te.{self.combiner.name}: init is {self.init.dtype}, the "
                            f"reduction is {self.dtype}")

    def script(self) -> str:
        axes = ", ".join(a.var.name for a in self.axis)
        return f"T.{self.combiner.name}({self.source}, axis=[{axes}])"


def contains_reduce(expr: PrimExpr) -> bool:
    """Whether a ``Reduce`` sits anywhere in ``expr``."""
    found = []
    post_order_visit(expr, lambda n: found.append(n) if isinstance(n, Reduce) else None)
    return bool(found)


def comm_reducer(fcombine: Callable, fidentity: Callable, name: str = "reduce") -> CommReducer:
    """A reducer from a combine function and an identity function of the dtype (TVM's).

    >>> prod = comm_reducer(lambda x, y: x * y, lambda t: const(1, t), name="prod")
    """
    return CommReducer(fcombine, fidentity, name)


sum = comm_reducer(lambda x, y: x + y, lambda t: op.const(0, t), name="sum")  # noqa: A001
max = comm_reducer(op.max, op.min_value, name="max")  # noqa: A001
min = comm_reducer(op.min, op.max_value, name="min")  # noqa: A001

__all__ = ["CommReducer", "Reduce", "comm_reducer", "max", "min", "sum"]
