"""Which accumulator updates a byte dot-product instruction (``vpdpbusd``) may compute.

A vectorized ``s = s + int32(a[i]) * int32(b[i])`` on uint8 ``a`` and int8 ``b``
updates its vector accumulator with one product per int32 lane::

    S_acc[0:64] = S_acc[0:64] + int32x64(A[r]) * int32x64(B[r])       # r = Ramp(b, 1, 64)

``vpdpbusd`` (AVX512-VNNI on zmm, AVX-VNNI on ymm) multiplies 4 adjacent uint8 x int8
byte pairs and adds the 4 products to one int32 lane, wrapping (it does not
saturate: that is ``vpdpbusds``). The update may use it::

    S_acc[0:16] = vpdpbusd(S_acc[0:16], A[r], B[r])                    # lanes 16..63 stay

when ``S_acc`` is lane-free (analysis/lane_free.py): only the sum of all its lanes
is ever read, so which lane a product lands in does not matter, and int32 sums
that wrap are associative and commutative, so adding 4 products into one lane
first gives the same total, bit for bit, overflow included. Each product fits
int32 (|255 * -128| < 2^15), as it does in the serial loop.

An update qualifies when it is unpredicated (a predicated tail keeps its masked
lanes untouched; it stays as it is), its accumulator is lane-free and int32,
and its addend is the product of two ``Cast``s to int32 of a uint8 and an int8
vector (in either order) of the accumulator's lanes. Which instruction width the
target can run is the rewrite's question (byte_dot_accumulation.py).
"""

from __future__ import annotations

import attrs

from tir import dtype as dt
from tir.expr import BufferLoad, Cast, Mul, PrimExpr
from tir.stmt import BufferStore

from .lane_free import is_update


@attrs.frozen
class ByteDot:
    """A lane-free int32 update ``S[start:start+lanes] += int32(unsigned) * int32(signed)``."""

    start: int
    lanes: int
    #: The uint8 operand (``vpdpbusd``'s first source) and the int8 one, ``lanes`` wide.
    unsigned: PrimExpr
    signed: PrimExpr


def _addend(store: BufferStore) -> PrimExpr:
    """The side of ``store``'s update that is not its own accumulator's load."""
    value = store.value
    own = value.a
    if isinstance(own, BufferLoad) and own.buffer.data is store.buffer.data:
        return value.b
    return value.a


def _operands(addend: PrimExpr, lanes: int) -> tuple[PrimExpr, PrimExpr] | None:
    """``(uint8 x, int8 y)`` of ``int32(x) * int32(y)`` (either order), or None."""
    if not isinstance(addend, Mul):
        return None
    casts = (addend.a, addend.b)
    if not all(isinstance(c, Cast) for c in casts):
        return None
    by_type = {str(c.value.dtype): c.value for c in casts}
    unsigned, signed = by_type.get(f"uint8x{lanes}"), by_type.get(f"int8x{lanes}")
    if unsigned is None or signed is None:
        return None
    return unsigned, signed


def byte_dot(store: BufferStore, lane_free: set[int]) -> ByteDot | None:
    """``store`` as a ``ByteDot`` if a byte dot instruction may compute it (see above)."""
    if id(store.buffer.data) not in lane_free or store.predicate is not None:
        return None
    if not is_update(store) or len(store.indices) != 1:
        return None
    lanes = dt.lanes_of(store.value.dtype)
    if store.value.dtype != f"int32x{lanes}" or lanes % 4:
        return None
    operands = _operands(_addend(store), lanes)
    if operands is None:
        return None
    ramp = store.indices[0]  # lane_free: a constant Ramp(c, 1, lanes)
    return ByteDot(ramp.base.value, lanes, *operands)
