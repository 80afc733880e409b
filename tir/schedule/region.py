"""Region inference for ``compute_at``: which part of a buffer the blocks under a loop touch,
and which iter-var values of a moved block cover it.

Two steps, as in TVM's ``compute_at.cc``:

1. ``relaxed_region``: the accesses of a block (indices in its iter vars) are
   rewritten in the loop vars through the block's bindings, and the loops
   strictly below the target loop are relaxed over their ranges with interval
   sets. What remains is a box per dimension in the vars of the target loop
   and the loops above it.
2. ``solve_iter_domains``: for each buffer the moved block provides (writes,
   or reads for ``reverse_compute_at``), the provided index of one block
   instance (``v``, ``v * c``, ``c * v + e`` in one iter var ``v``) is inverted
   to the iter-var values that cover the required box. Iter vars no index
   constrains keep their whole domain. Each result carries the iter var's
   domain as a bound, which the caller turns into a predicate when the
   analyzer cannot prove the values stay inside it.
"""

from __future__ import annotations

from typing import Any

from .. import op
from ..analysis.var_use import uses_any_var
from ..arith import Analyzer
from ..arith.int_set import IntervalSet, union
from ..block import BlockRealize
from ..buffer import Buffer
from ..expr import Add, IntImm, Mul, PrimExpr, Var
from ..functor import substitute
from ..range import Range
from ..stmt import For
from .analysis import block_accesses

Region = list  # one IntervalSet per buffer dimension


def relaxed_region(realize: BlockRealize, loops: list[For], buffer: Buffer, is_write: bool,
                   ana: Analyzer) -> Region | None:
    """The box of ``buffer`` that ``realize``'s loads (or stores) touch while ``loops`` run.

    ``loops`` are the loops between the target loop and the block (outer
    first); their vars are relaxed, every other var stays symbolic. None when
    the block does not access ``buffer`` that way.
    """
    binding = {iv.var: value for iv, value in zip(realize.block.iter_vars, realize.iter_values)}
    doms = _loop_domains(loops, ana)
    boxes = []
    for acc in block_accesses(realize.block):
        if acc.buffer is not buffer or acc.is_write != is_write:
            continue
        box = [ana.int_set(substitute(i, binding), doms) for i in acc.indices]
        boxes.append(box)
    return union_regions(boxes, ana) if boxes else None


def _loop_domains(loops: list[For], ana: Analyzer) -> dict:
    """Each loop var's interval in the vars above ``loops`` (an extent may use an outer var)."""
    doms: dict = {}
    for loop in loops:
        lo = ana.int_set(loop.min, doms)
        hi = ana.int_set(loop.min + loop.extent - 1, doms)
        doms[loop.loop_var] = IntervalSet(lo.min_value, hi.max_value)
    return doms


def union_regions(boxes: list[Region], ana: Analyzer) -> Region:
    """The smallest box holding every box (dimension-wise interval union)."""
    return [union([b[d] for b in boxes], ana) for d in range(len(boxes[0]))]


def provided_indices(realize: BlockRealize, buffer: Buffer, is_write: bool) -> list | None:
    """The indices (in iter vars) at which one instance of the block accesses ``buffer``.

    None when the accesses differ (a stencil reads several points): the caller
    then cannot invert them.
    """
    found = None
    for acc in block_accesses(realize.block):
        if acc.buffer is not buffer or acc.is_write != is_write:
            continue
        if found is None:
            found = acc.indices
        elif len(found) != len(acc.indices) or not all(
                op_same(a, b) for a, b in zip(found, acc.indices)):
            return None
    return list(found) if found is not None else None


def op_same(a: PrimExpr, b: PrimExpr) -> bool:
    """Structural equality of two index expressions."""
    from ..structural import structural_equal

    return structural_equal(a, b)


def _linear(e: PrimExpr, iter_vars: set[int]) -> tuple[Var, int, PrimExpr] | None:
    """``e`` as ``c * v + rest``: ``v`` an iter var, ``c > 0``, ``rest`` free of iter vars."""
    if isinstance(e, Var) and id(e) in iter_vars:
        return e, 1, op.const(0, e.dtype)
    if isinstance(e, Mul):
        for v, c in ((e.a, e.b), (e.b, e.a)):
            if isinstance(v, Var) and id(v) in iter_vars and isinstance(c, IntImm) and c.value > 0:
                return v, c.value, op.const(0, v.dtype)
    if isinstance(e, Add):
        for x, rest in ((e.a, e.b), (e.b, e.a)):
            inner = _linear(x, iter_vars)
            if inner is not None and not uses_any_var(rest, iter_vars):
                return inner[0], inner[1], inner[2] + rest
    return None


class CannotSolve(Exception):
    """An index the solver cannot invert (the message says which)."""


def solve_iter_domains(iter_vars: list, provided: dict, required: dict,
                       ana: Analyzer) -> list[IntervalSet | None]:
    """For each iter var, the values that cover every required box (None: unconstrained).

    ``provided`` maps a buffer to the indices of one block instance, ``required``
    the same buffer to the box to cover. Raises ``CannotSolve`` for an index
    that is not ``c * v + e`` of one iter var.
    """
    ids = {id(iv.var) for iv in iter_vars}
    found: dict[int, list[IntervalSet]] = {}
    for key, indices in provided.items():
        box = required.get(key)
        if box is None:
            continue
        for index, need in zip(indices, box):
            if not uses_any_var(index, ids):
                continue  # a constant index: one instance provides it whatever the loops
            lin = _linear(index, ids)
            if lin is None:
                raise CannotSolve(f"the index {index} is not an iter var times a positive "
                                  "constant plus an offset")
            v, c, rest = lin
            if not (need.has_lower_bound() and need.has_upper_bound()):
                found.setdefault(id(v), []).append(IntervalSet.everything())
                continue  # nothing known: the whole domain (the caller clips to it)
            lo = op.floordiv(need.min_value - rest, c)
            hi = op.floordiv(need.max_value - rest, c)
            found.setdefault(id(v), []).append(IntervalSet(ana.simplify(lo), ana.simplify(hi)))
    out: list[IntervalSet | None] = []
    for iv in iter_vars:
        sets = found.get(id(iv.var))
        out.append(union(sets, ana) if sets else None)
    return out


def cover_range(s: IntervalSet, ana: Analyzer) -> Range:
    """``[s.min, s.max]`` as a simplified ``Range``."""
    lo = ana.simplify(s.min_value)
    return Range.from_min_extent(lo, ana.simplify(s.max_value - s.min_value + 1))


def within(inner: IntervalSet, outer: IntervalSet, ana: Analyzer) -> bool:
    """The analyzer proves ``inner`` lies inside ``outer``."""
    return bool(ana.can_prove(inner.min_value >= outer.min_value)
                and ana.can_prove(inner.max_value <= outer.max_value))


__all__: list[Any] = ["relaxed_region", "provided_indices", "solve_iter_domains", "cover_range",
                      "within", "union_regions", "CannotSolve"]
