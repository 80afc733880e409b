"""``ByteDotAccumulation``: uint8 x int8 products summed into a lane-free accumulator use
the CPU's byte dot-product instruction.

A vectorized ``s = s + int32(a[i]) * int32(b[i])`` (a uint8, b int8) gives, on a
512-bit target::

    S_acc[0:64] = S_acc[0:64] + int32x64(A[r]) * int32x64(B[r])
  ->
    S_acc[0:16] = call_llvm_pure_intrin("int32x16", "llvm.x86.avx512.vpdpbusd.512",
                                        S_acc[0:16], reinterpret(A[r]), reinterpret(B[r]))

One ``vpdpbusd`` adds 64 products where LLVM's own code for the update widens both
operands to int32 (4 ``vpmovzxbd`` + 4 ``vpmovsxbd``) and adds one product per lane
with ``vpdpwssd``. Why the rewrite keeps the result bit for bit is
analysis/byte_dot.py's argument (a lane-free accumulator, wrapping int32 sums).
The instruction: ``vpdpbusd`` on zmm with AVX512-VNNI (and 512-bit vectors), on ymm
with AVX-VNNI or AVX512-VNNI + AVX512-VL; ``Target.has_feature`` answers. Other
targets, and other products, keep the update as it is: there LLVM already adds
int16 pairs with ``vpmaddwd`` (``vpdpwssd`` with VNNI) for int8 x int8, uint8 x
uint8 and int16 x int16 sums, which is exact too. Config
``tir.vectorize.dot_instructions`` (default True) turns the pass off. Not one of
TVM's passes; ``codegen.build``'s pipeline runs it after ``ContiguousAccumulation``.
"""

from __future__ import annotations

from target.target import Target
from target.tensor_intrinsics import vpdpbusd_bytes
from tir import dtype as dt
from tir import op
from tir.expr import BufferLoad, PrimExpr, Ramp, Shuffle
from tir.functor import StmtExprMutator, deep_recursion
from tir.op_intrin import call_llvm_pure_intrin
from tir.stmt import BufferStore, SeqStmt, Stmt

from ..pass_base import PrimFuncPass, prim_func_pass
from ..pass_context import PassContext
from .analysis.byte_dot import ByteDot, byte_dot
from .analysis.lane_free import lane_free_accumulators
from .options import DISABLE_VECTORIZE, function_target

#: Config key (transform/config.py) that turns the pass off.
DOT_INSTRUCTIONS = "tir.vectorize.dot_instructions"

#: Bytes per instruction -> the LLVM intrinsic (the 256-bit one is VEX-encoded with AVX-VNNI).
_VPDPBUSD = {64: "llvm.x86.avx512.vpdpbusd.512", 32: "llvm.x86.avx512.vpdpbusd.256"}


def _part(e: PrimExpr, start: int, lanes: int) -> PrimExpr:
    """Lanes ``start .. start + lanes`` of the vector ``e``."""
    if dt.lanes_of(e.dtype) == lanes:
        return e
    if isinstance(e, BufferLoad) and e.predicate is None and len(e.indices) == 1:
        ramp = e.indices[0]
        if isinstance(ramp, Ramp):
            return BufferLoad(e.buffer, [Ramp(ramp.base + ramp.stride * start, ramp.stride,
                                              lanes)])
    return Shuffle([e], list(range(start, start + lanes)))


def dot_stores(store: BufferStore, dot: ByteDot, width: int) -> list[BufferStore]:
    """``store`` (described by ``dot``) as one ``vpdpbusd`` per ``width`` bytes of products,
    each into the next ``width / 4`` lanes of the accumulator's slice."""
    out, quads = [], width // 4
    for k in range(dot.lanes // width):
        lanes = Ramp(op.const(dot.start + k * quads, "int32"), op.const(1, "int32"), quads)
        acc = BufferLoad(store.buffer, [lanes])
        x = op.reinterpret(f"int32x{quads}", _part(dot.unsigned, k * width, width))
        y = op.reinterpret(f"int32x{quads}", _part(dot.signed, k * width, width))
        call = call_llvm_pure_intrin(f"int32x{quads}", _VPDPBUSD[width], op.const(3, "uint32"),
                                     acc, x, y)
        out.append(BufferStore(store.buffer, call, [lanes]))
    return out


class _UseByteDots(StmtExprMutator):
    def __init__(self, lane_free: set[int], widths: tuple[int, ...]):
        super().__init__()
        self.lane_free = lane_free
        self.widths = widths

    def visit_buffer_store(self, stmt: BufferStore) -> Stmt:
        dot = byte_dot(stmt, self.lane_free)
        if dot is None:
            return stmt
        width = next((w for w in self.widths if dot.lanes % w == 0), None)
        if width is None:
            return stmt
        stores = dot_stores(stmt, dot, width)
        return stores[0] if len(stores) == 1 else SeqStmt(stores)


def byte_dot_accumulation(stmt: Stmt, target: Target) -> Stmt:
    """``stmt`` with its byte dot updates on ``vpdpbusd`` (the same object when none)."""
    widths = vpdpbusd_bytes(target)
    if not widths:
        return stmt
    lane_free = lane_free_accumulators(stmt)
    if not lane_free:
        return stmt
    with deep_recursion():
        return _UseByteDots(lane_free, widths).visit_stmt(stmt)


def ByteDotAccumulation() -> PrimFuncPass:
    """uint8 x int8 products summed into a lane-free accumulator -> ``vpdpbusd``."""

    def transform_function(func, mod, ctx):
        config = PassContext.current().config
        if config.get(DISABLE_VECTORIZE) or not config.get(DOT_INSTRUCTIONS):
            return func
        target = function_target(func)
        target = Target("llvm" if target is None else str(target))
        body = byte_dot_accumulation(func.body, target)
        return func if body is func.body else func.with_body(body)

    return prim_func_pass(transform_function, opt_level=0, name="tir.ByteDotAccumulation")
