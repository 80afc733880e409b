"""The ``T.`` namespace of TVMScript: ``from tir.script import tir as T``.

Expression builders (``T.Ramp``, ``T.exp``, ``T.float32(1)``) return IR nodes
and work anywhere, also outside a parsed function. Frame builders
(``T.grid``, ``T.block``, ``T.axis.spatial``, ``T.allocate``, ...) return small
spec objects that only the parser (``tir.script.parser``) turns into
statements, because what they build depends on the statements around them.

Binary builders (``T.min``, ``T.truncdiv``, ...) build the node they name
without folding constants, so printed IR reads back node for node.
"""

from __future__ import annotations

from typing import Any

import attrs

from .. import dtype as _dt
from .. import expr as _e
from .. import op as _op
from ..buffer import Buffer as _Buffer
from ..buffer import decl_buffer as _decl_buffer
from ..expr import Call, PrimExpr, SizeVar, StringImm, Var
from ..intrin import INTRINSICS
from ..stmt import Evaluate

# ---------------------------------------------------------------- dtypes


class DType:
    """``T.int32``: a type annotation, a constant (``T.int32(4)``), a cast of an
    expression (``T.int32(x)``) or a new variable (``n = T.int32()``)."""

    def __init__(self, dtype: str):
        self.dtype = dtype

    def __call__(self, value: Any = None, is_size_var: bool = False) -> PrimExpr:
        if value is None:
            return SizeVar("v", self.dtype) if is_size_var else Var("v", self.dtype)
        if isinstance(value, PrimExpr):
            return _op.cast(self.dtype, value)
        if isinstance(value, str):  # T.float32("inf"), as the printer writes non-finite values
            value = float(value)
        return _op.const(value, self.dtype)

    def __repr__(self) -> str:
        return f"T.{self.dtype}"


class HandleType:
    """``T.handle`` (an untyped pointer parameter) or ``T.handle("float32")``."""

    dtype = "handle"

    def __init__(self, annotation: str | None = None, scope: str = ""):
        self.annotation = annotation
        self.scope = scope

    def __call__(self, dtype: str | None = None, scope: str = "global") -> "HandleType":
        return HandleType(_dt.canonical(dtype) if dtype else None, scope)

    def __repr__(self) -> str:
        return f"T.handle({self.annotation!r})" if self.annotation else "T.handle"


handle = HandleType()
_BASE_DTYPES = [f"{k}{b}" for k in ("int", "uint") for b in (8, 16, 32, 64)] + [
    "float16", "float32", "float64", "bfloat16", "bool"]
for _name in _BASE_DTYPES:
    globals()[_name] = DType(_name)
    for _lanes in (2, 3, 4, 8, 16, 32, 64):
        globals()[f"{_name}x{_lanes}"] = DType(f"{_name}x{_lanes}")


def __getattr__(name: str) -> Any:
    """Any other dtype spelled as a name: ``T.float32xvscalex4``, ``T.int8x128``."""
    try:
        dtype = _dt.canonical(name)
    except (TypeError, ValueError):
        raise AttributeError(f"T has no attribute {name!r}") from None
    return DType(dtype)


# ---------------------------------------------------------------- buffers


class _BufferCtor:
    """``T.Buffer((n, 8), "float32")``: a buffer (as a parameter's type, or a view over
    an existing ``data`` var in the body); ``T.Buffer[(n, 8), "float32"]`` too."""

    def __call__(self, shape: Any, dtype: str = "float32", data: Any = None, strides: Any = None,
                 elem_offset: Any = None, scope: str = "", align: int = 0,
                 offset_factor: int = 0, buffer_type: str = "", axis_separators: Any = None,
                 name: str = "buffer") -> _Buffer:
        del align, offset_factor, buffer_type, axis_separators  # not modelled in tirlite
        if isinstance(data, _Buffer):  # data=B: a view of B's memory (B and its data share a name)
            data = data.data
        return _decl_buffer(_shape(shape), dtype, name, data=data, strides=strides,
                            elem_offset=elem_offset, scope=scope)

    def __getitem__(self, key: Any) -> _Buffer:
        return self(*key) if isinstance(key, tuple) else self(key)


Buffer = _BufferCtor()


def _shape(shape: Any) -> tuple:
    return tuple(shape) if isinstance(shape, (list, tuple)) else (shape,)


@attrs.define
class MatchBuffer:
    """``A = T.match_buffer(a, shape, dtype)``: the buffer behind handle param ``a``."""

    param: Any
    buffer: _Buffer


def match_buffer(param: Any, shape: Any, dtype: str = "float32", data: Any = None,
                 strides: Any = None, elem_offset: Any = None, scope: str = "",
                 align: int = 0, offset_factor: int = 0, buffer_type: str = "default",
                 axis_separators: Any = None, name: str = "buffer") -> MatchBuffer:
    """Bind a handle parameter to a buffer of ``shape`` and ``dtype``."""
    return MatchBuffer(param, Buffer(shape, dtype, data, strides, elem_offset, scope,
                                     name=name))


@attrs.define
class AllocBuffer:
    """``B = T.alloc_buffer(...)``: a buffer allocated by the enclosing block."""

    buffer: _Buffer


def alloc_buffer(shape: Any, dtype: str = "float32", data: Any = None, strides: Any = None,
                 elem_offset: Any = None, scope: str = "", align: int = -1,
                 offset_factor: int = 0, buffer_type: str = "default",
                 axis_separators: Any = None, name: str = "buffer") -> AllocBuffer:
    """A buffer allocated by the enclosing block (or the root block)."""
    buf = _decl_buffer(_shape(shape), dtype, name, strides=strides, elem_offset=elem_offset,
                       scope=scope)
    return AllocBuffer(buf)


@attrs.define
class DeclBuffer:
    """``B = T.decl_buffer(...)``: a view over ``data``, or a new allocation without it."""

    buffer: _Buffer
    allocates: bool


def decl_buffer(shape: Any, dtype: str = "float32", data: Any = None, strides: Any = None,
                elem_offset: Any = None, scope: str = "", align: int = 0,
                offset_factor: int = 0, buffer_type: str = "", axis_separators: Any = None,
                name: str = "buffer") -> DeclBuffer:
    """A buffer for the rest of the scope: over ``data`` if given, else newly allocated."""
    buf = Buffer(shape, dtype, data, strides, elem_offset, scope, name=name)
    return DeclBuffer(buf, data is None)


@attrs.define
class Allocate:
    """``p = T.allocate([16], "float32", "global")``: memory for the rest of the scope."""

    extents: tuple
    dtype: str
    scope: str = "global"
    condition: Any = True
    annotations: Any = None


def allocate(extents: Any, dtype: str, scope: str = "global", condition: Any = True,
             annotations: Any = None) -> Allocate:
    """Memory for ``prod(extents)`` elements of ``dtype`` for the rest of the scope."""
    return Allocate(_shape(extents), _dt.canonical(dtype), scope, condition, annotations)


# ---------------------------------------------------------------- loops


@attrs.define
class Loop:
    """One loop of a ``for`` header: ``[min, min + extent)`` run as ``kind``."""

    min: Any
    extent: Any
    kind: str
    annotations: Any = None
    thread: str | None = None


def _loop(kind: str, start: Any, stop: Any, annotations: Any, thread: Any = None) -> Loop:
    if stop is None:
        start, stop = 0, start
    from .expr import extent_between  # expr reads this module: imported at call time

    extent = stop if _is_zero(start) else extent_between(start, stop)
    return Loop(start, extent, kind, annotations, thread)


def _is_zero(e: Any) -> bool:
    return isinstance(e, int) and e == 0 or getattr(e, "value", None) == 0


def serial(start: Any, stop: Any = None, *, annotations: Any = None) -> Loop:
    """A serial loop over ``range(start, stop)`` (or ``range(start)``)."""
    return _loop("serial", start, stop, annotations)


def parallel(start: Any, stop: Any = None, *, annotations: Any = None) -> Loop:
    """A loop whose iterations run on threads."""
    return _loop("parallel", start, stop, annotations)


def vectorized(start: Any, stop: Any = None, *, annotations: Any = None) -> Loop:
    """A loop for ``transform.VectorizeLoop`` to turn into vector code."""
    return _loop("vectorized", start, stop, annotations)


def unroll(start: Any, stop: Any = None, *, annotations: Any = None) -> Loop:
    """A loop to unroll."""
    return _loop("unroll", start, stop, annotations)


def thread_binding(start: Any, stop: Any = None, thread: str | None = None, *,
                   annotations: Any = None) -> Loop:
    """A loop bound to a GPU thread axis (kept as TVM writes it; tirlite runs it serially)."""
    if isinstance(stop, str) and thread is None:
        stop, thread = None, stop
    return _loop("thread_binding", start, stop, annotations, thread)


def grid(*extents: Any) -> list[Loop]:
    """Nested serial loops: ``for i, j in T.grid(4, 8):``."""
    return [_loop("serial", e, None, None) for e in extents]


# ---------------------------------------------------------------- blocks


@attrs.define
class BlockFrame:
    """``with T.block("name"):`` (also ``T.sblock``, TVM's newer name)."""

    name: str


def block(name: str = "", no_realize: bool = False) -> BlockFrame:
    """A named block; its iter vars come from ``T.axis.*`` lines inside."""
    return BlockFrame(name)


sblock = block


@attrs.define
class InitFrame:
    """``with T.init():`` in a reduction block."""


def init() -> InitFrame:
    """The statements that initialize a reduction block's output."""
    return InitFrame()


@attrs.define
class Axis:
    """``v = T.axis.spatial(dom, value)``: one block iter var and its binding."""

    kind: str
    dom: Any
    value: Any
    dtype: str | None = None


@attrs.define
class Remap:
    """``vi, vj = T.axis.remap("SR", [i, j])``: iter vars bound to loop vars."""

    kinds: str
    values: list


class _AxisNamespace:
    """``T.axis``: block iter var declarations."""

    @staticmethod
    def spatial(dom: Any, binding: Any, dtype: str | None = None) -> Axis:
        return Axis("spatial", dom, binding, dtype)

    @staticmethod
    def reduce(dom: Any, binding: Any, dtype: str | None = None) -> Axis:
        return Axis("reduce", dom, binding, dtype)

    @staticmethod
    def scan(dom: Any, binding: Any, dtype: str | None = None) -> Axis:
        return Axis("scan", dom, binding, dtype)

    @staticmethod
    def opaque(dom: Any, binding: Any, dtype: str | None = None) -> Axis:
        return Axis("opaque", dom, binding, dtype)

    @staticmethod
    def remap(kinds: str, bindings: Any, dtype: str | None = None) -> Remap:
        return Remap(kinds, list(bindings))

    S, R = spatial, reduce


axis = _AxisNamespace()


@attrs.define
class Directive:
    """A statement that sets a property of the enclosing block or function."""

    kind: str  # "reads", "writes", "where", "block_attr", "func_attr"
    value: Any


def reads(*regions: Any) -> Directive:
    """The regions a block reads (accepted; tirlite derives them from the body)."""
    return Directive("reads", regions)


def writes(*regions: Any) -> Directive:
    """The regions a block writes (accepted; tirlite derives them from the body)."""
    return Directive("writes", regions)


def where(predicate: Any) -> Directive:
    """The predicate of the enclosing block's realization."""
    return Directive("where", predicate)


def block_attr(annotations: dict) -> Directive:
    """Annotations of the enclosing block."""
    return Directive("block_attr", annotations)


def func_attr(attributes: dict) -> Directive:
    """Attributes of the function (``{"global_symbol": "main", "tir.noalias": True}``)."""
    return Directive("func_attr", attributes)


@attrs.define
class AttrFrame:
    """``with T.attr(node, key, value):``."""

    node: Any
    key: str
    value: Any


def attr(node: Any, attr_key: str, value: Any) -> AttrFrame:
    """An ``AttrStmt`` around the statements of the ``with`` body."""
    return AttrFrame(node, attr_key, value)


@attrs.define
class AssertFrame:
    """``T.Assert(cond, msg)``: an ``AssertStmt`` around the rest of the scope."""

    condition: Any
    message: Any


def Assert(condition: Any, message: Any) -> AssertFrame:  # noqa: N802 (TVM's name)
    """Fail with ``message`` unless ``condition`` holds."""
    return AssertFrame(condition, message)


@attrs.define
class LetFrame:
    """``with T.LetStmt(value) as v:`` (TVM's printer writes it for a let not at a
    scope's end)."""

    value: Any
    var: Any = None


def LetStmt(value: Any, var: Any = None) -> LetFrame:  # noqa: N802 (TVM's name)
    """A ``LetStmt`` binding ``var`` (or a new var) to ``value`` around the ``with`` body."""
    return LetFrame(value, var)


def meta_var(value: Any) -> Any:
    """A Python value used as is in the function (``n = T.meta_var(16)``)."""
    return MetaVar(value)


@attrs.define
class MetaVar:
    """A value bound by ``T.meta_var``: assigning it binds a Python name, not a ``LetStmt``."""

    value: Any


# ---------------------------------------------------------------- expressions


def evaluate(value: Any) -> Evaluate:
    """``T.evaluate(x)``: evaluate ``x`` for its effect."""
    return Evaluate(StringImm(value) if isinstance(value, str) else value)


def _binary(cls: type) -> Any:
    def build(a: Any, b: Any) -> PrimExpr:
        return cls(*_op.promote(a, b, f"T.{name}"))

    name = cls.__name__
    build.__name__ = name
    build.__doc__ = f"A ``{name}`` node of ``a`` and ``b`` (promoted to one dtype)."
    return build


truncdiv, truncmod, floordiv, floormod = (_binary(c) for c in (_e.Div, _e.Mod, _e.FloorDiv,
                                                                _e.FloorMod))
# The node classes by name (TVM tests write T.FloorDiv(a, b)), promoting their operands.
Add, Sub, Mul, Div, Mod, FloorDiv, FloorMod = (
    _binary(c) for c in (_e.Add, _e.Sub, _e.Mul, _e.Div, _e.Mod, _e.FloorDiv, _e.FloorMod))
min, max = _binary(_e.Min), _binary(_e.Max)  # noqa: A001 (TVM's names)
Min, Max = min, max


def Select(condition: Any, true_value: Any, false_value: Any) -> PrimExpr:  # noqa: N802
    """``condition ? true_value : false_value``, both evaluated."""
    return _op.select(condition, true_value, false_value)


def Cast(dtype: str, value: Any) -> PrimExpr:  # noqa: N802
    """A ``Cast`` node (never folded)."""
    return _e.Cast(_dt.canonical(dtype), value)


def Ramp(base: Any, stride: Any, lanes: Any) -> PrimExpr:  # noqa: N802
    """The vector ``base + k * stride`` for ``k`` in ``[0, lanes)``."""
    base, stride = _op.promote(base, stride, "T.Ramp")
    return _e.Ramp(base, stride, lanes)


def Broadcast(value: Any, lanes: Any) -> PrimExpr:  # noqa: N802
    """``value`` in every one of ``lanes`` lanes."""
    return _e.Broadcast(value, lanes)


def Shuffle(vectors: Any, indices: Any) -> PrimExpr:  # noqa: N802
    """Lanes of the concatenated ``vectors`` picked by ``indices``."""
    return _e.Shuffle(list(vectors), list(indices))


def cast(value: Any, dtype: str) -> PrimExpr:
    """``value`` converted to ``dtype`` (TVM's lowercase form; folds constants)."""
    return _op.cast(_dt.canonical(dtype), value)


def ramp(base: Any, stride: Any, lanes: Any) -> PrimExpr:
    """TVM's lowercase ``T.ramp``."""
    return Ramp(base, stride, lanes)


def broadcast(value: Any, lanes: Any) -> PrimExpr:
    """TVM's lowercase ``T.broadcast``."""
    return Broadcast(value, lanes)


def let(var: Any, value: Any, body: Any) -> PrimExpr:
    """``T.let(v, value, body)``: a ``Let`` expression (the parser binds ``v`` in ``body``)."""
    return _e.Let(var, value, body)


def vscale() -> PrimExpr:
    """The vector length multiplier of scalable vectors."""
    return _op.vscale()


# T.Any(): a dimension known only at run time (set this way: `Any` also names typing.Any here)
globals()["Any"] = _e.Any


def _strings(args: tuple) -> list:
    """Call arguments with Python strings as ``StringImm`` (``T.call_extern(..., "fmt")``)."""
    return [StringImm(a) if isinstance(a, str) else a for a in args]


def call_intrin(dtype: str, op: str, *args: Any) -> PrimExpr:
    """A call of intrinsic ``op`` returning ``dtype``."""
    return _op.call_intrin(_dt.canonical(dtype), op, *_strings(args))


def _extern_args(args: tuple, dtype: str | None) -> tuple[str, str, list]:
    """``(dtype, name, *args)`` as the printer writes it, or ``(name, *args, dtype=...)``."""
    if dtype is None:
        dtype, args = args[0], args[1:]
    return _dt.canonical(dtype), args[0], _strings(args[1:])


def call_extern(*args: Any, dtype: str | None = None) -> PrimExpr:
    """A call of a C function: ``T.call_extern("int32", "f", x)`` or
    ``T.call_extern("f", x, dtype="int32")``."""
    dtype, name, rest = _extern_args(args, dtype)
    return _op.call_extern(dtype, name, *rest)


def call_pure_extern(*args: Any, dtype: str | None = None) -> PrimExpr:
    """A call of a C function without side effects (arguments as ``call_extern``)."""
    dtype, name, rest = _extern_args(args, dtype)
    return _op.call_pure_extern(dtype, name, *rest)


def reinterpret(*args: Any, dtype: str | None = None) -> PrimExpr:
    """The bits of ``value`` read as ``dtype`` (a ``Call``, never folded):
    ``T.reinterpret("int32", v)`` or, as TVM also accepts, ``T.reinterpret(v, dtype="int32")``."""
    if dtype is None:
        dtype, args = args[0], args[1:]
    (value,) = args
    return Call(_dt.canonical(dtype), "tir.reinterpret", [_op.convert(value)])


def call_llvm_pure_intrin(*args: Any, dtype: str | None = None) -> PrimExpr:
    """A call of an LLVM intrinsic without side effects, as TVM writes it:
    ``T.call_llvm_pure_intrin("int32x16", "llvm.x86.avx512.vpdpbusd.512", T.uint32(3), c, a,
    b)`` or ``T.call_llvm_pure_intrin(T.llvm_lookup_intrinsic_id(name), n, *args, dtype=...)``."""
    dtype, name, rest = _extern_args(args, dtype)
    return _op.call_llvm_pure_intrin(dtype, name, *rest)


def call_llvm_intrin(*args: Any, dtype: str | None = None) -> PrimExpr:
    """A call of an LLVM intrinsic that may have side effects (arguments as
    ``call_llvm_pure_intrin``)."""
    dtype, name, rest = _extern_args(args, dtype)
    return _op.call_llvm_intrin(dtype, name, *rest)


def llvm_lookup_intrinsic_id(name: str) -> PrimExpr:
    """The handle of an LLVM intrinsic for ``call_llvm_(pure_)intrin`` (its name here)."""
    return _op.llvm_lookup_intrinsic_id(name)


def get_active_lane_mask(dtype: str, base: Any, limit: Any) -> PrimExpr:
    """The mask whose lane ``k`` is ``base + k < limit``."""
    return _op.get_active_lane_mask(dtype, base, limit)


def assume(condition: Any) -> PrimExpr:
    """``T.assume(cond)``: a fact the simplifier may use (a statement on its own line)."""
    return Call("bool", "tir.assume", [_op.convert(condition)])


def address_of(load: Any) -> PrimExpr:
    """``&A[i]``: the address of a buffer element (a handle)."""
    return Call("handle", "tir.address_of", [load])


def if_then_else(cond: Any, t: Any, f: Any, dtype: str | None = None) -> PrimExpr:
    """``cond ? t : f`` evaluating one branch (a ``Call``, never folded)."""
    if dtype is not None:
        t, f = _op.const(t, dtype), _op.const(f, dtype)
    t, f = _op.promote(t, f, "T.if_then_else")
    return Call(t.dtype, "tir.if_then_else", [_op.convert(cond), t, f])


def likely(cond: Any, dtype: str | None = None) -> PrimExpr:
    """``cond`` marked as the likely case (a ``Call``, never folded)."""
    cond = _op.convert(cond)
    return Call(cond.dtype, "tir.likely", [cond])


def _intrinsic(name: str) -> Any:
    """``T.exp(x)`` etc.: the ``tir.op`` builder's dtype, always as a ``Call`` of ``tir.<name>``."""
    maker = getattr(_op, name, None)
    op_name = f"tir.{name}"

    def build(*args: Any, dtype: str | None = None) -> PrimExpr:
        args = [_op.convert(a) if dtype is None else _op.const(a, dtype) for a in args]
        result = maker(*args) if maker is not None else None
        if isinstance(result, Call) and result.op == op_name:
            return result
        dtype = result.dtype if result is not None else args[0].dtype
        return Call(dtype, op_name, args)

    build.__name__ = name
    build.__doc__ = f"``tir.{name}`` applied to the arguments."
    return build


_SPECIAL = {"call_extern", "call_pure_extern", "reinterpret", "get_active_lane_mask", "vscale",
            "assume", "if_then_else", "likely", "address_of", "call_llvm_intrin",
            "call_llvm_pure_intrin"}
for _op_name in INTRINSICS:
    _short = _op_name[4:]
    if _short not in _SPECIAL:
        globals()[_short] = _intrinsic(_short)
abs = _op.abs  # noqa: A001 (TVM's name)
ceildiv = _op.ceildiv
max_value, min_value = _op.max_value, _op.min_value
all = _op.all  # noqa: A001
any = _op.any  # noqa: A001 (T.any; the node class is T.Any)


def prim_func(func: Any = None, *, private: bool = False, check_well_formed: bool = True) -> Any:
    """Decorator: parse the function's source into a ``tir.PrimFunc``.

    ``@T.prim_func`` or ``@T.prim_func(private=True)``; see ``tir.script``.
    """
    from .entry import parse_function

    if func is None:
        return lambda f: parse_function(f, private=private)
    return parse_function(func, private=private)

