"""Building expressions: constants, TVM's type promotion, folding, intrinsics.

The Python operators on ``PrimExpr`` call the functions here. They differ
from the bare node constructors in two ways, both as in TVM:

- promotion: a Python number takes the other operand's dtype; an int meeting
  a float is cast to the float type; narrower types widen to wider ones; a
  scalar meeting a vector is broadcast. What cannot be unified raises
  ``TypeError`` naming both dtypes.
- folding: constants fold (``const(2) * 3`` is ``IntImm(6)``) and trivial
  identities vanish (``x + 0`` is ``x``, ``x * 1`` is ``x``).

>>> x = var("x")
>>> (x + 0) is x
True
>>> (const(2) * 3).value
6
"""

from __future__ import annotations

import builtins
import functools
import math
from typing import Any

from . import dtype as dt
from .expr import (
    EQ,
    GE,
    GT,
    LE,
    LT,
    NE,
    Add,
    And,
    Broadcast,
    Cast,
    Div,
    FloatImm,
    FloorDiv,
    FloorMod,
    IntImm,
    Max,
    Min,
    Mod,
    Mul,
    Not,
    Or,
    PrimExpr,
    SizeVar,
    Sub,
    Var,
)
from .node import DivideByZeroError
from .op_fold import float_floordiv as _float_floordiv
from .op_fold import to_float as _to_float
from .op_fold import trunc_div as _trunc_div
from .op_fold import wrap as _wrap

Number = (bool, int, float)
_FLOAT32_MAX = 3.40282347e38
_INT_DTYPES = frozenset(f"{kind}{bits}" for kind in ("int", "uint") for bits in (8, 16, 32, 64))


# ---------------------------------------------------------------- constants


def const(value: Any, dtype: str | None = None) -> PrimExpr:
    """A constant: int -> int32, float -> float32, bool -> bool by default, as in TVM.

    An int outside int32 becomes int64, a float outside float32's range float64.

    A vector dtype gives a ``Broadcast`` of the scalar constant.
    """
    if isinstance(value, PrimExpr):
        return value if dtype is None else cast(dtype, value)
    if hasattr(value, "dtype") and hasattr(value, "item"):  # NumPy scalar
        dtype = dtype or str(value.dtype)
        value = value.item()
    if type(value) is int and (dtype is None or dtype in _INT_DTYPES):  # the common case
        return IntImm(dtype or _int_dtype(value), value)
    if dtype is None:
        dtype = _scalar_dtype(value)
    t = dt.DataType(dtype)
    if t.is_vector:
        return Broadcast(const(value, str(t.element_of)), _lanes_arg(t))
    if t.is_float:
        return FloatImm(str(t), _to_float(value, t))
    if t.is_bool:
        return IntImm("bool", 1 if value else 0)
    if t.is_integer:
        if isinstance(value, float) and not value.is_integer():
            raise TypeError(f"const: {value!r} is not an integer, cannot make {dtype}")
        return IntImm(str(t), int(value))
    raise TypeError(f"const: cannot make a constant of dtype {dtype}")


def _int_dtype(value: int) -> str:
    return "int32" if -(2**31) <= value < 2**31 else "int64"


def _scalar_dtype(value: Any) -> str:
    """The dtype TVM infers for a Python number: int32 (int64 if it does not fit), float32
    (float64 if it is finite and beyond float32's range), bool.

    TVM's range check also sends NaN and the infinities to float64; they are
    float32 values too, so here they stay float32 like every other float.
    """
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return _int_dtype(value)
    if isinstance(value, float):
        beyond_float32 = math.isfinite(value) and builtins.abs(value) > _FLOAT32_MAX
        return "float64" if beyond_float32 else "float32"
    raise TypeError(f"const: cannot make a constant of {type(value).__name__} {value!r}")


def _lanes_arg(t: dt.DataType) -> Any:
    return vscale() * t.lanes if t.is_scalable else t.lanes   # TVM's order: vscale() * k


def convert(value: Any) -> PrimExpr:
    """A Python number (or expression) as an expression."""
    if isinstance(value, PrimExpr):
        return value
    if isinstance(value, Number) or hasattr(value, "item"):
        return const(value)
    raise TypeError(f"cannot convert {type(value).__name__} {value!r} to a TIR expression")


def var(name: str = "tindex", dtype: str = "int32") -> Var:
    """A new variable (``tvm.te.var``)."""
    return Var(name, dtype)


def size_var(name: str = "size", dtype: str = "int32") -> SizeVar:
    """A new non-negative variable."""
    return SizeVar(name, dtype)


def max_value(dtype: str) -> PrimExpr:
    """The largest value of a scalar dtype as a constant."""
    return const(dt.DataType(dtype).max_value(), dtype)


def min_value(dtype: str) -> PrimExpr:
    """The smallest value of a scalar dtype as a constant."""
    return const(dt.DataType(dtype).min_value(), dtype)


def is_const_int(e: Any, value: int | None = None) -> bool:
    """``e`` is an integer constant (equal to ``value`` if given)."""
    return isinstance(e, IntImm) and (value is None or e.value == value)


def const_value(e: Any) -> int | float | None:
    """The Python value of a scalar constant, else None."""
    if isinstance(e, (IntImm, FloatImm)):
        return e.value
    return None


# ---------------------------------------------------------------- promotion


def cast(dtype: str, value: Any) -> PrimExpr:
    """``value`` as ``dtype``; scalars broadcast to a vector dtype; constants fold."""
    dt.check_cast_order("tir.cast", dtype, value)
    value = convert(value)
    dtype = dt.canonical(dtype)
    if value.dtype == dtype:
        return value
    target = dt.DataType(dtype)
    if dt.lanes_of(value.dtype) == 1 and target.is_vector:
        return Broadcast(cast(str(target.element_of), value), _lanes_arg(target))
    if isinstance(value, (IntImm, FloatImm)) and target.is_scalar:
        return _fold_cast(value, target)
    return Cast(dtype, value)


def _fold_cast(value: PrimExpr, target: dt.DataType) -> PrimExpr:
    v = value.value
    if target.is_float:
        return FloatImm(str(target), _to_float(v, target))
    if target.is_bool:
        return IntImm("bool", 1 if v else 0)
    if isinstance(v, float):
        if math.isnan(v) or math.isinf(v):
            return Cast(str(target), value)
        v = int(v)  # C truncation towards zero
    return IntImm(str(target), _wrap(v, target))


def _operand(value: Any, other: Any) -> PrimExpr:
    if isinstance(value, PrimExpr):
        return value
    as_var = getattr(value, "as_operand", None)  # a te axis (IterVar) stands for its var
    if as_var is not None:
        return as_var()
    if not isinstance(value, Number) and not hasattr(value, "item"):
        raise TypeError(f"cannot use {type(value).__name__} {value!r} in a TIR expression")
    if isinstance(other, PrimExpr) and other.dtype != "handle":
        elem, is_float, is_bool = _element_kind(other.dtype)
        if not (isinstance(value, float) and not is_float):
            if is_bool and not isinstance(value, bool):
                return const(value)
            return const(value, elem)
    return const(value)


@functools.lru_cache(maxsize=None)
def _element_kind(dtype: str) -> tuple[str, bool, bool]:
    """(element dtype, is float, is bool) of ``dtype``: what a number next to it becomes."""
    elem = dt.DataType(dt.element_of(dtype))
    return str(elem), elem.is_float, elem.is_bool


def promote(a: Any, b: Any, owner: str = "operator") -> tuple[PrimExpr, PrimExpr]:
    """Both operands converted to one dtype, as TVM's BinaryOpMatchTypes does."""
    a, b = _operand(a, b), _operand(b, a)
    if a.dtype == b.dtype:
        return a, b
    ta, tb = dt.DataType(a.dtype), dt.DataType(b.dtype)
    if ta.is_handle or tb.is_handle:
        raise TypeError(f"{owner}: cannot use a handle in arithmetic ({a.dtype} and {b.dtype})")
    if ta.is_vector and tb.is_vector and (ta.lanes, ta.is_scalable) != (tb.lanes, tb.is_scalable):
        raise TypeError(
            f"{owner}: cannot combine vectors of different lanes: {a.dtype} and {b.dtype}"
        )
    elem = _common_element(ta.element_of, tb.element_of, a.dtype, b.dtype, owner)
    vec = ta if ta.is_vector else tb
    target = vec.with_scalable_lanes(vec.lanes) if vec.is_scalable else vec.element_of.with_lanes(
        vec.lanes
    )
    target = dt.DataType(elem.type_code, elem.bits, target.lanes, target.is_scalable)
    return cast(str(target), a), cast(str(target), b)


def _common_element(ea, eb, a_dtype: str, b_dtype: str, owner: str) -> dt.DataType:
    if ea == eb:
        return ea
    if ea.is_float or eb.is_float:
        if ea.is_float and eb.is_float:
            if ea.bits == eb.bits:  # float16 and bfloat16: neither holds the other
                raise TypeError(f"{owner}: cannot combine {a_dtype} and {b_dtype}: cast one "
                                "of them (or both, to float32) first")
            return ea if ea.bits >= eb.bits else eb
        return ea if ea.is_float else eb
    if ea.is_bool or eb.is_bool:
        return eb if ea.is_bool else ea
    if ea.type_code == eb.type_code:
        return ea if ea.bits >= eb.bits else eb
    # signed meets unsigned: the signed type of the wider width, as TVM does
    return dt.DataType("int", builtins.max(ea.bits, eb.bits))


# ---------------------------------------------------------------- arithmetic with folding


def _consts(a: PrimExpr, b: PrimExpr):
    if isinstance(a, (IntImm, FloatImm)) and isinstance(b, (IntImm, FloatImm)):
        return a.value, b.value
    return None


def _make_const(dtype: str, value: int | float) -> PrimExpr:
    t = dt.DataType(dtype)
    if t.is_float:
        return FloatImm(dtype, value)
    return IntImm(dtype, _wrap(int(value), t))


def _is_int_like(e: PrimExpr) -> bool:
    return dt.DataType(e.dtype).is_integer


def _value_of(e: PrimExpr) -> int | float | None:
    if isinstance(e, Broadcast):
        return const_value(e.value)
    return const_value(e)


def add(a: Any, b: Any) -> PrimExpr:
    """``a + b`` with promotion and folding."""
    a, b = promote(a, b, "Add")
    c = _consts(a, b)
    if c is not None:
        return _make_const(a.dtype, c[0] + c[1])
    if _value_of(b) == 0 and _is_int_like(b):
        return a
    if _value_of(a) == 0 and _is_int_like(a):
        return b
    return Add(a, b)


def sub(a: Any, b: Any) -> PrimExpr:
    """``a - b`` with promotion and folding."""
    a, b = promote(a, b, "Sub")
    c = _consts(a, b)
    if c is not None:
        return _make_const(a.dtype, c[0] - c[1])
    if _value_of(b) == 0 and _is_int_like(b):
        return a
    return Sub(a, b)


def mul(a: Any, b: Any) -> PrimExpr:
    """``a * b`` with promotion and folding."""
    a, b = promote(a, b, "Mul")
    c = _consts(a, b)
    if c is not None:
        return _make_const(a.dtype, c[0] * c[1])
    if _is_int_like(a):
        for x, y in ((a, b), (b, a)):
            if _value_of(y) == 1:
                return x
            if _value_of(y) == 0:
                return y
    return Mul(a, b)


def neg(a: PrimExpr) -> PrimExpr:
    """``-a``."""
    if isinstance(a, (IntImm, FloatImm)):
        return _make_const(a.dtype, -a.value)
    if dt.DataType(a.dtype).is_uint:  # -1 is not a uint: negate as 0 - a, wrapping
        return sub(const(0, dt.element_of(a.dtype)), a)
    return mul(a, const(-1, dt.element_of(a.dtype)))


def _check_div(owner: str, a: PrimExpr, b: PrimExpr) -> None:
    """TVM's "Divide by zero" check: an integer divisor that is the constant zero.

    The error is a ``tir.TVMError`` (as TVM raises) and a ``ZeroDivisionError``.
    """
    if _is_int_like(b) and _value_of(b) == 0:
        dividend = str(a) if len(str(a)) <= 60 else str(a)[:57] + "..."
        raise DivideByZeroError(
            f"{owner}: division by the constant zero (TVM: Divide by zero): {dividend} by {b}"
        )


def truncdiv(a: Any, b: Any) -> PrimExpr:
    """C-style integer division (rounds towards zero); true division on floats."""
    a, b = promote(a, b, "Div")
    _check_div("truncdiv", a, b)
    c = _consts(a, b)
    if c is not None:
        if not _is_int_like(a):
            return _float_div(a, *c) if c[1] != 0 else Div(a, b)
        return _make_const(a.dtype, _trunc_div(*c))
    if _is_int_like(b) and _value_of(b) == 1:
        return a
    return Div(a, b)


def _float_div(a: PrimExpr, x: float, y: float) -> PrimExpr:
    return _make_const(a.dtype, x / y)


def truncmod(a: Any, b: Any) -> PrimExpr:
    """C-style remainder (the sign of ``a``)."""
    a, b = promote(a, b, "Mod")
    _check_div("truncmod", a, b)
    c = _consts(a, b)
    if c is not None and _is_int_like(a):
        return _make_const(a.dtype, c[0] - _trunc_div(*c) * c[1])
    if _is_int_like(b) and _value_of(b) == 1:
        return cast(a.dtype, 0)
    return Mod(a, b)


def floordiv(a: Any, b: Any) -> PrimExpr:
    """Integer division rounding towards negative infinity (``a // b``)."""
    a, b = promote(a, b, "FloorDiv")
    _check_div("floordiv", a, b)
    c = _consts(a, b)
    if c is not None and _is_int_like(a):
        return _make_const(a.dtype, c[0] // c[1])
    if c is not None and c[1] != 0:
        return FloatImm(a.dtype, _float_floordiv(a.dtype, *c))
    if _is_int_like(b) and _value_of(b) == 1:
        return a
    return FloorDiv(a, b)


def ceildiv(a: Any, b: Any) -> PrimExpr:
    """Integer division rounding up (TVM's ``ceildiv``): ``floordiv(a + b - 1, b)``.

    >>> ceildiv(16, vscale() * 4)   # full scalable vectors covering 16 elements
    (16 + T.vscale() * 4 - 1) // (T.vscale() * 4)
    """
    a, b = promote(a, b, "ceildiv")
    return floordiv(sub(add(a, b), const(1, b.dtype)), b)


def floormod(a: Any, b: Any) -> PrimExpr:
    """The remainder of ``floordiv`` (the sign of ``b``; ``a % b``)."""
    a, b = promote(a, b, "FloorMod")
    _check_div("floormod", a, b)
    c = _consts(a, b)
    if c is not None and _is_int_like(a):
        return _make_const(a.dtype, c[0] % c[1])
    if _is_int_like(b) and _value_of(b) == 1:
        return cast(a.dtype, 0)
    return FloorMod(a, b)


def div(a: Any, b: Any) -> PrimExpr:
    """``Div``: truncated on integers, true division on floats."""
    return truncdiv(a, b)


indexdiv, indexmod = floordiv, floormod


def true_divide(a: Any, b: Any) -> PrimExpr:
    """``a / b`` on floats; integers must say which division they mean."""
    a, b = promote(a, b, "Div")
    if _is_int_like(a) or dt.DataType(a.dtype).is_bool:
        raise TypeError(
            f"'/' on integers ({a.dtype}) is ambiguous: use tir.floordiv / tir.floormod "
            "(also '//' and '%'), or tir.truncdiv / tir.truncmod"
        )
    return truncdiv(a, b)


def min(a: Any, b: Any) -> PrimExpr:  # noqa: A001 (TVM's name)
    """The smaller of ``a`` and ``b``; on floats NaN if either is NaN, and -0.0 < +0.0.

    Float ``Min`` is IEEE 754-2019 ``minimum`` (LLVM's ``llvm.minimum``): NaN
    propagates as in ``np.minimum``, and the result does not depend on the
    operand order, so vectorized reductions agree with the serial loop.
    """
    a, b = promote(a, b, "Min")
    c = _consts(a, b)
    if c is not None:
        return _fold_min_max(a, b, c, smaller=True)
    return a if a is b else Min(a, b)


def max(a: Any, b: Any) -> PrimExpr:  # noqa: A001 (TVM's name)
    """The larger of ``a`` and ``b``; on floats NaN if either is NaN, and +0.0 > -0.0.

    Float ``Max`` is IEEE 754-2019 ``maximum`` (``llvm.maximum``), see ``min``.
    """
    a, b = promote(a, b, "Max")
    c = _consts(a, b)
    if c is not None:
        return _fold_min_max(a, b, c, smaller=False)
    return a if a is b else Max(a, b)


def _fold_min_max(a: PrimExpr, b: PrimExpr, c: tuple, smaller: bool) -> PrimExpr:
    """The constant ``min``/``max`` picks, with the float meaning documented on ``min``."""
    x, y = c
    if x != x or y != y:  # NaN
        return a if x != x else b
    if x == y:  # equal, but 0.0 and -0.0 differ in sign
        return a if (math.copysign(1, x) < 0) == smaller else b
    return a if (x < y) == smaller else b


# ---------------------------------------------------------------- comparisons and logic


def _compare(cls, fold, a: Any, b: Any) -> PrimExpr:
    a, b = promote(a, b, cls.__name__)
    c = _consts(a, b)
    if c is not None:
        return IntImm("bool", 1 if fold(*c) else 0)
    return cls(a, b)


def less(a: Any, b: Any) -> PrimExpr:
    """``a < b``."""
    return _compare(LT, lambda x, y: x < y, a, b)


def less_equal(a: Any, b: Any) -> PrimExpr:
    """``a <= b``."""
    return _compare(LE, lambda x, y: x <= y, a, b)


def greater(a: Any, b: Any) -> PrimExpr:
    """``a > b``."""
    return _compare(GT, lambda x, y: x > y, a, b)


def greater_equal(a: Any, b: Any) -> PrimExpr:
    """``a >= b``."""
    return _compare(GE, lambda x, y: x >= y, a, b)


def equal(a: Any, b: Any) -> PrimExpr:
    """``a == b`` as a folded expression (the ``==`` operator does not fold)."""
    return _compare(EQ, lambda x, y: x == y, a, b)


def not_equal(a: Any, b: Any) -> PrimExpr:
    """``a != b`` as a folded expression."""
    return _compare(NE, lambda x, y: x != y, a, b)


def equal_node(a: Any, b: Any) -> PrimExpr:
    """The ``==`` operator: an ``EQ`` node, unfolded, so ``bool()`` is identity."""
    if not isinstance(b, (PrimExpr, bool, int, float)) and not hasattr(b, "item"):
        return NotImplemented
    return EQ(*promote(a, b, "EQ"))


def not_equal_node(a: Any, b: Any) -> PrimExpr:
    """The ``!=`` operator: an ``NE`` node, unfolded."""
    if not isinstance(b, (PrimExpr, bool, int, float)) and not hasattr(b, "item"):
        return NotImplemented
    return NE(*promote(a, b, "NE"))


def _as_bool(value: Any, owner: str) -> PrimExpr:
    e = const(value, "bool") if isinstance(value, bool) else convert(value)
    if not e.dtype.startswith("bool"):
        raise TypeError(f"{owner}: operands must be bool, got {e.dtype}")
    return e


def logical_and(a: Any, b: Any) -> PrimExpr:
    """``a && b`` with folding of constant operands."""
    a, b = _as_bool(a, "And"), _as_bool(b, "And")
    for x, y in ((a, b), (b, a)):
        if is_const_int(x):
            return y if x.value else x
    return And(*promote(a, b, "And"))


def logical_or(a: Any, b: Any) -> PrimExpr:
    """``a || b`` with folding of constant operands."""
    a, b = _as_bool(a, "Or"), _as_bool(b, "Or")
    for x, y in ((a, b), (b, a)):
        if is_const_int(x):
            return x if x.value else y
    return Or(*promote(a, b, "Or"))


def logical_not(a: Any) -> PrimExpr:
    """``!a``."""
    a = _as_bool(a, "Not")
    if is_const_int(a):
        return IntImm("bool", 0 if a.value else 1)
    return Not(a)


def logical_or_bitwise(which: str, a: Any, b: Any) -> PrimExpr:
    """``&`` / ``|``: logical on bool operands, bitwise on integers."""
    ea = a if isinstance(a, PrimExpr) else None
    eb = b if isinstance(b, PrimExpr) else None
    ref = ea if ea is not None else eb
    if ref is not None and ref.dtype.startswith("bool"):
        return logical_and(a, b) if which == "and" else logical_or(a, b)
    return bitwise_and(a, b) if which == "and" else bitwise_or(a, b)


def invert(a: PrimExpr) -> PrimExpr:
    """``~a``: logical not on bool, bitwise not on integers."""
    if a.dtype.startswith("bool"):
        return logical_not(a)
    return bitwise_not(a)


def all(*conds: Any) -> PrimExpr:  # noqa: A001 (TVM's name)
    """The conjunction of ``conds`` (``tir.all(a, b, c)``)."""
    if len(conds) == 1 and isinstance(conds[0], (list, tuple)):
        conds = tuple(conds[0])
    if not conds:
        raise ValueError("tir.all needs at least one condition")
    out = _as_bool(conds[0], "tir.all")
    for c in conds[1:]:
        out = logical_and(out, c)
    return out


def any(*conds: Any) -> PrimExpr:  # noqa: A001 (TVM's name)
    """The disjunction of ``conds`` (``tir.any(a, b, c)``)."""
    if len(conds) == 1 and isinstance(conds[0], (list, tuple)):
        conds = tuple(conds[0])
    if not conds:
        raise ValueError("tir.any needs at least one condition")
    out = _as_bool(conds[0], "tir.any")
    for c in conds[1:]:
        out = logical_or(out, c)
    return out


# The intrinsic-call builders live in op_intrin.py; tir.op re-exports them, as TVM's tir.op does.
from .op_intrin import (  # noqa: E402,F401  (re-exported: tir.op.exp as in TVM)
    abs,
    bitwise_and,
    bitwise_not,
    bitwise_or,
    bitwise_xor,
    call_extern,
    call_intrin,
    call_llvm_intrin,
    call_llvm_pure_intrin,
    call_pure_extern,
    ceil,
    cos,
    erf,
    exp,
    exp2,
    exp10,
    floor,
    fma,
    get_active_lane_mask,
    if_then_else,
    isinf,
    isnan,
    likely,
    llvm_lookup_intrinsic_id,
    log,
    log1p,
    log2,
    log10,
    nearbyint,
    popcount,
    pow,
    reinterpret,
    ret,
    round,
    rsqrt,
    select,
    shift_left,
    shift_right,
    sigmoid,
    sin,
    sqrt,
    strip_likely,
    sum_of,
    tan,
    tanh,
    trunc,
    vscale,
)

__all__ = [name for name in dir() if not name.startswith("_")]
