"""``StripMineVectorLoops``: split a vectorized loop into register-wide vectors and a tail.

A ``ForKind.VECTORIZED`` loop whose extent is symbolic, or a constant that
is not a small multiple of the vector length ``VL``, becomes a serial loop
over full vectors plus one peeled, guarded last vector (when a tail can
exist)::

    for i in vectorized(n):                for i_outer in range(n // 16):
        B[i] = A[i] + 1f            ->         for i in vectorized(16):
                                                   B[i_outer*16 + i] = A[i_outer*16 + i] + 1f
                                           for i in vectorized(16):
                                               if n // 16 * 16 + i < n:
                                                   B[n // 16 * 16 + i] = A[n // 16 * 16 + i] + 1f

``VectorizeLoop`` then vectorizes both inner loops (after its dependence
analysis, on the VL-wide loops). The tail loop carries the annotation
``PREDICATE_TAIL``, which makes the vectorizer turn its guard into a lane
mask on the accesses (buffer-level predication) for that loop only, so
``VectorizeLoop``'s output for loops a user wrote is what it was; a tail that
cannot be predicated (say, a strided load) is scalarized, and its remark
says why. Both loops carry ``STRIP_MINED``, the note their remarks start
with (``strip-mined by 16 (the target's 512-bit registers / float32)``).

Which loops: an extent that is symbolic; a constant above ``VL`` that is not
a multiple of it; a constant above ``MAX_VECTORS * VL`` (one huge vector
compiles slowly and spills). Extents up to ``VL`` fit one register and are
left alone. A vectorized loop with vectorized loops inside is left to
``VectorizeLoop``, which merges the nest into one vector, while that vector
fits ``MAX_VECTORS`` registers; a bigger (or symbolic) nest keeps its outer
loop serial and strip-mines the loops inside (its remark says so).

``VL`` is the target's widest vector register (function attr ``"target"``,
else the host) over the widest element the loop body loads or stores
(float32 with AVX-512: 16; with AVX2: 8). The loop annotation
``"tir.vector_length": VL`` (a positive power of two) chooses it instead, and
then any extent other than ``VL`` is strip-mined.

On an SVE target (``-mattr=+sve``) a loop to strip-mine becomes instead
seed 000's vector-length-agnostic loop (``vla_loop``): vectors of
``VL = vscale() * (128 // bits)`` lanes, every one predicated by its guard
(``get_active_lane_mask``, SVE's ``whilelo``), so one loop serves every
vector length and every trip count. A loop already of extent
``k * vscale()`` is left to ``VectorizeLoop``.

``codegen.build``'s pipeline runs the pass before ``VectorizeLoop``; it does
nothing under config ``tir.disable_vectorize`` (the serial build keeps the
loop as written).
"""

from __future__ import annotations

from typing import Any

from target import Target, current_target, has_sve
from tir import dtype as dt
from tir import op
from tir.arith import Analyzer
from tir.expr import BufferLoad, Cast, IntImm, PrimExpr, Var, scalable_factor
from tir.function import IRModule, PrimFunc
from tir.functor import (
    StmtMutator,
    StmtVisitor,
    copy_with_fresh_binders,
    post_order_visit,
    substitute,
)
from tir.node import replace
from tir.stmt import BufferStore, For, ForKind, IfThenElse, SeqStmt, Stmt

from ..pass_base import PrimFuncPass, function_name, prim_func_pass
from ..pass_context import PassContext
from ..remarks import emit_remark
from .remarks import NOT_VECTORIZED, VectorizeRemark
from .vectorizer.loops import PREDICATE_TAIL, STRIP_MINED

#: The loop annotation that sets the vector length (a positive power of two).
VECTOR_LENGTH = "tir.vector_length"

#: Constant extents up to this many vectors (and multiples of VL) stay one vector.
MAX_VECTORS = 4

#: SVE vector registers are ``vscale`` times this many bits.
SVE_GRANULE_BITS = 128


class _StripMiner(StmtMutator):
    """Strip-mines the vectorized loops of a body for one target."""

    def __init__(self, func_name: str, register_bits: int, sve: bool = False):
        self.func_name = func_name
        self.register_bits = register_bits
        #: The target has SVE: loops to strip-mine become vector-length-agnostic loops.
        self.sve = sve
        self.analyzer = Analyzer()

    def visit_for(self, loop: For) -> Stmt:
        if loop.kind != ForKind.VECTORIZED:
            return self.generic_visit(loop)
        if is_scalable_extent(loop.extent):
            return loop  # already k * vscale() lanes: VectorizeLoop's to take
        vl, why = self._vector_length(loop)
        if _has_vectorized_loop(loop.body):
            return self._nest(loop, vl)

        if not self._needs_strip_mining(loop, vl):
            return loop
        scalable = scalable_vector_length(loop) if self.sve else None
        if scalable is not None:
            vla, why = scalable
            note = f"strip-mined by vscale x {scalable_factor(vla)} ({why}), predicated"
            return vla_loop(loop, vla, note)
        return self._strip_mine(loop, vl, f"strip-mined by {vl} ({why})")

    def _nest(self, loop: For, vl: int) -> Stmt:
        """A vectorized loop with vectorized loops inside: VectorizeLoop merges the nest into
        one vector of the product of their extents. Up to MAX_VECTORS registers that is
        left to it; a bigger or symbolic product would be one huge vector (slow to compile,
        spilled), so the outer loop runs serially instead -- always the program's meaning --
        and the loops inside are strip-mined on their own."""
        lanes = _nest_lanes(loop)
        if lanes is not None and lanes <= MAX_VECTORS * vl:
            return loop
        size = f"{lanes} lanes" if lanes is not None else "a symbolic number of lanes"
        extent = loop.extent.value if isinstance(loop.extent, IntImm) else 0
        emit_remark(VectorizeRemark(
            self.func_name, loop.loop_var.name, extent, NOT_VECTORIZED,
            f"kept serial: merged with the vectorized loop(s) inside it, it would be one "
            f"vector of {size} (more than {MAX_VECTORS} x {vl}); the loops inside are "
            "vectorized on their own"))
        return self.generic_visit(replace(loop, kind=ForKind.SERIAL))

    def _vector_length(self, loop: For) -> tuple[int, str]:
        """VL for ``loop`` and where it comes from (for the remark)."""
        vl, source = vector_length(loop, self.register_bits, self.func_name)
        return vl, source if source == VECTOR_LENGTH else f"the target's {source}"

    def _needs_strip_mining(self, loop: For, vl: int) -> bool:
        extent = loop.extent
        if not isinstance(extent, IntImm):
            return True
        if VECTOR_LENGTH in (loop.annotations or {}):
            return extent.value != vl  # the user asked for vectors of exactly vl
        if extent.value <= vl:
            return False  # fits one register
        return extent.value % vl != 0 or extent.value > MAX_VECTORS * vl

    def _strip_mine(self, loop: For, vl: int, note: str) -> Stmt:
        """The serial loop over full vectors, then the guarded tail vector if one can exist."""
        var, dtype = loop.loop_var, loop.loop_var.dtype
        width = op.const(vl, dtype)
        count = loop.extent
        if not self.analyzer.can_prove(op.greater_equal(count, op.const(0, dtype))):
            count = op.max(count, op.const(0, dtype))  # a negative extent runs no iteration
        full = op.floordiv(count, width)
        keep = {k: v for k, v in (loop.annotations or {}).items() if k != VECTOR_LENGTH}
        parts: list[Stmt] = []
        if not _is_const(full, 0):
            outer = Var(f"{var.name}_outer", dtype)
            inner = Var(var.name, dtype)
            index = op.add(op.add(loop.min, op.mul(outer, width)), inner)
            vector = For(inner, op.const(0, dtype), width, ForKind.VECTORIZED,
                         substitute(loop.body, {var: index}), {**keep, STRIP_MINED: note})
            parts.append(For(outer, op.const(0, dtype), full, ForKind.SERIAL, vector))
        if not (isinstance(count, IntImm) and count.value % vl == 0):
            parts.append(self._tail(loop, vl, full, count, keep, note))
        return parts[0] if len(parts) == 1 else SeqStmt(parts)

    def _tail(self, loop: For, vl: int, full: PrimExpr, count: PrimExpr, keep: dict,
              note: str) -> Stmt:
        """``for v in vectorized(vl): if start + v < min + count: body(start + v)``."""
        var, dtype = loop.loop_var, loop.loop_var.dtype
        inner = Var(var.name, dtype)
        # The guard and the accesses share the base ``start``: predication needs them equal.
        start = op.add(loop.min, op.mul(full, op.const(vl, dtype)))
        index = op.add(start, inner)
        guard = op.less(index, op.add(loop.min, count))
        # A second copy of the body: its binders are fresh, no var is bound twice.
        body = IfThenElse(guard, copy_with_fresh_binders(loop.body, {var: index}))
        annotations = {**keep, STRIP_MINED: f"{note}, tail", PREDICATE_TAIL: True}
        return For(inner, op.const(0, dtype), op.const(vl, dtype), ForKind.VECTORIZED, body,
                   annotations)


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


def vla_loop(loop: For, vl: PrimExpr, note: str, lane: Var | None = None) -> Stmt:
    """``loop`` as seed 000's vector-length-agnostic loop: every vector predicated::

        for i_outer in range(ceildiv(n, VL)):
            for i in vectorized(VL):                 # VL = vscale() * k
                if i_outer * VL + i < n:             # -> get_active_lane_mask
                    body(min + i_outer * VL + i)

    One loop for any vector length and any ``n``: no tail loop, no fixed width.
    ``lane``, if given, is the var of the inner loop (``loop.body`` may use it).
    """
    var, dtype = loop.loop_var, loop.loop_var.dtype
    width = vl if dtype == vl.dtype else op.cast(dtype, vl)
    count = loop.extent
    if not Analyzer().can_prove(op.greater_equal(count, op.const(0, dtype))):
        count = op.max(count, op.const(0, dtype))  # a negative extent runs no iteration
    outer = Var(f"{var.name}_outer", dtype)
    inner = Var(var.name, dtype) if lane is None else lane
    done = op.add(op.mul(outer, width), inner)
    guard = op.less(done, count)
    body = IfThenElse(guard, substitute(loop.body, {var: op.add(loop.min, done)}))
    keep = {k: v for k, v in (loop.annotations or {}).items() if k != VECTOR_LENGTH}
    vector = For(inner, op.const(0, dtype), width, ForKind.VECTORIZED, body,
                 {**keep, STRIP_MINED: note, PREDICATE_TAIL: True})
    # ceildiv without the overflow of n + VL - 1; (0 - 1) // VL + 1 = 0
    steps = op.add(op.floordiv(op.sub(count, op.const(1, dtype)), width), op.const(1, dtype))
    return For(outer, op.const(0, dtype), steps, ForKind.SERIAL, vector)


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
    return max(1, register_bits // bits), f"{register_bits}-bit registers / {name}"


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


def _has_vectorized_loop(body: Stmt) -> bool:
    found: list[For] = []
    post_order_visit(body, lambda n: found.append(n) if isinstance(n, For)
                     and n.kind == ForKind.VECTORIZED else None)
    return bool(found)


class _OutermostVectorLoops(StmtVisitor):
    """The vectorized loops of a body that are not inside another vectorized loop."""

    def __init__(self):
        self.loops: list[For] = []

    def visit_for(self, node: For) -> None:
        if node.kind == ForKind.VECTORIZED:
            self.loops.append(node)  # loops inside it are counted by its own _nest_lanes
        else:
            self.generic_visit(node)


def _nest_lanes(loop: For) -> int | None:
    """The lanes of the vector VectorizeLoop would merge ``loop``'s nest into (None: symbolic):
    its extent times the widest nest of vectorized loops inside it."""
    if not isinstance(loop.extent, IntImm):
        return None
    finder = _OutermostVectorLoops()
    finder(loop.body)
    widths = [_nest_lanes(v) for v in finder.loops]
    if any(w is None for w in widths):
        return None
    return loop.extent.value * max(widths, default=1)


def _is_const(e: PrimExpr, value: int) -> bool:
    return isinstance(e, IntImm) and e.value == value


def register_bits(func: PrimFunc) -> int:
    """The widest vector register of the function's target, else of the entered
    ``codegen.Target``, else of the host."""
    target = func.attrs.get("target", current_target())
    return Target("llvm" if target is None else str(target)).vector_width_bits


def strip_mine_function(func: PrimFunc, name: str = "main") -> PrimFunc:
    """``func`` with its vectorized loops strip-mined (see the module docstring)."""
    sve = has_sve(func.attrs.get("target", current_target()))
    body = _StripMiner(name, register_bits(func), sve)(func.body)
    return func if body is func.body else func.with_body(body)


def StripMineVectorLoops() -> PrimFuncPass:
    """The pass splitting vectorized loops into register-wide vectors and a predicated tail.

    Raises:
        ValueError: a ``tir.vector_length`` annotation that is not a positive power of two.
    """

    def transform_function(func: PrimFunc, mod: IRModule, ctx: PassContext) -> PrimFunc:
        if ctx.config.get("tir.disable_vectorize", False):
            return func
        name = function_name(mod, func)
        return strip_mine_function(func, name)

    return prim_func_pass(transform_function, opt_level=0, name="tir.StripMineVectorLoops")


__all__ = [
    "MAX_VECTORS",
    "SVE_GRANULE_BITS",
    "VECTOR_LENGTH",
    "StripMineVectorLoops",
    "is_scalable_extent",
    "register_bits",
    "scalable_vector_length",
    "strip_mine_function",
    "vector_length",
    "vla_loop",
]
