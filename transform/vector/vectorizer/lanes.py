"""Reshaping vectors: replicate, repeat each lane, take one lane, concatenate.

The vectorizer widens every value that depends on the loop var from ``n``
lanes to ``L * n`` lanes, lane ``l * n + k`` holding lane ``k`` of iteration
``l``. A value that does not depend on the var must then be *replicated*
(``[v, v, ..., v]``), and a scalar-per-iteration value used where each
iteration has ``n`` lanes must have *each lane repeated* ``n`` times.

A loop of extent ``k * vscale()`` (SVE) has ``L = ScalableLanes(k)`` lanes, a
count known only when the code runs. Only scalars widen to it: a vector of
``n > 1`` lanes per iteration would need ``n * k * vscale`` lanes in an order
no scalable shuffle can build: the vectorizer raises ``MixedLanesError``
(TVM's "Creating scalable vectors from existing vectors"), as it does for
widening an existing scalable vector by a fixed loop. ``ScalableLanes`` has no
arithmetic: every product of lane counts goes through ``ExprVectorizer.times``.
"""

from __future__ import annotations

import attrs

from tir import dtype as dt
from tir import op
from tir.expr import Broadcast, PrimExpr, Ramp, Shuffle

#: TVM's messages for the two ways fixed and scalable vectors can meet in a loop.
SCALABLE_FROM_VECTORS = "Creating scalable vectors from existing vectors is not supported."
VECTORS_OF_SCALABLE = "Vectorizing over existing scalable vectors is not supported."


class MixedLanesError(Exception):
    """A fixed-length vector met a scalable one; the loop vectorizer names the loop."""


@attrs.frozen
class ScalableLanes:
    """``factor * vscale`` lanes: the lane count of a loop of extent ``factor * vscale()``."""

    factor: int

    def expr(self) -> PrimExpr:
        """The lane count as TIR writes it, ``vscale() * factor`` (TVM's order)."""
        return op.mul(op.vscale(), op.const(self.factor, "int32"))

    def __str__(self) -> str:
        return f"vscale x {self.factor}"


def lanes(e: PrimExpr) -> int | ScalableLanes:
    """The lane count of ``e``'s dtype (``ScalableLanes(k)`` for ``...xvscalexk``)."""
    t = dt.DataType(e.dtype)
    return ScalableLanes(t.lanes) if t.is_scalable else t.lanes


def lanes_arg(count: int | ScalableLanes) -> int | PrimExpr:
    """``count`` as ``Ramp``/``Broadcast`` take it."""
    return count.expr() if isinstance(count, ScalableLanes) else count


def with_lanes(dtype: str, count: int | ScalableLanes) -> str:
    """``dtype``'s element type with ``count`` lanes."""
    if isinstance(count, ScalableLanes):
        return dt.with_scalable_lanes(dt.element_of(dtype), count.factor)
    return dt.with_lanes(dt.element_of(dtype), count)


def replicate(e: PrimExpr, times: int | ScalableLanes) -> PrimExpr:
    """``e`` concatenated ``times`` times: a scalar becomes a ``Broadcast``."""
    if times == 1:
        return e
    if lanes(e) == 1:
        return Broadcast(e, lanes_arg(times))
    if isinstance(times, ScalableLanes):
        raise MixedLanesError(SCALABLE_FROM_VECTORS)
    if isinstance(e, Broadcast):
        return Broadcast(e.value, lanes(e) * times)
    return concat([e] * times)


def repeat_each(e: PrimExpr, times: int) -> PrimExpr:
    """Each lane of ``e`` repeated ``times`` times in place: ``[e0, e0, e1, e1, ...]``."""
    if times == 1:
        return e
    n = lanes(e)
    if n == 1:
        return Broadcast(e, times)
    if isinstance(n, ScalableLanes):
        raise MixedLanesError(SCALABLE_FROM_VECTORS)
    if isinstance(e, Broadcast):
        return Broadcast(e.value, n * times)
    return Shuffle([e], [k // times for k in range(n * times)])


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
