"""Finding and replacing statements in a scheduled function's tree.

A schedule refers to blocks by name and to loops by their loop var (both
survive every rewrite that keeps them), so these helpers look statements up
by those keys in the current function and replace them by identity.
"""

from __future__ import annotations

from typing import Any, Iterator

from ..block import Block, BlockRealize
from ..function import PrimFunc
from ..functor import StmtMutator
from ..stmt import For, SeqStmt, Stmt
from .error import ScheduleError


def walk(stmt: Stmt) -> Iterator[tuple[Stmt, tuple[Stmt, ...]]]:
    """Every statement under ``stmt`` (pre-order), with the statements above it (outer first)."""
    stack: list[tuple[Stmt, tuple[Stmt, ...]]] = [(stmt, ())]
    while stack:
        s, above = stack.pop()
        yield s, above
        inner = above + (s,)
        children = _child_stmts(s)
        for c in reversed(children):
            stack.append((c, inner))


def _child_stmts(s: Stmt) -> list[Stmt]:
    from ..node import STMT, STMTS, child_fields

    out: list[Stmt] = []
    for name, kind, _binds in child_fields(type(s)):
        v = getattr(s, name)
        if kind == STMT and v is not None:
            out.append(v)
        elif kind == STMTS:
            out.extend(v)
    return out


def root_realize(func: PrimFunc) -> BlockRealize:
    """The root block of a scheduled function (``create_prim_func`` makes one)."""
    body = func.body
    if isinstance(body, BlockRealize):
        return body
    raise ScheduleError(
        "the function has no root block: tir.Schedule works on functions built by "
        "te.create_prim_func or written with a root tir.Block (a plain loop nest has no "
        "blocks to schedule)")


def blocks(func: PrimFunc) -> list[BlockRealize]:
    """Every block realize except the root's, in program order."""
    root = root_realize(func)
    return [s for s, _ in walk(root.block.body) if isinstance(s, BlockRealize)]


def find_block(func: PrimFunc, name: str) -> BlockRealize:
    """The realize of the block named ``name``; ``ScheduleError`` if there is none."""
    found = [r for r in blocks(func) if r.block.name_hint == name]
    if not found:
        names = ", ".join(sorted({r.block.name_hint for r in blocks(func)})) or "none"
        raise ScheduleError(f"get_block: no block named {name!r} (blocks: {names})")
    if len(found) > 1:
        raise ScheduleError(f"get_block: {len(found)} blocks are named {name!r}")
    return found[0]


def find_loop(func: PrimFunc, loop_var: Any) -> For:
    """The loop whose var is ``loop_var``; ``ScheduleError`` if it is gone."""
    for s, _ in walk(func.body):
        if isinstance(s, For) and s.loop_var is loop_var:
            return s
    raise ScheduleError(f"loop {loop_var.name} is no longer in the function (a primitive "
                        "such as fuse or split replaced it; use the loops it returned)")


def loop_for(func: PrimFunc, loop_var: Any, primitive: str) -> For:
    """The loop of ``loop_var`` for ``primitive``: a ``ScheduleError`` naming both if gone."""
    from ..expr import Var
    from .error import fail

    if not isinstance(loop_var, Var):
        raise TypeError(f"{primitive}: loops are named by their loop Var, got "
                        f"{type(loop_var).__name__}")
    try:
        return find_loop(func, loop_var)
    except ScheduleError as e:
        raise fail(primitive, f"loop {loop_var.name}", str(e)) from None


def above(func: PrimFunc, target: Stmt) -> tuple[Stmt, ...]:
    """The statements enclosing ``target`` (outer first), found by identity."""
    for s, outer in walk(func.body):
        if s is target:
            return outer
    raise ScheduleError("internal: statement not found in the function")


def loops_above(func: PrimFunc, target: Stmt) -> list[For]:
    """The loops around ``target`` up to the nearest enclosing block (outer first)."""
    out: list[For] = []
    for s in reversed(above(func, target)):
        if isinstance(s, (Block, BlockRealize)):
            break
        if isinstance(s, For):
            out.append(s)
    return out[::-1]


def parent(func: PrimFunc, target: Stmt) -> Stmt | None:
    """The statement directly enclosing ``target`` (None for the body itself)."""
    outer = above(func, target)
    return outer[-1] if outer else None


class _Replace(StmtMutator):
    def __init__(self, table: dict[int, Stmt | None]):
        self.table = table

    def visit_stmt(self, stmt: Stmt) -> Any:
        if id(stmt) in self.table:
            return self.table[id(stmt)]
        return super().visit_stmt(stmt)

    def visit_seq_stmt(self, s: SeqStmt) -> Stmt:
        items = [self.visit_stmt(c) for c in s.seq]
        if all(a is b for a, b in zip(items, s.seq)):
            return s
        return SeqStmt.flatten(*items)


def replace(func: PrimFunc, table: dict[Stmt, Stmt | None] | list) -> PrimFunc:
    """``func`` with each key statement replaced by its value (by identity).

    A value of None removes the statement from its ``SeqStmt``. ``table`` is a
    dict or a list of ``(old, new)`` pairs (statements hash by identity).
    """
    pairs = table.items() if isinstance(table, dict) else table
    by_id = {id(old): new for old, new in pairs}
    return func.with_body(_Replace(by_id).visit_stmt(func.body))

