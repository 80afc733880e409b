"""Is this loop a reduction? Recognition for ``VectorizeReductions``: which op, or why not.

A statement ``acc[c] = acc[c] OP f(i)`` in a vectorized loop over ``i`` is a
*reduction* when all of this holds:

- it sits at the top level of the body or inside ``if``s only (a *conditional*
  reduction: the rewrite keeps the ``if`` around the accumulator update, which
  ``IfConvertVectorLoops`` then masks), not in a nested loop or a ``let``;
- ``OP`` is associative and commutative: ``+``, ``*``, ``min``, ``max``, the
  bitwise ``&``, ``|``, ``^`` on integers and bools, logical ``and``/``or`` on
  bools; ``acc[c]`` may be either operand;
- the element is ``int8..int64``, ``uint8..uint64``, ``float32``, ``float64``
  or ``bool`` (``+``/``*`` not on bool);
- ``c`` does not change during the loop: no loop var, no var bound inside the
  loop, no buffer load;
- nothing else in the loop body touches the buffer of ``acc`` (``f`` included),
  so only this statement carries a value from one iteration to the next.

``find_reductions`` returns the reductions of a loop body and, for every
statement that *looks* like an accumulation (it reads the element it writes
at an index that does not move with ``i``, or moves through a load, as a
histogram does) but is not one, the reason.

The searches (``find_search``: the best value and its index, the first and the last
match) are recognized in ``searches.py``, with the helpers of this module that ask
about a loop body (``top_level``, ``bound_vars``, ``occurrences``, ...).
The rewrite lives in ``transform/vector/vectorize_reductions.py``.
"""

from __future__ import annotations

import attrs

from tir import dtype as dt
from tir import op
from tir.analysis.var_use import uses_any_var
from tir.arith import Analyzer
from tir.expr import (
    Add,
    And,
    BinaryOpNode,
    BufferLoad,
    Call,
    IntImm,
    Max,
    Min,
    Mul,
    Or,
    PrimExpr,
    Sub,
    Var,
)
from tir.functor import StmtExprVisitor, post_order_visit
from tir.stmt import Allocate, BufferStore, For, ForKind, IfThenElse, LetStmt, SeqStmt, Stmt
from tir.structural import structural_equal

from ..reduction_ir import tree
from .aliasing import DISTINCT, other_shared_buffer, sharing_reason

#: Node class (or intrinsic name) -> the reduction kind of ``tir.vector_reduce_<kind>``.
_KINDS: dict = {
    Add: "add", Mul: "mul", Min: "min", Max: "max", And: "and", Or: "or",
    "tir.bitwise_and": "and", "tir.bitwise_or": "or", "tir.bitwise_xor": "xor",
}
_NOT_ASSOCIATIVE = {Sub: "subtraction"}
#: Element types the passes reduce (and scan, bool aside; float16 math is not native).
_INTS = {f"{s}int{b}" for s in ("", "u") for b in (8, 16, 32, 64)}
REDUCED_TYPES = _INTS | {"float32", "float64", "bool"}


class CombiningStore:
    """What a reduction and a scan share: ``store`` writes ``... OP value`` with the node
    ``template`` of kind ``kind`` (``add``, ``min``, ...)."""

    store: BufferStore
    kind: str
    template: PrimExpr

    @property
    def dtype(self) -> str:
        """The element type stored."""
        return self.store.value.dtype

    @property
    def is_float(self) -> bool:
        """Whether regrouping the op can change its rounding (float add/mul)."""
        return dt.DataType(self.dtype).is_float and self.kind in ("add", "mul")

    def combine(self, a: PrimExpr, b: PrimExpr) -> PrimExpr:
        """``a OP b`` with the statement's own node (scalars or vectors alike)."""
        t = self.template
        if isinstance(t, Call):
            return Call(a.dtype, t.op, [a, b])
        return type(t)(a, b)

    def identity(self) -> PrimExpr:
        """The scalar ``e`` with ``x OP e == x`` for every x (bit for bit)."""
        return identity(self.kind, self.dtype)


@attrs.frozen
class Reduction(CombiningStore):
    """``store`` is ``acc[c] = acc[c] OP value``; ``kind`` names OP (``add``, ``min``, ...)."""

    store: BufferStore
    kind: str
    value: PrimExpr
    #: The OP node of the statement: ``combine`` rebuilds it with other operands.
    template: PrimExpr
    #: The statement sits inside an ``if`` (it runs for some iterations only).
    conditional: bool = False
    #: ``s + a + b`` taken as ``s + (a + b)``: the terms were regrouped (a float sum's
    #: rounding then differs from the serial loop's even in lane order).
    regrouped: bool = False


def identity(kind: str, dtype: str) -> PrimExpr:
    """The identity element of ``kind`` on ``dtype``: -0.0 for a float sum (+0.0 would turn
    an all -0.0 sum positive), +inf for a float min, all ones for ``and``, ..."""
    t = dt.DataType(dtype)
    if kind == "add" or kind in ("or", "xor"):
        return op.const(-0.0 if t.is_float else 0, dtype)
    if kind == "mul":
        return op.const(1, dtype)
    if kind == "and":
        return op.const(True if t.is_bool else -1 if t.is_int else t.max_value(), dtype)
    if t.is_float:
        return op.const(float("inf") if kind == "min" else float("-inf"), dtype)
    return op.max_value(dtype) if kind == "min" else op.min_value(dtype)


@attrs.frozen
class Refusal:
    """A statement that looks like an accumulation but is not reduced, and why."""

    store: BufferStore
    reason: str


def find_reductions(loop: For, shared: frozenset = DISTINCT, nested: bool = False
                    ) -> tuple[list[Reduction], list[Refusal]]:
    """The reductions of ``loop``'s body and the refused look-alikes (see the module doc).

    ``shared``: the data vars that may be one memory (``aliasing.shared_memory``);
    an accumulator that may share memory with another buffer of the loop is refused.
    ``nested``: accept updates anywhere in the body, in nested loops too (a parallel
    loop's reductions: a thread runs a whole iteration in order, so only the accumulator
    is shared between iterations).
    """
    inner = bound_vars(loop)
    top = _stores(loop.body) if nested else _under_ifs(loop.body)
    found: list[Reduction] = []
    refused: list[Refusal] = []
    for store in _stores(loop.body):
        if not _looks_like_accumulation(store, inner):
            continue
        reason = (_why_not(store, inner, loop, top, nested)
                  or sharing_problem(loop, [store], shared))
        if reason is None:
            found.append(_reduction(store, conditional=not any(s is store for s in
                                                               top_level(loop.body))))
        else:
            refused.append(Refusal(store, reason))
    return found, refused


def describe(store: BufferStore) -> str:
    """``acc[c] = value`` as one line of TIR."""
    index = ", ".join(str(i) for i in store.indices)
    return f"{store.buffer.name}[{index}] = {store.value}"


# ---------------------------------------------------------------- recognition


def _looks_like_accumulation(store: BufferStore, inner: set) -> bool:
    """The value reads the element written, at an index fixed during the loop or indirect."""
    if _own_load(store, store.value) is None:
        return False
    return not uses_any_var(store.indices, inner) or has_load(store.indices)


def _why_not(store: BufferStore, inner: set, loop: For, top: list,
             nested: bool = False) -> str | None:
    name = store.buffer.name
    if has_load(store.indices) or uses_any_var(store.indices, inner):
        return f"the index of {name} changes with {loop.loop_var.name} (a histogram)"
    if store.buffer.data in inner:
        return f"{name} is allocated inside the loop"
    if store.predicate is not None:
        return f"the store to {name} is predicated"
    if not any(s is store for s in top):
        return f"{describe(store)} is inside a nested loop or a let"
    if not nested and _has_vectorized_loop(loop.body):
        return "the loop has a vectorized loop inside"
    if store.value.dtype not in REDUCED_TYPES:
        return f"{store.value.dtype} reductions are not vectorized"
    problem = _operation_problem(store)
    if problem:
        return problem
    other = _other_access(loop.body, store)
    if other is not None:
        return f"{other}, so its value is needed in every iteration"
    return None


def _operation_problem(store: BufferStore) -> str | None:
    value = store.value
    key = value.op if isinstance(value, Call) else type(value)
    kind = _KINDS.get(key)
    if kind is None:
        what = _NOT_ASSOCIATIVE.get(key, f"{_op_name(value)} is not an associative operation")
        if key in _NOT_ASSOCIATIVE:
            what = f"{what} is not associative"
        return f"{describe(store)}: {what} (reduced ops: + * min max & | ^ and or)"
    own = [x for x in _chain(value) if is_own_load(store, x)]
    if len(own) != 1:
        return f"{describe(store)}: {store.buffer.name} is not an operand of the outer op"
    if kind in ("add", "mul") and store.value.dtype == "bool":
        return f"{describe(store)}: + and * on bool are not reduced"
    return None


def _reduction(store: BufferStore, conditional: bool) -> Reduction:
    value = store.value
    terms = _chain(value)
    rest = [x for x in terms if not is_own_load(store, x)]
    reduction = Reduction(store, _KINDS[_key(value)], rest[0], value, conditional,
                          regrouped=len(terms) > 2)
    # s + a + b + c + d (a hand-unrolled sum) -> s + ((a + b) + (c + d)): a balanced tree,
    # not a chain. Regrouping is already the reassociation the flag records, and a chain of
    # dependent 512-bit adds between the loads held back a memory stream on the Zen 4 host
    # (5 terms: 3.9 ms as a chain, 2.7 as a tree over 2^24 float32; 256-bit: 2.4 either way)
    return attrs.evolve(reduction, value=tree(reduction.combine, rest))


def op_kind(value: PrimExpr) -> str | None:
    """The reduction kind of ``value``'s outer op (``"add"``, ``"min"``, ...), or None when
    it is not one of the associative ops reduced here."""
    return _KINDS.get(_key(value))


def operands(value: PrimExpr) -> list:
    """The operands of a binary node or a call (none for anything else)."""
    return _operands(value)


def _key(value: PrimExpr):
    """What identifies the op of ``value``: the intrinsic's name for a call, else the class."""
    return value.op if isinstance(value, Call) else type(value)


def _chain(value: PrimExpr) -> list:
    """The operands of ``value`` and of the nodes of its own op below it, left to right:
    ``((s + a) + b) + c`` gives ``[s, a, b, c]``."""
    terms: list = []
    for x in _operands(value):
        same = _operands(x) and _key(x) == _key(value) and x.dtype == value.dtype
        terms += _chain(x) if same else [x]
    return terms


def _other_access(body: Stmt, store: BufferStore) -> str | None:
    """The first statement (or load) other than the reduction's own that may touch its
    element (other elements of the buffer, at indices provably apart, are left alone)."""
    data, where = store.buffer.data, store.indices
    own = _own_load(store, store.value)
    for other in _stores(body):
        if other is store:
            continue
        if other.buffer.data is data and not apart(other.indices, where):
            return f"{describe(other)} writes {store.buffer.name}"
        if any(not apart(x.indices, where) for x in loads_of(other, data)):
            return f"{describe(other)} reads {store.buffer.name}"
    if occurrences(store, data, where) != (1, 1):  # by occurrence: nodes may be shared
        return f"{describe(store)} reads {store.buffer.name} again in its value"
    if occurrences(body, data, where) != (1, 1):
        loads = [x for x in loads_of(body, data) if x is not own]
        return f"{loads[0] if loads else own} reads {store.buffer.name}"
    return None


def apart(a: tuple, b: tuple) -> bool:
    """Whether indices ``a`` and ``b`` are certainly different elements: in some dimension
    their difference is a nonzero constant (``M[0]`` and ``M[1]``, ``S[c]`` and ``S[c + 1]``)."""
    analyzer = Analyzer()
    for x, y in zip(a, b):
        if x.dtype != y.dtype:
            continue
        diff = analyzer.simplify(op.sub(x, y))
        if isinstance(diff, IntImm) and diff.value != 0:
            return True
    return False


class _Occurrences(StmtExprVisitor):
    """Counts the loads and stores of one buffer, every occurrence of a shared node too
    (with ``where``: only those not provably apart from that element)."""

    def __init__(self, data: Var, where: tuple | None = None):
        self.data = data
        self.where = where
        self.loads = self.stores = 0

    def _counts(self, node) -> bool:
        return node.buffer.data is self.data and (
            self.where is None or not apart(node.indices, self.where))

    def visit_buffer_load(self, node: BufferLoad) -> None:
        self.loads += self._counts(node)
        self.generic_visit(node)

    def visit_buffer_store(self, node: BufferStore) -> None:
        self.stores += self._counts(node)
        self.generic_visit(node)


def occurrences(node, data: Var, where: tuple | None = None) -> tuple[int, int]:
    """(loads, stores) of the buffer ``data`` in ``node`` (of the element ``where`` and those
    that may be it, when given), shared subtrees counted each time they occur:
    ``post_order_visit`` sees a shared ``acc[0]`` once, but it is read twice."""
    counter = _Occurrences(data, where)
    counter(node)
    return counter.loads, counter.stores


def loads_of(node, data: Var) -> list[BufferLoad]:
    found: list[BufferLoad] = []
    post_order_visit(node, lambda n: found.append(n) if isinstance(n, BufferLoad)
                     and n.buffer.data is data else None)
    return found


def _own_load(store: BufferStore, value: PrimExpr) -> BufferLoad | None:
    """The load of the stored element in ``value`` (an operand of its outer op, if any)."""
    operands = _operands(value)
    for x in operands:
        if is_own_load(store, x):
            return x
    found: list[BufferLoad] = []
    post_order_visit(value, lambda n: found.append(n) if is_own_load(store, n) else None)
    return found[0] if found else None


def _operands(value: PrimExpr) -> list:
    """The operands of a binary node or a call; none for anything else (Not, Cast, ...)."""
    if isinstance(value, Call):
        return list(value.args)
    if isinstance(value, BinaryOpNode):
        return [value.a, value.b]
    return []


def is_own_load(store: BufferStore, e: PrimExpr) -> bool:
    return (isinstance(e, BufferLoad) and e.buffer.data is store.buffer.data
            and e.predicate is None and len(e.indices) == len(store.indices)
            and all(structural_equal(a, b) for a, b in zip(e.indices, store.indices)))


def _op_name(value: PrimExpr) -> str:
    return value.op.removeprefix("tir.") if isinstance(value, Call) else type(value).__name__


# ---------------------------------------------------------------- helpers


def _under_ifs(body: Stmt) -> list[Stmt]:
    """The statements of ``body`` at the top level or inside ifs only (no loop, no let)."""
    out: list[Stmt] = []
    for stmt in top_level(body):
        out.append(stmt)
        if isinstance(stmt, IfThenElse):
            out += _under_ifs(stmt.then_case)
            out += _under_ifs(stmt.else_case) if stmt.else_case is not None else []
    return out


def top_level(body: Stmt) -> list[Stmt]:
    return list(body.seq) if isinstance(body, SeqStmt) else [body]


def _stores(body: Stmt) -> list[BufferStore]:
    found: list[BufferStore] = []
    post_order_visit(body, lambda n: found.append(n) if isinstance(n, BufferStore) else None)
    return found


def bound_vars(loop: For) -> set:
    """The loop var and every var bound inside the loop body."""
    bound = {loop.loop_var}

    def visit(node) -> None:
        if isinstance(node, For):
            bound.add(node.loop_var)
        elif isinstance(node, LetStmt):
            bound.add(node.var)
        elif isinstance(node, Allocate):
            bound.add(node.buffer_var)

    post_order_visit(loop.body, visit)
    return bound


def has_load(exprs) -> bool:
    found: list = []
    for e in exprs:
        post_order_visit(e, lambda n: found.append(n) if isinstance(n, BufferLoad) else None)
    return bool(found)


def _has_vectorized_loop(body: Stmt) -> bool:
    found: list = []
    post_order_visit(body, lambda n: found.append(n) if isinstance(n, For)
                     and n.kind == ForKind.VECTORIZED else None)
    return bool(found)


def sharing_problem(loop: For, stores: list, shared: frozenset) -> str | None:
    """Why accumulating in ``stores`` is wrong when their memory may be another buffer's."""
    for store in stores:
        other = other_shared_buffer(loop.body, store.buffer.data, shared)
        if other is not None:
            return f"{sharing_reason(store.buffer, other)}, so its value may change"
    return None


def calls(e: PrimExpr, name: str) -> bool:
    found: list = []
    post_order_visit(e, lambda n: found.append(n) if isinstance(n, Call) and n.op == name
                     else None)
    return bool(found)


__all__ = ["REDUCED_TYPES", "CombiningStore", "Reduction", "Refusal", "apart",
           "bound_vars", "calls", "describe", "find_reductions", "has_load", "identity",
           "is_own_load", "loads_of", "occurrences", "op_kind", "operands",
           "sharing_problem", "top_level"]
