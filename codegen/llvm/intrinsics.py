"""``Call`` emitters of ``CodeGenLLVM``: math intrinsics, bit operations, externs.

Math functions with an LLVM intrinsic (``llvm.exp``, ``llvm.sqrt`` ...) are
called on scalars and vectors alike; LLVM lowers vector forms to vector
instructions or lane-by-lane library calls. Functions without one (``erf``,
``log1p``) call libm lane by lane. ``float16`` and ``bfloat16`` math runs in
``float``, rounded once to the type at the end.
"""

from __future__ import annotations

from llvmlite import ir

from tir import dtype as dt

from ..ir_types import I32, ScalableVectorType, as_llvm_bfloat, declare, ir_type, mangle, undef
from .expr import float32_like, splat_constant, zero
from .intrinsic_check import check_intrinsic

#: TIR op -> LLVM intrinsic (overloaded on the argument type).
LLVM_MATH = {
    "tir.exp": "llvm.exp", "tir.exp2": "llvm.exp2", "tir.exp10": "llvm.exp10",
    "tir.log": "llvm.log", "tir.log2": "llvm.log2", "tir.log10": "llvm.log10",
    "tir.sqrt": "llvm.sqrt", "tir.sin": "llvm.sin", "tir.cos": "llvm.cos", "tir.tan": "llvm.tan",
    "tir.tanh": "llvm.tanh", "tir.fabs": "llvm.fabs", "tir.floor": "llvm.floor",
    "tir.ceil": "llvm.ceil", "tir.trunc": "llvm.trunc", "tir.nearbyint": "llvm.nearbyint",
    # TIR's round is round-half-to-even (as NumPy and TVM), whatever the rounding mode.
    "tir.round": "llvm.roundeven", "tir.pow": "llvm.pow", "tir.fma": "llvm.fma",
}
#: TIR op -> libm function (float64 name; float32 adds "f"), called lane by lane.
LIBM = {"tir.erf": "erf", "tir.log1p": "log1p"}
#: LLVM intrinsics the AArch64 backend cannot expand on scalable vectors (it aborts the
#: process, "Possible incorrect use of EVT::getVectorNumElements()"): the libm function
#: lane by lane instead.
SCALABLE_AS_LIBM = {"llvm.sin": "sin", "llvm.cos": "cos", "llvm.tan": "tan", "llvm.tanh": "tanh",
                    "llvm.pow": "pow", "llvm.exp10": "exp10", "llvm.log2": "log2",
                    "llvm.log10": "log10"}


class IntrinsicCodegen:
    """Mixin of ``CodeGenLLVM``: ``visit_call`` and the intrinsic emitters."""

    builder: ir.IRBuilder
    module: ir.Module

    def visit_call(self, op):
        if op.op in LLVM_MATH:
            return self.math(op, LLVM_MATH[op.op])
        if op.op in LIBM:
            return self.libm(op, LIBM[op.op])
        method = getattr(self, "intrin_" + op.op.removeprefix("tir."), None)
        if method is None:
            raise ValueError(
                f"codegen: the intrinsic {op.op!r} is not supported by the LLVM backend"
            )
        return method(op)

    # ------------------------------------------------------------ helpers

    def declare_intrinsic(self, name: str, ret: ir.Type, args: list[ir.Type], overloads=None):
        """Declare ``name.<overloads>`` (mangled from ``ret`` unless given)."""
        suffix = ".".join(mangle(t) for t in (overloads if overloads is not None else [ret]))
        return declare(self.module, f"{name}.{suffix}" if suffix else name, ret, args)

    def call_float_intrinsic(self, name: str, args: list):
        """``name`` overloaded on the type of ``args[0]`` (all args of that type)."""
        ty = args[0].type
        fn = self.declare_intrinsic(name, ty, [a.type for a in args])
        return self.builder.call(fn, args, fastmath=self.fmf)

    def _in_float(self, dtype: str, args: list, emit):
        """Run ``emit(args)`` in float32 for float16/bfloat16 (their math is not native)."""
        return self.in_float32(dtype, args, emit)

    def math(self, op, name: str):
        args = [self.visit_expr(a) for a in op.args]
        if dt.DataType(op.dtype).is_scalable and name in SCALABLE_AS_LIBM:
            return self._in_float(op.dtype, args,
                                  lambda xs: self._lanewise(SCALABLE_AS_LIBM[name], xs))
        return self._in_float(op.dtype, args, lambda xs: self.call_float_intrinsic(name, xs))

    def libm(self, op, name: str):
        args = [self.visit_expr(a) for a in op.args]
        return self._in_float(op.dtype, args, lambda xs: self._lanewise(name, xs))

    def _lanewise(self, name: str, args: list):
        ty = args[0].type
        element = ty.element if isinstance(ty, ir.VectorType) else ty
        suffix = "f" if isinstance(element, ir.FloatType) else ""
        fn = declare(self.module, name + suffix, element, [element] * len(args))
        if not isinstance(ty, ir.VectorType):
            return self.builder.call(fn, args)
        if isinstance(ty, ScalableVectorType):
            return self._scalable_lanewise(fn, args)
        out = undef(ty)
        for lane in range(ty.count):
            k = ir.Constant(I32, lane)
            lane_args = [self.builder.extract_element(a, k) for a in args]
            out = self.builder.insert_element(out, self.builder.call(fn, lane_args), k)
        return out

    # A call lane by lane on scalable vectors: a loop over the vscale * count lanes
    #   loop: %k = phi [0, ...] ; %out = insertelement %out, (call @f(extractelement %a, %k)), %k
    def _scalable_lanewise(self, fn, args: list):
        b, ty = self.builder, args[0].type
        vscale = b.call(self.declare_intrinsic("llvm.vscale", I32, []), [])
        count = b.mul(vscale, ir.Constant(I32, ty.count))
        pre, loop = b.block, b.append_basic_block("lanewise")
        done = b.append_basic_block("lanewise_end")
        b.branch(loop)
        b.position_at_end(loop)
        k, out = b.phi(I32), b.phi(ty)
        lane = b.call(fn, [b.extract_element(a, k) for a in args])
        new = b.insert_element(out, lane, k)
        step = b.add(k, ir.Constant(I32, 1), flags=("nuw", "nsw"))
        k.add_incoming(ir.Constant(I32, 0), pre)
        k.add_incoming(step, loop)
        out.add_incoming(ir.Constant(ty, ir.Undefined), pre)
        out.add_incoming(new, loop)
        b.cbranch(b.icmp_unsigned("<", step, count), loop, done)  # vscale >= 1: one lane at least
        b.position_at_end(done)
        return new

    # ------------------------------------------------------------ float helpers

    def intrin_rsqrt(self, op):
        x = self.visit_expr(op.args[0])

        def emit(xs):
            root = self.call_float_intrinsic("llvm.sqrt", xs)
            return self.builder.fdiv(splat_constant(root.type, 1.0), root, flags=self.fmf)

        return self._in_float(op.dtype, [x], emit)

    def intrin_sigmoid(self, op):
        x = self.visit_expr(op.args[0])

        def emit(xs):
            one = splat_constant(xs[0].type, 1.0)
            e = self.call_float_intrinsic("llvm.exp", [self.builder.fneg(xs[0], flags=self.fmf)])
            return self.builder.fdiv(one, self.builder.fadd(one, e, flags=self.fmf),
                                     flags=self.fmf)

        return self._in_float(op.dtype, [x], emit)

    def intrin_isnan(self, op):
        x = self._widened(op.args[0])
        return self.builder.fcmp_unordered("uno", x, x)

    def intrin_isinf(self, op):
        x = self._widened(op.args[0])
        mag = self.call_float_intrinsic("llvm.fabs", [x])
        return self.builder.fcmp_ordered("==", mag, splat_constant(x.type, float("inf")))

    def _widened(self, arg):
        """``arg`` evaluated, a bfloat16 widened to float32 (exactly) for a test of its value."""
        return self.in_bf16_float32(arg.dtype, [self.visit_expr(arg)], lambda xs: xs[0],
                                    narrow=False)

    # ------------------------------------------------------------ integer helpers

    def _bitwise(self, op, name: str):
        a, b = self.visit_expr(op.args[0]), self.visit_expr(op.args[1])
        return getattr(self.builder, name)(a, b)

    def intrin_bitwise_and(self, op):
        return self._bitwise(op, "and_")

    def intrin_bitwise_or(self, op):
        return self._bitwise(op, "or_")

    def intrin_bitwise_xor(self, op):
        return self._bitwise(op, "xor")

    def intrin_bitwise_not(self, op):
        value = self.visit_expr(op.args[0])  # xor with all ones (not_ lists lanes)
        return self.builder.xor(value, splat_constant(value.type, -1))

    def intrin_shift_left(self, op):
        return self._bitwise(op, "shl")

    def intrin_shift_right(self, op):
        signed = dt.DataType(op.dtype).is_int
        return self._bitwise(op, "ashr" if signed else "lshr")

    def intrin_popcount(self, op):
        x = self.visit_expr(op.args[0])
        fn = self.declare_intrinsic("llvm.ctpop", x.type, [x.type])
        return self.builder.call(fn, [x])

    # ------------------------------------------------------------ control and misc

    def intrin_reinterpret(self, op):
        return self.builder.bitcast(self.visit_expr(op.args[0]), ir_type(op.dtype))

    def intrin_likely(self, op):
        return self.visit_expr(op.args[0])

    def intrin_vscale(self, op):
        ty = ir_type(op.dtype)
        return self.builder.call(self.declare_intrinsic("llvm.vscale", ty, []), [])

    # get_active_lane_mask(base, limit): lane k is base + k < limit, compared as signed
    # TIR integers. LLVM's intrinsic compares unsigned (a negative limit would turn every
    # lane on), so it gets the count of active lanes, clamped at 0, from lane 0:
    #   %d = sub i32 %limit, %base
    #   %n = select i1 (icmp slt i32 %d, 0), i32 0, i32 %d
    #   %m = call <4 x i1> @llvm.get.active.lane.mask.v4i1.i32(i32 0, i32 %n)
    def intrin_get_active_lane_mask(self, op):
        base, limit = (self.visit_expr(a) for a in op.args)
        count = self.builder.sub(limit, base)
        zero_ = ir.Constant(count.type, 0)
        count = self.builder.select(self.builder.icmp_signed("<", count, zero_), zero_, count)
        ret = ir_type(op.dtype)
        fn = self.declare_intrinsic("llvm.get.active.lane.mask", ret, [count.type, count.type],
                                    overloads=[ret, count.type])
        return self.builder.call(fn, [zero_, count])

    def intrin_undef(self, op):
        return undef(ir_type(op.dtype))

    def intrin_assume(self, op):
        cond = self.visit_expr(op.args[0])
        self.builder.call(declare(self.module, "llvm.assume", ir.VoidType(), [cond.type]), [cond])
        return zero(ir_type(op.dtype))

    def intrin_address_of(self, op):
        load = op.args[0]
        return self.element_address(load.buffer, load.indices)

    # if_then_else(c, t, f): a scalar condition branches so only the taken side
    # runs (it may guard an out-of-bounds load); vectors blend with `select`.
    def intrin_if_then_else(self, op):
        cond_expr, t_expr, f_expr = op.args
        if dt.lanes_of(op.dtype) > 1 and dt.lanes_of(cond_expr.dtype) > 1:
            cond = self.visit_expr(cond_expr)
            return self.builder.select(cond, self.visit_expr(t_expr), self.visit_expr(f_expr))
        cond = self.visit_expr(cond_expr)
        with self.builder.if_else(cond) as (then, otherwise):
            with then:
                t_val, t_block = self.visit_expr(t_expr), self.builder.block
            with otherwise:
                f_val, f_block = self.visit_expr(f_expr), self.builder.block
        phi = self.builder.phi(t_val.type)
        phi.add_incoming(t_val, t_block)
        phi.add_incoming(f_val, f_block)
        return phi

    def intrin_call_extern(self, op):
        name = op.args[0].value
        args = [self.visit_expr(a) for a in op.args[1:]]
        ret = ir_type(op.dtype)
        fn = declare(self.module, name, ret, [a.type for a in args])
        return self.builder.call(fn, args)

    intrin_call_pure_extern = intrin_call_extern

    # call_llvm_pure_intrin(name, n, *args): `call <ret> @<name>(<args>)`, declared from the
    # types at hand. LLVM aborts the process on a wrong declaration or an intrinsic the CPU
    # lacks, so each distinct call is compiled once in a child process first.
    def intrin_call_llvm_pure_intrin(self, op):
        name = op.args[0].value
        args = [self._intrinsic_operand(a) for a in op.args[2:]]
        ret = ir_type(op.dtype)
        if dt.element_of(op.dtype) == "bfloat16":
            raise ValueError(f"codegen: {name} returns bfloat16; tirlite passes bfloat16 to LLVM "
                             f"intrinsics as operands only (reinterpret the result's bits)")
        types = [a.type for a in args]
        check_intrinsic(name, str(ret), tuple(str(t) for t in types), self.target)
        fn = self.module.globals.get(name)
        wanted = ir.FunctionType(ret, types)
        if fn is not None and str(fn.function_type) != str(wanted):
            raise ValueError(f"codegen: the LLVM intrinsic {name} is called with two signatures "
                             f"in one module: {fn.function_type} and {wanted}")
        return self.builder.call(fn or ir.Function(self.module, wanted, name), args)

    intrin_call_llvm_intrin = intrin_call_llvm_pure_intrin

    def _intrinsic_operand(self, arg):
        # tirlite keeps bfloat16 as i16 bits; an intrinsic that takes bfloat (vdpbf16ps) gets
        # LLVM's bfloat type, the same bits.
        value = self.visit_expr(arg)
        if dt.element_of(arg.dtype) == "bfloat16":
            return as_llvm_bfloat(self.builder, value)
        return value

    # ------------------------------------------------------------ horizontal reductions

    # tir.vector_reduce_<op>(v) -> the scalar op-reduction of the lanes of v, as
    #   %r = call T @llvm.vector.reduce.<op>.v8T(<8 x T> %v)
    # A float sum or product is ordered, in lane order: fadd(-0.0, v), or from the
    # second argument, tir.vector_reduce_add(v, start) = ((start + v0) + v1) + ...
    # tir.vector_reduce_add_reassoc / _mul_reassoc may sum in any order (the call has
    # the `reassoc` flag, so LLVM reduces by halving): VectorizeReductions emits them
    # where the user's vectorized loop permits reassociation.
    def _reduce(self, op, kind: str, reassoc: bool = False):
        t = dt.DataType(op.args[0].dtype)
        if t.is_bfloat16:
            return self._reduce_bfloat16(op, kind)
        vec = self.visit_expr(op.args[0])
        name = _REDUCE_FLOAT[kind] if t.is_float else _REDUCE_INT[kind]
        if t.is_uint or t.is_bool:
            name = name.replace(".smin", ".umin").replace(".smax", ".umax")
        elem = vec.type.element
        fmf = self.fmf or (("reassoc",) if reassoc else ())
        if t.is_float and kind in ("add", "mul"):
            start = (self.visit_expr(op.args[1]) if len(op.args) > 1
                     else splat_constant(elem, -0.0 if kind == "add" else 1.0))
            if kind == "mul" and not fmf and isinstance(vec.type, ScalableVectorType):
                return self._ordered_scalable_product(vec, start)
            fn = self.declare_intrinsic(name, elem, [elem, vec.type], overloads=[vec.type])
            return self.builder.call(fn, [start, vec], fastmath=fmf)
        if len(op.args) > 1:
            raise ValueError(f"codegen: {op.op} takes a start value on float add/mul only")
        fn = self.declare_intrinsic(name, elem, [vec.type], overloads=[vec.type])
        return self.builder.call(fn, [vec], fastmath=self.fmf if t.is_float else ())

    # bfloat16 lanes: min/max in float32 are exact; a sum or product would have to round
    # after every lane (as the serial loop does), which no LLVM reduction does.
    def _reduce_bfloat16(self, op, kind: str):
        if kind not in ("min", "max"):
            raise ValueError(
                f"codegen: {op.op} on {op.args[0].dtype} is not supported (a bfloat16 sum or "
                "product rounds after every lane); reduce in float32 and cast the result")
        vec = self.visit_expr(op.args[0])
        wide = float32_like(op.args[0].dtype)
        vec = self.cast(op.args[0].dtype, wide, vec)
        elem = vec.type.element
        fn = self.declare_intrinsic(_REDUCE_FLOAT[kind], elem, [vec.type], overloads=[vec.type])
        return self.cast("float32", op.dtype, self.builder.call(fn, [vec], fastmath=self.fmf))

    # An ordered float product of a scalable vector: LLVM's AArch64 backend cannot lower
    # llvm.vector.reduce.fmul on scalable types (it aborts the process: "Expanding
    # reductions for scalable vectors is undefined"; SVE has an ordered fadda, but no
    # ordered multiply), so the lanes are multiplied in lane order by a loop:
    #   %n = mul i32 lanes, vscale ; acc = start
    #   loop: %k = phi [0, ...] ; acc = fmul acc, (extractelement %v, %k) ; k < %n
    def _ordered_scalable_product(self, vec, start):
        b = self.builder
        vscale = b.call(self.declare_intrinsic("llvm.vscale", I32, []), [])
        count = b.mul(vscale, ir.Constant(I32, vec.type.count))
        pre, loop = b.block, b.append_basic_block("reduce_fmul")
        done = b.append_basic_block("reduce_fmul_end")
        b.branch(loop)
        b.position_at_end(loop)
        k, acc = b.phi(I32), b.phi(start.type)
        product = b.fmul(acc, b.extract_element(vec, k))
        step = b.add(k, ir.Constant(I32, 1), flags=("nuw", "nsw"))
        k.add_incoming(ir.Constant(I32, 0), pre)
        k.add_incoming(step, loop)
        acc.add_incoming(start, pre)
        acc.add_incoming(product, loop)
        b.cbranch(b.icmp_unsigned("<", step, count), loop, done)  # vscale >= 1: one lane at least
        b.position_at_end(done)
        return product


def _reducer(kind: str, reassoc: bool = False):
    def method(self, op):
        return self._reduce(op, kind, reassoc)

    method.__name__ = f"intrin_vector_reduce_{kind}" + ("_reassoc" if reassoc else "")
    return method


_REDUCE_INT = {k: f"llvm.vector.reduce.{v}" for k, v in (
    ("add", "add"), ("mul", "mul"), ("and", "and"), ("or", "or"), ("xor", "xor"),
    ("min", "smin"), ("max", "smax"))}
#: Float min/max reduce with tir.min/tir.max's meaning (NaN wins, -0.0 < +0.0).
_REDUCE_FLOAT = {"add": "llvm.vector.reduce.fadd", "mul": "llvm.vector.reduce.fmul",
                 "min": "llvm.vector.reduce.fminimum", "max": "llvm.vector.reduce.fmaximum"}
for _kind in _REDUCE_INT:
    setattr(IntrinsicCodegen, f"intrin_vector_reduce_{_kind}", _reducer(_kind))
for _kind in ("add", "mul"):
    setattr(IntrinsicCodegen, f"intrin_vector_reduce_{_kind}_reassoc", _reducer(_kind, True))
