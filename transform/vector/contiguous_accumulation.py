"""``ContiguousAccumulation``: strided loads summed into a lane-free accumulator become
contiguous loads.

A hand-unrolled sum over the rows of a ``(n, 5)`` array, ``s = s + a[i, 0] + ...
+ a[i, 4]``, vectorizes into five loads at stride 5 per step::

    S_acc[0:8] = S_acc[0:8] + (A[Ramp(b, 1, 8), 0] + ... + A[Ramp(b, 1, 8), 4])

Together they read ``A``'s elements ``5 b .. 5 b + 39``, each once. Lane ``k``
of the addend is row ``b + k``; but ``S_acc`` is lane-free (analysis/lane_free.py):
only the sum of all its lanes is ever read, so which lane holds which element
does not matter, and the addend may as well be the same 40 elements read as
five contiguous vectors, with no shuffle at all::

    S_acc[0:8] = S_acc[0:8] + (A_flat[5 b : 5 b + 8] + ... + A_flat[5 b + 32 : 5 b + 40])

(``A_flat``: ``A``'s data viewed as one dimension.) The terms are regrouped, so a
float sum changes its rounding; lane-free float accumulators exist only where
reassociation is allowed. The rewrite applies to an unpredicated update whose
addend is a sum of ``s`` loads of one buffer, each one vector index ``Ramp``
(any dimension), flattened to stride ``s`` with bases ``c, c + 1, ..., c + s - 1``:
a partition of one contiguous run. The pass is not one of TVM's;
``codegen.build``'s pipeline runs it before ``MergeInterleavedAccesses``, which
would otherwise pick each row's lanes out of wide loads with shuffles.
"""

from __future__ import annotations

import functools
import operator

from tir import arith
from tir import dtype as dt
from tir.buffer import flat_view
from tir.expr import Add, BufferLoad, IntImm, PrimExpr, Ramp
from tir.functor import StmtExprMutator, deep_recursion
from tir.node import replace
from tir.stmt import BufferStore, Stmt

from ..pass_base import PrimFuncPass, prim_func_pass
from .analysis.lane_free import is_update, lane_free_accumulators
from .reduction_ir import tree

#: Widest run regrouped (s loads of L lanes each read s * L elements).
MAX_TERMS = 16


def _terms(e: PrimExpr) -> list[PrimExpr]:
    return _terms(e.a) + _terms(e.b) if isinstance(e, Add) else [e]


def _flat_ramp(load: BufferLoad) -> tuple[PrimExpr, int, int] | None:
    """``(base, stride, lanes)`` of ``load``'s element offsets as one ramp, or None.

    The buffer must be row-major with a constant shape and ``load`` must have one
    ``Ramp`` index of constant stride, the others scalars.
    """
    buf = load.buffer
    if buf.strides or load.predicate is not None or dt.lanes_of(buf.dtype) != 1:
        return None
    if not all(isinstance(d, IntImm) for d in buf.shape):
        return None
    ramps = [k for k, i in enumerate(load.indices) if dt.lanes_of(i.dtype) != 1]
    if len(ramps) != 1:
        return None
    ramp = load.indices[ramps[0]]
    if not isinstance(ramp, Ramp) or not isinstance(ramp.stride, IntImm):
        return None
    dims = [d.value for d in buf.shape]
    strides = [functools.reduce(operator.mul, dims[k + 1:], 1) for k in range(len(dims))]
    base = buf.elem_offset
    for k, index in enumerate(load.indices):
        scalar = ramp.base if k == ramps[0] else index
        base = base + scalar * IntImm(scalar.dtype, strides[k])
    return base, ramp.stride.value * strides[ramps[0]], ramp.lanes


def contiguous_addend(addend: PrimExpr, analyzer: arith.Analyzer,
                      flat_views: dict | None = None) -> PrimExpr | None:
    """``addend`` as a sum of contiguous loads with the same terms, or None (see above).

    ``flat_views`` keeps one flat view per buffer across calls.
    """
    terms = _terms(addend)
    if not 2 <= len(terms) <= MAX_TERMS or not all(isinstance(t, BufferLoad) for t in terms):
        return None
    head = terms[0]
    if any(t.buffer.data is not head.buffer.data or t.dtype != head.dtype for t in terms):
        return None
    ramps = [_flat_ramp(t) for t in terms]
    if None in ramps or len({(s, n) for _, s, n in ramps}) != 1:
        return None
    stride, lanes = ramps[0][1], ramps[0][2]
    if stride != len(terms):
        return None
    offsets = []
    for base, _, _ in ramps:
        diff = analyzer.simplify(base - ramps[0][0])
        if not isinstance(diff, IntImm):
            return None
        offsets.append(diff.value)
    low = min(offsets)
    if sorted(o - low for o in offsets) != list(range(stride)):
        return None  # not one element of each residue: not a partition of one run
    flat = _flat_view(head.buffer, {} if flat_views is None else flat_views)
    start = analyzer.simplify(ramps[0][0] + low - flat.elem_offset)
    loads = [BufferLoad(flat, [Ramp(analyzer.simplify(start + j * lanes), 1, lanes)])
             for j in range(stride)]
    return tree(Add, loads)  # not a chain: see analysis/reductions.py, _reduction


def _flat_view(buf, views: dict):
    """``buf`` itself if one-dimensional, else one flat view of its data (kept in ``views``)."""
    if len(buf.shape) == 1:
        return buf
    key = (id(buf.data), buf.dtype)
    if key not in views:
        views[key] = flat_view(buf)
    return views[key]


class _Regroup(StmtExprMutator):
    def __init__(self, lane_free: set[int]):
        super().__init__()
        self.lane_free = lane_free
        self.analyzer = arith.Analyzer()
        self.flat_views: dict = {}

    def visit_buffer_store(self, stmt: BufferStore) -> Stmt:
        if (id(stmt.buffer.data) not in self.lane_free or stmt.predicate is not None
                or not is_update(stmt)):
            return stmt
        value = stmt.value
        own, addend = ((value.a, value.b) if isinstance(value.a, BufferLoad)
                       and value.a.buffer.data is stmt.buffer.data else (value.b, value.a))
        new = contiguous_addend(addend, self.analyzer, self.flat_views)
        return stmt if new is None else replace(stmt, value=Add(own, new))


def contiguous_accumulation(stmt: Stmt) -> Stmt:
    """``stmt`` with the addends of its lane-free accumulators regrouped (the same object
    when there are none)."""
    lane_free = lane_free_accumulators(stmt)
    if not lane_free:
        return stmt
    with deep_recursion():
        return _Regroup(lane_free).visit_stmt(stmt)


def ContiguousAccumulation() -> PrimFuncPass:
    """Strided loads summed into a lane-free vector accumulator -> contiguous loads."""

    def transform_function(func, mod, ctx):
        body = contiguous_accumulation(func.body)
        return func if body is func.body else func.with_body(body)

    return prim_func_pass(transform_function, opt_level=0, name="tir.ContiguousAccumulation")
