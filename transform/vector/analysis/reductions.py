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

``find_search`` recognizes the index of the best value (a loop with no
reduction), an ``if`` at the top level of the body of exactly this shape::

    if v(i) > m[c]:        # or m[c] < v(i); >= / <= keep the last index, < / <= search a min
        m[c] = v(i)        # the same expression as compared, either store first
        k[d] = i           # the loop var, or a cast of it to an int at least as wide

or without the index store (the best value alone, kept with ``>``'s rules:
a NaN never wins, and of equal values, zeros of either sign included, the
first (``>``) or last (``>=``) one stays),
with no ``else``; ``m`` and ``k`` not accessed anywhere else in the body; ``c``
and ``d`` fixed during the loop; ``v`` calling no extern function; ``m`` of a
reduced type other than bool. And the first match (a ``FirstMatch``)::

    if k[d] == C and cond(i):   # either operand order, either side of the and;
        k[d] = i                # or k[d] < C; or a widening cast of i

with ``C`` loop-invariant (a constant such as -1, or ``n``) and every index provably
failing the test (``i != C`` or ``i >= C``: the loop bounds show it), no ``else``,
``k`` not accessed elsewhere, ``cond`` calling no extern function; or the flag form,
``if f[e] == C and cond(i): k[d] = i; f[e] = D`` with ``D`` failing the test. And the
last match (a ``FirstMatch`` with ``last``): ``if cond(i): k[d] = i`` with ``k`` not read
anywhere in the body (the loop var only grows, so the largest matching lane is the last).
The rewrite lives in ``transform/vector/vectorize_reductions.py``.
"""

from __future__ import annotations

import attrs

from tir import dtype as dt
from tir import op
from tir.analysis.var_use import uses_any_var
from tir.arith import Analyzer
from tir.expr import (
    EQ,
    GE,
    GT,
    LE,
    LT,
    Add,
    And,
    BinaryOpNode,
    BufferLoad,
    Call,
    Cast,
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
    inner = _bound_vars(loop)
    top = _stores(loop.body) if nested else _under_ifs(loop.body)
    found: list[Reduction] = []
    refused: list[Refusal] = []
    for store in _stores(loop.body):
        if not _looks_like_accumulation(store, inner):
            continue
        reason = _why_not(store, inner, loop, top, nested) or _sharing(loop, [store], shared)
        if reason is None:
            found.append(_reduction(store, conditional=not any(s is store for s in
                                                               _top_level(loop.body))))
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
    return not uses_any_var(store.indices, inner) or _has_load(store.indices)


def _why_not(store: BufferStore, inner: set, loop: For, top: list,
             nested: bool = False) -> str | None:
    name = store.buffer.name
    if _has_load(store.indices) or uses_any_var(store.indices, inner):
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
    own = [x for x in _chain(value) if _is_own_load(store, x)]
    if len(own) != 1:
        return f"{describe(store)}: {store.buffer.name} is not an operand of the outer op"
    if kind in ("add", "mul") and store.value.dtype == "bool":
        return f"{describe(store)}: + and * on bool are not reduced"
    return None


def _reduction(store: BufferStore, conditional: bool) -> Reduction:
    value = store.value
    terms = _chain(value)
    rest = [x for x in terms if not _is_own_load(store, x)]
    reduction = Reduction(store, _KINDS[_key(value)], rest[0], value, conditional,
                          regrouped=len(terms) > 2)
    f = rest[0]
    for x in rest[1:]:  # s + a + b (a hand-unrolled sum) -> s + (a + b)
        f = reduction.combine(f, x)
    return attrs.evolve(reduction, value=f)


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
    if _occurrences(store, data, where) != (1, 1):  # by occurrence: nodes may be shared
        return f"{describe(store)} reads {store.buffer.name} again in its value"
    if _occurrences(body, data, where) != (1, 1):
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


def _occurrences(node, data: Var, where: tuple | None = None) -> tuple[int, int]:
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
        if _is_own_load(store, x):
            return x
    found: list[BufferLoad] = []
    post_order_visit(value, lambda n: found.append(n) if _is_own_load(store, n) else None)
    return found[0] if found else None


def _operands(value: PrimExpr) -> list:
    """The operands of a binary node or a call; none for anything else (Not, Cast, ...)."""
    if isinstance(value, Call):
        return list(value.args)
    if isinstance(value, BinaryOpNode):
        return [value.a, value.b]
    return []


def _is_own_load(store: BufferStore, e: PrimExpr) -> bool:
    return (isinstance(e, BufferLoad) and e.buffer.data is store.buffer.data
            and e.predicate is None and len(e.indices) == len(store.indices)
            and all(structural_equal(a, b) for a, b in zip(e.indices, store.indices)))


def _op_name(value: PrimExpr) -> str:
    return value.op.removeprefix("tir.") if isinstance(value, Call) else type(value).__name__


# ---------------------------------------------------------------- searches

#: (comparison, acc on the right?) -> (best: "max"/"min", first occurrence?)
_SEARCHES = {
    (GT, True): ("max", True), (LT, False): ("max", True),   # v > m, m < v
    (GE, True): ("max", False), (LE, False): ("max", False),  # v >= m, m <= v
    (LT, True): ("min", True), (GT, False): ("min", True),   # v < m, m > v
    (LE, True): ("min", False), (GE, False): ("min", False),  # v <= m, m >= v
}


@attrs.frozen
class Search:
    """``if v(i) CMP m[c]: m[c] = v(i); k[d] = idx(i)``: the best value and where it is.

    ``best`` is ``"max"`` (``>``, ``>=``) or ``"min"`` (``<``, ``<=``); ``first`` is True for
    a strict compare (the first index of the best value wins), False for ``>=``/``<=`` (the
    last one). A NaN compares false, so it is never the best, as in the serial loop.
    """

    stmt: IfThenElse
    value: PrimExpr
    compare: type
    value_first: bool
    best_store: BufferStore
    #: None for a guarded max/min without an index (``if v > m: m = v``).
    index_store: BufferStore | None
    best: str
    first: bool

    def condition(self, current: PrimExpr) -> PrimExpr:
        """The statement's comparison with ``current`` in place of ``m[c]``."""
        a, b = (self.value, current) if self.value_first else (current, self.value)
        return self.compare(a, b)


@attrs.frozen
class FirstMatch:
    """``if k[d] == C and cond(i): k[d] = idx(i)``: the first ``i`` where ``cond`` holds,
    stored only while ``k[d]`` still holds the marker ``C`` (a negative constant); or, with
    ``flag_store``, ``if f[e] == C and cond(i): k[d] = idx(i); f[e] = D`` (``D != C``): the
    first such ``i``, the flag ``f`` raised with it; or, with ``last`` (and no marker),
    ``if cond(i): k[d] = idx(i)``: the last such ``i``. ``guard`` is the test of the marker
    (``k[d] == C``, ``k[d] < C``), which stays true until the first store."""

    stmt: IfThenElse
    cond: PrimExpr
    marker: PrimExpr | None
    index_store: BufferStore
    last: bool = False
    #: ``f[e] = D`` of the flag form, the store that ends the search; None otherwise.
    flag_store: BufferStore | None = None
    guard: PrimExpr | None = None


def find_search(loop: For, shared: frozenset = DISTINCT
                ) -> tuple[Search | FirstMatch | None, str | None]:
    """The index-of-max/min or first-match statement of ``loop``'s body, else why a
    look-alike is not one (``shared`` as for ``find_reductions``)."""
    inner = _bound_vars(loop)
    for stmt in _top_level(loop.body):
        if not isinstance(stmt, IfThenElse):
            continue
        found = _last_match_of(stmt, loop, inner)
        if found is not None:
            return _unshared(found, loop, shared)
        if isinstance(stmt.condition, tuple(_CMPS)):
            found = _search_of(stmt, loop, inner)
        elif isinstance(stmt.condition, And):
            found = _first_match_of(stmt, loop, inner)
        else:
            continue
        if found is not None:
            return _unshared(found, loop, shared)
    return None, None


def _sharing(loop: For, stores: list, shared: frozenset) -> str | None:
    """Why accumulating in ``stores`` is wrong when their memory may be another buffer's."""
    for store in stores:
        other = other_shared_buffer(loop.body, store.buffer.data, shared)
        if other is not None:
            return f"{sharing_reason(store.buffer, other)}, so its value may change"
    return None


def _unshared(found: tuple, loop: For, shared: frozenset) -> tuple:
    """``found``, or (None, why) when the search's results may share memory with its input."""
    search = found[0]
    if search is None:
        return found
    written = ((search.index_store, search.flag_store) if isinstance(search, FirstMatch)
               else (search.best_store, search.index_store))
    stores = [x for x in written if x is not None]
    why = _sharing(loop, stores, shared)
    return found if why is None else (None, f"if {search.stmt.condition}: {why}")


def _first_match_of(stmt: IfThenElse, loop: For, inner: set) -> tuple | None:
    """(FirstMatch, None), (None, reason), or None when no side tests a fixed element."""
    for test, cond in ((stmt.condition.a, stmt.condition.b),
                       (stmt.condition.b, stmt.condition.a)):
        marked = _marker_test(test, inner)
        if marked is None:
            continue
        load, marker, guard = marked
        head = f"if {stmt.condition}"
        stores = _top_level(stmt.then_case)
        if stmt.else_case is None and len(stores) == 2:
            return _flagged_match(stmt, cond, marked, loop, inner)
        if stmt.else_case is not None or len(stores) != 1 \
                or not isinstance(stores[0], BufferStore) or not _is_own_load(stores[0], load):
            return None, f"{head}: the branch must be exactly the store to {load}, no else"
        store = stores[0]
        if not _is_index_of(store.value, loop.loop_var):
            return None, f"{head}: {describe(store)} does not store the loop var"
        if not _fails(guard, loop.loop_var, marker, loop):
            return None, f"{head}: a stored index may pass the test {guard} (needs every " \
                "index of the loop's range to fail it, so the first store ends the search)"
        if calls(cond, "tir.call_extern"):
            return None, f"{head}: {cond} calls an extern function"
        if _occurrences(loop.body, load.buffer.data) != (1, 1):  # the test and the store
            return None, f"{head}: another access in the loop also accesses {load.buffer.name}"
        return FirstMatch(stmt, cond, marker, store, guard=guard), None
    return None


def _fails(guard: PrimExpr, value: PrimExpr, marker: PrimExpr, loop: For | None = None) -> bool:
    """``guard`` (``x == C`` or ``x < C``) is provably false for ``x = value``, ``value``
    ranging over ``loop``'s indices when ``loop`` is given."""
    analyzer = Analyzer()
    if loop is None:
        return _proved_false(analyzer, guard, value, marker)
    with analyzer.loop_scope(loop.loop_var, loop.min, loop.extent):
        return _proved_false(analyzer, guard, value, marker)


def _proved_false(analyzer: Analyzer, guard: PrimExpr, value: PrimExpr, marker: PrimExpr
                  ) -> bool:
    if isinstance(guard, EQ):  # i != n is out of the analyzer's reach, i < n is not
        return analyzer.can_prove(op.less(value, marker)) \
            or analyzer.can_prove(op.greater(value, marker))
    return analyzer.can_prove(op.greater_equal(value, marker))


def _flagged_match(stmt: IfThenElse, cond: PrimExpr, marked: tuple, loop: For, inner: set
                   ) -> tuple:
    """(FirstMatch with a flag, None) or (None, reason) for ``if f[e] == C and cond(i):``
    with a branch of two stores, ``k[d] = idx(i)`` and ``f[e] = D``."""
    flag, marker, guard = marked
    head = f"if {stmt.condition}"
    stores = _top_level(stmt.then_case)
    raised = [x for x in stores if isinstance(x, BufferStore) and _is_own_load(x, flag)]
    index = [x for x in stores if isinstance(x, BufferStore) and x not in raised]
    if len(raised) != 1 or len(index) != 1:
        return None, f"{head}: the branch must be the store to {flag} and one index store"
    raised, index = raised[0], index[0]
    # a D that passes the test would leave the search open: a later match would win
    if not isinstance(raised.value, IntImm) or not _fails(guard, raised.value, marker):
        return None, f"{head}: {describe(raised)} must store a constant failing {guard}"
    if not _is_index_of(index.value, loop.loop_var):
        return None, f"{head}: {describe(index)} does not store the loop var"
    if index.buffer.data in inner or uses_any_var(index.indices, inner) \
            or _has_load(index.indices):
        return None, f"{head}: {describe(index)} does not store to one fixed element"
    if calls(cond, "tir.call_extern"):
        return None, f"{head}: {cond} calls an extern function"
    if _occurrences(loop.body, flag.buffer.data) != (1, 1) \
            or _occurrences(loop.body, index.buffer.data) != (0, 1):
        return None, (f"{head}: another access in the loop also accesses "
                      f"{flag.buffer.name} or {index.buffer.name}")
    return FirstMatch(stmt, cond, marker, index, flag_store=raised, guard=guard), None


def _last_match_of(stmt: IfThenElse, loop: For, inner: set) -> tuple | None:
    """(FirstMatch with ``last``, None) or (None, reason) for ``if cond(i): k[d] = i``, with
    ``k`` accessed nowhere else; None when ``stmt`` has another shape."""
    stores = _top_level(stmt.then_case)
    if stmt.else_case is not None or len(stores) != 1 or not isinstance(stores[0], BufferStore):
        return None
    store = stores[0]
    if not _is_index_of(store.value, loop.loop_var) or store.buffer.data in inner \
            or uses_any_var(store.indices, inner) or _has_load(store.indices) \
            or _occurrences(loop.body, store.buffer.data) != (0, 1):
        return None
    head = f"if {stmt.condition}"
    if calls(stmt.condition, "tir.call_extern"):
        return None, f"{head}: {stmt.condition} calls an extern function"
    lowest = op.min_value(loop.loop_var.dtype)
    if not Analyzer().can_prove(loop.min > lowest):  # the lanes' "no match" value
        return None, f"{head}: the loop may start at {lowest}, the value that marks no match"
    return FirstMatch(stmt, stmt.condition, None, store, last=True), None


def _marker_test(e: PrimExpr, inner: set) -> tuple | None:
    """``(k[d], C, e)`` when ``e`` is ``k[d] == C`` (either order) or ``k[d] < C``, with
    ``d`` and ``C`` fixed in the loop and integer."""
    if isinstance(e, EQ):
        sides = ((e.a, e.b), (e.b, e.a))
    elif isinstance(e, LT):
        sides = ((e.a, e.b),)
    else:
        return None
    for load, marker in sides:
        if isinstance(load, BufferLoad) and dt.DataType(load.dtype).is_integer \
                and _fixed(load.indices, inner) and _fixed([marker], inner):
            return load, marker, e
    return None


def _fixed(exprs, inner: set) -> bool:
    """No expression of ``exprs`` changes in the loop: no loop-bound var, no load."""
    return not uses_any_var(exprs, inner) and not _has_load(exprs)


_CMPS = {GT, GE, LT, LE}


def _search_of(stmt: IfThenElse, loop: For, inner: set) -> tuple | None:
    """(Search, None), (None, reason), or None when ``stmt`` is not about a fixed element."""
    cond = stmt.condition
    for acc_right, (acc, value) in ((True, (cond.b, cond.a)), (False, (cond.a, cond.b))):
        if isinstance(acc, BufferLoad) and not uses_any_var(acc.indices, inner) \
                and not _has_load(acc.indices):
            best, first = _SEARCHES[(type(cond), acc_right)]
            reason = _search_problem(stmt, acc, value, loop)
            if reason is not None:
                return None, reason
            stores = _top_level(stmt.then_case)
            best_store = next(x for x in stores if x.buffer.data is acc.buffer.data)
            index_store = next((x for x in stores if x is not best_store), None)
            return Search(stmt, value, type(cond), acc_right, best_store, index_store,
                          best, first), None
    return None


def _search_problem(stmt: IfThenElse, acc: BufferLoad, value: PrimExpr, loop: For) -> str | None:
    """Why ``stmt`` is not a search for the best ``value`` (and its index) in ``acc``, or None."""
    head = f"if {stmt.condition}"
    stores = _top_level(stmt.then_case)
    if stmt.else_case is not None or len(stores) not in (1, 2) \
            or not all(isinstance(x, BufferStore) for x in stores):
        return (f"{head}: the branch must be the store of the value (and of the index), "
                "no else")
    mine = [x for x in stores if _is_own_load(x, acc)]
    if len(mine) != 1 or not structural_equal(mine[0].value, value):
        return f"{head}: the branch does not store {value} to {acc}"
    if len(stores) == 1:
        return _best_only_problem(head, acc, value, loop)
    index = next(x for x in stores if x is not mine[0])
    return _best_and_index_problem(head, acc, value, index, loop)


def _best_and_index_problem(head: str, acc: BufferLoad, value: PrimExpr, index: BufferStore,
                            loop: For) -> str | None:
    """Why ``if v CMP m: m = v; k = i`` (value and index) is not searched, or None."""
    inner = _bound_vars(loop)
    if acc.buffer.data in inner or index.buffer.data in inner:
        return f"{head}: {acc.buffer.name} or {index.buffer.name} is allocated inside the loop"
    if index.buffer.data is acc.buffer.data or _has_load(index.indices) \
            or uses_any_var(index.indices, inner):
        return f"{head}: the index goes to an element that changes during the loop"
    if not _is_index_of(index.value, loop.loop_var):
        return f"{head}: {describe(index)} does not store the loop var {loop.loop_var.name}"
    if calls(value, "tir.call_extern"):
        return f"{head}: {value} calls an extern function (it would run for every lane)"
    if acc.dtype not in REDUCED_TYPES - {"bool"} or not dt.DataType(index.value.dtype).is_integer:
        return f"{head}: {acc.dtype} values or {index.value.dtype} indices are not searched"
    # Exactly the compare reads m, the branch writes m and k once each (every occurrence).
    for data, name, want in ((acc.buffer.data, acc.buffer.name, (1, 1)),
                             (index.buffer.data, index.buffer.name, (0, 1))):
        if _occurrences(loop.body, data) != want:
            return f"{head}: another access in the loop also accesses {name}"
    return None


def _best_only_problem(head: str, acc: BufferLoad, value: PrimExpr, loop: For) -> str | None:
    """Why ``if v CMP m: m = v`` (no index) is not searched, or None."""
    if acc.buffer.data in _bound_vars(loop):
        return f"{head}: {acc.buffer.name} is allocated inside the loop"
    if calls(value, "tir.call_extern"):
        return f"{head}: {value} calls an extern function (it would run for every lane)"
    if acc.dtype not in REDUCED_TYPES - {"bool"}:
        return f"{head}: {acc.dtype} values are not searched"
    if _occurrences(loop.body, acc.buffer.data) != (1, 1):
        return f"{head}: another access in the loop also accesses {acc.buffer.name}"
    return None


def calls(e: PrimExpr, name: str) -> bool:
    found: list = []
    post_order_visit(e, lambda n: found.append(n) if isinstance(n, Call) and n.op == name
                     else None)
    return bool(found)


def _is_index_of(e: PrimExpr, var: Var) -> bool:
    """``e`` is ``var`` itself or a cast of it to a type holding every value of it."""
    if isinstance(e, Cast):
        to, src = dt.DataType(e.dtype), dt.DataType(var.dtype)
        return to.is_int and to.bits >= src.bits and e.value is var
    return e is var


# ---------------------------------------------------------------- helpers


def _under_ifs(body: Stmt) -> list[Stmt]:
    """The statements of ``body`` at the top level or inside ifs only (no loop, no let)."""
    out: list[Stmt] = []
    for stmt in _top_level(body):
        out.append(stmt)
        if isinstance(stmt, IfThenElse):
            out += _under_ifs(stmt.then_case)
            out += _under_ifs(stmt.else_case) if stmt.else_case is not None else []
    return out


def _top_level(body: Stmt) -> list[Stmt]:
    return list(body.seq) if isinstance(body, SeqStmt) else [body]


def _stores(body: Stmt) -> list[BufferStore]:
    found: list[BufferStore] = []
    post_order_visit(body, lambda n: found.append(n) if isinstance(n, BufferStore) else None)
    return found


def _bound_vars(loop: For) -> set:
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


def _has_load(exprs) -> bool:
    found: list = []
    for e in exprs:
        post_order_visit(e, lambda n: found.append(n) if isinstance(n, BufferLoad) else None)
    return bool(found)


def _has_vectorized_loop(body: Stmt) -> bool:
    found: list = []
    post_order_visit(body, lambda n: found.append(n) if isinstance(n, For)
                     and n.kind == ForKind.VECTORIZED else None)
    return bool(found)


__all__ = ["REDUCED_TYPES", "CombiningStore", "FirstMatch", "Reduction",
           "Refusal", "Search", "apart", "calls", "describe", "find_reductions", "find_search",
           "identity", "loads_of", "op_kind", "operands"]
