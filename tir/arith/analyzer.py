"""Placeholder Analyzer with the public API; proves only constant facts."""

from __future__ import annotations

import contextlib

import attrs

from ..expr import IntImm


@attrs.frozen
class ConstIntBound:
    min_value: int
    max_value: int
    POS_INF = 2**63 - 1
    NEG_INF = -(2**63)


@attrs.frozen
class ModularSet:
    coeff: int
    base: int


class Analyzer:
    def simplify(self, e):
        return e

    rewrite_simplify = canonical_simplify = simplify

    def const_int_bound(self, e):
        if isinstance(e, IntImm):
            return ConstIntBound(e.value, e.value)
        return ConstIntBound(ConstIntBound.NEG_INF, ConstIntBound.POS_INF)

    def modular_set(self, e):
        if isinstance(e, IntImm):
            return ModularSet(0, e.value)
        return ModularSet(1, 0)

    def can_prove(self, cond):
        return isinstance(cond, IntImm) and cond.value != 0

    def can_prove_equal(self, a, b):
        return self.can_prove(a - b == 0)

    def bind(self, var, value, allow_override=False):
        pass

    @contextlib.contextmanager
    def constraint_scope(self, cond):
        yield
