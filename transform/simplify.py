"""``Simplify``: simplify every expression of a function with what the context proves.

The walk tells a ``tir.arith.Analyzer`` what holds where: the range of each
loop variable (plus ``var < min + extent`` when the extent is symbolic, which
constant bounds cannot express), the condition of an ``if`` inside its
then-branch (and its negation in the else-branch), the condition of an
``AssertStmt`` in its body, the bounds of a ``LetStmt`` value. Each
expression is simplified under those facts, and statements whose fate is
then known are resolved. Inside an expression, the condition of an
``if_then_else`` is a fact in its values; that of a ``Select`` only in a
value without a load, impure call or guarded division: a Select computes
both values, so its condition must not stand in for a guard
(``tir/arith/speculation.py``). Statements are resolved as follows:

- ``if c`` with ``c`` provably true (false) becomes its then (else) branch;
- a ``For`` whose extent is provably at most 0 and a ``While`` whose
  condition is provably false become ``Evaluate(0)``;
- a ``LetStmt`` binding a constant or a variable is inlined into its body.
  Other let values are kept (inlining would duplicate their computation);
  the analyzer learns only their bounds.

Leftover no-ops (``Evaluate(0)``) are for ``RemoveNoOp`` to clean up. An
expression that simplifies to a structurally equal one is kept as the very
same object, so an already-simple function comes back unchanged (``is``).
"""

from __future__ import annotations

from tir import arith, op, structural_equal
from tir.arith.pattern import same_expr
from tir.dtype import DataType
from tir.expr import IntImm, PrimExpr, Var
from tir.functor import StmtExprMutator, substitute
from tir.node import replace
from tir.range import Range
from tir.stmt import AssertStmt, Evaluate, For, IfThenElse, LetStmt, Stmt, While

from .pass_base import PrimFuncPass, prim_func_pass


def _is_true(e: PrimExpr) -> bool:
    return isinstance(e, IntImm) and e.value != 0


def _is_false(e: PrimExpr) -> bool:
    return isinstance(e, IntImm) and e.value == 0


class StmtSimplifier(StmtExprMutator):
    """Simplify expressions under the facts the enclosing statements establish."""

    def __init__(self, analyzer: arith.Analyzer | None = None):
        self.analyzer = analyzer if analyzer is not None else arith.Analyzer()

    def visit_expr(self, expr: PrimExpr) -> PrimExpr:
        new = self.analyzer.simplify(expr)
        # The rules rebuild every node with a constant operand, mostly into the same
        # structure: ``same_expr`` (free vars and buffers by identity) settles that far
        # faster than ``structural_equal``, which still decides when it says no.
        if new is expr or same_expr(new, expr) or structural_equal(new, expr):
            return expr
        return new

    def _prove(self, cond: PrimExpr) -> bool | None:
        """True or False if the analyzer settles ``cond``, else None."""
        if _is_true(cond) or self.analyzer.can_prove(cond):
            return True
        if _is_false(cond) or self.analyzer.can_prove(op.logical_not(cond)):
            return False
        return None

    def visit_for(self, loop: For) -> Stmt:
        lo, extent = self.visit_expr(loop.min), self.visit_expr(loop.extent)
        if self._prove(extent <= 0) is True:
            return Evaluate(0)
        with self.analyzer.loop_scope(loop.loop_var, lo, extent):
            body = self.visit_stmt(loop.body)
        if lo is loop.min and extent is loop.extent and body is loop.body:
            return loop
        return replace(loop, min=lo, extent=extent, body=body)

    def visit_if_then_else(self, stmt: IfThenElse) -> Stmt:
        cond = self.visit_expr(stmt.condition)
        fact = op.strip_likely(cond)
        known = self._prove(fact)
        if known is True:
            return self.visit_stmt(stmt.then_case)
        if known is False:
            return Evaluate(0) if stmt.else_case is None else self.visit_stmt(stmt.else_case)
        with self.analyzer.constraint_scope(fact):
            then_case = self.visit_stmt(stmt.then_case)
        else_case = stmt.else_case
        if else_case is not None:
            with self.analyzer.constraint_scope(op.logical_not(fact)):
                else_case = self.visit_stmt(else_case)
        if cond is stmt.condition and then_case is stmt.then_case and else_case is stmt.else_case:
            return stmt
        return replace(stmt, condition=cond, then_case=then_case, else_case=else_case)

    def visit_assert_stmt(self, stmt: AssertStmt) -> Stmt:
        cond = self.visit_expr(stmt.condition)
        with self.analyzer.constraint_scope(cond):  # the body runs only if the check passed
            body = self.visit_stmt(stmt.body)
        if cond is stmt.condition and body is stmt.body:
            return stmt
        return replace(stmt, condition=cond, body=body)

    def visit_while(self, stmt: While) -> Stmt:
        cond = self.visit_expr(stmt.condition)
        if self._prove(op.strip_likely(cond)) is False:
            return Evaluate(0)
        body = self.visit_stmt(stmt.body)
        if cond is stmt.condition and body is stmt.body:
            return stmt
        return replace(stmt, condition=cond, body=body)

    def visit_let_stmt(self, stmt: LetStmt) -> Stmt:
        value = self.visit_expr(stmt.value)
        if isinstance(value, (IntImm, Var)):  # cheap and pure: inline it
            return self.visit_stmt(substitute(stmt.body, {stmt.var: value}))
        self._bind_bounds(stmt.var, value)
        body = self.visit_stmt(stmt.body)
        if value is stmt.value and body is stmt.body:
            return stmt
        return replace(stmt, value=value, body=body)

    def _bind_bounds(self, var: Var, value: PrimExpr) -> None:
        """Tell the analyzer the range of ``var`` when ``value``'s bounds say more than its type."""
        t = DataType(var.dtype)
        if not t.is_integer or t.is_vector:
            return
        bound = self.analyzer.const_int_bound(value)
        extent = bound.max_value - bound.min_value + 1
        if bound.min_value < t.min_value() or extent > t.max_value():
            return  # unbounded, or as wide as the type: nothing to learn
        rng = Range.from_min_extent(op.const(bound.min_value, var.dtype),
                                    op.const(extent, var.dtype))
        self.analyzer.bind(var, rng, allow_override=True)


def simplify_stmt(stmt: Stmt, analyzer: arith.Analyzer | None = None) -> Stmt:
    """``stmt`` simplified (the same object when nothing simplifies)."""
    return StmtSimplifier(analyzer)(stmt)


def Simplify() -> PrimFuncPass:
    """The ``tir.Simplify`` pass: simplify every PrimFunc (see the module docstring)."""

    def transform_function(func, mod, ctx):
        return func.with_body(simplify_stmt(func.body))

    return prim_func_pass(transform_function, opt_level=0, name="tir.Simplify")
