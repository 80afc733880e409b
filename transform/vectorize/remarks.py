"""What the vectorizer reports: one ``VectorizeRemark`` per loop, and ``VectorizeError``.

The ``VectorizeLoop`` pass stores the remarks of a function on its attribute
``"tir.vectorize_remarks"`` (only on functions it changed);
``vectorize_remarks(mod_or_func)`` reads them back.
"""

from __future__ import annotations

import json
from typing import Any

import attrs

from tir.function import IRModule, PrimFunc

#: The PrimFunc attribute holding the remarks of the last VectorizeLoop run.
REMARKS_ATTR = "tir.vectorize_remarks"

#: Every statement of the loop body became vector code.
VECTORIZED = "vectorized"
#: Some statements became vector code; others stayed in a serial loop (see the reason).
PARTIAL = "partially vectorized"
#: The whole body stayed a serial loop (see the reason).
SCALARIZED = "scalarized"


class VectorizeError(ValueError):
    """A vectorized loop the pass cannot accept; names the loop and the reason."""

    def __init__(self, loop_var: str, reason: str, func_name: str | None = None):
        self.loop_var = loop_var
        self.reason = reason
        self.func_name = func_name
        where = f"{func_name}: " if func_name else ""
        super().__init__(f"{where}cannot vectorize loop {loop_var}: {reason}")


@attrs.frozen(repr=False)
class VectorizeRemark:
    """What happened to one vectorized loop: ``outcome`` is vectorized / partially / scalarized."""

    func_name: str
    loop_var: str
    lanes: int
    outcome: str
    reason: str = ""

    def __str__(self) -> str:
        text = f"{self.func_name}: loop {self.loop_var} ({self.lanes} lanes): {self.outcome}"
        return f"{text}: {self.reason}" if self.reason else text

    def __repr__(self) -> str:
        # Printed IR shows the remark as the sentence a user reads.
        return json.dumps(str(self))


def vectorize_remarks(mod_or_func: Any) -> list[VectorizeRemark]:
    """The remarks VectorizeLoop left on a PrimFunc, or on every function of an IRModule."""
    if isinstance(mod_or_func, PrimFunc):
        return list(mod_or_func.attrs.get(REMARKS_ATTR, ()))
    if isinstance(mod_or_func, IRModule):
        out: list[VectorizeRemark] = []
        for func in mod_or_func.functions.values():
            out.extend(func.attrs.get(REMARKS_ATTR, ()))
        return out
    raise TypeError(
        f"vectorize_remarks expects an IRModule or a PrimFunc, got {type(mod_or_func).__name__}"
    )
