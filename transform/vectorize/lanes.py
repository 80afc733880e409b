"""Reshaping vectors: replicate, repeat each lane, take one lane, concatenate.

The vectorizer widens every value that depends on the loop var from ``n``
lanes to ``L * n`` lanes, lane ``l * n + k`` holding lane ``k`` of iteration
``l``. A value that does not depend on the var must then be *replicated*
(``[v, v, ..., v]``), and a scalar-per-iteration value used where each
iteration has ``n`` lanes must have *each lane repeated* ``n`` times.
"""

from __future__ import annotations

from tir import dtype as dt
from tir import op
from tir.expr import Broadcast, PrimExpr, Ramp, Shuffle


def lanes(e: PrimExpr) -> int:
    """The fixed lane count of ``e``'s dtype."""
    return dt.lanes_of(e.dtype)


def replicate(e: PrimExpr, times: int) -> PrimExpr:
    """``e`` concatenated ``times`` times: a scalar becomes a ``Broadcast``."""
    if times == 1:
        return e
    if lanes(e) == 1:
        return Broadcast(e, times)
    if isinstance(e, Broadcast):
        return Broadcast(e.value, e.lanes * times)
    return concat([e] * times)


def repeat_each(e: PrimExpr, times: int) -> PrimExpr:
    """Each lane of ``e`` repeated ``times`` times in place: ``[e0, e0, e1, e1, ...]``."""
    if times == 1:
        return e
    if lanes(e) == 1:
        return Broadcast(e, times)
    if isinstance(e, Broadcast):
        return Broadcast(e.value, e.lanes * times)
    return Shuffle([e], [k // times for k in range(lanes(e) * times)])


def lane_of(e: PrimExpr, k: int) -> PrimExpr:
    """Lane ``k`` of ``e`` as a scalar expression (symbolic for ramps and broadcasts)."""
    if lanes(e) == 1:
        return e
    if isinstance(e, Ramp):
        return op.add(e.base, op.mul(e.stride, op.const(k, e.stride.dtype)))
    if isinstance(e, Broadcast):
        return e.value
    return Shuffle([e], [k])


def chunk(e: PrimExpr, k: int, size: int) -> PrimExpr:
    """Lanes ``[k * size, (k + 1) * size)`` of ``e`` (one lane is a scalar)."""
    if size == 1:
        return lane_of(e, k)
    if isinstance(e, Broadcast):
        return Broadcast(e.value, size)
    return Shuffle([e], list(range(k * size, (k + 1) * size)))


def concat(vectors: list[PrimExpr]) -> PrimExpr:
    """The lanes of ``vectors`` one after another, as one ``Shuffle``."""
    if len(vectors) == 1:
        return vectors[0]
    total = sum(lanes(v) for v in vectors)
    return Shuffle(vectors, list(range(total)))
