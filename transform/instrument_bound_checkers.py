"""``InstrumentBoundCheckers``: a runtime check before every access the compiler cannot prove safe.

A buffer's shape is a promise made by the caller (for a pointer, the length
of the array it was bound from); nothing in the generated code keeps the
indices inside it, so a wrong loop bound writes past the end of an array and
corrupts the heap. This pass walks the function with a ``tir.arith.Analyzer``
that knows what the enclosing statements establish (loop ranges, ``if``
conditions in their branches, asserts in their bodies, simple lets) and, for
every ``BufferLoad`` and ``BufferStore``, tries to prove ``0 <= index`` and
``index < extent`` in every dimension. What it cannot prove becomes an
``AssertStmt`` around the statement holding the access, so a bad call fails
with ``RuntimeError("main: assertion failed: index out of bounds: A[...] ...")``
before the access runs.

The index of a dimension is read as its lowest and highest lane:

- a scalar ``x``: ``x`` and ``x``;
- ``Ramp(b, s, L)`` with a constant stride: ``b + min(0, (L-1)*s)`` and ``b + max(0, (L-1)*s)``
  (``L`` may be ``vscale() * k``);
- ``Broadcast(v, L)``: ``v`` and ``v``;
- a ``Shuffle`` of such vectors (nested vectorized loops make them, a transpose
  ``B[i, j] = A[j, i]`` one in every dimension): the lowest and highest lane of all of them;
- any other vector (a gather index): ``tir.vector_reduce_min`` / ``tir.vector_reduce_max``;
  an integer one is checked as ``all(uint(index) < extent)`` instead (one vector compare).

A masked access (``predicate``: a strip-mined tail, an SVE loop, an if-converted
branch) is checked on its active lanes only (lane_bounds.py): one compare of the
last lane a tail mask can turn on, guarded so that an all-off mask checks nothing,
or, for any other mask, ``all(!mask || uint(index) < extent)``.

All unproven checks of one statement share one assert; a check whose index
reads memory itself (``a[idx[k]]``) sits in an inner assert, after the check
of that read. Not checked (documented limits):

- loads in the branches of ``tir.if_then_else`` (evaluated only when chosen);
- loads inside the body of a ``Let`` expression (their indices may use its variable);
- loads in the condition of a ``While`` (evaluated on every iteration, before the body);
- a scalable gather index without a mask (no scalable min/max reduction is emitted).

``codegen.build`` runs this pass last, on vector code; ``HoistVectorBoundChecks``
(hoist_bound_checks.py) runs first and checks each vectorized loop's plain accesses
once, before the loop, in the user's words, so its assert usually proves them here.

A function whose accesses are all proven comes back as the very same object,
so kernels with loops over their buffers' shapes compile exactly as before.
TVM has the same config key, off by default; tirlite defaults it to on
(``tir.instrument_bound_checkers``): a Python-level mistake should raise, not crash.
"""

from __future__ import annotations

import contextlib
from typing import Any

from tir import arith, op, structural_equal
from tir.dtype import DataType
from tir.expr import BufferLoad, Call, IntImm, Let, PrimExpr, StringImm, Var
from tir.expr_vector import Ramp
from tir.functor import ExprVisitor, StmtExprMutator
from tir.node import EXPR, EXPRS, child_fields, replace
from tir.range import Range
from tir.stmt import AssertStmt, BufferStore, For, IfThenElse, LetStmt, Stmt, While

from .lane_bounds import (
    MaskedBounds,
    is_reduced,
    lane_count,
    lane_span,
    non_negative,
    unsigned_below,
)
from .pass_base import PrimFuncPass, prim_func_pass

CONFIG_KEY = "tir.instrument_bound_checkers"


class _Check:
    """The unproven conditions of one access, and the access (named only if unproven)."""

    def __init__(self, conds: list, buffer: Any, indices: tuple, depth: int):
        self.conds, self.buffer, self.indices, self.depth = conds, buffer, indices, depth

    @property
    def text(self) -> str:
        # printed on demand: most accesses are proven, and printing costs more than proving
        return describe_access(self.buffer, self.indices)


class BoundCheckInstrumenter(StmtExprMutator):
    """Wrap each statement whose accesses are not provably in bounds in an ``AssertStmt``."""

    def __init__(self, analyzer: arith.Analyzer | None = None):
        self.analyzer = analyzer if analyzer is not None else arith.Analyzer()
        self._dims: dict = {}  # (index, extent) structure ids -> its conditions, see _dim
        self._dims_epoch = -1

    def visit_expr(self, expr: PrimExpr) -> PrimExpr:
        return expr  # expressions are read by _AccessCollector, never rewritten

    def generic_visit(self, node: Any) -> Any:
        if not isinstance(node, Stmt):
            return super().generic_visit(node)
        return self._guard(node, super().generic_visit(node))

    # ------------------------------------------------------------ scopes

    @contextlib.contextmanager
    def _scope(self) -> Any:
        """Forget, after the block, the facts learned in it (a var reused elsewhere is unbound)."""
        snap = self.analyzer.facts.snapshot()
        try:
            yield
        finally:
            self.analyzer.facts.restore(snap)

    def visit_for(self, loop: For) -> Stmt:
        with self.analyzer.loop_scope(loop.loop_var, loop.min, loop.extent):
            body = self.visit_stmt(loop.body)
        return self._guard(loop, loop if body is loop.body else _with(loop, body=body))

    def visit_if_then_else(self, stmt: IfThenElse) -> Stmt:
        fact = op.strip_likely(stmt.condition)
        with self.analyzer.constraint_scope(fact):
            then_case = self.visit_stmt(stmt.then_case)
        else_case = stmt.else_case
        if else_case is not None:
            with self.analyzer.constraint_scope(op.logical_not(fact)):
                else_case = self.visit_stmt(else_case)
        new = stmt
        if then_case is not stmt.then_case or else_case is not stmt.else_case:
            new = _with(stmt, then_case=then_case, else_case=else_case)
        return self._guard(stmt, new)

    def visit_assert_stmt(self, stmt: AssertStmt) -> Stmt:
        with self.analyzer.constraint_scope(stmt.condition):  # the body runs only if it held
            body = self.visit_stmt(stmt.body)
        return self._guard(stmt, stmt if body is stmt.body else _with(stmt, body=body))

    def visit_while(self, stmt: While) -> Stmt:
        # The condition is evaluated before every iteration: an assert outside the
        # loop would check it once only, so its loads are left unchecked.
        body = self.visit_stmt(stmt.body)
        return stmt if body is stmt.body else _with(stmt, body=body)

    def visit_let_stmt(self, stmt: LetStmt) -> Stmt:
        with self._scope():
            self._bind_let(stmt.var, stmt.value)
            body = self.visit_stmt(stmt.body)
        return self._guard(stmt, stmt if body is stmt.body else _with(stmt, body=body))

    def _bind_let(self, var: Var, value: PrimExpr) -> None:
        """Tell the analyzer ``var``'s value if plain arithmetic, else the value's bounds."""
        t = DataType(var.dtype)
        if not t.is_integer or t.is_vector or value.dtype != var.dtype:
            return
        if _is_plain(value):
            self.analyzer.bind(var, value, allow_override=True)
            return
        bound = self.analyzer.const_int_bound(value)
        extent = bound.max_value - bound.min_value + 1
        if bound.min_value < t.min_value() or extent > t.max_value():
            return
        rng = Range.from_min_extent(op.const(bound.min_value, var.dtype),
                                    op.const(extent, var.dtype))
        self.analyzer.bind(var, rng, allow_override=True)

    # ------------------------------------------------------------ checks

    def _guard(self, old: Stmt, new: Stmt) -> Stmt:
        """``new`` inside asserts for the unproven accesses of ``old``'s own expressions."""
        checks = [c for c in self._checks(old) if c.conds]
        for depth in sorted({c.depth for c in checks}, reverse=True):
            level = [c for c in checks if c.depth == depth]
            conds = _unique([cond for c in level for cond in c.conds])
            texts = list(dict.fromkeys(c.text for c in level))
            message = "index out of bounds: " + ("; ".join(texts) if len(texts) == 1
                                                 else "one of " + "; ".join(texts))
            cond = conds[0]
            for more in conds[1:]:
                cond = op.logical_and(cond, more)
            new = AssertStmt(cond, StringImm(message), new)
        return new

    def _checks(self, stmt: Stmt) -> list:
        collector = _AccessCollector()
        for name, kind, binds in child_fields(type(stmt)):
            value = getattr(stmt, name)
            if binds or value is None or isinstance(stmt, While):
                continue
            if kind == EXPR:
                collector.visit_expr(value)
            elif kind == EXPRS:
                for v in value:
                    collector.visit_expr(v)
        accesses = collector.accesses
        if isinstance(stmt, BufferStore):
            accesses.append(_access(stmt))
        return [self._check(buf, indices, predicate, depth)
                for buf, indices, predicate, depth in accesses]

    def _check(self, buffer: Any, indices: tuple, predicate: PrimExpr | None,
               depth: int) -> _Check:
        if predicate is None:
            conds = self._unmasked(buffer.shape, indices)
        else:  # only the active lanes touch memory
            conds = MaskedBounds(self.analyzer).conditions(
                buffer.shape, indices, predicate,
                lambda idx, shape=buffer.shape: self._unmasked(shape, idx))
        return _Check(conds, buffer, indices, depth)

    def _unmasked(self, shape: tuple, indices: tuple) -> list:
        """The unproven conditions that every lane of ``indices`` is inside ``shape``."""
        conds = []
        for index, extent in zip(indices, shape):
            conds += self._dim(index, extent)
        return conds

    def _dim(self, index: PrimExpr, extent: PrimExpr) -> tuple:
        """``_dim_conditions``, once per structure of ``(index, extent)`` under the same
        facts: an unrolled body repeats its accesses (``C[c, 0:32]`` in every statement)."""
        epoch = self.analyzer.facts.epoch
        if epoch != self._dims_epoch:
            self._dims.clear()
            self._dims_epoch = epoch
        ids = self.analyzer.structure_ids
        key = (ids.of(index), ids.of(extent))
        conds = self._dims.get(key)
        if conds is None:
            conds = self._dims[key] = self._dim_conditions(index, extent)
        return conds

    def _dim_conditions(self, index: PrimExpr, extent: PrimExpr) -> tuple:
        """The unproven conditions that every lane of ``index`` is in ``[0, extent)``."""
        span = lane_span(index)
        if span is None:
            return ()
        lo, hi = span
        tests = ((lo, non_negative), (hi, lambda x: op.less(x, extent)))
        unproven = [(b, t) for b, t in tests if not self.analyzer.can_prove(t(b))]
        itype = DataType(index.dtype)
        if unproven and is_reduced(lo) and (itype.is_int or itype.is_uint):
            return (unsigned_below(index, extent),)
        # a lane bound built here (b + -6) reads better simplified (b - 6)
        return tuple(test(bound if bound is index else self.analyzer.simplify(bound))
                     for bound, test in unproven)


class _AccessCollector(ExprVisitor):
    """The unconditionally evaluated loads of an expression (masked ones with their mask)."""

    def __init__(self):
        self.accesses: list = []

    def visit_buffer_load(self, load: BufferLoad) -> None:
        for index in load.indices:
            self.visit_expr(index)
        if load.predicate is not None:
            self.visit_expr(load.predicate)
        self.accesses.append(_access(load))

    def visit_call(self, call: Call) -> None:
        if call.op == "tir.if_then_else":  # only the chosen branch is evaluated
            self.visit_expr(call.args[0])
            return
        self.generic_visit(call)

    def visit_let(self, let: Let) -> None:
        self.visit_expr(let.value)  # the body's indices may use let.var, unbound outside

    @staticmethod
    def depth_of(indices: tuple) -> int:
        """How many loads deep ``indices`` read memory (0: they read none)."""
        finder = _LoadDepth()
        for index in indices:
            finder.visit_expr(index)
        return finder.depth


class _LoadDepth(ExprVisitor):
    """The deepest nesting of ``BufferLoad`` in an expression."""

    def __init__(self):
        self.depth, self._current = 0, 0

    def visit_buffer_load(self, load: BufferLoad) -> None:
        self._current += 1
        self.depth = max(self.depth, self._current)
        self.generic_visit(load)
        self._current -= 1


def _access(node: Any) -> tuple:
    """``(buffer, indices, predicate, depth)`` of a load or store: depth counts the loads
    its indices and its mask read (their own checks come first)."""
    depth = _AccessCollector.depth_of(node.indices)
    if node.predicate is not None:
        depth = max(depth, _AccessCollector.depth_of((node.predicate,)))
    return node.buffer, node.indices, node.predicate, depth


def describe_access(buffer: Any, indices: tuple) -> str:
    """``A[i + 1] with extent 64``: how an assert message names an access."""
    shown = ", ".join(_show_index(i) for i in indices)
    if len(buffer.shape) == 1:
        return f"{buffer.name}[{shown}] with extent {buffer.shape[0]}"
    return f"{buffer.name}[{shown}] with shape ({', '.join(str(s) for s in buffer.shape)})"


def _show_index(index: PrimExpr) -> str:
    if isinstance(index, Ramp) and isinstance(index.stride, IntImm):
        if DataType(index.dtype).is_scalable:  # lanes is vscale() * k
            reach = op.mul(lane_count(index), index.stride)
            end = op.add(index.base, reach)
        else:
            reach = index.lanes * index.stride.value
            end = op.add(index.base, reach) if reach > 0 else op.sub(index.base, -reach)
        step = "" if index.stride.value == 1 else f":{index.stride.value}"
        return f"{index.base}:{end}{step}"
    return str(index)


def _is_plain(value: PrimExpr) -> bool:
    """Whether ``value`` is arithmetic on variables and constants only (no loads, no calls)."""
    finder = _Impure()
    finder.visit_expr(value)
    return not finder.found


class _Impure(ExprVisitor):
    """Finds the loads and calls of an expression."""

    def __init__(self):
        self.found: list = []

    def visit_buffer_load(self, load: BufferLoad) -> None:
        self.found.append(load)

    def visit_call(self, call: Call) -> None:
        self.found.append(call)


def _unique(conds: list) -> list:
    out: list = []
    for cond in conds:
        if not any(structural_equal(cond, seen) for seen in out):
            out.append(cond)
    return out


def _with(stmt: Stmt, **changes: Any) -> Stmt:
    return replace(stmt, **changes)


def instrument_bound_checkers(stmt: Stmt, analyzer: arith.Analyzer | None = None) -> Stmt:
    """``stmt`` with runtime checks of the accesses not proven in bounds (same object if none)."""
    return BoundCheckInstrumenter(analyzer)(stmt)


def InstrumentBoundCheckers() -> PrimFuncPass:
    """The ``tir.InstrumentBoundCheckers`` pass (module docstring); off if the config says so."""

    def transform_function(func, mod, ctx):
        if not ctx.config.get(CONFIG_KEY):
            return func
        return func.with_body(instrument_bound_checkers(func.body))

    return prim_func_pass(transform_function, opt_level=0, name="tir.InstrumentBoundCheckers")
