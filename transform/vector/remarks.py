"""What the vector passes report: one ``VectorizeRemark`` per loop, and ``VectorizeError``.

Every vector pass (``VectorizeScans``, ``VectorizeReductions``,
``VersionSymbolicStrides``, ``StripMineVectorLoops``, ``IfConvertVectorLoops``,
``VectorizeLoop``) reports on a loop with a ``VectorizeRemark`` naming itself
(``pass_name``), emitted beside the IR (``transform.collect_remarks()``,
``PassContext.remarks``, ``Module.remarks``). The copies passes make of a loop (the
strip-mined main loop and tail, a reduction's sub-loops, a versioned fast path) report
too; at the end of a pass run their remarks fold into one per loop the user wrote
(``VectorizeRemark.fold``, called by transform/remarks.py), details after the reason::

    main: loop i (16 lanes): vectorized: strip-mined by 16 (the target's 512-bit
        registers / float32); predicated tail
"""

from __future__ import annotations

import json
import re
import textwrap
from collections.abc import Sequence

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

#: ``str(remark)`` wraps at this many columns; continuation lines are indented.
WIDTH = 100

_CODE = re.compile(r"annotations=\{[^}]*\}")
_NBSP = "\xa0"

#: The pass whose remark says what became of the loop in the end.
_FINAL_PASS = "VectorizeLoop"
#: Passes that rewrite the loop themselves: their "vectorized" remark is the headline.
_REWRITING_PASSES = ("VectorizeScans", "VectorizeReductions")


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


@attrs.frozen(repr=False)
class VectorizeRemark:
    """What a vector pass did with one loop: ``outcome`` is vectorized / predicated /
    partially vectorized / scalarized / not vectorized (``VectorizeLoop``), not a
    reduction, if-converted, versioned, ... (the pass named by ``pass_name``)."""

    func_name: str
    loop_var: str
    #: Lanes of the vectors (0: the remark is not about a vector width).
    lanes: int | str
    outcome: str
    reason: str = ""
    #: The pass that made the remark (without the ``tir.`` prefix).
    pass_name: str = _FINAL_PASS
    #: What the user could change, e.g. ``annotations={"tir.vector_length": 32}``.
    hint: str = ""
    #: Which copy of the loop: "" (the loop, or a copy like it) or "tail" (its last vector).
    part: str = ""

    @property
    def line(self) -> str:
        """The remark on one line (``str()`` wraps it at ``WIDTH`` columns)."""
        lanes = f" ({self.lanes} lanes)" if self.lanes else ""
        head = f"{self.func_name}: loop {self.loop_var}{lanes}: "
        text = head + _said(self.outcome, self.reason)
        return f"{text}; hint: {self.hint}" if self.hint else text

    def __str__(self) -> str:
        # Code to paste (annotations={"key": value}) stays on one line: its spaces are
        # non-breaking while the text wraps.
        line = _CODE.sub(lambda m: m.group(0).replace(" ", _NBSP), self.line)
        text = textwrap.fill(line, WIDTH, subsequent_indent="    ", break_long_words=False,
                             break_on_hyphens=False)
        return text.replace(_NBSP, " ")

    def __repr__(self) -> str:
        # Printed IR shows the remark as the sentence a user reads.
        return json.dumps(self.line)

    @classmethod
    def fold(cls, remarks: Sequence[VectorizeRemark], loop_var: str) -> VectorizeRemark:
        """The one remark on the user's loop ``loop_var`` from the remarks of its copies,
        in pass order: the headline is what the loop became, the rest are details."""
        remarks = [attrs.evolve(r, loop_var=loop_var) for r in remarks]
        head = _headline(remarks)
        folding = _Folding(head, any(r.outcome == "versioned" for r in remarks))
        details: list[str] = [_said(head.outcome, head.reason)]  # said once, first
        for remark in remarks:
            detail = None if remark is head else folding.detail(remark)
            if detail and detail not in details and detail not in head.reason:
                details.append(detail)
        lanes = head.lanes or next((r.lanes for r in remarks if r.lanes), 0)
        hint = next((r.hint for r in remarks if r.hint), "")
        reason = "; ".join(text for text in [head.reason, *details[1:]] if text)
        return attrs.evolve(head, lanes=lanes, reason=reason, hint=hint, part="")


def _headline(remarks: list[VectorizeRemark]) -> VectorizeRemark:
    """The remark saying what became of the loop: a scan or reduction rewrite, else
    ``VectorizeLoop``'s on the main copy, else the first."""
    for r in remarks:
        if r.pass_name in _REWRITING_PASSES and r.outcome == VECTORIZED:
            return r
    final = [r for r in remarks if r.pass_name == _FINAL_PASS]
    return next((r for r in final if r.part != "tail"), final[0] if final else remarks[0])


class _Folding:
    """What each further remark on a loop adds to its headline remark ``head``."""

    def __init__(self, head: VectorizeRemark, versioned: bool):
        self.head = head
        #: A copy that differs is the general path of a versioned loop (the fast path,
        #: visited first, heads), else a copy of some other pass.
        self.copy = "general path" if versioned else "a copy"
        #: (outcome, reason) of the copies met so far: a tail like its loop adds nothing.
        self.seen = {self._key(head)}

    def _key(self, remark: VectorizeRemark) -> tuple[str, str]:
        return remark.outcome, _after_note(remark.reason, self.head.reason)

    def detail(self, remark: VectorizeRemark) -> str | None:
        """What ``remark`` adds (None: nothing)."""
        if remark.pass_name != _FINAL_PASS:
            if remark.part == "tail":
                return None  # a tail's guard, turned into the lane mask "predicated tail" says
            return _said(remark.outcome, remark.reason)
        key = self._key(remark)
        if remark.part == "tail":
            return self._tail(remark, key)
        self.seen.add(key)
        if remark.outcome == self.head.outcome and (self.head.pass_name != _FINAL_PASS
                                                    or key[1] == self._key(self.head)[1]):
            return None  # a sub-loop or copy that became what the loop became
        return _joined(f"{self.copy} {remark.outcome}", key[1])

    def _tail(self, remark: VectorizeRemark, key: tuple[str, str]) -> str | None:
        vector = (VECTORIZED, PREDICATED)  # a tail is guarded: as vector code, it is masked
        if remark.outcome in vector and self.head.outcome in vector:
            return "predicated tail"
        if key in self.seen:
            return None  # the tail stayed serial as its loop did, for the same reason
        return _joined(f"tail {remark.outcome}", key[1])


def _after_note(reason: str, head_reason: str) -> str:
    """``reason`` without the strip-mining note ``head_reason`` starts with (said once)."""
    note = head_reason.split("; ")[0]
    if note.startswith("strip-mined") and reason.startswith(note):
        return reason[len(note):].removeprefix("; ")
    return reason


def _said(outcome: str, reason: str) -> str:
    """``outcome: reason``, or the reason alone when it starts with the outcome."""
    return reason if reason.startswith(outcome) else _joined(outcome, reason)


def _joined(outcome: str, reason: str) -> str:
    return f"{outcome}: {reason}" if reason else outcome


__all__ = [
    "NOT_VECTORIZED",
    "PARTIAL",
    "PREDICATED",
    "SCALARIZED",
    "VECTORIZED",
    "WIDTH",
    "VectorizeError",
    "VectorizeRemark",
]
