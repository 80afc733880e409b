"""Which runtime strides of a vectorized loop are worth versioning on, and is it legal.

An access ``A[i * s]`` in a vectorized loop over ``i``, with ``s`` a value
known only at run time, becomes a gather (or a scatter): the vectorizer
cannot tell that its lanes are next to each other. When ``s == 1`` they are.
LLVM's LoopAccessAnalysis speculates on such a stride ("symbolic stride
speculation") and LoopVersioning guards the speculation with a run-time
check; ``VersionSymbolicStrides`` (version_symbolic_strides.py) does the same with
the plan this module makes:

- the *coefficient* of each vectorized loop var in each index of each access,
  as an expression (``A[b + (i + 1) * s]`` has coefficient ``s``);
- an access is *strided by* the scalar vars of a coefficient that is not a
  constant; its *flat stride* is the step of its element offset, the
  coefficients weighted by the buffer's strides;
- the versioned vars are the one or two (``MAX_VERSIONED_VARS``) vars that,
  set to 1, turn the most accesses' flat strides into small constants (1: a
  contiguous vector load or store; up to ``MAX_FAST_STRIDE``: contiguous
  loads and shuffles), the most contiguous ones first.

A var may be versioned on only if its value is fixed before the loop: a
scalar integer ``Var`` the loop body does not bind (well-formed IR binds a
var once, so such a var is not even defined before the loop) and that is not
the var of an enclosing loop (an induction variable is rarely 1, and the
check would run on every iteration of that loop). A stride that reads memory
(``A[i * B[0]]``) is not a var and is left alone. Strides of the buffer
itself (``decl_buffer(..., strides=[s])``) are not versioned on: the fast
path would need a second buffer over the same memory.

Correctness does not rest on this analysis: the fast path is the loop with
the vars replaced by 1, run only when they are 1, and the general path is
the loop as written. The analysis only decides where that pays.
"""

from __future__ import annotations

import itertools

import attrs

from tir import op
from tir.analysis.linear_form import linear_coefficient
from tir.analysis.var_use import used_vars
from tir.arith import Analyzer
from tir.expr import BufferLoad, IntImm, Let, PrimExpr, Var
from tir.functor import post_order_visit, substitute
from tir.stmt import Allocate, For, ForKind, LetStmt

from .accesses import Access, AccessCollector, shown

#: At most this many vars are versioned on together (``s1 == 1 && s2 == 1``): each
#: one more halves how often the fast path runs, and a nest is copied once whatever.
MAX_VERSIONED_VARS = 2
#: Candidate vars beyond this many (by first appearance) are not tried.
MAX_CANDIDATES = 6
#: A fast path pays when an access's stride there is at most this (in elements): 1 is one
#: contiguous vector, -1 a reversed one, up to 8 contiguous loads and shuffles; a larger
#: constant stride gathers as the runtime one does, and copying the loop would buy nothing.
MAX_FAST_STRIDE = 8


@attrs.frozen
class FastAccess:
    """An access the fast path makes regular: shown as written, and its flat stride there."""

    text: str
    stride: int

    @property
    def contiguous(self) -> bool:
        """Whether the fast path loads or stores it as one contiguous vector."""
        return self.stride == 1


@attrs.frozen
class StridePlan:
    """The verdict on one vectorized loop (nest).

    ``vars`` empty: do not version; ``reason`` then says why when the loop has
    an access with a runtime stride ("" when it has none: nothing to report).
    ``known``: the context already proves every var equal to 1, so the loop is
    the fast path alone, without a branch.
    """

    vars: tuple = ()
    fast: tuple = ()
    reason: str = ""
    known: bool = False

    @property
    def condition(self) -> PrimExpr:
        """``s == 1`` (``&&`` over the vars)."""
        return op.all(*(op.equal(v, op.const(1, v.dtype)) for v in self.vars))

    @property
    def contiguous(self) -> bool:
        """Whether every access the fast path improves becomes contiguous there."""
        return all(a.contiguous for a in self.fast)


@attrs.frozen(eq=False)
class _Strided:
    """An access of the loop with a runtime stride: its coefficients per vectorized var
    and dimension, and the vars (innermost last) whose flat stride decides contiguity."""

    access: Access
    coeffs: dict  # id(loop var) -> [coefficient of each dimension]
    innermost: Var
    vars: tuple  # the scalar vars its coefficients use, in order of appearance


def plan_versioning(loop: For, analyzer: Analyzer, outer_loop_vars: set[int]) -> StridePlan:
    """What to version ``loop`` (a vectorized loop, with the vectorized loops inside it)
    on; ``analyzer`` knows the enclosing loops' ranges and conditions, ``outer_loop_vars``
    holds the ids of the enclosing loops' vars."""
    bound_inside = _bound_inside(loop)
    strided, refused = _strided_accesses(loop, analyzer, bound_inside, outer_loop_vars)
    if not strided:
        return StridePlan(reason="; ".join(dict.fromkeys(refused)))
    candidates = _candidates(strided, bound_inside, outer_loop_vars)
    not_one = [v for v in candidates
               if analyzer.can_prove(op.not_equal(v, op.const(1, v.dtype)))]
    # Known not to be 1: the general path of an earlier versioning, or the user's own check.
    candidates = [v for v in candidates if all(v is not w for w in not_one)]
    refused += [f"{v.name} != 1 here" for v in not_one]
    best = _best_choice(strided, candidates[:MAX_CANDIDATES], analyzer)
    if best is None:
        reasons = list(dict.fromkeys(refused))
        if candidates:
            reasons.append(f"no access gets a stride of at most {MAX_FAST_STRIDE} with "
                           f"{' and '.join(v.name for v in candidates)} set to 1")
        return StridePlan(reason="; ".join(reasons))
    chosen, fast = best
    known = analyzer.can_prove(StridePlan(chosen).condition)
    return StridePlan(chosen, fast, known=known)


def _strided_accesses(loop: For, analyzer: Analyzer, bound_inside: set[int],
                      outer_loop_vars: set[int]) -> tuple[list, list[str]]:
    """The accesses of ``loop`` with a stride that is not a constant, and why the stride
    vars of some cannot be versioned on."""
    strided, refused = [], []
    for access in AccessCollector(loop.loop_var, analyzer).collect(loop.body):
        entry = _strided(loop, access, analyzer)
        if isinstance(entry, str):  # a stride that reads memory: not a var to test
            refused.append(f"the stride of {shown(access, analyzer.simplify)} {entry}")
            continue
        if entry is None:
            continue
        strided.append(entry)
        for v in entry.vars:
            why = _why_not_versionable(v, bound_inside, outer_loop_vars)
            if why:
                refused.append(f"the stride of {shown(access, analyzer.simplify)} uses {why}")
    return strided, refused


def _candidates(strided: list, bound_inside: set[int], outer_loop_vars: set[int]) -> list[Var]:
    """The stride vars that may be versioned on, each once, in order of appearance."""
    candidates: list[Var] = []
    for entry in strided:
        for v in entry.vars:
            if not _why_not_versionable(v, bound_inside, outer_loop_vars) and all(
                    v is not c for c in candidates):
                candidates.append(v)
    return candidates


def _strided(loop: For, access: Access, analyzer: Analyzer) -> _Strided | str | None:
    """``access`` with its coefficients, when one of them is not a constant; else None,
    or why a stride that is not a constant cannot be versioned on."""
    if access.indices is None or access.buffer is None:
        return None
    vectorized = [loop.loop_var] + [r.loop.loop_var for r in access.loops
                                    if r.loop.kind == ForKind.VECTORIZED]
    coeffs, symbolic = {}, []
    for v in vectorized:
        row = []
        for index in access.indices:
            c = linear_coefficient(index, v)
            if c is None:  # not affine: neither a ramp nor made one by a stride of 1
                return None
            c = analyzer.simplify(c)
            if not isinstance(c, IntImm):
                symbolic.append(c)
            row.append(c)
        coeffs[id(v)] = row
    if not symbolic:
        return None
    if any(_reads_memory(c) for c in symbolic):
        return "reads memory"
    return _Strided(access, coeffs, vectorized[-1], tuple(used_vars(symbolic)))


def _best_choice(strided: list[_Strided], candidates: list[Var],
                 analyzer: Analyzer) -> tuple[tuple, tuple] | None:
    """The subset of ``candidates`` (at most MAX_VERSIONED_VARS) that regularizes the most
    accesses (then the most contiguous ones), the fewer vars the better; with the accesses
    it regularizes. None: no subset regularizes any access."""
    best, best_key = None, None
    for size in range(1, MAX_VERSIONED_VARS + 1):
        for chosen in itertools.combinations(candidates, size):
            fast = tuple(f for f in (_fast_access(e, chosen, analyzer) for e in strided)
                         if f is not None)
            key = (len(fast), sum(f.contiguous for f in fast))
            if fast and (best_key is None or key > best_key):
                best, best_key = (chosen, fast), key
    return best


def _fast_access(entry: _Strided, chosen: tuple, analyzer: Analyzer) -> FastAccess | None:
    """How ``entry`` looks with the ``chosen`` vars set to 1: its flat stride in the
    innermost vectorized var, if every flat stride is then a constant and that one at most
    MAX_FAST_STRIDE; else None."""
    ones = {v: op.const(1, v.dtype) for v in chosen}
    strides = _buffer_strides(entry.access.buffer)
    innermost = None
    for var_id, row in entry.coeffs.items():
        flat = op.const(0, "int64")
        for c, stride in zip(row, strides):
            c = op.cast("int64", substitute(c, ones))
            flat = op.add(flat, op.mul(c, op.cast("int64", stride)))
        flat = analyzer.simplify(flat)
        if not isinstance(flat, IntImm):
            return None
        if var_id == id(entry.innermost):
            innermost = flat.value
    if abs(innermost) > MAX_FAST_STRIDE:
        return None
    return FastAccess(shown(entry.access, analyzer.simplify), innermost)


def _buffer_strides(buffer) -> list[PrimExpr]:
    if buffer.strides:
        return list(buffer.strides)
    strides, size = [], op.const(1, "int64")
    for extent in reversed(buffer.shape):
        strides.insert(0, size)
        size = op.mul(size, op.cast("int64", extent))
    return strides


def _why_not_versionable(v: Var, bound_inside: set[int], outer_loop_vars: set[int]) -> str:
    """Why the stride var ``v`` cannot be versioned on ("" when it can)."""
    if id(v) in bound_inside:
        return f"{v.name}, which is bound inside the loop"
    if id(v) in outer_loop_vars:
        return f"{v.name}, the var of an enclosing loop"
    if not str(v.dtype).startswith(("int", "uint")) or "x" in str(v.dtype):
        return f"{v.name}, which is not a scalar integer"
    return ""


def _bound_inside(loop: For) -> set[int]:
    """The ids of the vars the loop (nest) binds: its loop vars, lets, allocations."""
    found = {id(loop.loop_var)}

    def visit(n) -> None:
        if isinstance(n, For):
            found.add(id(n.loop_var))
        elif isinstance(n, (LetStmt, Let)):
            found.add(id(n.var))
        elif isinstance(n, Allocate):
            found.add(id(n.buffer_var))

    post_order_visit(loop.body, visit)
    return found


def _reads_memory(e: PrimExpr) -> bool:
    found = []
    post_order_visit(e, lambda n: found.append(n) if isinstance(n, BufferLoad) else None)
    return bool(found)


__all__ = [
    "MAX_FAST_STRIDE",
    "MAX_VERSIONED_VARS",
    "FastAccess",
    "StridePlan",
    "plan_versioning",
]
