"""An imperative builder for TIR statements, as TVM's ``tvm.tir.ir_builder``.

Statements are emitted into the current scope; ``with`` blocks open nested
scopes (loops, branches, new scopes) whose statements become the body of the
node built when the block ends. ``let`` and ``allocate`` wrap everything
emitted after them in the same scope.

>>> from tir import ir_builder, var, const
>>> n = var("n")
>>> ib = ir_builder.create()
>>> A = ib.pointer("float32", name="A")
>>> with ib.for_range(0, n, name="i") as i:
...     A[i] += const(1, "float32")
>>> type(ib.get()).__name__
'For'
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

from . import dtype as dt
from . import op
from .buffer import Buffer, decl_buffer
from .expr import BufferLoad, IntImm, PrimExpr, SizeVar, StringImm, Var, access_dtype
from .stmt import (
    Allocate,
    AssertStmt,
    AttrStmt,
    BufferStore,
    Evaluate,
    For,
    ForKind,
    IfThenElse,
    LetStmt,
    SeqStmt,
    Stmt,
    While,
    loop_bounds_error,
)

#: ``for_range`` kind names, as TVM spells them.
FOR_KINDS = {
    "serial": ForKind.SERIAL,
    "parallel": ForKind.PARALLEL,
    "vectorize": ForKind.VECTORIZED,
    "unroll": ForKind.UNROLLED,
}


class BufferView:
    """A buffer seen from the builder: ``A[i]`` loads, ``A[i] = v`` emits a store.

    Made by ``IRBuilder.pointer``, ``buffer_ptr`` and ``allocate``; do not
    create it directly. ``asbuffer()`` gives the underlying ``tir.Buffer``.
    """

    __slots__ = ("_buffer", "_builder")

    def __init__(self, builder: IRBuilder, buffer: Buffer):
        self._builder = builder
        self._buffer = buffer

    def asbuffer(self) -> Buffer:
        """The ``tir.Buffer`` this view reads and writes."""
        return self._buffer

    asobject = asbuffer  # TVM's name

    @property
    def buffer(self) -> Buffer:
        """The ``tir.Buffer`` this view reads and writes."""
        return self._buffer

    @property
    def dtype(self) -> str:
        """The element dtype (the pointer's content type)."""
        return self._buffer.dtype

    @property
    def name(self) -> str:
        """The buffer's name."""
        return self._buffer.name

    @property
    def shape(self) -> tuple:
        """The buffer's shape."""
        return self._buffer.shape

    @property
    def data(self) -> Var:
        """The handle var holding the buffer's address."""
        return self._buffer.data

    def __repr__(self) -> str:
        return f"<BufferView {self.name}: {self.dtype}, {len(self.shape)}-d>"

    def _indices(self, index: Any) -> tuple:
        indices = index if isinstance(index, tuple) else (index,)
        ndim = len(self._buffer.shape)
        if len(indices) != ndim:
            raise ValueError(
                f"buffer {self.name} has {ndim} dimension(s), got {len(indices)} "
                f"index(es); write {self.name}[{', '.join(f'i{k}' for k in range(ndim))}]"
            )
        out = []
        for i in indices:
            if isinstance(i, BufferView) or not (isinstance(i, PrimExpr) or _is_number(i)):
                raise TypeError(
                    f"index into buffer {self.name} must be an integer expression, "
                    f"got {type(i).__name__}"
                )
            out.append(i if isinstance(i, PrimExpr) else op.convert(i))
        return tuple(out)

    def __getitem__(self, index: Any) -> BufferLoad:
        return BufferLoad(self._buffer, self._indices(index))

    def __setitem__(self, index: Any, value: Any) -> None:
        indices = self._indices(index)
        expected = access_dtype(self._buffer, indices)
        value = self._store_value(value, expected)
        self._builder.emit(BufferStore(self._buffer, value, indices))

    def _store_value(self, value: Any, expected: str) -> PrimExpr:
        if _is_number(value):
            try:
                return op.const(value, expected)
            except (TypeError, ValueError) as err:
                raise TypeError(f"cannot store {value!r} into buffer {self.name}: {err}") from None
        if not isinstance(value, PrimExpr):
            raise TypeError(
                f"value stored into buffer {self.name} must be a PrimExpr or a number, "
                f"got {type(value).__name__}"
            )
        if value.dtype != expected:
            raise ValueError(
                f"dtype of the value stored into buffer {self.name} does not match: "
                f"buffer element type is {self.dtype} (expects {expected} here), "
                f"value is {value.dtype}"
            )
        return value


def _is_number(value: Any) -> bool:
    if isinstance(value, (bool, int, float)):
        return True
    return hasattr(value, "item") and hasattr(value, "dtype") and not isinstance(value, PrimExpr)


class IRBuilder:
    """Builds a statement by emitting into nested scopes (see the module doc)."""

    def __init__(self):
        self._seq_stack: list[list[Any]] = [[]]

    # ------------------------------------------------------------ emitting

    def emit(self, stmt: Any) -> None:
        """Append a statement (or an expression, wrapped in ``Evaluate``) to the scope.

        A callable ``body -> Stmt`` wraps everything emitted after it in the scope.
        """
        if isinstance(stmt, PrimExpr):
            stmt = Evaluate(stmt)
        if not isinstance(stmt, Stmt) and not callable(stmt):
            raise TypeError(
                f"emit: expected a Stmt, a PrimExpr or a callable body -> Stmt, "
                f"got {type(stmt).__name__}"
            )
        self._seq_stack[-1].append(stmt)

    def _pop_seq(self) -> Stmt:
        return _build_seq(self._seq_stack.pop())

    @contextlib.contextmanager
    def _scope(self, value: Any, finish: Callable[[Stmt], Any]) -> Iterator[Any]:
        """Open a scope; on normal exit, ``finish(body)`` emits the scope's node."""
        self._seq_stack.append([])
        depth = len(self._seq_stack)
        try:
            yield value
        except BaseException:
            del self._seq_stack[depth - 1:]  # leave the builder usable after an error
            raise
        if len(self._seq_stack) != depth:
            raise RuntimeError("ir_builder: scopes were closed out of order")
        self.emit(finish(self._pop_seq()))

    def get(self) -> Stmt:
        """The statement built so far (a flat ``SeqStmt`` for several, ``Evaluate(0)`` for none)."""
        if len(self._seq_stack) != 1:
            raise RuntimeError("ir_builder: cannot call get() inside a construction scope")
        return _build_seq(list(self._seq_stack[0]))

    # ------------------------------------------------------------ scopes

    def for_range(
        self,
        begin: Any,
        end: Any,
        name: str = "i",
        dtype: str | None = None,
        kind: str | ForKind = "serial",
        step: Any = None,
        annotations: dict | None = None,
    ) -> contextlib.AbstractContextManager:
        """A ``for`` scope over ``[begin, end)``; entering it gives the loop var.

        ``kind`` is ``"serial"``, ``"parallel"``, ``"vectorize"`` or
        ``"unroll"``. The loop var's dtype is ``dtype`` or that of
        ``begin``/``end`` (int32 for Python ints). With a ``step``, the loop
        runs ``ceildiv(end - begin, step)`` times over a var ``i`` from 0 and
        entering gives the expression ``begin + i * step``; a symbolic step
        is asserted positive when the loop is reached. ``annotations``
        become the loop's ``For.annotations``, e.g.
        ``{"tir.vectorize.assume_independent": True}`` (no dependence check).
        """
        kind_id = _for_kind(kind)
        begin, end = _loop_bounds(begin, end, dtype, name)
        loop_var = Var(name, begin.dtype)
        step_check = None
        if step is None or op.is_const_int(step, 1):
            extent = op.sub(end, begin)
            value = loop_var
        else:
            # As TVM: ceildiv(end - begin, step) trips of i, yielding begin + i * step.
            step = _loop_step(step, begin.dtype, name)
            extent = _stepped_extent(begin, end, step, name)
            value = op.add(begin, op.mul(loop_var, step))
            begin = op.const(0, begin.dtype)
            step_check = _step_check(step, name)

        def finish(body: Stmt) -> Stmt:
            loop = For(loop_var, begin, extent, kind_id, body, annotations)
            return loop if step_check is None else AssertStmt(*step_check, loop)

        return self._scope(value, finish)

    def while_loop(self, cond: Any) -> contextlib.AbstractContextManager:
        """A ``while cond`` scope."""
        cond = _condition(cond, "while_loop")
        return self._scope(None, lambda body: While(cond, body))

    def if_scope(self, cond: Any) -> contextlib.AbstractContextManager:
        """An ``if cond`` scope; an ``else_scope`` may follow it directly."""
        cond = _condition(cond, "if_scope")
        return self._scope(None, lambda body: IfThenElse(cond, body))

    def else_scope(self) -> contextlib.AbstractContextManager:
        """The ``else`` of the ``if_scope`` that was just closed."""
        seq = self._seq_stack[-1]
        prev = seq[-1] if seq else None
        if not isinstance(prev, IfThenElse) or prev.else_case is not None:
            got = "nothing" if prev is None else type(prev).__name__
            if isinstance(prev, IfThenElse):
                got = "an IfThenElse that already has an else branch"
            raise RuntimeError(
                f"else_scope must directly follow an if_scope in the same scope, "
                f"but the last statement emitted is {got}"
            )
        seq.pop()
        return self._scope(
            None, lambda body: IfThenElse(prev.condition, prev.then_case, body)
        )

    def new_scope(self) -> contextlib.AbstractContextManager:
        """A plain scope: bounds the reach of ``let``, ``allocate`` and ``scope_attr``."""
        return self._scope(None, lambda body: body)

    # ------------------------------------------------------------ wrappers

    def let(self, name: str, value: Any) -> Var:
        """Bind a new var ``name`` to ``value`` for the rest of the scope; returns the var."""
        value = op.convert(value)
        var = Var(name, value.dtype)
        self.emit(lambda body: LetStmt(var, value, body))
        return var

    def scope_attr(self, node: Any, key: str, value: Any) -> None:
        """Annotate the rest of the scope with ``AttrStmt(node, key, value)``."""
        if isinstance(node, BufferView):
            node = node.asbuffer()
        elif isinstance(node, str):
            node = StringImm(node)
        self.emit(lambda body: AttrStmt(node, key, value, body))

    def allocate(
        self, dtype: str, shape: Any, name: str = "buf", scope: str = ""
    ) -> BufferView:
        """Allocate a buffer for the rest of the scope; returns a view to index it."""
        dtype = dt.canonical(dtype)
        if not isinstance(shape, (list, tuple)):
            shape = (shape,)
        if not shape:
            raise ValueError(f"allocate {name}: shape must have at least one dimension")
        data = Var(name, "handle", type_annotation=dtype)
        buffer = decl_buffer(tuple(shape), dtype, name, data=data, scope=scope)
        extents = buffer.shape
        self.emit(lambda body: Allocate(data, dtype, extents, op.const(True, "bool"), body))
        return BufferView(self, buffer)

    # ------------------------------------------------------------ pointers

    def pointer(self, content_type: str, name: str = "ptr", scope: str = "") -> BufferView:
        """A 1-D buffer of ``content_type`` behind a new handle ``name``, of length ``name_len``."""
        content_type = dt.canonical(content_type)
        data = Var(name, "handle", type_annotation=content_type)
        buffer = Buffer(data, content_type, (SizeVar(f"{name}_len"),), name=name, scope=scope)
        return BufferView(self, buffer)

    def buffer_ptr(self, buf: Buffer) -> BufferView:
        """A view of the existing buffer ``buf``, indexed with one index per dimension."""
        if isinstance(buf, BufferView):
            buf = buf.asbuffer()
        if not isinstance(buf, Buffer):
            raise TypeError(f"buffer_ptr: expected a tir.Buffer, got {type(buf).__name__}")
        return BufferView(self, buf)

    def likely(self, expr: Any) -> PrimExpr:
        """``expr`` marked as the likely case (a branch hint)."""
        return op.likely(expr)


# ---------------------------------------------------------------- helpers


def _build_seq(items: list) -> Stmt:
    """One statement from a scope's items; a callable wraps all items after it."""
    tail: list[Stmt] = []
    for item in reversed(items):
        if isinstance(item, Stmt):
            tail.insert(0, item)
        else:
            tail = [item(SeqStmt.flatten(tail))]
    return SeqStmt.flatten(tail)


def _for_kind(kind: Any) -> ForKind:
    if isinstance(kind, ForKind):
        return kind
    if kind not in FOR_KINDS:
        raise ValueError(
            f"for_range: unknown kind {kind!r}; expected one of {', '.join(FOR_KINDS)}"
        )
    return FOR_KINDS[kind]


def _loop_bounds(begin: Any, end: Any, dtype: str | None, name: str) -> tuple[PrimExpr, PrimExpr]:
    """``begin`` and ``end`` as expressions of the loop var's dtype."""
    for value, what in ((begin, "begin"), (end, "end")):
        if not isinstance(value, PrimExpr) and not _is_number(value):
            raise TypeError(
                f"for_range {name}: {what} must be an integer expression or int, "
                f"got {type(value).__name__}"
            )
    begin, end = op.promote(begin, end, f"for_range {name}")
    if dtype is not None:
        dtype = dt.canonical(dtype)
        _check_const_bounds(begin, end, dtype, name)  # the casts below would wrap them
        begin, end = op.cast(dtype, begin), op.cast(dtype, end)
    t = dt.DataType(begin.dtype)
    if not t.is_integer or t.is_vector:
        raise TypeError(
            f"for_range {name}: bounds must be scalar integers, got begin {begin.dtype}, "
            f"end {end.dtype}"
        )
    return begin, end


def _check_const_bounds(begin: PrimExpr, end: PrimExpr, dtype: str, name: str) -> None:
    """Constant bounds must fit the loop var's ``dtype`` (ValueError naming them otherwise)."""
    if not (isinstance(begin, IntImm) and isinstance(end, IntImm)):
        return
    if not dt.DataType(dtype).is_integer:
        return  # _loop_bounds reports the dtype itself
    error = loop_bounds_error(name, dtype, begin.value, end.value)
    if error is not None:
        raise ValueError(f"for_range {name}: {error}")


def _stepped_extent(begin: PrimExpr, end: PrimExpr, step: PrimExpr, name: str) -> PrimExpr:
    """``ceildiv(end - begin, step)``, the trip count of a loop with a step.

    With constant bounds it is computed on Python ints: ``end - begin + step - 1``
    may not fit the loop var's dtype even when the trip count does.
    """
    if not all(isinstance(e, IntImm) for e in (begin, end, step)):
        # (end - begin - 1) // step + 1: the textbook (end - begin + step - 1) // step
        # overflows for a large step (0..16 by 2**31 - 1 would run no trip).
        return op.add(op.floordiv(op.sub(op.sub(end, begin), 1), step), 1)
    trips = -((begin.value - end.value) // step.value)
    error = loop_bounds_error(name, begin.dtype, 0, trips)
    if error is not None:
        raise ValueError(f"for_range {name}: counting the steps, {error}")
    return op.const(trips, begin.dtype)


def _step_check(step: PrimExpr, name: str) -> tuple[PrimExpr, str] | None:
    """The runtime check of a symbolic step: 0 would divide by zero counting the trips."""
    if isinstance(step, IntImm):
        return None  # _loop_step checked it
    message = f"for_range {name}: the step {step} must be positive"
    return op.greater(step, op.const(0, step.dtype)), message


def _loop_step(step: Any, dtype: str, name: str) -> PrimExpr:
    step = op.const(step, dtype) if _is_number(step) else op.cast(dtype, step)
    if isinstance(step, PrimExpr) and op.is_const_int(step) and step.value <= 0:
        raise ValueError(f"for_range {name}: step must be positive, got {step.value}")
    return step


def _condition(cond: Any, owner: str) -> PrimExpr:
    if isinstance(cond, bool):
        return op.const(cond, "bool")
    if not isinstance(cond, PrimExpr) or cond.dtype != "bool":
        got = cond.dtype if isinstance(cond, PrimExpr) else type(cond).__name__
        raise TypeError(f"{owner}: condition must be a scalar bool expression, got {got}")
    return cond


def create() -> IRBuilder:
    """A new, empty ``IRBuilder``."""
    return IRBuilder()


__all__ = ["FOR_KINDS", "BufferView", "IRBuilder", "create"]
