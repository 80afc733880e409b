"""Turning a condition into facts about variables, for ``Analyzer.constraint_scope``.

Understood: conjunctions (``a && b``), ``var < e``, ``var <= e``, ``var > e``,
``var >= e``, ``var == e`` (either side), with ``e``'s bound giving the limit;
any other expression compared with a constant (``1 <= a % 58``: a bound for
that expression, TVM's ``DetectBoundInfo``); and residues from
``floormod(var, c) == r``, ``truncmod(var, c) == r`` and ``var == r``
(TVM's modular ``EnterConstraint``). Every integer comparison is also remembered
as ``d <= 0``, so that a goal ``g <= 0`` follows when ``g - d`` is provably
at most 0 (``i < n`` proves ``i + 1 <= n`` and ``i - 4 < n``). Operands of a
type that wraps around (``uint8``, ``int16`` ...) are widened to ``int64``
first: ``uint8(a - b) <= 0`` says nothing about ``a <= b``; int32/int64
comparisons with constants near the type's limit are not used at all (the
difference could wrap).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

from .. import dtype as dt
from .. import op
from ..expr import EQ, GE, GT, LE, LT, And, FloorMod, IntImm, Mod, PrimExpr, Var
from ..functor import contains
from . import modular_set
from .const_int_bound import dtype_interval, wraps
from .facts import intersect


def conjuncts(cond: PrimExpr) -> Iterator[PrimExpr]:
    """The parts of a chain of ``And``."""
    stack = [cond]
    while stack:
        c = stack.pop()
        if type(c) is And:
            stack.extend((c.b, c.a))
        else:
            yield c


# For ``var OP e``: the var's new interval, given e's interval.
_LIMITS = {
    LT: lambda iv: (-math.inf, iv[1] - 1),
    LE: lambda iv: (-math.inf, iv[1]),
    GT: lambda iv: (iv[0] + 1, math.inf),
    GE: lambda iv: (iv[0], math.inf),
    EQ: lambda iv: iv,
}
_MIRROR = {LT: GT, LE: GE, GT: LT, GE: LE, EQ: EQ}


def add_constraint(analyzer: Any, cond: PrimExpr) -> None:
    """Record ``cond`` (assumed true) in the analyzer's facts."""
    facts = analyzer.facts
    for part in conjuncts(cond):
        facts.constraints.append(part)
        _add_residue(facts, part)
        cls = type(part)
        if cls not in _LIMITS:
            continue
        for var, other, kind in ((part.a, part.b, cls), (part.b, part.a, _MIRROR[cls])):
            if var.dtype != other.dtype or type(var) is IntImm:
                continue
            if isinstance(var, Var):
                limit = _LIMITS[kind](analyzer.bound_analyzer.interval(other))
                old = facts.bounds.get(var, dtype_interval(var.dtype))
                facts.bounds[var] = intersect(old, limit)
            elif type(other) is IntImm and dt.DataType(var.dtype).is_scalar:
                facts.expr_bounds.append((var, _LIMITS[kind]((other.value, other.value))))
    facts.changed()


def _add_residue(facts: Any, part: PrimExpr) -> None:
    """``var == r`` or ``var % c == r`` (floor or trunc: both keep var's residue modulo c)."""
    if type(part) is not EQ:
        return
    lhs, rhs = part.a, part.b
    if type(lhs) is IntImm:
        lhs, rhs = rhs, lhs
    if type(rhs) is not IntImm:
        return
    if isinstance(lhs, Var):
        var, new = lhs, (0, rhs.value)
    elif (type(lhs) in (FloorMod, Mod) and isinstance(lhs.a, Var) and type(lhs.b) is IntImm
          and lhs.b.value != 0):
        var, new = lhs.a, modular_set.normalize(lhs.b.value, rhs.value)
    else:
        return
    if not dt.DataType(var.dtype).is_integer:
        return
    old = facts.mods.get(var)
    facts.mods[var] = new if old is None else modular_set.intersect(old, new)


def as_nonpositive(cond: PrimExpr) -> list[PrimExpr]:
    """Expressions ``d`` with ``cond <=> all(d <= 0)`` for an integer comparison, else []."""
    cls = type(cond)
    if cls not in _LIMITS or not dt.DataType(cond.a.dtype).is_integer:
        return []
    operands = _without_wraparound(cond.a, cond.b)
    if operands is None:
        return []
    a, b = operands
    if cls is LT:
        return [op.add(op.sub(a, b), 1)]
    if cls is LE:
        return [op.sub(a, b)]
    if cls is GT:
        return [op.add(op.sub(b, a), 1)]
    if cls is GE:
        return [op.sub(b, a)]
    return [op.sub(a, b), op.sub(b, a)]


def _without_wraparound(a: PrimExpr, b: PrimExpr) -> tuple[PrimExpr, PrimExpr] | None:
    """``a`` and ``b`` in a type where ``a - b`` is exact, or None.

    Signed 32/64-bit operands stay as they are (index arithmetic, which the
    program may assume does not overflow) unless a constant in them is near the
    type's limit: the difference ``a - b + 1`` is the analyzer's own, and
    ``v + 2147483647 < -3`` must not fold to something <= 0 by wrapping.
    Narrower and unsigned operands are widened to int64.
    """
    t = dt.DataType(a.dtype)
    if not wraps(a.dtype):
        limit = 2 ** (t.bits - 4)  # room for the sum of a few such constants
        if _has_huge_constant(a, limit) or _has_huge_constant(b, limit):
            return None
        return a, b
    if t.bits >= 64:
        return None
    wide = str(dt.DataType(dt.INT, 64, t.lanes, t.is_scalable))
    return op.cast(wide, a), op.cast(wide, b)


def _has_huge_constant(e: PrimExpr, limit: int) -> bool:
    return contains(e, lambda n: isinstance(n, IntImm) and abs(n.value) > limit)


def prove_from_constraints(analyzer: Any, cond: PrimExpr) -> bool:
    """``cond`` follows from one constraint in scope by a constant-bounded difference."""
    goals = as_nonpositive(cond)
    if len(goals) != 1 or not analyzer.facts.constraints:
        return False
    for known in analyzer.facts.constraints:
        for d in as_nonpositive(known):
            if d.dtype != goals[0].dtype:
                continue
            gap = analyzer.simplify(op.sub(goals[0], d))
            if analyzer.bound_analyzer.interval(gap)[1] <= 0:
                return True
    return False
