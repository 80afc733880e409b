"""The canonical simplifier's normal form: a sum of split terms (TVM's ``SumExpr``/``SplitExpr``).

A ``SplitExpr`` is ``((index % upper_factor) / lower_factor) * scale`` in one
division mode (truncated or floored); a ``SumExpr`` is ``sum(args) + base``.
Splits of one index sit next to each other in a sum, by decreasing
``lower_factor``, so that ``x / 6 * 6 + x % 6 / 3 * 3 + x % 3`` merges back
into ``x`` (``SumExpr.normalize``). Both are plain values: every operation
returns a new object, so forms can be memoized and shared.

Term order follows TVM: terms keep the order they were added in, then are
stably sorted by decreasing scale, lower factor, upper factor and division
mode; positive terms come first, then the constant, then the subtracted terms
(``y * 2 + 1 - x * 2``). The integers here are Python integers; ``normalize``
refuses a constant that does not fit the dtype (``Unrepresentable``).
"""

from __future__ import annotations

import math
import operator
from typing import Any

from .. import dtype as dt
from .. import op
from ..expr import Add, Div, FloorDiv, FloorMod, IntImm, Mod, Mul, PrimExpr, Sub

#: ``upper_factor`` of a split without a modulus.
INF = math.inf

#: Division modes, with TVM's enum values (the sort puts floor before trunc).
TRUNC, FLOOR = 0, 1


class Unrepresentable(Exception):
    """A constant of the form does not fit the dtype."""


def cdiv(a: int, b: int) -> int:
    """C's ``a / b`` (rounds towards zero), as TVM's int64 arithmetic computes it."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def cmod(a: int, b: int) -> int:
    """C's ``a % b`` (the sign of ``a``)."""
    return a - cdiv(a, b) * b


def make_const(dtype: str, value: int) -> IntImm:
    """``IntImm(dtype, value)``, refusing a value the dtype cannot hold."""
    t = dt.DataType(dtype)
    if not t.min_value() <= value <= t.max_value():
        raise Unrepresentable(f"{value} does not fit {dtype}")
    return IntImm(dtype, value)


def mod_impl(a: PrimExpr, b: PrimExpr, mode: int) -> PrimExpr:
    """``truncmod`` or ``floormod`` by mode."""
    return op.truncmod(a, b) if mode == TRUNC else op.floormod(a, b)


def div_impl(a: PrimExpr, b: PrimExpr, mode: int) -> PrimExpr:
    """``truncdiv`` or ``floordiv`` by mode."""
    return op.truncdiv(a, b) if mode == TRUNC else op.floordiv(a, b)


class SplitExpr:
    """``((index % upper_factor) / lower_factor) * scale`` (TVM's ``SplitExpr``)."""

    __slots__ = ("dtype", "index", "key", "lower_factor", "upper_factor", "scale", "div_mode")

    def __init__(self, index: PrimExpr, key: Any, lower_factor: int = 1,
                 upper_factor: float | int = INF, scale: int = 1, div_mode: int = TRUNC,
                 dtype: str | None = None) -> None:
        self.index = index
        self.key = key  # equal keys: equal indices (see CanonicalSimplifier.index_key)
        self.lower_factor = lower_factor
        self.upper_factor = upper_factor
        self.scale = scale
        self.div_mode = div_mode
        self.dtype = index.dtype if dtype is None else dtype

    def replace(self, **fields: Any) -> SplitExpr:
        """A copy with some fields changed."""
        out = SplitExpr(self.index, self.key, self.lower_factor, self.upper_factor, self.scale,
                        self.div_mode, self.dtype)
        for name, value in fields.items():
            setattr(out, name, value)
        return out

    def index_equal(self, other: SplitExpr) -> bool:
        """Both split the same index."""
        return self.index is other.index or self.key == other.key

    def div_mode_compatible_to(self, mode: int) -> bool:
        """A split without division or modulus reads the same in either mode."""
        return self.div_mode == mode or (self.lower_factor == 1 and self.upper_factor == INF)

    def normalize_with_scale(self, sscale: int) -> PrimExpr:
        """The expression ``self * sscale``."""
        if self.scale == 0:
            return make_const(self.dtype, 0)
        res = self.index
        if self.upper_factor != INF:
            res = mod_impl(res, make_const(self.dtype, self.upper_factor), self.div_mode)
        if self.lower_factor != 1:
            res = div_impl(res, make_const(self.dtype, self.lower_factor), self.div_mode)
        sscale *= self.scale
        if sscale != 1:
            res = op.mul(res, make_const(self.dtype, sscale))
        return res

    def normalize(self) -> PrimExpr:
        """The expression of this split."""
        return self.normalize_with_scale(1)

    def __repr__(self) -> str:
        mode = "truncdiv" if self.div_mode == TRUNC else "floordiv"
        upper = "+inf" if self.upper_factor == INF else self.upper_factor
        return (f"split({self.index}, lower={self.lower_factor}, upper={upper}, "
                f"scale={self.scale}, div_mode={mode})")


class SumExpr:
    """``sum(args) + base`` (TVM's ``SumExpr``); splits of one index are adjacent."""

    __slots__ = ("dtype", "args", "base")

    def __init__(self, dtype: str, args: list | None = None, base: int = 0) -> None:
        self.dtype = dtype
        self.args: list[SplitExpr] = [] if args is None else args
        self.base = base

    def copy(self) -> SumExpr:
        """A copy whose list of args may be changed (the splits are shared, never mutated)."""
        return SumExpr(self.dtype, list(self.args), self.base)

    def is_zero(self) -> bool:
        """The sum has no terms and no constant."""
        return self.base == 0 and not self.args

    def divisible_by(self, scale: int) -> bool:
        """Every scale and the base are multiples of ``scale``."""
        return self.base % scale == 0 and all(a.scale % scale == 0 for a in self.args)

    def mul(self, scale: int) -> SumExpr:
        """``self * scale``."""
        return SumExpr(self.dtype, [a.replace(scale=a.scale * scale) for a in self.args],
                       self.base * scale)

    def divide(self, scale: int) -> SumExpr:
        """``self / scale`` (exact: ``divisible_by(scale)`` holds)."""
        return SumExpr(self.dtype, [a.replace(scale=cdiv(a.scale, scale)) for a in self.args],
                       cdiv(self.base, scale))

    def add_const(self, value: int) -> SumExpr:
        """``self + value``."""
        return SumExpr(self.dtype, list(self.args), self.base + value)

    def add_split(self, other: SplitExpr, scale: int) -> SumExpr:
        """``self + other * scale``, keeping each index's splits together."""
        out = self.copy()
        out._add_split(other, scale)
        return out

    def add_sum(self, other: SumExpr, scale: int) -> SumExpr:
        """``self + other * scale``."""
        out = self.copy()
        for arg in other.args:
            out._add_split(arg, scale)
        out.base += other.base * scale
        return out

    def _add_split(self, other: SplitExpr, scale: int) -> None:
        if other.scale == 0:
            return
        args = self.args
        start = 0
        while start < len(args) and not args[start].index_equal(other):
            start += 1
        for j in range(start, len(args)):
            cur = args[j]
            if not cur.index_equal(other) or other.lower_factor > cur.lower_factor:
                args.insert(j, other.replace(scale=other.scale * scale))
                return
            if (other.lower_factor == cur.lower_factor and other.upper_factor == cur.upper_factor
                    and other.div_mode_compatible_to(cur.div_mode)):
                args[j] = cur.replace(scale=cur.scale + other.scale * scale)
                return
        args.append(other.replace(scale=other.scale * scale))

    def normalize(self) -> PrimExpr:
        """The expression of the sum, in TVM's order."""
        if not self.args:
            return make_const(self.dtype, self.base)
        return _normalize(self.dtype, simplify_split_exprs(self.args), self.base)

    def __repr__(self) -> str:
        return "sum(base=" + ", ".join([str(self.base)] + [repr(a) for a in self.args]) + ")"


def is_min_value(dtype: str, value: int) -> bool:
    """``value`` is the dtype's smallest value (its negation does not fit)."""
    return value == dt.DataType(dtype).min_value()


def simplify_split_exprs(args: list[SplitExpr]) -> list[SplitExpr]:
    """Merge the splits of each index, then sort them as TVM does.

    ``x / (c*s) * s + x % (c*s) / c`` is ``x / c`` (for floor and truncated
    division alike): a pair of neighbouring splits that tile each other
    becomes one, its scale that of the finer one.
    """
    args = list(args)
    for i in range(len(args)):
        if args[i].scale == 0:
            continue
        for j in range(i + 1, len(args)):
            lhs, rhs = args[i], args[j]
            if not lhs.index_equal(rhs) or lhs.upper_factor < rhs.lower_factor:
                break
            if (lhs.upper_factor == rhs.upper_factor and lhs.lower_factor == rhs.lower_factor
                    and lhs.div_mode_compatible_to(rhs.div_mode)):
                args[j] = rhs.replace(scale=rhs.scale + lhs.scale)
                args[i] = lhs.replace(scale=0)
            elif (lhs.lower_factor == rhs.upper_factor and rhs.scale != 0
                  and lhs.scale % rhs.scale == 0
                  and lhs.lower_factor == cdiv(lhs.scale, rhs.scale) * rhs.lower_factor
                  and lhs.div_mode_compatible_to(rhs.div_mode)):
                args[j] = rhs.replace(upper_factor=lhs.upper_factor)
                args[i] = lhs.replace(scale=0)
                break
    # TVM does not compare indices here (its order would depend on addresses): a stable
    # sort keeps equal-scale terms in the order they were added.
    args.sort(key=lambda a: (-a.scale, -a.lower_factor, -a.upper_factor, -a.div_mode))
    return args


def _normalize(dtype: str, args: list[SplitExpr], base: int) -> PrimExpr:
    min_base = is_min_value(dtype, base)
    res: PrimExpr = make_const(dtype, 0)
    for arg in args:
        if arg.scale > 0:
            res = op.add(res, arg.normalize())
    if base > 0 or min_base:
        res = op.add(res, make_const(dtype, base))
    for arg in args:
        if arg.scale < 0:
            res = op.sub(res, arg.normalize_with_scale(-1))
    if base < 0 and not min_base:
        res = op.sub(res, make_const(dtype, -base))
    return res


def reduce_gcd(s: SumExpr, c: int) -> tuple | None:
    """``s`` as ``g*B + r`` with ``g`` dividing ``c`` and every scale, ``0 <= r < g``.

    Returns ``(B, c // g, r)``, or None where ``g`` is 1. Then
    ``floordiv(s, c) == floordiv(B, c // g)`` and ``floormod(s, c) == g *
    floormod(B, c // g) + r``.
    """
    if not s.args:
        return None
    g = math.gcd(c, *(a.scale for a in s.args))
    if g <= 1:
        return None
    r = s.base % g
    inner = SumExpr(s.dtype, [a.replace(scale=a.scale // g) for a in s.args], (s.base - r) // g)
    return inner, c // g, r


def factors(e: PrimExpr) -> list:
    """The factors of a product, left to right (TVM's ``UnpackReduction<Mul>``)."""
    if type(e) is not Mul:
        return [e]
    return factors(e.a) + factors(e.b)


def mul_and_normalize(a: PrimExpr, b: PrimExpr) -> PrimExpr:
    """``a * b`` as one product, its constant factors gathered at the end."""
    scale = 1
    res: PrimExpr = make_const(a.dtype, 1)
    for f in factors(a) + factors(b):
        if type(f) is IntImm:
            scale *= f.value
        else:
            res = op.mul(res, f)
    if scale != 1:
        res = op.mul(res, make_const(res.dtype, scale))
    return res


def _const(e: Any) -> int | None:
    return e.value if type(e) is IntImm else None


#: How each binary node folds two constants (the divisions after a zero check).
_CONST_FOLD = {
    Add: operator.add,
    Sub: operator.sub,
    Mul: operator.mul,
    Div: cdiv,
    Mod: cmod,
    FloorDiv: operator.floordiv,
    FloorMod: operator.mod,  # Python's % rounds the quotient down, as floormod does
}


def try_fold(cls: type, a: Any, b: Any) -> PrimExpr | None:
    """TVM's ``TryConstFold`` on canonical operands: constants and identities only."""
    ca, cb = _const(a), _const(b)
    if ca is not None and cb is not None:
        return _fold_constants(cls, a.dtype, ca, cb)
    if cls is Add:
        return b if ca == 0 else a if cb == 0 else None
    if cls is Sub:
        return a if cb == 0 else None
    if cls is Mul:
        return _fold_mul_identity(a, b, ca, cb)
    return _fold_division_identity(cls, a, ca, cb)


def _fold_constants(cls: type, dtype: str, ca: int, cb: int) -> PrimExpr | None:
    """``ca <cls> cb`` as a constant; None for a division by zero (left to the runtime)."""
    if cb == 0 and cls not in (Add, Sub, Mul):
        return None
    return make_const(dtype, _CONST_FOLD[cls](ca, cb))


def _fold_mul_identity(a: Any, b: Any, ca: int | None, cb: int | None) -> PrimExpr | None:
    """``1 * b``, ``a * 0`` -> ``b`` / ``a``; ``0 * b``, ``a * 1`` -> ``a``."""
    if ca == 1 or cb == 0:
        return b
    if ca == 0 or cb == 1:
        return a
    return None


def _fold_division_identity(cls: type, a: Any, ca: int | None, cb: int | None) -> PrimExpr | None:
    """``0 / b`` -> ``0``; ``a / 1`` -> ``a`` and ``a % 1`` -> ``0``."""
    if ca == 0:
        return a
    if cb == 1:
        return a if cls in (Div, FloorDiv) else make_const(a.dtype, 0)
    return None


def _scale_and_factors(e: PrimExpr) -> tuple[int, list]:
    """The product of ``e``'s constant factors, and its other factors left to right."""
    scale, prods = 1, []
    for f in factors(e):
        if type(f) is IntImm:
            scale *= f.value
        else:
            prods.append(f)
    return scale, prods


def _take_common(lhs_prods: list, rhs_prods: list, structure_id: Any) -> tuple[list, list]:
    """Match each rhs factor with a structurally equal lhs factor, at most once each.

    Matched lhs factors become None in ``lhs_prods``. Returns the matched
    factors and the unmatched rhs factors, both in rhs order.
    """
    common, rest = [], []
    for f in rhs_prods:
        sid = structure_id(f)
        for i, g in enumerate(lhs_prods):
            if g is not None and structure_id(g) == sid:
                lhs_prods[i] = None
                common.append(f)
                break
        else:
            rest.append(f)
    return common, rest


def _product(dtype: str, prods: list) -> PrimExpr:
    """``1 * f0 * f1 * ...``, the left fold ``op.mul`` simplifies as it goes."""
    res: PrimExpr = make_const(dtype, 1)
    for f in prods:
        if f is not None:
            res = op.mul(res, f)
    return res


def prod_div_simplify(lhs: PrimExpr, rhs: PrimExpr, structure_id: Any) -> tuple | None:
    """Cancel factors common to two products: ``(lhs', rhs', common)`` or None.

    ``div(a*c, b*c) == div(a, b)`` and ``mod(a*c, b*c) == mod(a, b) * c``
    for floor and truncated division alike (both round the real quotient).
    """
    if type(rhs) is IntImm:
        return None  # constant divisors are the splits' business
    lhs_scale, lhs_prods = _scale_and_factors(lhs)
    rhs_scale, rhs_prods = _scale_and_factors(rhs)
    common, rest = _take_common(lhs_prods, rhs_prods, structure_id)
    g = math.gcd(lhs_scale, rhs_scale)
    if not common and g == 1:
        return None
    if g:
        lhs_scale, rhs_scale = cdiv(lhs_scale, g), cdiv(rhs_scale, g)
    dtype = rhs.dtype
    return (op.mul(_product(lhs.dtype, lhs_prods), make_const(lhs.dtype, lhs_scale)),
            op.mul(_product(dtype, rest), make_const(dtype, rhs_scale)),
            op.mul(_product(dtype, common), make_const(dtype, g)))
