"""An integer index as a linear form in some vars (TVM: ``arith/detect_linear_equation.cc``
``DetectLinearEquation``; Halide: ``Solve.h``).

``linear_form(e, vars)`` reads ``e`` as

    sum(coeff_v * v  for v in vars) + const + sum(scale * term)

with integer coefficients: ``const`` collects the integer constants and each
``term`` is a part of ``e`` that uses none of ``vars`` (a parameter, a load, a
product of parameters), kept with the integer it is multiplied by. The reading
is syntactic, as the vectorizer's dependence tests need: ``Add``, ``Sub``, a
``Mul`` by an integer constant (or a broadcast one) and a widening signed cast
are looked through; anything else that uses a var (a product of two vars, a
``floordiv``, a ``Let``, a ``Ramp``) makes the form None.

``linear_coefficient(e, var)`` answers the symbolic question for one var: the
coefficient of ``var`` when ``e`` is linear in it with any factor free of
``var``, as an expression (``b + (i + 1) * s`` gives ``s`` for ``i``).
"""

from __future__ import annotations

from collections.abc import Collection

import attrs

from .. import dtype as dt
from .. import op
from ..expr import Add, Broadcast, Cast, IntImm, Mul, PrimExpr, Sub, Var
from ..functor import ExprVisitor
from .var_use import uses_a_var, uses_any_var, uses_var, var_ids


@attrs.frozen(eq=False)
class LinearForm:
    """``sum(coeffs[id(v)] * v) + const + sum(scale * term for scale, term in terms)``.

    ``coeffs`` keeps a var whose coefficient cancelled to 0 (``i - i``), in the
    order the vars first occur; ``terms`` are the parts free of the vars.
    """

    coeffs: dict  # id(var) -> int
    const: int
    terms: tuple  # (scale: int, term: PrimExpr)

    def coeff(self, var: Var) -> int:
        """The coefficient of ``var`` (0 when it does not occur)."""
        return self.coeffs.get(id(var), 0)

    @property
    def is_constant_offset(self) -> bool:
        """Whether the part free of the vars is an integer constant (no terms)."""
        return not self.terms

    def plus(self, other: LinearForm, scale: int = 1) -> LinearForm:
        """``self + scale * other``."""
        coeffs = dict(self.coeffs)
        for key, c in other.coeffs.items():
            coeffs[key] = coeffs.get(key, 0) + scale * c
        terms = self.terms + tuple((scale * s, t) for s, t in other.terms)
        return LinearForm(coeffs, self.const + scale * other.const, terms)

    def scaled(self, factor: int) -> LinearForm:
        """``factor * self``."""
        return LinearForm({key: c * factor for key, c in self.coeffs.items()},
                          self.const * factor, tuple((s * factor, t) for s, t in self.terms))


def linear_form(e: PrimExpr, vars: Collection | None = None) -> LinearForm | None:
    """``e`` as a ``LinearForm`` in ``vars`` (``Var``s or their ids; None: every var), or None.

    >>> i, n = tir.Var("i"), tir.Var("n")
    >>> linear_form((i + 1) * 4 - n, [i])   # coeffs {id(i): 4}, const 4, terms ((-1, n),)
    """
    return _FormReader(None if vars is None else var_ids(vars)).visit_expr(e)


class _FormReader(ExprVisitor):
    """``linear_form``'s reading, one method per node kind it looks through."""

    def __init__(self, ids: Collection[int] | None):
        self.ids = ids  # None: every var is one of the form's vars

    def generic_visit(self, e: PrimExpr) -> LinearForm | None:
        """A part the form does not look into: a term when it uses none of the vars."""
        uses = uses_a_var(e) if self.ids is None else uses_any_var(e, self.ids)
        return None if uses else LinearForm({}, 0, ((1, e),))

    def visit_var(self, e: Var) -> LinearForm:
        if self.ids is None or id(e) in self.ids:
            return LinearForm({id(e): 1}, 0, ())
        return LinearForm({}, 0, ((1, e),))

    def visit_int_imm(self, e: IntImm) -> LinearForm:
        return LinearForm({}, e.value, ())

    def visit_add(self, e: Add) -> LinearForm | None:
        return self._combine(e, 1)

    def visit_sub(self, e: Sub) -> LinearForm | None:
        return self._combine(e, -1)

    def _combine(self, e: Add | Sub, sign: int) -> LinearForm | None:
        a, b = self.visit_expr(e.a), self.visit_expr(e.b)
        return None if a is None or b is None else a.plus(b, sign)

    def visit_mul(self, e: Mul) -> LinearForm | None:
        # the constant factor is looked for on the right first, then on the left
        const, other = int_const(e.b), e.a
        if const is None:
            const, other = int_const(e.a), e.b
        if const is None:
            return self.generic_visit(e)
        inner = self.visit_expr(other)
        return None if inner is None else inner.scaled(const)

    def visit_cast(self, e: Cast) -> LinearForm | None:
        if not is_widening_int_cast(e):
            return self.generic_visit(e)
        return self.visit_expr(e.value)


def linear_coefficient(e: PrimExpr, var: Var) -> PrimExpr | None:
    """The coefficient of ``var`` in ``e`` when ``e`` is affine in it (any expression not
    using ``var`` may multiply it), else None: ``b + (i + 1) * s`` gives ``s`` for ``i``.

    The coefficient is built with ``tir.op``'s folding arithmetic, in ``e``'s dtype.
    """
    return _CoefficientReader(var).visit_expr(e)


class _CoefficientReader(ExprVisitor):
    """``linear_coefficient``'s reading: the coefficient of one var, symbolic."""

    def __init__(self, var: Var):
        self.var = var

    def visit_expr(self, e: PrimExpr) -> PrimExpr | None:
        if not uses_var(e, self.var):
            return op.const(0, e.dtype)
        return super().visit_expr(e)

    def generic_visit(self, e: PrimExpr) -> None:
        return None  # uses the var in a way that is not linear

    def visit_var(self, e: Var) -> PrimExpr:
        return op.const(1, e.dtype)  # the var itself: a var that is not ``var`` is a 0 above

    def visit_add(self, e: Add) -> PrimExpr | None:
        a, b = self.visit_expr(e.a), self.visit_expr(e.b)
        return None if a is None or b is None else op.add(a, b)

    def visit_sub(self, e: Sub) -> PrimExpr | None:
        a, b = self.visit_expr(e.a), self.visit_expr(e.b)
        return None if a is None or b is None else op.sub(a, b)

    def visit_mul(self, e: Mul) -> PrimExpr | None:
        for x, factor in ((e.a, e.b), (e.b, e.a)):
            if not uses_var(factor, self.var):
                inner = self.visit_expr(x)
                return None if inner is None else op.mul(inner, factor)
        return None

    def visit_cast(self, e: Cast) -> PrimExpr | None:
        if not is_widening_int_cast(e):
            return None
        inner = self.visit_expr(e.value)
        return None if inner is None else op.cast(e.dtype, inner)


def int_const(e: PrimExpr) -> int | None:
    """The value of an integer constant, or of a broadcast one; None for anything else."""
    if isinstance(e, Broadcast):
        e = e.value
    return e.value if isinstance(e, IntImm) else None


def is_widening_int_cast(e: Cast) -> bool:
    """A signed-int to signed-int cast that cannot change the value of an index."""
    src, dst = dt.DataType(e.value.dtype), dt.DataType(e.dtype)
    return src.type_code == dst.type_code == "int" and dst.bits >= src.bits


__all__ = ["LinearForm", "int_const", "is_widening_int_cast", "linear_coefficient",
           "linear_form"]
