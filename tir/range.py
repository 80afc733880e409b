"""``Range``: a half-open integer interval ``[min, min + extent)``, as TVM's ``tvm.ir.Range``."""

from __future__ import annotations

from typing import Any

from .expr import PrimExpr
from .node import Node, expr_field, node


@node
class Range(Node):
    """The integers ``min, min + 1, ..., min + extent - 1``.

    ``Range(begin, end)`` covers ``[begin, end)``; ``Range(end)`` covers ``[0, end)``.
    """

    min: PrimExpr = expr_field()
    extent: PrimExpr = expr_field()

    def __init__(self, begin: Any = None, end: Any = None, **fields: Any):
        from . import op

        if fields:  # Range(min=..., extent=...): how attrs.evolve (node.replace) rebuilds one
            if begin is not None or end is not None or set(fields) != {"min", "extent"}:
                raise TypeError(f"Range: give (begin, end) or min= and extent=, got {fields}")
            self.__attrs_init__(*_min_extent(fields["min"], fields["extent"]))
            return
        if begin is None:
            raise TypeError("Range: missing the end of the range")
        if end is None:
            begin, end = 0, begin
        begin, end = _as_index(begin, "begin"), _as_index(end, "end")
        begin, end = op.promote(begin, end, "Range")
        self.__attrs_init__(begin, op.sub(end, begin))

    @staticmethod
    def from_min_extent(min_value: Any, extent: Any) -> Range:
        """The range ``[min_value, min_value + extent)``."""
        out = object.__new__(Range)
        out.__attrs_init__(*_min_extent(min_value, extent))
        return out

    def script(self) -> str:
        """``Range(min, extent)`` text."""
        return f"Range(min={self.min}, extent={self.extent})"


def _min_extent(min_value: Any, extent: Any) -> tuple[PrimExpr, PrimExpr]:
    from . import op

    lo, ext = _as_index(min_value, "min"), _as_index(extent, "extent")
    return op.promote(lo, ext, "Range")


def _as_index(value: Any, field: str) -> PrimExpr:
    from . import dtype as dt
    from . import op

    if isinstance(value, bool) or not isinstance(value, (int, PrimExpr)):
        raise TypeError(f"Range: {field} must be an int or an integer PrimExpr, got {value!r}")
    e = op.convert(value)
    t = dt.DataType(e.dtype)
    if not t.is_integer or t.is_vector:
        raise TypeError(f"Range: {field} must be a scalar integer, got dtype {e.dtype}")
    return e
