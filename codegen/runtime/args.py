"""Checking and binding the Python arguments of a compiled ``PrimFunc`` call.

Every backend (the LLVM ``Module`` and the reference interpreter) checks its
arguments here before running anything, so bad input is a ``TypeError`` or
``ValueError`` that names the function, the parameter, what was expected and
what was given, never a crash.

What each parameter accepts
---------------------------
- A buffer param (``func.buffer_map[param]``) takes a NumPy ndarray:
  - dtype: the buffer's element dtype (``bool`` buffers take NumPy ``bool``
    arrays, one byte per element; ``float16`` takes ``float16``, ``bfloat16``
    takes ``ml_dtypes.bfloat16``). A buffer of
    vector elements such as ``"float32x4"`` takes a ``float32`` array with one
    extra trailing dimension of 4 (the lanes): shape ``buffer.shape + (4,)``.
  - rank: the buffer's rank (plus one for vector elements). A pointer from
    ``ir_builder.pointer`` is a 1-D buffer of symbolic length and takes any
    1-D array.
  - shape: static dims must match; a dim that is a ``Var``/``SizeVar`` is bound
    from the array, and must agree with every other place the same var
    occurs (other buffers, scalar params). Composite dims (``n * 2``) are
    checked once their vars are bound.
  - layout: C-contiguous when the buffer has no ``strides``; with declared
    ``strides`` the array's element strides must match them (a symbolic
    stride is bound from the array). A symbolic ``elem_offset`` is bound to
    0; a non-zero constant ``elem_offset`` is not accepted on a param.
  - writeable, when the function stores into the buffer; not ``None``.
  - its own memory: two buffer params whose arrays' byte ranges overlap (one
    array passed twice, overlapping views of one array) are a ``ValueError``
    when the function stores into either, since buffer params are compiled
    ``noalias``. Two params it only reads may share memory. A function with
    the attribute ``"tir.noalias": False`` declares that its params may alias
    and is not checked (``PrimFunc.params_may_alias``).
- A scalar param takes a Python or NumPy number of its kind: ``int``/
  ``np.integer`` for integer params (a float or a bool is a ``TypeError``; a
  value out of the dtype's range a ``ValueError``), ``float``/``int``/NumPy
  reals for float params (a finite value beyond the dtype's range is a
  ``ValueError``), ``bool``/``np.bool_`` for bool params.
- A handle param that is not in ``buffer_map`` takes a C-contiguous ndarray.
- Where an ndarray is taken, so is any object that exports DLPack on the CPU
  (a PyTorch tensor, a JAX array): it is viewed as an ndarray without a copy
  (codegen/runtime/dlpack.py) and then checked as one.

Calling convention (for native backends)
----------------------------------------
``bind_arguments`` returns a ``BoundArgs``. The native entry function takes,
in this order:

1. one value per ``func.params``, in order (``BoundArgs.values``): a buffer or
   handle param as the address of the array's first element (``arr.ctypes.data``),
   a scalar param by value in its own dtype (the Python int/float/bool given
   in ``values``);
2. then one value per *hidden* var (``BoundArgs.hidden_vars`` /
   ``hidden_values``): the symbolic vars occurring in buffer shapes, strides
   and elem_offsets that are not themselves params, each by value in the
   var's own dtype. Their order is the order of first appearance walking the
   params in order, and for each buffer its shape, then its strides, then its
   elem_offset, left to right (``codegen.abi.hidden_vars_of(func)`` gives it without
   binding anything).

``ArgBinder(func, name)`` does the per-function analysis once; backends keep
one per entry point. ``bind_arguments(func, args, name)`` is the one-shot
form.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from tir import dtype as dt
from tir.buffer import Buffer
from tir.expr import (
    Add,
    Cast,
    Div,
    FloorDiv,
    FloorMod,
    IntImm,
    Max,
    Min,
    Mod,
    Mul,
    PrimExpr,
    SizeVar,
    Sub,
    Var,
)
from tir.function import PrimFunc
from tir.functor import post_order_visit
from tir.low_precision import numpy_dtype, round_float
from tir.stmt import BufferStore

from ..abi import hidden_vars_of
from .dlpack import as_ndarray, speaks_dlpack


class BoundArgs:
    """The checked arguments of one call, ready to pass to a backend."""

    __slots__ = ("hidden_vars", "values", "var_values")

    def __init__(self, values: tuple, var_values: dict, hidden_vars: tuple):
        #: One native value per param: ndarrays for buffers, Python numbers for scalars.
        self.values = values
        #: Every symbolic var's value (shape vars and scalar params): Var -> int.
        self.var_values = var_values
        #: The symbolic shape vars that are not params, in calling-convention order.
        self.hidden_vars = hidden_vars

    @property
    def hidden_values(self) -> tuple:
        """The values of ``hidden_vars``, in order (Python ints)."""
        return tuple(self.var_values[v] for v in self.hidden_vars)


# ---------------------------------------------------------------- symbolic dims


_INT_OPS: dict = {
    Add: operator.add,
    Sub: operator.sub,
    Mul: operator.mul,
    FloorDiv: operator.floordiv,
    FloorMod: operator.mod,
    Div: lambda a, b: abs(a) // abs(b) * (1 if (a >= 0) == (b >= 0) else -1),
    Mod: lambda a, b: a - (abs(a) // abs(b) * (1 if (a >= 0) == (b >= 0) else -1)) * b,
    Min: min,
    Max: max,
}


def _eval_index(expr: PrimExpr, values: dict) -> int | None:
    """The value of an integer shape expression, or None if a var is unbound."""
    if isinstance(expr, IntImm):
        return expr.value
    if isinstance(expr, Var):
        return values.get(expr)
    if isinstance(expr, Cast):
        return _eval_index(expr.value, values)
    op = _INT_OPS.get(type(expr))
    if op is None:
        raise ValueError(f"unsupported expression {expr} in a buffer shape")
    a, b = _eval_index(expr.a, values), _eval_index(expr.b, values)
    return None if a is None or b is None else op(a, b)


# ---------------------------------------------------------------- error messages


def _shape_text(dims: Any) -> str:
    parts = [str(d) for d in dims]
    return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"


def _expected_array(buf: Buffer) -> str:
    t = dt.DataType(buf.dtype)
    dims = list(buf.shape) + ([t.lanes] if t.lanes > 1 else [])
    kind = "bfloat16 (ml_dtypes.bfloat16)" if t.is_bfloat16 else str(t.element_of)
    return f"a {kind} array of shape {_shape_text(dims)}"


def _got(value: Any) -> str:
    if isinstance(value, np.ndarray):
        return f"{value.dtype} of shape {_shape_text(value.shape)}"
    if value is None:
        return "None"
    return f"{type(value).__name__} {value!r}"


# ---------------------------------------------------------------- checks, one per failure kind


def check_count(name: str, func: PrimFunc, args: tuple) -> None:
    """Raise TypeError unless ``args`` has one value per param."""
    if len(args) != len(func.params):
        names = ", ".join(p.name for p in func.params)
        raise TypeError(
            f"{name}: expects {len(func.params)} arguments ({names}), got {len(args)}"
        )


def check_array_type(name: str, pname: str, buf: Buffer, value: Any) -> None:
    """Raise TypeError unless ``value`` is an ndarray of the buffer's element dtype."""
    element = dt.element_of(buf.dtype)
    if not isinstance(value, np.ndarray) or str(value.dtype) != element:
        raise TypeError(
            f"{name}: argument '{pname}' expects {_expected_array(buf)}, got {_got(value)}"
        )


def check_rank(name: str, pname: str, buf: Buffer, value: np.ndarray) -> None:
    """Raise ValueError unless ``value`` has the buffer's rank (plus a lanes dim)."""
    lanes = dt.lanes_of(buf.dtype)
    rank = len(buf.shape) + (1 if lanes > 1 else 0)
    if value.ndim != rank or (lanes > 1 and value.shape[-1] != lanes):
        raise ValueError(
            f"{name}: argument '{pname}' expects {_expected_array(buf)} ({rank}-d), "
            f"got {_got(value)}"
        )


def check_static_dim(name: str, pname: str, buf: Buffer, value: np.ndarray, axis: int,
                     expected: int) -> None:
    """Raise ValueError unless dimension ``axis`` of ``value`` is ``expected``."""
    if value.shape[axis] != expected:
        raise ValueError(
            f"{name}: argument '{pname}' expects {_expected_array(buf)}, got {_got(value)} "
            f"(dimension {axis} is {value.shape[axis]}, expected {expected})"
        )


def check_layout(name: str, pname: str, buf: Buffer, value: np.ndarray) -> None:
    """Raise ValueError unless ``value`` is C-contiguous (buffers without declared strides)."""
    if not value.flags.c_contiguous:
        raise ValueError(
            f"{name}: argument '{pname}' must be a C-contiguous array; got one with strides "
            f"{value.strides}; pass np.ascontiguousarray({pname})"
        )


def check_strides(name: str, pname: str, value: np.ndarray, lanes: int) -> None:
    """Raise ValueError unless ``value``'s strides are non-negative whole elements."""
    step = value.itemsize * lanes
    outer = value.strides[: value.ndim - (lanes > 1)]
    packed_lanes = lanes == 1 or value.strides[-1] == value.itemsize
    if any(s < 0 or s % step for s in outer) or not packed_lanes:
        raise ValueError(
            f"{name}: argument '{pname}' has strides {value.strides} (bytes); a buffer with "
            f"declared strides needs non-negative multiples of the element size {step}"
        )


def check_writeable(name: str, pname: str, value: np.ndarray) -> None:
    """Raise ValueError if the function stores into a read-only array."""
    if not value.flags.writeable:
        raise ValueError(
            f"{name}: argument '{pname}' is read-only, but the function writes to it; "
            f"pass a writeable copy ({pname}.copy())"
        )


def check_overlap(name: str, first: _BufferSpec, second: _BufferSpec, a: np.ndarray,
                  b: np.ndarray) -> None:
    """Raise ValueError if the byte ranges of two buffer arguments overlap.

    ``np.may_share_memory`` compares the ranges [lowest byte, highest byte +
    itemsize) from each array's data pointer, shape and strides (any sign); an
    empty array has none. The native checks make the same compare.
    """
    if not np.may_share_memory(a, b):
        return
    # Copying a param only read is the usual fix: f(x, y, y) -> f(x, y.copy(), y).
    copy = first if second.writeable and not first.writeable else second
    raise ValueError(
        f"{name}: arguments '{first.pname}' and '{second.pname}' share memory (overlapping "
        f"ranges); buffer parameters must not alias. Pass a copy ({copy.pname}.copy()) or "
        "declare that the function's parameters may alias "
        "(func.with_attr(\"tir.noalias\", False))"
    )


def check_int_scalar(name: str, param: Var, value: Any) -> int:
    """``value`` as a Python int in the range of ``param``'s integer dtype."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(
            f"{name}: argument '{param.name}' expects an integer ({param.dtype}), got {_got(value)}"
        )
    t = dt.DataType(param.dtype)
    value = int(value)
    lo = 0 if isinstance(param, SizeVar) else t.min_value()
    if not lo <= value <= t.max_value():
        raise ValueError(
            f"{name}: argument '{param.name}' = {value} is out of range for {param.dtype} "
            f"[{lo}, {t.max_value()}]"
        )
    return value


def check_float_scalar(name: str, param: Var, value: Any) -> float:
    """``value`` as a Python float rounded to ``param``'s float dtype."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(
        value, (int, float, np.integer, np.floating)
    ):
        raise TypeError(
            f"{name}: argument '{param.name}' expects a number ({param.dtype}), got {_got(value)}"
        )
    rounded = round_float(float(value), param.dtype)  # once, also for bfloat16
    if np.isinf(rounded) and np.isfinite(float(value)):
        raise ValueError(
            f"{name}: argument '{param.name}' = {value} is out of range for {param.dtype}"
        )
    return rounded


def check_bool_scalar(name: str, param: Var, value: Any) -> bool:
    """``value`` as a Python bool."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(
            f"{name}: argument '{param.name}' expects a bool, got {_got(value)}"
        )
    return bool(value)


def check_handle(name: str, param: Var, value: Any) -> np.ndarray:
    """A handle param outside ``buffer_map`` takes a C-contiguous ndarray."""
    if not isinstance(value, np.ndarray):
        raise TypeError(f"{name}: argument '{param.name}' expects an array, got {_got(value)}")
    if not value.flags.c_contiguous:
        raise ValueError(f"{name}: argument '{param.name}' must be a C-contiguous array")
    return value


_SCALAR_CHECKS: dict[str, Callable] = {
    dt.INT: check_int_scalar,
    dt.UINT: check_int_scalar,
    dt.FLOAT: check_float_scalar,
    dt.BFLOAT: check_float_scalar,
    dt.BOOL: check_bool_scalar,
    dt.HANDLE: check_handle,
}


def check_scalar(name: str, param: Var, value: Any) -> Any:
    """``value`` converted for the scalar param ``param`` (see the module doc)."""
    t = dt.DataType(param.dtype)
    if t.is_vector:
        raise TypeError(f"{name}: vector param '{param.name}' ({param.dtype}) is not supported")
    return _SCALAR_CHECKS[t.type_code](name, param, value)


# ---------------------------------------------------------------- binding


class _BufferSpec:
    """What one buffer param accepts, worked out once so that each call is cheap."""

    def __init__(self, param: Var, buf: Buffer, stored: bool):
        self.param, self.buf, self.pname = param, buf, param.name
        self.np_dtype = numpy_dtype(buf.dtype)
        self.lanes = dt.lanes_of(buf.dtype)
        self.rank = len(buf.shape) + (1 if self.lanes > 1 else 0)
        self.contiguous = not buf.strides
        self.writeable = stored
        #: (axis, expected int) for static dims; (kind, axis, expr) for the symbolic ones.
        self.static = [(a, d.value) for a, d in enumerate(buf.shape) if isinstance(d, IntImm)]
        self.symbolic = [("shape", a, d) for a, d in enumerate(buf.shape)
                         if not isinstance(d, IntImm)]
        self.symbolic += [("stride", a, st) for a, st in enumerate(buf.strides)]
        if not isinstance(buf.elem_offset, IntImm):
            self.symbolic.append(("offset", 0, buf.elem_offset))

    def actual(self, value: np.ndarray, kind: str, axis: int) -> int:
        """The array's value for a shape dim, a stride (in elements) or the offset (0)."""
        if kind == "shape":
            return value.shape[axis]
        if kind == "stride":
            return value.strides[axis] // (value.itemsize * self.lanes)
        return 0

    def describe(self, value: np.ndarray, kind: str, axis: int) -> str:
        """Words for one fact about the array, for error messages."""
        got = self.actual(value, kind, axis)
        if kind == "stride":
            return f"stride {axis} = {got} of '{self.pname}'"
        if kind == "offset":
            return f"the elem_offset 0 of '{self.pname}'"
        if len(self.buf.shape) > 1:
            return f"dimension {axis} = {got} of '{self.pname}'"
        return f"the length {got} of '{self.pname}'"


class ArgBinder:
    """Checks and binds the arguments of one PrimFunc; build once, call ``bind`` per call."""

    def __init__(self, func: PrimFunc, name: str = "main"):
        if not isinstance(func, PrimFunc):
            raise TypeError(f"ArgBinder: expected a PrimFunc, got {type(func).__name__}")
        self.func = func
        self.name = name
        self.hidden_vars = hidden_vars_of(func)
        stored = stored_data_vars(func)
        self._specs: dict[int, _BufferSpec] = {}
        for index, param in enumerate(func.params):
            buf = func.buffer_map.get(param)
            if buf is not None:
                _check_param_offset(name, buf)
                writes = any(buf.data is v for v in stored)
                self._specs[index] = _BufferSpec(param, buf, writes)
        #: The param index pairs whose arrays must not overlap (see ``overlap_pairs``).
        self.overlap_pairs = overlap_pairs(func, self._specs)

    def bind(self, args: tuple) -> BoundArgs:
        """Check ``args`` against the function's params; raise TypeError/ValueError."""
        func, name = self.func, self.name
        if len(args) != len(func.params):
            check_count(name, func, args)
        if any(speaks_dlpack(a) for a in args):  # a PyTorch tensor, a JAX array, ...
            args = self._viewed(args)
        values = list(args)
        var_values: dict = {}
        origin: dict = {}  # var -> (spec, value, kind, axis) or None for a scalar param
        self._bind_scalars(args, values, var_values, origin)
        pending = self._bind_arrays(args, var_values, origin)
        self._check_pending(pending, var_values)
        for i, j in self.overlap_pairs:  # last, as in the native checks
            check_overlap(name, self._specs[i], self._specs[j], args[i], args[j])
        return BoundArgs(tuple(values), var_values, self.hidden_vars)

    def _bind_scalars(self, args: tuple, values: list, var_values: dict, origin: dict) -> None:
        """Check the scalar params; bind each non-handle one to its var."""
        for index, param in enumerate(self.func.params):
            if index in self._specs:
                continue
            values[index] = value = check_scalar(self.name, param, args[index])
            if not dt.DataType(param.dtype).is_handle:
                var_values[param] = value
                origin[param] = None

    def _bind_arrays(self, args: tuple, var_values: dict, origin: dict) -> list:
        """Check the array params and bind the vars their shapes and strides name.

        Returns the facts given by a compound expression (``n * 2``), checked once
        every plain var is bound.
        """
        pending = []
        for index, spec in self._specs.items():
            value = args[index]
            self._check_array(spec, value)
            for kind, axis, expr in spec.symbolic:
                got = spec.actual(value, kind, axis)
                if isinstance(expr, Var):
                    self._bind_var(expr, got, (spec, value, kind, axis), var_values, origin)
                else:
                    pending.append((expr, got, spec, value, kind, axis))
        return pending

    def _bind_var(self, var: Var, got: int, where: tuple, var_values: dict, origin: dict) -> None:
        """Bind ``var`` to ``got`` on first sight; later sights must agree with it."""
        known = var_values.get(var)
        if known is None:
            var_values[var] = got
            origin[var] = where
        elif known != got:
            spec, value, kind, axis = where
            raise self._disagree(var, known, origin[var], spec.describe(value, kind, axis))

    def _check_pending(self, pending: list, var_values: dict) -> None:
        """Each compound shape or stride expression must equal what the array has."""
        for expr, got, spec, value, kind, axis in pending:
            want = _eval_index(expr, var_values)
            if want is None:
                raise ValueError(f"{self.name}: cannot determine {expr} from the arguments")
            if want != got:
                what = spec.describe(value, kind, axis)
                raise ValueError(f"{self.name}: {what} does not match {expr} = {want}")

    def _viewed(self, args: tuple) -> tuple:
        """``args`` with each array param given through DLPack as an ndarray view."""
        out = list(args)
        for index, param in enumerate(self.func.params):
            if speaks_dlpack(args[index]) and (index in self._specs or param.dtype == "handle"):
                out[index] = as_ndarray(self.name, param.name, args[index])
        return tuple(out)

    def _check_array(self, spec: _BufferSpec, value: Any) -> None:
        """The cheap tests first; the check_* functions word the error."""
        name, pname, buf = self.name, spec.pname, spec.buf
        if not isinstance(value, np.ndarray) or value.dtype != spec.np_dtype:
            check_array_type(name, pname, buf, value)
        if value.ndim != spec.rank or (spec.lanes > 1 and value.shape[-1] != spec.lanes):
            check_rank(name, pname, buf, value)
        shape = value.shape
        for axis, want in spec.static:
            if shape[axis] != want:
                check_static_dim(name, pname, buf, value, axis, want)
        if spec.contiguous:
            if not value.flags.c_contiguous:
                check_layout(name, pname, buf, value)
        else:
            check_strides(name, pname, value, spec.lanes)
        if spec.writeable and not value.flags.writeable:
            check_writeable(name, pname, value)

    def _disagree(self, var: Var, known: int, source: Any, what: str) -> ValueError:
        if source is None:
            first = f"argument '{var.name}' = {known}"
        else:
            first = source[0].describe(*source[1:])
        return ValueError(f"{self.name}: {first} disagrees with {what} ({var.name})")


def overlap_pairs(func: PrimFunc, specs: dict) -> tuple:
    """The ``(i, j)`` pairs of buffer params (``i < j``) whose arrays must not overlap.

    Every pair the function stores into at least one of: under ``noalias`` a
    location written through one pointer may not be accessed through another,
    while memory only read may be shared. None when the function declares that
    its params may alias. Pairs, not a sort: k params make k(k-1)/2 compares,
    a handful for real kernels.
    """
    if func.params_may_alias:
        return ()
    indices = sorted(specs)
    return tuple((i, j) for n, i in enumerate(indices) for j in indices[n + 1:]
                 if specs[i].writeable or specs[j].writeable)


def _check_param_offset(name: str, buf: Buffer) -> None:
    offset = buf.elem_offset
    if isinstance(offset, IntImm) and offset.value != 0:
        raise ValueError(
            f"{name}: buffer '{buf.name}' has elem_offset {offset.value}; a parameter buffer "
            "must start at its array's first element (elem_offset 0 or a var)"
        )


def stored_data_vars(func: PrimFunc) -> list:
    """The data vars of the buffers that ``func`` stores into."""
    found: list = []

    def visit(node: Any) -> None:
        if isinstance(node, BufferStore) and not any(node.buffer.data is v for v in found):
            found.append(node.buffer.data)

    post_order_visit(func.body, visit)
    return found


def bind_arguments(func: PrimFunc, args: tuple, name: str = "main") -> BoundArgs:
    """Check ``args`` for a call of ``func`` and bind its symbolic shape vars.

    Args:
        func: the PrimFunc being called.
        args: the Python arguments, one per ``func.params``.
        name: the function name used in error messages.

    Returns:
        A ``BoundArgs`` (see the module doc for the calling convention).

    Raises:
        TypeError: wrong argument count, a non-array for a buffer, a wrong dtype,
            a wrong kind of scalar.
        ValueError: a wrong rank, shape, layout, a scalar out of range,
            symbolic dims that disagree, or two buffer arguments sharing memory.
    """
    return ArgBinder(func, name).bind(tuple(args))


__all__ = ["ArgBinder", "BoundArgs", "bind_arguments", "overlap_pairs"]
