"""Buffer access emitters of ``CodeGenLLVM``: loads, stores and allocations.

Multi-dimensional indices are linearized here (row-major, or with the
buffer's explicit strides, plus ``elem_offset``), as TIR expressions so that
constants fold and the analyzer can tell the alignment. Then:

- a ramp with stride 1 is one vector load/store, aligned as far as the
  offset's modular set and the base pointer's alignment allow;
- any other vector index is a gather / scatter (gather.py: the hardware
  instruction or scalar loads, by the target's gather policy);
- a predicate makes it ``llvm.masked.load`` / ``store``.
"""

from __future__ import annotations

import math

from llvmlite import ir

from tir import dtype as dt
from tir import op as tir_op
from tir.arith import Analyzer
from tir.expr import Add, Broadcast, BufferLoad, Call, IntImm, Mul, Ramp, Sub
from tir.functor import post_order_visit
from tir.stmt import negative_extent_message

from ..ir_types import (
    I1,
    I32,
    I64,
    MAX_VSCALE,
    PTR,
    ScalableVectorType,
    element_bytes,
    int_constant,
    memory_type,
)
from .expr import zero

#: Allocations of at most this many bytes, with a constant size, live on the
#: stack (an ``alloca`` in the entry block); bigger or symbolic ones on the heap.
STACK_LIMIT_BYTES = 4096
#: Alignment of memory we allocate ourselves (stack and heap).
ALLOC_ALIGN = 64
#: The most a scalable stack slot may be aligned to (AArch64 SVE stack frames).
SCALABLE_STACK_ALIGN = 16


class Access:
    """A linearized buffer access: a scalar offset plus a vector part."""

    __slots__ = ("base", "index_dtype", "lanes", "stride", "vector")

    def __init__(self, base, stride=None, index_dtype="int32", vector=None):
        self.base = base        # scalar offset (elements), a TIR expression
        self.stride = stride    # element stride of a ramp access, or None
        self.index_dtype = index_dtype  # dtype of the last index (its lanes)
        self.lanes = dt.lanes_of(index_dtype)  # lanes (the vscale multiplier if scalable)
        self.vector = vector    # full vector of offsets (non-ramp vector index)

    @property
    def contiguous(self) -> bool:
        return self.lanes == 1 or isinstance(self.stride, IntImm) and self.stride.value == 1


def _indices(values) -> ir.Constant:
    values = list(values)
    return ir.Constant(ir.VectorType(I32, len(values)), values)


def _reads_memory(e) -> bool:
    found = []
    post_order_visit(e, lambda n: found.append(n) if isinstance(n, BufferLoad) else None)
    return bool(found)


def linearize(buffer, indices) -> Access:
    """The element offset of ``buffer[indices]`` from the buffer's data pointer."""
    strides = list(buffer.strides) or _row_major(buffer.shape)
    if any(dt.lanes_of(i.dtype) > 1 for i in indices[:-1]):
        return _linearize_any_dim(buffer, indices, strides)
    offset = buffer.elem_offset
    for index, stride in zip(indices[:-1], strides[:-1]):
        offset = tir_op.add(offset, tir_op.mul(index, stride))
    last, stride = indices[-1], strides[-1]
    if isinstance(last, Ramp):
        base = tir_op.add(offset, tir_op.mul(last.base, stride))
        return Access(base, tir_op.mul(last.stride, stride), last.dtype)
    if dt.lanes_of(last.dtype) == 1:
        return Access(tir_op.add(offset, tir_op.mul(last, stride)))
    vector = tir_op.add(tir_op.mul(last, stride), offset)
    return Access(offset, None, last.dtype, vector)


def _linearize_any_dim(buffer, indices, strides) -> Access:
    """A vector index in a dimension other than the last (transfer-style access).

    Lane ``k``'s offset is ``elem_offset + sum(index_d[k] * stride_d)``, a scalar
    index adding the same to every lane (a broadcast dimension). When every vector
    index is a ramp (or a broadcast) the lanes still step evenly: a ramp access
    like a last-index one (``A[Ramp(r, 1, L), c]``: stride = the row length);
    otherwise ``vector`` holds the full per-lane offsets.
    """
    offset = buffer.elem_offset
    step, terms, index_dtype = None, [], None
    for index, stride in zip(indices, strides):
        if dt.lanes_of(index.dtype) == 1:
            offset = tir_op.add(offset, tir_op.mul(index, stride))
            continue
        index_dtype = index_dtype or index.dtype
        if isinstance(index, Broadcast):
            offset = tir_op.add(offset, tir_op.mul(index.value, stride))
        elif isinstance(index, Ramp):
            offset = tir_op.add(offset, tir_op.mul(index.base, stride))
            part = tir_op.mul(index.stride, stride)
            step = part if step is None else tir_op.add(step, part)
        else:
            terms.append(tir_op.mul(index, stride))
    if not terms:
        if step is None:  # only broadcasts: every lane reads one element
            step = IntImm(offset.dtype, 0)
        return Access(offset, step, index_dtype)
    vector = terms[0]
    for term in terms[1:]:
        vector = tir_op.add(vector, term)
    if step is not None:  # the ramps' part, from lane 0 (which ``offset`` holds)
        lanes = dt.lanes_of(index_dtype)
        vector = tir_op.add(vector, Ramp(IntImm(step.dtype, 0), step, lanes))
    return Access(offset, None, index_dtype, tir_op.add(vector, offset))


def _row_major(shape) -> list:
    strides, running = [], None
    for dim in reversed(shape):
        strides.append(running if running is not None else IntImm(dim.dtype, 1))
        running = dim if running is None else tir_op.mul(running, dim)
    return strides[::-1]


def _vscale_factor(expr) -> int | None:
    """``c`` when ``expr`` is ``c * vscale()`` (factors in any order), else None."""
    if isinstance(expr, Call) and expr.op == "tir.vscale":
        return 1
    if isinstance(expr, Mul):
        for a, b in ((expr.a, expr.b), (expr.b, expr.a)):
            if isinstance(a, IntImm):
                inner = _vscale_factor(b)
                return None if inner is None else a.value * inner
    return None


def _constant_count(extents) -> tuple[int, bool] | None:
    """``(c, False)`` for ``c`` elements, ``(c, True)`` for ``c * vscale``; None if symbolic."""
    count, per_vscale = 1, False
    for e in extents:
        if isinstance(e, IntImm):
            count *= e.value
            continue
        factor = _vscale_factor(e)
        if factor is None or per_vscale:
            return None
        count, per_vscale = count * factor, True
    return count, per_vscale


#: int32 index arithmetic that ``index64`` computes in i64.
_WIDE_ARITH = {Add: "add", Sub: "sub", Mul: "mul"}


def _pow2_factor(value: int) -> int:
    """The largest power of two dividing ``value`` (huge for 0, which every power divides)."""
    return value & -value if value else 1 << 30


class MemoryCodegen:
    """Mixin of ``CodeGenLLVM``: ``BufferLoad``, ``BufferStore``, ``Allocate``."""

    builder: ir.IRBuilder
    analyzer: Analyzer

    # ------------------------------------------------------------ addresses

    def alignment(self, buffer, access: Access) -> int:
        """Bytes of alignment of the access: modular set of the offset, capped by the base.

        Always a power of two (LLVM rejects anything else): a 3-lane float32
        access is 12 bytes, but its address is only known to be a multiple of 4.
        """
        lane = element_bytes(buffer.dtype)
        step = lane * dt.lanes_of(buffer.dtype)  # bytes per index (a vector-dtype buffer: more)
        mod = self.analyzer.modular_set(access.base)
        offset_align = _pow2_factor(math.gcd(mod.coeff, mod.base) * step)
        base_align = self.base_alignment(buffer.data)
        size_align = _pow2_factor(step * access.lanes)  # claim no more than the access needs
        return max(lane, min(offset_align, base_align, size_align))

    def index64(self, expr):
        """An index expression as i64, for a GEP.

        An int32 index computes its sums and products in i64 (``nsw``: TIR leaves their
        signed overflow undefined, so the values agree wherever the int32 ones are
        defined), its other terms (vars, divisions, loads) in int32, each sign-extended.
        LLVM then has no sign extension of an int32 sum to widen: on a tuned matmul
        that saved a fifth of its time (IndVarSimplify, LSR), for the same machine code.
        """
        if expr.dtype == "int32":
            return self._index64(expr)
        value = self.visit_expr(expr)
        ty = value.type
        width = ty.element.width if isinstance(ty, ir.VectorType) else ty.width
        if width == 64:
            return value
        wide = ty.__class__(I64, ty.count) if isinstance(ty, ir.VectorType) else I64
        return self.builder.sext(value, wide)

    def _index64(self, expr):
        if isinstance(expr, IntImm):
            return ir.Constant(I64, expr.value)
        name = _WIDE_ARITH.get(type(expr))
        if name is None:
            return self.builder.sext(self.visit_expr(expr), I64)
        a, b = self._index64(expr.a), self._index64(expr.b)
        return getattr(self.builder, name)(a, b, flags=("nsw",))

    def _pointer(self, buffer, offset_expr):
        ptr = self.lookup(buffer.data)
        elem = memory_type(buffer.dtype)
        if isinstance(offset_expr, IntImm) and offset_expr.value == 0:
            return ptr
        t = dt.DataType(buffer.dtype)
        if t.lanes & (t.lanes - 1) and not t.is_scalable:
            # LLVM pads a <3 x float> to 16 bytes in a GEP, but a float32x3 buffer packs
            # them 12 bytes apart (as NumPy's (n, 3) arrays): step over scalars instead.
            elem = memory_type(str(t.element_of))
            offset_expr = tir_op.mul(tir_op.cast("int64", offset_expr), t.lanes)
        return self.builder.gep(ptr, [self.index64(offset_expr)], inbounds=True,
                                source_etype=elem)

    def element_address(self, buffer, indices):
        """The address of ``buffer[indices]`` (a scalar access)."""
        return self._pointer(buffer, linearize(buffer, indices).base)

    # ------------------------------------------------------------ loads

    def visit_buffer_load(self, op):
        access = linearize(op.buffer, op.indices)
        mem_ty = memory_type(op.dtype)
        if access.contiguous:
            ptr = self._pointer(op.buffer, access.base)
            align = self.alignment(op.buffer, access)
            if op.predicate is None:
                value = self.builder.load(ptr, typ=mem_ty, align=align)
            else:
                value = self._masked_load(ptr, mem_ty, align, op.predicate)
        else:
            value = self._planned_load(op.buffer, access, op.predicate)
            if value is None:
                value = self._gather(op.buffer, access, mem_ty, op.predicate)
        return self.from_memory(value, op.dtype)

    def _mask(self, predicate, access: Access):
        if predicate is None:
            all_true = "bool" + access.index_dtype[len(dt.element_of(access.index_dtype)):]
            return self.broadcast(ir.Constant(I1, 1), all_true)
        return self.visit_expr(predicate)

    # %v = call <n x T> @llvm.masked.load(ptr %p, i32 align, <n x i1> %mask, <n x T> zeroes)
    def _masked_load(self, ptr, ty, align: int, predicate):
        if not isinstance(ty, ir.VectorType):
            return self._guarded_scalar_load(ptr, ty, align, predicate)
        mask_ty = ty.__class__(I1, ty.count)
        fn = self.declare_intrinsic("llvm.masked.load", ty, [PTR, I32, mask_ty, ty],
                                    overloads=[ty, PTR])
        mask = self.visit_expr(predicate)
        return self.builder.call(fn, [ptr, ir.Constant(I32, align), mask, zero(ty)])

    def _guarded_scalar_load(self, ptr, ty, align: int, predicate):
        cond = self.visit_expr(predicate)
        start = self.builder.block
        with self.builder.if_then(cond):
            loaded, block = self.builder.load(ptr, typ=ty, align=align), self.builder.block
        phi = self.builder.phi(ty)
        phi.add_incoming(loaded, block)
        phi.add_incoming(zero(ty), start)
        return phi

    def from_memory(self, value, dtype: str):
        """A loaded value in register form (bytes to ``i1`` for bool)."""
        if dt.DataType(dtype).is_bool:
            return self.builder.icmp_unsigned("!=", value, zero(value.type))
        return value

    def to_memory(self, value, dtype: str):
        """A value in memory form (``i1`` to bytes for bool)."""
        if dt.DataType(dtype).is_bool:
            return self.builder.zext(value, memory_type(dtype))
        return value

    # ------------------------------------------------------------ stores

    def visit_buffer_store(self, op):
        access = linearize(op.buffer, op.indices)
        value = self.to_memory(self.visit_expr(op.value), op.value.dtype)
        if access.contiguous:
            ptr = self._pointer(op.buffer, access.base)
            align = self.alignment(op.buffer, access)
            if op.predicate is None:
                self.builder.store(value, ptr, align=align)
            else:
                self._masked_store(value, ptr, align, op.predicate)
        elif not self._planned_store(op.buffer, access, value, op.predicate):
            self._scatter(op.buffer, access, value, op.predicate)

    def _masked_store(self, value, ptr, align: int, predicate):
        ty = value.type
        if not isinstance(ty, ir.VectorType):
            with self.builder.if_then(self.visit_expr(predicate)):
                self.builder.store(value, ptr, align=align)
            return
        mask_ty = ty.__class__(I1, ty.count)
        fn = self.declare_intrinsic("llvm.masked.store", ir.VoidType(), [ty, PTR, I32, mask_ty],
                                    overloads=[ty, PTR])
        value = self._truncation_barrier(value, _reads_memory(predicate))
        self.builder.call(fn, [value, ptr, ir.Constant(I32, align), self.visit_expr(predicate)])

    # LLVM 22 on x86 miscompiles a masked store of a truncated integer vector whose mask
    # folds to one active lane: it becomes a scalar store at the *source* width, so
    #   %t = trunc <8 x i64> %x to <8 x i32>
    #   call @llvm.masked.store.v8i32(%t, %out, 4, <1, 0, 0, 0, 0, 0, 0, 0>)
    # writes 8 bytes (lane 0 and, wrongly, the element after it). A constant extent's
    # tail, or an if-converted condition on loop indices, can make such masks (after
    # unrolling). An empty inline asm between the value and the store hides the trunc
    # from that fold (freeze or a select does not survive instcombine); only integer
    # values narrower than 64 bits stored under a mask that reads no memory (a mask read
    # from data is never a constant) need it. Reproducer: test_llvm_workarounds.py.
    def _truncation_barrier(self, value, mask_reads_memory: bool):
        elem = value.type.element
        if (not self.target.arch.startswith("x86") or not isinstance(elem, ir.IntType)
                or elem.width >= 64 or mask_reads_memory):
            return value
        lanes = value.type.count
        # Whole registers only: 'v' has no class for a 64-bit <8 x i8> (LLVM: "couldn't
        # allocate output register"), so a short value is padded with copies of its lanes.
        width = max(1, self.target.vector_width_bits // max(8, elem.width))
        parts = []
        for start in range(0, lanes, width):  # an asm operand is one register
            part = self._lanes(value, [min(k, lanes - 1) for k in range(start, start + width)])
            ftype = ir.FunctionType(part.type, [part.type])
            parts.append(self.builder.asm(ftype, "", "=v,0", [part], side_effect=False))
        while len(parts) > 1:  # concatenate pairwise, then keep the first ``lanes`` lanes
            if len(parts) % 2:
                parts.append(parts[-1])
            parts = [self.builder.shuffle_vector(a, b, _indices(range(2 * a.type.count)))
                     for a, b in zip(parts[0::2], parts[1::2])]
        return parts[0] if parts[0].type.count == lanes else self._lanes(parts[0], range(lanes))

    def _lanes(self, vec, indices):
        return self.builder.shuffle_vector(vec, vec, _indices(indices))

    # ------------------------------------------------------------ allocations

    # An allocation of a vscale-dependent size, constant apart from vscale (the
    # vectorizer's per-lane copies and accumulators: `k * vscale()` elements, or
    # elements of a scalable dtype), is one scalable alloca in the entry block:
    #   %acc = alloca <vscale x (count) x T>, align 64
    # Whole-vector loads and stores of it are promoted to registers by LLVM.
    def visit_allocate(self, op):
        size = element_bytes(op.dtype) * dt.lanes_of(op.dtype)  # bytes per element at vscale 1
        scalable = dt.DataType(op.dtype).is_scalable
        count = _constant_count(op.extents)
        if count is not None and not (scalable and count[1]):
            elements, per_vscale = count
            elem, slots = memory_type(op.dtype), max(elements, 1)
            align = ALLOC_ALIGN
            if per_vscale or scalable:  # a <vscale x lanes x T> holding them all
                lanes = elements * dt.lanes_of(op.dtype)
                elem, slots = ScalableVectorType(memory_type(dt.element_of(op.dtype)), lanes), 1
                size *= MAX_VSCALE
                # LLVM aborts on a scalable stack slot aligned to more than 16 bytes
                # (one that stays in memory, e.g. updated by masked stores).
                align = SCALABLE_STACK_ALIGN
            if elements * size <= STACK_LIMIT_BYTES:
                ptr = self.entry_alloca(elem, slots, align=align, name=op.buffer_var.name)
                with self.bound(op.buffer_var, ptr, align=align):
                    self.visit_stmt(op.body)
                return
        self._check_extents(op)
        count = tir_op.cast("int64", op.extents[0])
        for e in op.extents[1:]:  # in int64: a large allocation must not overflow int32
            count = tir_op.mul(count, tir_op.cast("int64", e))
        if scalable:  # an element holds `lanes * vscale` lanes
            count = tir_op.mul(count, tir_op.cast("int64", tir_op.vscale()))
        self._heap_allocate(op, count, size)

    # A symbolic extent may be negative at run time; aligned_alloc would get a byte
    # count that wraps (to 0 for a small one: a block the body then overruns), so:
    #   %neg = icmp slt i32 %n, 0 ; br %neg -> ret <the code of "allocate 'T': ... negative">
    def _check_extents(self, op):
        for dim, extent in enumerate(op.extents):
            if type(extent) is IntImm or not dt.DataType(extent.dtype).is_int:
                continue  # constants were checked when built; unsigned ones are never negative
            if self.analyzer.can_prove(extent >= 0):  # a size var, vscale(), ...
                continue
            value = self.visit_expr(extent)
            negative = self.builder.icmp_signed("<", value, ir.Constant(value.type, 0))
            code = self.error_code(negative_extent_message(op.buffer_var.name, dim, extent))
            with self.builder.if_then(negative, likely=False):
                self.builder.ret(int_constant(I32, code))

    # %p = call ptr @aligned_alloc(i64 64, i64 round_up(bytes, 64)) ; null -> return -1
    # ... body ... ; call void @free(ptr %p)
    def _heap_allocate(self, op, count, size: int):
        nbytes = self.builder.mul(self.index64(count), int_constant(I64, size))
        rounded = self.builder.and_(self.builder.add(nbytes, int_constant(I64, ALLOC_ALIGN - 1)),
                                    int_constant(I64, -ALLOC_ALIGN))
        alloc = self.declare_c("aligned_alloc", PTR, [I64, I64])
        ptr = self.builder.call(alloc, [int_constant(I64, ALLOC_ALIGN), rounded])
        failed = self.builder.icmp_unsigned("==", ptr, ir.Constant(PTR, None))
        with self.builder.if_then(failed, likely=False):
            self.builder.ret(int_constant(I32, self.OUT_OF_MEMORY))
        with self.bound(op.buffer_var, ptr, align=ALLOC_ALIGN):
            self.visit_stmt(op.body)
        self.builder.call(self.declare_c("free", ir.VoidType(), [PTR]), [ptr])

