"""Rewrite rules for Not, And, Or, Select and ``if_then_else`` (TVM's, plus a few of ours).

These run on every dtype (``ANY_DTYPE_KINDS``). A rule that relies on the
order of its operands being total (``x <= y || y < x``) or on integer steps
(``x < 1 && 0 < x`` is empty) checks ``is_int``: NaN compares false with
everything, and ``0.5`` lies between ``0`` and ``1``.
"""

from __future__ import annotations

from ... import dtype as dt
from ... import op
from ...expr import EQ, LE, NE, And, Call, FloatImm, IntImm, Or, Select
from ...op import floordiv, floormod, max, min
from ..extensions import Extension
from ..pattern import PVar, Rule, broadcast, same_expr
from ..speculation import speculation_hazard
from .compare import literal_not
from .helpers import (
    FALSE,
    TRUE,
    b1,
    b2,
    bc,
    c1,
    c2,
    c3,
    is_int,
    pick_by_const,
    x,
    xv,
    y,
    yv,
    z,
)

ZERO = IntImm("int32", 0)
b3 = PVar("b3", "bool")
INT = is_int("x")


def INDEX(m) -> bool:  # noqa: N802 (reads like INT)
    """``x`` is a signed 32/64-bit integer, where constant arithmetic is assumed not to wrap."""
    t = dt.DataType(dt.element_of(m.x.dtype))
    return t.is_int and t.bits >= 32


def _consts(test, kind=INT):
    """A condition on the constants' values, ``test(c1, c2[, c3])``, for integer ``x``.

    ``kind=INDEX`` where the result computes with the constants: in uint8,
    ``floordiv(x, 100) == 3`` never holds but ``x == 300`` would wrap to ``x == 44``.
    """
    def when(m) -> bool:
        if not kind(m):
            return False
        vals = [m.v(n) for n in ("c1", "c2", "c3") if n in m.env]
        return test(*vals)

    return when


def _mod_block(c1_, c2_, c3_) -> bool:
    """``floormod(x, c2) < c3`` keeps only a prefix of each block of c2: 0 < c2, c3 <= c2."""
    return c2_ > 0 and c3_ <= c2_


# floordiv(x, c2) == c1 with floormod(x, c2) OP c3 is a range of x when the remainder
# condition cuts the block of c2 values (c2 > 0): c3 within [0, c2) for ==, <= c2 for < ...
def _rem(test):
    return _consts(lambda a, b, c: b > 0 and test(c, b), INDEX)


REM_EQ = _rem(lambda c, b: 0 <= c < b)
REM_LT = _rem(lambda c, b: c <= b)
REM_LE = _rem(lambda c, b: c < b)
REM_GE = _rem(lambda c, b: 0 <= c)
REM_GT = _rem(lambda c, b: -1 <= c)


def _each_under_the_other(negate: bool):
    """TVM's ApplyConstraintsToBooleanBranches (opt-in): in ``a && b`` simplify ``a``
    assuming ``b`` and ``b`` assuming ``a`` (in ``a || b``, assuming the other is false).

    Both sides are evaluated, so a side that loads, or has another hazard of
    ``speculation.py``, is left as it is: rewritten under a fact that is false
    there, its load could leave the buffer."""
    def result(m):
        an = m.s.analyzer
        if Extension.ApplyConstraintsToBooleanBranches not in an.enabled_extensions:
            return None
        parts, unchanged = [m.b1, m.b2], 0
        for i in range(4):  # alternate until neither side changes
            k = i % 2
            other = op.logical_not(parts[1 - k]) if negate else parts[1 - k]
            new = parts[k]
            if not speculation_hazard(new):
                with an.constraint_scope(other):
                    new = an.rewrite_simplify(parts[k])
            if new is parts[k] or same_expr(new, parts[k]):
                unchanged += 1
                if unchanged >= 2:
                    break
                continue
            parts[k], unchanged = new, 0
        if parts[0] is m.b1 and parts[1] is m.b2:
            return None
        return (op.logical_or if negate else op.logical_and)(*parts)

    return result


NOT_RULES = [
    Rule(~b1, literal_not),
    Rule(~broadcast(b1), broadcast(~b1)),
    Rule(~~b1, b1),
    Rule(~(x <= y), y < x, INT),          # not for floats: NaN compares false
    Rule(~(x < y), y <= x, INT),
    Rule(~EQ(x, y), NE(x, y)),
    Rule(~NE(x, y), EQ(x, y)),
    Rule(~(b1 | b2), ~b1 & ~b2),
    Rule(~(b1 & b2), ~b1 | ~b2),
]

AND_RULES = [
    Rule(b1 & b2, _each_under_the_other(negate=False)),
    Rule(broadcast(b1) & broadcast(b2), broadcast(b1 & b2)),
    Rule(And(b1, b1), b1),
    Rule(EQ(x, y) & NE(x, y), FALSE),
    Rule(NE(x, y) & EQ(x, y), FALSE),
    Rule(b1 & ~b1, FALSE),
    Rule(~b1 & b1, FALSE),
    Rule((x <= y) & (y < x), FALSE),
    Rule((y < x) & (x <= y), FALSE),
    Rule((x < y) & (y < x), FALSE),
    # an empty range of integers
    Rule((x < c1) & (c2 < x), FALSE, _consts(lambda a, b: b + 1 >= a)),
    Rule((c2 < x) & (x < c1), FALSE, _consts(lambda a, b: b + 1 >= a)),
    Rule((x < c1) & LE(c2, x), FALSE, _consts(lambda a, b: b >= a)),
    Rule(LE(c2, x) & (x < c1), FALSE, _consts(lambda a, b: b >= a)),
    Rule((x <= c1) & (c2 < x), FALSE, _consts(lambda a, b: b >= a)),
    Rule((c2 < x) & (x <= c1), FALSE, _consts(lambda a, b: b >= a)),
    Rule((x <= c1) & LE(c2, x), FALSE, _consts(lambda a, b: b > a)),
    Rule(LE(c2, x) & (x <= c1), FALSE, _consts(lambda a, b: b > a)),
    Rule(EQ(x, c1) & EQ(x, c2), EQ(x, c1) & EQ(c1, c2)),
    Rule(EQ(x, c1) & NE(x, c2), EQ(x, c1) & NE(c1, c2)),
    Rule(NE(x, c2) & EQ(x, c1), EQ(x, c1) & NE(c1, c2)),
    # x in one block of c2: quotient and remainder into a range of x
    Rule(EQ(floordiv(x, c2), c1) & EQ(floormod(x, c2), c3), EQ(x, c1 * c2 + c3),
         REM_EQ),
    Rule(EQ(floormod(x, c2), c3) & EQ(floordiv(x, c2), c1), EQ(x, c1 * c2 + c3),
         REM_EQ),
    Rule(LE(ZERO, x - y * c1) & (x - y * c1 < c1), EQ(y, floordiv(x, c1)),
         _consts(lambda a: a > 0, INDEX)),
    Rule((x - y * c1 < c1) & LE(ZERO, x - y * c1), EQ(y, floordiv(x, c1)),
         _consts(lambda a: a > 0, INDEX)),
    Rule((c1 < x - y * c1) & (x - y * c1 <= 0), EQ(y, floordiv(x, c1)),
         _consts(lambda a: a < 0, INDEX)),
    Rule(LE(ZERO, x + y * c2) & (x + y * c2 < c1), EQ(y, floordiv(x, c1)),
         _consts(lambda a, b: a > 0 and b == -a, INDEX)),
    Rule((x + y * c2 < c1) & LE(ZERO, x + y * c2), EQ(y, floordiv(x, c1)),
         _consts(lambda a, b: a > 0 and b == -a, INDEX)),
    # x < c1 and floormod(x, c2) < c3: tighten the bound to the last block's prefix
    Rule((x < c1) & (floormod(x, c2) < c3), (x < c1 - c2 + c3) & (floormod(x, c2) < c3),
         _consts(lambda a, b, c: _mod_block(a, b, c) and a % b == 0, INDEX)),
    Rule((x < c1) & (floormod(x, c2) < c3),
         (x < c1 - floormod(c1, c2) + c3) & (floormod(x, c2) < c3),
         _consts(lambda a, b, c: _mod_block(a, b, c) and a % b > c, INDEX)),
    Rule((x <= c1) & (floormod(x, c2) < c3), (x < c1 + 1 - c2 + c3) & (floormod(x, c2) < c3),
         _consts(lambda a, b, c: _mod_block(a, b, c) and (a + 1) % b == 0, INDEX)),
    Rule((x <= c1) & (floormod(x, c2) < c3),
         (x < c1 + 1 - floormod(c1 + 1, c2) + c3) & (floormod(x, c2) < c3),
         _consts(lambda a, b, c: _mod_block(a, b, c) and (a + 1) % b > c, INDEX)),
    Rule(EQ(floordiv(x, c2), c1) & (floormod(x, c2) < c3),
         LE(c1 * c2, x) & (x < c1 * c2 + c3), REM_LT),
    Rule((floormod(x, c2) < c3) & EQ(floordiv(x, c2), c1),
         LE(c1 * c2, x) & (x < c1 * c2 + c3), REM_LT),
    Rule(EQ(floordiv(x, c2), c1) & (floormod(x, c2) <= c3),
         LE(c1 * c2, x) & (x <= c1 * c2 + c3), REM_LE),
    Rule((floormod(x, c2) <= c3) & EQ(floordiv(x, c2), c1),
         LE(c1 * c2, x) & (x <= c1 * c2 + c3), REM_LE),
    Rule(EQ(floordiv(x, c2), c1) & LE(c3, floormod(x, c2)),
         LE(c1 * c2 + c3, x) & (x < (c1 + 1) * c2), REM_GE),
    Rule(LE(c3, floormod(x, c2)) & EQ(floordiv(x, c2), c1),
         LE(c1 * c2 + c3, x) & (x < (c1 + 1) * c2), REM_GE),
    Rule(EQ(floordiv(x, c2), c1) & (c3 < floormod(x, c2)),
         (c1 * c2 + c3 < x) & (x < (c1 + 1) * c2), REM_GT),
    Rule((c3 < floormod(x, c2)) & EQ(floordiv(x, c2), c1),
         (c1 * c2 + c3 < x) & (x < (c1 + 1) * c2), REM_GT),
    # ours: duplicates and bounds from both sides
    Rule(b1 & (b1 & b2), b1 & b2),
    Rule((b1 & b2) & b1, b1 & b2),
    Rule((b1 & b2) & b2, b1 & b2),
    Rule((x < c1) & (x < c2), x < min(c1, c2), INT),
    Rule((c1 < x) & (c2 < x), max(c1, c2) < x, INT),
    Rule(b1 & (b2 & b3), (b1 & b2) & b3),
]

OR_RULES = [
    Rule(b1 | b2, _each_under_the_other(negate=True)),
    Rule(broadcast(b1) | broadcast(b2), broadcast(b1 | b2)),
    Rule(Or(b1, b1), b1),
    Rule(EQ(x, y) | NE(x, y), TRUE),
    Rule(NE(x, y) | EQ(x, y), TRUE),
    Rule(b1 | ~b1, TRUE),
    Rule(~b1 | b1, TRUE),
    Rule((x <= y) | (y < x), TRUE, INT),
    Rule((y < x) | (x <= y), TRUE, INT),
    Rule((x < y) | (y < x), NE(x, y), INT),
    # every integer is on one side
    Rule((x < c1) | (c2 < x), TRUE, _consts(lambda a, b: b < a)),
    Rule((c2 < x) | (x < c1), TRUE, _consts(lambda a, b: b < a)),
    Rule((x <= c1) | (c2 < x), TRUE, _consts(lambda a, b: b <= a)),
    Rule((c2 < x) | (x <= c1), TRUE, _consts(lambda a, b: b <= a)),
    Rule((x < c1) | LE(c2, x), TRUE, _consts(lambda a, b: b <= a)),
    Rule(LE(c2, x) | (x < c1), TRUE, _consts(lambda a, b: b <= a)),
    Rule((x <= c1) | LE(c2, x), TRUE, _consts(lambda a, b: b <= a + 1)),
    Rule(LE(c2, x) | (x <= c1), TRUE, _consts(lambda a, b: b <= a + 1)),
    Rule(NE(x, c1) | NE(x, c2), NE(x, c1) | NE(c1, c2)),
    Rule(NE(x, c1) | EQ(x, c2), NE(x, c1) | EQ(c1, c2)),
    Rule(EQ(x, c2) | NE(x, c1), NE(x, c1) | EQ(c1, c2)),
    Rule((x < y) | EQ(x, y), x <= y),
    Rule((x < y) | EQ(y, x), x <= y),
    Rule(EQ(x, y) | (x < y), x <= y),
    Rule(EQ(y, x) | (x < y), x <= y),
    # ours: duplicates and bounds from both sides
    Rule(b1 | (b1 | b2), b1 | b2),
    Rule((b1 | b2) | b1, b1 | b2),
    Rule((b1 | b2) | b2, b1 | b2),
    Rule((x < c1) | (x < c2), x < max(c1, c2), INT),
    Rule((c1 < x) | (c2 < x), min(c1, c2) < x, INT),
    Rule(b1 | (b2 | b3), (b1 | b2) | b3),
]

SELECT_RULES = [
    Rule(Select(b1, x, x), x),
    Rule(Select(broadcast(bc), xv, yv), pick_by_const),
    Rule(Select(~b1, x, y), Select(b1, y, x)),
    Rule(Select(b1, Select(b1, x, y), z), Select(b1, x, z)),
    Rule(Select(b1, x, Select(b1, y, z)), Select(b1, x, z)),
]


def _is_const_number(e) -> bool:
    return type(e) is IntImm or type(e) is FloatImm


def nested_if_then_else(m):
    """``if c then (if d then a else k) else k`` is ``if c && d then a else k`` (k constant).

    ``c && d`` evaluates ``d`` where ``c`` is false: not when ``d`` loads or
    has another hazard of ``speculation.py``."""
    e = m.x
    if e.op != "tir.if_then_else":
        return None
    cond, then, other = e.args
    if type(then) is not Call or then.op != "tir.if_then_else":
        return None
    inner_cond, inner_then, inner_else = then.args
    if not (_is_const_number(inner_else) and _is_const_number(other)):
        return None
    if speculation_hazard(inner_cond):
        return None  # c guards d (if_then_else(i < n, if_then_else(A[i] > 0, ..))): c && d reads
    if inner_else.value != other.value or inner_else.dtype != other.dtype:
        return None
    return Call(e.dtype, e.op, (op.logical_and(cond, inner_cond), inner_then, other))


CALL_RULES = [
    Rule(x, nested_if_then_else),
]
