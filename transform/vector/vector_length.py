"""How many lanes a vectorized loop gets: its annotation, else the target's registers.

``VL`` is the target's widest vector register (function attr ``"target"``, else
the entered ``Target``, else the host) over the widest element the loop body
loads or stores (float32 with AVX-512: 16; with AVX2: 8). A loop that loads
integers narrower than that element gets the lanes of the narrowest one, up
to ``MAX_WIDENING`` registers of the widest: an int8 dot product accumulating
in int32 loads a whole register of bytes per step and keeps its sums in four
int32 registers, instead of loading a quarter register. The loop annotation
``"tir.vector_length": VL`` (a positive power of two) chooses it instead. On
SVE, ``VL = vscale() * (128 // bits)``. Strip-mining, the reduction and the
scan rewrites all size their vectors by these rules.
"""

from __future__ import annotations

from typing import Any

from target import Target
from tir import dtype as dt
from tir import op
from tir.expr import BufferLoad, Cast, IntImm, PrimExpr, scalable_factor
from tir.function import PrimFunc
from tir.functor import post_order_visit
from tir.stmt import BufferStore, For, Stmt

from .options import function_target

#: The loop annotation that sets the vector length (a positive power of two).
VECTOR_LENGTH = "tir.vector_length"

#: How many registers of its widest element a loop widening narrow integer loads may
#: span (int8 -> int32: 4).
MAX_WIDENING = 4

#: SVE vector registers are ``vscale`` times this many bits.
SVE_GRANULE_BITS = 128


def register_bits(func: PrimFunc) -> int:
    """The widest vector register of the function's target, else of the entered
    ``codegen.Target``, else of the host."""
    target = function_target(func)
    return Target("llvm" if target is None else str(target)).vector_width_bits


def vector_length(loop: For, register_bits: int, func_name: str = "main") -> tuple[int, str]:
    """VL for ``loop`` and where it comes from: its ``tir.vector_length`` annotation
    (``"tir.vector_length"``), else ``register_bits`` over the widest element its body
    loads or stores (``"512-bit registers / float32"``). ``VectorizeReductions`` sizes
    its accumulators by the same rule.

    Raises:
        ValueError: an annotation that is not a positive power of two.
    """
    given = (loop.annotations or {}).get(VECTOR_LENGTH)
    if given is not None:
        return _checked_vector_length(given, loop, func_name), VECTOR_LENGTH
    bits, name = _widest_element(loop.body)
    lanes = max(1, register_bits // bits)
    narrow = _narrowest_int_load(loop.body)
    if narrow is not None and narrow.bits * 2 <= bits:
        ratio = min(bits // narrow.bits, MAX_WIDENING)
        return lanes * ratio, (f"{register_bits}-bit registers / {narrow} loads, "
                               f"{ratio} registers of {name}")
    return lanes, f"{register_bits}-bit registers / {name}"


def _narrowest_int_load(body: Stmt) -> dt.DataType | None:
    """The narrowest scalar integer element ``body`` loads (not bool), or None."""
    loads: list[dt.DataType] = []
    post_order_visit(body, lambda n: loads.append(dt.DataType(n.dtype))
                     if isinstance(n, BufferLoad) else None)
    ints = [t for t in loads if t.lanes == 1 and t.type_code in (dt.INT, dt.UINT)]
    return min(ints, key=lambda t: t.bits) if ints else None


def _checked_vector_length(value: Any, loop: For, func_name: str) -> int:
    ok = isinstance(value, int) and not isinstance(value, bool) and value > 0
    if not (ok and value & (value - 1) == 0):
        raise ValueError(
            f"{func_name}: loop {loop.loop_var.name}: annotation {VECTOR_LENGTH} must be a "
            f"positive power of two (such as 8 or 16), got {value!r}"
        )
    return value


def _widest_element(body: Stmt) -> tuple[int, str]:
    """Bits and name of the widest element ``body`` loads or stores (float32 if none)."""
    found: list[dt.DataType] = []

    def visit(node: Any) -> None:
        if isinstance(node, BufferLoad):
            found.append(dt.DataType(node.dtype))
        elif isinstance(node, BufferStore):
            found.append(dt.DataType(node.value.dtype))

    post_order_visit(body, visit)
    # A bool is stored as a byte; a vector element takes all its lanes' bits.
    widest = max(found or [dt.DataType("float32")], key=lambda e: max(8, e.bits) * e.lanes)
    return max(8, widest.bits) * widest.lanes, str(widest)


def narrow_load_hint(body: Stmt, lanes: int) -> str:
    """For a loop of ``lanes`` sized by ``vector_length``'s rule: if it loads an element
    that still fills half a register or less (a float16 beside float32; int8 beside
    int64, past ``MAX_WIDENING``), how much those loads fill and the
    ``tir.vector_length`` that fills it (``""``: nothing to gain)."""
    bits, _ = _widest_element(body)
    narrow_int = _narrowest_int_load(body)
    widened = 1
    if narrow_int is not None and narrow_int.bits * 2 <= bits:
        widened = min(bits // narrow_int.bits, MAX_WIDENING)
    loads: list[dt.DataType] = []
    post_order_visit(body, lambda n: loads.append(dt.DataType(n.dtype))
                     if isinstance(n, BufferLoad) else None)
    scalars = [t for t in loads if t.lanes == 1 and not t.is_bool]
    if not scalars:
        return ""
    narrow = min(scalars, key=lambda t: t.bits)
    ratio = bits // narrow.bits // widened
    if ratio < 2:
        return ""
    share = {2: "half", 4: "a quarter", 8: "an eighth"}.get(ratio, f"1/{ratio}")
    return (f"{narrow} loads fill {share} of a register: "
            f'annotations={{"{VECTOR_LENGTH}": {lanes * ratio}}}')


def scalable_vector_length(loop: For) -> tuple[PrimExpr, str] | None:
    """SVE's VL for ``loop``: ``vscale() * (128 // bits)`` for the widest element its body
    loads or stores (float32: ``vscale() * 4``, one register whatever its length), and
    the note for the remark; None where the loop keeps fixed vectors: a
    ``tir.vector_length`` annotation (the user chose), or vector elements."""
    if VECTOR_LENGTH in (loop.annotations or {}):
        return None
    bits, name = _widest_element(loop.body)
    if bits > SVE_GRANULE_BITS or dt.DataType(name).is_vector:
        return None  # vector elements cannot widen into scalable vectors
    k = SVE_GRANULE_BITS // bits
    return op.mul(op.vscale(), op.const(k, "int32")), f"SVE registers of vscale x 128 bits / {name}"


def is_scalable_extent(extent: PrimExpr) -> bool:
    """Whether ``extent`` is ``k * vscale()`` (a loop over one scalable vector)."""
    if isinstance(extent, Cast):  # Cast("int64", vscale() * k) for an int64 loop var
        extent = extent.value
    return not isinstance(extent, IntImm) and scalable_factor(extent) is not None



__all__ = [
    "SVE_GRANULE_BITS",
    "VECTOR_LENGTH",
    "is_scalable_extent",
    "register_bits",
    "scalable_vector_length",
    "vector_length",
]
