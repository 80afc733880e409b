"""``VectorizeWhileSearch``: a ``while`` loop searching a first index becomes a first match.

The loop (the decision is ``analysis/while_search.py``'s)::

    while I[c] < n and keep(I[c]):          # or if_then_else(I[c] < n, keep(I[c]), False)
        I[c] = I[c] + 1

becomes the sentinel first match that ``VectorizeReductions`` vectorizes, with its early
exit (the blocks run in a ``while`` that stops after the first block holding a match)::

    let start = I[c]
    if 0 <= start and start < n:
        found[0] = n                        # n: no index fails keep
        for i in range(max(start, 0), n), vectorized:
            if found[0] == n and not keep(i):
                found[0] = i
        I[c] = found[0]
    else:
        <the while loop as written>         # no iteration, or a negative start

``n`` is bound to a ``let`` first when it is not a var or a constant (it reads memory
the loop does not write, so one read is the serial loop's every read). The ``max(start,
0)`` is ``start`` on that path; it tells ``VectorizeReductions``' analysis, which knows
nothing of the ``if``, that the loop's indices are not negative (so its loads are in
bounds and the early exit is allowed). Each while loop whose condition tests a buffer
element against a bound gets a remark: rewritten, or why it stays serial.
"""

from __future__ import annotations

from tir import op
from tir.expr import BufferLoad, PrimExpr, Var
from tir.function import IRModule, PrimFunc
from tir.functor import StmtMutator, post_order_visit, substitute
from tir.stmt import BufferStore, For, ForKind, IfThenElse, LetStmt, SeqStmt, Stmt, While

from ..pass_base import PrimFuncPass, function_name, prim_func_pass
from ..pass_context import PassContext
from ..remarks import emit_remark
from .analysis.aliasing import shared_memory
from .analysis.while_search import (
    WhileSearch,
    find_while_search,
    form_of,
    shown,
    tested_index,
)
from .options import VectorOptions, function_has_sve
from .reduction_ir import allocate, local_buffer
from .remarks import VECTORIZED, VectorizeRemark

#: The outcome of a remark on a while search left serial.
NOT_A_WHILE_SEARCH = "not vectorized as a while search"


class _WhileSearchRewriter(StmtMutator):
    """Rewrites the while searches below a statement, knowing the loops around them."""

    def __init__(self, func_name: str, shared: frozenset):
        self.func_name = func_name
        self.shared = shared
        self.enclosing: list[For] = []

    def visit_for(self, loop: For) -> Stmt:
        if loop.kind == ForKind.VECTORIZED:
            return loop  # a while in a vectorized loop is VectorizeLoop's to scalarize
        if _has_load(loop.min) or _has_load(loop.extent):
            # read once at the loop's start: a load of it now may see another value, so
            # the range says nothing the analysis or the clamp may use
            return self.generic_visit(loop)
        self.enclosing.append(loop)
        try:
            return self.generic_visit(loop)
        finally:
            self.enclosing.pop()

    def visit_while(self, loop: While) -> Stmt:
        search, why_not = find_while_search(loop, self.enclosing, self.shared)
        if search is None:
            if why_not is not None:
                self._remark(loop, NOT_A_WHILE_SEARCH, f"{form_of(loop)}: {why_not}")
            return self.generic_visit(loop)
        rewritten, var = _rewrite(search, self.enclosing)
        self._remark(loop, VECTORIZED, _reason(search), var)
        return rewritten

    def _remark(self, loop: While, outcome: str, reason: str, var: Var | None = None) -> None:
        name = var.name if var is not None else f"while {shown(tested_index(loop))}"
        emit_remark(VectorizeRemark(self.func_name, name, 0, outcome, reason,
                                    "VectorizeWhileSearch"), loop=var)


def _reason(search: WhileSearch) -> str:
    index = shown(search.index)
    keep = shown(search.keep_at(Var("i", search.index.dtype)))
    text = (f"{form_of(search.loop)} {index} < {shown(search.stop)}: the first i from {index} "
            f"where {keep} fails, as a vectorized first match (when 0 <= {index} < "
            f"{shown(search.stop)}; else the loop as written)")
    return text


def _rewrite(search: WhileSearch, enclosing: list[For]) -> tuple[Stmt, Var]:
    """The statement replacing ``search.loop`` (see the module doc) and its loop var."""
    index = search.index
    dtype = index.dtype
    name = index.buffer.name
    start = Var(f"{name}_start", dtype)
    stop = search.stop
    if _has_load(stop):  # read once, as the serial loop reads it: it does not change
        stop = Var(f"{name}_stop", dtype)
    var = Var(f"{name}_i", dtype)
    vector = _vector_search(search, start, stop, var, enclosing)
    # a start >= 0 makes the loads provably in bounds (the analysis assumes it) and the
    # extent stop - start free of overflow; other starts run the loop as written
    test = op.all(start >= op.const(0, dtype), start < stop)
    body: Stmt = IfThenElse(test, vector, search.loop)
    if stop is not search.stop:
        body = LetStmt(stop, search.stop, body)
    return LetStmt(start, index, body), var


def _has_load(e: PrimExpr) -> bool:
    found: list = []
    post_order_visit(e, lambda n: found.append(n) if isinstance(n, BufferLoad) else None)
    return bool(found)


def _clamped(e: PrimExpr, enclosing: list[For]) -> PrimExpr:
    """``e`` with each enclosing loop var ``r`` as ``max(min(r, last), first)``: the same
    value where ``e`` runs, and bounds ``VectorizeReductions``' analysis, which does not
    see the loops around the one it rewrites, can use to prove ``A[r, i]`` in bounds."""
    vmap = {}
    for loop in enclosing:
        last = loop.min + loop.extent - op.const(1, loop.extent.dtype)
        vmap[loop.loop_var] = op.max(op.min(loop.loop_var, last), loop.min)
    return substitute(e, vmap) if vmap else e


def _vector_search(search: WhileSearch, start: Var, stop: PrimExpr, var: Var,
                   enclosing: list[For]) -> Stmt:
    """``found[0] = stop; for var ...: if found[0] == stop and not keep(var): found[0] =
    var; I[c] = found[0]``: every index of the loop is below ``stop``, so the sentinel
    ``stop`` holds until the first store."""
    index = search.index
    found = local_buffer(f"{index.buffer.name}_found", index.dtype, 1)
    first = BufferLoad(found, [op.const(0, "int32")])
    match = op.logical_not(_clamped(search.keep_at(var), enclosing))
    store_first = IfThenElse(op.all(first == stop, match), BufferStore(found, var, [0]))
    low = op.max(start, op.const(0, start.dtype))
    loop = For(var, low, stop - low, ForKind.VECTORIZED, store_first)
    done = BufferStore(index.buffer, first, list(index.indices))
    return allocate(found, SeqStmt([BufferStore(found, stop, [0]), loop, done]))


def vectorize_while_search(func: PrimFunc, name: str = "main") -> PrimFunc:
    """``func`` with its while searches rewritten into vectorized first matches."""
    if function_has_sve(func):  # not tried on scalable vectors: the loop stays as written
        return func
    body = _WhileSearchRewriter(name, shared_memory(func))(func.body)
    return func if body is func.body else func.with_body(body)


def VectorizeWhileSearch() -> PrimFuncPass:
    """The pass turning ``while I[c] < n and keep(I[c]): I[c] += 1`` into a vectorized
    first match (``VectorizeReductions`` then makes the vector code and its early exit).

    Config ``tir.vectorize.while_search`` False, or ``tir.disable_vectorize``, turns it
    off (a rewritten loop would then run serially over every index: slower than the
    while loop that stops at the first).
    """

    def transform_function(func: PrimFunc, mod: IRModule, ctx: PassContext) -> PrimFunc:
        options = VectorOptions.from_context(ctx)
        if options.disable_vectorize or not options.while_search:
            return func
        return vectorize_while_search(func, function_name(mod, func))

    return prim_func_pass(transform_function, opt_level=0, name="tir.VectorizeWhileSearch")


__all__ = ["NOT_A_WHILE_SEARCH", "VectorizeWhileSearch", "vectorize_while_search"]
