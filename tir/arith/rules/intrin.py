"""Rewrite rules for intrinsic calls: constant folding, and bitwise ops of equal operands.

Folding covers shifts, ``clz`` and ``ceil`` (TVM's) and does only what the
machine computes exactly: a shift by an amount in ``[0, bits)`` (others are
undefined in C and stay calls), ``clz`` of an integer constant (``bits`` for
zero, as TVM folds it), ``ceil`` of a constant. ``x & x``, ``x | x`` and
``x ^ x`` hold bit by bit, so they serve every integer dtype.
"""

from __future__ import annotations

import math

from ... import dtype as dt
from ...expr import Call, FloatImm, IntImm, PrimExpr
from ...op import cast, const
from ...op_intrin import shift_left, shift_right
from ..pattern import Rule, same_expr
from .helpers import x

_SHIFTS = {"tir.shift_left": shift_left, "tir.shift_right": shift_right}


def _fold_shift(e: Call) -> PrimExpr | None:
    a, b = e.args
    if type(a) is not IntImm or type(b) is not IntImm:
        return None
    if not 0 <= b.value < dt.DataType(a.dtype).bits:
        return None
    return cast(e.dtype, _SHIFTS[e.op](a, b))


def _fold_clz(e: Call) -> PrimExpr | None:
    (a,) = e.args
    if type(a) is not IntImm:
        return None
    bits = dt.DataType(a.dtype).bits
    return const(bits - (a.value & ((1 << bits) - 1)).bit_length(), e.dtype)


def _fold_ceil(e: Call) -> PrimExpr | None:
    (a,) = e.args
    if type(a) is IntImm:
        return cast(e.dtype, a)
    if type(a) is FloatImm and math.isfinite(a.value):
        return cast(e.dtype, FloatImm(a.dtype, float(math.ceil(a.value))))
    return None


_FOLDS = {"tir.shift_left": _fold_shift, "tir.shift_right": _fold_shift,
          "tir.clz": _fold_clz, "tir.ceil": _fold_ceil}


def fold_intrinsic(m) -> PrimExpr | None:
    """The constant value of a shift, ``clz`` or ``ceil`` call on constants, else None."""
    e = m.x
    if type(e) is not Call:
        return None
    fold = _FOLDS.get(e.op)
    if fold is None or len(e.args) != (2 if e.op in _SHIFTS else 1):
        return None
    return fold(e)


#: What a bitwise op of two equal operands ``a`` is.
_SAME_OPERANDS = {
    "tir.bitwise_and": lambda a: a,                   # x & x -> x
    "tir.bitwise_or": lambda a: a,                    # x | x -> x
    "tir.bitwise_xor": lambda a: const(0, a.dtype),   # x ^ x -> 0
}


def same_operands(m) -> PrimExpr | None:
    """``x & x``, ``x | x`` or ``x ^ x`` simplified, else None."""
    e = m.x
    if type(e) is not Call:
        return None
    result = _SAME_OPERANDS.get(e.op)
    if result is None or len(e.args) != 2 or not same_expr(*e.args):
        return None
    return result(e.args[0])


INTRIN_RULES = [
    Rule(x, fold_intrinsic),
    Rule(x, same_operands),
]
