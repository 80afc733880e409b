"""``IfConvertVectorLoops``: an ``if`` on the vectorized var becomes predicated straight-line code.

Inside a ``ForKind.VECTORIZED`` loop, ``VectorizeLoop`` keeps an ``if`` whose
condition depends on the loop var as a serial loop (it *scalarizes* it). This
pass, run before it, removes such an ``if``: each store of a branch gets the
branch's condition as its ``predicate``, and each load that might read out of
bounds gets it too (a masked load reads nothing on the lanes that are off)::

    for j in vectorized(8):                  for j in vectorized(8):
        if A[j] > 0f:                            C[j] = A[j] * 2f  (predicate A[j] > 0f)
            C[j] = A[j] * 2f          ->         C[j] = B[j + k]   (predicate !(A[j] > 0f)),
        else:                                        reading B[j + k] (predicate !(A[j] > 0f))
            C[j] = B[j + k]

    if c: A[k] = x else: A[k] = y     ->     A[k] = Select(c, x, y)

The result means what the ``if`` meant, iteration by iteration, so it is
correct whether or not ``VectorizeLoop`` then vectorizes the loop. The rules:

- Nested ``if``s AND their conditions; an ``else`` branch takes ``!c``. A
  condition nested in a branch is evaluated only under the outer mask, so
  its loads take that mask; the outermost condition runs unconditionally.
- Loads: a load provably inside its buffer's declared shape on every
  iteration of the enclosing loops stays unmasked; every other load in a
  branch (in a value, an index, a let value, a nested condition) is masked.
- An integer division whose divisor may be 0 or -1 divides by
  ``Select(mask, d, 1)``: off lanes divide by one instead of trapping.
- A condition that reads a buffer the branches write is evaluated once,
  into a let (the branches' stores would change it otherwise).
- A branch with a loop, while, allocation, assert, attribute statement, a
  call with side effects or a vector access is left as it is (analysis:
  ``analysis/branch_safety.py``); so is an ``if`` whose condition does not
  depend on the vectorized var, and the tail guard of a loop
  ``StripMineVectorLoops`` peeled (``tail.py`` makes it a lane mask; the
  ``if``s inside it are converted). Under config
  ``tir.enable_buffer_level_predication`` (unset: on for SVE targets) every
  tail guard ``if base + j < limit`` (no else) is left to ``tail.py``,
  as TVM does.

Every ``if`` met on a vectorized var gets a ``VectorizeRemark``
(``main: loop j: if-converted: if A[j] > 0f (2 masked stores, 1 masked load)``).
Config ``tir.vectorize.if_conversion`` (default True) turns the pass off, as
does ``tir.disable_vectorize``.
"""

from __future__ import annotations

from tir import op
from tir.analysis.var_use import uses_any_var
from tir.arith import Analyzer
from tir.expr import BufferLoad, PrimExpr, Select, Var
from tir.function import IRModule, PrimFunc
from tir.functor import StmtExprMutator, StmtMutator
from tir.node import replace
from tir.stmt import BufferStore, Evaluate, For, ForKind, IfThenElse, LetStmt, SeqStmt, Stmt

from ..pass_base import PrimFuncPass, function_name, prim_func_pass
from ..pass_context import PassContext
from ..remarks import emit_remark, user_form
from .analysis.branch_safety import (
    condition_is_clobbered,
    divisor_needs_guard,
    is_in_bounds,
    same_location_stores,
    why_not_convertible,
)
from .options import IF_CONVERSION, VectorOptions
from .remarks import VectorizeRemark
from .tail import PREDICATE_TAIL, STRIP_MINED, TAIL_NOTE, is_tail_guard


class _Counts:
    """What one conversion did, for its remark."""

    def __init__(self):
        self.stores = self.loads = self.selects = self.divisions = 0

    def __str__(self) -> str:
        parts = [(self.stores, "masked store"), (self.selects, "select"),
                 (self.loads, "masked load"), (self.divisions, "guarded division")]
        return ", ".join(f"{n} {what}{'s' if n != 1 else ''}" for n, what in parts if n)


class _MaskExpr(StmtExprMutator):
    """An expression evaluated only under ``mask``: its unsafe loads and divisions guarded."""

    def __init__(self, mask: PrimExpr, analyzer: Analyzer, counts: _Counts):
        self.mask = mask
        self.analyzer = analyzer
        self.counts = counts

    def visit_buffer_load(self, node: BufferLoad) -> PrimExpr:
        node = self.generic_visit(node)  # an index that loads is guarded too
        if is_in_bounds(node, self.analyzer):
            return node
        self.counts.loads += 1
        return replace(node, predicate=_and(self.mask, node.predicate))

    def _division(self, node: PrimExpr) -> PrimExpr:
        node = self.generic_visit(node)
        if not divisor_needs_guard(node, self.analyzer):
            return node
        self.counts.divisions += 1
        one = op.const(1, node.b.dtype)
        return replace(node, b=Select(self.mask, node.b, one))

    visit_div = visit_mod = visit_floor_div = visit_floor_mod = _division


class _Branches:
    """Rewrites the statements of a convertible ``if`` into predicated straight-line code."""

    def __init__(self, analyzer: Analyzer, counts: _Counts):
        self.analyzer = analyzer
        self.counts = counts

    def expr(self, e: PrimExpr, mask: PrimExpr | None) -> PrimExpr:
        """``e`` as evaluated under ``mask`` (unchanged where it runs unconditionally)."""
        return e if mask is None else _MaskExpr(mask, self.analyzer, self.counts)(e)

    def convert(self, node: IfThenElse, mask: PrimExpr | None) -> Stmt:
        """``node``, reached under ``mask`` (None: unconditionally), without the ``if``."""
        value = self.expr(node.condition, mask)
        cond = Var("cond", "bool") if condition_is_clobbered(node) else value
        stores = same_location_stores(node)
        if stores is not None:
            body = self._select(cond, mask, *stores)
        else:
            then_mask = _and(mask, cond)
            else_mask = _and(mask, op.logical_not(cond))
            body = SeqStmt.flatten(self.stmt(node.then_case, then_mask),
                                   None if node.else_case is None
                                   else self.stmt(node.else_case, else_mask))
        return body if cond is value else LetStmt(cond, value, body)

    def _select(self, cond: PrimExpr, mask, then: BufferStore, other: BufferStore) -> Stmt:
        """``A[k] = Select(cond, x, y)``: the index runs either way, the values under a mask."""
        self.counts.selects += 1
        x = self.expr(then.value, _and(mask, cond))
        y = self.expr(other.value, _and(mask, op.logical_not(cond)))
        indices = [self.expr(i, mask) for i in then.indices]
        if mask is not None:
            self.counts.stores += 1
        return BufferStore(then.buffer, Select(cond, x, y), indices, mask)

    def stmt(self, s: Stmt, mask: PrimExpr) -> Stmt:
        """Statement ``s`` of a branch taken under ``mask``."""
        if isinstance(s, IfThenElse):
            return self.convert(s, mask)
        if isinstance(s, SeqStmt):
            return SeqStmt.flatten([self.stmt(part, mask) for part in s.seq])
        if isinstance(s, LetStmt):  # the value runs on every iteration now
            return LetStmt(s.var, self.expr(s.value, mask), self.stmt(s.body, mask))
        if isinstance(s, Evaluate):
            return Evaluate(self.expr(s.value, mask))
        assert isinstance(s, BufferStore), f"why_not_convertible let {type(s).__name__} through"
        self.counts.stores += 1
        pred = None if s.predicate is None else self.expr(s.predicate, mask)
        return BufferStore(s.buffer, self.expr(s.value, mask),
                           [self.expr(i, mask) for i in s.indices], _and(mask, pred))


def _and(a: PrimExpr | None, b: PrimExpr | None) -> PrimExpr | None:
    if a is None or b is None:
        return b if a is None else a
    return op.logical_and(a, b)


class _IfConverter(StmtMutator):
    """Finds the ``if``s on a vectorized var and converts (or refuses) each one."""

    def __init__(self, func_name: str, predicate: bool = False):
        self.func_name = func_name
        #: Config tir.enable_buffer_level_predication: tail guards are tail.py's.
        self.predicate = predicate
        self.analyzer = Analyzer()
        self.loops: list[For] = []  # the enclosing vectorized loops, innermost last
        self.dependent: set[int] = set()  # ids of the vars that depend on a vectorized var
        self.tail_guards: set[int] = set()  # ids of the guards of peeled tail loops

    def visit_for(self, loop: For) -> Stmt:
        vectorized = loop.kind == ForKind.VECTORIZED
        if vectorized:
            self.loops.append(loop)
            self.dependent.add(id(loop.loop_var))
            if (loop.annotations or {}).get(PREDICATE_TAIL) and isinstance(loop.body, IfThenElse):
                self.tail_guards.add(id(loop.body))
        try:
            with self.analyzer.loop_scope(loop.loop_var, loop.min, loop.extent):
                return self.generic_visit(loop)
        finally:
            if vectorized:
                self.loops.pop()

    def visit_let_stmt(self, node: LetStmt) -> Stmt:
        if uses_any_var(node.value, self.dependent):
            self.dependent.add(id(node.var))
        return self.generic_visit(node)

    def visit_if_then_else(self, node: IfThenElse) -> Stmt:
        if id(node) in self.tail_guards or not uses_any_var(node.condition, self.dependent):
            return self._keep(node)
        if self.predicate and self._is_lane_guard(node):
            return self._keep(node)  # TVM's buffer-level predication takes it
        reason = why_not_convertible(node)
        if reason is not None:
            self._remark(node, False, reason)
            return node  # VectorizeLoop scalarizes it
        counts = _Counts()
        result = _Branches(self.analyzer, counts).convert(node, None)
        self._remark(node, True, str(counts))
        return result

    def _is_lane_guard(self, node: IfThenElse) -> bool:
        return is_tail_guard(node, self.loops[-1].loop_var, self.analyzer,
                             lambda e: uses_any_var(e, self.dependent))

    def _keep(self, node: IfThenElse) -> Stmt:
        """An ``if`` that stays: its condition holds in its then-branch on every lane
        (a tail guard's lanes are all masked by tail.py, or all scalarized)."""
        with self.analyzer.constraint_scope(node.condition):
            then_case = self.visit_stmt(node.then_case)
        else_case = None if node.else_case is None else self.visit_stmt(node.else_case)
        if then_case is node.then_case and else_case is node.else_case:
            return node
        return IfThenElse(node.condition, then_case, else_case)

    def _remark(self, node: IfThenElse, converted: bool, detail: str) -> None:
        loop = self.loops[-1]
        shown = f"if {user_form(node.condition)}"
        outcome, reason = ("if-converted", f"{shown} ({detail})") if converted else (
            "not if-converted", f"{shown}: {detail}")
        # A peeled tail's own guard: its remark folds into "predicated tail".
        note = str((loop.annotations or {}).get(STRIP_MINED, ""))
        part = "tail" if loop.body is node and note.endswith(TAIL_NOTE) else ""
        emit_remark(VectorizeRemark(self.func_name, loop.loop_var.name, 0, outcome, reason,
                                    "IfConvertVectorLoops", part=part), loop=loop.loop_var)


def if_convert_function(func: PrimFunc, name: str = "main", predicate: bool = False) -> PrimFunc:
    """``func`` with the ``if``s on its vectorized vars converted (see the module docstring).

    ``predicate`` (buffer-level predication is on) leaves tail guards to ``VectorizeLoop``.
    """
    body = _IfConverter(name, predicate)(func.body)
    return func if body is func.body else func.with_body(body)


def IfConvertVectorLoops() -> PrimFuncPass:
    """The pass turning ``if``s on a vectorized loop's var into predicated stores and loads.

    Config ``tir.vectorize.if_conversion=False`` or ``tir.disable_vectorize`` turns it off.
    """

    def transform_function(func: PrimFunc, mod: IRModule, ctx: PassContext) -> PrimFunc:
        options = VectorOptions.from_context(ctx)
        if options.disable_vectorize or not options.if_conversion:
            return func
        # As VectorizeLoop reads the key: unset, on for SVE targets (TVM's rule).
        return if_convert_function(func, function_name(mod, func), options.predicates(func))

    return prim_func_pass(transform_function, opt_level=0, name="tir.IfConvertVectorLoops")


__all__ = ["IF_CONVERSION", "IfConvertVectorLoops", "if_convert_function"]
