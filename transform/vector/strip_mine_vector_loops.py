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
fits ``MAX_VECTORS`` registers, or is a square tile of ``VL`` rows of one register
each while that is at most ``2 * MAX_VECTORS`` registers (an 8 x 8 float32 tile
on AVX2: the unit of a transpose network, which as 8 separate vectors would read
each column lane by lane; 7.3 against 9.8 ms for a 2048^2 transpose on znver3); a
bigger (or symbolic) nest keeps its outer loop serial and strip-mines the loops
inside (its remark says so).

``VL`` comes from vector_length.py: the ``tir.vector_length`` annotation, else the
target's widest register over the widest element (float32 with AVX-512: 16; AVX2: 8);
with the annotation, any extent other than ``VL`` is strip-mined. How the tail runs
(the peeled guarded vector, its marker, the VLA loop) is tail.py's.

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

from tir import op
from tir.arith import Analyzer
from tir.expr import IntImm, PrimExpr, Var, scalable_factor
from tir.function import IRModule, PrimFunc
from tir.functor import (
    StmtMutator,
    StmtVisitor,
    post_order_visit,
    substitute,
)
from tir.node import replace
from tir.stmt import For, ForKind, SeqStmt, Stmt

from ..pass_base import PrimFuncPass, function_name, prim_func_pass
from ..pass_context import PassContext
from ..remarks import emit_remark, note_loop_copy
from .options import VectorOptions, function_has_sve
from .remarks import NOT_VECTORIZED, VectorizeRemark
from .tail import STRIP_MINED, peeled_tail, vla_loop
from .vector_length import (
    VECTOR_LENGTH,
    is_scalable_extent,
    register_bits,
    scalable_vector_length,
    vector_length,
)

#: Constant extents up to this many vectors (and multiples of VL) stay one vector.
MAX_VECTORS = 4


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
        if lanes is not None and (lanes <= MAX_VECTORS * vl or _register_square(loop, vl)):
            return loop
        size = f"{lanes} lanes" if lanes is not None else "a symbolic number of lanes"
        extent = loop.extent.value if isinstance(loop.extent, IntImm) else 0
        emit_remark(VectorizeRemark(
            self.func_name, loop.loop_var.name, extent, NOT_VECTORIZED,
            f"kept serial: merged with the vectorized loop(s) inside it, it would be one "
            f"vector of {size} (more than {MAX_VECTORS} x {vl}); the loops inside are "
            "vectorized on their own", "StripMineVectorLoops"), loop=loop.loop_var)
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
            note_loop_copy(inner, var, index)
            vector = For(inner, op.const(0, dtype), width, ForKind.VECTORIZED,
                         substitute(loop.body, {var: index}), {**keep, STRIP_MINED: note})
            parts.append(For(outer, op.const(0, dtype), full, ForKind.SERIAL, vector))
        if not (isinstance(count, IntImm) and count.value % vl == 0):
            parts.append(peeled_tail(loop, vl, full, count, keep, note))
        return parts[0] if len(parts) == 1 else SeqStmt(parts)



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


def _register_square(loop: For, vl: int) -> bool:
    """Whether ``loop`` and the one vectorized loop it holds are a ``vl`` x ``vl`` tile of
    at most ``2 * MAX_VECTORS`` registers, with nothing else inside (see the module doc)."""
    inner = loop.body
    if not (isinstance(inner, For) and inner.kind == ForKind.VECTORIZED):
        return False
    finder = _OutermostVectorLoops()
    finder(inner.body)
    return (vl <= 2 * MAX_VECTORS and _is_const(loop.extent, vl)
            and _is_const(inner.extent, vl) and not finder.loops)


def _is_const(e: PrimExpr, value: int) -> bool:
    return isinstance(e, IntImm) and e.value == value


def strip_mine_function(func: PrimFunc, name: str = "main") -> PrimFunc:
    """``func`` with its vectorized loops strip-mined (see the module docstring)."""
    body = _StripMiner(name, register_bits(func), function_has_sve(func))(func.body)
    return func if body is func.body else func.with_body(body)


def StripMineVectorLoops() -> PrimFuncPass:
    """The pass splitting vectorized loops into register-wide vectors and a predicated tail.

    Raises:
        ValueError: a ``tir.vector_length`` annotation that is not a positive power of two.
    """

    def transform_function(func: PrimFunc, mod: IRModule, ctx: PassContext) -> PrimFunc:
        if VectorOptions.from_context(ctx).disable_vectorize:
            return func
        return strip_mine_function(func, function_name(mod, func))

    return prim_func_pass(transform_function, opt_level=0, name="tir.StripMineVectorLoops")


__all__ = ["MAX_VECTORS", "StripMineVectorLoops", "strip_mine_function"]
