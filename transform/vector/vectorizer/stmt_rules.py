"""The vectorizer's statement rules, and scalarization.

``Vectorizer(var, lanes, min_).vectorize(body)`` rewrites the body of one
vectorized loop. Statements take the expression rules of vectorizer.py; a statement
that cannot become vector code -- a rule raised ``NeedScalarize`` -- is kept
as a serial loop of its own over the loop's range::

    for j_s in range(min, min + lanes):
        <the statement with j replaced by j_s>

That is TVM's *scalarize*: the innermost statement that failed is
scalarized, its siblings are still vectorized. A statement that uses a
let-bound var whose value was widened cannot be scalarized alone (the
scalar var is gone), so the request climbs to the statement binding it.
"""

from __future__ import annotations

import functools

from tir import op
from tir.analysis.var_use import uses_any_var
from tir.expr import BufferLoad, PrimExpr, Var
from tir.functor import StmtExprMutator, deep_recursion, post_order_visit, substitute
from tir.node import replace
from tir.stmt import (
    Allocate,
    AssertStmt,
    AttrStmt,
    BufferStore,
    For,
    ForKind,
    IfThenElse,
    LetStmt,
    SeqStmt,
    Stmt,
    While,
)

from ..analysis.branch_safety import is_in_bounds
from ..remarks import VectorizeError
from ..tail import lane_guard, predicate_accesses, why_not_predicable
from .expr_rules import ExprVectorizer, NeedScalarize
from .lanes import ScalableLanes, chunk, lanes, lanes_arg


class Vectorizer(ExprVectorizer):
    """Rewrites the body of one vectorized loop; records what it had to scalarize."""

    def __init__(self, var: Var, lanes_: int | ScalableLanes, min_: PrimExpr | None = None,
                 analyzer=None,
                 keep_serial: dict | None = None, predicate: bool = False, tail: bool = False,
                 any_dim: bool = False):
        super().__init__(var, lanes_, min_, analyzer, any_dim)
        #: The reasons of every scalarized statement, in the order met.
        self.reasons: list[str] = []
        #: Whether a guard on the var may become a lane mask (buffer-level predication).
        self.predicate = predicate
        #: A peeled tail loop (StripMineVectorLoops): its guard may leave in-bounds
        #: uniform loads unmasked (tail.py).
        self.tail = tail
        #: One note per guard that became a lane mask, in the order met.
        self.predicated: list[str] = []
        #: id(statement) -> reason: statements the legality analysis keeps serial.
        self.keep_serial = keep_serial or {}
        #: id(rewritten statement) -> the statement it replaced before vectorizing (PerLaneAccess)
        self._origin: dict[int, Stmt] = {}
        self._root: Stmt | None = None
        self._scalarized: set[int] = set()
        #: How many statements were scalarized (reasons are deduplicated, this is not).
        self._scalarize_count = 0

    def vectorize(self, body: Stmt) -> Stmt:
        """The vectorized ``body`` (the loop itself disappears)."""
        self._root = body
        with deep_recursion():
            return self.visit_stmt(body)

    @property
    def scalarized_all(self) -> bool:
        """Whether the whole body (or each of its top-level statements) was scalarized."""
        root = self._root
        parts = root.seq if isinstance(root, SeqStmt) else ()
        return id(root) in self._scalarized or bool(parts) and all(
            id(s) in self._scalarized for s in parts)

    def visit_stmt(self, stmt: Stmt) -> Stmt:
        mark = len(self.masked_reads)
        try:
            reason = self._kept_serial(stmt)
            if reason is not None:
                raise NeedScalarize(reason)
            return super().visit_stmt(stmt)
        except NeedScalarize as request:
            del self.masked_reads[mark:]  # that statement stays as written
            if self._uses_widened_let(stmt):
                raise  # the let that binds the var scalarizes instead
            return self.scalarize(stmt, request.reason)

    def _kept_serial(self, stmt: Stmt) -> str | None:
        """Why the legality analysis keeps ``stmt`` (or the statement it replaced) serial."""
        while True:
            if id(stmt) in self.keep_serial:
                return self.keep_serial[id(stmt)]
            stmt = self._origin.get(id(stmt))
            if stmt is None:
                return None

    def scalarize(self, stmt: Stmt, reason: str) -> Stmt:
        """``stmt`` in a serial loop over the vectorized loop's range."""
        if reason not in self.reasons:
            self.reasons.append(reason)
        self._scalarized.add(id(stmt))
        self._scalarize_count += 1
        index = Var(f"{self.var.name}_s", self.var.dtype)
        body = substitute(stmt, {self.var: index})
        extent = op.cast(self.var.dtype, lanes_arg(self.lanes))
        return For(index, self.min, extent, ForKind.SERIAL, body)

    def _uses_widened_let(self, stmt: Stmt) -> bool:
        return uses_any_var(stmt, self.let_map.keys())

    # ------------------------------------------------------------ stores and evaluation

    def visit_buffer_store(self, node: BufferStore) -> Stmt:
        """A store whose indices became vectors stores that many lanes (the last index
        only, unless ``any_dim``)."""
        indices = [self.visit_expr(i) for i in node.indices]
        value = self.visit_expr(node.value)
        pred = None if node.predicate is None else self.visit_expr(node.predicate)
        unchanged = all(new is old for new, old in zip(indices, node.indices))
        if unchanged and value is node.value and pred is node.predicate:
            self._check_runs_once(node)
            return node
        widened = self.check_access(node.buffer, indices, node.indices)
        if not any(widened):
            if self.widened(value, node.value) or (
                    pred is not None and self.widened(pred, node.predicate)):
                raise NeedScalarize(
                    f"the index of the store to {node.buffer.name} does not depend on "
                    f"{self.var.name} but the stored value does"
                )
            self._check_runs_once(node)  # e.g. a let in the value changed, but not by lane
            return BufferStore(node.buffer, value, indices, pred)
        n = lanes(node.value)
        one = self.one_element(indices, node.indices, widened)
        if one is not None and pred is None:
            return self._store_to_one_element(node, one, value)
        if pred is not None:
            pred = self.wide(pred, n)
        indices = self.same_lanes(indices, node.indices, widened)
        return BufferStore(node.buffer, self.wide(value, n), indices, pred)

    def _store_to_one_element(self, node: BufferStore, indices: list, value: PrimExpr) -> Stmt:
        """Every iteration stores to the same elements: the last iteration's value stays."""
        if _reads(node.value, node.buffer):
            raise NeedScalarize(f"every iteration stores to the same element of "
                                f"{node.buffer.name} and reads {node.buffer.name}")
        if self.scalable:
            raise NeedScalarize(f"every iteration stores to the same element of "
                                f"{node.buffer.name}: the last of a scalable number of lanes")
        n = lanes(node.value)
        last = chunk(self.wide(value, n), self.lanes - 1, n)
        return BufferStore(node.buffer, last, indices)

    def _check_runs_once(self, node: BufferStore) -> None:
        """A store that does not depend on the var runs once instead of L times: safe only
        if running it again would not change the result, i.e. it does not read its buffer."""
        if _reads(node.value, node.buffer):
            raise NeedScalarize(
                f"the store to {node.buffer.name} does not depend on {self.var.name} and reads "
                f"{node.buffer.name}, so it must run once per iteration"
            )

    # ------------------------------------------------------------ control flow

    def visit_if_then_else(self, node: IfThenElse) -> Stmt:
        """An if with a uniform condition is kept; one that depends on the var scalarizes,
        unless it is a tail guard its accesses can take as a lane mask (tail.py)."""
        cond = self.visit_expr(node.condition)
        if self.widened(cond, node.condition):
            reason = f"if condition depends on {self.var.name}"
            if not self.predicate or node.else_case is not None:
                raise NeedScalarize(reason)
            predicated, why_not = self._try_predicate(node, cond)
            if predicated is None:
                raise NeedScalarize(f"{reason} (not predicated: {why_not})" if why_not
                                    else reason)
            return predicated
        then_case = self.visit_stmt(node.then_case)
        else_case = None if node.else_case is None else self.visit_stmt(node.else_case)
        if cond is node.condition and then_case is node.then_case and else_case is node.else_case:
            return node
        return IfThenElse(cond, then_case, else_case)

    def _try_predicate(self, node: IfThenElse, cond: PrimExpr) -> tuple[Stmt | None, str]:
        """The then-branch with the guard ``cond`` as a mask on its accesses, or None and why.

        The branch is vectorized first; if any part of it had to scalarize, that
        part would run unguarded, so the guard stays (and the branch's remarks go).
        """
        guard = lane_guard(cond, self.lanes)
        if guard is None:
            return None, ""
        saved = len(self.reasons), set(self._scalarized), len(self.predicated)
        count = self._scalarize_count
        try:
            branch = self.visit_stmt(node.then_case)
        except NeedScalarize as request:
            branch, why_not = None, request.reason
        else:
            in_bounds = functools.partial(is_in_bounds, analyzer=self.analyzer) if self.tail \
                else None
            why_not = why_not_predicable(branch, guard, in_bounds)
            if self._scalarize_count > count:
                why_not = "; ".join(self.reasons[saved[0]:]) or "part of the branch is scalarized"
        if why_not:
            del self.reasons[saved[0]:], self.predicated[saved[2]:]
            self._scalarized = saved[1]
            return None, why_not
        self.predicated.append(f"if {node.condition} became a lane mask")
        return predicate_accesses(branch, guard, in_bounds), ""

    def visit_for(self, node: For) -> Stmt:
        """An inner loop with a uniform range is kept (its body vectorized); else scalarize."""
        lo, extent = self.visit_expr(node.min), self.visit_expr(node.extent)
        if self.widened(lo, node.min) or self.widened(extent, node.extent):
            raise NeedScalarize(
                f"the range of inner loop {node.loop_var.name} depends on {self.var.name}"
            )
        with self.analyzer.loop_scope(node.loop_var, lo, extent):
            body = self.visit_stmt(node.body)
        if lo is node.min and extent is node.extent and body is node.body:
            return node
        return replace(node, min=lo, extent=extent, body=body)

    def visit_while(self, node: While) -> Stmt:
        """A while loop cannot be vectorized or scalarized safely: an error."""
        raise VectorizeError(self.var.name, "while loop inside a vectorized loop is not supported")

    # ------------------------------------------------------------ bindings and scopes

    def visit_let_stmt(self, node: LetStmt) -> Stmt:
        """A let whose value became a vector binds a new vector var of that dtype."""
        return self.rebind_let(node, self.visit_stmt, LetStmt)

    def visit_allocate(self, node: Allocate) -> Stmt:
        """Each iteration gets its own copy: the last extent grows by L, accesses interleave."""
        cond = self.visit_expr(node.condition)
        extents = [self.visit_expr(e) for e in node.extents]
        if self.widened(cond, node.condition) or any(
                self.widened(new, old) for new, old in zip(extents, node.extents)):
            raise NeedScalarize(f"the size of allocation {node.buffer_var.name} depends on "
                                f"{self.var.name}")
        if self.scalable:
            raise NeedScalarize(f"a copy of allocation {node.buffer_var.name} per lane needs "
                                "a fixed number of lanes")
        last = op.mul(extents[-1], op.const(self.lanes, extents[-1].dtype))
        extents = extents[:-1] + [last]
        lane = op.sub(self.var, self.min)
        private = PerLaneAccess(node.buffer_var, lane, self.lanes)
        body = private(node.body)
        self._origin.update(private.origin)
        body = self.visit_stmt(body)
        return replace(node, extents=extents, condition=cond, body=body)

    def visit_attr_stmt(self, node: AttrStmt) -> Stmt:
        """An attribute with a uniform value is kept; else scalarize."""
        value = self.visit_expr(node.value)
        if self.widened(value, node.value):
            raise NeedScalarize(f"the value of attribute {node.attr_key!r} depends on "
                                f"{self.var.name}")
        body = self.visit_stmt(node.body)
        if value is node.value and body is node.body:
            return node
        return replace(node, value=value, body=body)

    def visit_assert_stmt(self, node: AssertStmt) -> Stmt:
        """An assert with a uniform condition is kept; else scalarize."""
        cond = self.visit_expr(node.condition)
        if self.widened(cond, node.condition):
            raise NeedScalarize(f"assert condition depends on {self.var.name}")
        body = self.visit_stmt(node.body)
        if cond is node.condition and body is node.body:
            return node
        return replace(node, condition=cond, body=body)


def _reads(value: PrimExpr, buffer) -> bool:
    """Whether ``value`` loads from the memory of ``buffer``."""
    found = []

    def check(e):
        if isinstance(e, BufferLoad) and e.buffer.data is buffer.data:
            found.append(e)

    post_order_visit(value, check)
    return bool(found)


class PerLaneAccess(StmtExprMutator):
    """Accesses to an allocation made private per lane: ``s[i]`` becomes ``s[i * L + lane]``.

    The buffers over the allocation get their last dimension ``L`` times
    longer (and their outer strides too).
    """

    def __init__(self, data: Var, lane: PrimExpr, lanes_: int):
        self.data = data
        self.lane = lane
        self.lanes = lanes_
        self.buffers: dict[int, object] = {}
        #: id(new statement) -> the statement it replaces (and keeps alive).
        self.origin: dict[int, Stmt] = {}

    def visit_stmt(self, stmt: Stmt) -> Stmt:
        new = super().visit_stmt(stmt)
        if new is not stmt:
            self.origin[id(new)] = stmt
        return new

    def visit_buffer_load(self, node):
        node = self.generic_visit(node)
        return self._rewrite(node)

    def visit_buffer_store(self, node):
        node = self.generic_visit(node)
        return self._rewrite(node)

    def _rewrite(self, node):
        if node.buffer.data is not self.data:
            return node
        last = node.indices[-1]
        index = op.add(op.mul(last, op.const(self.lanes, last.dtype)),
                       op.cast(last.dtype, self.lane))
        return replace(node, buffer=self._buffer(node.buffer),
                       indices=node.indices[:-1] + (index,))

    def _buffer(self, buf):
        if id(buf) not in self.buffers:
            times = op.const(self.lanes, buf.shape[-1].dtype)
            shape = buf.shape[:-1] + (op.mul(buf.shape[-1], times),)
            strides = tuple(op.mul(s, op.const(self.lanes, s.dtype)) for s in buf.strides[:-1])
            strides = strides + buf.strides[-1:]
            self.buffers[id(buf)] = replace(buf, shape=shape, strides=strides)
        return self.buffers[id(buf)]
