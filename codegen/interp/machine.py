"""The interpreter proper: evaluates TIR expressions and runs statements on NumPy values.

``Machine`` holds the environment (Var -> value; a handle var's value is the
flat NumPy array of its memory) and dispatches by node class to one method
per node, named as in ``tir.functor`` (``visit_add``, ``visit_for``). A node
without a method is an error, never silently skipped. Semantics follow
TIR/LLVM: integers wrap around, ``Div``/``Mod`` truncate while
``FloorDiv``/``FloorMod`` floor, ``Select`` evaluates both sides and
``if_then_else`` only one, loops of every kind run serially.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np

from tir import dtype as dt
from tir.analysis.var_use import used_vars
from tir.buffer import Buffer
from tir.expr import IntImm, Var
from tir.functor import method_name
from tir.stmt import loop_bounds_error, negative_extent_message

from . import memory, values
from .intrinsics import ELEMENTWISE
from .llvm_intrinsics import LLVM_INTRINSICS


class ReturnValue(Exception):
    """Raised by ``tir.ret`` to leave the function with a value."""

    def __init__(self, value: Any):
        super().__init__("tir.ret")
        self.value = value


class Machine:
    """Evaluates one PrimFunc call; ``env`` maps vars to values and handles to memory."""

    _tables: ClassVar[dict] = {}  # node class -> method, shared by all machines

    def __init__(self, env: dict, vscale: int = 1, poison_allocations: bool = False,
                 name: str = "main", externs: dict | None = None):
        self.env = env
        self.name = name
        self.vscale = vscale
        self.poison_allocations = poison_allocations
        self.externs = externs or {}
        self._entry_vars = set(env)
        self._layouts: dict = {}

    # ------------------------------------------------------------ dispatch

    def _method(self, cls: type) -> Callable:
        fn = Machine._tables.get(cls)
        if fn is None:
            fn = self._resolve(cls)
            Machine._tables[cls] = fn
        return fn

    @staticmethod
    def _resolve(node_cls: type) -> Callable:
        for base in node_cls.__mro__:
            fn = getattr(Machine, method_name(base), None)
            if fn is not None:
                return fn
        raise NotImplementedError(f"interpreter: no rule for {node_cls.__name__} nodes")

    def eval(self, expr: Any) -> Any:
        """The value of an expression."""
        return self._method(type(expr))(self, expr)

    def run(self, stmt: Any) -> None:
        """Execute a statement."""
        self._method(type(stmt))(self, stmt)

    def eval_int(self, expr: Any) -> int:
        """The value of a scalar integer expression as a Python int."""
        return expr.value if isinstance(expr, IntImm) else int(self.eval(expr))

    def _lanes(self, lanes: Any) -> int:
        return lanes if isinstance(lanes, int) else self.eval_int(lanes)

    def lanes_of(self, dtype: str) -> int:
        """Lanes of a value of ``dtype`` at this machine's vscale (``float32xvscalex4``: 4v)."""
        scalable = dt.DataType(dtype).is_scalable
        return dt.lanes_of(dtype) * (self.vscale if scalable else 1)

    # ------------------------------------------------------------ leaves

    def visit_var(self, v: Var) -> Any:
        """The var's current binding (a handle var's is its memory)."""
        try:
            return self.env[v]
        except KeyError:
            raise RuntimeError(
                f"interpreter: variable '{v.name}' is used outside its scope"
            ) from None

    def visit_int_imm(self, e: Any) -> Any:
        """A constant as a NumPy scalar of its dtype."""
        return values.make(e.value, e.dtype)

    visit_float_imm = visit_int_imm

    def visit_string_imm(self, e: Any) -> str:
        """The string itself (assertion messages, extern names)."""
        return e.value

    # ------------------------------------------------------------ arithmetic

    def visit_add(self, e: Any) -> Any:
        """a + b, wrapping around on integers."""
        return self.eval(e.a) + self.eval(e.b)

    def visit_sub(self, e: Any) -> Any:
        """a - b, wrapping around on integers."""
        return self.eval(e.a) - self.eval(e.b)

    def visit_mul(self, e: Any) -> Any:
        """a * b, wrapping around on integers."""
        return self.eval(e.a) * self.eval(e.b)

    def visit_div(self, e: Any) -> Any:
        """Truncated division on integers, true division on floats."""
        return values.trunc_div(self.eval(e.a), self.eval(e.b))

    def visit_mod(self, e: Any) -> Any:
        """Truncated remainder (the sign of a)."""
        return values.trunc_mod(self.eval(e.a), self.eval(e.b))

    def visit_floor_div(self, e: Any) -> Any:
        """Division rounding towards negative infinity."""
        return values.floor_div(self.eval(e.a), self.eval(e.b))

    def visit_floor_mod(self, e: Any) -> Any:
        """Remainder with the sign of b."""
        return values.floor_mod(self.eval(e.a), self.eval(e.b))

    def visit_min(self, e: Any) -> Any:
        """The smaller of a and b, lane by lane (floats: NaN wins, -0.0 < +0.0)."""
        return values.minimum(self.eval(e.a), self.eval(e.b))

    def visit_max(self, e: Any) -> Any:
        """The larger of a and b, lane by lane (floats: NaN wins, -0.0 < +0.0)."""
        return values.maximum(self.eval(e.a), self.eval(e.b))

    def visit_eq(self, e: Any) -> Any:
        """a == b, lane by lane."""
        return self.eval(e.a) == self.eval(e.b)

    def visit_ne(self, e: Any) -> Any:
        """a != b, lane by lane."""
        return self.eval(e.a) != self.eval(e.b)

    def visit_lt(self, e: Any) -> Any:
        """a < b, lane by lane."""
        return self.eval(e.a) < self.eval(e.b)

    def visit_le(self, e: Any) -> Any:
        """a <= b, lane by lane."""
        return self.eval(e.a) <= self.eval(e.b)

    def visit_gt(self, e: Any) -> Any:
        """a > b, lane by lane."""
        return self.eval(e.a) > self.eval(e.b)

    def visit_ge(self, e: Any) -> Any:
        """a >= b, lane by lane."""
        return self.eval(e.a) >= self.eval(e.b)

    def visit_and(self, e: Any) -> Any:
        """Logical and, lane by lane."""
        return np.logical_and(self.eval(e.a), self.eval(e.b))

    def visit_or(self, e: Any) -> Any:
        """Logical or, lane by lane."""
        return np.logical_or(self.eval(e.a), self.eval(e.b))

    def visit_not(self, e: Any) -> Any:
        """Logical not, lane by lane."""
        return np.logical_not(self.eval(e.a))

    # ------------------------------------------------------------ other expressions

    def visit_select(self, e: Any) -> Any:
        """Both values evaluated, then picked lane by lane."""
        cond, t, f = self.eval(e.condition), self.eval(e.true_value), self.eval(e.false_value)
        if np.ndim(cond) == 0 and np.ndim(t) == 0:
            return t if cond else f
        return np.where(cond, t, f).astype(values.np_dtype(e.dtype))

    def visit_cast(self, e: Any) -> Any:
        """Conversion with LLVM's meaning (see values.cast)."""
        return values.cast(self.eval(e.value), e.dtype)

    def visit_ramp(self, e: Any) -> Any:
        """base + stride * [0, 1, ..., lanes-1]."""
        lanes = self._lanes(e.lanes)
        base, stride = self.eval(e.base), self.eval(e.stride)
        return base + stride * np.arange(lanes, dtype=values.np_dtype(e.base.dtype))

    def visit_broadcast(self, e: Any) -> Any:
        """The value repeated in every lane."""
        return np.full(self._lanes(e.lanes), self.eval(e.value), values.np_dtype(e.dtype))

    def visit_shuffle(self, e: Any) -> Any:
        """Lanes picked from the concatenated vectors."""
        pool = np.concatenate([np.atleast_1d(self.eval(v)) for v in e.vectors])
        picked = pool[[i.value for i in e.indices]]
        return picked if len(picked) > 1 else picked[0]

    def visit_let(self, e: Any) -> Any:
        """The body with the var bound to the value."""
        with self._bound(e.var, self.eval(e.value)):
            return self.eval(e.body)

    def visit_call(self, e: Any) -> Any:
        """An intrinsic: the special ones here, element-wise ones from the table."""
        special = _SPECIAL_CALLS.get(e.op)
        if special is not None:
            return special(self, e)
        fn = ELEMENTWISE.get(e.op)
        if e.op == "tir.call_llvm_pure_intrin" and e.args[0].value in LLVM_INTRINSICS:
            meaning = LLVM_INTRINSICS[e.args[0].value]
            return meaning(*[self.eval(a) for a in e.args[2:]])
        if fn is None and e.op in ("tir.call_llvm_pure_intrin", "tir.call_llvm_intrin"):
            raise ValueError(f"interpreter: cannot evaluate the LLVM intrinsic "
                             f"{e.args[0].value} (it has no reference semantics here; run "
                             f"the function before tensorize to compare against)")
        if fn is None:
            raise ValueError(f"interpreter: cannot evaluate a call of {e.op!r}")
        return fn(*[self.eval(a) for a in e.args])

    def visit_buffer_load(self, e: Any) -> Any:
        """Checked read of one element or a vector of lanes (predicated lanes only)."""
        mask = None if e.predicate is None else self.eval(e.predicate)
        if mask is not None and np.ndim(mask) == 0:  # one lane: read it or read nothing
            if not mask:
                return values.np_dtype(e.dtype).type(0)  # what a masked-off lane reads
            mask = None
        mem, flat = self._address(e.buffer, e.indices, mask)
        return memory.load(mem, flat, mask)

    # ------------------------------------------------------------ statements

    def visit_buffer_store(self, s: Any) -> None:
        """Checked write of one element or a vector of lanes (predicated lanes only)."""
        value = self.eval(s.value)
        mask = None if s.predicate is None else self.eval(s.predicate)
        if mask is not None and np.ndim(mask) == 0:  # one lane: write it or write nothing
            if not mask:
                return
            mask = None
        mem, flat = self._address(s.buffer, s.indices, mask)
        memory.store(mem, flat, value, mask)

    def visit_seq_stmt(self, s: Any) -> None:
        """Each statement in order."""
        for stmt in s.seq:
            self.run(stmt)

    def visit_for(self, s: Any) -> None:
        """The body once per loop value, serially whatever the loop kind."""
        lo, extent = self.eval_int(s.min), self.eval_int(s.extent)
        self._check_loop_bounds(s.loop_var, lo, lo + extent)
        make, var, body = values.np_dtype(s.loop_var.dtype).type, s.loop_var, s.body
        run = self._method(type(body))
        with self._bound(var, None):
            for i in range(lo, lo + extent):
                self.env[var] = make(i)
                run(self, body)

    def _check_loop_bounds(self, var: Var, begin: int, end: int) -> None:
        """Raise OverflowError if the loop's ends do not fit its var (compiled code would wrap)."""
        low, high = values.int_bounds(var.dtype)
        if not (low <= begin <= high and low <= end <= high):
            error = loop_bounds_error(var.name, var.dtype, begin, end)
            raise OverflowError(f"{self.name}: {error}")

    def visit_while(self, s: Any) -> None:
        """The body while the condition holds."""
        while self.eval(s.condition):
            self.run(s.body)

    def visit_if_then_else(self, s: Any) -> None:
        """The branch the condition picks."""
        if self.eval(s.condition):
            self.run(s.then_case)
        elif s.else_case is not None:
            self.run(s.else_case)

    def visit_let_stmt(self, s: Any) -> None:
        """The body with the var bound to the value."""
        with self._bound(s.var, self.eval(s.value)):
            self.run(s.body)

    def visit_allocate(self, s: Any) -> None:
        """Fresh memory (zeroed, or poisoned) for the body's duration."""
        extents = [self.eval_int(e) for e in s.extents]
        for dim, (extent, value) in enumerate(zip(s.extents, extents)):
            if value < 0:  # worded as the compiled Module's run-time check
                message = negative_extent_message(s.buffer_var.name, dim, extent)
                raise RuntimeError(f"{self.name}: assertion failed: {message}")
        count = math.prod(extents) * self.lanes_of(s.dtype)
        with self._bound(s.buffer_var, self._new_memory(s.dtype, count)):
            self.run(s.body)

    def visit_attr_stmt(self, s: Any) -> None:
        """The body; annotations do not change what runs."""
        self.run(s.body)

    def visit_evaluate(self, s: Any) -> None:
        """The value, for its effect."""
        self.eval(s.value)

    def visit_assert_stmt(self, s: Any) -> None:
        """Fail with the message unless the condition holds, then the body."""
        if not self.eval(s.condition):
            # Worded as the compiled Module words it, so backends fail alike.
            raise RuntimeError(f"{self.name}: assertion failed: {self.eval(s.message)}")
        self.run(s.body)

    # ------------------------------------------------------------ helpers

    def _bound(self, var: Var, value: Any) -> _Binding:
        return _Binding(self.env, var, value)

    def _new_memory(self, dtype: str, count: int) -> np.ndarray:
        np_type = values.np_dtype(dtype)
        if not self.poison_allocations:
            return np.zeros(count, np_type)
        out = np.empty(count, np_type)
        out.view(np.uint8)[:] = 0xFF  # NaN for floats, -1 / max for integers
        return out

    def _address(self, buf: Buffer, indices: tuple, mask: Any) -> tuple:
        """The memory of ``buf`` and the flat positions of ``buf[indices]`` (checked)."""
        mem = self.env.get(buf.data)
        if not isinstance(mem, np.ndarray):  # a broken program, not a bad argument
            raise RuntimeError(  # noqa: TRY004
                f"interpreter: buffer '{buf.name}' has no memory (its data var "
                f"'{buf.data.name}' is not allocated here)"
            )
        mem = memory.view_of(mem, buf)
        index_values = [self.eval(i) for i in indices]
        flat = memory.flat_index(buf, self._layout(buf), index_values, mask, mem.size)
        return mem, flat

    def _layout(self, buf: Buffer) -> memory.Layout:
        cached = self._layouts.get(buf)
        if cached is not None:
            return cached
        shape = tuple(self.eval_int(d) for d in buf.shape)
        strides = tuple(self.eval_int(s) for s in buf.strides) or memory.row_major_strides(shape)
        layout = memory.Layout(shape, strides, self.eval_int(buf.elem_offset),
                               self.lanes_of(buf.dtype))
        if self._depends_only_on_entry(buf):
            self._layouts[buf] = layout
        return layout

    def _depends_only_on_entry(self, buf: Buffer) -> bool:
        """Whether the layout of ``buf`` can be cached for the whole call."""
        free = used_vars([*buf.shape, *buf.strides, buf.elem_offset])
        return all(v in self._entry_vars for v in free)


class _Binding:
    """Bind ``var`` for a ``with`` block and restore the previous binding after."""

    __slots__ = ("env", "old", "value", "var")

    def __init__(self, env: dict, var: Var, value: Any):
        self.env, self.var, self.value = env, var, value

    def __enter__(self) -> None:
        self.old = self.env.get(self.var, _UNBOUND)
        self.env[self.var] = self.value

    def __exit__(self, *exc: object) -> None:
        if self.old is _UNBOUND:
            self.env.pop(self.var, None)
        else:
            self.env[self.var] = self.old


_UNBOUND = object()


# ---------------------------------------------------------------- calls needing the machine


def _if_then_else(m: Machine, e: Any) -> Any:
    cond, t, f = e.args
    chosen = m.eval(cond)
    if np.ndim(chosen):  # a lane condition blends both sides, as the LLVM backend does
        return np.where(chosen, m.eval(t), m.eval(f)).astype(values.np_dtype(e.dtype))
    return m.eval(t) if chosen else m.eval(f)


def _ret(m: Machine, e: Any) -> Any:
    raise ReturnValue(m.eval(e.args[0]))


def _call_extern(m: Machine, e: Any) -> Any:
    """A Python function the user gave for ``name``, else a C math function by its meaning."""
    name = e.args[0].value
    user_fn = m.externs.get(name)
    if user_fn is not None:
        return values.cast(user_fn(*[m.eval(a) for a in e.args[1:]]), e.dtype)
    fn = ELEMENTWISE.get(f"tir.{name}")
    if fn is None and name.endswith("f"):  # the float32 variant: expf, sqrtf, ...
        fn = ELEMENTWISE.get(f"tir.{name[:-1]}")
    if fn is None:
        raise ValueError(
            f"interpreter: cannot call the extern function {name!r}; "
            "pass its Python version as build_interpreter(..., externs={name: fn})"
        )
    return values.cast(fn(*[m.eval(a) for a in e.args[1:]]), e.dtype)


def _active_lane_mask(m: Machine, e: Any) -> Any:
    """Lane ``k`` is ``base + k < limit``, in exact integers (no wrap-around)."""
    base, limit = (int(m.eval(a)) for a in e.args)
    lanes = m.lanes_of(e.dtype)
    return np.arange(base, base + lanes) < limit


def _undef(m: Machine, e: Any) -> Any:
    return values.make(0, e.dtype, m.lanes_of(e.dtype))


def _reduce(kind: str) -> Callable:
    """A horizontal reduction of the lanes of the first argument (from the second, if any)."""
    def run(m: Machine, e: Any) -> Any:
        start = m.eval(e.args[1]) if len(e.args) > 1 else None
        return values.cast(values.reduce_lanes(kind, m.eval(e.args[0]), start), e.dtype)

    return run


_SPECIAL_CALLS: dict[str, Callable] = {
    "tir.if_then_else": _if_then_else,
    "tir.likely": lambda m, e: m.eval(e.args[0]),
    "tir.reinterpret": lambda m, e: values.reinterpret(m.eval(e.args[0]), e.dtype),
    "tir.vscale": lambda m, e: values.make(m.vscale, e.dtype),
    "tir.assume": lambda m, e: values.make(True, "bool"),
    "tir.ret": _ret,
    "tir.call_extern": _call_extern,
    "tir.call_pure_extern": _call_extern,
    "tir.undef": _undef,
    "tir.get_active_lane_mask": _active_lane_mask,
}
# Horizontal reductions (VectorizeReductions; bound checks of gathers use and, of other
# vector indices min/max).
for _kind in ("add", "mul", "min", "max", "and", "or", "xor"):
    _SPECIAL_CALLS[f"tir.vector_reduce_{_kind}"] = _reduce(_kind)
for _kind in ("add", "mul"):  # any order is allowed; lane order is one
    _SPECIAL_CALLS[f"tir.vector_reduce_{_kind}_reassoc"] = _reduce(_kind)
