"""``compute_inline`` and ``reverse_compute_inline``."""

from __future__ import annotations

from ...function import PrimFunc


def compute_inline(func: PrimFunc, block: str) -> PrimFunc:
    raise NotImplementedError("compute_inline")


def reverse_compute_inline(func: PrimFunc, block: str) -> PrimFunc:
    raise NotImplementedError("reverse_compute_inline")
