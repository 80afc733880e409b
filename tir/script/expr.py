"""Expressions of TVMScript: Python ``ast`` expressions evaluated into TIR.

Names resolve through the parser's scopes (loop vars, let vars, buffers), then
the function's closure and globals, then Python's builtins. Operators on
expressions build the node they spell, promoting a Python number to the other
side's dtype but never folding two constants, so printed IR reads back node for
node: ``1 + 2`` in a script is ``Add(1, 2)``, as the printer wrote it.
"""

from __future__ import annotations

import ast
import builtins
import operator
from typing import Any, Callable

from .. import dtype as dt
from .. import expr as e
from .. import op
from ..arith import Analyzer
from ..buffer import Buffer
from ..expr import BufferLoad, PrimExpr, Var
from ..stmt import BufferStore
from . import builtins as T
from .errors import ParseError, Source

_ARITH = {ast.Add: e.Add, ast.Sub: e.Sub, ast.Mult: e.Mul, ast.FloorDiv: e.FloorDiv,
          ast.Mod: e.FloorMod}
_PY_BINOP = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
             ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
             ast.Pow: operator.pow, ast.BitAnd: operator.and_, ast.BitOr: operator.or_,
             ast.BitXor: operator.xor, ast.LShift: operator.lshift, ast.RShift: operator.rshift}
_COMPARE = {ast.Lt: e.LT, ast.LtE: e.LE, ast.Gt: e.GT, ast.GtE: e.GE, ast.Eq: e.EQ,
            ast.NotEq: e.NE}
_PY_COMPARE = {ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt,
               ast.GtE: operator.ge, ast.Eq: operator.eq, ast.NotEq: operator.ne,
               ast.Is: operator.is_, ast.IsNot: operator.is_not,
               ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b}
# Builders that take the name of the variable they are assigned to.
NAMED = (T.Buffer, T.match_buffer, T.alloc_buffer, T.decl_buffer)
_MISSING = object()
# Python's builtins a script may use (shapes and meta values); not open(), exec() and the like.
_PY_BUILTINS = frozenset("range len int float bool str tuple list dict enumerate zip".split())


def same_text(a: ast.AST, b: ast.AST) -> bool:
    """Whether two expressions are spelled alike (``lo`` in ``range(lo, lo + n)``)."""
    return ast.dump(a) == ast.dump(b)


def offset_of(start: ast.expr, stop: ast.expr) -> ast.expr | None:
    """``n`` when ``stop`` is written ``start + n``, else None.

    The printer writes a range as ``lo, lo + n``; reading ``n`` back as written
    keeps the extent node for node instead of simplifying ``(lo + n) - lo``.
    """
    if isinstance(stop, ast.BinOp) and isinstance(stop.op, ast.Add) and same_text(
            stop.left, start):
        return stop.right
    return None


class Evaluator:
    """Evaluates ``ast`` expressions; holds the scopes of names the parser defines."""

    def __init__(self, source: Source, outer: dict[str, Any]):
        self.source = source
        self.outer = outer  # closure, caller locals and globals of the function
        self.scopes: list[dict[str, Any]] = [{}]
        self.handle_buffers: dict[int, Buffer] = {}  # allocate var -> its implicit buffer

    # ------------------------------------------------------------ scopes

    def push(self) -> None:
        self.scopes.append({})

    def pop(self) -> None:
        self.scopes.pop()

    def define(self, name: str, value: Any) -> None:
        self.scopes[-1][name] = value

    def lookup(self, name: str, node: ast.AST) -> Any:
        for scope in reversed(self.scopes):
            value = scope.get(name, _MISSING)
            if value is not _MISSING:
                return value
        value = self.outer.get(name, _MISSING)
        if value is _MISSING and name in _PY_BUILTINS:
            value = getattr(builtins, name)
        if value is _MISSING:
            raise self.error(node, f"undefined name {name!r}")
        return value.value if isinstance(value, T.MetaVar) else value

    def error(self, node: ast.AST, message: str) -> ParseError:
        return self.source.error(node, message)

    # ------------------------------------------------------------ dispatch

    def eval(self, node: ast.expr, **extra: Any) -> Any:
        """The value of ``node``; any failure becomes a ``ParseError`` at the innermost node.

        ``extra`` keywords go to a call of a buffer builder (``name=`` the target's name).
        """
        method = _DISPATCH.get(type(node))
        if method is None:
            raise self.error(node, f"unsupported expression: {type(node).__name__}")
        try:
            if extra and method is Evaluator.call:
                return self.call(node, **extra)
            return method(self, node)
        except ParseError:
            raise
        except (TypeError, ValueError, AttributeError, KeyError, IndexError,
                ZeroDivisionError, NotImplementedError) as err:
            raise self.error(node, _reason(err)) from None

    def eval_expr(self, node: ast.expr, what: str) -> PrimExpr:
        """``node`` as a TIR expression (a Python number is converted)."""
        value = self.eval(node)
        if isinstance(value, PrimExpr):
            return value
        if isinstance(value, (bool, int, float)):
            return op.const(value)
        raise self.error(node, f"{what} must be an expression, got {_kind(value)}")

    # ------------------------------------------------------------ leaves

    def constant(self, node: ast.Constant) -> Any:
        return node.value

    def name(self, node: ast.Name) -> Any:
        return self.lookup(node.id, node)

    def attribute(self, node: ast.Attribute) -> Any:
        value = self.eval(node.value)
        if node.attr in ("vload", "vstore") and self.as_buffer(value) is not None:
            buf = self.as_buffer(value)  # a buffer, or an allocation indexed directly
            return _vload(buf) if node.attr == "vload" else _vstore(buf)
        if not hasattr(value, node.attr):
            if value is T:
                raise self.error(node, f"T.{node.attr} is not supported by tirlite's TVMScript")
            raise self.error(node, f"{_kind(value)} has no attribute {node.attr!r}")
        return getattr(value, node.attr)

    def sequence(self, node: ast.Tuple | ast.List) -> Any:
        items = []
        for elt in node.elts:
            if isinstance(elt, ast.Starred):
                items.extend(self.eval(elt.value))
            else:
                items.append(self.eval(elt))
        return tuple(items) if isinstance(node, ast.Tuple) else items

    def dict_(self, node: ast.Dict) -> dict:
        out = {}
        for k, v in zip(node.keys, node.values):
            if k is None:
                out.update(self.eval(v))
            else:
                out[self.eval(k)] = self.eval(v)
        return out

    # ------------------------------------------------------------ operators

    def binop(self, node: ast.BinOp) -> Any:
        a, b = self.eval(node.left), self.eval(node.right)
        kind = type(node.op)
        if not isinstance(a, PrimExpr) and not isinstance(b, PrimExpr):
            return _PY_BINOP[kind](a, b)
        cls = _ARITH.get(kind)
        if cls is not None:
            return cls(*op.promote(a, b))
        if kind is ast.Div:
            a, b = op.promote(a, b)
            return e.Div(a, b) if dt.DataType(a.dtype).is_float else op.true_divide(a, b)
        if kind is ast.Pow:
            return op.pow(a, b)
        if kind is ast.MatMult:
            raise self.error(node, "the operator @ has no meaning in TIR")
        return _PY_BINOP[kind](a, b)

    def unaryop(self, node: ast.UnaryOp) -> Any:
        value = self.eval(node.operand)
        kind = type(node.op)
        if not isinstance(value, PrimExpr):
            return {ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Not: operator.not_,
                    ast.Invert: operator.invert}[kind](value)
        if kind is ast.Not:
            return e.Not(value)
        if kind is ast.USub:
            return op.neg(value)
        return value if kind is ast.UAdd else ~value

    def boolop(self, node: ast.BoolOp) -> Any:
        cls = e.And if isinstance(node.op, ast.And) else e.Or
        result = self.eval(node.values[0])
        for item in node.values[1:]:
            if not isinstance(result, PrimExpr):  # Python truth, short-circuited
                if bool(result) != (cls is e.And):
                    return result
                result = self.eval(item)
                continue
            result = cls(result, _as_bool(self.eval(item)))
        return result

    def compare(self, node: ast.Compare) -> Any:
        left = self.eval(node.left)
        result = None
        for cmp, right_node in zip(node.ops, node.comparators):
            right = self.eval(right_node)
            if isinstance(left, PrimExpr) or isinstance(right, PrimExpr):
                cls = _COMPARE.get(type(cmp))
                if cls is None:
                    raise self.error(node, f"{type(cmp).__name__} does not apply to expressions")
                part = cls(*op.promote(left, right))
            else:
                part = _PY_COMPARE[type(cmp)](left, right)
            result = part if result is None else _and(result, part)
            left = right
        return result

    def ifexp(self, node: ast.IfExp) -> Any:
        cond = self.eval(node.test)
        if isinstance(cond, PrimExpr):
            return op.select(cond, self.eval(node.body), self.eval(node.orelse))
        return self.eval(node.body) if cond else self.eval(node.orelse)

    # ------------------------------------------------------------ calls

    def call(self, node: ast.Call, **extra: Any) -> Any:
        func = self.eval(node.func)
        if func is T.let:
            return self.let(node)
        if isinstance(func, T.DType) and len(node.args) == 1 and _is_negative_zero(node.args[0]):
            return func(-0.0)  # T.float32(-0): Python's -0 is the int 0, without a sign
        args = []
        for a in node.args:
            if isinstance(a, ast.Starred):
                args.extend(self.eval(a.value))
            else:
                args.append(self.eval(a))
        kwargs = {}
        for kw in node.keywords:
            if kw.arg is None:
                kwargs.update(self.eval(kw.value))
            else:
                kwargs[kw.arg] = self.eval(kw.value)
        if extra and func in NAMED:
            kwargs.update(extra)
        if not callable(func):
            raise self.error(node.func, f"{_kind(func)} is not callable")
        return func(*args, **kwargs)

    def let(self, node: ast.Call) -> PrimExpr:
        """``T.let(v, value, body)``: ``v`` is bound in ``body`` (a new var unless defined)."""
        if len(node.args) != 3:
            raise self.error(node, "T.let expects (var, value, body)")
        target, value_node, body_node = node.args
        value = self.eval_expr(value_node, "the value of T.let")
        var = None
        if isinstance(target, ast.Name):
            var = self.find(target.id)
            if not isinstance(var, Var):
                var = Var(target.id, value.dtype)
        else:
            var = self.eval(target)
        self.push()
        try:
            if isinstance(target, ast.Name):
                self.define(target.id, var)
            body = self.eval_expr(body_node, "the body of T.let")
        finally:
            self.pop()
        return e.Let(var, value, body)

    def find(self, name: str) -> Any:
        """What ``name`` means in the parser's scopes, or None."""
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        return None

    # ------------------------------------------------------------ buffer access

    def subscript(self, node: ast.Subscript) -> Any:
        value = self.eval(node.value)
        buf = self.as_buffer(value)
        if buf is None:
            index = node.slice
            if isinstance(index, ast.Slice):
                return value[slice(*(self.eval(p) if p is not None else None
                                     for p in (index.lower, index.upper, index.step)))]
            return value[self.eval(index)]
        return BufferLoad(buf, self.indices(buf, node.slice))

    def as_buffer(self, value: Any) -> Buffer | None:
        """``value`` as the buffer it indexes: a buffer, or an allocated handle var."""
        if isinstance(value, Buffer):
            return value
        if isinstance(value, Var):
            return self.handle_buffers.get(id(value))
        return None

    def indices(self, buf: Buffer, node: ast.expr) -> list[PrimExpr]:
        """The indices of ``buf[...]``; a slice ``b:b + n`` is the vector ``Ramp(b, 1, n)``."""
        items = node.elts if isinstance(node, ast.Tuple) else [node]
        out = []
        for dim, item in enumerate(items):
            if isinstance(item, ast.Slice):
                out.append(self.slice_ramp(buf, dim, item))
            else:
                out.append(self.eval(item))
        return out

    def slice_ramp(self, buf: Buffer, dim: int, node: ast.Slice) -> PrimExpr:
        start = self.eval(node.lower) if node.lower is not None else 0
        step = self.eval(node.step) if node.step is not None else 1
        if node.upper is None:
            if dim >= len(buf.shape):
                raise self.error(node, f"buffer {buf.name} has {len(buf.shape)} dimensions")
            lanes = op.sub(buf.shape[dim], start)
        else:
            written = offset_of(node.lower, node.upper) if node.lower is not None else None
            lanes = self.eval(written) if written is not None else op.sub(
                self.eval(node.upper), start)
        if isinstance(lanes, e.IntImm):
            lanes = lanes.value
        if isinstance(step, int) and step != 1 and isinstance(lanes, int):
            lanes = -(-lanes // step)
        if isinstance(lanes, int) and lanes == 1 and step == 1:
            return start if isinstance(start, PrimExpr) else op.const(start)
        return T.Ramp(start, step, lanes)


def extent_between(start: Any, stop: Any) -> Any:
    """``stop - start``: folded when both are constants, simplified otherwise."""
    if isinstance(start, int) and isinstance(stop, int):
        return stop - start
    diff = op.sub(stop, start)
    if isinstance(diff, PrimExpr) and not hasattr(diff, "value"):
        diff = Analyzer().simplify(diff)
    return diff


def as_index(value: Any, dtype: str) -> PrimExpr:
    """An index value in ``dtype``: a Python int converted, an expression as it is."""
    if isinstance(value, PrimExpr):
        return value
    return op.const(value, dtype)


def _vload(buf: Buffer) -> Callable:
    def vload(indices: Any, dtype: str | None = None, predicate: Any = None) -> PrimExpr:
        indices = list(indices) if isinstance(indices, (list, tuple)) else [indices]
        if dtype is not None and dt.lanes_of(dtype) > 1 and not any(
                isinstance(i, PrimExpr) and dt.lanes_of(i.dtype) > 1 for i in indices):
            lanes = dt.lanes_of(dtype) // dt.lanes_of(buf.dtype)
            indices[-1] = e.Ramp(indices[-1], 1, lanes)
        return BufferLoad(buf, indices, predicate)

    return vload


def _vstore(buf: Buffer) -> Callable:
    def vstore(indices: Any, value: Any, predicate: Any = None) -> BufferStore:
        indices = list(indices) if isinstance(indices, (list, tuple)) else [indices]
        return BufferStore(buf, value, indices, predicate)

    return vstore


def _is_negative_zero(node: ast.expr) -> bool:
    return (isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub)
            and isinstance(node.operand, ast.Constant) and node.operand.value == 0
            and type(node.operand.value) in (int, float))


def _as_bool(value: Any) -> PrimExpr:
    return op.const(bool(value)) if isinstance(value, (bool, int)) else value


def _and(a: Any, b: Any) -> Any:
    if isinstance(a, PrimExpr) or isinstance(b, PrimExpr):
        return e.And(_as_bool(a), _as_bool(b))
    return a and b


def _kind(value: Any) -> str:
    """How an error names a value: ``float32 expression``, ``Buffer``, ``T``."""
    if isinstance(value, PrimExpr):
        return f"{value.dtype} expression"
    if value is T:
        return "T"
    if isinstance(value, type(T)):
        return f"module {value.__name__}"
    return type(value).__name__


def _reason(err: Exception) -> str:
    text = str(err) or type(err).__name__
    return text.strip("'\"") if isinstance(err, KeyError) else text


_DISPATCH: dict[type, Callable] = {
    ast.Constant: Evaluator.constant, ast.Name: Evaluator.name,
    ast.Attribute: Evaluator.attribute, ast.Tuple: Evaluator.sequence,
    ast.List: Evaluator.sequence, ast.Dict: Evaluator.dict_, ast.BinOp: Evaluator.binop,
    ast.UnaryOp: Evaluator.unaryop, ast.BoolOp: Evaluator.boolop,
    ast.Compare: Evaluator.compare, ast.IfExp: Evaluator.ifexp, ast.Call: Evaluator.call,
    ast.Subscript: Evaluator.subscript,
}
