"""Gathers and scatters whose lane offsets are data: the hardware instruction or scalar code.

A vector index that is not a compile-time pattern (``A[idx[i]]``, a symbolic
stride) reaches memory one lane at a time, either through the target's gather
and scatter instructions (``llvm.masked.gather`` / ``scatter``) or as scalar
code this module writes out: per lane, extract the offset, load (or store),
insert. Which is faster depends on the CPU, not on the program, so a small
table (``GATHER_TABLE``) decides per target; ``PassContext`` config
``codegen.gather`` (``"auto"``, ``"hardware"``, ``"scalar"``) overrides it.

Offsets are computed in int32 when they are int32 already or when the analyzer
proves an int64 offset vector fits, and the GEP sign-extends them: on x86 that
is ``vgatherdps`` with dword indices instead of ``vgatherqps`` with two qword
index registers per vector, and a scalar policy's ``movslq`` per lane.
"""

from __future__ import annotations

import contextlib

from llvmlite import ir

from tir import dtype as dt
from tir import op as tir_op
from tir.expr import Add, Broadcast, BufferLoad, Cast, IntImm, Mul, Ramp, Sub
from tir.functor import post_order_visit

from ..ir_types import I32, PTR, element_bytes, memory_type, undef
from .expr import zero

#: Values of config ``codegen.gather``.
POLICIES = ("auto", "hardware", "scalar")

_INT32_MIN, _INT32_MAX = -(1 << 31), (1 << 31) - 1
#: Integer nodes ``_narrowed`` rebuilds in int32 (others become truncated leaves).
_INT_BINARY = {Add: tir_op.add, Sub: tir_op.sub, Mul: tir_op.mul}

#: x86 CPUs (LLVM ``-mcpu`` names) -> the faster policy for a gather of 32- and 64-bit
#: elements, and why. A CPU not listed gets LLVM's own choice ("hardware": the intrinsic,
#: which LLVM itself scalarizes where it finds gathers slow: AVX2 without its
#: ``fast-gather`` tuning, e.g. haswell, znver1-3, x86-64-v3, as LLVM 22 does).
#:
#: znver5 was measured on this project's machine (AMD EPYC, Zen 5, 2 cores of a shared
#: VM, LLVM 22): C[i] = A[idx[i]] over 2^22 elements, an 8-lane vector loop, medians of
#: 21 interleaved runs, bounds checks on; ms hardware -> scalar:
#:
#:   =================  ===============  =====================================
#:   A / idx            random idx       near-sequential idx (i + [-4, 4])
#:   =================  ===============  =====================================
#:   float32 / int32    8.69 -> 5.96     3.62 -> 1.39
#:   int32 / int32      9.58 -> 6.44     3.91 -> 1.39
#:   float64 / int32    15.24 -> 10.30   6.00 -> 2.35
#:   float32 / int64    8.73 -> 6.16     4.03 -> 1.88
#:   =================  ===============  =====================================
#:
#: Random indices are bound by cache misses: the scalar loads keep more of them in
#: flight (1.4-1.5x); with cached data they are 2.1-2.8x faster than the gather
#: instruction. (With lane extracts instead of scalar index loads, see
#: ``_lane_offsets``, scalar was only 5-20% ahead on random indices.)
#:
#: Scatters follow the same row. C[idx[i]] = A[i], float32, 2^22, hardware -> scalar:
#: 8 lanes 5.16 -> 4.81 (a random permutation), 3.36 -> 1.26 (near-sequential); 16
#: lanes 4.79 -> 5.75 (random: vscatterdps zmm wins 1.2x, the 16 value lanes are
#: extracted from a zmm), 3.34 -> 1.55 (near-sequential). Not split into a row of its
#: own: the near-sequential case loses 2x with the hardware scatter.
#:
#: The other rows are not measured here (no such machine); where they come from:
#:
#: - haswell, broadwell, znver1 .. znver3: LLVM 22 itself scalarizes a masked.gather
#:   for these CPUs (no ``fast-gather`` tuning; checked by compiling one <8 x float>
#:   gather per -mcpu), so scalar is what they got anyway; our scalar code is
#:   branch-free under a mask where LLVM's branches per lane.
#: - skylake .. tigerlake, cascadelake, cooperlake, rocketlake: LLVM uses their
#:   gathers (``fast-gather``), but Intel's GDS ("Downfall", CVE-2022-40982)
#:   microcode of August 2023 makes gathers much slower on exactly these parts
#:   (deal.II's changelog: "can be much slower than scalar loads" on Broadwell ..
#:   Ice Lake servers, so it added a switch to turn them off). We assume the
#:   microcode is installed.
#: - znver4: an assumption, not a measurement: its gathers are no faster than the
#:   newer znver5's, so the znver5 result carries over.
#: - alderlake, raptorlake, sapphirerapids and later Intel cores are not affected by
#:   GDS and keep LLVM's choice (hardware), as does every CPU not listed.
GATHER_TABLE = {
    **dict.fromkeys(("haswell", "broadwell"), "scalar"),
    **dict.fromkeys(("skylake", "skylake-avx512", "cascadelake", "cooperlake", "cannonlake",
                     "icelake-client", "icelake-server", "tigerlake", "rocketlake"), "scalar"),
    **dict.fromkeys(("znver1", "znver2", "znver3"), "scalar"),
    **dict.fromkeys(("znver4", "znver5"), "scalar"),
}


def gather_policy(target, element_dtype: str, config: str = "auto") -> str:
    """``"hardware"`` or ``"scalar"``: how a data-dependent gather of ``element_dtype`` is emitted.

    ``config`` is the ``codegen.gather`` config value; ``"auto"`` consults the
    target: ``-mattr=+prefer-no-gather`` or ``+fast-gather`` first (LLVM's own
    switches), then ``GATHER_TABLE`` by CPU name.
    """
    if config not in POLICIES:
        raise ValueError(f"codegen.gather: expected one of {POLICIES}, got {config!r}")
    if config != "auto":
        return config
    if target.arch not in ("x86_64", "i386", "i686"):
        return "hardware"  # SVE has gathers; LLVM scalarizes them where there are none
    if dt.DataType(element_dtype).bits < 32:
        return "scalar"  # x86 gathers move 32- or 64-bit elements only
    if "+prefer-no-gather" in target.mattr:
        return "scalar"
    if "+fast-gather" in target.mattr:
        return "hardware"
    return GATHER_TABLE.get(target.mcpu, "hardware")


class GatherCodegen:
    """Mixin of ``CodeGenLLVM``: ``_gather`` and ``_scatter`` under the target's policy."""

    def _gather_policy(self, buffer) -> str:
        from transform import PassContext

        config = PassContext.current().config.get("codegen.gather")
        return gather_policy(self.target, buffer.dtype, config)

    # ------------------------------------------------------------ loop facts

    # The codegen's analyzer learns each loop's range for its body (as TVM's
    # CodeGenLLVM binds loop vars), so that ``_fits_int32`` can prove an int64
    # offset built from loop vars small: LLVM's instruction selection cannot (it
    # sees one block at a time; a loop var is a register of unknown range there).
    def visit_for(self, op):
        with self.analyzer.loop_scope(op.loop_var, op.min, op.extent):
            return super().visit_for(op)

    # ------------------------------------------------------------ offsets

    def _offset_vector(self, buffer, access):
        """The lane offsets (elements) as an i32 vector when they fit, else i64."""
        if dt.lanes_of(buffer.dtype) > 1:
            raise ValueError(
                f"codegen: a gather/scatter on buffer {buffer.name} of vector dtype "
                f"{buffer.dtype} is not supported; index it with a stride-1 ramp"
            )
        offsets = access.vector
        if offsets is None:
            lanes = dt.lanes_of(access.index_dtype)
            if dt.DataType(access.index_dtype).is_scalable:
                lanes = lanes * tir_op.vscale()
            base, stride = access.base, access.stride
            if base.dtype != stride.dtype:  # e.g. an int64 elem_offset with int32 indices
                base, stride = tir_op.cast("int64", base), tir_op.cast("int64", stride)
            offsets = Ramp(base, stride, lanes)
        if dt.DataType(offsets.dtype).bits == 64 and not dt.DataType(offsets.dtype).is_scalable:
            offsets = self._narrowed(offsets)
        value = self.visit_expr(offsets)
        width = value.type.element.width
        if width >= 32:
            return value
        return self.builder.sext(value, value.type.__class__(I32, value.type.count))

    def _fits_int32(self, expr) -> bool:
        bound = self.analyzer.const_int_bound(expr)
        return _INT32_MIN <= bound.min_value and bound.max_value <= _INT32_MAX

    # An int64 offset vector the analyzer proves small is rebuilt in int32 arithmetic
    # (every node proven to fit, so no int32 operation overflows). Not a trunc of the
    # int64 result: LLVM turns sext(trunc x) into shifts, and x86's instruction
    # selection then falls back to qword indices; an int32 add it does see through.
    def _narrowed(self, expr):
        """``expr`` (int64 lanes) as the same value in int32 lanes, or ``expr`` unchanged."""
        if not self._fits_int32(expr):
            return expr
        narrow = self._narrow_node(expr)
        return expr if narrow is None else narrow

    def _narrow_node(self, expr):
        t = dt.DataType(expr.dtype)
        target = "int32" if t.lanes == 1 else f"int32x{t.lanes}"
        if not (t.is_int or t.is_uint) or not self._fits_int32(expr):
            return None
        if t.bits <= 32:
            return tir_op.cast(target, expr)
        if isinstance(expr, IntImm):
            return IntImm("int32", expr.value)
        if isinstance(expr, Cast) and dt.DataType(expr.value.dtype).is_int \
                and dt.DataType(expr.value.dtype).bits <= 32:
            return tir_op.cast(target, expr.value)
        if isinstance(expr, Broadcast):
            value = self._narrow_node(expr.value)
            return None if value is None else Broadcast(value, expr.lanes)
        if isinstance(expr, Ramp) and not dt.DataType(expr.base.dtype).is_vector:
            base, stride = self._narrow_node(expr.base), self._narrow_node(expr.stride)
            return None if base is None or stride is None else Ramp(base, stride, expr.lanes)
        combine = _INT_BINARY.get(type(expr))
        if combine is not None:
            a, b = self._narrow_node(expr.a), self._narrow_node(expr.b)
            return None if a is None or b is None else combine(a, b)
        return tir_op.cast(target, expr)  # a leaf (a load, a var) proven to fit: truncate it

    def _pointers(self, buffer, access):
        """A vector of lane addresses for a gather/scatter (the GEP sign-extends i32 offsets)."""
        index = self._offset_vector(buffer, access)
        gep = self.builder.gep(self.lookup(buffer.data), [index],
                               source_etype=memory_type(buffer.dtype))
        gep.type = index.type.__class__(PTR, access.lanes)  # llvmlite types it as plain `ptr`
        return gep

    # Lane k of an offset vector made of ramps, broadcasts and loads of an index
    # buffer is computed as a scalar expression: idx[b + k], not lane k extracted
    # from the loaded idx vector. A scalar load is one load-port uop; an extract is
    # two shuffle uops plus a sign extension, and on a loop bound by cache misses
    # fewer uops per element mean more misses in flight. The bounds check loads
    # the idx vector anyway, and LLVM's GVN would forward the scalar loads from it
    # (back to extracts), so on x86 the index buffer's pointer is passed through an
    # empty asm first (the same address, which LLVM cannot see through; it counts
    # as a capture of the pointer, so alias analysis stays conservative).
    # Measured on the gather kernel (2^24 float32, random int32 indices, checks
    # on): 42.9 ms with these loads, 57.9 with extracts, 60.9 with vgatherdps.
    def _lane_offsets(self, buffer, access) -> list:
        """The scalar offset of each lane, as LLVM values."""
        offsets = access.vector
        lanes = None if offsets is None else [_lane_expr(offsets, k) for k in range(access.lanes)]
        if lanes is None or any(e is None for e in lanes):
            vector = self._offset_vector(buffer, access)
            return [self.builder.extract_element(vector, ir.Constant(I32, k))
                    for k in range(access.lanes)]
        loaded = {}
        post_order_visit(offsets, lambda n: loaded.setdefault(id(n.buffer.data), n.buffer.data)
                         if isinstance(n, BufferLoad) else None)
        with contextlib.ExitStack() as stack:
            if self.target.arch.startswith("x86"):
                for data in loaded.values():
                    hidden = self.builder.asm(ir.FunctionType(PTR, [PTR]), "", "=r,0",
                                              [self.lookup(data)], side_effect=False)
                    stack.enter_context(self.bound(data, hidden))
            return [self.visit_expr(e) for e in lanes]

    def _scalar_lanes(self, buffer, access) -> bool:
        """Whether this access is emitted lane by lane (a fixed lane count and that policy)."""
        if dt.DataType(access.index_dtype).is_scalable:
            return False  # vscale lanes: no unrolling over them
        return self._gather_policy(buffer) == "scalar"

    # ------------------------------------------------------------ gather

    def _gather(self, buffer, access, ty, predicate):
        """``buffer`` at ``access``'s lane offsets, as a ``ty`` vector; masked lanes read 0."""
        if self._scalar_lanes(buffer, access):
            return self._scalar_gather(buffer, access, ty, predicate)
        ptrs = self._pointers(buffer, access)
        mask = self._mask(predicate, access)
        ptrs_ty = ptrs.type
        fn = self.declare_intrinsic("llvm.masked.gather", ty, [ptrs_ty, I32, mask.type, ty],
                                    overloads=[ty, ptrs_ty])
        align = ir.Constant(I32, element_bytes(buffer.dtype))
        return self.builder.call(fn, [ptrs, align, mask, zero(ty)])

    # per lane k:  %o = offset of lane k (_lane_offsets) ; %p = gep T, %base, %o
    #              %p' = select %m_k, %p, @zero     (a predicate only)
    #              %x = load T, %p'  ;  %r = insertelement %r, %x, k
    # A masked-off lane loads from a constant zero instead of branching around its
    # load: branch-free, and it reads 0 as llvm.masked.gather's passthru would.
    def _scalar_gather(self, buffer, access, ty, predicate):
        offsets = self._lane_offsets(buffer, access)
        elem = memory_type(buffer.dtype)
        base = self.lookup(buffer.data)
        mask = None if predicate is None else self.visit_expr(predicate)
        align = element_bytes(buffer.dtype)
        result = undef(ty)
        for k in range(access.lanes):
            lane = ir.Constant(I32, k)
            ptr = self.builder.gep(base, [offsets[k]], inbounds=True, source_etype=elem)
            if mask is not None:
                ptr = self.builder.select(self.builder.extract_element(mask, lane), ptr,
                                          self._zero_slot(elem))
            value = self.builder.load(ptr, typ=elem, align=align)
            result = self.builder.insert_element(result, value, lane)
        return result

    def _zero_slot(self, elem: ir.Type) -> ir.GlobalVariable:
        """A read-only zero of type ``elem``: the address a masked-off lane loads from."""
        name = f".masked_lane_zero.{elem}".replace(" ", "")
        glob = self.module.globals.get(name)
        if glob is None:
            glob = ir.GlobalVariable(self.module, elem, name)
            glob.initializer = zero(elem)
            glob.global_constant = True
            glob.linkage = "private"
            glob.unnamed_addr = True
            glob.align = 64
        return glob

    # ------------------------------------------------------------ scatter

    def _scatter(self, buffer, access, value, predicate):
        """Store ``value``'s lanes at ``access``'s offsets; a later lane wins a shared address."""
        if self._scalar_lanes(buffer, access):
            self._scalar_scatter(buffer, access, value, predicate)
            return
        ptrs = self._pointers(buffer, access)
        mask = self._mask(predicate, access)
        fn = self.declare_intrinsic("llvm.masked.scatter", ir.VoidType(),
                                    [value.type, ptrs.type, I32, mask.type],
                                    overloads=[value.type, ptrs.type])
        align = ir.Constant(I32, element_bytes(buffer.dtype))
        self.builder.call(fn, [value, ptrs, align, mask])

    # Lanes are stored in lane order, as the serial loop (and llvm.masked.scatter)
    # would: on a shared address the later lane's value stays. A masked-off lane
    # branches around its store (a store cannot be redirected to a shared constant).
    def _scalar_scatter(self, buffer, access, value, predicate):
        offsets = self._lane_offsets(buffer, access)  # all read before the first store
        elem = memory_type(buffer.dtype)
        base = self.lookup(buffer.data)
        mask = None if predicate is None else self.visit_expr(predicate)
        align = element_bytes(buffer.dtype)
        for k in range(access.lanes):
            lane = ir.Constant(I32, k)

            def store(lane=lane, offset=offsets[k]):
                ptr = self.builder.gep(base, [offset], inbounds=True, source_etype=elem)
                self.builder.store(self.builder.extract_element(value, lane), ptr, align=align)

            if mask is None:
                store()
            else:
                with self.builder.if_then(self.builder.extract_element(mask, lane)):
                    store()


def _lane_expr(expr, k: int):
    """Lane ``k`` of the integer vector ``expr`` as a scalar TIR expression, or None."""
    if dt.DataType(expr.dtype).lanes == 1:
        return expr  # the same in every lane
    rule = _LANE_RULES.get(type(expr))
    if rule is not None:
        return rule(expr, k)
    combine = _INT_BINARY.get(type(expr))
    if combine is not None:
        a, b = _lane_expr(expr.a, k), _lane_expr(expr.b, k)
        return None if a is None or b is None else combine(a, b)
    return None


def _broadcast_lane(expr: Broadcast, k: int):
    return _lane_expr(expr.value, k)


def _ramp_lane(expr: Ramp, k: int):
    if dt.DataType(expr.base.dtype).lanes != 1:
        return None
    return tir_op.add(expr.base, tir_op.mul(expr.stride, IntImm(expr.stride.dtype, k)))


def _cast_lane(expr: Cast, k: int):
    value = _lane_expr(expr.value, k)
    return None if value is None else tir_op.cast(str(dt.DataType(expr.dtype).element_of), value)


def _load_lane(expr: BufferLoad, k: int):
    if expr.predicate is not None or dt.lanes_of(expr.buffer.dtype) > 1:
        return None
    indices = []
    for index in expr.indices:
        lane = index if dt.DataType(index.dtype).lanes == 1 else _lane_expr(index, k)
        if lane is None:
            return None
        indices.append(lane)
    return BufferLoad(expr.buffer, indices)


#: Node class -> how lane ``k`` of such a vector is written as a scalar (binary integer
#: ops are ``_INT_BINARY``'s).
_LANE_RULES = {Broadcast: _broadcast_lane, Ramp: _ramp_lane, Cast: _cast_lane,
               BufferLoad: _load_lane}


__all__ = ["GATHER_TABLE", "POLICIES", "GatherCodegen", "gather_policy"]
