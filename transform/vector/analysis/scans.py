"""Is this vectorized loop a scan? Recognition for ``VectorizeScans``: which op, or why not.

A vectorized loop over ``i`` whose body is the one statement

    B[..., e(i)] = B[..., e(i) - 1] OP f(i)       # either operand order

is an inclusive scan (a prefix sum for ``+``) when all of this holds:

- ``OP`` is associative: ``+ * min max`` and the bitwise ``& | ^`` on
  integers (``reduction.py``'s ops, not on bool);
- the last index ``e(i)`` moves with ``i`` by exactly one per iteration
  (``e(i + 1) - e(i) == 1``) and the load reads the element just before it;
  the other indices are the same in the load and the store and do not change
  during the loop (another distance is not a scan: no remark, the loop is
  ``VectorizeLoop``'s, whose legality decides);
- ``f`` does not read ``B`` and calls no extern function;
- the element type is an integer or float32/float64.

Floats are exact for min/max; a float sum or product is regrouped by the
scan's log-step tree (a reassociation, refused under
``tir.vectorize.ordered_reductions`` by the pass). The rewrite is in
``transform/vector/vectorize_scans.py``.
"""

from __future__ import annotations

import attrs

from tir import op
from tir.analysis.var_use import uses_var
from tir.arith import Analyzer
from tir.expr import BufferLoad, IntImm, PrimExpr
from tir.functor import substitute
from tir.stmt import BufferStore, For
from tir.structural import structural_equal

from .reductions import (
    REDUCED_TYPES,
    CombiningStore,
    calls,
    describe,
    loads_of,
    op_kind,
    operands,
)


@attrs.frozen
class Scan(CombiningStore):
    """``store`` is ``B[.., e] = B[.., e - 1] OP value``; ``kind`` names OP."""

    store: BufferStore
    previous: BufferLoad
    kind: str
    value: PrimExpr
    template: PrimExpr


def find_scan(loop: For) -> tuple[Scan | None, str | None]:
    """The scan of ``loop`` (a vectorized loop), else None and, for a look-alike, why not."""
    store = loop.body
    if not isinstance(store, BufferStore) or store.predicate is not None:
        return None, None
    value = store.value
    args = operands(value)
    previous = [x for x in args if isinstance(x, BufferLoad)
                and x.buffer.data is store.buffer.data]
    if len(args) != 2 or len(previous) != 1:
        return None, None
    if not _steps_by_one(store, previous[0], loop):
        return None, None  # another recurrence (or none): VectorizeLoop's legality decides
    why = _why_not(store, previous[0], loop)
    if why is not None:
        return None, f"{describe(store)}: {why}"
    f = args[1] if args[0] is previous[0] else args[0]
    return Scan(store, previous[0], op_kind(value), f, value), None


def _why_not(store: BufferStore, previous: BufferLoad, loop: For) -> str | None:
    name = store.buffer.name
    kind = op_kind(store.value)
    if kind is None:
        return "not an associative op (scanned ops: + * min max & | ^)"
    if store.value.dtype not in REDUCED_TYPES - {"bool"}:
        return f"{store.value.dtype} scans are not vectorized"
    args = operands(store.value)
    f = args[1] if args[0] is previous else args[0]
    if loads_of(f, store.buffer.data):
        return f"{f} reads {name} too"
    if calls(f, "tir.call_extern") or calls(f, "tir.call_packed"):
        return f"{f} calls an extern function"
    return None


def _steps_by_one(store: BufferStore, previous: BufferLoad, loop: For) -> bool:
    """The last index moves by one per iteration and the load reads the element before
    the store's; the other indices are equal and fixed during the loop."""
    if previous.predicate is not None or len(previous.indices) != len(store.indices):
        return False
    analyzer = Analyzer()
    *fixed, last = store.indices
    for a, b in zip(fixed, previous.indices[:-1]):
        if not structural_equal(a, b) or uses_var(a, loop.loop_var):
            return False
    var = loop.loop_var
    step = analyzer.simplify(op.sub(substitute(last, {var: op.add(var, 1)}), last))
    back = analyzer.simplify(op.sub(last, previous.indices[-1]))
    return _is_one(step) and _is_one(back)


def _is_one(e: PrimExpr) -> bool:
    return isinstance(e, IntImm) and e.value == 1


__all__ = ["Scan", "find_scan"]

