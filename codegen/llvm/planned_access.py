"""Strided, reversed and transposed vector accesses as contiguous chunks plus shuffles.

``access_plan.py`` decides which chunks cover the lanes of an access; this
mixin of ``CodeGenLLVM`` emits them::

    A[Ramp(b, 2, 8)]  (float32, 512-bit registers)
      %c0 = load <8 x float>, ptr A + b          ; elements b .. b+7
      %c1 = load <8 x float>, ptr A + b + 7      ; elements b+7 .. b+14
      %v  = shufflevector %c0, %c1, <0, 2, 4, 6, 9, 11, 13, 15>

A store writes each chunk with the lanes that land in it (the last lane in
serial order where two lanes write one element); a chunk not written whole
is a masked store. A predicate becomes the chunks' masks, shuffled from the
predicate's lanes. ``None`` from ``_planned_load`` / ``False`` from
``_planned_store`` means "no plan": the caller emits a gather or scatter.
"""

from __future__ import annotations

from llvmlite import ir

from tir import dtype as dt
from tir import op as tir_op
from tir.expr import IntImm, Ramp

from ..ir_types import I1, I32, PTR, element_bytes, memory_type
from .access_plan import Plan, plan_access
from .memory import Access, _reads_memory
from .shuffle_tree import shuffle_tree
from .transpose_network import register_transpose

#: The dtype chunk offsets are computed in (a GEP index is 64-bit anyway).
OFFSET_DTYPE = "int64"


class PlannedAccessCodegen:
    """Mixin of ``CodeGenLLVM``: vector accesses with a chunk plan (access_plan.py)."""

    builder: ir.IRBuilder

    def _access_plan(self, buffer, access, store: bool) -> Plan | None:
        if dt.lanes_of(buffer.dtype) > 1 or dt.DataType(access.index_dtype).is_scalable:
            return None
        offsets = access.vector
        if offsets is None:
            base, stride = access.base, access.stride
            if base.dtype != stride.dtype:
                base, stride = tir_op.cast("int64", base), tir_op.cast("int64", stride)
            offsets = Ramp(base, stride, access.lanes)
        bits = max(8, element_bytes(buffer.dtype) * 8)
        width = self.target.vector_width_bits
        native = max(1, width // bits)
        return plan_access(offsets, native, store, _cheap_masked_loads(self.target, width, bits))

    def _chunk_offset(self, plan: Plan, group: int, start: int):
        sym = plan.groups[group].form.symbolic_expr(OFFSET_DTYPE)
        return tir_op.add(sym, IntImm(OFFSET_DTYPE, start))

    def _chunk_align(self, buffer, offset, width: int) -> int:
        return self.alignment(buffer, Access(offset, IntImm(OFFSET_DTYPE, 1),
                                             dt.with_lanes(OFFSET_DTYPE, width)))

    def _inside(self, buffer, offset) -> bool:
        """Whether element ``offset`` provably lies in ``buffer`` (a compact buffer's
        shape; the codegen's analyzer knows the enclosing loops' ranges): then a chunk
        ending there needs no mask, as Halide's dense loads of a buffer it knows."""
        if buffer.strides:
            return False
        end = tir_op.cast(OFFSET_DTYPE, buffer.elem_offset)  # one past the last element
        extent = IntImm(OFFSET_DTYPE, 1)
        for dim in buffer.shape:
            extent = tir_op.mul(extent, tir_op.cast(OFFSET_DTYPE, dim))
        return self.analyzer.can_prove(tir_op.less(offset, tir_op.add(end, extent)))

    def _chunk_mask(self, plan: Plan, lane_of_element: list[int], predicate):
        """The ``<w x i1>`` mask of a chunk: each element takes its lane's predicate bit."""
        if predicate is None:
            return ir.Constant(ir.VectorType(I1, len(lane_of_element)),
                               [int(lane >= 0) for lane in lane_of_element])
        pred = self.visit_expr(predicate)
        off = ir.Constant(I1, 0)
        picks = [lane if lane >= 0 else plan.lanes for lane in lane_of_element]
        return shuffle_tree(self.builder, [pred, off], picks)

    # ------------------------------------------------------------ loads

    def _planned_load(self, buffer, access, predicate):
        """The loaded vector (memory form), or None when the access has no plan."""
        plan = self._access_plan(buffer, access, store=False)
        if plan is None or (predicate is not None and plan.has_duplicates()):
            return None
        elem = memory_type(buffer.dtype)
        parts = []
        for g, group in enumerate(plan.groups):
            for chunk in group.chunks:
                offset = self._chunk_offset(plan, g, chunk.start)
                ptr = self._pointer(buffer, offset)
                align = self._chunk_align(buffer, offset, chunk.width)
                ty = elem if chunk.width == 1 else ir.VectorType(elem, chunk.width)
                if predicate is None and (not chunk.masked or self._inside(
                        buffer, tir_op.add(offset, IntImm(OFFSET_DTYPE, chunk.width - 1)))):
                    parts.append(self.builder.load(ptr, typ=ty, align=align))
                    continue
                if predicate is None:  # elements past the group's last stay untouched
                    mask = ir.Constant(ir.VectorType(I1, chunk.width),
                                       [int(chunk.start + e <= chunk.last)
                                        for e in range(chunk.width)])
                    parts.append(self._masked_vector_load(ptr, ty, align, mask))
                    continue
                lanes = plan.element_lanes(g, chunk)
                if chunk.width == 1:
                    ty = ir.VectorType(elem, 1)
                mask = self._chunk_mask(plan, lanes, predicate)
                parts.append(self._masked_vector_load(ptr, ty, align, mask))
        if len(parts) > 1:
            self.shuffled_loads += 1  # see keep_rolled
        picks = plan.load_picks()
        if _ymm_rows(self.target):
            tile = register_transpose(self.builder, parts, picks)
            if tile is not None:
                return tile
        return shuffle_tree(self.builder, parts, picks)

    def _masked_vector_load(self, ptr, ty, align: int, mask):
        mask_ty = ir.VectorType(I1, ty.count)
        fn = self.declare_intrinsic("llvm.masked.load", ty, [PTR, I32, mask_ty, ty],
                                    overloads=[ty, PTR])
        return self.builder.call(fn, [ptr, ir.Constant(I32, align), mask,
                                      ir.Constant(ty, None)])

    # ------------------------------------------------------------ stores

    def _planned_store(self, buffer, access, value, predicate) -> bool:
        """Store ``value`` (memory form) chunk by chunk; False when there is no plan."""
        plan = self._access_plan(buffer, access, store=True)
        if plan is None or (predicate is not None and plan.has_duplicates()):
            return False
        if not (plan.groups_in_lane_order() or self._groups_disjoint(plan)):
            return False  # groups may alias at run time: only a scatter keeps lane order
        for g, group in enumerate(plan.groups):
            for chunk in group.chunks:
                picks = plan.element_lanes(g, chunk)
                offset = self._chunk_offset(plan, g, chunk.start)
                ptr = self._pointer(buffer, offset)
                align = self._chunk_align(buffer, offset, chunk.width)
                if predicate is None and all(p >= 0 for p in picks):
                    self.builder.store(shuffle_tree(self.builder, [value], picks), ptr,
                                       align=align)
                    continue
                if predicate is None and _slow_masked_stores(self.target):
                    self._element_stores(buffer, value, ptr, picks)
                    continue
                part = shuffle_tree(self.builder, [value], picks)
                mask = self._chunk_mask(plan, picks, predicate)
                self._masked_vector_store(part, ptr, align, mask, predicate)
        return True

    def _groups_disjoint(self, plan: Plan) -> bool:
        """Whether no two groups can write one element, for any values of their
        symbolic parts (the analyzer must prove one range lies past the other)."""
        if len(plan.groups) > 16:
            return False
        ranges = []
        for g, group in enumerate(plan.groups):
            offs = [plan.offsets[lane] for lane in group.lanes]
            ranges.append((group.form.symbolic_expr(OFFSET_DTYPE), min(offs), max(offs)))
        for k, (sym_a, lo_a, hi_a) in enumerate(ranges):
            for sym_b, lo_b, hi_b in ranges[k + 1:]:
                a_after = tir_op.greater(tir_op.add(sym_a, IntImm(OFFSET_DTYPE, lo_a)),
                                         tir_op.add(sym_b, IntImm(OFFSET_DTYPE, hi_b)))
                b_after = tir_op.greater(tir_op.add(sym_b, IntImm(OFFSET_DTYPE, lo_b)),
                                         tir_op.add(sym_a, IntImm(OFFSET_DTYPE, hi_a)))
                if not (self.analyzer.can_prove(a_after) or self.analyzer.can_prove(b_after)):
                    return False
        return True

    def _element_stores(self, buffer, value, ptr, picks: list[int]) -> None:
        """The chunk at ``ptr`` written element by element: lane ``picks[k]`` of ``value``
        to element ``k``, for the elements some lane writes (``picks[k] >= 0``)."""
        elem = memory_type(buffer.dtype)
        align = element_bytes(buffer.dtype)
        for k, lane in enumerate(picks):
            if lane < 0:
                continue
            at = self.builder.gep(ptr, [ir.Constant(I32, k)], inbounds=True,
                                  source_etype=elem)
            self.builder.store(self.builder.extract_element(value, ir.Constant(I32, lane)),
                               at, align=align)

    def _masked_vector_store(self, part, ptr, align: int, mask, predicate):
        ty = part.type
        mask_ty = ir.VectorType(I1, ty.count)
        fn = self.declare_intrinsic("llvm.masked.store", ir.VoidType(), [ty, PTR, I32, mask_ty],
                                    overloads=[ty, PTR])
        # a constant mask may leave one lane: the LLVM fold memory.py works around
        reads = predicate is not None and _reads_memory(predicate)
        part = self._truncation_barrier(part, reads)
        self.builder.call(fn, [part, ptr, ir.Constant(I32, align), mask])


#: x86 CPUs (LLVM ``-mcpu`` names) whose AVX/AVX2 masked store (``vmaskmovps``,
#: ``vpmaskmovd``: the only masked store without AVX-512) is microcoded and slow, so a
#: chunk written in part is faster as one scalar store per element (gcc's code for
#: such loops). Measured on this project's machine (AMD EPYC Zen 4, 2-core shared
#: VM, LLVM 22) under the znver3 target, benchmarks/bench_access.py ``store_s2``
#: (``b[2 i] = a[i]``, float32, 2^22 elements, medians of 21 interleaved runs):
#: vmaskmovps 6.0 ms, gcc -O3's scalar stores 2.0 ms. AMD documents the
#: instruction as microcoded on every Zen generation (its software optimization
#: guides); Intel cores run it at about one a cycle and keep the masked store.
#: With AVX-512 the store takes a mask register (k-masked vmovups): not affected.
SLOW_AVX2_MASKED_STORE_CPUS = frozenset(
    ("znver1", "znver2", "znver3", "znver4", "znver5", "bdver1", "bdver2", "bdver3",
     "bdver4", "btver2"))


def keep_rolled(target) -> bool:
    """Whether an innermost loop whose loads are shuffled out of several wide chunks
    (stride 2 and up, transposes) should stay rolled: ``llvm.loop.unroll.disable``.

    Unrolled, LLVM's scheduler interleaves the chunk loads of different iterations, so
    the loop reads its stream out of address order; with 512-bit vectors on the Zen 4
    host that ran 12-27% slower than the rolled loop (float32, 2^22 elements, medians
    of 25 interleaved runs: stride-3 copy 3.07 -> 2.43 ms, stride-2 sum 0.84 -> 0.75,
    stride-3 sum 1.86 -> 1.59, 2048^2 transpose 3.12 -> 2.75), where gcc -O3 emits the
    same instructions and does not unroll. The same loop with 256-bit vectors ran
    level or faster unrolled, so AVX2 targets keep LLVM's unrolling.
    """
    return target.arch.startswith("x86") and target.vector_width_bits >= 512


def _ymm_rows(target) -> bool:
    """Whether a tile's rows are 256-bit registers, for ``register_transpose``: x86 without
    AVX-512 (znver3, 2048^2 float32 transpose: 7.0 -> 5.9 ms; with AVX-512 an 8 x 8 tile's
    rows are half registers and the shuffle tree already ran level with the network)."""
    return target.arch.startswith("x86") and target.vector_width_bits == 256


def _slow_masked_stores(target) -> bool:
    """Whether a store of part of a register is faster as scalar stores (see above)."""
    return (target.arch.startswith("x86") and target.vector_width_bits < 512
            and target.mcpu in SLOW_AVX2_MASKED_STORE_CPUS)


def _cheap_masked_loads(target, vector_bits: int, element_bits: int) -> bool:
    """Whether a masked vector load costs what a plain one does: AVX-512 (any element)
    and AVX2's vmaskmov (32/64-bit elements); elsewhere LLVM may split it per lane."""
    if not target.arch.startswith("x86"):
        return False
    return vector_bits >= 512 or (vector_bits >= 256 and element_bits >= 32)
