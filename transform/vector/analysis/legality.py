"""Is it legal to vectorize this loop? The dependence analysis that runs before the rewrite.

Vector code runs the iterations of a loop as lanes: every statement runs for
all lanes before the next statement starts, and a statement reads for all
lanes before it writes. Inner serial loops stay loops, so their iterations
come before the lanes. The serial loop runs iteration ``v`` whole before
``v + 1``. The two orders differ for two accesses to the same element when
they run in different iterations ``v < w`` and vector code runs the one of
``w`` first: iteration ``w``'s access sits earlier in the body (an earlier
statement, an earlier inner-loop iteration, or the read of the same store).

``analyze_loop`` finds every such pair (a *dependence* the vector code would
break) with the tests of dependence.py, over the loop's range of lanes only:
iterations of enclosing serial loops stay in order. For each one it names
the smallest statement that, kept serial as a whole (a loop over the lanes
around it, the vectorizer's *scalarize*), runs the pair in order again:

- the two accesses' closest common statement when they meet in the same
  inner-loop iteration;
- the inner loop itself when they meet in different iterations of it.

When that statement is the loop body, the whole loop stays serial; otherwise
those statements are scalarized and the rest is vectorized. Splitting the
body is safe exactly then: a pair that crosses a scalarized statement runs
in the same relative order as in fully vector code, which was checked.

Accesses to different buffers touch different memory, except for buffer
params of a function that declares they may alias (aliasing.py): a pair of
accesses to two of those may meet at an unknown distance.
"""

from __future__ import annotations

from collections.abc import Iterator

import attrs

from tir import dtype as dt
from tir import op
from tir.analysis.linear_form import linear_form
from tir.arith import Analyzer
from tir.expr import BufferLoad, PrimExpr, Var
from tir.functor import post_order_visit
from tir.stmt import Stmt

from ...remarks import user_form
from ..vectorizer.lanes import lanes
from .accesses import LOOP, Access, AccessCollector, LoopRange, finite, shown
from .aliasing import DISTINCT
from .dependence import (
    Affine,
    Delta,
    Term,
    add_scaled,
    affine,
    may_be_zero,
)
from .pair_buckets import Key, candidate_pairs, residue_key

#: The loop annotation that skips the analysis: the user asserts the iterations are independent.
ASSUME_INDEPENDENT = "tir.vectorize.assume_independent"


@attrs.frozen
class Dependence:
    """A pair of accesses whose order vector code would reverse.

    ``first`` runs first in the serial loop (in the earlier iteration),
    ``second`` in an iteration ``distance`` later (``None``: unknown).
    ``unit`` is the smallest statement that kept serial runs them in order.
    """

    first: Access
    second: Access
    distance: int | None
    unit: Stmt
    #: Neither access depends on the loop var: a value carried across iterations.
    carried: bool = False

    def describe(self, simplify=None) -> str:
        """The dependence as a sentence for a remark (indices shown simplified)."""
        a, b = self.first, self.second
        if a.data is not b.data:  # two params of a function declaring they may alias
            return (f"{shown(a)} and {shown(b)} may be the same memory (the function declares "
                    "tir.noalias False); vector code would reorder them")
        if a.data is None:
            return f"{shown(a)} and {shown(b)} may share state; their calls would be reordered"
        sa, sb = shown(a, simplify), shown(b, simplify)
        if a.indices is None or b.indices is None:
            return f"{shown(b)} may read memory that {sa} writes in another iteration"
        if self.distance is None and _gathered(a, b):
            return (f"{sa} and {sb} may be the same element in different iterations "
                    "(the index depends on data)")
        if self.carried and a.is_write and b.is_write:
            return (f"{sb} and {sa} write the same element in every iteration; vector code "
                    "would change which write comes last")
        if self.carried:
            return (f"{sb} is read and written by every iteration "
                    "(a value carried from one iteration to the next)")
        what = ("overwrites what" if b.is_write else "reads what") + (
            " {a} writes" if a.is_write else " {a} reads")
        return f"{sb} {what.format(a=sa)} {_when(self.distance)}"


def _when(distance: int | None) -> str:
    if distance is None:
        return "in an earlier iteration"
    if distance == 1:
        return "in the previous iteration (distance 1)"
    return f"{distance} iterations earlier (distance {distance})"


def _gathered(a: Access, b: Access) -> bool:
    found = []
    for access in (a, b):
        for index in access.indices or ():
            post_order_visit(index, lambda n: found.append(n) if isinstance(n, BufferLoad)
                             else None)
    return bool(found)


@attrs.frozen
class Legality:
    """The verdict on one loop: stay serial (``serial_reason``), or scalarize ``units``."""

    serial_reason: str | None = None
    #: id(statement) -> why it must stay serial: the statements to scalarize.
    units: dict = attrs.Factory(dict)
    #: The serial reason is a dependence at a distance not known here (``A[i + k]``):
    #: the user may know better and waive it with ``ASSUME_INDEPENDENT``.
    waivable: bool = False

    @property
    def legal(self) -> bool:
        """Whether the loop may be vectorized (with ``units`` kept serial)."""
        return self.serial_reason is None


def analyze_loop(var: Var, lanes: int, min_: PrimExpr, body: Stmt,
                 analyzer: Analyzer, shared: frozenset = DISTINCT) -> Legality:
    """The dependences vector code would break in ``for var in vectorized(min_, lanes): body``.

    ``analyzer`` knows the ranges of the enclosing loops (and of ``var``);
    ``shared`` holds the ids of the data vars that may be one memory
    (``aliasing.shared_memory``).
    """
    collector = AccessCollector(var, analyzer)
    accesses = collector.collect(body)
    if collector.unanalyzable:  # the vectorizer refuses such bodies with its own error
        return Legality()
    deps = list(_dependences(accesses, var, lanes, min_, analyzer, shared))
    return _verdict(deps, accesses, body, analyzer)


def _verdict(deps: list[Dependence], accesses: list[Access], body: Stmt,
             analyzer: Analyzer) -> Legality:
    def show(index):  # as the user wrote it, where the loop is a pass's copy of theirs
        return user_form(analyzer.simplify(index))

    for dep in deps:
        if dep.unit is body or _holds_every_access(dep.unit, accesses):
            return Legality(serial_reason=dep.describe(show),
                            waivable=dep.distance is None and not dep.carried)
    units: dict = {}
    for dep in deps:
        if id(dep.unit) not in units:
            units[id(dep.unit)] = dep.describe(show)
    return Legality(units=units)


def _holds_every_access(unit: Stmt, accesses: list[Access]) -> bool:
    """Whether every access lies inside ``unit``: keeping it serial is keeping the loop serial."""
    return all(any(step.node is unit for step in a.path) for a in accesses)


def _dependences(accesses: list[Access], var: Var, lanes: int, min_: PrimExpr,
                 analyzer: Analyzer, shared: frozenset) -> Iterator[Dependence]:
    """Every pair (in both orders) that vector code would run out of serial order."""
    written = {id(a.data) for a in accesses if a.is_write}
    if written & shared:  # a store to one param may change what any other one holds
        written |= shared
    opaque = any(a.data is None for a in accesses)
    pairs = PairTest(var, lanes, min_, analyzer, written, opaque)
    for a, b in candidate_pairs(accesses, shared, pairs.residue_key):
        for first, second in ((a, b), (b, a)) if a is not b else ((a, a),):
            dep = pairs.reversed(first, second)
            if dep is not None:
                yield dep


class PairTest:
    """The test for one ordered pair: ``first`` in lane ``v``, ``second`` in a later lane.

    ``lanes`` is how many iterations run together (for a parallel loop: its trip count);
    ``written`` the data vars the loop writes; ``opaque`` whether it calls opaque functions.
    """

    def __init__(self, var: Var, lanes: int, min_: PrimExpr, analyzer: Analyzer,
                 written: set[int], opaque: bool):
        self.var, self.lanes, self.min, self.analyzer = var, lanes, min_, analyzer
        self.written, self.opaque = written, opaque
        self._forms: dict = {}
        self._deltas: dict = {}
        self._stable_memo: dict = {}
        self._linear_memo: dict = {}

    def reversed(self, first: Access, second: Access) -> Dependence | None:
        """The dependence if vector code may run ``second`` before ``first``, else None."""
        if first is second and self._fixed_element(first):
            return None  # one store to one element: the last instance is the same in any order
        shared, order, common = _divergence(first, second)
        cases = [(list(shared[:m]), shared[m], None) for m in range(len(shared))]
        if order is not None and order < 0:  # second sits earlier in the same iteration
            cases.append((list(shared), None, common))
        for equal, later, common_node in cases:
            found, distance = self._may_meet(first, second, equal, later)
            if found:
                unit = common_node if later is None else later.loop
                carried = self._uniform(first) and self._uniform(second)
                return Dependence(first, second, distance, unit, carried)
        return None

    def residue_key(self, access: Access) -> Key:
        """The access's (form, residue) key for ``pair_buckets.candidate_pairs``."""
        if access.indices is None or access.buffer is None:
            return None
        loop_vars = {id(self.var)} | {id(r.loop.loop_var) for r in access.loops}
        dims = []
        for index in access.indices:
            form = self._form(index, loop_vars)
            linear = None if form is None else self._linear(_plus_starts(form, access.loops))
            if linear is None:
                return None
            coeffs = dict(form.coeffs)
            coeffs.update({-1 - k: c for k, (c, _, _) in enumerate(form.free_terms)})  # ids > 0
            dims.append((coeffs, linear[0], linear[1]))
        return residue_key((id(access.data), id(access.buffer)), dims)

    def may_meet_elsewhere(self, first: Access, second: Access) -> bool:
        """Whether ``first`` (iteration ``v``) and ``second`` (any later iteration) may touch
        one element, wherever in the body they sit: the test for threads, which run whole
        iterations at once in any order (``transform/parallel/conflicts.py``)."""
        return self._may_meet(first, second, [], None)[0]

    def _fixed_element(self, access: Access) -> bool:
        """Whether the access touches one element throughout the loop (no loop var in it)."""
        loop_vars = {id(self.var)} | {id(r.loop.loop_var) for r in access.loops}
        return access.indices is not None and all(
            (form := self._form(i, loop_vars)) is not None and not form.coeffs
            and not form.free_terms and self._stable(form.rest) for i in access.indices)

    def _uniform(self, access: Access) -> bool:
        """Whether the access touches the same elements in every iteration (lane)."""
        if access.indices is None:
            return False
        loop_vars = {id(self.var)}
        for index in access.indices:
            form = self._form(index, loop_vars)
            if form is None or form.coeff(self.var) or form.free_terms:
                return False
        return True

    def _may_meet(self, a: Access, b: Access, equal: list[LoopRange],
                  later: LoopRange | None) -> tuple[bool, int | None]:
        """Whether ``a`` (lane v) and ``b`` (lane v + d, d >= 1) may touch one element, when
        the inner loops ``equal`` run the same iteration for both and ``later`` (if any) runs
        a later iteration for ``a`` than for ``b``; also the distance ``d`` if it is fixed."""
        if a.indices is None or b.indices is None or a.buffer is None or b.buffer is None:
            return True, None
        if a.data is not b.data:  # params that may alias: at an unknown offset
            return True, None
        dims_a, dims_b = _comparable_indices(a, b)
        if dims_a is None:
            return True, None
        distance = None
        for ia, ib in zip(dims_a, dims_b):
            equation = self._equation(a, b, ia, ib, equal, later)
            if equation is None:
                continue  # unknown in this dimension: it may match
            alternatives, delta, d_coeff = equation
            if not all(may_be_zero(terms, delta) for terms in alternatives):
                return False, None
            terms = alternatives[0]
            distance = distance if distance is not None else _fixed_distance(terms, delta,
                                                                              d_coeff)
        return True, distance

    def _equation(self, a: Access, b: Access, ia: PrimExpr, ib: PrimExpr,
                  equal: list[LoopRange], later: LoopRange | None):
        """``index_a - index_b`` as terms and a delta, or None when not affine."""
        loop_vars = {id(self.var)} | {id(r.loop.loop_var) for r in a.loops + b.loops}
        fa, fb = self._form(ia, loop_vars), self._form(ib, loop_vars)
        if fa is None or fb is None:
            return None
        delta = self._delta(_plus_starts(fa, a.loops), _plus_starts(fb, b.loops))
        if delta is None:
            return None
        ca, cb = fa.coeff(self.var), fb.coeff(self.var)
        others = _loop_terms(fa, fb, a.loops, b.loops, equal, later)
        others += [Term(c, lo, hi) for c, lo, hi in fa.free_terms]
        others += [Term(-c, lo, hi) for c, lo, hi in fb.free_terms]
        last = self.lanes - 1
        # a's lane is min + u, u in [0, L-2]; b's lane is min + u + d, d in [1, L-1]
        alternatives = [[Term(ca - cb, 0, last - 1), Term(-cb, 1, last)] + others]
        if ca != cb:  # also as two lanes u_a < u_b: each form may be the tighter one
            alternatives.append([Term(ca, 0, last - 1), Term(-cb, 1, last)] + others)
            delta = self._shift(delta, ca - cb)
        return alternatives, delta, -cb

    def _form(self, index: PrimExpr, loop_vars: set[int]) -> Affine | None:
        key = (id(index), frozenset(loop_vars))
        if key not in self._forms:  # (the entry keeps index alive: its id stays its own)
            form = affine(index, loop_vars)
            if form is None:  # e.g. (v + 8 * io) // 8, which the loop ranges reduce to io
                form = affine(self.analyzer.simplify(index), loop_vars, self._bounds)
            self._forms[key] = (index, form)
        return self._forms[key][1]

    def _bounds(self, e: PrimExpr) -> tuple[int, int] | None:
        """The range of a part of an index that is not affine, when it is bounded."""
        bound = self.analyzer.const_int_bound(e)
        lo, hi = finite(bound.min_value), finite(bound.max_value)
        return None if lo is None or hi is None else (lo, hi)

    def _delta(self, rest_a: PrimExpr, rest_b: PrimExpr) -> Delta | None:
        """The bounds of ``rest_a - rest_b``; None when a rest reads memory the loop writes."""
        key = (id(rest_a), id(rest_b))
        if key not in self._deltas:  # (the entry keeps both alive: their ids stay theirs)
            self._deltas[key] = (rest_a, rest_b, self._bound(rest_a, rest_b))
        return self._deltas[key][2]

    def _bound(self, rest_a: PrimExpr, rest_b: PrimExpr) -> Delta | None:
        la, lb = self._linear(rest_a), self._linear(rest_b)
        if la is not None and lb is not None:  # the common case, without the simplifier
            terms = dict(la[0])
            for key, c in lb[0].items():
                terms[key] = terms.get(key, 0) - c
            if not any(terms.values()):
                return Delta(la[1] - lb[1], la[1] - lb[1])
        if not (self._stable(rest_a) and self._stable(rest_b)):
            return None
        if rest_a.dtype != rest_b.dtype:
            rest_a, rest_b = op.cast("int64", rest_a), op.cast("int64", rest_b)
        diff = self.analyzer.simplify(op.sub(rest_a, rest_b))
        bound = self.analyzer.const_int_bound(diff)
        return Delta(finite(bound.min_value), finite(bound.max_value))

    def _shift(self, delta: Delta, scale: int) -> Delta:
        """``delta + scale * min``: the loop's start, when the two lanes' coefficients differ."""
        bound = self.analyzer.const_int_bound(self.min)
        lo, hi = finite(bound.min_value), finite(bound.max_value)
        ends = [None if x is None or y is None else x + scale * y
                for x, y in ((delta.lo, lo if scale > 0 else hi),
                             (delta.hi, hi if scale > 0 else lo))]
        return Delta(*ends)

    def _linear(self, e: PrimExpr) -> tuple[dict, int] | None:
        """``e`` as ``sum(c * var) + const`` over all its vars (``{id(var): c}``, const), or
        None, computed once per expression."""
        if id(e) not in self._linear_memo:  # (the entry keeps e alive: its id stays its own)
            form = linear_form(e)
            linear = None if form is None or form.terms else (form.coeffs, form.const)
            self._linear_memo[id(e)] = (e, linear)
        return self._linear_memo[id(e)][1]

    def _stable(self, e: PrimExpr) -> bool:
        """Whether ``e`` has one value for the whole loop: it reads no memory the loop writes."""
        if id(e) not in self._stable_memo:  # (the entry keeps e alive: its id stays its own)
            found = []

            def check(n):
                if isinstance(n, BufferLoad) and (self.opaque
                                                  or id(n.buffer.data) in self.written):
                    found.append(n)

            post_order_visit(e, check)
            self._stable_memo[id(e)] = (e, not found)
        return self._stable_memo[id(e)][1]


def _plus_starts(form: Affine, loops: tuple) -> PrimExpr:
    """The rest of ``form`` once each loop var with a fixed start is ``start + offset``."""
    rest = form.rest
    for r in loops:
        c = form.coeff(r.loop.loop_var)
        if c and r.start is not None:
            rest = add_scaled(rest, r.start, c)
    return rest


def _loop_terms(fa: Affine, fb: Affine, loops_a: tuple, loops_b: tuple,
                equal: list[LoopRange], later: LoopRange | None) -> list[Term]:
    """The inner-loop vars' part of ``index_a - index_b``, under the iteration constraints."""
    tied = {id(r.loop) for r in equal}
    terms = []
    for r in loops_a:
        var = r.loop.loop_var
        ca, cb = fa.coeff(var), fb.coeff(var)
        if id(r.loop) in tied:  # the same iteration for both
            terms.append(Term(ca - cb, r.lo, r.hi))
        elif later is not None and r.loop is later.loop:  # k_a = k_b + e, e >= 1
            span = None if r.lo is None or r.hi is None else r.hi - r.lo
            terms += [Term(ca - cb, r.lo, r.hi), Term(ca, 1, span)]
        else:
            terms.append(Term(ca, r.lo, r.hi))
    for r in loops_b:
        if id(r.loop) in tied or later is not None and r.loop is later.loop:
            continue
        terms.append(Term(-fb.coeff(r.loop.loop_var), r.lo, r.hi))
    return terms


def _fixed_distance(terms: list[Term], delta: Delta, d_coeff: int) -> int | None:
    """The distance ``d`` when the equation is ``d_coeff * d + delta == 0`` exactly."""
    others = [t for t in terms[:1] + terms[2:] if t.coeff != 0]
    exact = delta.exact
    if others or exact is None or d_coeff == 0 or exact % d_coeff:
        return None
    return -exact // d_coeff


def _divergence(a: Access, b: Access) -> tuple[tuple, int | None, Stmt | None]:
    """Where the positions of ``a`` and ``b`` part: the inner loops around both (outermost
    first), the sign of ``slot_b - slot_a`` where they part (None: the same position), and
    the statement there (their closest common statement)."""
    shared = 0
    for sa, sb in zip(a.path, b.path):
        if sa.slot == LOOP:
            shared += 1  # the k-th LOOP step of a path is the k-th of its loops
            continue
        if sa.slot != sb.slot:
            return a.loops[:shared], (1 if sb.slot > sa.slot else -1), sa.node
    return a.loops[:shared], None, None


def _comparable_indices(a: Access, b: Access) -> tuple:
    """The indices of ``a`` and ``b`` dimension by dimension, flattened when the two buffers
    lay the memory out differently; (None, None) when element types differ."""
    ba, bb = a.buffer, b.buffer
    if ba is bb or _same_layout(ba, bb):
        return a.indices, b.indices
    if ba.dtype != bb.dtype:
        return None, None
    return (_flat(ba, a.indices),), (_flat(bb, b.indices),)


def _same_layout(ba, bb) -> bool:
    from tir.structural import structural_equal

    return (ba.dtype == bb.dtype and len(ba.shape) == len(bb.shape)
            and structural_equal(tuple(ba.shape), tuple(bb.shape), map_free_vars=False)
            and structural_equal(tuple(ba.strides), tuple(bb.strides))
            and structural_equal(ba.elem_offset, bb.elem_offset))


def _flat(buffer, indices: tuple) -> PrimExpr:
    """The element offset of ``buffer[indices]`` in its memory."""
    strides = list(buffer.strides)
    if not strides:
        strides, size = [], op.const(1, "int64")
        for extent in reversed(buffer.shape):
            strides.insert(0, size)
            size = op.mul(size, op.cast("int64", extent))
    offset = op.cast("int64", buffer.elem_offset)
    for index, stride in zip(indices, strides):
        # a vector index (any dimension may have one) keeps its lanes in int64
        wide = op.cast(dt.with_lanes("int64", lanes(index)), index)
        offset = op.add(offset, op.mul(wide, op.cast("int64", stride)))
    return offset


