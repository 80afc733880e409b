"""Rewrite rules for comparisons: LT, LE, GT, GE, EQ, NE (TVM's order and forms).

As in TVM, ``a > b`` becomes ``b < a``, ``a >= b`` becomes ``b <= a``; ``a <= b``
is simplified as ``not (b < a)`` and ``a != b`` as ``not (a == b)`` whenever the
LT/EQ rules change something, so one set of rules serves each pair. A
comparison is first decided, if it can be, by ``compare`` (the bound and
residue of ``a - b``: TVM's ``TryCompare``). These tables serve signed 32/64-bit
integers (no overflow assumed); floats never reach them (NaN compares false).

The ``*_RING`` tables serve integers that wrap (8/16-bit, unsigned): equality
survives wraparound (``a == b`` exactly when ``a - b`` wraps to 0, so the
bound and residue of the wrapped difference decide it, and constants move
across ``==`` modulo ``2**bits``), an order does not (``x < x + 1`` is false
at the maximum), so ``<`` and ``<=`` are only decided for identical operands.
The ``*_SAME`` tables hold just the identical-operand rules, for bool.
"""

from __future__ import annotations

import math

from ... import op
from ...expr import EQ, GE, GT, LE, LT, NE, Add, IntImm, Mul, Not, PrimExpr, Sub
from ...op import floordiv, floormod, max, min, truncdiv, truncmod
from ..extensions import Extension
from ..pattern import Rule, broadcast, ramp, same_expr
from .helpers import c1, c2, x, y, z

# ---------------------------------------------------------------- deciding a comparison


def compare(s, a: PrimExpr, b: PrimExpr) -> str | None:
    """What is known of ``a`` against ``b``: "EQ" "LT" "GT" "LE" "GE" "NE", or None.

    The bound of ``a - b`` first, then (if the bound says nothing) its residue,
    then the product-and-sum extension when the analyzer enables it.
    """
    lo, hi = s.diff_interval(a, b)
    if lo == hi == 0:
        return "EQ"
    if lo > 0:
        return "GT"
    if hi < 0:
        return "LT"
    if lo >= 0:
        return "GE"
    if hi <= 0:
        return "LE"
    coeff, base = s.modular(op.sub(a, b))
    if coeff > 0 and base % coeff != 0:
        return "NE"
    if Extension.ComparisonOfProductAndSum in getattr(s.analyzer, "enabled_extensions",
                                                      Extension.NoExtensions):
        return product_and_sum(s, a, b)
    return None


def _decided(true_when: set, false_when: set):
    def result(m):
        known = compare(m.s, m.x, m.y)
        if known in true_when:
            return op.const(True, "bool")
        if known in false_when:
            return op.const(False, "bool")
        return None

    return result


def _product(e: PrimExpr) -> tuple | None:
    """``(A, B, D)`` with ``e == A * B * D`` (D may be 1)."""
    if type(e) is not Mul:
        return None
    if type(e.a) is Mul:
        return e.a.a, e.a.b, e.b
    return e.a, e.b, op.const(1, e.dtype)


def _sum_times(e: PrimExpr) -> tuple | None:
    """``(A, B, C)`` with ``e == (A + B) * C``."""
    if type(e) is Mul and type(e.a) is Add:
        return e.a.a, e.a.b, e.b
    return None


def product_and_sum(s, a: PrimExpr, b: PrimExpr) -> str | None:
    """Compare ``A * B * D`` with ``(A + B) * C`` from bounds (TVM's ComparisonOfProductAndSum).

    With ``A, B > 0`` and ``C, D > 0``: ``(A + B) * C > A * B * D`` holds if
    ``1/A + 1/B > D/C`` for every value, which follows when
    ``min(A_max, B_max) * D_max <= C_min`` or
    ``A_max * B_max * D_max < C_min * (A_max + B_max)``. With ``C, D < 0`` the
    sign of the difference flips.
    """
    for prod_side, sum_side, sum_is_b in ((a, b, True), (b, a, False)):
        p, q = _product(prod_side), _sum_times(sum_side)
        if p is None or q is None:
            continue
        sign = _sum_exceeds_product(s, p, q)
        if sign is None:
            continue
        # sign > 0: (A + B) * C > A * B * D
        return ("LT" if sign > 0 else "GT") if sum_is_b else ("GT" if sign > 0 else "LT")
    return None


def _sum_exceeds_product(s, p: tuple, q: tuple) -> int | None:
    (pa, pb, d), (qa, qb, c) = p, q
    if not (same_expr(pa, qa) and same_expr(pb, qb) or same_expr(pa, qb) and same_expr(pb, qa)):
        return None
    a_lo, a_hi = s.interval(pa)
    b_lo, b_hi = s.interval(pb)
    if a_lo <= 0 or b_lo <= 0:
        return None
    (c_lo, c_hi), (d_lo, d_hi) = s.interval(c), s.interval(d)
    if c_lo > 0 and d_lo > 0:
        sign = 1
    elif c_hi < 0 and d_hi < 0:
        sign, (c_lo, c_hi), (d_lo, d_hi) = -1, (-c_hi, -c_lo), (-d_hi, -d_lo)
    else:
        return None
    if d_hi == math.inf:
        return None
    if (a_hi if a_hi < b_hi else b_hi) * d_hi <= c_lo:  # min: the name is tir's here
        return sign
    if a_hi < math.inf and b_hi < math.inf and a_hi * b_hi * d_hi < c_lo * (a_hi + b_hi):
        return sign
    return None


# ---------------------------------------------------------------- constraints in scope

#: ``not (a OP b)`` as ``b OP' a`` (swap) or ``a OP' b``: (class, swap).
_NEGATED = {LT: (LE, True), LE: (LT, True), EQ: (NE, False), NE: (EQ, False)}
_FLIPPED = {GT: LT, GE: LE}


def _as_triple(c: PrimExpr) -> tuple | None:
    cls = type(c)
    if cls in _FLIPPED:
        return _FLIPPED[cls], c.b, c.a
    return (cls, c.a, c.b) if cls in _NEGATED else None


def literal(cls: type):
    """``a OP b`` is a constraint in scope (true) or the negation of one (false): TVM's
    ``TryMatchLiteralConstraint``. ``x < n`` under ``x < n`` is true, ``n <= x`` false."""
    neg_cls, swap = _NEGATED[cls]

    def result(m):
        known = m.s.facts.constraints
        if not known:
            return None
        a, b = m.x, m.y
        for c in known:
            t = _as_triple(c)
            if t is None:
                continue
            if t[0] is cls and same_expr(t[1], a) and same_expr(t[2], b):
                return op.const(True, "bool")
            na, nb = (b, a) if swap else (a, b)
            if t[0] is neg_cls and same_expr(t[1], na) and same_expr(t[2], nb):
                return op.const(False, "bool")
        return None

    return result


def known_bool(facts, v: PrimExpr) -> PrimExpr:
    """A bool variable is true under a constraint ``v``, false under ``not v``; else itself."""
    for c in facts.constraints:
        if c is v:
            return op.const(True, "bool")
        if type(c) is Not and c.a is v:
            return op.const(False, "bool")
    return v


def literal_not(m):
    """``not b`` with ``b`` a constraint in scope is false; with ``b`` negating one, true."""
    known = m.s.facts.constraints
    if not known:
        return None
    for c in known:
        if same_expr(c, m.b1):
            return op.const(False, "bool")
        if type(c) is Not and same_expr(c.a, m.b1):
            return op.const(True, "bool")
    return None


# ---------------------------------------------------------------- via the LT and EQ rules


def _via(build, wrap):
    """Rewrite ``build(m)`` with the rules; if that changed it, ``wrap(result)``."""
    def result(m):
        inner = build(m)
        out = m.s.rewrite_nested(inner)
        if out is inner or same_expr(out, inner):
            return None
        return wrap(out)

    return result


# a <= b  <=>  not (b < a)
le_as_not_lt = _via(lambda m: op.less(m.y, m.x), op.logical_not)
# a != b  <=>  not (a == b)
ne_as_not_eq = _via(lambda m: op.equal(m.x, m.y), op.logical_not)


def _le_by_compare(m):
    known = compare(m.s, m.x, m.y)
    if known in ("LE", "LT", "EQ"):
        return op.const(True, "bool")
    if known == "GT":
        return op.const(False, "bool")
    if known == "NE":  # a <= b and a != b
        return op.less(m.x, m.y)
    if known == "GE":  # a <= b and a >= b
        return op.equal(m.x, m.y)
    return None


def _ne_by_compare(m):
    known = compare(m.s, m.x, m.y)
    if known in ("NE", "LT", "GT"):
        return op.const(True, "bool")
    if known == "EQ":
        return op.const(False, "bool")
    if known == "GE":
        return op.less(m.y, m.x)
    if known == "LE":
        return op.less(m.x, m.y)
    return None


def _equal_mod(m) -> bool | None:
    """Whether ``x == y`` for integers that wrap, by their wrapped difference; None if unknown."""
    lo, hi = m.s.diff_interval(m.x, m.y)  # the bound of x - y as the machine wraps it
    if lo == hi == 0:
        return True
    if lo > 0 or hi < 0:
        return False
    coeff, base = m.s.modular(op.sub(m.x, m.y))
    return False if coeff > 0 and base % coeff != 0 else None


def _decided_mod(equal: bool):
    """``x == y`` (``equal``) or ``x != y`` decided by ``_equal_mod``."""
    def result(m):
        known = _equal_mod(m)
        return None if known is None else op.const(known == equal, "bool")

    return result


# ---------------------------------------------------------------- merging constant offsets


def _offset(e: PrimExpr) -> tuple:
    """``(rest, k)`` with ``e == rest + k`` for ``rest + c`` / ``rest - c``, else ``(e, 0)``."""
    if type(e) is Add and type(e.b) is IntImm:
        return e.a, e.b.value
    if type(e) is Sub and type(e.b) is IntImm:
        return e.a, -e.b.value
    return e, 0


def _const(value: int, like: PrimExpr) -> PrimExpr | None:
    """``value`` in ``like``'s dtype, or None if it does not fit (the rule then does not apply)."""
    bits = 64 if "64" in like.dtype else 32
    if not -(2 ** (bits - 1)) <= value < 2 ** (bits - 1):
        return None
    return op.const(value, like.dtype)


def merge_offsets(m):
    """``a + k1 < b + k2`` with the constants on one side (TVM's merge_constants)."""
    lhs, lk = _offset(m.x)
    rhs, rk = _offset(m.y)
    if lk == 0 and rk == 0:
        return None
    diff = rk - lk
    if diff == 0:
        return op.less(lhs, rhs)
    if diff == 1:
        return op.less_equal(lhs, rhs)
    if diff < 0 and rk != 0:
        k = _const(-diff, lhs)
        return None if k is None else op.less(op.add(lhs, k), rhs)
    if diff > 0 and lk != 0:
        k = _const(diff, rhs)
        return None if k is None else op.less(lhs, op.add(rhs, k))
    return None


def common_factor(m):
    """``a < b`` with both sides multiples of ``f > 1``: ``a / f < b / f``."""
    ca, ba = m.s.modular(m.x)
    cb, bb = m.s.modular(m.y)
    f = math.gcd(ba, ca, bb, cb)  # gcd(0, n) == n: a constant is a multiple of itself
    if f <= 1:
        return None
    k = op.const(f, m.x.dtype)
    return op.less(op.floordiv(m.x, k), op.floordiv(m.y, k))


# ---------------------------------------------------------------- the rules


POS, NEG, NONPOS, NONNEG = 1, -1, 0, 2
_SIGN_TESTS = {POS: lambda v: v > 0, NEG: lambda v: v < 0, NONPOS: lambda v: v <= 0,
               NONNEG: lambda v: v >= 0}
ZERO = IntImm("int32", 0)  # a pattern constant matches 0 of any integer dtype


def _signs(s1: int, s2: int):
    """Condition on the signs of c1 and c2 (each POS, NEG, NONPOS or NONNEG)."""
    t1, t2 = _SIGN_TESTS[s1], _SIGN_TESTS[s2]
    return lambda m: t1(m.v("c1")) and t2(m.v("c2"))


def c1_pos(m) -> bool:
    """The constant c1 is positive."""
    return m.v("c1") > 0


LT_RULES = [
    Rule(broadcast(x) < broadcast(y), broadcast(x < y)),
    Rule(ramp(x, y) < ramp(z, y), broadcast(x < z)),
    Rule(x < y, literal(LT)),
    Rule(x < y, _decided({"LT"}, {"EQ", "GT", "GE"})),
    Rule(x + y < x + z, y < z),
    Rule(x + y < z + x, y < z),
    Rule(y + x < x + z, y < z),
    Rule(y + x < z + x, y < z),
    Rule(y - x < z - x, y < z),
    Rule(x - y < x - z, z < y),
    Rule(x < x + z, LT(ZERO, z)),
    Rule(x < z + x, LT(ZERO, z)),
    Rule(x < x - z, z < 0),
    Rule(x * c1 < y * c1, x < y, lambda m: m.v("c1") > 0),
    Rule(x * c1 < y * c1, y < x, lambda m: m.v("c1") < 0),
    # x * c2 < c1 and c1 < x * c2, by the signs of the constants (truncated division)
    Rule(x * c2 < c1, x < truncdiv(c1 - 1, c2) + 1, _signs(POS, POS)),
    Rule(x * c2 < c1, x < truncdiv(c1, c2), _signs(NONPOS, POS)),
    Rule(x * c2 < c1, truncdiv(c1 - 1, c2) - 1 < x, _signs(POS, NEG)),
    Rule(x * c2 < c1, truncdiv(c1, c2) < x, _signs(NONPOS, NEG)),
    Rule(c1 < x * c2, truncdiv(c1 + 1, c2) - 1 < x, _signs(NEG, POS)),
    Rule(c1 < x * c2, truncdiv(c1, c2) < x, _signs(NONNEG, POS)),
    Rule(c1 < x * c2, x < truncdiv(c1 + 1, c2) + 1, _signs(NEG, NEG)),
    Rule(c1 < x * c2, x < truncdiv(c1, c2), _signs(NONNEG, NEG)),
    # truncdiv(x, c) against a constant
    Rule(truncdiv(x, c1) < c2, x < c1 * c2, _signs(POS, POS)),
    Rule(truncdiv(x, c1) < c2, x < c1 * (c2 - 1) + 1, _signs(POS, NONPOS)),
    Rule(c1 < truncdiv(x, c2), (c1 + 1) * c2 - 1 < x, _signs(NONNEG, POS)),
    Rule(c1 < truncdiv(x, c2), c1 * c2 < x, _signs(NEG, POS)),
    # x - truncdiv(x, c) * c == truncmod(x, c)
    Rule(truncdiv(x, c1) * c1 < x, LT(ZERO, truncmod(x, c1)), c1_pos),
    Rule(truncdiv(x, c1) * c1 < x + y, LT(ZERO, truncmod(x, c1) + y), c1_pos),
    Rule(truncdiv(x, c1) * c1 < x - y, y < truncmod(x, c1), c1_pos),
    Rule(truncdiv(x + c2, c1) * c1 < x, c2 < truncmod(x + c2, c1), c1_pos),
    Rule(truncdiv(x + c2, c1) * c1 < x + y, c2 < truncmod(x + c2, c1) + y, c1_pos),
    Rule(truncdiv(x + c2, c1) * c1 < x - y, y < truncmod(x + c2, c1) + (0 - c2), c1_pos),
    # the same for floordiv
    Rule(floordiv(x, c1) < c2, x < c1 * c2, c1_pos),
    Rule(c1 < floordiv(x, c2), (c1 + 1) * c2 - 1 < x, lambda m: m.v("c2") > 0),
    Rule(floordiv(x, c1) * c1 < x, LT(ZERO, floormod(x, c1)), c1_pos),
    Rule(floordiv(x, c1) * c1 < x + y, LT(ZERO, floormod(x, c1) + y), c1_pos),
    Rule(floordiv(x, c1) * c1 < x - y, y < floormod(x, c1), c1_pos),
    Rule(floordiv(x + c2, c1) * c1 < x, c2 < floormod(x + c2, c1), c1_pos),
    Rule(floordiv(x + c2, c1) * c1 < x + y, c2 < floormod(x + c2, c1) + y, c1_pos),
    Rule(floordiv(x + c2, c1) * c1 < x - y, y < floormod(x + c2, c1) + (0 - c2), c1_pos),
    # min/max split into or/and
    Rule(min(x, y) < z, (x < z) | (y < z)),
    Rule(max(x, y) < z, (x < z) & (y < z)),
    Rule(z < min(x, y), (z < x) & (z < y)),
    Rule(z < max(x, y), (z < x) | (z < y)),
    # constants to one side
    Rule(c1 < x + c2, c1 - c2 < x),
    Rule(c1 - x < c2, c1 - c2 < x),
    Rule(c1 < c2 - x, x < c2 - c1),
    Rule(x + c1 < c2, x < c2 - c1),
    Rule(c1 < x - c2, c1 + c2 < x),
    Rule(x - c2 < c1, x < c1 + c2),
    Rule(x < c1 - y, x + y < c1),
    Rule(c1 - y < x, c1 < x + y),
    Rule(x < c1 + y, x - y < c1),
    Rule(c1 + y < x, c1 < x - y),
    Rule(x < y, merge_offsets),
    Rule(x < y, common_factor),
]

LE_RULES = [
    Rule(broadcast(x) <= broadcast(y), broadcast(x <= y)),
    Rule(ramp(x, y) <= ramp(z, y), broadcast(x <= z)),
    Rule(x <= y, literal(LE)),
    Rule(x <= y, le_as_not_lt),
    Rule(x <= y, _le_by_compare),
]

GT_RULES = [Rule(x > y, y < x)]
GE_RULES = [Rule(x >= y, y <= x)]

EQ_RULES = [
    Rule(EQ(broadcast(x), broadcast(y)), broadcast(EQ(x, y))),
    Rule(EQ(x, y), literal(EQ)),
    Rule(EQ(x, y), _decided({"EQ"}, {"NE", "GT", "LT"})),
    Rule(EQ(c1, x), EQ(x, c1)),
    Rule(EQ(x - c1, c2), EQ(x, c2 + c1)),
    Rule(EQ(c1 - x, c2), EQ(x, c1 - c2)),
    Rule(EQ(x + c1, c2), EQ(x, c2 - c1)),
    Rule(EQ(x * y, ZERO), EQ(x, ZERO) | EQ(y, ZERO)),
]

NE_RULES = [
    Rule(NE(x, y), literal(NE)),
    Rule(NE(x, y), _ne_by_compare),
    Rule(NE(x, y), ne_as_not_eq),
]

# Integers that wrap: equality modulo 2**bits, order only of identical operands.
EQ_RING = [
    Rule(EQ(broadcast(x), broadcast(y)), broadcast(EQ(x, y))),
    Rule(EQ(x, x), True),
    Rule(EQ(x, y), literal(EQ)),
    Rule(EQ(x, y), _decided_mod(True)),
    Rule(EQ(c1, x), EQ(x, c1)),
    Rule(EQ(x - c1, c2), EQ(x, c2 + c1)),  # the constants fold wrapping, as the machine adds
    Rule(EQ(c1 - x, c2), EQ(x, c1 - c2)),
    Rule(EQ(x + c1, c2), EQ(x, c2 - c1)),
]  # not x * y == 0 -> x == 0 or y == 0: 16 * 16 wraps to 0 in uint8

NE_RING = [
    Rule(NE(x, x), False),
    Rule(NE(x, y), literal(NE)),
    Rule(NE(x, y), _decided_mod(False)),
    Rule(NE(x, y), ne_as_not_eq),
]

LT_RING = [
    Rule(broadcast(x) < broadcast(y), broadcast(x < y)),
    Rule(x < x, False),
    Rule(x < y, literal(LT)),
]  # not ramp(x, y) < ramp(z, y) -> x < z: the lanes may wrap at different points

LE_RING = [
    Rule(broadcast(x) <= broadcast(y), broadcast(x <= y)),
    Rule(x <= x, True),
    Rule(x <= y, literal(LE)),
    Rule(x <= y, le_as_not_lt),
]

# bool: identical operands only (no arithmetic on bools)
EQ_SAME = [Rule(EQ(x, x), True), Rule(EQ(x, y), literal(EQ))]
NE_SAME = [Rule(NE(x, x), False), Rule(NE(x, y), literal(NE))]
LT_SAME = [Rule(x < x, False), Rule(x < y, literal(LT))]
LE_SAME = [Rule(x <= x, True), Rule(x <= y, literal(LE))]

__all__ = ["EQ_RING", "EQ_RULES", "EQ_SAME", "GE_RULES", "GT_RULES", "LE_RING", "LE_RULES",
           "LE_SAME", "LT_RING", "LT_RULES", "LT_SAME", "NE_RING", "NE_RULES", "NE_SAME",
           "compare", "known_bool", "literal", "literal_not"]
