"""How ``VectorizeReductions`` rewrites a loop's reductions: the plans.

``ReductionPlan``: K accumulators of VL lanes each, reassociated (a main loop of K*VL
steps, VL-step blocks, a fold, the tail) or folded in serial order; its skeleton
(``blocked``, ``_vector``, ``_tail``) is what the search plans (``search_plans.py``)
reuse. ``ScalablePlan``: one accumulator of ``vscale x k`` lanes under a lane mask,
for SVE. The pass that picks a plan is ``vectorize_reductions.py``.
"""

from __future__ import annotations

from tir import op
from tir.expr import BufferLoad, Call, IntImm, PrimExpr, Var, scalable_factor
from tir.expr_vector import Broadcast, Ramp
from tir.functor import copy_with_fresh_binders
from tir.node import replace
from tir.stmt import BufferStore, For, ForKind, IfThenElse, SeqStmt, Stmt

from ..remarks import note_body_copy, note_loop_copy
from .analysis.reductions import Reduction
from .options import ORDERED
from .reduction_ir import ReplaceStmts, allocate, load_of, local_buffer, serial_loop
from .tail import STRIP_MINED, vla_loop
from .vector_length import VECTOR_LENGTH


class ReductionPlan:
    """The rewrite of one loop with its reductions, K accumulators of VL lanes each."""

    def __init__(self, loop: For, reductions: list[Reduction], vl: int, count: PrimExpr,
                 k: int):
        self.loop, self.reductions, self.vl, self.count, self.k = loop, reductions, vl, count, k
        self.dtype = loop.loop_var.dtype
        self.keep = {key: v for key, v in (loop.annotations or {}).items()
                     if key != VECTOR_LENGTH}
        self.note = f"reduction of {names_of(reductions)}"

    def const(self, value: int) -> PrimExpr:
        return op.const(value, self.dtype)

    # ------------------------------------------------------------ reassociated

    def reassociated(self) -> Stmt:
        """K x VL accumulators, a main loop of K*VL steps, VL-step blocks, the fold, the tail."""
        accs = {id(r): local_buffer(f"{r.store.buffer.name}_acc", r.dtype, self.k * self.vl)
                for r in self.reductions}
        # The tail's masked updates keep their buffer in memory: not the hot accumulators'.
        tails = {id(r): local_buffer(f"{r.store.buffer.name}_tail", r.dtype, self.vl)
                 for r in self.reductions}
        tail = self._vector_tail(self._accumulate(tails, 0))
        inits = [self._init(r, accs[id(r)], self.k) for r in self.reductions]
        inits += [self._init(r, tails[id(r)], 1) for r in self.reductions] if tail else []
        folds = [self._fold(r, accs[id(r)], tails[id(r)] if tail else None)
                 for r in self.reductions]
        buffers = [*accs.values(), *(tails.values() if tail else [])]
        return self.blocked(inits, lambda c: self._accumulate(accs, c), folds, buffers, tail)

    def blocked(self, inits: list, chunk_table, folds: list, buffers,
                tail: list | None = None) -> Stmt:
        """The skeleton: ``inits``, the main loop (chunk ``c`` of a block replaces statements
        by ``chunk_table(c)(j)``), the VL-step loop (chunk 0), the vector ``tail`` if given,
        ``folds``, then (without a vector tail) the serial tail."""
        vl, block = self.vl, self.k * self.vl
        full = op.floordiv(self.count, self.const(block))
        outer = Var(f"{self.loop.loop_var.name}_outer", self.dtype)
        chunks = [self._vector(op.add(op.mul(outer, self.const(block)), self.const(c * vl)),
                               chunk_table(c)) for c in range(self.k)]
        parts = [*inits, self._main_loop(outer, full, SeqStmt.flatten(chunks))]
        if self.k > 1:
            rest = Var(f"{self.loop.loop_var.name}_rest", self.dtype)
            steps = op.floordiv(op.floormod(self.count, self.const(block)), self.const(vl))
            start = op.add(op.mul(full, self.const(block)), op.mul(rest, self.const(vl)))
            parts.append(serial_loop(rest, steps, self._vector(start, chunk_table(0))))
        after = self._tail() if tail is None else []
        body = SeqStmt.flatten([p for p in parts + (tail or []) + folds if p is not None] + after)
        for buf in buffers:
            body = allocate(buf, body)
        return body

    def _main_loop(self, outer: Var, full: PrimExpr, body: Stmt) -> Stmt | None:
        """``for outer in range(full): body``, the loop over whole blocks."""
        return serial_loop(outer, full, body)

    def _lanes(self, chunk: int) -> Ramp:
        """The lanes of accumulator ``chunk``: ``Ramp(chunk*VL, 1, VL)``."""
        return Ramp(op.const(chunk * self.vl, "int32"), 1, self.vl)

    def _init(self, r: Reduction, acc, chunks: int) -> Stmt:
        stores = [BufferStore(acc, Broadcast(r.identity(), self.vl), [self._lanes(c)])
                  for c in range(chunks)]
        return SeqStmt.flatten(stores)

    def _accumulate(self, accs: dict, chunk: int):
        """Replacement of each reduction store: ``acc_v[chunk*VL + j] OP= f``."""
        def make(r: Reduction, j: Var) -> Stmt:
            acc = accs[id(r)]
            index = [op.add(op.const(chunk * self.vl, j.dtype), j)]
            return BufferStore(acc, r.combine(BufferLoad(acc, index), r.value), index)
        return lambda j: {id(r.store): make(r, j) for r in self.reductions}

    def _fold(self, r: Reduction, acc, tail) -> Stmt:
        """``acc[c] = acc[c] OP reduce(chunk_0 OP chunk_1 OP ... OP tail)`` (pairwise)."""
        vectors = [BufferLoad(acc, [self._lanes(c)]) for c in range(self.k)]
        vectors += [BufferLoad(tail, [self._lanes(0)])] if tail is not None else []
        while len(vectors) > 1:
            pairs = [r.combine(vectors[i], vectors[i + 1]) for i in range(0, len(vectors) - 1, 2)]
            vectors = pairs + ([vectors[-1]] if len(vectors) % 2 else [])
        name = f"tir.vector_reduce_{r.kind}" + ("_reassoc" if r.is_float else "")
        total = Call(r.dtype, name, [vectors[0]])
        own = BufferLoad(r.store.buffer, list(r.store.indices))
        return BufferStore(r.store.buffer, r.combine(own, total), list(r.store.indices))

    # ------------------------------------------------------------ ordered

    def ordered(self) -> Stmt:
        """Per vector: the VL values into a buffer, then folded into acc[c] in lane order."""
        vl = self.vl
        tmps = {id(r): local_buffer(f"{r.store.buffer.name}_vec", r.dtype, vl)
                for r in self.reductions}

        def stage(j: Var) -> dict:
            return {id(r.store): BufferStore(tmps[id(r)], r.value, [j])
                    for r in self.reductions}

        outer = Var(f"{self.loop.loop_var.name}_outer", self.dtype)
        vector = self._vector(op.mul(outer, self.const(vl)), stage)
        # A conditional reduction leaves lanes unwritten: they must hold the identity.
        resets = [BufferStore(tmps[id(r)], Broadcast(r.identity(), vl), [self._lanes(0)])
                  for r in self.reductions if r.conditional]
        folds = [self._fold_in_order(r, tmps[id(r)]) for r in self.reductions]
        full = op.floordiv(self.count, self.const(vl))
        loop = serial_loop(outer, full, SeqStmt.flatten([*resets, vector, *folds]))
        tails = {id(r): local_buffer(f"{r.store.buffer.name}_tail", r.dtype, vl)
                 for r in self.reductions}

        def stage_tail(j: Var) -> dict:
            return {id(r.store): BufferStore(tails[id(r)], r.value, [j])
                    for r in self.reductions}

        tail = self._vector_tail(stage_tail)
        if tail:  # lanes past the end hold the identity: folding them changes nothing
            tail = [*(self._init(r, tails[id(r)], 1) for r in self.reductions), *tail,
                    *(self._fold_in_order(r, tails[id(r)]) for r in self.reductions)]
        body: Stmt = SeqStmt.flatten([s for s in [loop, *tail] if s is not None])
        for r in self.reductions:
            body = allocate(tmps[id(r)], body)
            body = allocate(tails[id(r)], body) if tail else body
        return body

    def _fold_in_order(self, r: Reduction, tmp) -> Stmt:
        values = BufferLoad(tmp, [Ramp(op.const(0, "int32"), 1, self.vl)])
        own = BufferLoad(r.store.buffer, list(r.store.indices))
        if r.is_float:  # ((acc OP v0) OP v1) ... : the serial order
            value = Call(r.dtype, f"tir.vector_reduce_{r.kind}", [values, own])
        else:
            value = r.combine(own, Call(r.dtype, f"tir.vector_reduce_{r.kind}", [values]))
        return BufferStore(r.store.buffer, value, list(r.store.indices))

    # ------------------------------------------------------------ shared

    def _vector(self, start: PrimExpr, table_of) -> For:
        """``for j in vectorized(VL): body(i := min + start + j)``, the statements of
        ``table_of(j)`` (by identity) replaced."""
        var = self.loop.loop_var
        j = Var(var.name, self.dtype)
        replaced = ReplaceStmts(table_of(j))(self.loop.body)
        index = op.add(op.add(self.loop.min, start), j)
        # Each copy of the body binds fresh vars: no var is bound twice in the output.
        body = copy_with_fresh_binders(replaced, {var: index})
        note_loop_copy(j, var, index)  # its remarks fold into the loop's
        note_body_copy(replaced, body)
        return For(j, self.const(0), self.const(self.vl), ForKind.VECTORIZED, body,
                   {**self.keep, STRIP_MINED: self.note})

    def _vector_tail(self, table_of) -> list[Stmt]:
        """The last ``count % VL`` iterations as one guarded vector:
        ``for j in vectorized(VL): if min + done + j < min + count: body`` (the guard
        becomes lane masks in ``IfConvertVectorLoops``; without it, a serial loop)."""
        rest = op.floormod(self.count, self.const(self.vl))
        if isinstance(rest, IntImm) and rest.value == 0:
            return []
        done = op.mul(op.floordiv(self.count, self.const(self.vl)), self.const(self.vl))
        vector = self._vector(done, table_of)
        index = op.add(op.add(self.loop.min, done), vector.loop_var)
        guard = op.less(index, op.add(self.loop.min, self.count))
        return [replace(vector, body=IfThenElse(guard, vector.body),
                        annotations={**vector.annotations, STRIP_MINED: f"{self.note}, tail"})]

    def _tail(self) -> list[Stmt]:
        """The last ``count % VL`` iterations as the serial loop they were."""
        rest = op.floormod(self.count, self.const(self.vl))
        if isinstance(rest, IntImm) and rest.value == 0:
            return []
        done = op.mul(op.floordiv(self.count, self.const(self.vl)), self.const(self.vl))
        return [For(self.loop.loop_var, op.add(self.loop.min, done), rest, ForKind.SERIAL,
                    self.loop.body, self.keep)]


class ScalablePlan:
    """The rewrite of one loop with its reductions for SVE: one accumulator of VL lanes,
    ``VL = vscale() * k``, updated under a lane mask in a vector-length-agnostic loop::

        allocate S_acc[VL] (local)
        S_acc[Ramp(0, 1, VL)] = Broadcast(identity, VL)
        for i_outer in range(ceildiv(n, VL)):
            for i in vectorized(VL):
                if i_outer * VL + i < n:           # -> get_active_lane_mask
                    S_acc[i] = S_acc[i] OP f(i_outer * VL + i)
        S[c] = S[c] OP vector_reduce_OP(S_acc[Ramp(0, 1, VL)])

    A masked-off lane keeps its value, so lanes past ``n`` hold the identity.
    """

    def __init__(self, loop: For, reductions: list[Reduction], vl: PrimExpr):
        self.loop, self.reductions, self.vl = loop, reductions, vl
        self.factor = scalable_factor(vl)

    def reason(self, why: str) -> str:
        kinds = ", ".join(f"{load_of(r.store)} ({r.kind}{', under an if' if r.conditional else ''})"
                          for r in self.reductions)
        text = (f"reduction {kinds}: an accumulator of vscale x {self.factor} lanes ({why}), "
                "updated under a lane mask, one horizontal reduction after the loop")
        if any(r.is_float for r in self.reductions):
            text += (f"; float sum or product reassociated: results may differ from the serial "
                     f"order in rounding (config {ORDERED} keeps it)")
        return text

    def rewrite(self) -> Stmt:
        accs = {id(r): local_buffer(f"{r.store.buffer.name}_acc", r.dtype, self.vl)
                for r in self.reductions}
        lanes = Ramp(op.const(0, "int32"), 1, self.vl)

        def update(r: Reduction, j: Var) -> Stmt:
            acc, index = accs[id(r)], [j]
            return BufferStore(acc, r.combine(BufferLoad(acc, index), r.value), index)

        lane = Var(self.loop.loop_var.name, self.loop.loop_var.dtype)  # the inner loop's var
        body = ReplaceStmts({id(r.store): update(r, lane) for r in self.reductions})(self.loop.body)
        loop = vla_loop(replace(self.loop, body=body), self.vl,
                        f"reduction of {names_of(self.reductions)}, vscale x {self.factor} lanes",
                        lane)
        inits = [BufferStore(accs[id(r)], Broadcast(r.identity(), self.vl), [lanes])
                 for r in self.reductions]
        folds = []
        for r in self.reductions:
            name = f"tir.vector_reduce_{r.kind}" + ("_reassoc" if r.is_float else "")
            total = Call(r.dtype, name, [BufferLoad(accs[id(r)], [lanes])])
            own = BufferLoad(r.store.buffer, list(r.store.indices))
            folds.append(BufferStore(r.store.buffer, r.combine(own, total),
                                     list(r.store.indices)))
        result: Stmt = SeqStmt.flatten([*inits, loop, *folds])
        for acc in accs.values():
            result = allocate(acc, result)
        return result


def names_of(reductions: list[Reduction]) -> str:
    return ", ".join(str(BufferLoad(r.store.buffer, list(r.store.indices))) for r in reductions)


__all__ = ["ReductionPlan", "ScalablePlan", "names_of"]
