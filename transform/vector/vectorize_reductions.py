"""``VectorizeReductions``: vectorized loops that accumulate into one element.

``acc[c] = acc[c] OP f(i)`` carries a value from each iteration to the next,
so ``VectorizeLoop``'s legality keeps such a loop serial. OP being
associative (``+ * min max & | ^``, see ``analysis/reductions.py``), the
iterations can instead accumulate into K independent vector accumulators of
VL lanes each, folded into ``acc[c]`` by one horizontal reduction::

    for i in vectorized(n):              allocate S_acc[K*VL], S_tail[VL] (local)
        S[0] = S[0] + A[i]                 S_acc[Ramp(k*VL, 1, VL)] = Broadcast(-0f, VL)  (each k)
                                  ->       S_tail[Ramp(0, 1, VL)] = Broadcast(-0f, VL)
                                           for i_outer in range(n // (K*VL)):
                                               for i in vectorized(VL):       (k = 0 .. K-1)
                                                   S_acc[k*VL + i] = S_acc[k*VL + i]
                                                                     + A[i_outer*K*VL + k*VL + i]
                                           for i_rest in range(n % (K*VL) // VL):
                                               for i in vectorized(VL):
                                                   S_acc[i] = S_acc[i] + A[n // (K*VL)*K*VL
                                                                           + i_rest*VL + i]
                                           for i in vectorized(VL):
                                               if n // VL * VL + i < n:
                                                   S_tail[i] = S_tail[i] + A[n // VL * VL + i]
                                           S[0] = S[0] + vector_reduce_add_reassoc(
                                                      S_acc[0:VL] + ... + S_tail[0:VL])

The tail's ``if`` becomes lane masks in ``IfConvertVectorLoops`` (run after
``StripMineVectorLoops``); it accumulates into ``S_tail`` so that its masked
store does not pin the main accumulators to memory. Searches (below) keep
the last ``n % VL`` iterations as the serial loop they were.

An index-of-max/min search (``if A[i] > M[0]: M[0] = A[i]; K[0] = i``, see
``analysis/searches.py``) becomes K x VL lanes of best values (starting at
``M[0]``) and indices (starting at a sentinel no iteration has) updated by
``Select``; after the loop, the best value M over the lanes, the smallest
(``>``/``<``: first occurrence) or largest (``>=``/``<=``: last) index among
the lanes holding M, and that lane's value (M, up to the sign of a zero) are
stored unless no lane was ever updated. A NaN compares false, so it is never
taken, as in the serial loop; a NaN start is never replaced. A first match
(``if K[0] == -1 and cond(i): K[0] = i``) keeps per lane the smallest ``i``
where ``cond`` holds, and stores the smallest lane if ``K[0]`` still holds
the marker after the loop (or a flag ``F[0]`` its start, then raises it); its
blocks run in a ``while`` that stops after the first block holding a match:
the lanes of later blocks could only hold larger indices.

A reduction inside ``if``s (a conditional reduction) keeps its ``if`` around
the accumulator update; ``IfConvertVectorLoops`` then masks it per lane.

Every accumulator access has a constant offset, so LLVM keeps the
accumulators in registers. The other statements of the body run once per
``i`` as before (``VectorizeLoop`` then vectorizes the VL-wide loops, after
its own dependence analysis). K is 4 where one step has a long latency
(float add/mul/min/max, integer mul: 4 chains in flight keep the units busy), else
2 (integer add/and/or/xor/min/max: one-cycle ops, loads are the limit), and
never more than the trip count fills. VL is ``StripMineVectorLoops``'s:
the target's register over the widest element, or ``tir.vector_length``.

Floats: a sum or product in a vectorized loop may be reassociated (as
OpenMP's ``simd reduction``); the remark says so, and the horizontal
reduction is ``tir.vector_reduce_add_reassoc``. With config
``tir.vectorize.ordered_reductions`` the order stays serial: each vector of
VL values is folded in lane order by ``tir.vector_reduce_add(v, start)``
(bit-exact to the serial loop when ``codegen.llvm.fp_contract`` is off: a
serial ``acc + a*b`` may otherwise become one fma). Float min/max are exact
in any order. A statement that looks like an accumulation but is not
reduced gets a remark saying why; the loop is left to ``VectorizeLoop``.
``codegen.build`` runs the pass before ``StripMineVectorLoops``; it does
nothing under ``tir.disable_vectorize``.
"""

from __future__ import annotations

from tir import dtype as dt
from tir import op
from tir.arith import Analyzer
from tir.expr import (
    EQ,
    NE,
    And,
    BufferLoad,
    Call,
    IntImm,
    Max,
    Min,
    PrimExpr,
    Select,
    Var,
    scalable_factor,
)
from tir.expr_vector import Broadcast, Ramp
from tir.function import IRModule, PrimFunc
from tir.functor import StmtMutator, copy_with_fresh_binders, substitute
from tir.node import replace
from tir.stmt import BufferStore, For, ForKind, IfThenElse, LetStmt, SeqStmt, Stmt, While

from ..pass_base import PrimFuncPass, function_name, prim_func_pass
from ..pass_context import PassContext
from ..remarks import emit_remark, note_body_copy, note_loop_copy
from .analysis.aliasing import DISTINCT, shared_memory
from .analysis.early_exit import early_exit_problem
from .analysis.reductions import Reduction, describe, find_reductions, identity
from .analysis.searches import FirstMatch, Search, find_search
from .analysis.strided_terms import shuffled_terms
from .options import ORDERED, VectorOptions, function_has_sve
from .reduction_ir import (
    ReplaceStmts,
    allocate,
    as_int32,
    load_of,
    local_buffer,
    serial_loop,
    tree,
)
from .remarks import VECTORIZED, VectorizeRemark
from .tail import STRIP_MINED, vla_loop
from .vector_length import (
    VECTOR_LENGTH,
    is_scalable_extent,
    register_bits,
    scalable_vector_length,
    vector_length,
)

#: The outcome of a remark on a statement that looks like a reduction but is not one.
NOT_A_REDUCTION = "not a reduction"


class _ReductionRewriter(StmtMutator):
    """Rewrites the reductions of the vectorized loops below a statement."""

    def __init__(self, func_name: str, register_bits: int, ordered: bool, sve: bool = False,
                 shared: frozenset = DISTINCT):
        self.func_name = func_name
        self.shared = shared  # the data vars that may be one memory (analysis/aliasing.py)
        self.register_bits = register_bits
        self.ordered = ordered
        #: The target has SVE: reductions accumulate in scalable vectors (``_ScalablePlan``).
        self.sve = sve
        self.analyzer = Analyzer()

    def visit_for(self, loop: For) -> Stmt:
        if loop.kind != ForKind.VECTORIZED:
            return self.generic_visit(loop)
        reductions, refused = find_reductions(loop, self.shared)
        search, why_not = (None, None) if reductions or refused else find_search(loop, self.shared)
        vl, why = vector_length(loop, self.register_bits, self.func_name)
        if self._refused(loop, vl, reductions, refused, why_not) or not (reductions or search):
            return loop
        if is_scalable_extent(loop.extent):
            return loop  # already k * vscale() lanes: no accumulator plan for it
        scalable = self._scalable(loop, reductions, search)
        if scalable is not None:
            plan = _ScalablePlan(loop, reductions, scalable[0])
            self._remark(loop, f"vscale x {plan.factor}", VECTORIZED, plan.reason(scalable[1]))
            return plan.rewrite()
        return self._rewrite_fixed(loop, reductions, search, vl, why)

    def _refused(self, loop: For, vl: int, reductions: list[Reduction], refused: list,
                 why_not: str | None) -> bool:
        """Remark each reduction-like statement that is not one; True if the loop has any.

        A float sum or product kept in serial order (``ORDERED``) that would have to be
        regrouped counts as refused.
        """
        for r in refused:
            self._remark(loop, vl, NOT_A_REDUCTION, f"{describe(r.store)}: {r.reason}")
        if why_not:
            self._remark(loop, vl, NOT_A_REDUCTION, why_not)
        regrouped = [r for r in reductions if self.ordered and r.is_float and r.regrouped]
        for r in regrouped:
            self._remark(loop, vl, NOT_A_REDUCTION, f"{describe(r.store)}: taking its terms "
                         f"together would change the float rounding ({ORDERED})")
        return bool(refused or regrouped)

    def _rewrite_fixed(self, loop: For, reductions: list[Reduction],
                       search: Search | FirstMatch | None, vl: int, why: str) -> Stmt:
        """The loop with its reductions (or its search) in fixed-length vectors of ``vl``."""
        count = loop.extent
        if not self.analyzer.can_prove(op.greater_equal(count, op.const(0, count.dtype))):
            count = op.max(count, op.const(0, count.dtype))  # a negative extent runs nothing
        if isinstance(count, IntImm) and count.value < vl:
            return loop  # no full vector: VectorizeLoop keeps it serial and says why
        if search is not None:  # 4 chains of compare-and-selects in flight
            kind = _FirstMatchPlan if isinstance(search, FirstMatch) else _SearchPlan
            found = kind(loop, search, vl, count, self._cap(4, count, vl))
            self._remark(loop, vl, VECTORIZED, found.reason(why))
            return found.rewrite()
        k = self._unroll(reductions, loop.loop_var, count, vl)
        plan = _Plan(loop, reductions, vl, count, k)
        ordered = self.ordered and any(r.is_float for r in reductions)
        self._remark(loop, vl, VECTORIZED, _reason(plan, why, ordered))
        return plan.ordered() if ordered else plan.reassociated()

    def _scalable(self, loop: For, reductions: list, search) -> tuple[PrimExpr, str] | None:
        """SVE's VL and its note where the loop's reductions accumulate in scalable vectors:
        an SVE target, no search, no float sum kept in serial order."""
        if not self.sve or search is not None:
            return None
        if self.ordered and any(r.is_float for r in reductions):
            return None
        found = scalable_vector_length(loop)
        if found is not None and isinstance(loop.extent, IntImm) and \
                loop.extent.value < scalable_factor(found[0]):
            return None  # not one vector even at vscale 1: the fixed rule keeps it serial
        return found

    def _unroll(self, reductions: list[Reduction], var: Var, count: PrimExpr, vl: int
                ) -> int:
        """K: independent accumulators to hide the latency of one OP, at most what n fills."""
        # Float min/max too: IEEE maximum/minimum is a chain of ~5 dependent ops on x86
        # (the NaN and -0 checks around vmaxps); measured, 4 chains beat 2 (and 8).
        long_latency = any(r.is_float or r.kind == "mul" or _is_float_min_max(r)
                           for r in reductions)
        if long_latency and shuffled_terms([r.value for r in reductions], var):
            long_latency = False  # bound by its shuffles and memory (analysis/strided_terms.py)
        return self._cap(4 if long_latency else 2, count, vl)

    @staticmethod
    def _cap(k: int, count: PrimExpr, vl: int) -> int:
        """``k``, but no more accumulators than a constant trip count fills."""
        return max(1, min(k, count.value // vl)) if isinstance(count, IntImm) else k

    def _remark(self, loop: For, vl: int | str, outcome: str, reason: str) -> None:
        emit_remark(VectorizeRemark(self.func_name, loop.loop_var.name, vl, outcome, reason,
                                    "VectorizeReductions"), loop=loop.loop_var)


class _Plan:
    """The rewrite of one loop with its reductions, K accumulators of VL lanes each."""

    def __init__(self, loop: For, reductions: list[Reduction], vl: int, count: PrimExpr,
                 k: int):
        self.loop, self.reductions, self.vl, self.count, self.k = loop, reductions, vl, count, k
        self.dtype = loop.loop_var.dtype
        self.keep = {key: v for key, v in (loop.annotations or {}).items()
                     if key != VECTOR_LENGTH}
        self.note = f"reduction of {_names(reductions)}"

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
            index = [op.add(op.const(chunk * self.vl, "int32"), as_int32(j))]
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
            return {id(r.store): BufferStore(tmps[id(r)], r.value, [as_int32(j)])
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
            return {id(r.store): BufferStore(tails[id(r)], r.value, [as_int32(j)])
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


class _SearchPlan(_Plan):
    """The rewrite of an index-of-max/min loop: K x VL lanes of best values and indices."""

    def __init__(self, loop: For, search: Search, vl: int, count: PrimExpr, k: int):
        super().__init__(loop, [], vl, count, k)
        self.search = search
        self.note = f"search of {_searched(search)}"

    def rewrite(self) -> Stmt:
        """Lanes start at the current best (index: a sentinel), update by Select, combine."""
        s, size = self.search, self.k * self.vl
        best = local_buffer(f"{s.best_store.buffer.name}_lanes", s.best_store.value.dtype, size)
        # without an index store, the lanes' indices still pick the serial loop's value
        # among equal ones (the first or last, a zero's sign included)
        name = (f"{s.index_store.buffer.name}_lanes" if s.index_store is not None
                else f"{s.best_store.buffer.name}_where")
        where = local_buffer(name, self.dtype, size)
        inits = [BufferStore(buf, Broadcast(value, self.vl), [self._lanes(c)])
                 for c in range(self.k)
                 for buf, value in ((best, load_of(s.best_store)), (where, self._sentinel()))]
        return self.blocked(inits, lambda c: self._update(best, where, c),
                            [self._combine(best, where)], [best, where])

    def _sentinel(self) -> PrimExpr:
        """An index no iteration has, which the final min (first) / max (last) ignores."""
        return op.max_value(self.dtype) if self.search.first else op.min_value(self.dtype)

    def _update(self, best, where, chunk: int):
        """``if v CMP m: m = v; k = i`` per lane: ``k_l = select(v CMP m_l, i, k_l)``, ..."""
        s = self.search

        def table(j: Var) -> dict:
            index = [op.add(op.const(chunk * self.vl, "int32"), as_int32(j))]
            now = BufferLoad(best, index)
            better = s.condition(now)
            i = self.loop.loop_var  # _vector substitutes it
            return {id(s.stmt): SeqStmt([
                BufferStore(where, Select(better, i, BufferLoad(where, index)), index),
                BufferStore(best, Select(better, s.value, now), index)])}
        return table

    def _combine(self, best, where) -> Stmt:
        """The best M over lanes; the first (last) index among lanes holding M; that lane's
        value (M up to the sign of a zero); stored unless no lane ever updated."""
        s, vl = self.search, self.vl
        vdt = s.best_store.value.dtype
        bests = [BufferLoad(best, [self._lanes(c)]) for c in range(self.k)]
        wheres = [BufferLoad(where, [self._lanes(c)]) for c in range(self.k)]
        pick, index_pick = (Max if s.best == "max" else Min), (Min if s.first else Max)
        m = Var("best", vdt)
        at = Var("at", self.dtype)
        sentinel = Broadcast(self._sentinel(), vl)
        top = Call(vdt, f"tir.vector_reduce_{s.best}", [tree(pick, bests)])
        holders = [Select(EQ(b, Broadcast(m, vl)), w, sentinel) for b, w in zip(bests, wheres)]
        first = Call(self.dtype, f"tir.vector_reduce_{index_pick.__name__.lower()}",
                     [tree(index_pick, holders)])
        worst = Broadcast(identity(s.best, vdt), vl)
        lane = [Select(EQ(w, Broadcast(at, vl)), b, worst) for b, w in zip(bests, wheres)]
        value = Call(vdt, f"tir.vector_reduce_{s.best}", [tree(pick, lane)])
        found: Stmt = BufferStore(s.best_store.buffer, value, list(s.best_store.indices))
        if s.index_store is not None:
            found = SeqStmt([found, BufferStore(
                s.index_store.buffer, substitute(s.index_store.value, {self.loop.loop_var: at}),
                list(s.index_store.indices))])
        return LetStmt(m, top, LetStmt(at, first, IfThenElse(NE(at, self._sentinel()), found)))

    def reason(self, why: str) -> str:
        """The remark's reason."""
        s = self.search
        which = "first" if s.first else "last"
        what = (f"the {which} index of the {s.best}" if s.index_store is not None
                else f"the {s.best}, the {which} of equal values kept")
        return (f"search {_searched(s)} ({what}): {self.k} x {self.vl} lanes of values and "
                f"indices ({why}), combined after the loop")


class _FirstMatchPlan(_Plan):
    """The rewrite of a first-match loop: K x VL lanes of the first matching index."""

    def __init__(self, loop: For, match: FirstMatch, vl: int, count: PrimExpr, k: int):
        super().__init__(loop, [], vl, count, k)
        self.match = match
        which = "last" if match.last else "first"
        self.note = f"{which} match into {load_of(match.index_store)}"
        # no match in this lane: beyond every index on the side the fold ignores
        self.none = op.min_value(self.dtype) if match.last else op.max_value(self.dtype)
        self.fold = Max if match.last else Min
        #: why the blocks may not stop at the first match (None: they may); a last match
        #: needs every block, so it has no such question
        self.no_exit = None if match.last else early_exit_problem(match.cond, loop)

    def rewrite(self) -> Stmt:
        """``k_l = select(cond(i), min(k_l, i), k_l)``; after the loop the smallest lane is
        stored if ``k[d]`` still holds the marker and some lane matched."""
        where = local_buffer(f"{self.match.index_store.buffer.name}_lanes", self.dtype,
                             self.k * self.vl)
        self.where = where  # _main_loop's exit test reads it
        inits = [BufferStore(where, Broadcast(self.none, self.vl), [self._lanes(c)])
                 for c in range(self.k)]
        return self.blocked(inits, lambda c: self._update(where, c), [self._combine(where)],
                            [where])

    def _main_loop(self, outer: Var, full: PrimExpr, body: Stmt) -> Stmt | None:
        """The blocks in ``while next < full and no lane matched``: the early exit of a
        first match (a last match needs every block)."""
        if self.match.last or self.no_exit or (isinstance(full, IntImm) and full.value == 0):
            return super()._main_loop(outer, full, body)
        pos = local_buffer(f"{outer.name}_next", self.dtype, 1)
        at = [op.const(0, "int32")]
        now = BufferLoad(pos, at)
        lanes = [BufferLoad(self.where, [self._lanes(c)]) for c in range(self.k)]
        smallest = Call(self.dtype, "tir.vector_reduce_min", [tree(Min, lanes)])
        running = And(op.less(now, full), EQ(smallest, self.none))
        # The bound checker knows nothing of a value read from memory: the if tells it that
        # outer is a block in range, as the for's bounds did (two compares per block), in
        # the form it proves accesses from: (outer + 1) * block <= count, not outer < full.
        block = self.const(self.k * self.vl)
        ends = op.mul(op.add(outer, self.const(1)), block)
        inside = And(op.greater_equal(outer, self.const(0)), op.less_equal(ends, self.count))
        step = SeqStmt([LetStmt(outer, now, IfThenElse(inside, body)),
                        BufferStore(pos, op.add(now, self.const(1)), at)])
        return allocate(pos, SeqStmt([BufferStore(pos, self.const(0), at), While(running, step)]))

    def _update(self, where, chunk: int):
        m = self.match

        def table(j: Var) -> dict:
            index = [op.add(op.const(chunk * self.vl, "int32"), as_int32(j))]
            now = BufferLoad(where, index)
            i = self.loop.loop_var  # _vector substitutes it
            return {id(m.stmt): BufferStore(where, Select(m.cond, self.fold(now, i), now),
                                            index)}
        return table

    def _combine(self, where) -> Stmt:
        m = self.match
        at = Var("at", self.dtype)
        lanes = [BufferLoad(where, [self._lanes(c)]) for c in range(self.k)]
        name = f"tir.vector_reduce_{self.fold.__name__.lower()}"
        first = Call(self.dtype, name, [tree(self.fold, lanes)])
        store = m.index_store
        matched = NE(at, self.none)
        if m.guard is not None:  # the flag or the index is untouched by the loop: test it now
            matched = And(m.guard, matched)
        found = BufferStore(store.buffer, substitute(store.value, {self.loop.loop_var: at}),
                            list(store.indices))
        if m.flag_store is not None:  # the index first, then the flag, as the loop stores them
            found = SeqStmt([found, m.flag_store])
        return LetStmt(at, first, IfThenElse(matched, found))

    def reason(self, why: str) -> str:
        """The remark's reason."""
        m = self.match
        if m.last:
            return (f"last match {load_of(m.index_store)}: {self.k} x {self.vl} lanes of "
                    f"indices ({why}), the largest stored after the loop")
        raised = "" if m.flag_store is None else f", then {describe(m.flag_store)}"
        leaving = ("leaving after the first block with a match" if self.no_exit is None
                   else f"every block run (no early exit: {self.no_exit})")
        return (f"first match {load_of(m.index_store)} (while {m.guard}): "
                f"{self.k} x {self.vl} lanes of indices ({why}), {leaving}, "
                f"the smallest stored after the loop{raised}")


class _ScalablePlan:
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
            acc, index = accs[id(r)], [as_int32(j)]
            return BufferStore(acc, r.combine(BufferLoad(acc, index), r.value), index)

        lane = Var(self.loop.loop_var.name, self.loop.loop_var.dtype)  # the inner loop's var
        body = ReplaceStmts({id(r.store): update(r, lane) for r in self.reductions})(self.loop.body)
        loop = vla_loop(replace(self.loop, body=body), self.vl,
                        f"reduction of {_names(self.reductions)}, vscale x {self.factor} lanes",
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


def _searched(s: Search) -> str:
    """``M[0], K[0]`` (or ``M[0]`` alone): what a search stores."""
    stores = [x for x in (s.best_store, s.index_store) if x is not None]
    return ", ".join(str(load_of(x)) for x in stores)


def _names(reductions: list[Reduction]) -> str:
    return ", ".join(str(BufferLoad(r.store.buffer, list(r.store.indices))) for r in reductions)


def _reason(plan: _Plan, why: str, ordered: bool) -> str:
    kinds = ", ".join(f"{load_of(r.store)} ({r.kind}{', under an if' if r.conditional else ''})"
                      for r in plan.reductions)
    if ordered:
        text = f"reduction {kinds}: vectors of {plan.vl} lanes ({why}) folded in serial order"
    else:
        text = (f"reduction {kinds}: {plan.k} accumulators of {plan.vl} lanes ({why}), "
                "one horizontal reduction after the loop")
    for r in plan.reductions:
        if r.is_float and not ordered:
            what = "sum" if r.kind == "add" else "product"
            text += (f"; float {what} reassociated: results may differ from the serial order "
                     f"in rounding (config {ORDERED} keeps it)")
    return text


def vectorize_reductions(func: PrimFunc, name: str = "main", ordered: bool = False) -> PrimFunc:
    """``func`` with the reductions of its vectorized loops rewritten (see the module doc)."""
    rewriter = _ReductionRewriter(name, register_bits(func), ordered, function_has_sve(func),
                                  shared_memory(func))
    body = rewriter(func.body)
    return func if body is func.body else func.with_body(body)


def VectorizeReductions() -> PrimFuncPass:
    """The pass turning ``acc[c] = acc[c] OP f(i)`` in vectorized loops into vector accumulators.

    Config ``tir.vectorize.ordered_reductions`` keeps float sums and products in serial
    order; ``tir.disable_vectorize`` turns the pass off.

    Raises:
        ValueError: a ``tir.vector_length`` annotation that is not a positive power of two.
    """

    def transform_function(func: PrimFunc, mod: IRModule, ctx: PassContext) -> PrimFunc:
        options = VectorOptions.from_context(ctx)
        if options.disable_vectorize:
            return func
        return vectorize_reductions(func, function_name(mod, func), options.ordered_reductions)

    return prim_func_pass(transform_function, opt_level=0, name="tir.VectorizeReductions")


__all__ = ["NOT_A_REDUCTION", "ORDERED", "VectorizeReductions", "vectorize_reductions"]


def _is_float_min_max(r: Reduction) -> bool:
    return dt.DataType(r.dtype).is_float and r.kind in ("min", "max")
