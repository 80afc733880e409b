"""Every memory access in the body of one vectorized loop, and where in the body it runs.

The legality analysis (legality.py) asks, for each pair of accesses, whether
running the loop's iterations as vector lanes could reorder them. For that it
needs each access's buffer, indices, kind (read or write) and *position*: the
path of ``Step``s from the loop body down to the access.

A step ``(node, slot)`` orders the parts of one statement: an ``if`` reads
its condition (slot 0) before it runs a branch (1, 2); a store reads
everything (slot ``READ``) before it writes (slot ``WRITE``); a loop reads
its bounds (0) before its body (1). The slot ``LOOP`` marks an inner serial
loop: below it, accesses are ordered by that loop's iteration first.

Lets bound inside the loop are substituted into the indices, so an index is
an expression of the loop vars and of values fixed for the whole loop.
Allocations made inside the loop are private to each lane (the vectorizer
gives every lane its own copy), so their accesses are left out.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import attrs

from tir.arith import Analyzer, ConstIntBound
from tir.expr import BufferLoad, Call, Let, PrimExpr, Var
from tir.functor import StmtExprVisitor, post_order_visit, substitute
from tir.intrin import is_pure
from tir.stmt import (
    Allocate,
    AssertStmt,
    AttrStmt,
    BufferStore,
    Evaluate,
    For,
    IfThenElse,
    LetStmt,
    SeqStmt,
    Stmt,
    While,
)

#: The slot of a step into an inner serial loop's iterations.
LOOP = -1
#: The slots of a leaf statement: all its reads happen before its write.
READ, WRITE = 0, 1

#: Calls that touch no memory although they are not pure (the vectorizer keeps them apart).
_NO_MEMORY = frozenset({"tir.assume", "tir.undef", "tir.vscale"})


@attrs.frozen
class Step:
    """One level of an access's position: part ``slot`` of statement ``node``."""

    node: Stmt
    slot: int


@attrs.frozen(eq=False)
class Access:
    """One read or write of memory in the loop body.

    ``data`` is the memory (a buffer's data var); ``None`` stands for the state of
    opaque calls (extern functions), which only such calls share. ``indices`` is
    ``None`` when the elements touched are unknown.
    """

    data: Var | None
    buffer: Any
    indices: tuple | None
    is_write: bool
    node: Any  # the BufferLoad, BufferStore or Call, as written
    path: tuple
    loops: tuple


@attrs.frozen
class LoopRange:
    """An inner serial loop and the values its var takes (``None``: unbounded).

    When the loop's start does not change during the vectorized loop
    (``start`` is set), its var is ``start + r`` with ``r`` in ``[lo, hi]``
    (``lo`` is 0): the dependence tests then compare offsets from the start,
    which stay bounded when the start itself is symbolic. Otherwise ``[lo, hi]``
    bounds the var itself.
    """

    loop: For
    lo: int | None
    hi: int | None
    start: PrimExpr | None = None


class AccessCollector(StmtExprVisitor):
    """Collects the accesses of the body of the loop over ``var`` (``collect``), with positions."""

    def __init__(self, var: Var, analyzer: Analyzer):
        self.var = var
        self.analyzer = analyzer
        self.accesses: list[Access] = []
        #: Why the body cannot be analyzed (a ``while`` loop), or None.
        self.unanalyzable: str | None = None
        self._path: list[Step] = []
        self._loops: list[LoopRange] = []
        self._lets: dict[int, PrimExpr] = {}
        self._private: set[int] = set()

    def collect(self, body: Stmt) -> list[Access]:
        """The accesses of ``body``, in program order."""
        self.visit_stmt(body)
        return self.accesses

    # ------------------------------------------------------------ positions

    @contextlib.contextmanager
    def at(self, node: Stmt, slot: int) -> Iterator[None]:
        """Accesses recorded inside belong to part ``slot`` of ``node``."""
        self._path.append(Step(node, slot))
        try:
            yield
        finally:
            self._path.pop()

    def reads(self, node: Stmt, slot: int, *exprs: PrimExpr | None) -> None:
        """Record the loads of ``exprs`` as part ``slot`` of ``node``."""
        with self.at(node, slot):
            for e in exprs:
                if e is not None:
                    self.visit_expr(e)

    def record(self, data: Var | None, buffer: Any, indices: tuple | None, is_write: bool,
               node: Any) -> None:
        """Add one access at the current position (unless its memory is lane-private)."""
        if data is not None and id(data) in self._private:
            return
        if indices is not None and self._lets:
            indices = tuple(substitute(i, self._let_value) for i in indices)
        self.accesses.append(Access(data, buffer, indices, is_write, node,
                                    tuple(self._path), tuple(self._loops)))

    def _let_value(self, var: Var) -> PrimExpr | None:
        return self._lets.get(id(var))

    @contextlib.contextmanager
    def let(self, var: Var, value: PrimExpr) -> Iterator[None]:
        """Within the scope, ``var`` stands for ``value`` (with outer lets substituted)."""
        if self._lets:
            value = substitute(value, self._let_value)
        saved = self._lets.get(id(var))
        self._lets[id(var)] = value
        try:
            yield
        finally:
            if saved is None:
                del self._lets[id(var)]
            else:
                self._lets[id(var)] = saved

    # ------------------------------------------------------------ statements

    def visit_seq_stmt(self, node: SeqStmt) -> None:
        for k, stmt in enumerate(node.seq):
            with self.at(node, k):
                self.visit_stmt(stmt)

    def visit_buffer_store(self, node: BufferStore) -> None:
        self.reads(node, READ, node.value, *node.indices, node.predicate)
        with self.at(node, WRITE):
            self.record(node.buffer.data, node.buffer, node.indices, True, node)

    def visit_evaluate(self, node: Evaluate) -> None:
        self.reads(node, READ, node.value)

    def visit_if_then_else(self, node: IfThenElse) -> None:
        self.reads(node, 0, node.condition)
        with self.at(node, 1):
            self.visit_stmt(node.then_case)
        if node.else_case is not None:
            with self.at(node, 2):
                self.visit_stmt(node.else_case)

    def visit_for(self, node: For) -> None:
        self.reads(node, 0, node.min, node.extent)
        self._loops.append(self._range(node))
        try:
            with self.at(node, 1), self.at(node, LOOP), self.analyzer.loop_scope(
                    node.loop_var, node.min, node.extent):
                self.visit_stmt(node.body)
        finally:
            self._loops.pop()

    def _range(self, node: For) -> LoopRange:
        """The values the loop var of ``node`` takes, as offsets from a fixed start if it can."""
        start = substitute(node.min, self._let_value) if self._lets else node.min
        if not self._varies(start):
            longest = finite(self.analyzer.const_int_bound(node.extent).max_value)
            return LoopRange(node, 0, None if longest is None else longest - 1, start)
        first = self.analyzer.const_int_bound(node.min).min_value
        last = self.analyzer.const_int_bound(node.min + node.extent - 1).max_value
        return LoopRange(node, finite(first), finite(last))

    def _varies(self, e: PrimExpr) -> bool:
        """Whether ``e`` may change during the loop: it uses a loop var or loads memory."""
        changing = {id(self.var)} | {id(r.loop.loop_var) for r in self._loops}
        found = []
        post_order_visit(e, lambda n: found.append(n) if isinstance(n, BufferLoad) or (
            isinstance(n, Var) and id(n) in changing) else None)
        return bool(found)

    def visit_while(self, node: While) -> None:
        self.unanalyzable = "a while loop"

    def visit_let_stmt(self, node: LetStmt) -> None:
        self.reads(node, 0, node.value)
        with self.at(node, 1), self.let(node.var, node.value):
            self.visit_stmt(node.body)

    def visit_allocate(self, node: Allocate) -> None:
        self.reads(node, 0, node.condition, *node.extents)
        self._private.add(id(node.buffer_var))
        with self.at(node, 1):
            self.visit_stmt(node.body)

    def visit_attr_stmt(self, node: AttrStmt) -> None:
        self.reads(node, 0, node.value)
        with self.at(node, 1):
            self.visit_stmt(node.body)

    def visit_assert_stmt(self, node: AssertStmt) -> None:
        self.reads(node, 0, node.condition, node.message)
        with self.at(node, 1):
            self.visit_stmt(node.body)

    # ------------------------------------------------------------ expressions

    def visit_buffer_load(self, node: BufferLoad) -> None:
        self.record(node.buffer.data, node.buffer, node.indices, False, node)
        self.generic_visit(node)

    def visit_let(self, node: Let) -> None:
        self.visit_expr(node.value)
        with self.let(node.var, node.value):
            self.visit_expr(node.body)

    def visit_call(self, node: Call) -> None:
        opaque = node.op not in _NO_MEMORY and not is_pure(node.op)
        if opaque:  # its own state (``data`` None), which other opaque calls may share
            self.record(None, None, None, True, node)
        for data in _pointers(node):  # and the memory it is given pointers to
            self.record(data, None, None, opaque, node)
        self.generic_visit(node)


def _pointers(call: Call) -> list[Var]:
    """The memory a call can reach through its arguments: handle vars and ``address_of``."""
    found: list[Var] = []

    def check(n):
        if isinstance(n, Var) and n.dtype == "handle":
            found.append(n)
        elif isinstance(n, Call) and n.op == "tir.address_of" and n.args and isinstance(
                n.args[0], BufferLoad):
            found.append(n.args[0].buffer.data)

    for arg in call.args:
        post_order_visit(arg, check)
    return found


def shown(access: Access, simplify: Any = None) -> str:
    """The access as a user reads it: ``a[i - 1]``, or the call that touches memory."""
    node = access.node
    if isinstance(node, (BufferLoad, BufferStore)):
        indices = [simplify(i) if simplify else i for i in node.indices]
        return f"{node.buffer.name}[{', '.join(str(i) for i in indices)}]"
    if node.op in ("tir.call_extern", "tir.call_pure_extern") and node.args:
        return f"the call of {getattr(node.args[0], 'value', '?')}"
    return f"the call of {node.op}"


def finite(value: int) -> int | None:
    """A ``ConstIntBound`` end as an int, or None for an infinite one."""
    return None if value in (ConstIntBound.POS_INF, ConstIntBound.NEG_INF) else value
