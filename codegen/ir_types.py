"""Mapping TIR dtypes to LLVM types, and constants of those types.

``bool`` is ``i1`` in registers but one byte (``i8``) in memory, as NumPy
stores it; ``float16`` is LLVM ``half``. ``bfloat16`` is ``i16``, its bits: LLVM's
``bfloat`` is legal on few targets, and legalizing it there calls libgcc's
``__truncsfbf2`` (a masked store of ``<16 x bfloat>`` on AVX2) or AVX512-BF16's
``vcvtneps2bf16``, which flushes subnormals to zero; codegen/llvm/expr.py computes
on it in float32, converting with integer arithmetic. Scalable dtypes
(``float32xvscalex4``) map to ``<vscale x 4 x float>``, a type llvmlite lacks,
defined here.
"""

from __future__ import annotations

import functools

from llvmlite import ir

from tir import dtype as dt

I1, I8, I32, I64 = ir.IntType(1), ir.IntType(8), ir.IntType(32), ir.IntType(64)
PTR = ir.PointerType()
VOID = ir.VoidType()
#: The largest vscale SVE allows (2048-bit registers): bounds scalable stack allocations
#: and is the upper end of the ``vscale_range`` function attribute.
MAX_VSCALE = 16


class ScalableVectorType(ir.VectorType):
    """``<vscale x count x element>``: a vector whose length is a multiple of vscale."""

    def _to_string(self) -> str:
        return f"<vscale x {self.count} x {self.element}>"

    def wrap_constant_value(self, value):
        # Only `undef`, `zeroinitializer` and `splat (T c)` exist for scalable vectors.
        if isinstance(value, (list, tuple)):
            raise TypeError(f"a {self} constant cannot list its lanes")
        return value

    def format_constant(self, value):
        if isinstance(value, Splat):
            return f"splat ({value.scalar.type} {value.scalar.get_reference()})"
        return super().format_constant(value)


class _Whole(ir.Constant):
    """A fixed vector constant written whole (``undef``, ``zeroinitializer``).

    llvmlite writes them lane by lane (``<float undef, float undef, ...>``),
    which LLVM parses to the very same constant; whole, a 32-lane broadcast is a
    tenth of the text to format and parse. The lanes are kept for llvmlite's
    checks (``shufflevector`` reads its mask's).
    """

    def __init__(self, ty: ir.VectorType, value: object, text: str):
        super().__init__(ty, value)
        self.text = text

    def _get_reference(self) -> str:
        return self.text


def undef(ty: ir.Type) -> ir.Constant:
    """``undef`` of type ``ty``."""
    if isinstance(ty, ir.VectorType) and not isinstance(ty, ScalableVectorType):
        return _Whole(ty, ir.Undefined, "undef")
    return ir.Constant(ty, ir.Undefined)


def zeros(ty: ir.Type) -> ir.Constant:
    """``zeroinitializer`` (or ``0``) of type ``ty``."""
    if isinstance(ty, ir.VectorType) and not isinstance(ty, ScalableVectorType):
        return _Whole(ty, None, "zeroinitializer")
    return ir.Constant(ty, None)


class Splat:
    """The value of a scalable constant with ``scalar`` in every lane:
    ``ir.Constant(ScalableVectorType(...), Splat(c))`` prints ``splat (T c)``."""

    def __init__(self, scalar: ir.Constant):
        self.scalar = scalar


class BFloatType(ir.types._BaseFloatType):
    """LLVM's ``bfloat``, which llvmlite lacks: only for the operands of LLVM intrinsics
    that take it (``vdpbf16ps``); tirlite's own bfloat16 values are ``i16`` bits."""

    null = "0.0"
    intrinsic_name = "bf16"

    def __str__(self) -> str:
        return "bfloat"

    def format_constant(self, value):  # never needed: only bitcasts produce bfloat values
        raise NotImplementedError("bfloat constants are written as i16 bits")


BFloatType._create_instance()  # llvmlite's float types are singletons made this way
BFLOAT = BFloatType()


def as_llvm_bfloat(builder: ir.IRBuilder, value: ir.Value) -> ir.Value:
    """``i16`` bits (a bfloat16 value or vector) bit-cast to LLVM ``bfloat``."""
    ty = value.type
    new = ir.VectorType(BFLOAT, ty.count) if isinstance(ty, ir.VectorType) else BFLOAT
    return builder.bitcast(value, new)


_SCALARS = {
    "bool": I1, "int8": I8, "int16": ir.IntType(16), "int32": I32, "int64": I64,
    "uint8": I8, "uint16": ir.IntType(16), "uint32": I32, "uint64": I64,
    "float16": ir.HalfType(), "bfloat16": ir.IntType(16), "float32": ir.FloatType(),
    "float64": ir.DoubleType(),
    "handle": PTR,
}


@functools.cache
def ir_type(dtype: str) -> ir.Type:
    """The LLVM register type of ``dtype``."""
    t = dt.DataType(dtype)
    return _with_lanes(_SCALARS[str(t.element_of)], t)


@functools.cache
def memory_type(dtype: str) -> ir.Type:
    """The LLVM type ``dtype`` has in memory (bool as ``i8``)."""
    t = dt.DataType(dtype)
    element = I8 if t.is_bool else _SCALARS[str(t.element_of)]
    return _with_lanes(element, t)


def _with_lanes(element: ir.Type, t: dt.DataType) -> ir.Type:
    if t.is_scalable:
        return ScalableVectorType(element, t.lanes)
    return ir.VectorType(element, t.lanes) if t.lanes > 1 else element


@functools.cache
def element_bytes(dtype: str) -> int:
    """Bytes of one lane of ``dtype`` in memory."""
    t = dt.DataType(dtype)
    return 1 if t.is_bool else t.bits // 8


def int_constant(ty: ir.IntType, value: int) -> ir.Constant:
    """An integer constant, written in the signed range LLVM's parser accepts."""
    bits = ty.width
    value &= (1 << bits) - 1
    if bits > 1 and value >= 1 << (bits - 1):
        value -= 1 << bits
    return ir.Constant(ty, value)


def mangle(ty: ir.Type) -> str:
    """The overload suffix LLVM uses in intrinsic names: f32, v8f32, nxv4f32, i64, p0."""
    if isinstance(ty, ScalableVectorType):
        return f"nxv{ty.count}{mangle(ty.element)}"
    if isinstance(ty, ir.VectorType):
        return f"v{ty.count}{mangle(ty.element)}"
    if isinstance(ty, ir.IntType):
        return f"i{ty.width}"
    if isinstance(ty, ir.PointerType):
        return "p0"
    return {ir.HalfType: "f16", ir.FloatType: "f32", ir.DoubleType: "f64"}[type(ty)]


def declare(module: ir.Module, name: str, ret: ir.Type, args: list[ir.Type]) -> ir.Function:
    """The function ``name`` of ``module``, declared on first use."""
    fn = module.globals.get(name)
    if fn is None:
        fn = ir.Function(module, ir.FunctionType(ret, args), name)
    return fn


def lanes_of(ty: ir.Type) -> int:
    """Lanes of an LLVM value type (1 for a scalar)."""
    return ty.count if isinstance(ty, ir.VectorType) else 1


def _mask_of(instr):
    """Give a comparison of scalable vectors its scalable ``i1`` type (llvmlite uses fixed)."""
    ty = instr.operands[0].type
    if isinstance(ty, ScalableVectorType):
        instr.type = ScalableVectorType(I1, ty.count)
    return instr


class Builder(ir.IRBuilder):
    """``llvmlite.ir.IRBuilder`` whose comparisons know scalable vectors."""

    def icmp_signed(self, cmpop, lhs, rhs, name=""):
        return _mask_of(super().icmp_signed(cmpop, lhs, rhs, name))

    def icmp_unsigned(self, cmpop, lhs, rhs, name=""):
        return _mask_of(super().icmp_unsigned(cmpop, lhs, rhs, name))

    def fcmp_ordered(self, cmpop, lhs, rhs, name="", flags=()):
        return _mask_of(super().fcmp_ordered(cmpop, lhs, rhs, name, flags))

    def fcmp_unordered(self, cmpop, lhs, rhs, name="", flags=()):
        return _mask_of(super().fcmp_unordered(cmpop, lhs, rhs, name, flags))
