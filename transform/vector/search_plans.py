"""How ``VectorizeReductions`` rewrites a search: the plans of ``analysis/searches.py``'s
forms.

``SearchPlan``: the best value (and its index) in K x VL lanes of values and
indices, updated by ``Select`` and combined after the loop. ``FirstMatchPlan``: the
first (or last) matching index in K x VL lanes, the blocks leaving after the first
match when that is exact. Both reuse ``ReductionPlan``'s skeleton
(``reduction_plans.py``).
"""

from __future__ import annotations

from tir import op
from tir.expr import EQ, NE, And, BufferLoad, Call, IntImm, Max, Min, PrimExpr, Select, Var
from tir.expr_vector import Broadcast
from tir.functor import substitute
from tir.stmt import BufferStore, For, IfThenElse, LetStmt, SeqStmt, Stmt, While

from .analysis.early_exit import early_exit_problem
from .analysis.reductions import describe, identity
from .analysis.searches import FirstMatch, Search
from .reduction_ir import allocate, load_of, local_buffer, tree
from .reduction_plans import ReductionPlan


class SearchPlan(ReductionPlan):
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
            index = [op.add(op.const(chunk * self.vl, j.dtype), j)]
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


class FirstMatchPlan(ReductionPlan):
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
            index = [op.add(op.const(chunk * self.vl, j.dtype), j)]
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


def _searched(s: Search) -> str:
    """``M[0], K[0]`` (or ``M[0]`` alone): what a search stores."""
    stores = [x for x in (s.best_store, s.index_store) if x is not None]
    return ", ".join(str(load_of(x)) for x in stores)


__all__ = ["FirstMatchPlan", "SearchPlan"]
