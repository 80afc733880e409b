"""Tensors and the operations that produce them: ``placeholder``, ``compute``, ``reduce_axis``."""

from __future__ import annotations

import inspect
from typing import Any, Callable

from .. import dtype as dt
from ..block import IterVar, IterVarType
from ..buffer import Buffer, decl_buffer
from ..expr import BufferLoad, PrimExpr, Var
from ..range import Range


class Operation:
    """What produces a tensor: ``PlaceholderOp`` (an input) or ``ComputeOp``."""

    name: str


class PlaceholderOp(Operation):
    """An input tensor: a parameter of the function ``create_prim_func`` builds."""

    def __init__(self, name: str):
        self.name = name
        self.axis: list[IterVar] = []
        self.reduce_axis: list[IterVar] = []


class ComputeOp(Operation):
    """``out[axis] = body`` over the spatial ``axis``, reducing over ``reduce_axis`` if any."""

    def __init__(self, name: str, tag: str, attrs: dict, axis: list[IterVar], body: PrimExpr,
                 input_tensors: list[Tensor]):
        from .reduce import Reduce

        self.name, self.tag, self.attrs = name, tag, dict(attrs or {})
        self.input_tensors = input_tensors
        self.axis = axis
        self.body = [body]
        self.reduce_axis = list(body.axis) if isinstance(body, Reduce) else []


class Tensor:
    """A te tensor: ``shape`` elements of ``dtype`` produced by ``op``.

    ``T[i, j]`` reads an element (a ``BufferLoad`` of the tensor's buffer), so
    compute bodies are ordinary TIR expressions.
    """

    def __init__(self, op: Operation, buffer: Buffer):
        self.op = op
        self.buffer = buffer

    @property
    def name(self) -> str:
        return self.op.name

    @property
    def shape(self) -> tuple:
        return self.buffer.shape

    @property
    def dtype(self) -> str:
        return self.buffer.dtype

    @property
    def ndim(self) -> int:
        return len(self.buffer.shape)

    def __getitem__(self, indices: Any) -> PrimExpr:
        if not isinstance(indices, tuple):
            indices = (indices,)
        indices = tuple(i.var if isinstance(i, IterVar) else i for i in indices)
        if len(indices) != self.ndim:
            raise IndexError(f"tensor {self.name} has {self.ndim} dimensions, "
                             f"indexed with {len(indices)}")
        if _READS:  # inside a compute's fcompute: note the producer
            _READS[-1].setdefault(id(self.buffer), self)
        return BufferLoad(self.buffer, indices)

    def __call__(self, *indices: Any) -> PrimExpr:
        return self[tuple(indices)]

    def __repr__(self) -> str:
        return f"Tensor(name={self.name}, shape={list(self.shape)}, dtype={self.dtype})"


def placeholder(shape: Any, dtype: str = "float32", name: str = "placeholder") -> Tensor:
    """An input tensor of ``shape`` (ints or vars) and ``dtype``.

    >>> A = placeholder((128, 64), "float32", name="A")
    """
    shape = _shape(shape, f"placeholder {name}")
    return Tensor(PlaceholderOp(name), decl_buffer(shape, dt.canonical(dtype), name))


def reduce_axis(dom: Any, name: str = "rv") -> IterVar:
    """A reduction axis over ``dom`` (an extent, a ``(begin, end)`` pair or a ``Range``)."""
    return IterVar(_range(dom), Var(name, "int32"), IterVarType.CommReduce)


def compute(shape: Any, fcompute: Callable[..., PrimExpr], name: str = "compute",
            tag: str = "", attrs: dict | None = None) -> Tensor:
    """A tensor of ``shape`` whose element ``[i, j, ...]`` is ``fcompute(i, j, ...)``.

    The axis vars take the lambda's parameter names; a body that is a reduction
    (``te.sum(..., axis=k)``) makes a reduction stage.

    >>> A = placeholder((64,), name="A")
    >>> B = compute((64,), lambda i: A[i] * 2.0, name="B")
    """
    from .reduce import Reduce, contains_reduce

    shape = _shape(shape, f"compute {name}")
    names = _arg_names(fcompute, len(shape), name)
    axis = [IterVar(Range.from_min_extent(0, s), Var(n, s.dtype), IterVarType.DataPar)
            for n, s in zip(names, shape)]
    _READS.append({})
    try:
        body = fcompute(*[iv.var for iv in axis])
    finally:
        reads = _READS.pop()
    if isinstance(body, (list, tuple)):
        if len(body) != 1:
            raise ValueError(f"compute {name}: fcompute returned {len(body)} values; "
                             "stages with several outputs are not supported")
        body = body[0]
    if not isinstance(body, PrimExpr):
        from ..op import const

        body = const(body)
    if not isinstance(body, Reduce) and contains_reduce(body):
        raise ValueError(f"compute {name}: a reduction (te.sum/max/min) must be the whole "
                         "body of its compute, not part of a larger expression; compute it "
                         "in a stage of its own")
    buffer = decl_buffer(tuple(shape), body.dtype, name)
    return Tensor(ComputeOp(name, tag, attrs or {}, axis, body, list(reads.values())), buffer)


# The tensors each running fcompute indexes (a stack: a compute may be built inside another's).
_READS: list[dict[int, Tensor]] = []


def _arg_names(fcompute: Callable, ndim: int, name: str) -> list[str]:
    try:
        params = list(inspect.signature(fcompute).parameters.values())
    except (TypeError, ValueError):
        params = []
    if len(params) == 1 and params[0].kind == inspect.Parameter.VAR_POSITIONAL:
        return [f"i{k}" for k in range(ndim)]
    if len(params) != ndim:
        raise ValueError(f"compute {name}: fcompute takes {len(params)} arguments for a "
                         f"{ndim}-dimensional shape")
    return [p.name for p in params]


def _shape(shape: Any, where: str) -> tuple:
    from ..op import convert

    if isinstance(shape, (int, PrimExpr)):
        shape = (shape,)
    out = []
    for s in shape:
        e = convert(s) if not isinstance(s, PrimExpr) else s
        if not dt.DataType(e.dtype).is_integer:
            raise TypeError(f"{where}: shape entries must be integers, got {e.dtype}")
        out.append(e)
    return tuple(out)


def _range(dom: Any) -> Range:
    if isinstance(dom, Range):
        return dom
    if isinstance(dom, (tuple, list)):
        if len(dom) != 2:
            raise ValueError(f"reduce_axis: dom must be (begin, end), got {dom!r}")
        return Range(dom[0], dom[1])
    return Range(dom)


def var(name: str = "tindex", dtype: str = "int32") -> Var:
    """A new variable (a symbolic shape or a scalar parameter)."""
    return Var(name, dtype)


def size_var(name: str = "size", dtype: str = "int32") -> Var:
    """A new variable known to be non-negative (a symbolic size)."""
    from ..expr import SizeVar

    return SizeVar(name, dtype)


__all__ = ["ComputeOp", "Operation", "PlaceholderOp", "Tensor", "compute", "placeholder",
           "reduce_axis", "size_var", "var"]


