"""What the rewrite rules share: pattern variables and the conditions and results rules call.

Pattern variables: ``x y z w`` match any expression, ``c1 c2 c3`` constants,
``b1 b2`` booleans, ``xv yv`` any vector. Conditions get the match ``m``
(``m.x``, ``m.v("c1")`` for a constant's value, ``m.s`` the simplifier for
proofs); a result that is a function returns an expression or None (no rewrite).
"""

from __future__ import annotations

from collections.abc import Callable

from ... import dtype as dt
from ...op import const
from ..pattern import PConst, PVar

x, y, z, w = PVar("x"), PVar("y"), PVar("z"), PVar("w")
c1, c2, c3 = PConst("c1"), PConst("c2"), PConst("c3")
b1, b2 = PVar("b1", "bool"), PVar("b2", "bool")
bc = PConst("bc", "bool")
xv, yv = PVar("xv", "int32x65521"), PVar("yv", "int32x65521")   # any vector
TRUE, FALSE = True, False



# ---------------------------------------------------------------- condition helpers


def pos(name: str) -> Callable:
    """The constant ``name`` is positive."""
    return lambda m: m.v(name) > 0


def divides(d: str, n: str) -> Callable:
    """Positive constant ``d`` divides constant ``n``."""
    return lambda m: m.v(d) > 0 and m.v(n) % m.v(d) == 0


def le(a: str, b: str) -> Callable:
    """Provably ``m.a <= m.b``."""
    return lambda m: m.s.le(m.env[a], m.env[b])


def nonneg(*names: str) -> Callable:
    """Every named match is provably non-negative."""
    return lambda m: all(m.s.nonneg(m.env[n]) for n in names)


def is_int(name: str) -> Callable:
    """The named match has an integer dtype (needed where NaN would break a rule)."""
    return lambda m: dt.DataType(dt.element_of(m.env[name].dtype)).is_integer


def trunc_split(m) -> bool:
    """``x * c1 + y`` splits under truncated division: c2 divides c1 > 0, x and y >= 0."""
    return divides("c2", "c1")(m) and m.v("c1") > 0 and nonneg("x", "y")(m)


def both(f: Callable, g: Callable) -> Callable:
    """Both conditions hold."""
    return lambda m: f(m) and g(m)


def floor_quotient(iv: tuple, c: int) -> int | None:
    """``k`` if every value in interval ``iv`` lies in ``[k*c, (k+1)*c)``, else None."""
    if abs(iv[0]) == float("inf") or abs(iv[1]) == float("inf"):
        return None
    k = int(iv[0]) // c
    return k if int(iv[1]) // c == k else None


def same_block(m) -> bool:
    """All lanes of ``ramp(x, c1)`` fall in one block of ``c2`` (by x's residue)."""
    lanes, c, s = m.env["lanes"], m.v("c2"), m.v("c1")
    if not isinstance(lanes, int) or c <= 0 or s < 0:
        return False
    coeff, base = m.s.modular(m.x)
    return coeff % c == 0 and base % c + s * (lanes - 1) < c


def floordiv_by_bound(m):
    k = floor_quotient(m.s.interval(m.x), m.v("c1")) if m.v("c1") > 0 else None
    return None if k is None else const(k)


def floormod_by_bound(m):
    c = m.v("c1")
    k = floor_quotient(m.s.interval(m.x), c) if c > 0 else None
    return None if k is None else m.x - k * c


def floormod_by_residue(m):
    c = m.v("c1")
    coeff, base = m.s.modular(m.x)
    return const(base % c) if c > 0 and coeff % c == 0 else None


def truncdiv_by_bound(m):
    lo, hi = m.s.interval(m.x)
    c = abs(m.v("c1"))
    return const(0) if c > 0 and -c < lo and hi < c else None


def truncmod_by_bound(m):
    lo, hi = m.s.interval(m.x)
    c = abs(m.v("c1"))
    return m.x if c > 0 and -c < lo and hi < c else None


def decide(test: Callable) -> Callable:
    """A comparison decided by the bound of ``x - y``: ``test(lo, hi)`` is True/False/None."""
    def result(m):
        lo, hi = m.s.diff_interval(m.x, m.y)
        out = test(lo, hi)
        return None if out is None else const(out, "bool")

    return result


def eq_by_residue(m):
    coeff, base = m.s.modular(m.x - m.y)
    return const(False, "bool") if coeff > 0 and base % coeff != 0 else None


def ne_by_residue(m):
    out = eq_by_residue(m)
    return None if out is None else const(True, "bool")


def lt_diff(lo, hi):
    return True if hi < 0 else False if lo >= 0 else None


def le_diff(lo, hi):
    return True if hi <= 0 else False if lo > 0 else None


def eq_diff(lo, hi):
    return True if lo == hi == 0 else False if lo > 0 or hi < 0 else None


def ne_diff(lo, hi):
    out = eq_diff(lo, hi)
    return None if out is None else not out


def pick_by_const(m):
    return m.xv if m.v("bc") else m.yv
