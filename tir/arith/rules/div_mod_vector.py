"""The division rules that compute their result: a ramp divided by a broadcast constant, and
TVM's split of ``(x * c1 + y) // c2`` into a multiple of ``x`` and a residue.

Each is a rule result (``Rule(pattern, fn)``): it gets the match ``m`` and
returns the rewritten expression, or None when the rule does not apply.

Ramp lanes ``b + i*s`` (``i < lanes``) with ``b = coeff*k + base`` (its
modular set) all divide alike when the lanes' offsets ``base + i*s`` stay in
one block of the divisor. Truncated division and remainder round towards
zero, so they also need every lane non-negative: TVM's rules for them assume
it for ``c1 % c2 == 0`` (``truncdiv(ramp(x, 4, 4), 2)`` with ``x = -1`` has
lanes ``0, 1, 3, 5`` after division, not ``0, 2, 4, 6``); here it is proved.
"""

from __future__ import annotations

import math
from typing import Any

from ...expr import Broadcast, IntImm, PrimExpr, Ramp
from ...op import add, const, floordiv, floormod, mul, truncdiv, truncmod


def _lanes(m) -> int | None:
    lanes = m.env["lanes"]
    return lanes.value if type(lanes) is IntImm else lanes if isinstance(lanes, int) else None


def _bcast(value: PrimExpr, m) -> Broadcast:
    return Broadcast(value, m.env["lanes"])


def _ramp(base: PrimExpr, stride: PrimExpr, m) -> Ramp:
    return Ramp(base, stride, m.env["lanes"])


def _const_like(value: int, e: PrimExpr) -> IntImm:
    return const(value, e.dtype)


def _one_block(base: int, s: int, lanes: int, c: int) -> bool:
    """``base + i*s`` for every lane ``i`` has one floor quotient by ``c`` (ends suffice)."""
    return base // c == (base + (lanes - 1) * s) // c


def floordiv_ramp(m) -> PrimExpr | None:
    """``floordiv(ramp(x, c1), broadcast(c2))`` as a ramp or a broadcast (TVM's cases)."""
    s, c = m.v("c1"), m.v("c2")
    if c == 0:
        return None
    if s % c == 0:
        return _ramp(floordiv(m.x, m.c2), floordiv(m.c1, m.c2), m)
    lanes = _lanes(m)
    if lanes is None or c < 0:
        return None
    coeff, base = m.s.modular(m.x)
    if not _one_block(base, s, lanes, c):
        return None
    # b's multiple of coeff is a multiple of c, or all lanes stay inside one coeff-block of c
    last = base + (lanes - 1) * s
    if coeff % c == 0 or (coeff > 0 and c % coeff == 0 and 0 <= last < coeff):
        return _bcast(floordiv(m.x, m.c2), m)
    return None


def floormod_ramp(m) -> PrimExpr | None:
    """``floormod(ramp(x, c1), broadcast(c2))`` with the ramp's known residue moved in."""
    s, c = m.v("c1"), m.v("c2")
    if c == 0:
        return None
    if s % c == 0:
        return _bcast(floormod(m.x, m.c2), m)
    if c < 0:
        return None
    coeff, base = m.s.modular(m.x)
    lanes = _lanes(m)
    if lanes is not None and _one_block(base, s, lanes, c):
        last = base + (lanes - 1) * s
        if coeff % c == 0:
            return _ramp(_const_like(base % c, m.x), m.c1, m)
        if coeff > 0 and c % coeff == 0 and 0 <= last < coeff:
            return _ramp(floormod(m.x, m.c2), m.c1, m)
    return _reduced_base(m, coeff, base, c, floormod)


def _reduced_base(m, coeff: int, base: int, c: int, mod_fn) -> PrimExpr | None:
    """``mod(ramp(base % c, s), c)``: the base's multiple of ``c`` dropped (None if no change)."""
    if coeff % c != 0:
        return None
    new_base = base % c
    if type(m.x) is IntImm and m.x.value == new_base:
        return None
    # the divisor broadcasts as the operators do (the lane count written as tir.op writes it)
    return mod_fn(_ramp(_const_like(new_base, m.x), m.c1, m), m.c2)


def _lanes_nonneg(m, lanes: int | None) -> bool:
    """Every lane of ``ramp(x, c1)`` is provably ``>= 0``."""
    lo = m.s.interval(m.x)[0]
    s = m.v("c1")
    if lanes is None:
        return lo >= 0 and s >= 0
    return lo >= 0 and lo + (lanes - 1) * s >= 0


def _lanes_nonpos(m, lanes: int | None) -> bool:
    hi = m.s.interval(m.x)[1]
    s = m.v("c1")
    if lanes is None:
        return hi <= 0 and s <= 0
    return hi <= 0 and hi + (lanes - 1) * s <= 0


def truncdiv_ramp(m) -> PrimExpr | None:
    """``truncdiv(ramp(x, c1), broadcast(c2))``: TVM's floor cases, when no lane is negative."""
    s, c = m.v("c1"), m.v("c2")
    if c == 0:
        return None
    lanes = _lanes(m)
    if s % c == 0 and (_lanes_nonneg(m, lanes) or _lanes_nonpos(m, lanes)):
        return _ramp(truncdiv(m.x, m.c2), truncdiv(m.c1, m.c2), m)
    if lanes is None or c < 0 or not _lanes_nonneg(m, lanes):
        return None
    coeff, base = m.s.modular(m.x)
    if coeff % c == 0 and _one_block(base, s, lanes, c):
        return _bcast(truncdiv(m.x, m.c2), m)
    return None


def truncmod_ramp(m) -> PrimExpr | None:
    """``truncmod(ramp(x, c1), broadcast(c2))``: as floormod, when no lane is negative."""
    s, c = m.v("c1"), m.v("c2")
    if c == 0:
        return None
    lanes = _lanes(m)
    if s % c == 0 and (_lanes_nonneg(m, lanes) or _lanes_nonpos(m, lanes)):
        return _bcast(truncmod(m.x, m.c2), m)
    if c < 0 or not _lanes_nonneg(m, lanes):
        return None
    coeff, base = m.s.modular(m.x)
    if lanes is not None and coeff % c == 0 and _one_block(base, s, lanes, c):
        return _ramp(_const_like(base % c, m.x), m.c1, m)
    # the new ramp's lanes must stay non-negative too
    return _reduced_base(m, coeff, base, c, truncmod) if s >= 0 else None


# ---------------------------------------------------------------- (x * c1 + y) // c2


def split_floordiv(m) -> PrimExpr | None:
    """``floordiv(x*c1 + y, c2)``: drop a constant residue, or divide ``x`` by ``c2 / c1``.

    With ``c1 = q*c2 + r``: ``(x*c1 + y) // c2 == x*q + y // c2 + (x*r + y % c2) // c2``;
    when the last term's bound is one value it is that constant. If ``c1`` divides ``c2``
    and ``y % c2 < c1``, the result is ``x // (c2 / c1) + y // c2``. Bounds are computed
    on numbers (this rule meets most index divisions, so it builds no trial expressions).
    """
    k, c = m.v("c1"), m.v("c2")
    if c == 0:
        return None
    y: Any = m.env.get("y")
    y_lo, y_hi = (0, 0) if y is None else m.s.interval(y)
    y = _const_like(0, m.x) if y is None else y
    same_block = _floor_quotient(y_lo, y_hi, c)
    y_div = _const_like(0, m.x) if same_block == 0 else floordiv(y, m.c2)
    mod_lo, mod_hi = (y_lo - same_block * c, y_hi - same_block * c) if same_block is not None \
        else ((0, c - 1) if c > 0 else (c + 1, 0))
    r = k % c
    x_lo, x_hi = m.s.interval(m.x) if r != 0 else (0, 0)
    k_res = _floor_quotient(min(x_lo * r, x_hi * r) + mod_lo, max(x_lo * r, x_hi * r) + mod_hi, c)
    if k_res is not None:
        return add(mul(m.x, _const_like(k // c, m.x)), add(y_div, _const_like(k_res, m.x)))
    if k > 0 and c > 0 and c % k == 0 and mod_hi < k:
        return add(floordiv(m.x, _const_like(c // k, m.x)), y_div)
    return None


def _floor_quotient(lo: float, hi: float, c: int) -> int | None:
    """``q`` if ``floordiv(v, c) == q`` for every ``v`` in ``[lo, hi]``, else None."""
    if lo in (math.inf, -math.inf) or hi in (math.inf, -math.inf) or lo != lo or hi != hi:
        return None
    q_lo, q_hi = int(lo) // c, int(hi) // c
    return q_lo if q_lo == q_hi else None
