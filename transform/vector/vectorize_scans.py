"""``VectorizeScans``: vectorized loops computing an inclusive scan, ``B[i] = B[i - 1] OP f(i)``.

Each iteration reads what the previous one stored, so ``VectorizeLoop``'s
legality keeps such a loop serial (gcc, clang, TVM and Halide do too). OP
being associative (``analysis/scans.py``), VL iterations at a time can
instead compute their ``f`` as one vector, scan it in registers in log2(VL)
shift-and-combine steps (Hillis and Steele's scan), and combine the total
carried from the previous block, broadcast::

    for i in vectorized(n):               allocate T[VL], C[1] (local)
        B[i] = B[i - 1] + A[i]     ->     C[0] = B[-1]                          (B[e(min) - 1])
                                          for i_outer in range(n // VL):
                                              for j in vectorized(VL):
                                                  T[j] = A[i_outer * VL + j]     (f, widened)
                                              T[0:VL] = T[0:VL] + shift(T[0:VL], 1)   (identity
                                              T[0:VL] = T[0:VL] + shift(T[0:VL], 2)    shifted in)
                                              ...                                 (up to VL / 2)
                                              T[0:VL] = T[0:VL] + Broadcast(C[0], VL)
                                              B[i_outer * VL : +VL] = T[0:VL]
                                              C[0] = T[VL - 1]
                                          for i in range(n // VL * VL, n):    (the serial loop)
                                              B[i] = B[i - 1] + A[i]

Integers (wrapping), min and max are exact. A float sum or product is
regrouped by the tree, so it is taken only where reassociation is allowed
(not under config ``tir.vectorize.ordered_reductions``; the remark says so).
``codegen.build`` runs the pass just before ``VectorizeReductions``; it does
nothing under ``tir.disable_vectorize`` or on SVE targets (whose vector length
is not known when the IR is built).
"""

from __future__ import annotations

import math

from tir import op
from tir.expr import BufferLoad, IntImm, PrimExpr, Var
from tir.expr_vector import Broadcast, Ramp, Shuffle
from tir.function import IRModule, PrimFunc
from tir.functor import StmtMutator, substitute
from tir.stmt import BufferStore, For, ForKind, SeqStmt, Stmt

from ..pass_base import PrimFuncPass, function_name, prim_func_pass
from ..pass_context import PassContext
from ..remarks import emit_remark, note_loop_copy
from .analysis.scans import Scan, find_scan
from .options import ORDERED, VectorOptions, function_has_sve
from .reduction_ir import allocate, local_buffer, serial_loop
from .remarks import VECTORIZED, VectorizeRemark
from .tail import STRIP_MINED
from .vector_length import is_scalable_extent, register_bits, vector_length

#: The outcome of a remark on a scan left serial.
NOT_A_SCAN = "not vectorized as a scan"


class _ScanRewriter(StmtMutator):
    """Rewrites the scans among the vectorized loops below a statement."""

    def __init__(self, func_name: str, register_bits: int, ordered: bool):
        self.func_name = func_name
        self.register_bits = register_bits
        self.ordered = ordered

    def visit_for(self, loop: For) -> Stmt:
        if loop.kind != ForKind.VECTORIZED:
            return self.generic_visit(loop)
        scan, why_not = find_scan(loop)
        if scan is None and why_not is None:
            return loop
        vl, why = vector_length(loop, self.register_bits, self.func_name)
        if scan is None:
            self._remark(loop, vl, NOT_A_SCAN, why_not)
            return loop
        if self.ordered and scan.is_float:
            self._remark(loop, vl, NOT_A_SCAN, f"{_shown(scan)}: a float {scan.kind} scan "
                         f"regroups its terms ({ORDERED} keeps the serial order)")
            return loop
        if vl < 2 or is_scalable_extent(loop.extent) or (
                isinstance(loop.extent, IntImm) and loop.extent.value < vl):
            return loop  # no full vector: VectorizeLoop keeps it serial and says why
        self._remark(loop, vl, VECTORIZED, _reason(scan, vl, why))
        return _ScanPlan(loop, scan, vl).rewrite()

    def _remark(self, loop: For, vl: int, outcome: str, reason: str) -> None:
        emit_remark(VectorizeRemark(self.func_name, loop.loop_var.name, vl, outcome, reason,
                                    "VectorizeScans"), loop=loop.loop_var)


def _shown(scan: Scan) -> str:
    return f"{scan.store.buffer.name}[{', '.join(str(i) for i in scan.store.indices)}]"


def _reason(scan: Scan, vl: int, why: str) -> str:
    steps = int(math.log2(vl))
    note = (f"scan {_shown(scan)} ({scan.kind}): {steps} shift-and-{scan.kind} steps over "
            f"{vl} lanes ({why}), the running total carried between vectors")
    if scan.is_float:
        note += "; float terms regrouped: results may differ from the serial order in rounding"
    return note


class _ScanPlan:
    """The rewrite of one scan loop in blocks of VL iterations (see the module doc)."""

    def __init__(self, loop: For, scan: Scan, vl: int):
        self.loop, self.scan, self.vl = loop, scan, vl
        self.dtype = loop.loop_var.dtype
        count = loop.extent
        self.count = op.max(count, op.const(0, self.dtype))  # a negative extent runs nothing
        self.note = f"scan of {scan.store.buffer.name}"

    def rewrite(self) -> Stmt:
        s, vl = self.scan, self.vl
        name = s.store.buffer.name
        block = local_buffer(f"{name}_scan", s.dtype, vl)
        carry = local_buffer(f"{name}_carry", s.dtype, 1)
        first = substitute(s.previous, {self.loop.loop_var: self.loop.min})
        outer = Var(f"{self.loop.loop_var.name}_outer", self.dtype)
        base = op.add(self.loop.min, op.mul(outer, op.const(vl, self.dtype)))
        steps = [self._f_vector(block, base), *self._tree(block),
                 *self._finish(block, carry, base)]
        full = op.floordiv(self.count, op.const(vl, self.dtype))
        parts = [BufferStore(carry, first, [0]), serial_loop(outer, full, SeqStmt(steps))]
        body: Stmt = SeqStmt([p for p in parts if p is not None])
        body = allocate(carry, allocate(block, body))
        return SeqStmt([body, *self._tail(full)])

    def _lanes(self) -> Ramp:
        return Ramp(op.const(0, "int32"), 1, self.vl)

    def _f_vector(self, block, base: PrimExpr) -> For:
        """``for j in vectorized(VL): T[j] = f(base + j)``: VectorizeLoop widens f."""
        j = Var(self.loop.loop_var.name, self.dtype)
        f = substitute(self.scan.value, {self.loop.loop_var: op.add(base, j)})
        note_loop_copy(j, self.loop.loop_var, op.add(base, j))  # remarks fold into the loop's
        j32 = j if j.dtype == "int32" else op.cast("int32", j)
        return For(j, op.const(0, self.dtype), op.const(self.vl, self.dtype), ForKind.VECTORIZED,
                   BufferStore(block, f, [j32]), {STRIP_MINED: self.note})

    def _tree(self, block) -> list[Stmt]:
        """log2(VL) steps: ``T = T OP (T shifted up by k lanes, identity shifted in)``."""
        s, vl, lanes = self.scan, self.vl, self._lanes()
        out, k = [], 1
        while k < vl:
            now = BufferLoad(block, [lanes])
            shifted = Shuffle([Broadcast(s.identity(), vl), now],
                              [0 if j < k else vl + j - k for j in range(vl)])
            out.append(BufferStore(block, s.combine(now, shifted), [lanes]))
            k *= 2
        return out

    def _finish(self, block, carry, base: PrimExpr) -> list[Stmt]:
        """Combine the carried total, store the VL elements, carry the last one on."""
        s, vl, lanes = self.scan, self.vl, self._lanes()
        total = s.combine(Broadcast(BufferLoad(carry, [0]), vl), BufferLoad(block, [lanes]))
        *fixed, last = s.store.indices
        start = substitute(last, {self.loop.loop_var: base})
        where = [*fixed, Ramp(start, 1, vl)]
        return [BufferStore(block, total, [lanes]),
                BufferStore(s.store.buffer, BufferLoad(block, [lanes]), where),
                BufferStore(carry, BufferLoad(block, [op.const(vl - 1, "int32")]), [0])]

    def _tail(self, full: PrimExpr) -> list[Stmt]:
        """The last ``count % VL`` iterations as the serial loop they were."""
        rest = op.floormod(self.count, op.const(self.vl, self.dtype))
        if isinstance(rest, IntImm) and rest.value == 0:
            return []
        done = op.mul(full, op.const(self.vl, self.dtype))
        return [For(self.loop.loop_var, op.add(self.loop.min, done), rest, ForKind.SERIAL,
                    self.loop.body)]


def vectorize_scans(func: PrimFunc, name: str = "main", ordered: bool = False) -> PrimFunc:
    """``func`` with the scans of its vectorized loops rewritten (see the module doc)."""
    if function_has_sve(func):
        return func
    body = _ScanRewriter(name, register_bits(func), ordered)(func.body)
    return func if body is func.body else func.with_body(body)


def VectorizeScans() -> PrimFuncPass:
    """The pass turning ``B[i] = B[i - 1] OP f(i)`` in vectorized loops into in-register scans.

    Config ``tir.vectorize.ordered_reductions`` keeps float sum and product scans serial;
    ``tir.disable_vectorize`` turns the pass off.
    """

    def transform_function(func: PrimFunc, mod: IRModule, ctx: PassContext) -> PrimFunc:
        options = VectorOptions.from_context(ctx)
        if options.disable_vectorize:
            return func
        return vectorize_scans(func, function_name(mod, func), options.ordered_reductions)

    return prim_func_pass(transform_function, opt_level=0, name="tir.VectorizeScans")


__all__ = ["NOT_A_SCAN", "VectorizeScans", "vectorize_scans"]
