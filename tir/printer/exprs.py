"""How the printer writes expressions: Python's operators with its precedence, ``T.`` calls,
subscripts and slices.
"""

from __future__ import annotations

from typing import Any

from ..buffer import Buffer
from ..dtype import DataType
from ..expr import (
    EQ,
    GE,
    GT,
    LE,
    LT,
    NE,
    Add,
    And,
    BufferLoad,
    Div,
    FloatImm,
    FloorDiv,
    FloorMod,
    IntImm,
    Mod,
    Mul,
    Not,
    Or,
    PrimExpr,
    Ramp,
    Sub,
    Var,
)
from ..intrin import INTRINSICS
from .base import PrinterBase
from .text import const_text, quote

# Python operator precedence, loosest first: what decides where parentheses go.
OR, AND, NOT, CMP, ADD, MUL, UNARY, ATOM = range(1, 9)

_INFIX = {
    Add: (" + ", ADD), Sub: (" - ", ADD), Mul: (" * ", MUL), FloorDiv: (" // ", MUL),
    FloorMod: (" % ", MUL), And: (" and ", AND), Or: (" or ", OR),
    EQ: (" == ", CMP), NE: (" != ", CMP), LT: (" < ", CMP), LE: (" <= ", CMP),
    GT: (" > ", CMP), GE: (" >= ", CMP),
}
_PREC = {cls: prec for cls, (_, prec) in _INFIX.items()} | {Not: NOT}
# Calls whose result dtype cannot be read off their arguments print it first.
_TYPED_CALLS = {"tir.call_extern", "tir.call_pure_extern", "tir.reinterpret",
                "tir.get_active_lane_mask", "tir.call_llvm_intrin", "tir.call_llvm_pure_intrin"}


def _tvm_dtype_text(dtype: str) -> str:
    """``dtype`` as TVM writes it in a typed call: a bool vector is ``uint1xN`` there."""
    t = DataType(dtype)
    if t.is_bool and t.is_vector and not t.is_scalable:
        return f"uint1x{t.lanes}"
    return dtype


def _prec(e: PrimExpr) -> int:
    """How tightly the text of ``e`` binds, to decide on parentheses around it."""
    cls = type(e)
    if cls is IntImm:
        return UNARY if e.value < 0 and e.dtype == "int32" else ATOM
    if cls is Div:
        return MUL if DataType(e.dtype).is_float else ATOM
    return _PREC.get(cls, ATOM)


class ExprPrinter(PrinterBase):
    """One ``visit_*`` per expression node; parentheses only where precedence needs them."""

    def operand(self, e: PrimExpr, min_prec: int) -> None:
        """``e``, in parentheses if it binds looser than ``min_prec``."""
        if _prec(e) < min_prec:
            self.out.append("(")
            self.visit_expr(e)
            self.out.append(")")
        else:
            self.visit_expr(e)

    def visit_var(self, v: Var) -> None:
        self.out.append(self.var_name(v))

    def visit_int_imm(self, e: IntImm) -> None:
        self.out.append(const_text(e))

    def visit_float_imm(self, e: FloatImm) -> None:
        self.out.append(const_text(e))

    def visit_string_imm(self, e: Any) -> None:
        self.out.append(quote(e.value))

    def visit_any(self, e: Any) -> None:
        self.out.append("T.Any()")

    def visit_binary_op_node(self, e: Any) -> None:
        self.infix(e, *_INFIX[type(e)])

    def infix(self, e: Any, text: str, prec: int) -> None:
        """``a op b``; a right operand of equal precedence is bracketed (``a - (b - c)``)."""
        if type(e.a) is IntImm and type(e.b) is IntImm and e.a.dtype == "int32":
            # `0 + 4` would read back as the Python number 4: spell the node's left constant
            self.out.append(f"T.int32({e.a.value})")
        else:
            self.operand(e.a, prec + 1 if prec == CMP else prec)  # comparisons do not chain
        self.out.append(text)
        self.operand(e.b, prec + 1)

    def visit_div(self, e: Div) -> None:
        if DataType(e.dtype).is_float:
            self.infix(e, " / ", MUL)
        else:
            self.call("T.truncdiv", e.a, e.b)

    def visit_mod(self, e: Mod) -> None:
        self.call("T.truncmod", e.a, e.b)

    def visit_min(self, e: Any) -> None:
        self.call("T.min", e.a, e.b)

    def visit_max(self, e: Any) -> None:
        self.call("T.max", e.a, e.b)

    def visit_not(self, e: Any) -> None:
        self.out.append("not ")
        self.operand(e.a, NOT)

    def visit_select(self, e: Any) -> None:
        self.call("T.Select", e.condition, e.true_value, e.false_value)

    def visit_cast(self, e: Any) -> None:
        self.out.append(f"T.Cast({quote(e.dtype)}, ")
        self.visit_expr(e.value)
        self.out.append(")")

    def visit_ramp(self, e: Ramp) -> None:
        self.out.append("T.Ramp(")
        self.args((e.base, e.stride))
        self.out.append(", ")
        self.lanes(e.lanes)
        self.out.append(")")

    def visit_broadcast(self, e: Any) -> None:
        self.out.append("T.Broadcast(")
        self.visit_expr(e.value)
        self.out.append(", ")
        self.lanes(e.lanes)
        self.out.append(")")

    def visit_shuffle(self, e: Any) -> None:
        self.out.append("T.Shuffle([")
        self.args(e.vectors)
        self.out.append("], [")
        self.args(e.indices)
        self.out.append("])")

    def visit_let(self, e: Any) -> None:
        token = self.names.define(e.var, e.var.name)
        self.out.append(f"T.let({self.var_name(e.var)}, ")
        self.args((e.value, e.body))
        self.out.append(")")
        self.names.release(token)

    def visit_call(self, e: Any) -> None:
        op = e.op
        if op in _TYPED_CALLS:
            dtype = quote(_tvm_dtype_text(e.dtype))
            self.out.append(f"T.{op[4:]}({dtype}{', ' if e.args else ''}")
            self.args(e.args)
            self.out.append(")")
        elif op.startswith("tir.") and op in INTRINSICS:
            self.call("T." + op[4:], *e.args)
        else:
            self.out.append(f"T.call_intrin({quote(e.dtype)}, {quote(op)}")
            self.out.append(", " if e.args else "")
            self.args(e.args)
            self.out.append(")")

    def visit_buffer_load(self, e: BufferLoad) -> None:
        if e.predicate is not None:
            self.out.append(f"{self.buffer_name(e.buffer)}.vload([")
            self.args(e.indices)
            self.out.append("], predicate=")
            self.visit_expr(e.predicate)
            self.out.append(")")
        else:
            self.subscript(e.buffer, e.indices)

    def subscript(self, buf: Buffer, indices: tuple) -> None:
        """``A[i, j]``; a last index ``Ramp(b, 1, n)`` prints as the slice ``b:b + n``
        when it is the only vector index (with vectors in other dimensions too, a slice
        would read as NumPy's outer indexing, so every index prints as written)."""
        if not indices:
            self.out.append(self.buffer_name(buf) + "[()]")  # a 0-d buffer
            return
        self.out.append(self.buffer_name(buf) + "[")
        last = indices[-1]
        if type(last) is Ramp and type(last.stride) is IntImm and last.stride.value == 1 \
                and not any(DataType(i.dtype).is_vector for i in indices[:-1]):
            self.args(indices[:-1])
            self.out.append(", " if len(indices) > 1 else "")
            self.operand(last.base, ADD)
            self.out.append(":")
            self.end_of(last.base, last.lanes)
        else:
            self.args(indices)
        self.out.append("]")

    def end_of(self, start: PrimExpr, length: Any) -> None:
        """``start + length`` (a slice end, a loop stop), folded when both are constants."""
        if type(start) is IntImm and isinstance(length, (int, IntImm)):
            self.out.append(const_text(IntImm(start.dtype, start.value + int(length))))
            return
        self.operand(start, ADD)
        self.out.append(" + ")
        if isinstance(length, PrimExpr):
            self.operand(length, ADD + 1)
        else:
            self.out.append(str(length))
