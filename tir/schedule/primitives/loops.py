"""Loop primitives: ``split``, ``fuse``, ``reorder``."""

from __future__ import annotations

from typing import Any

from ...expr import Var
from ...function import PrimFunc


def split(func: PrimFunc, loop: Var, factors: list, preserve_unit_iters: bool = True
          ) -> tuple[PrimFunc, list[Var]]:
    """Returns ``(new_func, new loop vars outer first)``."""
    raise NotImplementedError("split")


def fuse(func: PrimFunc, loops: list[Var], preserve_unit_iters: bool = True
         ) -> tuple[PrimFunc, Var]:
    """Returns ``(new_func, fused loop var)``."""
    raise NotImplementedError("fuse")


def reorder(func: PrimFunc, loops: list[Var]) -> PrimFunc:
    raise NotImplementedError("reorder")


__all__: list[Any] = ["split", "fuse", "reorder"]
