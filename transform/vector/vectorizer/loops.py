"""``LoopVectorizer``: find the ``VECTORIZED`` loops of a body and vectorize each one.

Loops are vectorized inside out: the body of a vectorized loop is processed
first, so a vectorized loop nested in another one is already vector code
when the outer loop is vectorized, and the two merge into one wider vector
(lane ``outer_lane * inner_lanes + inner_lane``).
"""

from __future__ import annotations

from typing import Any

from target import has_sve
from tir.arith import Analyzer
from tir.arith.const_int_bound import MAX_VSCALE
from tir.expr import Call, Cast, IntImm, scalable_factor
from tir.functor import StmtMutator, post_order_visit, substitute
from tir.node import replace
from tir.stmt import AttrStmt, For, ForKind, Stmt

from ..analysis.aliasing import DISTINCT
from ..analysis.legality import ASSUME_INDEPENDENT, Legality, analyze_loop
from ..remarks import (
    NOT_VECTORIZED,
    PARTIAL,
    PREDICATED,
    SCALARIZED,
    VECTORIZED,
    VectorizeError,
    VectorizeRemark,
)
from ..tail import PREDICATE_TAIL, STRIP_MINED, TAIL_NOTE, scalar_predicates_to_branches
from ..vector_length import narrow_load_hint
from .lanes import MixedLanesError, ScalableLanes
from .stmt_rules import Vectorizer

#: The hint on a loop kept serial by a dependence at a distance unknown to the pass.
ASSUME_HINT = ("if no two iterations touch the same element, say so: "
               f'annotations={{"{ASSUME_INDEPENDENT}": True}}')


class LoopVectorizer(StmtMutator):
    """Vectorizes every ``ForKind.VECTORIZED`` loop below a statement; collects remarks."""

    def __init__(self, func_name: str = "main", target: Any = None,
                 predicate: bool | None = False, any_dim: bool = False,
                 shared: frozenset = DISTINCT):
        self.func_name = func_name
        #: The data vars that may be one memory (params declared to alias; aliasing.py).
        self.shared = shared
        self.target = target
        #: Indices may widen in any dimension (config ``tir.vectorize.any_dim_access``).
        self.any_dim = any_dim
        #: Buffer-level predication (config ``tir.enable_buffer_level_predication``);
        #: None: on where the loop's target has SVE.
        self.predicate = predicate
        self.analyzer = Analyzer()
        self.remarks: list[VectorizeRemark] = []
        #: id(remark) -> the var of the loop it is about (remarks fold per source loop).
        self.remark_loops: dict[int, Any] = {}

    def visit_for(self, loop: For) -> Stmt:
        # Loop facts hold inside the loop only: a fact of the full-vector loop (n >= 16
        # while it runs) must not prove the peeled tail's accesses in bounds.
        with self.analyzer.loop_scope(loop.loop_var, loop.min, loop.extent):
            if loop.kind != ForKind.VECTORIZED:
                return self.generic_visit(loop)
            return self._vectorize_named(loop)

    def _vectorize_named(self, loop: For) -> Stmt:
        try:
            return self._vectorize(loop)
        except VectorizeError as err:
            if err.func_name is not None:
                raise
            raise VectorizeError(err.loop_var, err.reason, self.func_name) from None

    def _vectorize(self, loop: For) -> Stmt:
        """One vectorized loop, after the vectorized loops inside it; records its remark."""
        lanes = self._lanes(loop)
        slot = len(self.remarks)  # this loop's remark goes before those of the loops inside it
        body = self.visit_stmt(loop.body)  # inner vectorized loops first
        if lanes == 1:  # one iteration: nothing to widen
            result = substitute(body, {loop.loop_var: loop.min})
            self.remarks.insert(slot, self._remark(loop, 1, VECTORIZED, "extent 1"))
            return scalar_predicates_to_branches(result)
        legality = self._legality(loop, lanes, body)
        if not legality.legal:  # a dependence crosses the whole body: no vector code at all
            reason = legality.serial_reason
            hint = ASSUME_HINT if legality.waivable else ""
            self.remarks.insert(slot, self._remark(loop, lanes, NOT_VECTORIZED, reason, hint))
            return replace(loop, kind=ForKind.SERIAL, body=scalar_predicates_to_branches(body))
        tail = bool(_annotation(loop, PREDICATE_TAIL))
        vectorizer = Vectorizer(loop.loop_var, lanes, loop.min, self.analyzer, legality.units,
                                self._predicates() or tail, tail, self.any_dim)
        try:
            result = vectorizer.vectorize(body)
        except MixedLanesError as err:
            if not _annotation(loop, STRIP_MINED):
                raise VectorizeError(loop.loop_var.name, str(err)) from None
            # Our own VLA loop (StripMineVectorLoops on SVE), not the user's: stay serial.
            self.remarks.insert(slot, self._remark(loop, lanes, NOT_VECTORIZED, str(err)))
            return replace(loop, kind=ForKind.SERIAL, body=scalar_predicates_to_branches(body))
        outcome, reason = _outcome(vectorizer)
        inner = [r.loop_var for r in self.remarks[slot:]
                 if r.outcome not in (SCALARIZED, NOT_VECTORIZED)]
        if inner and outcome != SCALARIZED:
            merged = f"merged with the vectorized loop(s) {', '.join(inner)} inside it"
            reason = f"{merged}; {reason}" if reason else merged
        if _assumes_independence(loop):
            note = f"dependences not checked ({ASSUME_INDEPENDENT})"
            reason = f"{reason}; {note}" if reason else note
        self.remarks.insert(slot, self._remark(loop, lanes, outcome, reason))
        return scalar_predicates_to_branches(result)  # what stayed scalar (if-converted code)

    def _predicates(self) -> bool:
        """Whether tail guards become lane masks: the config, else whether the target has SVE."""
        return has_sve(self.target) if self.predicate is None else self.predicate

    def _legality(self, loop: For, lanes: int | ScalableLanes, body: Stmt) -> Legality:
        """The dependence analysis of ``loop`` (with its inner vectorized loops rewritten),
        unless the loop carries the user's promise that its iterations are independent.

        A scalable loop is checked for its most lanes (``k * MAX_VSCALE``, SVE's
        2048 bits): a dependence legal for every vector length the code may meet.
        """
        if _assumes_independence(loop):
            return Legality()
        if isinstance(lanes, ScalableLanes):
            lanes = lanes.factor * MAX_VSCALE
        return analyze_loop(loop.loop_var, lanes, loop.min, body, self.analyzer, self.shared)

    def visit_attr_stmt(self, node: AttrStmt) -> Stmt:
        if node.attr_key != "target":
            return self.generic_visit(node)
        outer, self.target = self.target, node.node
        try:
            return self.generic_visit(node)
        finally:
            self.target = outer

    def _lanes(self, loop: For) -> int | ScalableLanes:
        """The lane count of a vectorized loop, or a VectorizeError saying why there is none.

        ``k * vscale()`` is ``ScalableLanes(k)`` on an SVE target (TVM's rule).
        """
        name, extent = loop.loop_var.name, loop.extent
        if isinstance(extent, IntImm):
            if extent.value < 1:
                raise VectorizeError(name, f"extent {extent.value} is below 1")
            return extent.value
        if _contains_vscale(extent):
            # an int64 loop var gets Cast("int64", vscale() * k) from StripMineVectorLoops
            factor = scalable_factor(extent.value if isinstance(extent, Cast) else extent)
            if factor is None or factor < 1 or not has_sve(self.target):
                raise VectorizeError(name, _scalable_reason(extent, self.target))
            return ScalableLanes(factor)
        raise VectorizeError(
            name, f"extent {extent} is not a constant; a vectorized loop needs a constant "
            "extent (split the loop by a constant factor and vectorize the inner part)"
        )

    def _remark(self, loop: For, lanes: int | ScalableLanes, outcome: str,
                reason: str, hint: str = "") -> VectorizeRemark:
        note, part = str(_annotation(loop, STRIP_MINED) or ""), ""
        if not hint and isinstance(lanes, int) and "the target's" in note:  # VL: the widest
            hint = narrow_load_hint(loop.body, lanes)
        if note.endswith(TAIL_NOTE):  # a peeled tail: folds into its loop's remark
            note, part = note[:-len(TAIL_NOTE)], "tail"
        if note:
            reason = f"{note}; {reason}" if reason else note
        count = lanes if isinstance(lanes, int) else str(lanes)  # "vscale x 4"
        remark = VectorizeRemark(self.func_name, loop.loop_var.name, count, outcome, reason,
                                 hint=hint, part=part)
        self.remark_loops[id(remark)] = loop.loop_var
        return remark


def _annotation(loop: For, key: str) -> Any:
    return (loop.annotations or {}).get(key)


def _assumes_independence(loop: For) -> bool:
    """Whether the user promised that the loop's iterations are independent."""
    return bool(_annotation(loop, ASSUME_INDEPENDENT))


def _outcome(vectorizer: Vectorizer) -> tuple[str, str]:
    reason = "; ".join(vectorizer.reasons)
    if vectorizer.scalarized_all:
        return SCALARIZED, reason
    notes = vectorizer.predicated + vectorizer.masked_reads
    if vectorizer.reasons:
        return PARTIAL, "; ".join(notes + vectorizer.reasons)
    if vectorizer.predicated:
        return PREDICATED, "; ".join(notes)
    return VECTORIZED, "; ".join(notes)


def _contains_vscale(e: Any) -> bool:
    found = []
    post_order_visit(e, lambda n: found.append(n) if isinstance(n, Call)
                     and n.op == "tir.vscale" else None)
    return bool(found)


def _scalable_reason(extent: Any, target: Any) -> str:
    """TVM's message, and what would make the loop vectorizable."""
    failed = f"Failed to vectorize loop with extent {extent} for target {target}"
    if not has_sve(target):
        return f"{failed}: scalable vectors need an SVE target (-mattr=+sve)"
    return f"{failed}: a scalable extent must be k * vscale() with a constant k >= 1"


__all__ = ["LoopVectorizer"]
