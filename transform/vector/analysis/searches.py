"""Is this loop a search? Recognition for ``VectorizeReductions``: which search, or why not.

``find_search`` recognizes the index of the best value (a loop with no
reduction of ``reductions.py``), an ``if`` at the top level of the body of exactly this shape::

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
from tir.expr import EQ, GE, GT, LE, LT, And, BufferLoad, Cast, IntImm, PrimExpr, Var
from tir.stmt import BufferStore, For, IfThenElse
from tir.structural import structural_equal

from .aliasing import DISTINCT
from .reductions import (
    REDUCED_TYPES,
    bound_vars,
    calls,
    describe,
    has_load,
    is_own_load,
    occurrences,
    sharing_problem,
    top_level,
)

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
    inner = bound_vars(loop)
    for stmt in top_level(loop.body):
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


def _unshared(found: tuple, loop: For, shared: frozenset) -> tuple:
    """``found``, or (None, why) when the search's results may share memory with its input."""
    search = found[0]
    if search is None:
        return found
    written = ((search.index_store, search.flag_store) if isinstance(search, FirstMatch)
               else (search.best_store, search.index_store))
    stores = [x for x in written if x is not None]
    why = sharing_problem(loop, stores, shared)
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
        stores = top_level(stmt.then_case)
        if stmt.else_case is None and len(stores) == 2:
            return _flagged_match(stmt, cond, marked, loop, inner)
        if stmt.else_case is not None or len(stores) != 1 \
                or not isinstance(stores[0], BufferStore) or not is_own_load(stores[0], load):
            return None, f"{head}: the branch must be exactly the store to {load}, no else"
        store = stores[0]
        if not _is_index_of(store.value, loop.loop_var):
            return None, f"{head}: {describe(store)} does not store the loop var"
        if not _fails(guard, loop.loop_var, marker, loop):
            return None, f"{head}: a stored index may pass the test {guard} (needs every " \
                "index of the loop's range to fail it, so the first store ends the search)"
        if calls(cond, "tir.call_extern"):
            return None, f"{head}: {cond} calls an extern function"
        if occurrences(loop.body, load.buffer.data) != (1, 1):  # the test and the store
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
    stores = top_level(stmt.then_case)
    raised = [x for x in stores if isinstance(x, BufferStore) and is_own_load(x, flag)]
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
            or has_load(index.indices):
        return None, f"{head}: {describe(index)} does not store to one fixed element"
    if calls(cond, "tir.call_extern"):
        return None, f"{head}: {cond} calls an extern function"
    if occurrences(loop.body, flag.buffer.data) != (1, 1) \
            or occurrences(loop.body, index.buffer.data) != (0, 1):
        return None, (f"{head}: another access in the loop also accesses "
                      f"{flag.buffer.name} or {index.buffer.name}")
    return FirstMatch(stmt, cond, marker, index, flag_store=raised, guard=guard), None


def _last_match_of(stmt: IfThenElse, loop: For, inner: set) -> tuple | None:
    """(FirstMatch with ``last``, None) or (None, reason) for ``if cond(i): k[d] = i``, with
    ``k`` accessed nowhere else; None when ``stmt`` has another shape."""
    stores = top_level(stmt.then_case)
    if stmt.else_case is not None or len(stores) != 1 or not isinstance(stores[0], BufferStore):
        return None
    store = stores[0]
    if not _is_index_of(store.value, loop.loop_var) or store.buffer.data in inner \
            or uses_any_var(store.indices, inner) or has_load(store.indices) \
            or occurrences(loop.body, store.buffer.data) != (0, 1):
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
    return not uses_any_var(exprs, inner) and not has_load(exprs)


_CMPS = {GT, GE, LT, LE}


def _search_of(stmt: IfThenElse, loop: For, inner: set) -> tuple | None:
    """(Search, None), (None, reason), or None when ``stmt`` is not about a fixed element."""
    cond = stmt.condition
    for acc_right, (acc, value) in ((True, (cond.b, cond.a)), (False, (cond.a, cond.b))):
        if isinstance(acc, BufferLoad) and not uses_any_var(acc.indices, inner) \
                and not has_load(acc.indices):
            best, first = _SEARCHES[(type(cond), acc_right)]
            reason = _search_problem(stmt, acc, value, loop)
            if reason is not None:
                return None, reason
            stores = top_level(stmt.then_case)
            best_store = next(x for x in stores if x.buffer.data is acc.buffer.data)
            index_store = next((x for x in stores if x is not best_store), None)
            return Search(stmt, value, type(cond), acc_right, best_store, index_store,
                          best, first), None
    return None


def _search_problem(stmt: IfThenElse, acc: BufferLoad, value: PrimExpr, loop: For) -> str | None:
    """Why ``stmt`` is not a search for the best ``value`` (and its index) in ``acc``, or None."""
    head = f"if {stmt.condition}"
    stores = top_level(stmt.then_case)
    if stmt.else_case is not None or len(stores) not in (1, 2) \
            or not all(isinstance(x, BufferStore) for x in stores):
        return (f"{head}: the branch must be the store of the value (and of the index), "
                "no else")
    mine = [x for x in stores if is_own_load(x, acc)]
    if len(mine) != 1 or not structural_equal(mine[0].value, value):
        return f"{head}: the branch does not store {value} to {acc}"
    if len(stores) == 1:
        return _best_only_problem(head, acc, value, loop)
    index = next(x for x in stores if x is not mine[0])
    return _best_and_index_problem(head, acc, value, index, loop)


def _best_and_index_problem(head: str, acc: BufferLoad, value: PrimExpr, index: BufferStore,
                            loop: For) -> str | None:
    """Why ``if v CMP m: m = v; k = i`` (value and index) is not searched, or None."""
    inner = bound_vars(loop)
    if acc.buffer.data in inner or index.buffer.data in inner:
        return f"{head}: {acc.buffer.name} or {index.buffer.name} is allocated inside the loop"
    if index.buffer.data is acc.buffer.data or has_load(index.indices) \
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
        if occurrences(loop.body, data) != want:
            return f"{head}: another access in the loop also accesses {name}"
    return None


def _best_only_problem(head: str, acc: BufferLoad, value: PrimExpr, loop: For) -> str | None:
    """Why ``if v CMP m: m = v`` (no index) is not searched, or None."""
    if acc.buffer.data in bound_vars(loop):
        return f"{head}: {acc.buffer.name} is allocated inside the loop"
    if calls(value, "tir.call_extern"):
        return f"{head}: {value} calls an extern function (it would run for every lane)"
    if acc.dtype not in REDUCED_TYPES - {"bool"}:
        return f"{head}: {acc.dtype} values are not searched"
    if occurrences(loop.body, acc.buffer.data) != (1, 1):
        return f"{head}: another access in the loop also accesses {acc.buffer.name}"
    return None


def _is_index_of(e: PrimExpr, var: Var) -> bool:
    """``e`` is ``var`` itself or a cast of it to a type holding every value of it."""
    if isinstance(e, Cast):
        to, src = dt.DataType(e.dtype), dt.DataType(var.dtype)
        return to.is_int and to.bits >= src.bits and e.value is var
    return e is var



__all__ = ["FirstMatch", "Search", "find_search"]
