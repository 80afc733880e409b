"""Which elements a vector access touches, and the conditions that keep them in a buffer.

``InstrumentBoundCheckers`` reads the index of one dimension as its lowest and
highest lane (``lane_span``). A masked access (a ``BufferLoad`` or ``BufferStore``
with a ``predicate``) touches only its active lanes, so its check must cover
exactly those (``MaskedBounds``):

- a one-lane predicate ``p`` (a scalar access run only when ``p``):
  ``!p || <the unmasked check>``;
- a mask with a tail conjunct, ``get_active_lane_mask(base, limit)`` (or the
  ``Ramp(base, 1, L) < Broadcast(limit, L)`` it stands for), over an index of
  constant-stride ramps and scalars: lanes ``0 .. count - 1`` with
  ``count = min(L, limit - base)`` are the only ones that can be on, so the check
  is one compare of the first and last such lane, guarded by ``base < limit``
  (an all-off mask checks nothing): ``base >= limit || hi < extent``;
- any other mask (an if-converted condition, a gather index): every lane at once,
  ``vector_reduce_and(!mask || uint(index) < extent)``, one vector compare.

A check that the analyzer proves under these assumptions is dropped. The
conditions are exact: an inactive lane never fails one, so a valid program never
raises. Scalable (``vscale``) lanes are handled like fixed ones, their count is
``vscale() * k``.
"""

from __future__ import annotations

from collections.abc import Callable

from tir import arith, op
from tir.dtype import DataType
from tir.expr import LT, And, Call, IntImm, PrimExpr
from tir.expr_vector import Broadcast, Ramp, Shuffle

#: The call whose lane ``k`` is ``base + k < limit`` (strip-mined tails, SVE loops).
ACTIVE_LANE_MASK = "tir.get_active_lane_mask"


def lane_span(index: PrimExpr) -> tuple | None:
    """The lowest and highest lane of ``index``, or None if it is not checked.

    A constant-stride ``Ramp`` spans ``base + min(0, (L-1)*s)`` to ``base + max(0, (L-1)*s)``
    (``L`` may be ``vscale() * k``); a ``Broadcast`` its value; a ``Shuffle`` of such
    vectors the lowest and highest of its parts; any other vector (a gather index)
    ``tir.vector_reduce_min`` / ``tir.vector_reduce_max``.
    """
    if isinstance(index, Broadcast):
        return lane_span(index.value)
    t = DataType(index.dtype)
    if not t.is_vector:
        return index, index
    if isinstance(index, Ramp) and isinstance(index.stride, IntImm) \
            and not DataType(index.base.dtype).is_vector:
        return _ramp_span(index, op.sub(lane_count(index), op.const(1, index.base.dtype)))
    if isinstance(index, Shuffle):
        spans = [lane_span(v) for v in index.vectors]
        if spans and all(span is not None and not is_reduced(span[0]) for span in spans):
            lo, hi = spans[0]
            for other_lo, other_hi in spans[1:]:
                lo, hi = op.min(lo, other_lo), op.max(hi, other_hi)
            return lo, hi
    if t.is_scalable:
        return None  # no scalable min/max reduction of an arbitrary index (yet)
    elem = str(t.element_of)
    return (Call(elem, "tir.vector_reduce_min", [index]),
            Call(elem, "tir.vector_reduce_max", [index]))


def lane_count(vector: PrimExpr) -> PrimExpr:
    """The number of lanes of ``vector`` as an expression of its element's integer type."""
    t = DataType(vector.dtype)
    itype = str(t.element_of) if t.is_integer else "int32"
    if t.is_scalable:
        count = op.mul(op.vscale(), op.const(t.lanes, "int32"))
        return count if itype == "int32" else op.cast(itype, count)
    return op.const(t.lanes, itype)


def is_reduced(bound: PrimExpr) -> bool:
    """Whether ``bound`` came from ``lane_span``'s reduction of a gather index."""
    return isinstance(bound, Call) and bound.op == "tir.vector_reduce_min"


def non_negative(x: PrimExpr) -> PrimExpr:
    return op.greater_equal(x, op.const(0, x.dtype))


def unsigned_below(index: PrimExpr, extent: PrimExpr) -> PrimExpr:
    """``0 <= every lane < extent`` as one unsigned test: a negative lane wraps to a huge value.

    For a data-dependent (gather) index this is one vector compare, one
    all-lanes reduction of its mask and one branch per vector (on x86:
    ``vpcmpnleud`` + ``kortestb`` with AVX-512; ``vpmaxud`` + ``vpcmpeqd`` +
    ``vtestps`` on AVX2, which has no unsigned compare), instead of a tree of
    horizontal max steps and a scalar compare.
    """
    return Call("bool", "tir.vector_reduce_and", [lanes_below(index, extent)])


def lanes_below(index: PrimExpr, extent: PrimExpr) -> PrimExpr:
    """The bool vector ``0 <= index[k] < extent``, one unsigned compare per lane.

    The compare runs in the wider of the two dtypes, so an int64 extent is never
    truncated to 32 bits (a negative int32 lane sign-extends first, and stays huge
    as unsigned).
    """
    t = DataType(index.dtype)
    bits = max(t.bits, DataType(extent.dtype).bits)
    if bits != t.bits:  # sign- or zero-extends, as the index's own type says
        index = op.cast(_retyped(t, "uint" if t.is_uint else "int", bits), index)
    unsigned = f"uint{bits}"
    lanes = op.reinterpret(_retyped(t, "uint", bits), index)
    return op.less(lanes, Broadcast(op.cast(unsigned, extent), _lanes_arg(t)))


def _retyped(t: DataType, kind: str, bits: int) -> str:
    """``t``'s lane count (fixed or scalable) with elements ``{kind}{bits}``."""
    elem = DataType(f"{kind}{bits}")
    return str(elem.with_scalable_lanes(t.lanes) if t.is_scalable else elem.with_lanes(t.lanes))


def _lanes_arg(t: DataType) -> int | PrimExpr:
    return op.mul(op.vscale(), op.const(t.lanes, "int32")) if t.is_scalable else t.lanes


def _ramp_span(ramp: Ramp, last: PrimExpr) -> tuple:
    """The lowest and highest of lanes ``0 .. last`` of ``ramp`` (``last >= 0``)."""
    stride = ramp.stride.value
    reach = op.mul(ramp.stride, last) if stride not in (1, -1) else (
        last if stride == 1 else op.sub(op.const(0, last.dtype), last))
    if stride >= 0:
        return ramp.base, op.add(ramp.base, reach)
    return op.add(ramp.base, reach), ramp.base


def conjuncts(cond: PrimExpr) -> list:
    """The operands of the ``&&`` tree ``cond`` (``[cond]`` if it is none)."""
    if isinstance(cond, And):
        return conjuncts(cond.a) + conjuncts(cond.b)
    return [cond]


def active_lane_bounds(mask: PrimExpr) -> tuple | None:
    """``(base, limit)`` if lane ``k`` of ``mask`` is exactly ``base + k < limit``, else None."""
    if isinstance(mask, Call) and mask.op == ACTIVE_LANE_MASK:
        return mask.args[0], mask.args[1]
    if isinstance(mask, LT) and isinstance(mask.a, Ramp) and isinstance(mask.b, Broadcast) \
            and isinstance(mask.a.stride, IntImm) and mask.a.stride.value == 1 \
            and mask.a.base.dtype == mask.b.value.dtype:
        return mask.a.base, mask.b.value
    return None


class MaskedBounds:
    """The run-time conditions that the active lanes of masked accesses stay in bounds."""

    def __init__(self, analyzer: arith.Analyzer):
        self.analyzer = analyzer

    def conditions(self, shape: tuple, indices: tuple, predicate: PrimExpr,
                   unmasked: Callable[[tuple], list]) -> list:
        """The unproven conditions for an access of ``indices`` into ``shape`` under
        ``predicate``; ``unmasked(indices)`` gives those of the same access without one."""
        if not DataType(predicate.dtype).is_vector:
            with self.analyzer.constraint_scope(predicate):
                conds = unmasked(indices)
            return [_unless(predicate, op.all(conds))] if conds else []
        parts = conjuncts(predicate)
        tails = [b for b in map(active_lane_bounds, parts) if b is not None]
        if tails:
            done, conds = self._tail(shape, indices, *tails[0])
            if done and (not conds or len(parts) == 1):
                return conds
        return self._every_lane(shape, indices, predicate)

    def _tail(self, shape: tuple, indices: tuple, base: PrimExpr, limit: PrimExpr) -> tuple:
        """``(spanned, conds)``: whether the lanes ``0 .. count - 1`` that a tail mask can
        turn on have a known span in every dimension, and the unproven checks of it,
        as one condition that holds when no lane is on."""
        itype = base.dtype
        any_on = op.less(base, limit)
        conds = []
        with self.analyzer.constraint_scope(any_on):
            for index, extent in zip(indices, shape):
                span = self._active_span(index, base, limit, itype)
                if span is None:
                    return False, []
                lo, hi = (self.analyzer.simplify(b) for b in span)
                conds += [c for c in (non_negative(lo), op.less(hi, extent))
                          if not self.analyzer.can_prove(c)]
        return True, [_unless(any_on, op.all(conds))] if conds else []

    @staticmethod
    def _active_span(index: PrimExpr, base: PrimExpr, limit: PrimExpr, itype: str):
        """The lowest and highest index of the lanes that can be on, or None."""
        if isinstance(index, Broadcast):
            index = index.value
        if not DataType(index.dtype).is_vector:
            return index, index
        if not (isinstance(index, Ramp) and isinstance(index.stride, IntImm)
                and index.base.dtype == itype):
            return None
        # lanes 0 .. min(L, limit - base) - 1, and at least lane 0 (base < limit)
        last = op.sub(op.min(lane_count(index), op.sub(limit, base)), op.const(1, itype))
        return _ramp_span(index, last)

    def _every_lane(self, shape: tuple, indices: tuple, predicate: PrimExpr) -> list:
        """``all(!predicate || index in bounds)``, lane by lane, in one vector compare."""
        count = DataType(predicate.dtype)
        ins = []
        for index, extent in zip(indices, shape):
            span = lane_span(index)
            if span is not None and all(self.analyzer.can_prove(c) for c in
                                        (non_negative(span[0]), op.less(span[1], extent))):
                continue
            if not DataType(index.dtype).is_vector:
                index = Broadcast(index, _lanes_arg(count))
            if DataType(index.dtype).lanes != count.lanes \
                    or DataType(index.dtype).is_scalable != count.is_scalable:
                return []  # lanes of a vector element: not one index per mask lane
            ins.append(lanes_below(index, extent))
        if not ins:
            return []
        ok = op.logical_or(op.logical_not(predicate), op.all(ins))
        return [Call("bool", "tir.vector_reduce_and", [ok])]


def _unless(on: PrimExpr, cond: PrimExpr) -> PrimExpr:
    """``!on || cond``: ``cond`` only matters when ``on`` holds."""
    return op.logical_or(op.logical_not(on), cond)
