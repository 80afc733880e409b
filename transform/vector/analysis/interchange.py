"""Should a vectorized loop move inside the serial loop it holds? (the decision, not the rewrite)

A user marks the outer loop of a column-wise nest::

    for i in vectorized(n):            # columns
        for j in range(1, m):          # rows: A[j] depends on A[j - 1]
            A[j, i] = A[j - 1, i] + B[j, i]

Vectorized as written, each vector of columns walks all ``m`` rows before the
next one starts: every step touches a new row, ``8 * n`` bytes from the last,
and each cache line is fetched once per vector that uses it. With the loops
swapped, each row is streamed whole, as gcc's interchange gives. The swap is
made when

- **the nest is perfect**: the vectorized loop's body is one serial ``For``
  whose bounds do not use the vectorized var, and whose body holds no loop;
- **the iterations of the vectorized loop are independent**: no two different
  ones touch one element with one of them writing (the parallel-loop test,
  transform/parallel/conflicts.py); then each column's statement instances keep
  their order, and instances of different columns may run in any order;
- **it pays**: some access has the vectorized var in its last index with
  coefficient 1 and the inner var in an earlier one (the inner loop strides
  across rows), and no access has the inner var in its last index (a row
  that the inner loop would walk contiguously as written).
"""

from __future__ import annotations

from tir.analysis.linear_form import linear_coefficient
from tir.analysis.var_use import uses_var
from tir.arith import Analyzer
from tir.expr import BufferLoad, IntImm
from tir.functor import post_order_visit
from tir.stmt import BufferStore, For, ForKind


def _accesses(body) -> list:
    found = []
    post_order_visit(body, lambda n: found.append(n)
                     if isinstance(n, (BufferLoad, BufferStore)) else None)
    return found


def _has_loop(body) -> bool:
    found = []
    post_order_visit(body, lambda n: found.append(n) if isinstance(n, For) else None)
    return bool(found)


def _pays(outer: For, inner: For) -> bool:
    """Some access strides across rows at each inner step; none walks a row as written."""
    i, j = outer.loop_var, inner.loop_var
    striding = False
    for access in _accesses(inner.body):
        *rows, last = access.indices
        if uses_var(last, j):
            return False
        coeff = linear_coefficient(last, i)
        if (isinstance(coeff, IntImm) and coeff.value == 1
                and any(uses_var(r, j) for r in rows)):
            striding = True
    return striding


def interchange_reason(outer: For, analyzer: Analyzer, shared: frozenset) -> str | None:
    """Why ``outer`` (a vectorized loop) should move inside its inner loop, or None."""
    inner = outer.body
    if outer.kind != ForKind.VECTORIZED or not isinstance(inner, For):
        return None
    if inner.kind != ForKind.SERIAL or _has_loop(inner.body):
        return None
    i = outer.loop_var
    if uses_var(inner.min, i) or uses_var(inner.extent, i) or not _pays(outer, inner):
        return None
    from ...parallel.conflicts import analyze_parallel_loop  # parallel imports vector

    if not analyze_parallel_loop(outer, analyzer, shared).independent:
        return None
    j = inner.loop_var.name
    return (f"interchanged with loop {j}: as written, each step of {j} moved the vectors of "
            f"{i.name} to another row; now each row is read in one pass")
