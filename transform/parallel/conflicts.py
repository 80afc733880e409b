"""May two iterations of a parallel loop touch the same memory? The analysis before the rewrite.

Threads run the iterations of a parallel loop at once and in any order; each
thread runs its iterations whole, statement after statement. That computes
what the serial loop computes when no two *different* iterations touch one
element with at least one of them writing it. Such a pair is a *conflict*:
``S[0] = S[0] + A[i]`` conflicts with itself (every iteration reads and
writes ``S[0]``), ``B[i + 1] = B[i]`` reads what the previous iteration
wrote, ``B[0] = A[i]`` leaves whichever write came last.

The accesses and the pair test are the vectorizer's (``analysis/accesses.py``,
``analysis/legality.py``), with the whole trip count as the "lanes" and no
ordering inside the body: for threads, any access of one iteration may run
before or after any access of another. Like the vectorizer, the test only
answers "no conflict" when that is certain; an index it cannot analyze, an
opaque call (an extern function's own state) or a ``while`` loop counts as a
possible conflict.
"""

from __future__ import annotations

import attrs

from tir import op
from tir.arith import Analyzer
from tir.expr import FloorDiv, FloorMod, IntImm, Var
from tir.functor import StmtExprMutator, post_order_visit, substitute
from tir.stmt import For, ForKind

from ..vector.analysis.accesses import Access, AccessCollector, finite, shown
from ..vector.analysis.aliasing import DISTINCT
from ..vector.analysis.legality import PairTest
from ..vector.analysis.pair_buckets import candidate_pairs


@attrs.frozen
class Conflict:
    """Two accesses (``first`` may be ``second``) that different iterations may make to
    one element, at least one of them a write."""

    first: Access
    second: Access

    @property
    def memory(self) -> frozenset:
        """The ids of the two accesses' data vars (None for an opaque call's state)."""
        return frozenset(None if a.data is None else id(a.data)
                         for a in (self.first, self.second))

    def describe(self, simplify=None) -> str:
        """The conflict as a sentence for a remark."""
        a, b = self.first, self.second
        if a.data is None or b.data is None:
            call = a if a.data is None else b
            return f"{shown(call)} may change state that other iterations use"
        if a.data is not b.data:
            return (f"{shown(a)} and {shown(b)} may be the same memory "
                    "(the function declares tir.noalias False)")
        sa, sb = shown(a, simplify), shown(b, simplify)
        if a.indices is None or b.indices is None:
            return f"{sa if a.indices is None else sb} may touch any element of {a.buffer.name}"
        if a is b:
            return (f"{sa} may be the same element in different iterations: the last write "
                    "would depend on timing")
        if a.is_write and b.is_write:
            return f"{sa} and {sb} may write the same element in different iterations"
        read, write = (b, a) if a.is_write else (a, b)
        return (f"{shown(read, simplify)} may read what {shown(write, simplify)} writes "
                "in another iteration")


@attrs.frozen
class ParallelAnalysis:
    """What ``analyze_parallel_loop`` found: the conflicts, or why it could not look."""

    conflicts: tuple = ()
    #: Why the body could not be analyzed (a ``while`` loop), or None.
    unanalyzable: str | None = None

    @property
    def independent(self) -> bool:
        """Whether the iterations may run at once as they are."""
        return self.unanalyzable is None and not self.conflicts


def analyze_parallel_loop(loop: For, analyzer: Analyzer,
                          shared: frozenset = DISTINCT) -> ParallelAnalysis:
    """The conflicts between iterations of ``loop`` (see the module doc).

    ``analyzer`` knows the ranges of the enclosing loops; ``shared`` holds the data
    vars that may be one memory (``vectorize.aliasing.shared_memory``).
    """
    trips = finite(analyzer.const_int_bound(loop.extent).max_value)
    if trips is not None and trips <= 1:
        return ParallelAnalysis()
    found = _direct(loop, analyzer, shared, trips)
    if found.independent:
        return found
    split = _split_by_divisor(loop, analyzer, shared)
    return split if split is not None and split.independent else found


def _direct(loop: For, analyzer: Analyzer, shared: frozenset,
            trips: int | None) -> ParallelAnalysis:
    with analyzer.loop_scope(loop.loop_var, loop.min, loop.extent):
        collector = AccessCollector(loop.loop_var, analyzer)
        accesses = collector.collect(loop.body)
        if collector.unanalyzable:
            return ParallelAnalysis(unanalyzable=collector.unanalyzable)
        test = _pair_test(loop, accesses, analyzer, shared, trips)
        return ParallelAnalysis(tuple(_conflicts(accesses, test, shared)))


def _split_by_divisor(loop: For, analyzer: Analyzer,
                      shared: frozenset) -> ParallelAnalysis | None:
    """The analysis of a loop whose var ``v`` the indices use as ``v // c`` and ``v % c``
    (a fused loop: ``A[v // 80, v % 80]``), which the affine forms cannot compare.

    For a loop from 0, with ``v = q * c + r`` (``r`` in ``[0, c)``), two iterations differ
    in ``q``, or share ``q`` and differ in ``r``. So the loop is independent when both
    are: ``for q in parallel: for r in serial: body`` (``r`` free for each access) and,
    ``q`` fixed, ``for r in parallel: body``. Over ``ceil(n / c)`` values of ``q``: a
    superset of the iterations, which can only add conflicts. None without such a ``c``.
    """
    c = _divisor(loop)
    if c is None or not (isinstance(loop.min, IntImm) and loop.min.value == 0):
        return None
    v, dtype = loop.loop_var, loop.loop_var.dtype
    q, r = Var(f"{v.name}_q", dtype), Var(f"{v.name}_r", dtype)
    body = substitute(_Split(v, c, q, r)(loop.body), {v: q * c + r})
    count = op.floordiv(op.max(loop.extent, op.const(0, dtype)) + (c - 1), op.const(c, dtype))
    zero, width = op.const(0, dtype), op.const(c, dtype)
    across = For(q, zero, count, ForKind.PARALLEL, For(r, zero, width, ForKind.SERIAL, body))
    if not _direct(across, analyzer, shared, finite(
            analyzer.const_int_bound(count).max_value)).independent:
        return None
    with analyzer.loop_scope(q, zero, count):
        within = For(r, zero, width, ForKind.PARALLEL, body)
        return _direct(within, analyzer, shared, c)


class _Split(StmtExprMutator):
    """``v // c`` -> ``q`` and ``v % c`` -> ``r`` (with ``v = q * c + r``, ``0 <= r < c``)."""

    def __init__(self, v: Var, c: int, q: Var, r: Var):
        self.v, self.c, self.q, self.r = v, c, q, r

    def _mine(self, node) -> bool:
        return node.a is self.v and isinstance(node.b, IntImm) and node.b.value == self.c

    def visit_floor_div(self, node):
        return self.q if self._mine(node) else self.generic_visit(node)

    def visit_floor_mod(self, node):
        return self.r if self._mine(node) else self.generic_visit(node)


def _divisor(loop: For) -> int | None:
    """The constant ``c`` of the first ``v // c`` or ``v % c`` in the body (``v`` the var)."""
    found: list = []

    def visit(n) -> None:
        if isinstance(n, (FloorDiv, FloorMod)) and n.a is loop.loop_var \
                and isinstance(n.b, IntImm) and n.b.value > 1:
            found.append(n.b.value)

    post_order_visit(loop.body, visit)
    return found[0] if found else None


def _pair_test(loop: For, accesses: list[Access], analyzer: Analyzer, shared: frozenset,
               trips: int | None) -> PairTest:
    written = {id(a.data) for a in accesses if a.is_write}
    if written & shared:  # a store to one param may change what any other one holds
        written |= shared
    opaque = any(a.data is None for a in accesses)
    lanes = trips if trips is not None else 1 << 62  # unbounded: the tests stay exact
    return PairTest(loop.loop_var, lanes, loop.min, analyzer, written, opaque)


def _conflicts(accesses: list[Access], test: PairTest, shared: frozenset):
    for a, b in candidate_pairs(accesses, shared, test.residue_key):
        pairs = ((a, b), (b, a)) if a is not b else ((a, a),)
        if any(test.may_meet_elsewhere(x, y) for x, y in pairs):
            yield Conflict(a, b)


__all__ = ["Conflict", "ParallelAnalysis", "analyze_parallel_loop"]
