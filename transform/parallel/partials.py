"""The rewrite of a parallel reduction: partial results per chunk, combined in chunk order.

``S[c] = S[c] OP f(i)`` in a parallel loop makes every iteration read and
write ``S[c]``. Split into a fixed number of chunks, each chunk reduces its
iterations into an accumulator of its own, and the chunks' results are
folded into ``S[c]`` in chunk order after the parallel loop::

    for i in parallel(n):            allocate S_partial[C]
        S[0] = S[0] + A[i]     ->    for i_chunk in parallel(C):
                                         allocate S_acc[1] (local)
                                         S_acc[0] = -0.0            (the identity of +)
                                         for i in range(i_chunk * m, i_chunk * m + len):
                                             S_acc[0] = S_acc[0] + A[i]
                                         S_partial[i_chunk] = S_acc[0]
                                     for i_chunk in range(C):
                                         S[0] = S[0] + S_partial[i_chunk]

with ``m = ceil(n / C)`` iterations per chunk and ``len = clamp(n - i_chunk * m,
0, m)``. C is ``CHUNKS`` (fewer when the loop is shorter), never the number of
threads: the chunks and the order of the final fold depend on ``n`` only, so
the result is the same at any thread count and on every run. The rest of the
body runs in each chunk's serial loop as written; an update inside ``if``s or
nested loops keeps its place, only its element becomes the chunk's own.
"""

from __future__ import annotations

from tir import op
from tir.buffer import decl_buffer
from tir.expr import BufferLoad, IntImm, PrimExpr, Var
from tir.functor import StmtExprMutator
from tir.node import replace
from tir.stmt import BufferStore, For, ForKind, SeqStmt, Stmt

from ..vector.analysis.reductions import Reduction, apart
from ..vector.reduction_ir import allocate, load_of, local_buffer

#: How many chunks a parallel reduction is split into at most: several per thread on
#: the machines we know (so a static schedule stays balanced), few enough that the
#: serial fold after the loop costs nothing next to a launch.
CHUNKS = 64


def chunk_count(extent: PrimExpr) -> int:
    """C for a loop of ``extent`` iterations: ``CHUNKS``, or the trip count when smaller."""
    if isinstance(extent, IntImm):
        return max(1, min(CHUNKS, extent.value))
    return CHUNKS


def parallel_reduction(loop: For, reductions: list[Reduction]) -> Stmt:
    """``loop`` (parallel, its accumulators ``reductions``) as chunks with partial results."""
    dtype = loop.loop_var.dtype
    count = op.max(loop.extent, op.const(0, dtype))  # a negative extent runs nothing
    chunks = chunk_count(loop.extent)
    size = op.floordiv(count + (chunks - 1), op.const(chunks, dtype))
    chunk = Var(f"{loop.loop_var.name}_chunk", dtype)
    first = chunk * size
    length = op.max(op.min(size, count - first), op.const(0, dtype))
    partials = [decl_buffer((chunks,), r.dtype, f"{r.store.buffer.name}_partial")
                for r in reductions]
    privates = [local_buffer(f"{r.store.buffer.name}_acc", r.dtype, 1) for r in reductions]
    body = _Privatize([(r.store, p) for r, p in zip(reductions, privates)])(loop.body)
    serial = For(loop.loop_var, loop.min + first, length, ForKind.SERIAL, body)
    task: Stmt = SeqStmt(
        [BufferStore(p, r.identity(), [0]) for r, p in zip(reductions, privates)] + [serial]
        + [BufferStore(q, BufferLoad(p, [0]), [chunk]) for p, q in zip(privates, partials)])
    for p in privates:
        task = allocate(p, task)
    launch = replace(loop, loop_var=chunk, min=op.const(0, dtype),
                     extent=op.const(chunks, dtype), body=task)
    fold = Var(f"{loop.loop_var.name}_fold", dtype)
    folds = [BufferStore(r.store.buffer, r.combine(load_of(r.store), BufferLoad(q, [fold])),
                         list(r.store.indices)) for r, q in zip(reductions, partials)]
    result: Stmt = SeqStmt([launch, For(fold, op.const(0, dtype), op.const(chunks, dtype),
                                        ForKind.SERIAL, _seq(folds))])
    for q in partials:
        result = allocate(q, result)
    return result


def _seq(stmts: list[Stmt]) -> Stmt:
    return stmts[0] if len(stmts) == 1 else SeqStmt(stmts)


class _Privatize(StmtExprMutator):
    """Every access to an accumulator's element -> element 0 of the chunk's own buffer.

    The recognizer guarantees the only accesses to that element are the update's store
    and its own load; other elements of the buffer (another accumulator's, ``M[0]`` and
    ``M[1]``) are provably apart from it.
    """

    def __init__(self, table: list):
        self.table = table  # (the update's store, the private buffer)

    def _private(self, node):
        for store, private in self.table:
            if node.buffer.data is store.buffer.data and not apart(node.indices,
                                                                   store.indices):
                return private
        return None

    def visit_buffer_store(self, node: BufferStore) -> Stmt:
        node = self.generic_visit(node)
        private = self._private(node)
        return node if private is None else BufferStore(private, node.value, [0])

    def visit_buffer_load(self, node: BufferLoad) -> PrimExpr:
        private = self._private(node)
        return self.generic_visit(node) if private is None else BufferLoad(private, [0])


__all__ = ["CHUNKS", "chunk_count", "parallel_reduction"]
