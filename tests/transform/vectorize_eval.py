"""A tiny NumPy evaluator of TIR, for checking that vectorized programs compute what the
serial ones do. Vectorized loops run as serial loops here, so evaluating a function before
the pass gives the reference result.

Vectors are 1-D NumPy arrays; buffers are flat NumPy arrays of scalar elements (a buffer of
``float32x4`` elements holds 4 scalars per element). ``tir.call_extern`` calls are logged.
"""

from __future__ import annotations

import numpy as np

import tir
from tir import dtype as dt
from tir.functor import method_name

_NP = {"bool": np.bool_, "handle": np.int64}


def np_dtype(dtype: str):
    """The NumPy scalar type of one lane of ``dtype``."""
    elem = dt.element_of(dtype)
    return _NP.get(elem) or np.dtype(elem).type


def _trunc_div(a, b):
    q = np.abs(a) // np.abs(b)
    return np.where((a < 0) != (b < 0), -q, q).astype(np.result_type(a, b))


_BINARY = {
    tir.Add: np.add, tir.Sub: np.subtract, tir.Mul: np.multiply,
    tir.FloorDiv: np.floor_divide, tir.FloorMod: np.mod, tir.Min: np.minimum,
    tir.Max: np.maximum, tir.EQ: np.equal, tir.NE: np.not_equal, tir.LT: np.less,
    tir.LE: np.less_equal, tir.GT: np.greater, tir.GE: np.greater_equal,
    tir.And: np.logical_and, tir.Or: np.logical_or,
}
_UNARY_CALLS = {"tir.exp": np.exp, "tir.sqrt": np.sqrt, "tir.fabs": np.abs, "tir.floor": np.floor}


class Machine:
    """Runs one PrimFunc on NumPy arrays (by buffer name) and scalars (by param name)."""

    def __init__(self):
        self.env: dict[int, object] = {}
        self.mem: dict[int, np.ndarray] = {}
        self.calls: list[tuple] = []

    def run(self, func: tir.PrimFunc, arrays: dict, scalars: dict | None = None) -> dict:
        """Run ``func``; returns copies of the arrays after the run, by buffer name."""
        out = {}
        for param in func.params:
            buf = func.buffer_map.get(param)
            if buf is None:
                self.env[id(param)] = np.int32((scalars or {})[param.name])
                continue
            flat = np.array(arrays[buf.name], dtype=np_dtype(buf.dtype)).ravel().copy()
            self.mem[id(buf.data)] = out[buf.name] = flat
        with tir.stmt_functor.deep_recursion():
            self.stmt(func.body)
        return out

    # ---------------------------------------------------------------- dispatch
    def expr(self, e):
        return getattr(self, method_name(type(e)).replace("visit_", "e_"))(e)

    def stmt(self, s):
        return getattr(self, method_name(type(s)).replace("visit_", "s_"))(s)

    # ---------------------------------------------------------------- expressions
    def e_var(self, e):
        return self.env[id(e)]

    e_size_var = e_var

    def e_int_imm(self, e):
        return np_dtype(e.dtype)(e.value)

    e_float_imm = e_int_imm

    def e_string_imm(self, e):
        return e.value

    def _binary(self, e):
        a, b = self.expr(e.a), self.expr(e.b)
        if type(e) in (tir.Div, tir.Mod) and dt.DataType(e.a.dtype).is_integer:
            q = _trunc_div(a, b)
            return q if type(e) is tir.Div else (a - q * b).astype(q.dtype)
        if type(e) is tir.Div:
            return np.divide(a, b)
        with np.errstate(over="ignore"):
            return _BINARY[type(e)](a, b)

    e_add = e_sub = e_mul = e_div = e_mod = e_floor_div = e_floor_mod = _binary
    e_min = e_max = e_eq = e_ne = e_lt = e_le = e_gt = e_ge = e_and = e_or = _binary

    def e_not(self, e):
        return np.logical_not(self.expr(e.a))

    def e_select(self, e):
        return np.where(self.expr(e.condition), self.expr(e.true_value), self.expr(e.false_value))

    def e_cast(self, e):
        return np.asarray(self.expr(e.value)).astype(np_dtype(e.dtype))[()]

    def e_ramp(self, e):
        base, stride = self.expr(e.base), self.expr(e.stride)
        return (base + stride * np.arange(e.lanes)).astype(np_dtype(e.dtype))

    def e_broadcast(self, e):
        return np.full(e.lanes, self.expr(e.value), dtype=np_dtype(e.dtype))

    def e_shuffle(self, e):
        flat = np.concatenate([np.atleast_1d(self.expr(v)) for v in e.vectors])
        return flat[[i.value for i in e.indices]]

    def e_let(self, e):
        self.env[id(e.var)] = self.expr(e.value)
        return self.expr(e.body)

    def e_call(self, e):
        if e.op == "tir.if_then_else":
            return self.expr(e.args[1] if self.expr(e.args[0]) else e.args[2])
        args = [self.expr(a) for a in e.args]
        if e.op == "tir.reinterpret":
            return np.atleast_1d(args[0]).view(np_dtype(e.dtype))[()]
        if e.op in _UNARY_CALLS:
            return _UNARY_CALLS[e.op](args[0])
        if e.op == "tir.likely":
            return args[0]
        if e.op == "tir.fma":
            return args[0] * args[1] + args[2]
        self.calls.append((e.op, *[np.asarray(a).tolist() for a in args]))
        return np_dtype(e.dtype)(0)

    def _flat_index(self, buf, indices):
        index = np.asarray(self.expr(indices[-1]), dtype=np.int64)
        stride = 1
        for dim in range(len(indices) - 2, -1, -1):
            stride *= int(self.expr(buf.shape[dim + 1]))
            index = index + int(self.expr(indices[dim])) * stride
        per = dt.lanes_of(buf.dtype)
        return (np.atleast_1d(index)[:, None] * per + np.arange(per)).ravel()

    def e_buffer_load(self, e):
        where = self._flat_index(e.buffer, e.indices)
        values = self.mem[id(e.buffer.data)][where]
        if e.predicate is not None:
            values = np.where(self.expr(e.predicate), values, 0)
        return values if dt.lanes_of(e.dtype) > 1 else values[0]

    # ---------------------------------------------------------------- statements
    def s_buffer_store(self, s):
        where = self._flat_index(s.buffer, s.indices)
        values = np.broadcast_to(self.expr(s.value), where.shape)
        mask = np.ones(where.shape, bool) if s.predicate is None else self.expr(s.predicate)
        memory = self.mem[id(s.buffer.data)]
        for k in range(len(where)):  # in lane order: the last lane wins, as in the serial loop
            if mask[k]:
                memory[where[k]] = values[k]

    def s_for(self, s):
        lo, extent = int(self.expr(s.min)), int(self.expr(s.extent))
        for v in range(lo, lo + extent):
            self.env[id(s.loop_var)] = np_dtype(s.loop_var.dtype)(v)
            self.stmt(s.body)

    def s_while(self, s):
        while self.expr(s.condition):
            self.stmt(s.body)

    def s_if_then_else(self, s):
        if self.expr(s.condition):
            self.stmt(s.then_case)
        elif s.else_case is not None:
            self.stmt(s.else_case)

    def s_seq_stmt(self, s):
        for child in s.seq:
            self.stmt(child)

    def s_let_stmt(self, s):
        self.env[id(s.var)] = self.expr(s.value)
        self.stmt(s.body)

    def s_allocate(self, s):
        size = int(np.prod([int(self.expr(e)) for e in s.extents])) * dt.lanes_of(s.dtype)
        self.mem[id(s.buffer_var)] = np.zeros(size, dtype=np_dtype(s.dtype))
        self.stmt(s.body)

    def s_attr_stmt(self, s):
        self.stmt(s.body)

    def s_evaluate(self, s):
        self.expr(s.value)

    def s_assert_stmt(self, s):
        assert self.expr(s.condition)
        self.stmt(s.body)


def run(func: tir.PrimFunc, arrays: dict, scalars: dict | None = None) -> tuple[dict, list]:
    """The arrays after running ``func``, and the log of extern calls."""
    machine = Machine()
    out = machine.run(func, arrays, scalars)
    return out, machine.calls


def assert_same_result(before: tir.PrimFunc, after: tir.PrimFunc, arrays: dict,
                       scalars: dict | None = None) -> dict:
    """Run both functions on copies of ``arrays``: every buffer and the call log must agree."""
    want, want_calls = run(before, arrays, scalars)
    got, got_calls = run(after, arrays, scalars)
    for name in want:
        np.testing.assert_array_equal(got[name], want[name], err_msg=f"buffer {name}")
    assert got_calls == want_calls
    return got
