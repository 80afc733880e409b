"""Which vector accumulators are *lane-free*: only ever read summed over all their lanes.

``VectorizeReductions`` turns ``s = s + f(i)`` into vector accumulators that
each step adds a vector to, lane by lane, and that only the final horizontal
sum reads::

    S_acc[0:8] = S_acc[0:8] + X                      # every step
    S[0] = S[0] + vector_reduce_add_reassoc(S_acc[0:8] + S_acc[8:16])

The result is the sum of every lane of every ``X`` ever added: it does not
depend on which lane of ``X`` holds which term. Such an accumulator is
lane-free, and the terms of an addend may be handed to it in any lane order
(``contiguous_accumulation.py`` uses that). An accumulator ``D`` is lane-free
when

- it is allocated in the function (no caller sees it);
- every store to it is an initialization (a ``Broadcast`` constant) or an
  update ``D[I] = D[I] + X`` reading the same indices it writes; all of it
  with constant ``Ramp(c, 1, L)`` indices;
- every other load of it lies inside the argument of a horizontal sum
  (``tir.vector_reduce_add_reassoc``, or ``tir.vector_reduce_add`` of
  integers, whose sums are exact in any order), reached through ``+`` only,
  and those loads read disjoint slices: each element is summed once.

Float sums qualify only through the ``_reassoc`` reduction, which exists
only where reassociation is allowed (never under
``tir.vectorize.ordered_reductions``).
"""

from __future__ import annotations

from tir import dtype as dt
from tir.expr import Add, Broadcast, BufferLoad, Call, FloatImm, IntImm, Ramp, Var
from tir.functor import post_order_visit
from tir.stmt import Allocate, BufferStore, Stmt
from tir.structural import structural_equal

#: The horizontal sums whose argument's lanes are all summed, in any order.
_SUMS = {"tir.vector_reduce_add_reassoc": True, "tir.vector_reduce_add": False}


def _slice(indices) -> tuple[int, int] | None:
    """``(start, lanes)`` of a constant ``[Ramp(c, 1, L)]`` index, else None."""
    if len(indices) != 1:
        return None
    ramp = indices[0]
    if not (isinstance(ramp, Ramp) and isinstance(ramp.base, IntImm)
            and isinstance(ramp.stride, IntImm) and ramp.stride.value == 1):
        return None
    return ramp.base.value, ramp.lanes


def is_update(store: BufferStore) -> bool:
    """``D[I] = D[I] + X`` or ``D[I] = X + D[I]`` (the same indices both sides)."""
    value = store.value
    if not isinstance(value, Add):
        return False
    return any(isinstance(side, BufferLoad) and side.buffer.data is store.buffer.data
               and side.predicate is None
               and all(structural_equal(a, b) for a, b in zip(side.indices, store.indices))
               for side in (value.a, value.b))


def _is_init(store: BufferStore) -> bool:
    value = store.value
    return (store.predicate is None and isinstance(value, Broadcast)
            and isinstance(value.value, (IntImm, FloatImm)))


class _Uses:
    """Every access to the allocated buffers of a body, sorted by how it is used."""

    def __init__(self, body: Stmt):
        self.allocated: dict[int, Var] = {}
        self.stores: dict[int, list[BufferStore]] = {}
        self.summed: dict[int, list[BufferLoad]] = {}   # loads under a horizontal sum
        self.exempt: set[int] = set()                    # ids of updates' self-reads
        self.loads: dict[int, list[BufferLoad]] = {}
        self.float_sums_ok: dict[int, bool] = {}
        post_order_visit(body, self._visit)

    def _visit(self, node) -> None:
        if isinstance(node, Allocate):
            self.allocated[id(node.buffer_var)] = node.buffer_var
        elif isinstance(node, BufferStore):
            self.stores.setdefault(id(node.buffer.data), []).append(node)
            if is_update(node):
                for side in (node.value.a, node.value.b):
                    if isinstance(side, BufferLoad) and side.buffer.data is node.buffer.data:
                        self.exempt.add(id(side))
                        break
        elif isinstance(node, BufferLoad):
            self.loads.setdefault(id(node.buffer.data), []).append(node)
        elif isinstance(node, Call) and getattr(node.op, "name", node.op) in _SUMS:
            self._summed_loads(node)

    def _summed_loads(self, call: Call) -> None:
        if len(call.args) != 1:
            return  # vector_reduce_add(v, start): folded in lane order
        reassoc = _SUMS[getattr(call.op, "name", call.op)]
        stack = [call.args[0]]
        while stack:
            e = stack.pop()
            if isinstance(e, Add):
                stack += [e.a, e.b]
            elif isinstance(e, BufferLoad) and e.predicate is None:
                key = id(e.buffer.data)
                self.summed.setdefault(key, []).append(e)
                ok = reassoc or not dt.DataType(e.dtype).is_float
                self.float_sums_ok[key] = self.float_sums_ok.get(key, True) and ok


def _disjoint(slices: list[tuple[int, int]]) -> bool:
    spans = sorted(slices)
    return all(a[0] + a[1] <= b[0] for a, b in zip(spans, spans[1:]))


def lane_free_accumulators(body: Stmt) -> set[int]:
    """``id`` of the data var of every lane-free accumulator in ``body`` (see above)."""
    uses = _Uses(body)
    out = set()
    for key in uses.allocated:
        stores, summed = uses.stores.get(key, []), uses.summed.get(key, [])
        if not stores or not summed or not uses.float_sums_ok.get(key, False):
            continue
        if not all(_slice(s.indices) and (_is_init(s) or is_update(s)) for s in stores):
            continue
        summed_ids = {id(x) for x in summed}
        others = [x for x in uses.loads.get(key, [])
                  if id(x) not in summed_ids and id(x) not in uses.exempt]
        slices = [_slice(x.indices) for x in summed]
        if others or None in slices or not _disjoint(slices):
            continue
        covered = set()
        for start, lanes in slices:
            covered.update(range(start, start + lanes))
        if all(set(range(*_span(s))) <= covered for s in stores):
            out.add(key)
    return out


def _span(store: BufferStore) -> tuple[int, int]:
    start, lanes = _slice(store.indices)
    return start, start + lanes
