"""Vector-building expressions: ``Ramp``, ``Broadcast``, ``Shuffle``.

Their lane count is an int or, for scalable vectors, ``k * tir.vscale()``;
``tir.expr`` re-exports them with the other expression nodes.
"""

from __future__ import annotations

from typing import Any

import attrs

from . import dtype as dt
from .expr import Call, IntImm, Mul, PrimExpr, _expr_of
from .node import expr_field, exprs_field, node


def scalable_factor(lanes: Any) -> int | None:
    """The ``k`` of a lane count written ``k * vscale()``, else None."""
    if isinstance(lanes, Call) and lanes.op == "tir.vscale":
        return 1
    if isinstance(lanes, Mul):
        for c, v in ((lanes.a, lanes.b), (lanes.b, lanes.a)):
            if isinstance(c, IntImm) and isinstance(v, Call) and v.op == "tir.vscale":
                return c.value
    return None


def _vector_dtype(owner: str, element: str, lanes: Any) -> tuple[Any, str]:
    """Validate a lane count (int or ``k * vscale()``) and build the dtype."""
    if isinstance(lanes, IntImm):
        lanes = lanes.value
    if isinstance(lanes, int) and not isinstance(lanes, bool):
        if lanes < 1:
            raise ValueError(f"{owner}: lanes must be at least 1, got {lanes}")
        return lanes, dt.with_lanes(element, lanes * dt.lanes_of(element))
    factor = scalable_factor(lanes)
    if factor is None or factor < 1:
        raise TypeError(
            f"{owner}: lanes must be a positive int or k * tir.vscale(), got {lanes!r}"
        )
    if dt.lanes_of(element) != 1:
        raise TypeError(f"{owner}: a scalable vector needs a scalar element, got {element}")
    return lanes, dt.with_scalable_lanes(element, factor)


@node
class Ramp(PrimExpr):
    """The vector ``[base, base + stride, ..., base + (lanes-1) * stride]``."""

    base: PrimExpr = expr_field()
    stride: PrimExpr = expr_field()
    lanes: Any = attrs.field()
    dtype: str = attrs.field(init=False, default="")

    def __attrs_post_init__(self):
        base = _expr_of(self.base, "Ramp", "base")
        stride = _expr_of(self.stride, "Ramp", "stride", base)
        if base.dtype != stride.dtype:
            raise TypeError(
                f"Ramp: base and stride dtypes differ: base is {base.dtype}, "
                f"stride is {stride.dtype}"
            )
        if dt.lanes_of(base.dtype) != 1:
            raise TypeError(f"Ramp: base must be a scalar, got {base.dtype}")
        lanes, dtype = _vector_dtype("Ramp", base.dtype, self.lanes)
        object.__setattr__(self, "base", base)
        object.__setattr__(self, "stride", stride)
        object.__setattr__(self, "lanes", lanes)
        object.__setattr__(self, "dtype", dtype)


@node
class Broadcast(PrimExpr):
    """``value`` repeated in ``lanes`` lanes."""

    value: PrimExpr = expr_field()
    lanes: Any = attrs.field()
    dtype: str = attrs.field(init=False, default="")

    def __attrs_post_init__(self):
        value = _expr_of(self.value, "Broadcast", "value")
        if dt.lanes_of(value.dtype) != 1 or dt.DataType(value.dtype).is_scalable:
            raise TypeError(f"Broadcast: value must be a scalar, got {value.dtype}")
        if value.dtype == "handle":
            raise TypeError("Broadcast: a handle cannot be broadcast to a vector")
        lanes, dtype = _vector_dtype("Broadcast", value.dtype, self.lanes)
        object.__setattr__(self, "value", value)
        object.__setattr__(self, "lanes", lanes)
        object.__setattr__(self, "dtype", dtype)


@node
class Shuffle(PrimExpr):
    """Lanes picked from the concatenation of ``vectors`` by ``indices``."""

    vectors: tuple = exprs_field()
    indices: tuple = exprs_field()
    dtype: str = attrs.field(init=False, default="")

    def __attrs_post_init__(self):
        vectors = tuple(_expr_of(v, "Shuffle", "vectors") for v in self.vectors)
        if not vectors:
            raise ValueError("Shuffle: needs at least one vector")
        element = dt.element_of(vectors[0].dtype)
        for v in vectors:
            if dt.element_of(v.dtype) != element:
                raise TypeError(
                    f"Shuffle: vectors differ in element type: {vectors[0].dtype} and {v.dtype}"
                )
        total = sum(dt.lanes_of(v.dtype) for v in vectors)
        indices = tuple(IntImm("int32", i) if isinstance(i, int) else i for i in self.indices)
        if not indices:
            raise ValueError("Shuffle: needs at least one index")
        for i in indices:
            if not isinstance(i, IntImm) or not 0 <= i.value < total:
                raise ValueError(f"Shuffle: index {i} out of range [0, {total})")
        object.__setattr__(self, "vectors", vectors)
        object.__setattr__(self, "indices", indices)
        object.__setattr__(self, "dtype", dt.with_lanes(element, len(indices)))
