"""``RemoveNoOp``: delete statements that do nothing.

A statement is a no-op when running it changes nothing observable:

- ``Evaluate(e)`` where ``e`` has no side effect (a constant, or arithmetic
  and loads without impure calls such as ``call_extern``);
- a ``For`` whose body is a no-op or whose extent is a constant <= 0;
- an ``IfThenElse`` whose branches are both no-ops and whose condition is
  side-effect free (an empty else branch is dropped, an empty then branch
  with a real else branch becomes ``if not cond``);
- a ``LetStmt``, ``AttrStmt`` or ``Allocate`` around a no-op body;
- ``A[i] = A[i]`` (a store of the very value loaded from the same place);
- a ``SeqStmt`` whose statements are all no-ops (the others are kept).

A ``While`` loop is kept even with an empty body (it may never end) and so
is an ``AssertStmt`` (its check is its effect). Removed statements become
``Evaluate(0)``; a function with nothing to remove comes back unchanged (``is``).
"""

from __future__ import annotations

from tir import intrin, op, structural_equal
from tir.expr import Call, IntImm, PrimExpr
from tir.functor import StmtMutator, post_order_visit
from tir.node import replace
from tir.stmt import (
    Allocate,
    AttrStmt,
    BufferStore,
    Evaluate,
    For,
    IfThenElse,
    LetStmt,
    SeqStmt,
    Stmt,
)

from .pass_base import PrimFuncPass, prim_func_pass


def has_side_effect(expr: PrimExpr) -> bool:
    """Whether evaluating ``expr`` may do more than compute a value (an impure call)."""
    found = []

    def check(node: object) -> None:
        if isinstance(node, Call) and not intrin.is_pure(node.op):
            found.append(node)

    post_order_visit(expr, check)
    return bool(found)


def is_no_op(stmt: Stmt | None) -> bool:
    """Whether ``stmt`` is ``None`` or an ``Evaluate`` of a side-effect-free value."""
    if stmt is None:
        return True
    if not isinstance(stmt, Evaluate):
        return False
    return isinstance(stmt.value, IntImm) or not has_side_effect(stmt.value)


def _no_op(stmt: Stmt) -> Stmt:
    """``Evaluate(0)``, reusing ``stmt`` when it already is exactly that."""
    if isinstance(stmt, Evaluate) and op.is_const_int(stmt.value, 0):
        return stmt
    return Evaluate(0)


def _same_location(store: BufferStore, value: PrimExpr) -> bool:

    if getattr(value, "buffer", None) is not store.buffer:
        return False
    if store.predicate is not None or value.predicate is not None:
        return False
    return len(value.indices) == len(store.indices) and all(
        structural_equal(a, b) for a, b in zip(value.indices, store.indices, strict=True)
    )


class NoOpRemover(StmtMutator):
    """Rewrite statements bottom-up, replacing no-ops by ``Evaluate(0)``."""

    def visit_seq_stmt(self, stmt: SeqStmt) -> Stmt:
        new = self.generic_visit(stmt)
        kept = [s for s in new.seq if not is_no_op(s)]
        if len(kept) == len(stmt.seq):
            return new
        if not kept:
            return _no_op(stmt)
        return kept[0] if len(kept) == 1 else SeqStmt(kept)

    def visit_for(self, loop: For) -> Stmt:
        if isinstance(loop.extent, IntImm) and loop.extent.value <= 0:
            return Evaluate(0)
        new = self.generic_visit(loop)
        return Evaluate(0) if is_no_op(new.body) else new

    def visit_if_then_else(self, stmt: IfThenElse) -> Stmt:
        new = self.generic_visit(stmt)
        then_empty, else_empty = is_no_op(new.then_case), is_no_op(new.else_case)
        if then_empty and else_empty:
            return Evaluate(new.condition) if has_side_effect(new.condition) else Evaluate(0)
        if else_empty and new.else_case is not None:
            return replace(new, else_case=None)
        if then_empty:
            return IfThenElse(op.logical_not(new.condition), new.else_case)
        return new

    def visit_let_stmt(self, stmt: LetStmt) -> Stmt:
        return self._drop_if_body_empty(stmt, stmt.value)

    def visit_attr_stmt(self, stmt: AttrStmt) -> Stmt:
        return self._drop_if_body_empty(stmt, stmt.value)

    def visit_allocate(self, stmt: Allocate) -> Stmt:
        return self._drop_if_body_empty(stmt, stmt.condition)

    def _drop_if_body_empty(self, stmt: Stmt, value: PrimExpr) -> Stmt:
        new = self.generic_visit(stmt)
        if is_no_op(new.body) and not has_side_effect(value):
            return Evaluate(0)
        return new

    def visit_buffer_store(self, stmt: BufferStore) -> Stmt:
        if _same_location(stmt, stmt.value):
            return Evaluate(0)
        return stmt


def remove_no_op(stmt: Stmt) -> Stmt:
    """``stmt`` without its no-ops (the same object when there are none)."""
    return NoOpRemover()(stmt)


def RemoveNoOp() -> PrimFuncPass:
    """The ``tir.RemoveNoOp`` pass: delete statements that do nothing (see the module docstring)."""

    def transform_function(func, mod, ctx):
        return func.with_body(remove_no_op(func.body))

    return prim_func_pass(transform_function, opt_level=0, name="tir.RemoveNoOp")
