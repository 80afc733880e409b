"""Well-formedness checks for PrimFuncs, as TVM's ``tir.analysis.verify_well_formed``.

A function is well formed when:

- every var it uses is bound: by a param, by a ``buffer_map`` buffer (its
  data var and the bare vars of its shape, strides and offset), by a ``For``
  loop, a ``Let``/``LetStmt``, or an ``Allocate`` around the use;
- no Var object is bound twice (by two binders, or a binder and a param);
  one ``Let`` expression node shared in the expression DAG counts once;
- every buffer it loads from or stores into is known: a ``buffer_map``
  buffer, or one whose data var is bound where it is used (allocated, or a
  handle param); TVM calls the others undefined buffers;
- every node's dtypes agree (operands of binary nodes, loads and stores
  with their buffer, loop bounds with the loop var, let values with their
  var), which matters for nodes built bypassing the constructors' checks;
- a loop with constant bounds fits its var's dtype, both ends (as ``For``
  checks when it is built).

``codegen.build`` runs this check first: IR that breaks these rules could be
compiled into wrong code (a pass may substitute a var bound twice everywhere).

``AttrStmt.node`` binds nothing and is not checked: it is plain data here.

>>> verify_well_formed(func)          # doctest: +SKIP
True
"""

from __future__ import annotations

from typing import Any

from . import dtype as dt
from .buffer import Buffer
from .expr import BinaryOpNode, CmpOpNode, PrimExpr, Var, access_dtype
from .function import IRModule, PrimFunc
from .functor import StmtExprVisitor
from .node import TVMError
from .stmt import loop_range_error

_MAX_SHOWN = 10


class WellFormedError(TVMError, ValueError):
    """IR that ``verify_well_formed`` rejects; the message lists each error with its function.

    A ``tir.TVMError`` (what TVM raises there) and a ``ValueError``.
    """


class _WellFormed(StmtExprVisitor):
    """Collects the well-formedness errors of one function."""

    def __init__(self, func_name: str):
        self.func_name = func_name
        self.errors: list[str] = []
        self.in_scope: dict[int, Var] = {}  # id -> var, for vars usable here
        self.binders: dict[int, str] = {}  # id -> where the var was bound first
        self.map_buffers: set[int] = set()
        self.seen_lets: dict[int, Any] = {}  # id -> Let expression node already walked
        self.where: list[str] = []
        self.bound_somewhere: dict[int, str] = {}  # id -> the loop/let binding it, anywhere

    # ------------------------------------------------------------ bookkeeping

    def error(self, message: str, hint: str = "") -> None:
        """Record one error, with the path of enclosing statements (and how to fix it)."""
        path = " > ".join(self.where) or "function body"
        self.errors.append(f"{self.func_name}: {message} (in {path}){hint and '; ' + hint}")

    def bind(self, var: Var, binder: str) -> None:
        """``var`` becomes usable; binding the same Var object twice is an error."""
        first = self.binders.get(id(var))
        if first is not None:
            self.error(f"var {var.name} is bound twice: by {first} and again by {binder}",
                       hint="give each binding its own tir.Var")
        self.binders[id(var)] = binder
        self.in_scope[id(var)] = var

    def unbind(self, var: Var) -> None:
        """``var`` leaves scope (its binder's body ended)."""
        self.in_scope.pop(id(var), None)

    def scoped(self, label: str, var: Var, binder: str, body: Any) -> None:
        """Visit ``body`` with ``var`` bound and ``label`` on the path."""
        self.bind(var, binder)
        self.where.append(label)
        self.visit(body)
        self.where.pop()
        self.unbind(var)

    # ------------------------------------------------------------ function

    def check_func(self, func: PrimFunc) -> None:
        """Check the signature, then the body."""
        self.where.append("function signature")
        for p in func.params:
            self.bind(p, f"param {p.name}")
        buffers = list(func.buffer_map.values())
        for buf in buffers:
            self.map_buffers.add(id(buf))
            for v in _signature_vars(buf):
                if id(v) not in self.in_scope:  # shared shape vars are fine
                    self.binders[id(v)] = f"buffer {buf.name}"
                    self.in_scope[id(v)] = v
        for buf in buffers:
            self.check_buffer_exprs(buf)
        self.where.pop()
        self.bound_somewhere = _binders_in(func.body)
        self(func.body)

    def check_buffer_exprs(self, buf: Buffer) -> None:
        """The shape, strides and offset of ``buf`` use only bound vars."""
        for e in (*buf.shape, *buf.strides, buf.elem_offset):
            if isinstance(e, PrimExpr):
                self.visit_expr(e)

    # ------------------------------------------------------------ uses

    def visit_var(self, v: Var) -> None:
        if id(v) in self.in_scope:
            return
        binder = self.bound_somewhere.get(id(v))
        if binder is not None:
            self.error(f"use of var {v.name} outside the {binder} that binds it",
                       hint=f"use {v.name} inside that scope, or bind a var of its own")
            return
        self.error(f"use of undefined var {v.name} ({v.dtype})",
                   hint=f"pass {v.name} in the PrimFunc's params (a scalar argument), or use "
                   "a var of the shape of a buffer in the params")

    def check_buffer(self, buf: Buffer, access: str) -> None:
        """A load or store must name a known buffer."""
        if id(buf) in self.map_buffers:
            return
        if id(buf.data) not in self.in_scope:
            self.error(
                f"{access} undefined buffer {buf.name}: it is not in the buffer_map and "
                f"its data var {buf.data.name} is not allocated in scope",
                hint=f"pass {buf.name} in the PrimFunc's params (tir.PrimFunc([..., "
                f"{buf.name}], body)), or allocate it (ib.allocate)")
            return
        self.check_buffer_exprs(buf)

    def visit_buffer_load(self, e: Any) -> None:
        self.check_buffer(e.buffer, "load from")
        expected = access_dtype(e.buffer, e.indices)
        if e.dtype != expected:
            self.error(f"load from {e.buffer.name} has dtype {e.dtype}, expected {expected}")
        self.generic_visit(e)

    def visit_buffer_store(self, s: Any) -> None:
        self.where.append(f"store {s.buffer.name}")
        self.check_buffer(s.buffer, "store into")
        expected = access_dtype(s.buffer, s.indices)
        if s.value.dtype != expected:
            self.error(
                f"store into {s.buffer.name}: value dtype {s.value.dtype}, expected {expected}"
            )
        self.generic_visit(s)
        self.where.pop()

    # ------------------------------------------------------------ dtypes

    def visit_binary_op_node(self, e: BinaryOpNode) -> None:
        name = type(e).__name__
        if e.a.dtype != e.b.dtype:
            self.error(f"{name} operands differ in dtype: {e.a.dtype} and {e.b.dtype}")
        elif e.dtype != _result_dtype(e):
            self.error(f"{name} of {e.a.dtype} operands has dtype {e.dtype}")
        self.generic_visit(e)

    def visit_select(self, e: Any) -> None:
        if not (e.true_value.dtype == e.false_value.dtype == e.dtype):
            self.error(
                f"Select values differ in dtype: {e.true_value.dtype} and "
                f"{e.false_value.dtype} (node is {e.dtype})"
            )
        self.generic_visit(e)

    # ------------------------------------------------------------ binders

    def visit_for(self, s: Any) -> None:
        v = s.loop_var
        for field in ("min", "extent"):
            value = getattr(s, field)
            if value.dtype != v.dtype:
                self.error(f"for {v.name}: {field} is {value.dtype}, loop var is {v.dtype}")
            self.visit_expr(value)
        bounds_error = loop_range_error(v, s.min, s.extent)
        if bounds_error is not None:
            self.error(f"for {v.name}: {bounds_error}")
        self.scoped(f"for {v.name}", v, f"for {v.name}", s.body)

    def visit_let_stmt(self, s: Any) -> None:
        self._let(s, "let")

    def visit_let(self, e: Any) -> None:
        # Expressions are DAGs: one Let node reached twice binds its var once.
        if id(e) in self.seen_lets:
            self.scoped_again(e)
            return
        self.seen_lets[id(e)] = e
        self._let(e, "Let expression")

    def scoped_again(self, e: Any) -> None:
        """Visit a shared Let node again (uses may differ here), without rebinding its var."""
        self.visit_expr(e.value)
        self.in_scope[id(e.var)] = e.var
        self.visit_expr(e.body)
        self.unbind(e.var)

    def _let(self, node: Any, kind: str) -> None:
        v = node.var
        if node.value.dtype != v.dtype:
            self.error(f"{kind} {v.name}: value is {node.value.dtype}, var is {v.dtype}")
        self.visit_expr(node.value)
        self.scoped(f"{kind} {v.name}", v, f"{kind} {v.name}", node.body)

    def visit_allocate(self, s: Any) -> None:
        v = s.buffer_var
        for e in s.extents:
            self.visit_expr(e)
        self.visit_expr(s.condition)
        self.scoped(f"allocate {v.name}", v, f"allocate {v.name}", s.body)

    def visit_block_realize(self, s: Any) -> None:
        for value in s.iter_values:
            self.visit_expr(value)
        self.visit_expr(s.predicate)
        self.visit_stmt(s.block)

    def visit_block(self, s: Any) -> None:
        label = f"block {s.name_hint}"
        bound = [iv.var for iv in s.iter_vars] + [buf.data for buf in s.alloc_buffers]
        for iv in s.iter_vars:
            self.visit_expr(iv.min)
            self.visit_expr(iv.extent)
        for v in bound:
            self.bind(v, label)
        for buf in s.alloc_buffers:
            self.check_buffer_exprs(buf)
        self.where.append(label)
        if s.init is not None:
            self.visit_stmt(s.init)
        self.visit_stmt(s.body)
        self.where.pop()
        for v in bound:
            self.unbind(v)

    def visit_if_then_else(self, s: Any) -> None:
        self.visit_expr(s.condition)
        self.where.append("if")
        self.visit_stmt(s.then_case)
        self.where[-1] = "else"
        if s.else_case is not None:
            self.visit_stmt(s.else_case)
        self.where.pop()

    def visit_while(self, s: Any) -> None:
        self.visit_expr(s.condition)
        self.where.append("while")
        self.visit_stmt(s.body)
        self.where.pop()


def _result_dtype(e: BinaryOpNode) -> str:
    if not isinstance(e, CmpOpNode):
        return e.a.dtype
    t = dt.DataType(e.a.dtype)
    if t.is_scalable:
        return dt.with_scalable_lanes("bool", t.lanes)
    return dt.with_lanes("bool", t.lanes)


def _signature_vars(buf: Buffer) -> list[Var]:
    """The vars a buffer_map entry defines: data and bare shape/stride/offset vars."""
    out = [buf.data]
    for e in (*buf.shape, *buf.strides, buf.elem_offset):
        if isinstance(e, Var):
            out.append(e)
    return out


def _functions(func_or_mod: Any) -> list[tuple[str, PrimFunc]]:
    if isinstance(func_or_mod, IRModule):
        return list(func_or_mod.functions.items())
    if isinstance(func_or_mod, PrimFunc):
        return [(str(func_or_mod.attrs.get("global_symbol", "main")), func_or_mod)]
    raise TypeError(
        f"verify_well_formed: expected a PrimFunc or an IRModule, "
        f"got {type(func_or_mod).__name__}"
    )


def well_formed_errors(func_or_mod: Any) -> list[str]:
    """Every well-formedness error of a PrimFunc or IRModule, as messages."""
    errors: list[str] = []
    for name, func in _functions(func_or_mod):
        checker = _WellFormed(name)
        checker.check_func(func)
        errors.extend(checker.errors)
    return errors


def _binders_in(body: Any) -> dict[int, str]:
    """id(var) -> the loop or let binding it, for every binder in ``body``."""
    from .block import Block
    from .expr import Let
    from .functor import post_order_visit
    from .stmt import For, LetStmt

    found: dict[int, str] = {}

    def note(n: Any) -> None:
        if isinstance(n, For):
            found[id(n.loop_var)] = f"loop for {n.loop_var.name}"
        elif isinstance(n, (LetStmt, Let)):
            found[id(n.var)] = f"let {n.var.name}"
        elif isinstance(n, Block):
            for iv in n.iter_vars:
                found[id(iv.var)] = f"block {n.name_hint}"
            for buf in n.alloc_buffers:
                found[id(buf.data)] = f"block {n.name_hint}"

    post_order_visit(body, note)
    return found


def verify_well_formed(func_or_mod: Any, assert_mode: bool = True) -> bool:
    """Check a PrimFunc or IRModule (see the module doc for the rules).

    Returns True when well formed. Otherwise raises ``WellFormedError`` (a
    ``ValueError``) listing the errors, or returns False when ``assert_mode`` is False.
    """
    errors = well_formed_errors(func_or_mod)
    if not errors:
        return True
    if not assert_mode:
        return False
    shown = errors[:_MAX_SHOWN]
    more = len(errors) - len(shown)
    tail = f"\n  ... and {more} more" if more else ""
    raise WellFormedError("IR is not well formed:\n  " + "\n  ".join(shown) + tail)
