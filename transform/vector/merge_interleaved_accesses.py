"""``MergeInterleavedAccesses``: strided vector accesses that interleave become one wide access.

After ``VectorizeLoop``, a loop over interleaved data (complex numbers, RGB
pixels) reads and writes memory at a constant stride::

    C[Ramp(2*b, 2, 8)]     = ar * br - ai * bi
    C[Ramp(2*b + 1, 2, 8)] = ar * bi + ai * br      # ar = A[Ramp(2*b, 2, 8)], ...

Each access alone needs two partial chunks (codegen/llvm/access_plan.py);
the group of them covers whole registers. This pass rewrites a group
(analysis/interleaving.py decides what is one) into one contiguous access:

- a store group becomes one store of the values interleaved by a ``Shuffle``::

      C[Ramp(2*b, 1, 16)] = Shuffle([re, im], [0, 8, 1, 9, ..., 7, 15])

- a load group becomes one contiguous load ``W`` of the span the loads cover,
  each load a ``Shuffle`` picking its lanes of ``W`` (LLVM's common
  subexpression elimination keeps one copy of ``W`` per statement).

The ``Shuffle`` lowering (codegen/llvm/shuffle_tree.py) turns the picks into
a tree of ``shufflevector``s. Loads with a predicate (a predicated tail) are
left to the code generator's per-access plan. The pass is not one of TVM's;
``codegen.build``'s pipeline runs it after vectorization.
"""

from __future__ import annotations

from tir import arith
from tir.expr import Broadcast, BufferLoad, IntImm, PrimExpr, Ramp, Shuffle
from tir.functor import ExprMutator, StmtExprMutator, deep_recursion
from tir.node import replace
from tir.stmt import BufferStore, SeqStmt, Stmt

from ..pass_base import PrimFuncPass, prim_func_pass
from .analysis.interleaving import load_groups, store_group, strided_last_index


def merge_stores(stores: list, offsets: list[int]) -> BufferStore:
    """One contiguous store writing what the store group ``stores`` writes."""
    ramp = stores[0].indices[-1]
    stride, lanes = ramp.stride.value, ramp.lanes
    by_residue = sorted(range(len(stores)), key=lambda k: offsets[k])
    # element e of the run: the store of the e % stride-th offset, its lane e // stride
    picks = [(e % stride) * lanes + e // stride for e in range(stride * lanes)]
    values = [stores[k].value for k in by_residue]
    value = Shuffle(values, picks)
    predicate = None
    if any(st.predicate is not None for st in stores):
        preds = [stores[k].predicate if stores[k].predicate is not None
                 else Broadcast(IntImm("bool", 1), lanes) for k in by_residue]
        predicate = Shuffle(preds, picks)
    low = stores[by_residue[0]]
    index = Ramp(low.indices[-1].base, 1, stride * lanes)
    return BufferStore(low.buffer, value, [*low.indices[:-1], index], predicate)


def merge_loads(expr: PrimExpr, analyzer: arith.Analyzer) -> PrimExpr:
    """``expr`` with each load group replaced by picks from one contiguous load."""
    mapping = {}
    for group in load_groups(expr, analyzer):
        ramp = group[0][0].indices[-1]
        stride, lanes = ramp.stride.value, ramp.lanes
        low, high = min(d for _, d in group), max(d for _, d in group)
        if high - low >= stride:  # the span would hold more than one run of lanes
            continue
        head = group[0][0]
        span = stride * (lanes - 1) + high - low + 1
        base = analyzer.simplify(ramp.base + low) if low else ramp.base
        wide = BufferLoad(head.buffer, [*head.indices[:-1], Ramp(base, 1, span)])
        for load, d in group:
            picks = [d - low + stride * k for k in range(lanes)]
            mapping[id(load)] = Shuffle([wide], picks)
    return _ReplaceLoads(mapping).visit_expr(expr) if mapping else expr


class _ReplaceLoads(ExprMutator):
    def __init__(self, mapping: dict):
        super().__init__()
        self.mapping = mapping  # id(load) -> replacement

    def visit_buffer_load(self, node: BufferLoad) -> PrimExpr:
        new = self.mapping.get(id(node))
        return self.generic_visit(node) if new is None else new


class _Merger(StmtExprMutator):
    def __init__(self):
        super().__init__()
        self.analyzer = arith.Analyzer()

    def visit_seq_stmt(self, stmt: SeqStmt) -> Stmt:
        seq = [self.visit_stmt(s) for s in stmt.seq]
        out, k = [], 0
        while k < len(seq):
            merged = self._store_group_at(seq, k)
            if merged is None:
                out.append(seq[k])
                k += 1
            else:
                store, count = merged
                out.append(self.visit_buffer_store(store))
                k += count
        if len(out) == len(stmt.seq) and all(a is b for a, b in zip(out, stmt.seq)):
            return stmt
        return out[0] if len(out) == 1 else SeqStmt(out)

    def _store_group_at(self, seq: list, k: int):
        first = seq[k]
        if not isinstance(first, BufferStore) or strided_last_index(first) is None:
            return None
        count = first.indices[-1].stride.value
        stores = seq[k:k + count]
        if len(stores) < count or not all(isinstance(s, BufferStore) for s in stores):
            return None
        offsets = store_group(stores, self.analyzer)
        if offsets is None:
            return None
        return merge_stores(stores, offsets), count

    def visit_buffer_store(self, stmt: BufferStore) -> Stmt:
        value = merge_loads(stmt.value, self.analyzer)
        return stmt if value is stmt.value else replace(stmt, value=value)


def merge_interleaved_accesses(stmt: Stmt) -> Stmt:
    """``stmt`` with its interleave groups merged (the same object when there are none)."""
    with deep_recursion():
        return _Merger().visit_stmt(stmt)


def MergeInterleavedAccesses() -> PrimFuncPass:
    """Merge strided vector loads and stores that interleave into contiguous accesses."""

    def transform_function(func, mod, ctx):
        body = merge_interleaved_accesses(func.body)
        return func if body is func.body else func.with_body(body)

    return prim_func_pass(transform_function, opt_level=0, name="tir.MergeInterleavedAccesses")
