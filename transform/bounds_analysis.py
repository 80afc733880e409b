"""Accesses out of bounds on every execution, found before the program runs.

``codegen.build`` rejects a function with such an access (``ValueError``)
instead of compiling a kernel that can only fail::

    main: B[i + 10] is out of bounds on every execution: index in [10, 25],
    buffer B has shape (16,)

An access is reported only when both hold, as ``tir.arith.Analyzer`` proves them:

- it runs whenever the function runs: every loop around it runs at least once,
  every ``if`` around it takes its branch (its condition is proven), and nothing
  before it may stop the function (a ``While``, which may not end, or ``tir.ret``);
  the branches of ``tir.if_then_else``, the arms of ``Select``, the right operand
  of ``&&`` / ``||``, the bodies of ``Let``, masked accesses and ``assert`` bodies
  whose condition is not proven count as maybe skipped;
- some iteration it surely runs has, in a dimension of constant extent, its index
  (its highest vector lane) at or above the extent, or (its lowest lane) below 0:
  proven at a corner of the loop nest (each loop var at its first or last value,
  outer loops first), where the analyzer proves the index out of range.

When in doubt nothing is reported: a wrong error on a valid program is worse
than a run-time check. The run-time checks are ``InstrumentBoundCheckers``'.
"""

from __future__ import annotations

import itertools
from typing import Any

import attrs

from tir import arith, op
from tir.analysis.var_use import uses_var
from tir.buffer import Buffer
from tir.dtype import DataType
from tir.expr import BufferLoad, Call, IntImm, PrimExpr, Var
from tir.function import IRModule, PrimFunc
from tir.functor import ExprVisitor, StmtVisitor, post_order_visit, substitute
from tir.node import EXPR, EXPRS, child_fields
from tir.stmt import (
    AssertStmt,
    BufferStore,
    Evaluate,
    For,
    IfThenElse,
    LetStmt,
    Stmt,
    While,
)

from .lane_bounds import is_reduced, lane_span
from .pass_base import PrimFuncPass, function_name, prim_func_pass
from .pass_context import PassContext

#: The config key that turns bound checking (at run time and at build time) on.
CONFIG_KEY = "tir.instrument_bound_checkers"

#: An index using more loop vars than this is not searched (2**k corners).
MAX_CORNER_LOOPS = 6


@attrs.frozen
class OutOfBounds:
    """One access whose index is outside dimension ``dim`` of its buffer on every execution."""

    buffer: Buffer
    indices: tuple
    dim: int
    low: int | None  # the index's proven range; None: unbounded on that side
    high: int | None

    def message(self, func_name: str) -> str:
        """``main: B[i + 10] is out of bounds on every execution: ...``."""
        shown = ", ".join(str(i) for i in self.indices)
        where = "index" if len(self.indices) == 1 else \
            f"index {self.indices[self.dim]} (dimension {self.dim})"
        shape = ", ".join(str(s) for s in self.buffer.shape)
        shape = f"({shape},)" if len(self.buffer.shape) == 1 else f"({shape})"
        return (f"{func_name}: {self.buffer.name}[{shown}] is out of bounds on every "
                f"execution: {where} in {self._range()}, buffer {self.buffer.name} has "
                f"shape {shape}")

    def _range(self) -> str:
        low = "-inf" if self.low is None else str(self.low)
        high = "+inf" if self.high is None else str(self.high)
        return f"[{low}, {high}]"


def provably_out_of_bounds(func: PrimFunc) -> list:
    """The accesses of ``func`` out of bounds whenever the function runs (module docstring)."""
    finder = _Finder()
    finder(func.body)  # through __call__: deep_recursion lets long expression chains recurse
    return finder.found


def surely_made_accesses(stmt: Stmt) -> list:
    """``(buffer, indices)`` of the unmasked accesses ``stmt``'s own expressions surely make
    (not its body's): its loads outside maybe-skipped parts, and an unmasked store."""
    loads = SurelyEvaluated()
    for name, kind, binds in child_fields(type(stmt)):
        value = getattr(stmt, name)
        if binds or value is None:
            continue
        if kind == EXPR:
            loads.visit_expr(value)
        elif kind == EXPRS:
            for v in value:
                loads.visit_expr(v)
    accesses = [(x.buffer, x.indices) for x in loads.found]
    if isinstance(stmt, BufferStore) and stmt.predicate is None:
        accesses.append((stmt.buffer, stmt.indices))
    return accesses


class _Finder(StmtVisitor):
    """Walks the statements, knowing whether the current one surely runs."""

    def __init__(self):
        self.analyzer = arith.Analyzer()
        self.found: list[OutOfBounds] = []
        self.reached = True  # the statement being visited runs whenever the function does
        self.loops: list[For] = []  # the loops around it, outermost first
        self.lets: list[tuple] = []  # the plain integer lets around it, outermost first

    def generic_visit(self, stmt: Any) -> None:
        if self.reached:
            self._check_own(stmt)
        super().generic_visit(stmt)

    def visit_for(self, loop: For) -> None:
        if self.reached:
            self._check_own(loop)
        one = op.const(1, loop.extent.dtype)
        runs = self.analyzer.can_prove(op.greater_equal(loop.extent, one))
        self.loops.append(loop)
        try:
            with self.analyzer.loop_scope(loop.loop_var, loop.min, loop.extent):
                self._visit_maybe(loop.body, runs)
        finally:
            self.loops.pop()

    def visit_if_then_else(self, stmt: IfThenElse) -> None:
        if self.reached:
            self._check_own(stmt)
        cond = op.strip_likely(stmt.condition)
        taken = self.analyzer.can_prove(cond)
        with self.analyzer.constraint_scope(cond):
            self._visit_maybe(stmt.then_case, taken)
        if stmt.else_case is not None:
            skipped = taken or not self.analyzer.can_prove(op.logical_not(cond))
            with self.analyzer.constraint_scope(op.logical_not(cond)):
                self._visit_maybe(stmt.else_case, not skipped)

    def visit_assert_stmt(self, stmt: AssertStmt) -> None:
        if self.reached:
            self._check_own(stmt)
        holds = self.analyzer.can_prove(stmt.condition)
        with self.analyzer.constraint_scope(stmt.condition):
            self._visit_maybe(stmt.body, holds)

    def visit_while(self, stmt: While) -> None:
        if self.reached:
            self._check_own(stmt)  # the condition is evaluated at least once
        self._visit_maybe(stmt.body, False)
        self.reached = False  # it may never end: nothing after it surely runs

    def visit_let_stmt(self, stmt: LetStmt) -> None:
        if self.reached:
            self._check_own(stmt)
        if not _is_plain_int(stmt.value, stmt.var):
            self.visit_stmt(stmt.body)  # its var stays unknown: no index using it is proven
            return
        self.lets.append((stmt.var, stmt.value))
        try:
            self.visit_stmt(stmt.body)
        finally:
            self.lets.pop()

    def visit_evaluate(self, stmt: Evaluate) -> None:
        self.generic_visit(stmt)
        if _returns(stmt):
            self.reached = False

    def visit_block(self, stmt: Stmt) -> None:
        self._visit_maybe(stmt, False, own=False)  # blocks are lowered before this runs

    visit_block_realize = visit_block

    def _visit_maybe(self, body: Stmt, runs: bool, own: bool = True) -> None:
        """Visit ``body``, which surely runs iff ``runs`` (and what holds it surely runs)."""
        if not (runs and self.reached):
            if _may_stop(body):
                self.reached = False  # a While or return that maybe runs: later code maybe not
            return
        if own:
            self.visit_stmt(body)

    # ------------------------------------------------------------ accesses

    def _check_own(self, stmt: Stmt) -> None:
        """Report the accesses that ``stmt``'s own expressions (not its body) surely make."""
        accesses = surely_made_accesses(stmt)
        for buffer, indices in accesses:
            self._check(buffer, tuple(indices))

    def _check(self, buffer: Buffer, indices: tuple) -> None:
        for dim, (index, extent) in enumerate(zip(indices, buffer.shape)):
            if not isinstance(extent, IntImm):
                continue
            span = lane_span(index)
            if span is None or is_reduced(span[0]):
                continue
            lo, hi = (self._unlet(b) for b in span)
            low, high = self._range(lo, hi)
            if (high is not None and high < extent.value) and (low is not None and low >= 0):
                continue  # in bounds on every iteration: the usual case, decided cheaply
            end, zero = op.const(extent.value, hi.dtype), op.const(0, lo.dtype)
            if self._at_some_corner(op.greater_equal(hi, end), op.less(hi, end)) \
                    or self._at_some_corner(op.less(lo, zero), op.greater_equal(lo, zero)):
                self.found.append(OutOfBounds(buffer, indices, dim, low, high))
                return  # one report per access

    def _unlet(self, e: PrimExpr) -> PrimExpr:
        """``e`` with the values of the lets around it for their vars, innermost first."""
        for var, value in reversed(self.lets):
            e = substitute(e, {var: value})
        return e

    def _at_some_corner(self, cond: PrimExpr, negation: PrimExpr) -> bool:
        """Whether ``cond`` holds at an iteration that surely runs: each loop var it uses
        (at most MAX_CORNER_LOOPS of them) at its first or last value, outer loops first,
        the others at any value.

        ``negation`` (not ``cond``) proven on every iteration settles it first: the
        corners are iterations, so none can prove ``cond`` then (one proof where the
        corners take 2**k, for the in-bounds index that bounds alone did not settle).
        """
        if self.analyzer.can_prove(negation):
            return False
        loops = [lp for lp in self.loops if uses_var(cond, lp.loop_var)]
        if len(loops) > MAX_CORNER_LOOPS:
            return False
        for ends in itertools.product((False, True), repeat=len(loops)):
            values: dict = {}
            for loop, last in zip(loops, ends):
                first = substitute(loop.min, values)
                values[loop.loop_var] = op.add(first, op.sub(substitute(loop.extent, values),
                                                             op.const(1, first.dtype))) \
                    if last else first
            if self.analyzer.can_prove(substitute(cond, values)):
                return True
        return False

    def _range(self, lo: PrimExpr, hi: PrimExpr) -> tuple:
        low = self.analyzer.const_int_bound(lo).min_value
        high = self.analyzer.const_int_bound(hi).max_value
        inf = arith.ConstIntBound
        return (None if low == inf.NEG_INF else low, None if high == inf.POS_INF else high)


class SurelyEvaluated(ExprVisitor):
    """The unmasked loads an expression evaluates whenever it is evaluated."""

    def __init__(self):
        self.found: list[BufferLoad] = []

    def visit_buffer_load(self, load: BufferLoad) -> None:
        self.generic_visit(load)
        if load.predicate is None:  # a masked load's active lanes are unknown here
            self.found.append(load)

    def visit_call(self, call: Call) -> None:
        if call.op == "tir.if_then_else":  # only the chosen branch is evaluated
            self.visit_expr(call.args[0])
            return
        self.generic_visit(call)

    def visit_select(self, node: Any) -> None:
        self.visit_expr(node.condition)  # an arm may be a guarded load (Simplify keeps it so)

    def _left_only(self, node: Any) -> None:
        self.visit_expr(node.a)  # the right operand may be short-circuited

    visit_and = visit_or = _left_only

    def visit_let(self, let: Any) -> None:
        self.visit_expr(let.value)


def _is_plain_int(value: PrimExpr, var: Var) -> bool:
    """Whether ``value`` is integer arithmetic on vars and constants (no loads, no calls)."""
    if not DataType(var.dtype).is_integer or DataType(var.dtype).is_vector \
            or value.dtype != var.dtype:
        return False
    impure: list = []
    post_order_visit(value, lambda x: impure.append(x) if isinstance(x, (BufferLoad, Call))
                     else None)
    return not impure


def _returns(stmt: Evaluate) -> bool:
    return isinstance(stmt.value, Call) and stmt.value.op == "tir.ret"


def _may_stop(stmt: Stmt) -> bool:
    """Whether ``stmt`` holds a ``While`` (it may not end) or a ``tir.ret``."""
    found: list = []
    post_order_visit(stmt, lambda x: found.append(x) if isinstance(x, While) or (
        isinstance(x, Call) and x.op == "tir.ret") else None)
    return bool(found)


def RejectOutOfBoundsAccesses() -> PrimFuncPass:
    """A pass that raises ``ValueError`` for an access out of bounds on every execution
    (module docstring); off, like the run-time checks, if config
    ``tir.instrument_bound_checkers`` says so.

    Raises:
        ValueError: naming the access, its index range and the buffer's shape.
    """

    def transform_function(func: PrimFunc, mod: IRModule, ctx: PassContext) -> PrimFunc:
        if not ctx.config.get(CONFIG_KEY):
            return func
        found = provably_out_of_bounds(func)
        if found:
            raise ValueError(found[0].message(function_name(mod, func)))
        return func

    return prim_func_pass(transform_function, opt_level=0, name="tir.RejectOutOfBoundsAccesses")
