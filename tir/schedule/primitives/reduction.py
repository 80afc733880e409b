"""``decompose_reduction``."""

from __future__ import annotations

from ...expr import Var
from ...function import PrimFunc


def decompose_reduction(func: PrimFunc, block: str, loop: Var) -> tuple[PrimFunc, str]:
    """Returns ``(new_func, name of the init block)``."""
    raise NotImplementedError("decompose_reduction")
