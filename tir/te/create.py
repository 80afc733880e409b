"""``create_prim_func``: te tensors to a ``PrimFunc`` of named blocks, one per compute stage."""

from __future__ import annotations

from typing import Any, Sequence

from ..block import Block, BlockRealize, IterVar
from ..expr import BufferLoad, Var
from ..function import PrimFunc
from ..functor import post_order_visit, substitute
from ..op import is_const_int
from ..stmt import BufferStore, For, ForKind, IfThenElse, SeqStmt, Stmt
from .reduce import Reduce
from .tensor import ComputeOp, PlaceholderOp, Tensor


def create_prim_func(ops: Sequence[Tensor | Var], index_dtype_override: str | None = None
                     ) -> PrimFunc:
    """A ``PrimFunc`` taking ``ops`` (tensors and scalar vars) as parameters, in order.

    Every compute stage that ``ops`` depend on becomes a block named after its
    tensor, inside loops named after its axes; stages not in ``ops`` are
    intermediates, allocated by the root block. The function is what
    ``tir.Schedule`` takes.

    >>> A = placeholder((64,), name="A")
    >>> B = compute((64,), lambda i: A[i] + 1.0, name="B")
    >>> f = create_prim_func([A, B])
    """
    if index_dtype_override not in (None, "int32"):
        raise ValueError("create_prim_func: only int32 indices are supported")
    args = list(ops)
    for a in args:
        if not isinstance(a, (Tensor, Var)):
            raise TypeError(f"create_prim_func: arguments must be te tensors or vars, got "
                            f"{type(a).__name__}")
    stages = _topological(t for t in args if isinstance(t, Tensor))
    in_args = {id(t.buffer) for t in args if isinstance(t, Tensor)}
    for t in stages:
        if isinstance(t.op, PlaceholderOp) and id(t.buffer) not in in_args:
            users = [u.name for u in stages if t in _inputs(u)]
            raise ValueError(f"create_prim_func: placeholder {t.name} is read by "
                             f"{', '.join(users)} but is not among the arguments")
    names = _unique_names([t for t in stages if isinstance(t.op, ComputeOp)])
    nests = [_stage(t, names[id(t)]) for t in stages if isinstance(t.op, ComputeOp)]
    if not nests:
        raise ValueError("create_prim_func: no compute stage among the arguments' producers")
    intermediates = [t.buffer for t in stages
                     if isinstance(t.op, ComputeOp) and id(t.buffer) not in in_args]
    root = Block([], "root", alloc_buffers=intermediates, body=SeqStmt.flatten(*nests))
    params = [t.buffer if isinstance(t, Tensor) else t for t in args]
    func = PrimFunc(params, BlockRealize([], True, root))
    return func.with_attr("global_symbol", "main").with_attr("tir.noalias", True)


def _inputs(t: Tensor) -> list[Tensor]:
    """The tensors ``t``'s compute reads, checked against the loads in its body."""
    if not isinstance(t.op, ComputeOp):
        return []
    known = {id(u.buffer): u for u in t.op.input_tensors}
    loads: list[Any] = []
    body = t.op.body[0]
    parts = (body.source, body.condition, body.init) if isinstance(body, Reduce) else (body,)
    for part in (p for p in parts if p is not None):
        post_order_visit(part, lambda n: loads.append(n) if isinstance(n, BufferLoad) else None)
    for n in loads:
        if id(n.buffer) not in known and n.buffer is not t.buffer:
            raise ValueError(f"compute {t.name}: reads buffer {n.buffer.name}, which is not "
                             "a te tensor indexed inside fcompute")
    return [u for u in t.op.input_tensors if u is not t]


def _topological(outputs: Any) -> list[Tensor]:
    order: list[Tensor] = []
    seen: set[int] = set()

    def visit(t: Tensor) -> None:
        if id(t) in seen:
            return
        seen.add(id(t))
        for u in _inputs(t):
            visit(u)
        order.append(t)

    for t in outputs:
        visit(t)
    return order


def _unique_names(tensors: list[Tensor]) -> dict[int, str]:
    out: dict[int, str] = {}
    used: dict[str, int] = {}
    for t in tensors:
        base = t.name
        n = used.get(base, 0)
        used[base] = n + 1
        out[id(t)] = base if n == 0 else f"{base}_{n}"
    return out


def _stage(t: Tensor, name: str) -> Stmt:
    """The loop nest and block computing tensor ``t``."""
    comp: ComputeOp = t.op
    body = comp.body[0]
    axes = list(comp.axis) + list(comp.reduce_axis)
    loops = [Var(iv.var.name, iv.var.dtype) for iv in axes]
    block_vars = [IterVar(iv.dom, Var(f"v_{iv.var.name}", iv.var.dtype), iv.iter_type)
                  for iv in axes]
    vmap = {iv.var: bv.var for iv, bv in zip(axes, block_vars)}
    out_index = [bv.var for bv in block_vars[: len(comp.axis)]]
    if isinstance(body, Reduce):
        source = substitute(body.source, vmap)
        cond = substitute(body.condition, vmap)
        init_value = (substitute(body.init, vmap) if body.init is not None
                      else body.combiner.identity(body.dtype))
        init = BufferStore(t.buffer, init_value, out_index)
        update: Stmt = BufferStore(
            t.buffer, body.combiner.combine(BufferLoad(t.buffer, out_index), source), out_index)
        if not is_const_int(cond, 1):
            update = IfThenElse(cond, update)
        block = Block(block_vars, name, init=init, body=update)
    else:
        block = Block(block_vars, name, body=BufferStore(t.buffer, substitute(body, vmap),
                                                         out_index))
    stmt: Stmt = BlockRealize(loops, True, block)
    for lv, iv in reversed(list(zip(loops, axes))):
        stmt = For(lv, iv.min, iv.extent, ForKind.SERIAL, stmt)
    return stmt
