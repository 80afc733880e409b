"""``transform_layout``: store an allocated buffer in a new (for example packed) layout."""

from __future__ import annotations

from typing import Any, Callable

from ...function import PrimFunc


def transform_layout(func: PrimFunc, block: str, buffer: Any, index_map: Callable,
                     pad_value: Any = None) -> PrimFunc:
    raise NotImplementedError("transform_layout")
