"""Whether a vectorized reduction's terms are read through shuffled strided loads.

``VectorizeReductions`` keeps K independent vector accumulators so that the
latency of one add (or FMA) does not bound the loop: 4 for float sums. That
pays when the loads are cheap. A term ``a[3 * i]`` is a wide load of three
chunks and two shuffles per vector (codegen/llvm/planned_access.py): the
shuffles, then memory, bound the loop, and K groups of chunk loads per
iteration are issued out of address order. Measured on the Zen 4 host
(float32 sums over 2^22 elements, medians of 31 interleaved runs): stride 3
ran 1.86 ms with K = 4 and 1.53 ms with K = 2 (gcc -O3: 1.49); stride 2, and
either stride at 2^10-2^16 elements or on an AVX2 target, within 3% of each
other. Such reductions get K = 2.

Terms that together cover a contiguous run (``a[2 i] + a[2 i + 1]``) are not
shuffled in the end (``ContiguousAccumulation`` makes them contiguous loads),
so a buffer read at fewer offsets than its stride is what counts.
"""

from __future__ import annotations

from tir.analysis.linear_form import linear_coefficient
from tir.expr import BufferLoad, IntImm, PrimExpr, Var
from tir.functor import post_order_visit


def shuffled_terms(values: list[PrimExpr], var: Var) -> bool:
    """Whether every load in ``values`` that depends on ``var`` steps by a constant of
    at least 2 elements in its last index, at fewer offsets per buffer than that step,
    and there is at least one such load."""
    loads: list[BufferLoad] = []
    for value in values:
        post_order_visit(value, lambda n: loads.append(n) if isinstance(n, BufferLoad) else None)
    steps: dict[int, tuple[int, set]] = {}
    for load in loads:
        step = _step(load, var)
        if step is None:
            return False
        if step == 0:
            continue  # loop-invariant: no vector load
        seen = steps.setdefault(id(load.buffer.data), (step, set()))
        if abs(step) < 2 or seen[0] != step:
            return False
        seen[1].add(str(load.indices[-1]))
    return bool(steps) and all(len(seen) < abs(step) for step, seen in steps.values())


def _step(load: BufferLoad, var: Var) -> int | None:
    """The constant step of ``load``'s last index in ``var`` (0: invariant), or None when
    another index moves with ``var`` or the step is not a constant."""
    if not load.indices:
        return None
    steps = [linear_coefficient(i, var) for i in load.indices]
    if not all(isinstance(s, IntImm) for s in steps) or any(s.value for s in steps[:-1]):
        return None
    return steps[-1].value


__all__ = ["shuffled_terms"]
