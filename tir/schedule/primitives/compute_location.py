"""``compute_at`` and ``reverse_compute_at``."""

from __future__ import annotations

from ...expr import Var
from ...function import PrimFunc


def compute_at(func: PrimFunc, block: str, loop: Var, preserve_unit_loops: bool = False
               ) -> PrimFunc:
    raise NotImplementedError("compute_at")


def reverse_compute_at(func: PrimFunc, block: str, loop: Var, preserve_unit_loops: bool = False
                       ) -> PrimFunc:
    raise NotImplementedError("reverse_compute_at")
