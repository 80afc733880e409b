"""Dependence tests: can two accesses touch the same element under given constraints?

An index is split into an *affine form* over the loop vars,
``sum(coeff * var) + sum(free terms) + rest``: integer coefficients, a
``rest`` that does not depend on any loop var, and *free terms*
``coeff * t`` whose ``t`` takes any value in a range, on its own for each
access: the lanes of a vector index (``Ramp(base, stride, n)`` contributes
``stride * t`` with ``t`` in ``[0, n)``) and the parts that are not affine
but bounded (``floormod(e, 8)`` is some ``t`` in ``[0, 8)``). Two accesses
touch the same element when, in every dimension, the difference of their
indices is zero. With the vars of the two accesses as unknowns in known
ranges, that difference is a linear equation

    sum(c_k * x_k) + delta = 0,   x_k in [lo_k, hi_k]

which has no solution when ``0`` lies outside the range of the left side
(Banerjee's bounds test), when ``gcd(c_k)`` does not divide ``delta`` (the
GCD test), or, for small bounded ranges, when no combination of values
solves it. The tests only ever answer "no solution" when that is certain;
anything they cannot decide counts as a possible dependence.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable

import attrs

from tir import dtype as dt
from tir import op
from tir.analysis.linear_form import int_const, is_widening_int_cast
from tir.analysis.var_use import uses_any_var
from tir.expr import Add, Broadcast, Cast, IntImm, Mul, PrimExpr, Ramp, Sub, Var

from ..vectorizer.lanes import lanes

#: The bounds of a scalar int expression, or None when it is unbounded.
Bounder = Callable[[PrimExpr], "tuple[int, int] | None"]


@attrs.frozen
class Affine:
    """``sum(coeffs[id(var)] * var) + sum(c * t, t in [lo, hi] for free_terms) + rest``."""

    coeffs: dict
    free_terms: tuple  # (c, lo, hi): vector lanes and bounded non-affine parts
    rest: PrimExpr

    def coeff(self, var: Var) -> int:
        """The coefficient of ``var`` (0 when it does not occur)."""
        return self.coeffs.get(id(var), 0)


def affine(e: PrimExpr, loop_vars: set[int], bound: Bounder | None = None) -> Affine | None:
    """The affine form of index ``e`` over the vars whose ids are in ``loop_vars``, or None.

    ``bound`` gives the range of a part that is not affine in the loop vars
    (it becomes a free term); without it, or when unbounded, the form is None.
    """
    form = _affine(e, loop_vars, bound)
    if form is None and bound is not None:
        return _free(e, bound)
    return form


def _affine(e: PrimExpr, loop_vars: set[int], bound: Bounder | None) -> Affine | None:
    for cls in type(e).__mro__:  # SizeVar takes Var's rule
        rule = _AFFINE_RULES.get(cls)
        if rule is not None:
            return rule(e, loop_vars, bound)
    return _invariant(e, loop_vars)


def _invariant(e: PrimExpr, loop_vars: set[int]) -> Affine | None:
    """A scalar that no loop var touches is all ``rest``; anything else has no form."""
    if lanes(e) == 1 and not uses_any_var(e, loop_vars):
        return Affine({}, (), e)
    return None


def _var_form(e: Var, loop_vars: set[int], bound: Bounder | None) -> Affine:
    if id(e) in loop_vars:
        return Affine({id(e): 1}, (), op.const(0, e.dtype))
    return Affine({}, (), e)


def _const_form(e: IntImm, loop_vars: set[int], bound: Bounder | None) -> Affine:
    return Affine({}, (), e)


def _add_sub_form(e: Add | Sub, loop_vars: set[int], bound: Bounder | None) -> Affine | None:
    a, b = affine(e.a, loop_vars, bound), affine(e.b, loop_vars, bound)
    if a is None or b is None:
        return None
    return _combine(a, b, 1 if isinstance(e, Add) else -1)


def _mul_form(e: Mul, loop_vars: set[int], bound: Bounder | None) -> Affine | None:
    scaled = _scaled(e, loop_vars, bound)
    if scaled is None and lanes(e) == 1 and not uses_any_var(e, loop_vars):
        return Affine({}, (), e)  # a product of invariants, such as i * (vscale() * 4)
    return scaled


def _broadcast_form(e: Broadcast, loop_vars: set[int], bound: Bounder | None) -> Affine | None:
    return affine(e.value, loop_vars, bound)


def _cast_form(e: Cast, loop_vars: set[int], bound: Bounder | None) -> Affine | None:
    if is_widening_int_cast(e):
        return affine(e.value, loop_vars, bound)
    return _invariant(e, loop_vars)


def _free(e: PrimExpr, bound: Bounder) -> Affine | None:
    """A bounded part that is not affine (in any lane): one free term over its range."""
    element = dt.element_of(str(e.dtype))
    if not element.startswith(("int", "uint")):
        return None
    limits = bound(e)
    return None if limits is None else Affine({}, ((1, *limits),), op.const(0, element))


def _scaled(e: Mul, loop_vars: set[int], bound: Bounder | None) -> Affine | None:
    """``c * x`` or ``x * c`` with a constant ``c``: the form of ``x`` scaled by ``c``."""
    const, other = int_const(e.b), e.a
    if const is None:
        const, other = int_const(e.a), e.b
    inner = None if const is None else affine(other, loop_vars, bound)
    return None if inner is None else _combine(_zero_like(inner), inner, const)


def _ramp(e: Ramp, loop_vars: set[int], bound: Bounder | None) -> Affine | None:
    stride = int_const(e.stride)
    if stride is None or not isinstance(e.lanes, int):
        return None
    base = affine(e.base, loop_vars, bound)
    if base is None:
        return None
    return Affine(base.coeffs, base.free_terms + ((stride, 0, e.lanes - 1),), base.rest)


def _combine(a: Affine, b: Affine, scale: int) -> Affine:
    """``a + scale * b``."""
    coeffs = dict(a.coeffs)
    for key, c in b.coeffs.items():
        coeffs[key] = coeffs.get(key, 0) + scale * c
    free = a.free_terms + tuple((c * scale, lo, hi) for c, lo, hi in b.free_terms)
    return Affine(coeffs, free, add_scaled(a.rest, b.rest, scale))


def _zero_like(form: Affine) -> Affine:
    return Affine({}, (), op.const(0, form.rest.dtype))


def add_scaled(a: PrimExpr, b: PrimExpr, scale: int) -> PrimExpr:
    """``a + scale * b``, both scalars, in the wider of their int types."""
    if a.dtype != b.dtype:
        wide = "int64"
        a, b = op.cast(wide, a), op.cast(wide, b)
    if scale == 1:
        return op.add(a, b)
    if scale == -1:
        return op.sub(a, b)
    return op.add(a, op.mul(b, op.const(scale, b.dtype)))


# ---------------------------------------------------------------- the equation


@attrs.frozen
class Term:
    """``coeff * x`` with ``x`` in ``[lo, hi]`` (``None``: unbounded on that side)."""

    coeff: int
    lo: int | None
    hi: int | None


@attrs.frozen
class Delta:
    """The constant part of an equation: exactly ``value``, or somewhere in ``[lo, hi]``."""

    lo: int | None
    hi: int | None

    @property
    def exact(self) -> int | None:
        """The value when it is known exactly."""
        return self.lo if self.lo is not None and self.lo == self.hi else None


def may_be_zero(terms: Iterable[Term], delta: Delta) -> bool:
    """Whether ``sum(terms) + delta == 0`` may have a solution (False only when certain)."""
    terms = [t for t in terms if t.coeff != 0]
    low = sum((_low(t) for t in terms), 0.0)
    high = sum((_high(t) for t in terms), 0.0)
    d_lo = -math.inf if delta.lo is None else delta.lo
    d_hi = math.inf if delta.hi is None else delta.hi
    if low + d_lo > 0 or high + d_hi < 0:  # Banerjee: 0 is out of reach
        return False
    exact = delta.exact
    if exact is None or not terms:
        return True
    g = math.gcd(*(abs(t.coeff) for t in terms))
    if exact % g:  # GCD: the sum is a multiple of g
        return False
    return _has_solution(terms, exact)


#: How many combinations of values ``_has_solution`` tries at most.
_ENUMERATION_LIMIT = 1 << 14


def _has_solution(terms: list[Term], delta: int) -> bool:
    """Exactly whether ``sum(terms) + delta == 0`` has a solution, by trying every value of
    all vars but the widest (whose value is then solved for); True when there are too many."""
    if any(t.lo is None or t.hi is None for t in terms):
        return True
    terms = sorted(terms, key=lambda t: t.hi - t.lo)
    *tried, solved = terms
    if math.prod(t.hi - t.lo + 1 for t in tried) > _ENUMERATION_LIMIT:
        return True
    for values in itertools.product(*(range(t.lo, t.hi + 1) for t in tried)):
        rest = delta + sum(t.coeff * x for t, x in zip(tried, values))
        if rest % solved.coeff == 0 and solved.lo <= -rest // solved.coeff <= solved.hi:
            return True
    return False


def _low(t: Term) -> float:
    ends = (t.lo, t.hi) if t.coeff > 0 else (t.hi, t.lo)
    return -math.inf if ends[0] is None else t.coeff * ends[0]


def _high(t: Term) -> float:
    ends = (t.hi, t.lo) if t.coeff > 0 else (t.lo, t.hi)
    return math.inf if ends[0] is None else t.coeff * ends[0]


#: Node class -> its affine form (``_affine``); other nodes are invariant or have none.
_AFFINE_RULES = {Var: _var_form, IntImm: _const_form, Add: _add_sub_form, Sub: _add_sub_form,
                 Mul: _mul_form, Ramp: _ramp,
                 Broadcast: _broadcast_form, Cast: _cast_form}

