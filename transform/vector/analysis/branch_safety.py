"""If-conversion, the analysis: may this ``if`` become straight-line code, and if not, why.

``transform.IfConvertVectorLoops`` (transform/vector/if_convert_vector_loops.py) rewrites; this
module only answers questions about the IR, so the rules are in one place:

- ``why_not_convertible(node)``: the hazard that keeps an ``if`` as it is, or
  None. Converting runs both branches' expressions on every iteration, so a
  branch must contain nothing whose *execution* matters besides its stores
  and loads: no loop, while, allocation, assert or attribute statement, no
  call with side effects (``tir.address_of`` and impure extern calls
  included), and only scalar accesses (a mask is one bool per iteration).
- ``is_in_bounds(load, analyzer)``: the load reads an element inside its
  buffer's declared shape on *every* iteration of the enclosing loops, so it
  may stay unmasked: reading an in-bounds element has no effect.
- ``divisor_needs_guard(node, analyzer)``: an integer division whose divisor
  may be 0 or -1 (``INT_MIN // -1`` overflows), which would trap on an
  iteration the serial program does not divide on.
- ``same_location_stores(node)``: ``if c: A[k] = x else: A[k] = y`` (one store
  each, same element): one store of ``Select(c, x, y)``.
- ``condition_is_clobbered(node)``: the condition reads a buffer the branches
  write, so it must be evaluated once (a let) rather than in every predicate.

Each ``if`` met gets a ``VectorizeRemark`` (pass ``IfConvertVectorLoops``).
"""

from __future__ import annotations

from tir import dtype as dt
from tir import op
from tir.arith import Analyzer
from tir.expr import BufferLoad, Call, Div, FloorDiv, FloorMod, IntImm, Mod, PrimExpr
from tir.functor import post_order_visit
from tir.intrin import is_pure
from tir.stmt import (
    Allocate,
    AssertStmt,
    AttrStmt,
    BufferStore,
    For,
    IfThenElse,
    Stmt,
    While,
)
from tir.structural import structural_equal

#: Integer divisions: they trap (or are undefined) for a zero divisor and for INT_MIN // -1.
INT_DIVISIONS = (Div, Mod, FloorDiv, FloorMod)


_STMT_HAZARDS = {
    For: lambda s: "the branch contains a loop",
    While: lambda s: "the branch contains a while loop",
    Allocate: lambda s: f"the branch allocates {s.buffer_var.name}",
    AssertStmt: lambda s: "the branch contains an assert",
    AttrStmt: lambda s: f"the branch contains an attribute statement ({s.attr_key})",
}


def why_not_convertible(node: IfThenElse) -> str | None:
    """The hazard that keeps ``node`` an ``if`` (see the module docstring), or None."""
    problems: list[str] = []

    def check(n) -> None:
        hazard = _STMT_HAZARDS.get(type(n))
        if hazard is not None:
            problems.append(hazard(n))
        elif isinstance(n, Call) and not is_pure(n.op):
            problems.append(_impure_call(n))
        elif isinstance(n, (BufferLoad, BufferStore)) and _is_vector_access(n):
            problems.append(f"the branch has a vector access to {n.buffer.name}")

    post_order_visit(node.condition, check)
    if problems:  # inlined into every predicate, the condition would run more than once
        return problems[0].replace("the branch", "the condition", 1)
    for branch in (node.then_case, node.else_case):
        if branch is not None:
            post_order_visit(branch, check)
    return problems[0] if problems else None


def _impure_call(call: Call) -> str:
    if call.op == "tir.address_of":
        return "the branch takes an address (tir.address_of)"
    if call.op == "tir.call_extern" and call.args:
        name = getattr(call.args[0], "value", "?")
        return f"the branch calls extern function {name!r}, which may have side effects"
    return f"the branch calls {call.op}, which has side effects"


def _is_vector_access(node) -> bool:
    dtype = node.dtype if isinstance(node, BufferLoad) else node.value.dtype
    return dt.DataType(dtype).is_vector


def is_in_bounds(load: BufferLoad, analyzer: Analyzer) -> bool:
    """Whether every index of ``load`` is provably inside its buffer's declared shape.

    ``analyzer`` knows the ranges of the enclosing loops (and the conditions
    that hold on every iteration); it must not be told the condition of the
    ``if`` being converted: the load runs on iterations where it is false.
    """
    for index, extent in zip(load.indices, load.buffer.shape):
        if not analyzer.can_prove(op.greater_equal(index, op.const(0, index.dtype))):
            return False
        if not analyzer.can_prove(op.less(index, extent)):
            return False
    return True


def divisor_needs_guard(node: PrimExpr, analyzer: Analyzer) -> bool:
    """Whether integer division ``node`` may divide by 0 or by -1 (``INT_MIN // -1``)."""
    if not isinstance(node, INT_DIVISIONS) or not dt.DataType(node.dtype).is_integer:
        return False  # float division never traps: x / 0 is IEEE inf or NaN
    divisor = node.b
    if isinstance(divisor, IntImm):
        return divisor.value == 0 or divisor.value == -1 and dt.DataType(node.dtype).is_int
    return not analyzer.can_prove(op.greater(divisor, op.const(0, divisor.dtype)))


def same_location_stores(node: IfThenElse) -> tuple[BufferStore, BufferStore] | None:
    """The two stores of ``if c: A[k] = x else: A[k] = y`` (nothing else in either branch)."""
    then, other = node.then_case, node.else_case
    if not (isinstance(then, BufferStore) and isinstance(other, BufferStore)):
        return None
    if then.predicate is not None or other.predicate is not None:
        return None
    if then.buffer is not other.buffer or then.value.dtype != other.value.dtype:
        return None
    if not all(structural_equal(a, b) for a, b in zip(then.indices, other.indices)):
        return None
    return then, other


def condition_is_clobbered(node: IfThenElse) -> bool:
    """Whether the branches of ``node`` store to a buffer its condition reads."""
    read: set[int] = set()
    post_order_visit(node.condition, lambda n: read.add(id(n.buffer.data))
                     if isinstance(n, BufferLoad) else None)
    if not read:
        return False
    written: list[Stmt] = []

    def check(n) -> None:
        if isinstance(n, BufferStore) and id(n.buffer.data) in read:
            written.append(n)

    for branch in (node.then_case, node.else_case):
        if branch is not None:
            post_order_visit(branch, check)
    return bool(written)


__all__ = [
    "INT_DIVISIONS",
    "condition_is_clobbered",
    "divisor_needs_guard",
    "is_in_bounds",
    "same_location_stores",
    "why_not_convertible",
]
