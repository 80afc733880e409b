"""Is this ``while`` loop a first-index search, and may it run as a vectorized first match?

``transform.VectorizeWhileSearch`` (transform/vector/vectorize_while_search.py) rewrites; this
module only decides. The forms recognized, with ``I`` a buffer, ``c`` a fixed index::

    while I[c] < n and keep(I[c]):                           # the and form
        I[c] = I[c] + 1
    while if_then_else(I[c] < n, keep(I[c]), False):         # the guarded form
        I[c] = I[c] + 1

(``n > I[c]`` too, anywhere in a chain of ``and``). The loop leaves ``I[c]`` at the first index
``i`` from its start where ``keep(i)`` fails, or at ``n`` when there is none; a start
``>= n`` leaves it as it was. The rewrite evaluates ``keep`` as a vector over a block of
indices, past the first failing one, and not at all at ``n``; that is exact only when
evaluating ``keep`` has no effect the serial loop would not have:

- the body is exactly ``I[c] = I[c] + 1`` (int32 or int64), and nothing else in the loop
  accesses ``I`` (``keep`` reads it only as ``I[c]``, the index), nor a buffer that may
  share its memory; ``c`` and ``n`` read no memory the loop writes (they are fixed);
- ``keep`` calls nothing impure and divides by nothing that may be 0 or -1;
- every load in ``keep`` is provably in bounds for every index in ``[start, n)`` (the
  guarded form, which evaluates ``keep`` only below ``n``) or ``[start, n]`` (the and
  form: TIR's ``and`` evaluates both sides, so the serial loop's last test evaluates
  ``keep(n)``, and skipping it must be invisible too; when it is out of bounds, the serial
  program may read out of bounds there, and the loop stays serial so it still does). The
  start is unknown (a load); the proof assumes ``0 <= start < n``, which the rewrite tests
  at run time (any other start runs the loop as written). With ``start >= 0`` the vector
  loop's extent ``n - start`` cannot overflow either.

The increment cannot wrap: it runs only when ``I[c] < n``, so ``I[c] + 1 <= n``, which
fits ``I``'s type (``n`` has that type). Every refusal says which form it saw and why.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Sequence

import attrs

from tir import op
from tir.arith import Analyzer
from tir.expr import GT, LT, Add, And, BufferLoad, Call, IntImm, PrimExpr, Sub, Var
from tir.functor import ir_transform, post_order_visit
from tir.intrin import is_pure
from tir.stmt import BufferStore, Evaluate, For, ForKind, While
from tir.structural import structural_equal

from .aliasing import other_shared_buffer, sharing_reason
from .early_exit import early_exit_problem

#: The index types the rewrite takes (its vectorized loop's var has the index's type).
INDEX_TYPES = ("int32", "int64")


@attrs.frozen
class WhileSearch:
    """A recognized search: ``while I[c] < stop and keep(I[c]): I[c] += 1``; ``guarded``
    for the ``if_then_else`` form."""

    loop: While
    index: BufferLoad
    stop: PrimExpr
    keep: PrimExpr
    guarded: bool

    def keep_at(self, i: PrimExpr) -> PrimExpr:
        """``keep`` with ``i`` in place of the index ``I[c]``."""
        return replace_index(self.keep, self.index, i)


def form_of(loop: While) -> str:
    """How a remark names the form of ``loop``: the and form or the guarded form."""
    return "guarded while search" if _is_guarded(loop.condition) else "while search"


def tested_index(loop: While) -> BufferLoad | None:
    """The element ``I[c]`` the condition of ``loop`` tests against a bound, or None."""
    parts = _split_condition(loop.condition)
    return None if parts is None else parts[0]


def find_while_search(loop: While, enclosing: Sequence[For] = (),
                      shared: frozenset = frozenset()
                      ) -> tuple[WhileSearch | None, str | None]:
    """``(WhileSearch, None)``, ``(None, why it stays serial)``, or ``(None, None)`` when the
    condition does not test a buffer element against a bound (no search at all).
    ``enclosing``: the loops around ``loop`` (their ranges help the bounds proof);
    ``shared``: the data vars that may share memory (analysis/aliasing.py)."""
    parts = _split_condition(loop.condition)
    if parts is None:
        return None, None
    index, stop, keep, guarded = parts
    why = _shape_problem(loop, index, stop, keep) or _sharing(loop, index, shared)
    if why is not None:
        return None, why
    search = WhileSearch(loop, index, stop, keep, guarded)
    return _with_effect_proof(search, enclosing)


def shown(node) -> str:
    """``node`` as remark text, its loads and stores under their buffers' names (the IR
    printer, printing an expression alone, may tell a buffer from its data var of the
    same name by a suffix: ``I_1[0]`` for ``I[0]``)."""
    names: set[str] = set()
    post_order_visit(node, lambda n: names.add(n.buffer.name)
                     if isinstance(n, (BufferLoad, BufferStore)) else None)
    text = str(node).strip()
    for name in names:
        text = re.sub(rf"\b{re.escape(name)}_\d+\[",
                      lambda m, k=name: m.group(0) if m.group(0)[:-1] in names else f"{k}[",
                      text)
    return text


def replace_index(expr: PrimExpr, index: BufferLoad, value: PrimExpr) -> PrimExpr:
    """``expr`` with every load structurally equal to ``index`` replaced by ``value``."""
    def swap(node):
        if isinstance(node, BufferLoad) and _same_element(node, index):
            return value
        return None
    return ir_transform(expr, None, swap, only_enable=(BufferLoad,))


# ------------------------------------------------------------ the condition and the body


def _is_guarded(cond: PrimExpr) -> bool:
    return isinstance(cond, Call) and cond.op == "tir.if_then_else"


def _split_condition(cond: PrimExpr) -> tuple | None:
    """``(I[c], n, keep, guarded)`` of the condition, or None for another shape."""
    if _is_guarded(cond):
        test, keep, other = cond.args
        bound = _bound_test(test)
        if bound is None or not (isinstance(other, IntImm) and other.value == 0):
            return None
        return (*bound, keep, True)
    if not isinstance(cond, And):
        return None
    # TIR's and evaluates every side, so the test may sit anywhere in a chain of ands
    terms = _conjuncts(cond)
    for k, test in enumerate(terms):
        bound = _bound_test(test)
        if bound is not None:
            rest = terms[:k] + terms[k + 1:]
            return (*bound, op.all(*rest), False)
    return None


def _conjuncts(e: PrimExpr) -> list[PrimExpr]:
    """The sides of a chain of ``and``s, in order."""
    if not isinstance(e, And):
        return [e]
    return _conjuncts(e.a) + _conjuncts(e.b)


def _bound_test(e: PrimExpr) -> tuple | None:
    """``(I[c], n)`` when ``e`` is ``I[c] < n`` or ``n > I[c]`` for a scalar integer load;
    ``I[c] + k < e`` (what Simplify makes of ``I[c] < e - k``) gives ``n = e - k``, when
    that provably does not overflow (see ``_offset``)."""
    if isinstance(e, LT):
        left, bound = e.a, e.b
    elif isinstance(e, GT):
        left, bound = e.b, e.a
    else:
        return None
    load, k = _offset(left)
    if not (isinstance(load, BufferLoad) and load.dtype.startswith("int")
            and "x" not in load.dtype):
        return None
    if k == 0:
        return load, bound
    if not _fits(bound, k):  # the parts without a bound: _shape_problem says why
        return load, None
    return load, bound - op.const(k, bound.dtype)


def _offset(e: PrimExpr) -> tuple[PrimExpr, int]:
    """``(x, k)`` for ``e = x + k`` or ``x - k`` with ``k`` a constant, else ``(e, 0)``."""
    if isinstance(e, Add) and isinstance(e.b, IntImm):
        return e.a, e.b.value
    if isinstance(e, Add) and isinstance(e.a, IntImm):
        return e.b, e.a.value
    if isinstance(e, Sub) and isinstance(e.b, IntImm):
        return e.a, -e.b.value
    return e, 0


def _fits(bound: PrimExpr, k: int) -> bool:
    """Whether ``bound - k`` provably does not overflow. Then ``x + k < bound`` is
    ``x < bound - k`` wherever ``x + k`` does not overflow: everywhere the loop runs (its
    index stays at most ``bound - k``; a start past it runs the loop as written)."""
    low, high = op.min_value(bound.dtype), op.max_value(bound.dtype)
    limit = op.greater_equal(bound, low + k) if k > 0 else op.less_equal(bound, high + k)
    return Analyzer().can_prove(limit)


def _shape_problem(loop: While, index: BufferLoad, stop: PrimExpr, keep: PrimExpr
                   ) -> str | None:
    """Why the loop is not exactly a search over ``index`` (see the module doc), or None."""
    if index.dtype not in INDEX_TYPES:
        return f"the index {shown(index)} is {index.dtype} (int32 or int64 only)"
    if stop is None:
        return f"{shown(_test_of(loop.condition))}: the bound less the offset of " \
            f"{shown(index)} may overflow"
    if not _is_increment(loop.body, index):
        return f"the body must be exactly {shown(index)} = {shown(index)} + 1"
    impure = _impure_call([*index.indices, stop])
    if impure is not None:  # the serial loop calls it on every test, the rewrite once
        return f"the index {shown(index)} or the bound {shown(stop)} calls {impure}"
    data = index.buffer.data
    if _reads(index.indices, data) or _reads([stop], data):  # then they move with I[c]
        return f"the index {shown(index)} or the bound {shown(stop)} reads " \
            f"{index.buffer.name}, which the loop writes"
    if _reads([replace_index(keep, index, op.const(0, index.dtype))], data):
        return f"{shown(keep)} reads {index.buffer.name} at an element other than the index " \
            f"{shown(index)}"
    return None


def _impure_call(exprs) -> str | None:
    """The op of the first call with side effects in ``exprs``, or None."""
    found: list = []
    for e in exprs:
        post_order_visit(e, lambda n: found.append(n.op)
                         if isinstance(n, Call) and not is_pure(n.op) else None)
    return found[0] if found else None


def _test_of(cond: PrimExpr) -> PrimExpr:
    """The bound test of a recognized condition (the first operand that is one)."""
    if _is_guarded(cond):
        return cond.args[0]
    return next(t for t in _conjuncts(cond) if _bound_test(t) is not None)


def _is_increment(body, index: BufferLoad) -> bool:
    """``body`` is ``I[c] = I[c] + 1`` (or ``1 + I[c]``), no predicate."""
    if not isinstance(body, BufferStore) or body.predicate is not None \
            or body.buffer is not index.buffer:
        return False
    if not all(structural_equal(a, b) for a, b in zip(body.indices, index.indices)):
        return False
    value = body.value
    if not isinstance(value, Add):
        return False
    for load, one in ((value.a, value.b), (value.b, value.a)):
        if isinstance(load, BufferLoad) and _same_element(load, index) \
                and isinstance(one, IntImm) and one.value == 1:
            return True
    return False


def _same_element(a: BufferLoad, b: BufferLoad) -> bool:
    return a.buffer.data is b.buffer.data and a.dtype == b.dtype \
        and len(a.indices) == len(b.indices) \
        and all(structural_equal(x, y) for x, y in zip(a.indices, b.indices))


def _reads(exprs, data: Var) -> bool:
    """Whether any expression of ``exprs`` loads from the memory of ``data``."""
    found: list = []
    for e in exprs:
        post_order_visit(e, lambda n: found.append(n)
                         if isinstance(n, BufferLoad) and n.buffer.data is data else None)
    return bool(found)


def _sharing(loop: While, index: BufferLoad, shared: frozenset) -> str | None:
    other = other_shared_buffer(loop, index.buffer.data, shared)
    if other is None:
        return None
    return f"{sharing_reason(index.buffer, other)}, so a load may see the index move"


# ------------------------------------------------------------ evaluating keep has no effect


def _with_effect_proof(search: WhileSearch, enclosing: Sequence[For]) -> tuple:
    """``(search, None)`` when evaluating ``keep`` has no effect over the indices the
    serial loop and the rewrite may evaluate it on, else ``(None, why)``."""
    why = _effect_problem(search, enclosing)
    if why is None:
        return search, None
    upto = "n) (it runs below the bound only)" if search.guarded else \
        "n] (the and evaluates both sides: the last test evaluates it at n too)"
    return None, f"{why}; the vector search evaluates the condition ahead of the serial " \
        f"loop, so it must have no effect at any index in [start, {upto}"


def _effect_problem(search: WhileSearch, enclosing: Sequence[For]) -> str | None:
    """Why evaluating ``keep`` may have an effect on an index of its range, or None. The
    rewrite runs the vector search only for ``0 <= start < n``: the proof assumes it."""
    dtype = search.index.dtype
    start, i = Var("start", dtype), Var("i", dtype)
    # the guarded form evaluates keep on [start, n), the and form on [start, n] too
    extent = search.stop - start if search.guarded else search.stop - start + 1
    range_loop = For(i, start, extent, ForKind.SERIAL, Evaluate(op.const(0, "int32")))
    facts = op.all(start >= op.const(0, dtype), start < search.stop)
    return _problem_in(search.keep_at(i), range_loop, enclosing, facts)


def _problem_in(keep: PrimExpr, range_loop: For, enclosing: Sequence[For], facts: PrimExpr
                ) -> str | None:
    """``early_exit_problem`` of ``keep`` over ``range_loop``, the enclosing loops' ranges
    and ``facts`` known."""
    analyzer = Analyzer()
    with contextlib.ExitStack() as scopes:
        for loop in enclosing:
            scopes.enter_context(analyzer.loop_scope(loop.loop_var, loop.min, loop.extent))
        scopes.enter_context(analyzer.constraint_scope(facts))
        return early_exit_problem(keep, range_loop, analyzer)

__all__ = ["INDEX_TYPES", "WhileSearch", "find_while_search", "form_of", "replace_index",
           "shown", "tested_index"]
