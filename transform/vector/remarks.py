"""What the vectorizer reports: one ``VectorizeRemark`` per loop, and ``VectorizeError``.

The ``VectorizeLoop`` pass emits the remarks beside the IR
(``transform.collect_remarks()``, ``PassContext.remarks``, ``Module.remarks``).
"""

from __future__ import annotations

import json

import attrs

from tir import TVMError

#: Every statement of the loop body became vector code.
VECTORIZED = "vectorized"
#: Every statement became vector code, some with a tail guard turned into lane masks.
PREDICATED = "predicated"
#: Some statements became vector code; others stayed in a serial loop (see the reason).
PARTIAL = "partially vectorized"
#: The whole body stayed a serial loop (see the reason).
SCALARIZED = "scalarized"
#: The loop stayed serial because vector code would break a dependence (see the reason).
NOT_VECTORIZED = "not vectorized"


class VectorizeError(TVMError, ValueError):
    """A vectorized loop the pass cannot accept; names the loop and the reason.

    A ``tir.TVMError`` (what TVM's vectorizer raises) and a ``ValueError``.
    """

    def __init__(self, loop_var: str, reason: str, func_name: str | None = None):
        self.loop_var = loop_var
        self.reason = reason
        self.func_name = func_name
        where = f"{func_name}: " if func_name else ""
        super().__init__(f"{where}cannot vectorize loop {loop_var}: {reason}")


def loop_remark_text(func_name: str, loop_var: str, lanes: int, outcome: str,
                     reason: str = "") -> str:
    """``main: loop j (4 lanes): outcome: reason``, the line every per-loop remark prints."""
    text = f"{func_name}: loop {loop_var} ({lanes} lanes): {outcome}"
    return f"{text}: {reason}" if reason else text


@attrs.frozen(repr=False)
class VectorizeRemark:
    """What happened to one vectorized loop: ``outcome`` is vectorized / predicated /
    partially vectorized / scalarized / not vectorized."""

    func_name: str
    loop_var: str
    lanes: int
    outcome: str
    reason: str = ""

    def __str__(self) -> str:
        return loop_remark_text(self.func_name, self.loop_var, self.lanes, self.outcome,
                                self.reason)

    def __repr__(self) -> str:
        # Printed IR shows the remark as the sentence a user reads.
        return json.dumps(str(self))
