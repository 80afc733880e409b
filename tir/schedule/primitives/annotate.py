"""Loop kinds and annotations: ``parallel``, ``vectorize``, ``unroll``, ``annotate``."""

from __future__ import annotations

from typing import Any

from ...expr import Var
from ...function import PrimFunc


def set_kind(func: PrimFunc, loop: Var, kind: str) -> PrimFunc:
    """``kind`` is ``"parallel"``, ``"vectorize"`` or ``"unroll"``."""
    raise NotImplementedError("set_kind")


def annotate(func: PrimFunc, target: str | Var, key: str, value: Any) -> PrimFunc:
    """``target`` is a block name or a loop var."""
    raise NotImplementedError("annotate")


def unannotate(func: PrimFunc, target: str | Var, key: str) -> PrimFunc:
    raise NotImplementedError("unannotate")
