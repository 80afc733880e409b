"""Builders for intrinsic calls: math (``exp``, ``fma``), bit operations,
``if_then_else``, ``reinterpret``, ``likely``, ``vscale``, ``get_active_lane_mask``
and extern calls.

Each returns a ``Call`` whose ``op`` names an entry of ``tir.intrin``'s table
(or folds to a constant). ``tir.op`` re-exports all of them, so
``tir.op.exp`` works as in TVM.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

from . import dtype as dt
from .expr import Call, FloatImm, IntImm, PrimExpr, Select
from .op import (
    _as_bool,
    _consts,
    _make_const,
    add,
    const,
    convert,
    is_const_int,
    neg,
    promote,
)

# ---------------------------------------------------------------- calls and intrinsics


def call_intrin(dtype: str, op: str, *args: Any) -> Call:
    """A call of the intrinsic ``op`` (for example ``"tir.exp"``)."""
    return Call(dtype, op, [convert(a) for a in args])


def call_extern(dtype: str, func_name: str, *args: Any) -> Call:
    """A call of the external C function ``func_name``."""
    return Call(dtype, "tir.call_extern", [_string(func_name)] + [convert(a) for a in args])


def call_pure_extern(dtype: str, func_name: str, *args: Any) -> Call:
    """A call of an external C function without side effects."""
    return Call(dtype, "tir.call_pure_extern", [_string(func_name)] + [convert(a) for a in args])


def call_llvm_pure_intrin(dtype: str, name: str, num_signature_args: Any, *args: Any) -> Call:
    """A call of the LLVM intrinsic ``name`` (``"llvm.x86.avx512.vpdpbusd.512"``) without side
    effects, as TVM's: ``num_signature_args`` is kept for TVM's spelling and not used (LLVM's
    declaration comes from the argument and result types). Codegen checks, before LLVM sees
    it, that the intrinsic exists with these types and that the target can select it."""
    return Call(dtype, "tir.call_llvm_pure_intrin",
                [_intrinsic_name(name), convert(num_signature_args)] + [convert(a) for a in args])


def call_llvm_intrin(dtype: str, name: str, num_signature_args: Any, *args: Any) -> Call:
    """As ``call_llvm_pure_intrin``, for an LLVM intrinsic that may have side effects."""
    return Call(dtype, "tir.call_llvm_intrin",
                [_intrinsic_name(name), convert(num_signature_args)] + [convert(a) for a in args])


def llvm_lookup_intrinsic_id(name: str):
    """The handle of LLVM intrinsic ``name`` for ``call_llvm_(pure_)intrin``: here its name
    (TVM looks up a number; tirlite keeps the name, so printed IR stays readable)."""
    return _intrinsic_name(name)


def _intrinsic_name(name: Any):
    from .expr import StringImm

    if isinstance(name, StringImm):
        name = name.value
    if not isinstance(name, str) or not name.startswith("llvm."):
        raise ValueError(f"call_llvm_intrin: expected an LLVM intrinsic name such as "
                         f"'llvm.x86.avx512.vpdpbusd.512', got {name!r}")
    return StringImm(name)


def _string(s: str):
    from .expr import StringImm

    return StringImm(s)


def _float_unary(name: str):
    op = f"tir.{name}"

    def make(x: Any) -> PrimExpr:
        x = convert(x)
        if not dt.DataType(x.dtype).is_float:
            raise TypeError(f"tir.{name} needs a float argument, got {x.dtype}")
        return Call(x.dtype, op, [x])

    make.__name__ = make.__qualname__ = name
    make.__doc__ = f"Element-wise ``{name}(x)`` of a float expression."
    return make


exp = _float_unary("exp")
exp2 = _float_unary("exp2")
exp10 = _float_unary("exp10")
log = _float_unary("log")
log2 = _float_unary("log2")
log10 = _float_unary("log10")
log1p = _float_unary("log1p")
sqrt = _float_unary("sqrt")
rsqrt = _float_unary("rsqrt")
sin = _float_unary("sin")
cos = _float_unary("cos")
tan = _float_unary("tan")
tanh = _float_unary("tanh")
sigmoid = _float_unary("sigmoid")
erf = _float_unary("erf")
floor = _float_unary("floor")
ceil = _float_unary("ceil")
trunc = _float_unary("trunc")
round = _float_unary("round")  # noqa: A001 (TVM's name)
round.__doc__ = "Element-wise ``round(x)``: to the nearest integer, halves to even (as np.round)."
nearbyint = _float_unary("nearbyint")


def abs(x: Any) -> PrimExpr:  # noqa: A001 (TVM's name)
    """``|x|``; unsigned values and bools are returned as they are."""
    x = convert(x)
    t = dt.DataType(x.dtype)
    if t.is_uint or t.is_bool:
        return x
    if isinstance(x, (IntImm, FloatImm)):
        # copysign, not `x < 0`: -0.0 is not below zero, yet |-0.0| is +0.0
        return _make_const(x.dtype, math.copysign(x.value, 1.0) if t.is_float else
                           -x.value if x.value < 0 else x.value)
    if t.is_int:
        return Select(x >= 0, x, neg(x))
    return Call(x.dtype, "tir.fabs", [x])


def pow(x: Any, y: Any) -> PrimExpr:  # noqa: A001 (TVM's name)
    """``x ** y`` on floats."""
    x, y = promote(x, y, "pow")
    if not dt.DataType(x.dtype).is_float:
        raise TypeError(f"tir.pow needs float arguments, got {x.dtype}")
    return Call(x.dtype, "tir.pow", [x, y])


def fma(a: Any, b: Any, c: Any) -> PrimExpr:
    """``a * b + c`` as one fused operation."""
    a, b = promote(a, b, "fma")
    a, c = promote(a, c, "fma")
    b, _ = promote(b, a, "fma")
    return Call(a.dtype, "tir.fma", [a, b, c])


def isnan(x: Any) -> PrimExpr:
    """Whether ``x`` is NaN (false for integers)."""
    x = convert(x)
    lanes = x.dtype[len(dt.element_of(x.dtype)):]
    if not dt.DataType(x.dtype).is_float:
        return const(False, "bool" + lanes)
    return Call("bool" + lanes, "tir.isnan", [x])


def isinf(x: Any) -> PrimExpr:
    """Whether ``x`` is infinite (false for integers)."""
    x = convert(x)
    lanes = x.dtype[len(dt.element_of(x.dtype)):]
    if not dt.DataType(x.dtype).is_float:
        return const(False, "bool" + lanes)
    return Call("bool" + lanes, "tir.isinf", [x])


def _int_binary(name: str, fold):
    op = f"tir.{name}"

    def make(a: Any, b: Any) -> PrimExpr:
        a, b = promote(a, b, name)
        if not dt.DataType(a.dtype).is_integer:
            raise TypeError(f"tir.{name} needs integer operands, got {a.dtype}")
        c = _consts(a, b)
        if c is not None:
            return _make_const(a.dtype, fold(*c))
        return Call(a.dtype, op, [a, b])

    make.__name__ = make.__qualname__ = name
    make.__doc__ = f"Element-wise ``{name}`` of two integer expressions."
    return make


bitwise_and = _int_binary("bitwise_and", lambda x, y: x & y)
bitwise_or = _int_binary("bitwise_or", lambda x, y: x | y)
bitwise_xor = _int_binary("bitwise_xor", lambda x, y: x ^ y)
shift_left = _int_binary("shift_left", lambda x, y: x << y)
shift_right = _int_binary("shift_right", lambda x, y: x >> y)


def bitwise_not(a: Any) -> PrimExpr:
    """``~a`` on an integer expression."""
    a = convert(a)
    if not dt.DataType(a.dtype).is_integer:
        raise TypeError(f"tir.bitwise_not needs an integer operand, got {a.dtype}")
    if isinstance(a, IntImm):
        return _make_const(a.dtype, ~a.value)
    return Call(a.dtype, "tir.bitwise_not", [a])


def popcount(x: Any) -> PrimExpr:
    """The number of set bits of an integer."""
    x = convert(x)
    return Call(x.dtype, "tir.popcount", [x])


def if_then_else(cond: Any, t: Any, f: Any) -> PrimExpr:
    """``cond ? t : f`` evaluating only the chosen branch (unlike ``Select``)."""
    cond = _as_bool(cond, "if_then_else")
    t, f = promote(t, f, "if_then_else")
    if is_const_int(cond):
        return t if cond.value else f
    if dt.lanes_of(cond.dtype) != 1:
        raise TypeError(f"if_then_else: condition must be a scalar bool, got {cond.dtype}")
    return Call(t.dtype, "tir.if_then_else", [cond, t, f])


def reinterpret(dtype: str, value: Any) -> PrimExpr:
    """The bits of ``value`` read as ``dtype`` (of the same total width)."""
    value = convert(value)
    dtype = dt.canonical(dtype)
    src, dst = dt.DataType(value.dtype), dt.DataType(dtype)
    if src.bits * src.lanes != dst.bits * dst.lanes:
        raise TypeError(f"reinterpret: {value.dtype} and {dtype} differ in width")
    if value.dtype == dtype:
        return value
    return Call(dtype, "tir.reinterpret", [value])


def likely(cond: Any) -> PrimExpr:
    """Mark ``cond`` as the likely case (a branch hint)."""
    cond = _as_bool(cond, "likely")
    if is_const_int(cond):
        return cond
    return Call(cond.dtype, "tir.likely", [cond])


def strip_likely(cond: PrimExpr) -> PrimExpr:
    """``cond`` without a ``likely(...)`` hint around it (the fact it states)."""
    if isinstance(cond, Call) and cond.op == "tir.likely":
        return cond.args[0]
    return cond


def vscale() -> Call:
    """The hardware's vector-length multiplier (``4 * vscale()`` lanes on SVE)."""
    return Call("int32", "tir.vscale", [])


def get_active_lane_mask(dtype: str, base: Any, limit: Any) -> Call:
    """The bool vector whose lane ``k`` is ``base + k < limit`` (TVM's tail mask).

    ``dtype`` is the mask's type, a bool vector (TVM writes ``"uint1x4"``);
    ``base`` and ``limit`` are scalar integers of one dtype.
    """
    dtype = dt.canonical(dtype)
    if not (dt.DataType(dtype).is_bool and dt.DataType(dtype).is_vector):
        raise TypeError(f"get_active_lane_mask: dtype must be a bool vector such as 'uint1x4', "
                        f"got {dtype!r}")
    base, limit = promote(base, limit, "get_active_lane_mask")
    if not dt.DataType(base.dtype).is_integer or dt.DataType(base.dtype).is_vector:
        raise TypeError(f"get_active_lane_mask: base and limit must be scalar integers, "
                        f"got {base.dtype}")
    return Call(dtype, "tir.get_active_lane_mask", [base, limit])


def select(cond: Any, t: Any, f: Any) -> PrimExpr:
    """``Select(cond, t, f)`` with promotion of ``t`` and ``f``."""
    t, f = promote(t, f, "Select")
    return Select(cond, t, f)


def ret(value: Any) -> Call:
    """Return ``value`` from the function."""
    value = convert(value)
    return Call(value.dtype, "tir.ret", [value])


def sum_of(values: Sequence[Any]) -> PrimExpr:
    """The sum of a non-empty sequence of expressions."""
    it = iter(values)
    out = convert(next(it))
    for v in it:
        out = add(out, v)
    return out


__all__ = [
    "abs", "bitwise_and", "bitwise_not", "bitwise_or", "bitwise_xor", "call_extern",
    "call_intrin", "call_llvm_intrin", "call_llvm_pure_intrin", "call_pure_extern", "ceil", "cos",
    "erf", "exp", "exp10", "exp2", "floor", "fma", "get_active_lane_mask", "if_then_else",
    "isinf", "isnan", "likely", "llvm_lookup_intrinsic_id", "log", "log10", "log1p", "log2",
    "nearbyint", "popcount", "pow", "reinterpret", "ret", "round", "rsqrt", "select",
    "shift_left", "shift_right", "sigmoid", "sin", "sqrt", "strip_likely", "sum_of", "tan",
    "tanh", "trunc", "vscale",
]
