"""Expression emitters of ``CodeGenLLVM``: arithmetic, comparisons, casts, vectors.

Tables map (node class, dtype kind) to ``llvmlite.ir.IRBuilder`` methods; the
few nodes that need several instructions (floor division, ramps, shuffles)
have a comment showing the IR they produce.

Undefined behaviour is TIR's, as in C and TVM, and is not checked on the hot
path: integer division or modulo by zero (the process gets SIGFPE), signed
overflow of 32/64-bit integers (``nsw``), shifts by the bit width or more,
float-to-int casts out of range. Narrow integers (8/16 bits) wrap around.

float16 and bfloat16 operations compute in float32 and round once to their type:
``half`` arithmetic as LLVM promotes it, ``bfloat`` explicitly (widened to float,
the operation, rounded back, both conversions in integer arithmetic), so the code
never depends on how a target legalizes ``bfloat``. float16 fuses a multiply and an
add (``contract``, rounding once where the TIR rounds twice) only under
``codegen.llvm.fp_contract``, as float32 and float64 do (on by default; strict
builds turn it off); bfloat16 never does, its rounding being integer code.
"""

from __future__ import annotations

from llvmlite import ir

from tir import dtype as dt
from tir.expr import EQ, GE, GT, LE, LT, NE, Add, Div, IntImm, Mod, Mul, Sub
from tir.low_precision import bfloat16_bits

from ..ir_types import I32, ScalableVectorType, Splat, int_constant, ir_type, undef, zeros
from .shuffle_tree import shuffle_tree

#: (node class) -> (builder method for signed/unsigned ints, for floats)
_ARITH = {
    Add: ("add", "add", "fadd"),
    Sub: ("sub", "sub", "fsub"),
    Mul: ("mul", "mul", "fmul"),
    Div: ("sdiv", "udiv", "fdiv"),
    Mod: ("srem", "urem", "frem"),
}
#: Comparison operators as llvmlite spells them.
_CMP = {EQ: "==", NE: "!=", LT: "<", LE: "<=", GT: ">", GE: ">="}
#: Arithmetic that may carry ``nsw``: signed overflow is undefined in TIR, as in C and TVM.
_NSW = ("add", "sub", "mul")
#: Float operations that may fuse into an FMA under ``codegen.llvm.fp_contract``.
_CONTRACTIBLE = ("fadd", "fsub", "fmul")
#: Float types computed in float32 and rounded back after every operation.
NARROW_FLOATS = ("float16", "bfloat16")


def float32_like(dtype: str) -> str:
    """float32 with the lanes of ``dtype`` (fixed or scalable)."""
    t = dt.DataType(dtype)
    return str(dt.DataType(dt.FLOAT, 32, t.lanes, t.is_scalable))


def zero(ty: ir.Type) -> ir.Constant:
    """The zero (or zeroinitializer) of ``ty``."""
    return ir.Constant(ty, None)


def splat_constant(ty: ir.Type, value: float) -> ir.Constant:
    """A constant of ``ty`` with ``value`` in every lane."""
    if isinstance(ty, ScalableVectorType):
        return ir.Constant(ty, Splat(_scalar_constant(ty.element, value)))
    if isinstance(ty, ir.VectorType):
        return ir.Constant(ty, [_scalar_constant(ty.element, value)] * ty.count)
    return _scalar_constant(ty, value)


def _scalar_constant(ty: ir.Type, value: float) -> ir.Constant:
    if isinstance(ty, ir.IntType):
        return int_constant(ty, int(value))
    return ir.Constant(ty, float(value))


class _ScalableSplat(ir.instructions.ShuffleVector):
    """``shufflevector`` with a zeroinitializer mask on scalable vectors."""

    def __init__(self, block, vector, undef, mask):
        ir.instructions.Instruction.__init__(
            self, block, vector.type, "shufflevector", [vector, undef, mask]
        )


class ExprCodegen:
    """Mixin of ``CodeGenLLVM``: one ``visit_*`` per expression node."""

    builder: ir.IRBuilder
    fmf: tuple
    arith_fmf: tuple

    # ------------------------------------------------------------ leaves

    def visit_int_imm(self, op):
        return int_constant(ir_type(op.dtype), op.value)

    def visit_float_imm(self, op):
        if op.dtype == "bfloat16":  # its bits (ir_types): the value is bfloat16 already
            return ir.Constant(ir_type(op.dtype), bfloat16_bits(op.value))
        return ir.Constant(ir_type(op.dtype), op.value)

    def visit_string_imm(self, op):
        return self.string_constant(op.value)

    def visit_var(self, op):
        return self.lookup(op)

    # ------------------------------------------------------------ float16/bfloat16

    def in_float32(self, dtype: str, args: list, emit, narrow: bool = True):
        """``emit(args)`` on float16/bfloat16 ``args`` widened to float32 (exactly), its
        result rounded once back to ``dtype`` (kept in float32 if not ``narrow``)."""
        if dt.element_of(dtype) not in NARROW_FLOATS:
            return emit(args)
        wide = float32_like(dtype)
        out = emit([self.cast(dtype, wide, a) for a in args])
        return self.cast(wide, dtype, out) if narrow else out

    def in_bf16_float32(self, dtype: str, args: list, emit, narrow: bool = True):
        """``in_float32`` for bfloat16 only: LLVM promotes ``half`` operations itself."""
        if dt.element_of(dtype) != "bfloat16":
            return emit(args)
        return self.in_float32(dtype, args, emit, narrow)

    # ------------------------------------------------------------ arithmetic

    def _arith(self, op):
        signed, unsigned, floating = _ARITH[type(op)]
        a, b = self.visit_expr(op.a), self.visit_expr(op.b)
        t = dt.DataType(op.dtype)
        if t.is_float:
            flags = self.arith_fmf if floating in _CONTRACTIBLE else self.fmf
            emit = getattr(self.builder, floating)
            return self.in_bf16_float32(op.dtype, [a, b], lambda xs: emit(*xs, flags=flags))
        name = signed if t.is_int else unsigned
        flags = ("nsw",) if name in _NSW and t.is_int and t.bits >= 32 else ()
        return getattr(self.builder, name)(a, b, flags=flags)

    visit_add = visit_sub = visit_mul = visit_div = visit_mod = _arith

    # floordiv(a, b) on signed ints, without branches:
    #   q = sdiv a, b ; r = srem a, b
    #   fix = (r != 0) & ((r ^ b) < 0)      ; remainder and divisor differ in sign
    #   result = q - zext(fix)
    def visit_floor_div(self, op):
        t = dt.DataType(op.dtype)
        a, b = self.visit_expr(op.a), self.visit_expr(op.b)
        if t.is_float:
            return self._float_floor_div(op.dtype, a, b)
        if not t.is_int:
            return self.builder.udiv(a, b)
        q = self.builder.sdiv(a, b)
        fix = self._floor_fix(self.builder.srem(a, b), b)
        return self.builder.sub(q, self.builder.zext(fix, a.type))

    # floormod(a, b) on signed ints: r = srem a, b ; r + (fix ? b : 0)
    def visit_floor_mod(self, op):
        t = dt.DataType(op.dtype)
        a, b = self.visit_expr(op.a), self.visit_expr(op.b)
        if t.is_float:  # each step rounded to the type, as the interpreter computes it
            q = self._float_floor_div(op.dtype, a, b)
            f = self.in_bf16_float32
            product = f(op.dtype, [b, q], lambda xs: self.builder.fmul(*xs, flags=self.fmf))
            return f(op.dtype, [a, product], lambda xs: self.builder.fsub(*xs, flags=self.fmf))
        if not t.is_int:
            return self.builder.urem(a, b)
        r = self.builder.srem(a, b)
        fix = self._floor_fix(r, b)
        return self.builder.add(r, self.builder.select(fix, b, zero(b.type)))

    def _float_floor_div(self, dtype: str, a, b):
        """floor(a / b), the quotient rounded to ``dtype`` first."""
        f = self.in_bf16_float32
        quotient = f(dtype, [a, b], lambda xs: self.builder.fdiv(*xs, flags=self.fmf))
        return f(dtype, [quotient], lambda xs: self.call_float_intrinsic("llvm.floor", xs))

    def _floor_fix(self, r, b):
        nonzero = self.builder.icmp_signed("!=", r, zero(r.type))
        signs_differ = self.builder.icmp_signed("<", self.builder.xor(r, b), zero(r.type))
        return self.builder.and_(nonzero, signs_differ)

    # Float Min/Max are IEEE 754-2019 minimum/maximum (NaN if either operand is NaN,
    # -0.0 < +0.0), as tir.min documents: commutative and associative, so vector
    # reductions in any order equal the serial loop. Integers: select(a < b, a, b).
    def _min_max(self, op, cmp: str, intrinsic: str):
        a, b = self.visit_expr(op.a), self.visit_expr(op.b)
        if dt.DataType(op.dtype).is_float:
            return self.in_bf16_float32(op.dtype, [a, b],
                                        lambda xs: self.call_float_intrinsic(intrinsic, xs))
        return self.builder.select(self.compare(op.a.dtype, cmp, a, b), a, b)

    def visit_min(self, op):
        return self._min_max(op, "<", "llvm.minimum")

    def visit_max(self, op):
        return self._min_max(op, ">", "llvm.maximum")

    # ------------------------------------------------------------ comparisons and logic

    def compare(self, dtype: str, cmp: str, a, b):
        """``a cmp b`` for operands of ``dtype``; float ``!=`` is true on NaN, as in C."""
        t = dt.DataType(dtype)
        if t.is_float:
            return self.in_bf16_float32(dtype, [a, b], lambda xs: self._fcmp(cmp, *xs),
                                        narrow=False)
        if t.is_int:
            return self.builder.icmp_signed(cmp, a, b)
        return self.builder.icmp_unsigned(cmp, a, b)

    def _fcmp(self, cmp: str, a, b):
        if cmp == "!=":
            return self.builder.fcmp_unordered(cmp, a, b, flags=self.fmf)
        return self.builder.fcmp_ordered(cmp, a, b, flags=self.fmf)

    def _cmp(self, op):
        a, b = self.visit_expr(op.a), self.visit_expr(op.b)
        return self.compare(op.a.dtype, _CMP[type(op)], a, b)

    visit_eq = visit_ne = visit_lt = visit_le = visit_gt = visit_ge = _cmp

    def visit_and(self, op):
        return self.builder.and_(self.visit_expr(op.a), self.visit_expr(op.b))

    def visit_or(self, op):
        return self.builder.or_(self.visit_expr(op.a), self.visit_expr(op.b))

    def visit_not(self, op):
        value = self.visit_expr(op.a)  # xor with all ones: IRBuilder.not_ lists the lanes,
        return self.builder.xor(value, splat_constant(value.type, 1))  # which scalable lack

    def visit_select(self, op):
        # Both sides are evaluated: a blend (`select`), never a branch.
        cond = self.visit_expr(op.condition)
        t, f = self.visit_expr(op.true_value), self.visit_expr(op.false_value)
        return self.builder.select(cond, t, f)

    def visit_let(self, op):
        with self.bound(op.var, self.visit_expr(op.value)):
            return self.visit_expr(op.body)

    # ------------------------------------------------------------ casts

    def visit_cast(self, op):
        return self.cast(op.value.dtype, op.dtype, self.visit_expr(op.value))

    def cast(self, src: str, dst: str, value):
        """``value`` of dtype ``src`` converted to ``dst`` (same lanes)."""
        if src == dst:
            return value
        s, d = dt.DataType(src), dt.DataType(dst)
        if s.is_bfloat16 or d.is_bfloat16:
            return self._cast_bfloat16(s, d, value)
        ty = ir_type(dst)
        if d.is_bool:
            if s.is_float:
                return self.builder.fcmp_unordered("!=", value, zero(value.type))
            return self.builder.icmp_unsigned("!=", value, zero(value.type))
        if s.is_bool:
            return self.builder.uitofp(value, ty) if d.is_float else self.builder.zext(value, ty)
        if s.is_float and d.is_float:
            if s.bits == 64 and d.bits == 16:
                value = self._to_float_round_to_odd(value)
                return self.builder.fptrunc(value, ty)
            return self._resize(value, ty, s.bits, d.bits, "fpext", "fptrunc")
        if s.is_float:
            return self.builder.fptosi(value, ty) if d.is_int else self.builder.fptoui(value, ty)
        if d.is_float:
            return self.builder.sitofp(value, ty) if s.is_int else self.builder.uitofp(value, ty)
        return self._resize(value, ty, s.bits, d.bits, "sext" if s.is_int else "zext", "trunc")

    # Casts from bfloat16 go through float32, which holds every bfloat16 exactly; casts to
    # it come from float32 with one rounding: from float64 rounded to odd first (below),
    # from a wide integer through float64 (exact up to 2**53, and an int64 rounded to
    # 53 bits rounds to bfloat16's 8 as the int itself would), from the rest through
    # float32 exactly. Both directions are integer arithmetic on the bits, so no bfloat16
    # operation reaches LLVM: only loads, stores, selects and shuffles of its values.
    def _cast_bfloat16(self, s: dt.DataType, d: dt.DataType, value):
        if s.is_bfloat16:
            wide = float32_like(str(s))
            return self.cast(wide, str(d), self._bfloat16_to_float(value, s))
        if s.is_float and s.bits == 32:
            return self._float_to_bfloat16(value, d)
        via = "float64" if (s.is_integer and s.bits > 16) or s.bits == 64 else "float32"
        wide = str(dt.DataType(dt.FLOAT, int(via[5:]), s.lanes, s.is_scalable))
        value = self.cast(str(s), wide, value)
        if via == "float64":
            value = self._to_float_round_to_odd(value)
        return self._float_to_bfloat16(value, d)

    # bfloat16 (its bits, an i16: see ir_types) -> float: the bits shifted up. An fpext
    # from LLVM's `bfloat` would let LLVM narrow the float32 operation on it back to a
    # `bfloat` one (minimum(fpext a, fpext b) -> fpext(minimum.bf16(a, b))), whose x86
    # lowering rounds with vcvtneps2bf16 and so flushes subnormals to zero.
    #   %f = bitcast (shl (zext i16 %h to i32), 16) to float
    def _bfloat16_to_float(self, value, s: dt.DataType):
        b = self.builder
        i32 = ir_type(str(dt.DataType(dt.INT, 32, s.lanes, s.is_scalable)))
        i16 = ir_type(str(dt.DataType(dt.INT, 16, s.lanes, s.is_scalable)))
        bits = b.zext(b.bitcast(value, i16), i32)  # the bitcast is i16 to i16: a no-op
        return b.bitcast(b.shl(bits, splat_constant(i32, 16)), ir_type(float32_like(str(s))))

    # float -> bfloat16, to nearest even in integer arithmetic: an fptrunc to `bfloat`
    # becomes AVX512-BF16's vcvtneps2bf16 where the CPU has it, which flushes subnormals
    # to zero, and a call of libgcc's __truncsfbf2 where it has not.
    #   %b = bitcast float %f to i32
    #   %r = add %b, 0x7FFF + ((%b >> 16) & 1)   ; a carry into bit 16 rounds up
    #   %t = select (fcmp uno %f, %f), (%b | 0x400000), %r   ; NaN stays NaN, quiet
    #   %h = trunc (lshr %t, 16) to i16
    def _float_to_bfloat16(self, value, d: dt.DataType):
        b = self.builder
        i32 = ir_type(str(dt.DataType(dt.INT, 32, d.lanes, d.is_scalable)))
        i16 = ir_type(str(dt.DataType(dt.INT, 16, d.lanes, d.is_scalable)))
        bits = b.bitcast(value, i32)
        sixteen = splat_constant(i32, 16)
        odd = b.and_(b.lshr(bits, sixteen), splat_constant(i32, 1))
        rounded = b.add(bits, b.add(odd, splat_constant(i32, 0x7FFF)))
        quiet = b.or_(bits, splat_constant(i32, 0x400000))
        kept = b.select(b.fcmp_unordered("uno", value, value), quiet, rounded)
        return b.bitcast(b.trunc(b.lshr(kept, sixteen), i16), ir_type(str(d)))

    # double -> half goes through float. Rounding twice to nearest can be wrong, so the
    # first step rounds to odd (truncate, then set the last bit if inexact), which makes
    # the second rounding exact (float has 13 more mantissa bits than half). This also
    # avoids the libcall __truncdfhf2, which the JIT cannot resolve.
    #   %f = fptrunc double %d to float ; %back = fpext %f
    #   %away = |%back| > |%d|          ; rounded away from zero: step back one ulp
    #   %bits = bitcast %f - zext(%away) ; %odd = %bits | zext(%back != %d)
    def _to_float_round_to_odd(self, value):
        b = self.builder
        ty = value.type
        lanes = ty.count if isinstance(ty, ir.VectorType) else 0
        vector = type(ty) if lanes else None  # fixed or scalable, as the value is
        f32 = ir.FloatType() if not lanes else vector(ir.FloatType(), lanes)
        i32 = I32 if not lanes else vector(I32, lanes)
        f = b.fptrunc(value, f32)
        back = b.fpext(f, ty)
        fabs = self.call_float_intrinsic
        away = b.fcmp_ordered(">", fabs("llvm.fabs", [back]), fabs("llvm.fabs", [value]))
        inexact = b.fcmp_ordered("!=", back, value)
        bits = b.sub(b.bitcast(f, i32), b.zext(away, i32))
        return b.bitcast(b.or_(bits, b.zext(inexact, i32)), f32)

    def _resize(self, value, ty, src_bits: int, dst_bits: int, widen: str, narrow: str):
        if src_bits == dst_bits:
            return value
        return getattr(self.builder, widen if dst_bits > src_bits else narrow)(value, ty)

    # ------------------------------------------------------------ vectors

    # Ramp(base, stride, n):
    #   %b = broadcast base ; %s = <0, stride, 2*stride, ...> (a constant when stride is)
    #   %r = add %b, %s
    def visit_ramp(self, op):
        base = self.visit_expr(op.base)
        vec = self.broadcast(base, op.dtype)
        steps = self.step_vector(op.dtype)
        if isinstance(op.stride, IntImm) and not dt.DataType(op.dtype).is_scalable:
            stride = op.stride.value
            steps = ir.Constant(steps.type, [int_constant(base.type, k * stride)
                                             for k in range(steps.type.count)])
        else:
            stride = self.broadcast(self.visit_expr(op.stride), op.dtype)
            steps = self.builder.mul(steps, stride)
        return self.builder.add(vec, steps)

    def step_vector(self, dtype: str):
        """The vector ``<0, 1, 2, ...>`` of ``dtype``."""
        ty = ir_type(dtype)
        if dt.DataType(dtype).is_scalable:
            fn = self.declare_intrinsic("llvm.stepvector", ty, [])
            return self.builder.call(fn, [])
        return ir.Constant(ty, [int_constant(ty.element, k) for k in range(ty.count)])

    def visit_broadcast(self, op):
        return self.broadcast(self.visit_expr(op.value), op.dtype)

    # broadcast v to n lanes:
    #   %t = insertelement <n x T> poison, T %v, i32 0
    #   %r = shufflevector <n x T> %t, <n x T> poison, <n x i32> zeroinitializer
    def broadcast(self, value, dtype: str):
        """Scalar ``value`` repeated in the lanes of ``dtype``."""
        ty = ir_type(dtype)
        if not isinstance(ty, ir.VectorType):
            return value
        vec_ty = ty.__class__(value.type, ty.count)
        blank = undef(vec_ty)
        one = self.builder.insert_element(blank, value, ir.Constant(I32, 0))
        mask = zeros(ty.__class__(I32, ty.count))
        if isinstance(ty, ScalableVectorType):
            # llvmlite's shuffle_vector checks mask lanes a scalable mask does not list.
            splat = _ScalableSplat(self.builder.block, one, blank, mask)
            self.builder._insert(splat)  # IRBuilder has no public insert
            return splat
        return self.builder.shuffle_vector(one, blank, mask)

    # Shuffle(vectors, indices): a balanced tree of narrow shufflevectors over the
    # vectors the indices use (see shuffle_tree.py); unused vectors are never evaluated.
    # One lane: extractelement of the picked lane.
    def visit_shuffle(self, op):
        vectors, picks = _used_vectors(op)
        parts = [self.visit_expr(v) for v in vectors]
        if len(picks) > 1:
            return shuffle_tree(self.builder, parts, picks)
        if not isinstance(parts[0].type, ir.VectorType):
            return parts[0]
        return self.builder.extract_element(parts[0], ir.Constant(I32, picks[0]))


def _used_vectors(op) -> tuple[list, list[int]]:
    """The vectors of a Shuffle that its indices use, and the indices renumbered for them."""
    starts, total = [], 0
    for v in op.vectors:
        starts.append(total)
        total += dt.lanes_of(v.dtype)
    owner = [k for k, v in enumerate(op.vectors) for _ in range(dt.lanes_of(v.dtype))]
    used = sorted({owner[i.value] for i in op.indices})
    new_start, running = {}, 0
    for k in used:
        new_start[k] = running
        running += dt.lanes_of(op.vectors[k].dtype)
    picks = [new_start[owner[i.value]] + i.value - starts[owner[i.value]] for i in op.indices]
    return [op.vectors[k] for k in used], picks
