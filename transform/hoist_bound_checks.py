"""``HoistVectorBoundChecks``: check a vectorized loop's accesses once, before it, as written.

``InstrumentBoundCheckers`` runs last, on vector code: its message would name the
lowered access (``A[j_outer * 16:j_outer * 16 + 16]``). This pass runs before
strip-mining and vectorization, on the loops the user wrote: for each outermost
``ForKind.VECTORIZED`` loop, every access its body surely makes on each iteration
(not under an ``if``, an inner loop or a ``let``; the loads ``bounds_analysis``
counts as surely evaluated), with an index of plain arithmetic that moves by a
constant from one iteration to the next, is in bounds on all iterations iff it
is at the first and at the last one. So, unless proven, the loop gets::

    assert n <= 0 or 0 <= first && last < 64, "index out of bounds: A[j + 1] with extent 64"
    for j in vectorized(n):
        A[j + 1] = ...

An error then names the access as the user wrote it, and the checker at the end
of the pipeline, knowing the assert's condition, usually proves the vector
accesses. The condition is exact (a valid program passes it); it only moves the
error before the loop's first iteration, as the lanes of one vector fail together.
Other accesses (data-dependent indices, guarded ones) are left to the late checks.
"""

from __future__ import annotations

from typing import Any

from tir import op, structural_equal
from tir.dtype import DataType
from tir.expr import BufferLoad, Call, IntImm, PrimExpr, StringImm, Var
from tir.functor import contains, substitute
from tir.stmt import (
    Allocate,
    AssertStmt,
    AttrStmt,
    BufferStore,
    Evaluate,
    For,
    ForKind,
    SeqStmt,
    Stmt,
)

from .bounds_analysis import CONFIG_KEY, surely_made_accesses
from .instrument_bound_checkers import BoundCheckInstrumenter, describe_access
from .pass_base import PrimFuncPass, prim_func_pass

#: Statements whose own expressions run once per iteration, and whose body (if any) runs too.
_STRAIGHT = (BufferStore, Evaluate, SeqStmt, AttrStmt, Allocate)


class _Hoister(BoundCheckInstrumenter):
    """Walks with the checker's facts, adding asserts before vectorized loops only."""

    def _guard(self, old: Stmt, new: Stmt) -> Stmt:
        return new  # statements outside vectorized loops are the late checker's

    def visit_for(self, loop: For) -> Stmt:
        if loop.kind != ForKind.VECTORIZED:
            return super().visit_for(loop)
        accesses: list = []
        _surely_each_iteration(loop.body, accesses)
        conds, texts = [], []
        for buffer, indices in accesses:
            if self._conditions(loop, buffer, indices, conds):
                texts.append(describe_access(buffer, indices))
        if not conds:
            return loop
        runs = op.greater(loop.extent, op.const(0, loop.extent.dtype))
        # a condition that also holds when the loop runs no iteration needs no guard
        # (n < 65 rather than n <= 0 || n < 65): the late checker can then use it
        with self.analyzer.constraint_scope(op.logical_not(runs)):
            bare = [c for c in conds if self.analyzer.can_prove(c)]
        guarded = [c for c in conds if not any(c is b for b in bare)]
        cond = op.all(bare) if bare else None
        if guarded:
            rest = op.all(guarded)
            if not self.analyzer.can_prove(runs):
                rest = op.logical_or(op.logical_not(runs), rest)
            cond = rest if cond is None else op.logical_and(cond, rest)
        texts = list(dict.fromkeys(texts))
        message = "index out of bounds: " + ("; ".join(texts) if len(texts) == 1
                                             else "one of " + "; ".join(texts))
        return AssertStmt(cond, StringImm(message), loop)

    def _conditions(self, loop: For, buffer: Any, indices: tuple, conds: list) -> bool:
        """Add to ``conds`` the unproven conditions that every iteration's access is in
        bounds (proven assuming the loop runs); whether any was added."""
        var = loop.loop_var
        last = op.sub(op.add(loop.min, loop.extent), op.const(1, loop.min.dtype))
        needed = False
        runs = op.greater(loop.extent, op.const(0, loop.extent.dtype))
        for index, extent in zip(indices, buffer.shape):
            if not _plain_scalar(index):
                continue
            with self.analyzer.loop_scope(var, loop.min, loop.extent):
                ok = [op.greater_equal(index, op.const(0, index.dtype)), op.less(index, extent)]
                if all(self.analyzer.can_prove(c) for c in ok):
                    continue  # the usual case: settled before the step is simplified
            step = _step(index, var, self.analyzer)
            if step is None:
                continue
            with self.analyzer.constraint_scope(runs):
                # the lowest index is at the first iteration if it steps up, else the last
                low, high = (loop.min, last) if step >= 0 else (last, loop.min)
                low, high = substitute(index, {var: low}), substitute(index, {var: high})
                for test in (op.greater_equal(low, op.const(0, low.dtype)), op.less(high, extent)):
                    needed |= self._add_unproven(test, conds)
        return needed

    def _add_unproven(self, test: PrimExpr, conds: list) -> bool:
        """Add ``test`` (simplified) to ``conds`` unless proven or there; whether unproven."""
        test = self.analyzer.simplify(test)
        if self.analyzer.can_prove(test):
            return False
        if not any(structural_equal(test, c) for c in conds):
            conds.append(test)
        return True


def _surely_each_iteration(stmt: Stmt, out: list) -> None:
    """Append ``(buffer, indices)`` of the unmasked accesses ``stmt`` surely makes."""
    if not isinstance(stmt, _STRAIGHT):
        return  # an if, a loop, a let: maybe skipped, or indices using its var
    out += surely_made_accesses(stmt)
    if isinstance(stmt, SeqStmt):
        for s in stmt.seq:
            _surely_each_iteration(s, out)
    elif isinstance(stmt, (AttrStmt, Allocate)):
        _surely_each_iteration(stmt.body, out)


def _plain_scalar(index: PrimExpr) -> bool:
    """Whether ``index`` is scalar arithmetic reading no memory and calling nothing."""
    if DataType(index.dtype).is_vector:
        return False
    return not contains(index, lambda x: isinstance(x, (BufferLoad, Call)))


def _step(index: PrimExpr, var: Var, analyzer: Any) -> int | None:
    """How much ``index`` moves per step of ``var`` if it is plain scalar arithmetic moving
    by a constant (so its extremes are at the first and last iteration), else None."""
    if not _plain_scalar(index):
        return None
    step = analyzer.simplify(op.sub(substitute(index, {var: op.add(var, 1)}), index))
    return step.value if isinstance(step, IntImm) else None


def HoistVectorBoundChecks() -> PrimFuncPass:
    """The pass of the module docstring; off if config ``tir.instrument_bound_checkers`` is."""

    def transform_function(func, mod, ctx):
        if not ctx.config.get(CONFIG_KEY):
            return func
        body = _Hoister()(func.body)
        return func if body is func.body else func.with_body(body)

    return prim_func_pass(transform_function, opt_level=0, name="tir.HoistVectorBoundChecks")
