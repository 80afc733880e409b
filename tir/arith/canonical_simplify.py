"""The canonical simplifier: integer expressions as linear forms ``sum(coeff * atom) + const``.

Like terms are collected across sums (``x*2 + x - 3*x`` is ``0``), products
by constants distribute, and ``floordiv``/``floormod`` of a linear form by a
positive constant drop the terms the divisor divides and vanish where the
bounds or residues decide them. A ``floordiv(X, c) * c`` next to
``floormod(X, c)`` merges back into ``X``. The result is rebuilt in a stable
order: atoms sorted by kind and variable names, positive terms first, the
constant last. Non-linear parts (``x * y``, ``min``, loads) are atoms whose
operands are simplified the same way.
"""

from __future__ import annotations

import math
from typing import Any

from .. import dtype as dt
from ..expr import (
    Add,
    Div,
    FloatImm,
    FloorDiv,
    FloorMod,
    IntImm,
    Mod,
    Mul,
    PrimExpr,
    Sub,
    Var,
)
from ..functor import ExprMutator, ExprVisitor
from ..node import init_fields
from .rewrite_simplify import index_like
from .rule_helpers import floor_quotient


class _Unrepresentable(Exception):
    """A coefficient of the form does not fit the dtype."""


class Linear:
    """``sum(coeff * atom) + const``; ``terms`` maps an atom's key to ``[atom, coeff]``."""

    __slots__ = ("const", "terms")

    def __init__(self, const: int = 0) -> None:
        self.terms: dict = {}
        self.const = const

    def add_term(self, key: Any, atom: PrimExpr, coeff: int) -> None:
        """Add ``coeff * atom``."""
        slot = self.terms.get(key)
        if slot is None:
            if coeff:
                self.terms[key] = [atom, coeff]
            return
        slot[1] += coeff
        if slot[1] == 0:
            del self.terms[key]

    def plus(self, other: Linear, scale: int = 1) -> Linear:
        """``self + scale * other`` (in place; returns self)."""
        for key, (atom, coeff) in other.terms.items():
            self.add_term(key, atom, coeff * scale)
        self.const += other.const * scale
        return self

    def scaled(self, k: int) -> Linear:
        """A new form ``k * self``."""
        return Linear().plus(self, k)

    def copy(self) -> Linear:
        """A new, equal form."""
        return Linear().plus(self)


class _Order:
    """Sort keys by kind and variable names (stable across runs), cached per node."""

    def __init__(self) -> None:
        self._orders: dict[int, tuple] = {}

    def order(self, e: PrimExpr) -> tuple:
        hit = self._orders.get(id(e))
        if hit is not None and hit[0] is e:
            return hit[1]
        key = self._make(e)
        if len(self._orders) > 200_000:
            self._orders.clear()
        self._orders[id(e)] = (e, key)
        return key

    def _make(self, e: Any) -> tuple:
        if isinstance(e, Var):
            return (0, e.name, ())
        if type(e) is IntImm or type(e) is FloatImm:
            return (2, f"{e.dtype}:{e.value}", ())
        parts = []
        for name in init_fields(type(e)):
            v = getattr(e, name)
            if isinstance(v, PrimExpr):
                parts.append(self.order(v))
            elif isinstance(v, tuple):
                parts.append(tuple(self.order(i) if isinstance(i, PrimExpr) else (3, repr(i), ())
                                   for i in v))
            else:
                parts.append((3, repr(v) if not hasattr(v, "name") else v.name, ()))
        return (1, f"{type(e).__name__}:{e.dtype}", tuple(parts))


def _is_scalar_int(e: PrimExpr) -> bool:
    """Scalar index-like integers get linear forms (see ``rewrite_simplify.is_int``)."""
    return dt.lanes_of(e.dtype) == 1 and index_like(e.dtype) and not dt.DataType(
        e.dtype).is_scalable


def _pos_const(e: PrimExpr) -> int | None:
    return e.value if type(e) is IntImm and e.value > 0 else None


class CanonicalSimplifier(ExprVisitor):
    """Turns expressions into linear forms and back; facts come from the owning Analyzer."""

    def __init__(self, analyzer: Any) -> None:
        self.facts = analyzer.facts
        self.bounds = analyzer.bound_analyzer
        self.mods = analyzer.modular_analyzer
        self._children = _Children(self)
        self.ids = analyzer.structure_ids
        self._orders = _Order()
        self._memo: dict[int, PrimExpr] = {}
        self._forms: dict[int, Linear] = {}
        self._epoch = -1

    def __call__(self, e: PrimExpr) -> PrimExpr:
        if self._epoch != self.facts.epoch or len(self._memo) + len(self._forms) > 200_000:
            self._memo.clear()
            self._forms.clear()
            self._epoch = self.facts.epoch
        return self.simplify(e)

    def simplify(self, e: PrimExpr) -> PrimExpr:
        """``e`` in canonical form (memoized by structure until the facts change)."""
        sid = self.ids.of(e)
        hit = self._memo.get(sid)
        if hit is not None:
            return hit
        if _is_scalar_int(e):
            try:
                out = self.rebuild(self.linear(e), e)
            except _Unrepresentable:
                out = e  # a constant would not fit the dtype: leave this subtree alone
        else:
            out = self._children.visit_expr_children(e)
        self._memo[sid] = out
        return out

    def linear(self, e: PrimExpr) -> Linear:
        """The linear form of a scalar integer expression (memoized: callers never mutate it)."""
        sid = self.ids.of(e)
        form = self._forms.get(sid)
        if form is None:
            form = self.visit_expr(e)
            self._forms[sid] = form
        return form

    def atom(self, e: PrimExpr) -> Linear:
        """The form ``1 * e``."""
        out = Linear()
        out.add_term(self.ids.of(e), e, 1)
        return out

    # ------------------------------------------------------------ expression -> form

    def generic_visit(self, e: PrimExpr) -> Linear:
        return self.atom(self._children.visit_expr_children(e))

    def visit_min(self, e) -> Linear:
        out = self._children.visit_expr_children(e)
        if self._orders.order(out.b) < self._orders.order(out.a):
            out = type(out)(out.b, out.a)  # min and max commute: one order for equal atoms
        return self.atom(out)

    visit_max = visit_min

    def visit_int_imm(self, e) -> Linear:
        return Linear(e.value)

    def visit_var(self, v) -> Linear:
        alias = self.facts.aliases.get(v)
        return self.atom(v) if alias is None else self.linear(alias)

    def visit_add(self, e) -> Linear:
        return self.linear(e.a).copy().plus(self.linear(e.b))

    def visit_sub(self, e) -> Linear:
        return self.linear(e.a).copy().plus(self.linear(e.b), -1)

    def visit_mul(self, e) -> Linear:
        a, b = self.linear(e.a), self.linear(e.b)
        if not a.terms:
            return b.scaled(a.const)
        if not b.terms:
            return a.scaled(b.const)
        x, y = self.rebuild(a, e.a), self.rebuild(b, e.b)
        if self._orders.order(y) < self._orders.order(x):
            x, y = y, x
        return self.atom(Mul(x, y))

    def visit_floor_div(self, e) -> Linear:
        c = _pos_const(e.b)
        if c is None:
            return self.generic_visit(e)
        return self._divide(self.linear(e.a), c, e.a, FloorDiv)

    def visit_floor_mod(self, e) -> Linear:
        c = _pos_const(e.b)
        if c is None:
            return self.generic_visit(e)
        return self._modulo(self.linear(e.a), c, e.a, FloorMod)

    def visit_div(self, e) -> Linear:
        c = _pos_const(e.b)
        if c is None or self.bounds.interval(e.a)[0] < 0:
            return self.generic_visit(e)
        return self._divide(self.linear(e.a), c, e.a, Div)  # trunc == floor when a >= 0

    def visit_mod(self, e) -> Linear:
        c = _pos_const(e.b)
        if c is None or self.bounds.interval(e.a)[0] < 0:
            return self.generic_visit(e)
        return self._modulo(self.linear(e.a), c, e.a, Mod)

    # ------------------------------------------------------------ division by constants

    def _divide(self, a: Linear, c: int, like: PrimExpr, kind: type) -> Linear:
        quotient, rest = Linear(), Linear(a.const)
        for key, (atom, coeff) in a.terms.items():
            if coeff % c == 0:  # (c*k*x + r) // c == k*x + r // c
                quotient.add_term(key, atom, coeff // c)
            else:
                rest.add_term(key, atom, coeff)
        if kind is Div and quotient.terms and not self._nonneg(rest, like):
            return self.atom(Div(self.rebuild(a, like), IntImm(like.dtype, c)))
        rest, c, _ = _reduce_gcd(rest, c)  # the dropped remainder never crosses a multiple
        iv = self.bounds.interval(self.rebuild(rest, like)) if rest.terms else (rest.const,) * 2
        k = floor_quotient(iv, c)
        if k is not None:
            quotient.const += k
            return quotient
        divisor = IntImm(like.dtype, c)
        return quotient.plus(self.atom(kind(self.rebuild(rest, like), divisor)))

    def _modulo(self, a: Linear, c: int, like: PrimExpr, kind: type) -> Linear:
        rest = Linear(a.const % c if kind is FloorMod else a.const)
        for key, (atom, coeff) in a.terms.items():
            if coeff % c:
                rest.add_term(key, atom, coeff)
        if kind is Mod and not self._nonneg(rest, like):
            return self.atom(Mod(self.rebuild(a, like), IntImm(like.dtype, c)))
        rest, c2, r = _reduce_gcd(rest, c)
        scale = c // c2  # floormod(g*B + r, g*c2) == g * floormod(B, c2) + r
        rest_expr = self.rebuild(rest, like)
        iv = self.bounds.interval(rest_expr) if rest.terms else (rest.const,) * 2
        k = floor_quotient(iv, c2)
        if k is not None:
            return rest.plus(Linear(-k * c2)).scaled(scale).plus(Linear(r))
        coeff, base = self.mods.mod(rest_expr)
        if coeff % c2 == 0:
            return Linear(base % c2 * scale + r)
        return self.atom(kind(rest_expr, IntImm(like.dtype, c2))).scaled(scale).plus(Linear(r))

    def _nonneg(self, form: Linear, like: PrimExpr) -> bool:
        return self.bounds.interval(self.rebuild(form, like))[0] >= 0

    # ------------------------------------------------------------ form -> expression

    def rebuild(self, form: Linear, like: PrimExpr) -> PrimExpr:
        """The expression of ``form`` in the dtype of ``like``."""
        form = self._merge_div_mod(form, like)
        dtype = like.dtype
        hi = dt.DataType(dtype).max_value()
        values = [c for _, c in form.terms.values()] + [form.const]
        if any(abs(v) > hi for v in values):
            raise _Unrepresentable(dtype)
        terms = sorted(form.terms.values(), key=lambda t: self._orders.order(t[0]))
        out = None
        for atom, coeff in terms:
            if coeff > 0:
                term = atom if coeff == 1 else Mul(atom, IntImm(dtype, coeff))
                out = term if out is None else Add(out, term)
        for atom, coeff in terms:
            if coeff < 0:
                term = atom if coeff == -1 else Mul(atom, IntImm(dtype, -coeff))
                out = Sub(IntImm(dtype, 0) if out is None else out, term)
        if out is None:
            return IntImm(dtype, form.const)
        if form.const > 0:
            return Add(out, IntImm(dtype, form.const))
        if form.const < 0:
            return Sub(out, IntImm(dtype, -form.const))
        return out

    def _merge_div_mod(self, form: Linear, like: PrimExpr) -> Linear:
        """``k * floormod(X, c) + k*c * floordiv(X, c)`` becomes ``k * X``."""
        mods = [(key, atom, coeff) for key, (atom, coeff) in form.terms.items()
                if type(atom) is FloorMod and type(atom.b) is IntImm]
        if not mods:
            return form
        form = form.copy()
        for key, atom, coeff in mods:
            div_key = self.ids.of(FloorDiv(atom.a, atom.b))
            slot = form.terms.get(div_key)
            if slot is None or slot[1] != coeff * atom.b.value or key not in form.terms:
                continue
            del form.terms[div_key]
            del form.terms[key]
            form.plus(self.linear(atom.a), coeff)
        return form


def _reduce_gcd(form: Linear, c: int) -> tuple[Linear, int, int]:
    """Write ``form`` as ``g*B + r`` (``g`` divides ``c`` and every coefficient, ``0 <= r < g``).

    Returns ``(B, c // g, r)``: then ``floordiv(form, c) == floordiv(B, c // g)`` and
    ``floormod(form, c) == g * floormod(B, c // g) + r``.
    """
    if not form.terms:
        return form, c, 0
    g = math.gcd(c, *(coeff for _, coeff in form.terms.values()))
    if g <= 1:
        return form, c, 0
    q, r = divmod(form.const, g)
    out = Linear(q)
    for key, (atom, coeff) in form.terms.items():
        out.add_term(key, atom, coeff // g)
    return out, c // g, r


class _Children(ExprMutator):
    """Simplifies the operands of an atom (or of a non-integer node) canonically."""

    def __init__(self, owner: CanonicalSimplifier) -> None:
        self.owner = owner

    def visit_expr(self, e: PrimExpr) -> PrimExpr:
        return self.owner.simplify(e)

    def visit_expr_children(self, e: PrimExpr) -> PrimExpr:
        """``e`` with each child expression simplified."""
        if isinstance(e, Var):
            alias = self.owner.facts.aliases.get(e)
            return e if alias is None else self.owner.simplify(alias)
        return self.generic_visit(e)
