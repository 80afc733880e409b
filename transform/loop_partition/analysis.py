"""Which loops ``LoopPartition`` splits, and where: the decision, apart from the rewrite.

A loop is a *candidate* when a ``likely(cond)`` in its body uses its var
and its bounds are not constant (or config ``partition_const_loop`` is on,
or the loop carries the annotation ``pragma_loop_partition_hint``; under
the hint every comparison counts, not only ``likely`` ones), as in TVM's
``CandidateSelector``.

For a candidate loop ``for v in [min, max]`` each condition is deduced to
be provably true, or provably false, on an interval of ``v`` for every
value of the loops nested between the candidate and the condition (TVM's
``PartitionFinder`` + ``DeduceBound``). A comparison ``a < b`` is written
``d >= k`` with ``d = b - a`` and ``k = 1``; ``d`` must be linear in ``v``,
``d = c*v + r`` with ``c`` a non-zero constant; ``r`` is relaxed over the
inner loops' ranges (``[r_lo, r_hi]``). Then ``cond`` holds on the whole
of ``c*v + r_lo >= k`` and fails on the whole of ``c*v + r_hi <= k - 1``.
An interval whose ends mention a var bound inside the loop, a load or a
call is not used (it would not mean the same thing outside the loop).
"""

from __future__ import annotations

from collections.abc import Iterator

import attrs

from tir import op
from tir.analysis.var_use import uses_any_var, uses_var
from tir.arith import Analyzer, IntervalSet, IntSet
from tir.arith.int_set import intersect, is_neg_inf, is_pos_inf, neg_inf, pos_inf
from tir.expr import EQ, GE, GT, LE, LT, NE, BufferLoad, Call, IntImm, Let, PrimExpr, Var
from tir.functor import StmtExprVisitor, contains, substitute
from tir.stmt import Allocate, For, LetStmt, Stmt

#: The loop annotation that asks for a partition on every comparison of the loop var (TVM's).
PARTITION_HINT = "pragma_loop_partition_hint"

#: Comparisons whose truth an interval can decide.
_COMPARISONS = (LT, LE, GT, GE, EQ, NE)


def has_partition_hint(loop: For) -> bool:
    """Whether ``loop`` carries a true ``pragma_loop_partition_hint`` annotation."""
    value = (loop.annotations or {}).get(PARTITION_HINT)
    if isinstance(value, IntImm):
        return value.value != 0
    return bool(value)


def _is_likely(e: PrimExpr) -> bool:
    return isinstance(e, Call) and e.op == "tir.likely" and len(e.args) == 1


# ------------------------------------------------------------------ candidates


class CandidateSelector(StmtExprVisitor):
    """The loops worth partitioning: a ``likely`` condition in their body uses their var."""

    def __init__(self, partition_const_loop: bool) -> None:
        self.partition_const_loop = partition_const_loop
        self.candidates: dict[int, For] = {}  # id -> For (kept alive: ids stay unique)
        self.hinted: set[Var] = set()
        self.record: dict[Var, bool] = {}
        self.in_likely = False

    def visit_for(self, loop: For) -> None:
        if has_partition_hint(loop):
            self.hinted.add(loop.loop_var)
            self.candidates[id(loop)] = loop
            self.generic_visit(loop)
            return
        constant = isinstance(loop.min, IntImm) and isinstance(loop.extent, IntImm)
        if constant and not self.partition_const_loop:
            self.generic_visit(loop)
            return
        self.record[loop.loop_var] = False
        self.generic_visit(loop)
        if self.record.pop(loop.loop_var):
            self.candidates[id(loop)] = loop

    def visit_call(self, call: Call) -> None:
        if not _is_likely(call):
            self.generic_visit(call)
            return
        outer, self.in_likely = self.in_likely, True
        self.generic_visit(call)
        self.in_likely = outer

    def visit_var(self, v: Var) -> None:
        if self.in_likely and v in self.record:
            self.record[v] = True


def select_candidates(stmt: Stmt, partition_const_loop: bool) -> CandidateSelector:
    """The candidate loops of ``stmt`` (``.candidates``, by id) and the hinted loop vars."""
    selector = CandidateSelector(partition_const_loop)
    selector(stmt)
    return selector


# ------------------------------------------------------------------ deduction


@attrs.frozen
class Partition:
    """``cond`` (the very expression in the IR) has value ``value`` for ``var`` in ``interval``."""

    cond: PrimExpr
    value: bool
    interval: IntervalSet


def _offset(cond: PrimExpr) -> tuple[PrimExpr, int] | None:
    """``(d, k)`` with ``cond`` equivalent to ``d >= k`` (integers), for < <= > >=."""
    table = {LT: (cond.b, cond.a, 1), LE: (cond.b, cond.a, 0),
             GT: (cond.a, cond.b, 1), GE: (cond.a, cond.b, 0)}.get(type(cond))
    if table is None:
        return None
    hi, lo, k = table
    return op.sub(hi, lo), k


def _linear(d: PrimExpr, var: Var, ana: Analyzer) -> tuple[int, PrimExpr] | None:
    """``(c, r)`` with ``d == c*var + r``, ``c`` a non-zero constant, ``r`` free of ``var``."""
    zero, one = op.const(0, var.dtype), op.const(1, var.dtype)
    rest = ana.canonical_simplify(substitute(d, {var: zero}))
    coeff = ana.canonical_simplify(op.sub(substitute(d, {var: one}), rest))
    if not isinstance(coeff, IntImm) or coeff.value == 0:
        return None
    if not ana.can_prove_equal(d, op.add(op.mul(coeff, var), rest)):
        return None  # not linear (floordiv, products of vars, ...)
    return coeff.value, rest


def _ceildiv(a: PrimExpr, c: int) -> PrimExpr:
    return op.floordiv(op.add(a, c - 1), c)


def _solve(c: int, r: PrimExpr, k: int, ana: Analyzer) -> IntervalSet:
    """The ``v`` with ``c*v + r >= k``."""
    if c > 0:
        return IntervalSet(ana.simplify(_ceildiv(op.sub(k, r), c)), pos_inf())
    return IntervalSet(neg_inf(), ana.simplify(op.floordiv(op.sub(r, k), -c)))


def _solve_le(c: int, r: PrimExpr, k: int, ana: Analyzer) -> IntervalSet:
    """The ``v`` with ``c*v + r <= k``  (``-c*v - r >= -k``)."""
    return _solve(-c, op.sub(op.const(0, r.dtype), r), -k, ana)


class Deducer:
    """Intervals of one loop var on which conditions are provably true or false."""

    def __init__(self, var: Var, ana: Analyzer, inner: dict[Var, IntervalSet],
                 bound_inside: set[Var]) -> None:
        self.var, self.ana, self.inner, self.bound_inside = var, ana, inner, bound_inside
        # id(cond) -> (cond, _parts(cond)); holding cond keeps its id from being reused
        self._forms: dict[int, tuple] = {}

    def deduce(self, cond: PrimExpr) -> Iterator[Partition]:
        """The partitions ``cond`` gives (none, one true, one false, or both)."""
        if not uses_var(cond, self.var):
            return
        if isinstance(cond, EQ):
            both = [self._holds(GE(cond.a, cond.b)), self._holds(LE(cond.a, cond.b))]
            if all(s is not None for s in both):
                yield from self._keep(cond, True, intersect(both, self.ana))
            return
        if isinstance(cond, NE):  # false exactly where a == b holds
            both = [self._holds(GE(cond.a, cond.b)), self._holds(LE(cond.a, cond.b))]
            if all(s is not None for s in both):
                yield from self._keep(cond, False, intersect(both, self.ana))
            return
        yield from self._keep(cond, True, self._holds(cond))
        yield from self._keep(cond, False, self._fails(cond))

    def _keep(self, cond: PrimExpr, value: bool, s: IntervalSet | None) -> Iterator[Partition]:
        if s is not None and not s.is_nothing() and self._usable(s):
            yield Partition(cond, value, s)

    def _usable(self, s: IntervalSet) -> bool:
        """Whether the ends mean the same thing outside the loop (no inner var, load, call)."""
        def local(n: object) -> bool:
            return n in self.bound_inside or isinstance(n, (BufferLoad, Call, Let))

        ends = [e for e in (s.min_value, s.max_value) if not _infinite(e)]
        return not any(contains(e, local) for e in ends)

    def _parts(self, cond: PrimExpr) -> tuple[int, IntervalSet, int] | None:
        """``(c, [r_lo, r_hi], k)``: ``cond`` is ``c*v + r >= k`` with ``r`` in the interval
        (worked out once per condition: ``_holds`` and ``_fails`` both ask)."""
        known = self._forms.get(id(cond))
        if known is None:
            known = self._forms[id(cond)] = (cond, self._work_out_parts(cond))
        return known[1]

    def _work_out_parts(self, cond: PrimExpr) -> tuple[int, IntervalSet, int] | None:
        form = _offset(cond)
        if form is None:
            return None
        d, k = form
        linear = _linear(d, self.var, self.ana)
        if linear is None:
            return None
        c, r = linear
        return c, self.ana.int_set(r, self.inner), k

    def _holds(self, cond: PrimExpr) -> IntervalSet | None:
        parts = self._parts(cond)
        if parts is None or not parts[1].has_lower_bound():
            return None
        c, rs, k = parts
        return _solve(c, rs.min_value, k, self.ana)

    def _fails(self, cond: PrimExpr) -> IntervalSet | None:
        parts = self._parts(cond)
        if parts is None or not parts[1].has_upper_bound():
            return None
        c, rs, k = parts
        return _solve_le(c, rs.max_value, k - 1, self.ana)


def _infinite(e: PrimExpr) -> bool:
    return is_pos_inf(e) or is_neg_inf(e)


class PartitionFinder(StmtExprVisitor):
    """Every partition the ``likely`` conditions (all comparisons, when hinted) of a body give."""

    def __init__(self, var: Var, ana: Analyzer, hinted: bool) -> None:
        self.var, self.ana, self.hinted = var, ana, hinted
        self.inner: dict[Var, IntervalSet] = {}
        self.bound_inside: set[Var] = set()
        self.partitions: list[Partition] = []

    def visit_for(self, loop: For) -> None:
        outer = [self.var, *self.inner]
        if uses_any_var(loop.min, outer) or uses_any_var(loop.extent, outer):
            return  # TVM: a loop whose bounds depend on the var or inner loops is not entered
        self.bound_inside.add(loop.loop_var)
        self.inner[loop.loop_var] = IntSet.from_min_extent(loop.min, loop.extent)
        self.generic_visit(loop)
        del self.inner[loop.loop_var]

    def visit_let_stmt(self, stmt: LetStmt) -> None:
        self.bound_inside.add(stmt.var)
        self.generic_visit(stmt)

    def visit_let(self, e: Let) -> None:
        self.bound_inside.add(e.var)
        self.generic_visit(e)

    def visit_allocate(self, stmt: Allocate) -> None:
        self.bound_inside.add(stmt.buffer_var)
        self.generic_visit(stmt)

    def visit_call(self, call: Call) -> None:
        if _is_likely(call):
            self._deduce(call.args[0])
        elif call.op != "tir.ignore_loop_partition":
            self.generic_visit(call)

    def _deduce(self, cond: PrimExpr) -> None:
        deducer = Deducer(self.var, self.ana, dict(self.inner), self.bound_inside)
        self.partitions.extend(deducer.deduce(cond))

    def generic_visit(self, node: object) -> None:
        if self.hinted and isinstance(node, _COMPARISONS):
            self._deduce(node)
            return
        super().generic_visit(node)


def find_partitions(body: Stmt, var: Var, ana: Analyzer, hinted: bool) -> list[Partition]:
    """The partitions of ``var``'s range that the conditions in ``body`` give."""
    finder = PartitionFinder(var, ana, hinted)
    finder(body)
    return finder.partitions


def middle_interval(partitions: list[Partition], loop_range: IntervalSet, value: bool,
                    ana: Analyzer, hinted: bool = False) -> tuple[IntervalSet, list[PrimExpr]]:
    """The interval on which every condition (meeting the loop's range) has ``value``,
    and those conditions (TVM's ``GetIntervalAndCondset``).

    Under a partition hint, when no interval suits them all, the conditions are
    taken in order while their intervals still meet (TVM: the first ones to meet).
    """
    live = [p for p in partitions
            if p.value == value and not intersect([p.interval, loop_range], ana).is_nothing()]
    if not live:
        return IntSet.nothing(), []
    whole = intersect([p.interval for p in live], ana)
    if not whole.is_nothing() or not hinted:
        return whole, [p.cond for p in live]
    meet, conds = live[0].interval, [live[0].cond]
    for p in live[1:]:
        narrower = intersect([meet, p.interval], ana)
        if narrower.is_nothing():
            break
        meet = narrower
        conds.append(p.cond)
    return meet, conds
