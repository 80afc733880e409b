"""Expression nodes of TIR.

Every expression carries its ``dtype`` (a string such as ``"float32x4"``).
Constructors accept Python numbers where an expression is expected, check
their operands and raise ``TypeError`` naming both dtypes on a mismatch.
Python operators on expressions (``+``, ``<``, ``&`` ...) build nodes with
TVM's type promotion and constant folding; see ``tir.op``.

>>> x = Var("x", "int32")
>>> e = Add(x, 1)
>>> e.dtype, e.b.value
('int32', 1)

Adding an expression node: the places that must know it
--------------------------------------------------------
1. The class, here or in ``expr_vector.py``: ``@node``, a one-sentence
   docstring, every child declared with ``expr_field``/``exprs_field``.
   The field declarations are all the visitors and mutators (``functor``),
   structural equality, hashing and digest (``structural*``) and pickling
   (``pickling``) need. Export it from ``tir/__init__.py``.
2. The printer, ``tir/printer/exprs.py``: an ``ExprPrinter.visit_<snake_name>`` method
   (without one it prints as ``T.ClassName(field=...)``).
3. The TVMScript parser, ``tir/script/``: a ``T.<ClassName>`` builder in
   ``builtins.py`` or an entry in a syntax table of ``expr.py``.
4. The vectorizer, ``transform/vector/vectorizer/expr_rules.py``:
   ``ExprVectorizer.visit_<snake_name>``.
5. The LLVM emitter, ``codegen/llvm/expr.py`` (or the mixin of its kind):
   ``visit_<snake_name>``; without one the build raises a clear error.
6. The interpreter, ``codegen/interp/machine.py``: ``Machine.visit_<snake_name>``.
7. Trace JSON, ``tir/schedule/trace_json.py``: automatic for the classes of
   ``expr.py`` and ``expr_vector.py`` (``EXPR_CLASSES``).
8. As the node needs: builders in ``op.py``, simplifier rules in ``arith/``.

``tests/tir/test_node_coverage.py`` checks 1-7 for every node class and lists
the deliberate gaps, each with its reason.
"""

from __future__ import annotations

import functools
import itertools
import math
import typing

import attrs

from . import dtype as dt
from .node import (
    BUFFER,
    Node,
    buffer_field,
    expr_field,
    exprs_field,
    node,
)


class ExprTruthError(TypeError, ValueError):
    """``bool()`` of an expression whose value is not known before the program runs.

    A ``TypeError`` for Python code, and a ``ValueError`` as TVM raises there.
    """


class PrimExpr(Node):
    """Base of all expressions. Operators build IR; identity is ``is``."""

    __slots__ = ()
    dtype: str

    # Operators build IR nodes (see tir.op); the hash stays identity-based.
    __hash__ = object.__hash__

    def __add__(self, other):
        return _op.add(self, other)

    def __radd__(self, other):
        return _op.add(other, self)

    def __sub__(self, other):
        return _op.sub(self, other)

    def __rsub__(self, other):
        return _op.sub(other, self)

    def __mul__(self, other):
        return _op.mul(self, other)

    def __rmul__(self, other):
        return _op.mul(other, self)

    def __truediv__(self, other):
        return _op.true_divide(self, other)

    def __rtruediv__(self, other):
        return _op.true_divide(other, self)

    def __floordiv__(self, other):
        return _op.floordiv(self, other)

    def __rfloordiv__(self, other):
        return _op.floordiv(other, self)

    def __mod__(self, other):
        return _op.floormod(self, other)

    def __rmod__(self, other):
        return _op.floormod(other, self)

    def __neg__(self):
        return _op.neg(self)

    def __lt__(self, other):
        return _op.less(self, other)

    def __le__(self, other):
        return _op.less_equal(self, other)

    def __gt__(self, other):
        return _op.greater(self, other)

    def __ge__(self, other):
        return _op.greater_equal(self, other)

    def __eq__(self, other):
        return _op.equal_node(self, other)

    def __ne__(self, other):
        return _op.not_equal_node(self, other)

    def __and__(self, other):
        return _op.logical_or_bitwise("and", self, other)

    def __rand__(self, other):
        return _op.logical_or_bitwise("and", other, self)

    def __or__(self, other):
        return _op.logical_or_bitwise("or", self, other)

    def __ror__(self, other):
        return _op.logical_or_bitwise("or", other, self)

    def __xor__(self, other):
        return _op.bitwise_xor(self, other)

    def __rxor__(self, other):
        return _op.bitwise_xor(other, self)

    def __invert__(self):
        return _op.invert(self)

    def __lshift__(self, other):
        return _op.shift_left(self, other)

    def __rshift__(self, other):
        return _op.shift_right(self, other)

    def __bool__(self):
        raise ExprTruthError(
            f"cannot use the truth value of the TIR expression {self!s}: it is not known "
            "until the program runs; use tir.all / tir.any to combine conditions, or "
            "tir.Select / ib.if_scope to branch on one"
        )

    def astype(self, dtype: str, span: None = None) -> "PrimExpr":
        """This expression cast to ``dtype`` (no node if already of it)."""
        return _op.cast(dtype, self)

    def equal(self, other: typing.Any, span: None = None) -> "PrimExpr":
        """``self == other`` as a folded ``EQ`` expression (TVM's ``ExprOp.equal``).

        Unlike the ``==`` operator, constants fold: ``const(1).equal(1)`` is ``T.bool(True)``.
        ``span`` is accepted for TVM compatibility and ignored.
        """
        return _op.equal(self, other)


def _check_dtype(value: typing.Any, owner: str, field: str) -> str:
    try:
        return dt.canonical(str(value))
    except ValueError as err:
        raise ValueError(f"{owner}: invalid {field} {value!r}: {err}") from None


# ---------------------------------------------------------------- leaves


# Var hashes: distinct for every Var ever made, even when CPython reuses a freed Var's
# address, and spread over 64 bits so that they do not meet IntImm hashes (the values).
_VAR_HASHES = map(hash, zip(itertools.repeat("tir.Var"), itertools.count()))


@node
class Var(PrimExpr):
    """A variable. ``type_annotation`` is the element dtype a handle points to.

    Hashed by identity as TVM's objects are (two ``var("x")`` are two keys);
    ``tir.structural_hash`` hashes it by structure.
    """

    name: str = attrs.field(default="v")
    dtype: str = attrs.field(default="int32")
    type_annotation: str | None = attrs.field(default=None)
    _hash: int = attrs.field(init=False, factory=_VAR_HASHES.__next__,
                             metadata={"structural": False})

    def __hash__(self) -> int:
        return self._hash

    def __attrs_post_init__(self):
        if not isinstance(self.name, str):
            raise TypeError(f"Var: name must be a str, got {type(self.name).__name__}")
        object.__setattr__(self, "dtype", _check_dtype(self.dtype, "Var", "dtype"))


@node
class SizeVar(Var):
    """A variable known to be non-negative (a size)."""


@node
class IntImm(PrimExpr):
    """An integer (or bool) constant.

    As in TVM, it acts as its value: ``==`` and ``!=`` fold against other constants
    (``bool(const(0) == 0)`` is True), ``bool()`` and ``int()`` give the value, and
    the hash is the value.
    """

    dtype: str
    value: int

    def __attrs_post_init__(self):
        dtype, lo, hi = _int_imm_range(self.dtype)
        value = self.value
        if type(value) is not int:  # bool, float, NumPy integer: check, then normalize
            if isinstance(value, float) and not value.is_integer() or not isinstance(
                value, (int, float)
            ):
                raise TypeError(f"IntImm: value must be an integer, got {value!r}")
            value = int(value)
        if not lo <= value <= hi:
            raise ValueError(f"IntImm: value {value} does not fit in {dtype} [{lo}, {hi}]")
        object.__setattr__(self, "dtype", dtype)
        object.__setattr__(self, "value", value)

    def __int__(self) -> int:
        return self.value

    def __index__(self) -> int:
        return self.value

    def __hash__(self) -> int:
        return hash(self.value)

    def __bool__(self) -> bool:
        return self.value != 0

    def __eq__(self, other):
        if not _is_operand(other):
            return NotImplemented
        return _op.equal(self, other)

    def __ne__(self, other):
        if not _is_operand(other):
            return NotImplemented
        return _op.not_equal(self, other)


@node
class FloatImm(PrimExpr):
    """A floating-point constant."""

    dtype: str
    value: float

    def __attrs_post_init__(self):
        dtype = _check_dtype(self.dtype, "FloatImm", "dtype")
        t = dt.DataType(dtype)
        if not t.is_float or t.is_vector:
            raise TypeError(f"FloatImm: dtype must be a scalar float, got {dtype}")
        if not isinstance(self.value, (int, float)):
            raise TypeError(f"FloatImm: value must be a number, got {self.value!r}")
        object.__setattr__(self, "dtype", dtype)
        object.__setattr__(self, "value", _round_float(float(self.value), dtype))

    def __float__(self) -> float:
        return self.value


@functools.lru_cache(maxsize=None)
def _int_imm_range(dtype: typing.Any) -> tuple[str, int, int]:
    """Canonical dtype and value range of an IntImm dtype (cached: constants are hot)."""
    dtype = _check_dtype(dtype, "IntImm", "dtype")
    t = dt.DataType(dtype)
    if not (t.is_integer or t.is_bool) or t.is_vector:
        raise TypeError(f"IntImm: dtype must be a scalar integer or bool, got {dtype}")
    return dtype, t.min_value(), t.max_value()


def _round_float(value: float, dtype: str) -> float:
    if dtype == "float64" or math.isnan(value) or math.isinf(value):
        return value
    from .low_precision import round_float  # NumPy, loaded on first use

    return round_float(value, dtype)


@node
class StringImm(PrimExpr):
    """A string constant (for messages and extern names)."""

    value: str
    dtype: str = attrs.field(init=False, default="handle")

    def __attrs_post_init__(self):
        if not isinstance(self.value, str):
            raise TypeError(f"StringImm: value must be a str, got {type(self.value).__name__}")


@node
class Any(PrimExpr):
    """An unknown int32 value, such as a dimension known only at run time (TVM's ``tir.Any``).

    Every ``Any()`` stands for its own unknown: the simplifier keeps ``a - b`` of two
    of them (``_token`` tells them apart), while ``structural_equal`` finds any two
    equal, as TVM's does.
    """

    dtype: str = attrs.field(init=False, default="int32")
    _token: int = attrs.field(factory=itertools.count().__next__, kw_only=True,
                              metadata={"structural": False})


# ---------------------------------------------------------------- operand checks


def _is_operand(value: typing.Any) -> bool:
    """``value`` can meet an expression in ``==``: an expression, a number or a NumPy scalar."""
    return isinstance(value, (PrimExpr, bool, int, float)) or hasattr(value, "item")


def _expr_of(
    value: typing.Any, owner: str, field: str, like: PrimExpr | None = None
) -> PrimExpr:
    """``value`` as an expression; a Python number takes ``like``'s element type."""
    if isinstance(value, PrimExpr):
        return value
    if isinstance(value, (bool, int, float)):
        hint = dt.element_of(like.dtype) if like is not None else None
        return _op.const(value, _number_dtype(value, hint))
    raise TypeError(f"{owner}: {field} must be a PrimExpr or a number, got {type(value).__name__}")


def _number_dtype(value: typing.Any, hint: str | None) -> str | None:
    if hint is None or hint == "handle":
        return None
    if isinstance(value, float) and not isinstance(value, bool) and not dt.DataType(hint).is_float:
        return None  # a float does not become an integer silently
    return hint


def _pair(a: typing.Any, b: typing.Any, owner: str) -> tuple[PrimExpr, PrimExpr]:
    a = _expr_of(a, owner, "a", b if isinstance(b, PrimExpr) else None)
    b = _expr_of(b, owner, "b", a)
    return a, b


def _lanes_suffix(dtype: str) -> str:
    t = dt.DataType(dtype)
    if t.is_scalable:
        return f"xvscalex{t.lanes}"
    return f"x{t.lanes}" if t.lanes > 1 else ""


# ---------------------------------------------------------------- binary nodes


@node
class BinaryOpNode(PrimExpr):
    """Base of the nodes with two operands ``a`` and ``b`` of one dtype."""

    a: PrimExpr = expr_field()
    b: PrimExpr = expr_field()
    dtype: str = attrs.field(init=False, default="")

    def _check(self, *, bool_operands: bool = False, result_bool: bool = False) -> None:
        name = type(self).__name__
        a, b = _pair(self.a, self.b, name)
        if a.dtype != b.dtype:
            raise TypeError(f"{name}: operand dtypes differ: a is {a.dtype}, b is {b.dtype}")
        if a.dtype == "handle":
            raise TypeError(f"{name}: operands must not be handles")
        if bool_operands and not a.dtype.startswith("bool"):
            raise TypeError(f"{name}: operands must be bool, got {a.dtype}")
        object.__setattr__(self, "a", a)
        object.__setattr__(self, "b", b)
        dtype = "bool" + _lanes_suffix(a.dtype) if result_bool else a.dtype
        object.__setattr__(self, "dtype", dtype)


def _binary(doc: str, **check: bool):
    """Define a binary node class body with ``doc`` as its docstring."""

    def decorate(cls):
        cls.__doc__ = doc

        def post_init(self):
            self._check(**check)

        cls.__attrs_post_init__ = post_init
        return node(cls)

    return decorate


@_binary("a + b, element-wise.")
class Add(BinaryOpNode):
    pass


@_binary("a - b, element-wise.")
class Sub(BinaryOpNode):
    pass


@_binary("a * b, element-wise.")
class Mul(BinaryOpNode):
    pass


@_binary("a / b: truncated division on integers, true division on floats.")
class Div(BinaryOpNode):
    pass


@_binary("a % b with the sign of a (truncated modulo), as in C.")
class Mod(BinaryOpNode):
    pass


@_binary("floor(a / b): division rounding towards negative infinity.")
class FloorDiv(BinaryOpNode):
    pass


@_binary("a - b * floor(a / b): the remainder with the sign of b.")
class FloorMod(BinaryOpNode):
    pass


@_binary("The smaller of a and b, element-wise (floats: NaN wins, -0.0 < +0.0).")
class Min(BinaryOpNode):
    pass


@_binary("The larger of a and b, element-wise (floats: NaN wins, -0.0 < +0.0).")
class Max(BinaryOpNode):
    pass


@node
class CmpOpNode(BinaryOpNode):
    """Base of comparisons: the result is bool with the operands' lanes."""


@_binary("a == b, element-wise. Its truth value is ``a is b``, as in TVM.", result_bool=True)
class EQ(CmpOpNode):
    def __bool__(self):
        return self.a is self.b


@_binary("a != b, element-wise. Its truth value is ``a is not b``.", result_bool=True)
class NE(CmpOpNode):
    def __bool__(self):
        return self.a is not self.b


@_binary("a < b, element-wise.", result_bool=True)
class LT(CmpOpNode):
    pass


@_binary("a <= b, element-wise.", result_bool=True)
class LE(CmpOpNode):
    pass


@_binary("a > b, element-wise.", result_bool=True)
class GT(CmpOpNode):
    pass


@_binary("a >= b, element-wise.", result_bool=True)
class GE(CmpOpNode):
    pass


@_binary("Logical a && b on bool operands.", bool_operands=True)
class And(BinaryOpNode):
    pass


@_binary("Logical a || b on bool operands.", bool_operands=True)
class Or(BinaryOpNode):
    pass


@node
class Not(PrimExpr):
    """Logical !a on a bool operand."""

    a: PrimExpr = expr_field()
    dtype: str = attrs.field(init=False, default="")

    def __attrs_post_init__(self):
        a = _expr_of(self.a, "Not", "a")
        if isinstance(self.a, bool):
            a = _op.const(self.a, "bool")
        if not a.dtype.startswith("bool"):
            raise TypeError(f"Not: operand must be bool, got {a.dtype}")
        object.__setattr__(self, "a", a)
        object.__setattr__(self, "dtype", a.dtype)


# ---------------------------------------------------------------- other expressions


@node
class Select(PrimExpr):
    """``condition ? true_value : false_value``; both values are evaluated."""

    condition: PrimExpr = expr_field()
    true_value: PrimExpr = expr_field()
    false_value: PrimExpr = expr_field()
    dtype: str = attrs.field(init=False, default="")

    def __attrs_post_init__(self):
        cond = _expr_of(self.condition, "Select", "condition")
        t, f = _pair(self.true_value, self.false_value, "Select")
        if t.dtype != f.dtype:
            raise TypeError(
                f"Select: value dtypes differ: true_value is {t.dtype}, false_value is {f.dtype}"
            )
        if not cond.dtype.startswith("bool"):
            raise TypeError(f"Select: condition must be bool, got {cond.dtype}")
        if dt.lanes_of(cond.dtype) != 1 and _lanes_suffix(cond.dtype) != _lanes_suffix(t.dtype):
            raise TypeError(
                f"Select: condition lanes do not match the values: condition is {cond.dtype}, "
                f"values are {t.dtype}"
            )
        object.__setattr__(self, "condition", cond)
        object.__setattr__(self, "true_value", t)
        object.__setattr__(self, "false_value", f)
        object.__setattr__(self, "dtype", t.dtype)


@node
class Cast(PrimExpr):
    """``value`` converted to ``dtype`` (same lanes)."""

    dtype: str
    value: PrimExpr = expr_field()

    def __attrs_post_init__(self):
        dt.check_cast_order("tir.Cast", self.dtype, self.value)
        dtype = _check_dtype(self.dtype, "Cast", "dtype")
        value = _expr_of(self.value, "Cast", "value")
        if _lanes_suffix(dtype) != _lanes_suffix(value.dtype):
            raise TypeError(f"Cast: lanes differ: cannot cast {value.dtype} to {dtype}")
        object.__setattr__(self, "dtype", dtype)
        object.__setattr__(self, "value", value)


@node
class Let(PrimExpr):
    """``body`` with ``var`` bound to ``value``."""

    var: Var = expr_field(binds=True)
    value: PrimExpr = expr_field()
    body: PrimExpr = expr_field()
    dtype: str = attrs.field(init=False, default="")

    def __attrs_post_init__(self):
        if not isinstance(self.var, Var):
            raise TypeError(f"Let: var must be a Var, got {type(self.var).__name__}")
        value = _expr_of(self.value, "Let", "value", self.var)
        body = _expr_of(self.body, "Let", "body")
        if value.dtype != self.var.dtype:
            raise TypeError(
                f"Let: value dtype differs from the var: var {self.var.name} is "
                f"{self.var.dtype}, value is {value.dtype}"
            )
        object.__setattr__(self, "value", value)
        object.__setattr__(self, "body", body)
        object.__setattr__(self, "dtype", body.dtype)


@node
class Call(PrimExpr):
    """A call of an intrinsic (``op`` such as ``"tir.exp"``) or extern function."""

    dtype: str
    op: str
    args: tuple = exprs_field()

    def __attrs_post_init__(self):
        object.__setattr__(self, "dtype", _check_dtype(self.dtype, "Call", "dtype"))
        if not isinstance(self.op, str):
            op_name = getattr(self.op, "name", None)
            if not isinstance(op_name, str):
                raise TypeError(f"Call: op must be a str, got {type(self.op).__name__}")
            object.__setattr__(self, "op", op_name)
        args = tuple(
            a if isinstance(a, PrimExpr) else _op.convert(a) for a in self.args
        )
        object.__setattr__(self, "args", args)


@node
class BufferLoad(PrimExpr):
    """``buffer[indices]``; vector indices load several lanes.

    Any index may be a vector (TVM allows only the last one): all vector
    indices of one access have the same lane count ``L``, and lane ``k``
    reads ``buffer[i0[k], i1[k], ...]`` where a scalar index is the same for
    every lane (a broadcast dimension). The access has ``L`` lanes times the
    buffer dtype's. ``predicate`` (a bool vector) masks the lanes:
    masked-off lanes are not read.
    """

    buffer: typing.Any = buffer_field()
    indices: tuple = exprs_field()
    predicate: PrimExpr | None = expr_field(default=None)
    dtype: str = attrs.field(init=False, default="")

    def __attrs_post_init__(self):
        indices = _check_access("BufferLoad", self.buffer, self.indices)
        object.__setattr__(self, "indices", indices)
        dtype = access_dtype(self.buffer, indices)
        _check_predicate("BufferLoad", self.predicate, dtype)
        object.__setattr__(self, "dtype", dtype)


def _check_access(owner: str, buffer: typing.Any, indices: tuple) -> tuple:
    if not isinstance(buffer, Buffer):
        raise TypeError(f"{owner}: buffer must be a tir.Buffer, got {type(buffer).__name__}")
    indices = tuple(_expr_of(i, owner, "index") for i in indices)
    if len(indices) != len(buffer.shape):
        raise ValueError(
            f"{owner}: buffer {buffer.name} has {len(buffer.shape)} dimension(s), "
            f"got {len(indices)} index(es)"
        )
    lanes = None
    for i in indices:
        is_integer, is_vector = _index_kind(i.dtype)
        if not is_integer:
            raise TypeError(f"{owner}: index into {buffer.name} must be an integer, got {i.dtype}")
        if is_vector:
            this = _lanes_suffix(i.dtype)
            if lanes is not None and this != lanes:
                raise ValueError(
                    f"{owner}: the vector indices into {buffer.name} have different lane "
                    f"counts ({', '.join(str(j.dtype) for j in indices)}); every vector "
                    "index of one access needs the same lanes"
                )
            lanes = this
    return indices


@functools.lru_cache(maxsize=None)
def _index_kind(dtype: str) -> tuple[bool, bool]:
    t = dt.DataType(dtype)
    return t.is_integer, t.is_vector


def access_dtype(buffer: typing.Any, indices: tuple) -> str:
    """The dtype of ``buffer[indices]``: lanes of its vector indices times the buffer's.

    ``indices`` passed ``_check_access``: its vector indices share one lane count.
    """
    for index in indices:
        if _index_kind(index.dtype)[1]:
            return _access_dtype(buffer.dtype, index.dtype)
    if not indices:
        return buffer.dtype
    return _access_dtype(buffer.dtype, indices[-1].dtype)


@functools.lru_cache(maxsize=None)
def _access_dtype(buffer_dtype: str, index_dtype: str) -> str:
    index_t = dt.DataType(index_dtype)
    buf_t = dt.DataType(buffer_dtype)
    if buf_t.is_scalable:
        # One element of a scalable-dtype buffer (a vector accumulator) is the whole vector.
        if index_t.is_vector:
            raise TypeError(f"a buffer of scalable dtype {buffer_dtype} takes scalar indices, "
                            f"got {index_dtype}")
        return buffer_dtype
    if index_t.is_scalable:
        return str(buf_t.with_scalable_lanes(index_t.lanes))
    return str(buf_t.with_lanes(index_t.lanes * buf_t.lanes))


def _check_predicate(owner: str, predicate: typing.Any, value_dtype: str) -> None:
    if predicate is None:
        return
    if not isinstance(predicate, PrimExpr):
        raise TypeError(f"{owner}: predicate must be a PrimExpr, got {type(predicate).__name__}")
    expected = "bool" + _lanes_suffix(value_dtype)
    if predicate.dtype != expected:
        raise TypeError(f"{owner}: predicate must be {expected}, got {predicate.dtype}")


# The vector nodes live in expr_vector.py; tir.op needs them, so they come first.
from .expr_vector import Broadcast, Ramp, Shuffle, scalable_factor  # noqa: E402,F401

# isort: split
from . import op as _op  # noqa: E402  (operators on PrimExpr call into tir.op)
from .buffer import Buffer  # noqa: E402

#: The bases that are never built themselves (they share fields and checks); lists of
#: node classes skip them.
EXPR_BASES = (PrimExpr, BinaryOpNode, CmpOpNode)

__all__ = [
    "PrimExpr", "Var", "SizeVar", "IntImm", "FloatImm", "StringImm", "Any", "BinaryOpNode",
    "CmpOpNode", "Add", "Sub", "Mul", "Div", "Mod", "FloorDiv", "FloorMod", "Min", "Max",
    "EQ", "NE", "LT", "LE", "GT", "GE", "And", "Or", "Not", "Select", "Cast", "Ramp",
    "Broadcast", "Shuffle", "Let", "Call", "BufferLoad", "BUFFER", "scalable_factor",
    "access_dtype",
]
