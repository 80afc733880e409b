"""Buffers: a typed, shaped view of memory behind a handle variable."""

from __future__ import annotations

from typing import Any, Sequence

import attrs

from . import dtype as dt
from .node import Node, expr_field, exprs_field, node


@node
class Buffer(Node):
    """``shape`` elements of ``dtype`` at the address held by the handle ``data``.

    Buffers compare by identity; two buffers over the same ``data`` are two views.
    ``strides`` empty means compact row-major. ``buf[i, j]`` builds a ``BufferLoad``.
    """

    data: Any = expr_field()
    dtype: str = attrs.field()
    shape: tuple = exprs_field()
    strides: tuple = exprs_field(factory=tuple)
    elem_offset: Any = expr_field(default=0)
    name: str = attrs.field(default="buffer")
    scope: str = attrs.field(default="")

    def __attrs_post_init__(self):
        from .expr import IntImm, PrimExpr, Var
        from .op import convert

        if not isinstance(self.data, Var) or self.data.dtype != "handle":
            raise TypeError(f"Buffer {self.name}: data must be a handle Var, got {self.data!r}")
        object.__setattr__(self, "dtype", dt.canonical(self.dtype))
        shape = tuple(_index_expr(s, self.name, "shape") for s in self.shape)
        for i, extent in enumerate(shape):
            if type(extent) is IntImm and extent.value < 0:
                raise ValueError(f"Buffer {self.name}: shape[{i}] is {extent.value}, which is "
                                 "negative; a buffer's shape must be >= 0")
        strides = tuple(_index_expr(s, self.name, "strides") for s in self.strides)
        if strides and len(strides) != len(shape):
            raise ValueError(
                f"Buffer {self.name}: {len(strides)} strides for {len(shape)} dimensions"
            )
        offset = self.elem_offset
        offset = convert(offset) if not isinstance(offset, PrimExpr) else offset
        object.__setattr__(self, "shape", shape)
        object.__setattr__(self, "strides", strides)
        object.__setattr__(self, "elem_offset", offset)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def __getitem__(self, indices: Any):
        from .expr import BufferLoad

        if not isinstance(indices, tuple):
            indices = (indices,)
        return BufferLoad(self, indices)

    def vload(self, begin: Sequence[Any], dtype: str | None = None):
        """Load ``dtype`` (lanes of this buffer's element) starting at ``begin``."""
        from .expr import BufferLoad, Ramp

        begin = tuple(begin) if isinstance(begin, (list, tuple)) else (begin,)
        lanes = dt.lanes_of(dtype) // dt.lanes_of(self.dtype) if dtype else 1
        if lanes > 1:
            begin = begin[:-1] + (Ramp(begin[-1], 1, lanes),)
        return BufferLoad(self, begin)


def _index_expr(value: Any, name: str, field: str):
    from .expr import PrimExpr
    from .op import convert

    expr = value if isinstance(value, PrimExpr) else convert(value)
    if not dt.DataType(expr.dtype).is_integer:
        raise TypeError(f"Buffer {name}: {field} must be integers, got {expr.dtype}")
    return expr


def decl_buffer(
    shape: Any,
    dtype: str = "float32",
    name: str = "buffer",
    data: Any = None,
    strides: Any = None,
    elem_offset: Any = None,
    scope: str = "",
) -> Buffer:
    """Declare a buffer; a handle var named ``name`` is made when ``data`` is None.

    >>> A = decl_buffer((16,), "float32", "A")
    >>> A.shape[0].value, A.data.dtype
    (16, 'handle')
    """
    from .expr import Var

    if not isinstance(shape, (list, tuple)):
        shape = (shape,)
    if data is None:
        data = Var(name, "handle", type_annotation=dt.canonical(dtype))
    return Buffer(
        data,
        dtype,
        tuple(shape),
        tuple(strides or ()),
        0 if elem_offset is None else elem_offset,
        name,
        scope,
    )


def flat_view(buf: Buffer) -> Buffer:
    """A one-dimensional buffer ``<name>_flat`` over ``buf``'s memory (its data var and
    element offset), as many elements long as ``buf``'s dense shape holds: for an access
    that runs across rows, such as one vector load of a whole dense tile."""
    size: Any = 1
    for d in buf.shape:
        size = size * (d.value if getattr(d, "value", None) is not None else d)
    return decl_buffer((size,), buf.dtype, f"{buf.name}_flat", data=buf.data,
                       elem_offset=buf.elem_offset)
