"""Region estimates: which indices a block of accesses touches (TVM's ``EstimateRegion*Bound``).

A region is one ``Range(min, extent)`` per dimension, ``min`` an index over
loop vars with domains ``var_dom`` (restricted by ``predicate``). The touched
set is the union, over all loop values, of the boxes ``[min, min + extent)``.

- ``estimate_region_strict_bound`` (and ``_lower_bound``, the same in TVM):
  boxes contained in the touched set and exactly it, or None when that is not
  proven.
- ``estimate_region_upper_bound``: boxes containing the touched set.

TVM detects an iterator map (``DetectIterMap``); tirlite handles the forms
that map covers in practice, and nothing else:

- an index is ``base + sum(k * atom)``: ``base`` free of loop vars, ``k``
  constants, an atom a digit ``(v // lf) % ext`` of one loop var ``v`` (its
  domain ``[0, n)``), or ``floordiv`` / ``floormod`` by a constant of an
  expression whose exact values form an interval (``(i + j) // 2``);
- digits of one var are independent when they do not overlap and the
  domain covers every combination of them; different dimensions (and
  terms) must use independent digits, so that the boxes' product is touched;
- the sum covers an interval when, taking terms by increasing ``|k|``, each
  ``|k|`` is at most the width reached so far (starting from the extent);
- each predicate conjunct (``<``, ``<=``, ``>``, ``>=``, ``==``) must bound a
  multiple of one dimension's loop-var part, which then narrows exactly.

Anything else fails (strict: None; upper: the plain interval evaluation).
"""

from __future__ import annotations

import itertools
import math
from typing import Any

from .. import op
from ..analysis.var_use import uses_any_var
from ..expr import EQ, GE, GT, LE, LT, Add, FloorDiv, FloorMod, IntImm, Mul, PrimExpr, Sub, Var
from ..range import Range
from .int_set import IntervalSet, end_max, end_min

_COMPARE = (LT, LE, GT, GE, EQ)


class _Opaque:
    """``floordiv``/``floormod`` of a sum with exact values ``[0, hi]`` (after a shift)."""

    _ids = itertools.count()

    def __init__(self, hi: int, resources: list) -> None:
        self.key = ("opaque", next(self._ids))
        self.hi = hi
        self.resources = resources


class _Affine:
    """Decomposes indices into ``base + sum(k * atom)`` over the loop vars of ``var_dom``."""

    def __init__(self, var_dom: dict, strict: bool) -> None:
        self.dom = {id(v): (v, r.min, _int(r.extent)) for v, r in var_dom.items()}
        self.strict = strict
        self.opaque: dict[tuple, _Opaque] = {}

    # ------------------------------------------------------------ atoms

    def split(self, v: Var, lf: int, ext: int) -> tuple:
        """The key of digit ``(v // lf) % ext``, a top digit's ``ext`` normalized."""
        n = self.dom[id(v)][2]
        if lf * ext >= n:
            ext = -(-n // lf)
        return ("split", id(v), lf, ext)

    def width(self, key: tuple) -> int:
        """The atom takes every value of ``[0, width]``."""
        if key[0] == "split":
            return key[3] - 1
        return self.opaque[key].hi

    def resources(self, key: tuple) -> list:
        """The digits an atom is made of."""
        return [key] if key[0] == "split" else self.opaque[key].resources

    def is_top(self, key: tuple) -> bool:
        n = self.dom[key[1]][2]
        return key[2] * key[3] >= n

    # ------------------------------------------------------------ decomposition

    def lin(self, e: PrimExpr) -> tuple | None:
        """``(base, {atom: k})`` or None."""
        if not uses_any_var(e, self.dom.keys()):
            return (e, {})
        if isinstance(e, Var):  # a SizeVar too
            return self._lin_var(e)
        rule = _LIN_RULES.get(type(e))
        return None if rule is None else rule(self, e)

    def _lin_var(self, e: Var) -> tuple | None:
        """A domain var is one digit covering its whole extent."""
        v, lo, n = self.dom[id(e)]
        return None if n is None or n < 1 else (lo, {self.split(v, 1, n): 1})

    def _lin_add(self, e: Add) -> tuple | None:
        return self._lin_sum(e, 1)

    def _lin_sub(self, e: Sub) -> tuple | None:
        return self._lin_sum(e, -1)

    def _lin_sum(self, e: Add | Sub, sign: int) -> tuple | None:
        a, b = self.lin(e.a), self.lin(e.b)
        if a is None or b is None:
            return None
        return _combine(a, b, sign)

    def _lin_mul(self, e: Mul) -> tuple | None:
        """Linear only when one side is a constant."""
        for x, c in ((e.a, e.b), (e.b, e.a)):
            if type(c) is IntImm:
                inner = self.lin(x)
                return None if inner is None else _scale(inner, c.value)
        return None

    def _lin_floordiv(self, e: FloorDiv) -> tuple | None:
        inner = self._lin_dividend(e)
        return None if inner is None else self.floordiv(inner, e.b.value)

    def _lin_floormod(self, e: FloorMod) -> tuple | None:
        inner = self._lin_dividend(e)
        return None if inner is None else self.floormod(inner, e.b.value)

    def _lin_dividend(self, e: FloorDiv | FloorMod) -> tuple | None:
        """The linear form of ``e.a`` when ``e.b`` is a positive constant, else None."""
        if type(e.b) is not IntImm or e.b.value <= 0:
            return None
        return self.lin(e.a)

    def floordiv(self, x: tuple, c: int) -> tuple | None:
        base, terms = x
        if c == 1:
            return x
        if _is_zero(base) and all(k % c == 0 for k in terms.values()):
            return (base, {key: k // c for key, k in terms.items()})
        digit = self._single_digit(x)
        if digit is not None:
            _, vid, lf, ext = digit
            v = self.dom[vid][0]
            if self.is_top(digit):
                return (base, {self.split(v, lf * c, self.dom[vid][2]): 1})
            if ext % c == 0:
                return (base, {self.split(v, lf * c, ext // c): 1})
        rng = self.values(x)
        if rng is None:
            return None
        return self._opaque(x, rng[0] // c, rng[1] // c)

    def floormod(self, x: tuple, c: int) -> tuple | None:
        digit = self._single_digit(x)
        if digit is not None:
            _, vid, lf, ext = digit
            if self.is_top(digit) or ext % c == 0:
                return (x[0], {self.split(self.dom[vid][0], lf, c): 1})
        rng = self.values(x)
        if rng is None:
            return None
        lo, hi = rng
        if hi - lo + 1 >= c:
            return self._opaque(x, 0, c - 1)
        if lo // c == hi // c:
            return self._opaque(x, lo % c, hi % c)
        return None

    def _single_digit(self, x: tuple) -> tuple | None:
        base, terms = x
        if not _is_zero(base) or len(terms) != 1:
            return None
        (key, k), = terms.items()
        return key if k == 1 and key[0] == "split" else None

    def _opaque(self, x: tuple, lo: int, hi: int) -> tuple:
        res = [r for key in x[1] for r in self.resources(key)]
        atom = _Opaque(hi - lo, res)
        self.opaque[atom.key] = atom
        return (op.const(lo, x[0].dtype), {atom.key: 1})

    def values(self, x: tuple) -> tuple | None:
        """Constant ``(lo, hi)``: exactly the values of ``x`` (strict), or a hull of them."""
        base, terms = x
        if type(base) is not IntImm:
            return None
        if self.strict and not self.independent([r for k in terms for r in self.resources(k)]):
            return None
        lo, span, contiguous = self.sweep(terms, 1)
        if self.strict and not contiguous:
            return None
        return (base.value + lo, base.value + lo + span - 1)

    # ------------------------------------------------------------ sets of atoms

    def sweep(self, terms: dict, extent: int) -> tuple:
        """``(lowest offset, width, contiguous)`` of ``sum(k * atom) + [0, extent)``."""
        low = sum(min(0, k * self.width(key)) for key, k in terms.items())
        span, contiguous = extent, True
        for scale, w in sorted((abs(k), self.width(key)) for key, k in terms.items()):
            if w == 0:
                continue
            if scale > span:
                contiguous = False
            span += scale * w
        return low, span, contiguous

    def independent(self, digits: list) -> bool:
        """Every combination of these digits' values is reached by some loop values."""
        by_var: dict[int, list] = {}
        for key in digits:
            if key[3] > 1:
                by_var.setdefault(key[1], []).append(key)
        for vid, keys in by_var.items():
            keys.sort(key=lambda k: k[2])
            for low, high in zip(keys, keys[1:]):
                if high[2] % (low[2] * low[3]) != 0:
                    return False
            top = keys[-1]
            if len(keys) > 1 and self.is_top(top) and self.dom[vid][2] % top[2] != 0:
                return False
        return True


#: ``_Affine.lin``'s rule per node class; other nodes are not linear in the atoms.
_LIN_RULES = {
    Add: _Affine._lin_add,
    Sub: _Affine._lin_sub,
    Mul: _Affine._lin_mul,
    FloorDiv: _Affine._lin_floordiv,
    FloorMod: _Affine._lin_floormod,
}


def _int(e: PrimExpr) -> int | None:
    return e.value if type(e) is IntImm else None


def _is_zero(e: PrimExpr) -> bool:
    return type(e) is IntImm and e.value == 0


def _combine(a: tuple, b: tuple, sign: int) -> tuple:
    base = op.add(a[0], b[0]) if sign > 0 else op.sub(a[0], b[0])
    terms = dict(a[1])
    for key, k in b[1].items():
        terms[key] = terms.get(key, 0) + sign * k
    return (base, {key: k for key, k in terms.items() if k != 0})


def _scale(x: tuple, c: int) -> tuple:
    terms = {key: k * c for key, k in x[1].items()} if c else {}
    return (op.mul(x[0], c), terms)


# ---------------------------------------------------------------- predicates


def _conjunct_bounds(aff: _Affine, predicate: PrimExpr) -> list | None:
    """``[(terms, lower K or None, upper K or None)]``: ``K_lo <= sum(terms) <= K_hi``.

    None when a conjunct is not such a bound.
    """
    from .constraints import conjuncts

    out = []
    for part in conjuncts(predicate):
        if type(part) is IntImm and part.value:
            continue
        if type(part) not in _COMPARE:
            return None
        d = aff.lin(op.sub(part.a, part.b))
        if d is None or not d[1]:
            return None
        base, terms = d
        neg = op.neg(base)
        one = op.const(1, base.dtype)
        lo = {GT: op.add(neg, one), GE: neg, EQ: neg}.get(type(part))
        hi = {LT: op.sub(neg, one), LE: neg, EQ: neg}.get(type(part))
        out.append((terms, lo, hi))
    return out


def _primitive(terms: dict) -> tuple:
    """``(g, unit)`` with ``terms == g * unit`` and the unit's coefficients coprime."""
    g = 0
    for k in terms.values():
        g = math.gcd(g, k)
    first = terms[min(terms, key=repr)]
    g = g if first > 0 else -g
    return g, {key: k // g for key, k in terms.items()}


def _multiple(terms: dict, unit: dict) -> int | None:
    """``t`` with ``terms == t * unit``, else None."""
    if set(terms) != set(unit):
        return None
    key = next(iter(unit))
    if terms[key] % unit[key]:
        return None
    t = terms[key] // unit[key]
    return t if all(terms[k] == t * unit[k] for k in unit) else None


def _unit_limits(t: int, lo: Any, hi: Any) -> tuple:
    """Bounds on ``U`` from ``lo <= t * U <= hi`` (each may be None)."""
    s = abs(t)

    def down(k):  # floor(k / s)
        return k if s == 1 else op.floordiv(k, s)

    def up(k):  # ceil(k / s)
        return k if s == 1 else op.neg(op.floordiv(op.neg(k), s))

    if t > 0:
        return (None if lo is None else up(lo), None if hi is None else down(hi))
    return (None if hi is None else up(op.neg(hi)), None if lo is None else down(op.neg(lo)))


# ---------------------------------------------------------------- one dimension


class _Dim:
    """One dimension: its index decomposed, its extent, and the predicate's limits on it."""

    def __init__(self, aff: _Affine, rng: Range) -> None:
        self.extent = _int(rng.extent)
        self.lin = aff.lin(rng.min)
        self.unit = None
        self.g = 0
        if self.lin is not None and self.lin[1]:
            self.g, self.unit = _primitive(self.lin[1])
        self.lows: list = []
        self.highs: list = []

    def take(self, terms: dict, lo: Any, hi: Any) -> bool:
        """Apply ``lo <= sum(terms) <= hi`` if it bounds a multiple of this dimension's unit."""
        if self.unit is None:
            return False
        t = _multiple(terms, self.unit)
        if t is None:
            return False
        lo_u, hi_u = _unit_limits(t, lo, hi)
        if lo_u is not None:
            self.lows.append(lo_u)
        if hi_u is not None:
            self.highs.append(hi_u)
        return True

    def box(self, aff: _Affine, strict: bool, ana: Any) -> IntervalSet | None:
        """The touched interval (exact when ``strict``), or None."""
        base, terms = self.lin
        if not terms:
            return _interval(ana, base, op.add(base, self.extent - 1))
        if not (self.lows or self.highs):
            low, span, contiguous = aff.sweep(terms, self.extent)
            if strict and not contiguous:
                return None
            lo = op.add(base, low)
            return _interval(ana, lo, op.add(lo, span - 1))
        u_low, u_span, contiguous = aff.sweep(self.unit, 1)
        if strict and (not contiguous or abs(self.g) > self.extent):
            return None
        dtype = base.dtype
        u_lo, u_hi = op.const(u_low, dtype), op.const(u_low + u_span - 1, dtype)
        for x in self.lows:
            u_lo = end_max(u_lo, x)
        for x in self.highs:
            u_hi = end_min(u_hi, x)
        u_lo, u_hi = ana.simplify(u_lo), ana.simplify(u_hi)
        if strict and self.extent > abs(self.g) and not ana.can_prove(op.less_equal(u_lo, u_hi)):
            return None  # an empty range of the unit must give an empty box
        first, last = (u_lo, u_hi) if self.g > 0 else (u_hi, u_lo)
        lo = _plus(base, op.mul(first, self.g))
        hi = _plus(base, op.add(op.mul(last, self.g), self.extent - 1))
        return _interval(ana, lo, hi)


def _plus(base: PrimExpr, e: PrimExpr) -> PrimExpr:
    """``base + e``, added into each side of a ``min``/``max`` (simplifies better)."""
    from ..expr import Max, Min

    if type(e) in (Max, Min) and not _is_zero(base):
        build = op.max if type(e) is Max else op.min
        return build(_plus(base, e.a), _plus(base, e.b))
    return op.add(base, e)


def _interval(ana: Any, lo: PrimExpr, hi: PrimExpr) -> IntervalSet:
    return IntervalSet(ana.simplify(lo), ana.simplify(hi))


# ---------------------------------------------------------------- entry points


def _check(region: Any, var_dom: Any, predicate: Any, who: str) -> tuple:
    if not isinstance(region, (list, tuple)) or not all(isinstance(r, Range) for r in region):
        raise TypeError(f"{who}: region must be a list of tir.Range, got {region!r}")
    if not isinstance(var_dom, dict):
        raise TypeError(f"{who}: var_dom must be a dict of tir.Var to tir.Range, "
                        f"got {type(var_dom).__name__}")
    for v, r in var_dom.items():
        if not isinstance(v, Var) or not isinstance(r, Range):
            raise TypeError(f"{who}: var_dom maps tir.Var to tir.Range, got {v!r}: {r!r}")
    if predicate is None or predicate is True:
        predicate = op.const(True, "bool")
    if not isinstance(predicate, PrimExpr) or predicate.dtype != "bool":
        raise TypeError(f"{who}: predicate must be a bool PrimExpr, got {predicate!r}")
    return list(region), dict(var_dom), predicate


def _analyzer(var_dom: dict) -> Any:
    from .analyzer import Analyzer

    ana = Analyzer()
    for v, r in var_dom.items():
        ana.bind(v, r)
    return ana


def _strict(region: list, var_dom: dict, predicate: PrimExpr) -> list | None:
    aff = _Affine(var_dom, strict=True)
    dims = [_Dim(aff, r) for r in region]
    if any(d.lin is None or d.extent is None for d in dims):
        return None
    bounds = _conjunct_bounds(aff, predicate)
    if bounds is None:
        return None
    for terms, lo, hi in bounds:
        if sum(d.take(terms, lo, hi) for d in dims) != 1:
            return None  # a conjunct on no dimension (or on two sharing digits) is not handled
    digits = [r for d in dims for key in d.lin[1] for r in aff.resources(key)]
    if not aff.independent(digits) or len(set(digits)) != len(digits):
        return None
    ana = _analyzer(var_dom)
    boxes = [d.box(aff, True, ana) for d in dims]
    return None if any(b is None for b in boxes) else boxes


def estimate_region_strict_bound(region: list, var_dom: dict, predicate: Any) -> list | None:
    """Exactly the touched boxes, one ``IntSet`` per dimension, or None if not proven."""
    region, var_dom, predicate = _check(region, var_dom, predicate,
                                        "estimate_region_strict_bound")
    return _strict(region, var_dom, predicate)


def estimate_region_lower_bound(region: list, var_dom: dict, predicate: Any) -> list | None:
    """Boxes inside the touched set (TVM: the strict bound), or None."""
    region, var_dom, predicate = _check(region, var_dom, predicate,
                                        "estimate_region_lower_bound")
    return _strict(region, var_dom, predicate)


def estimate_region_upper_bound(region: list, var_dom: dict, predicate: Any) -> list:
    """Boxes holding the touched set: the strict bound when proven, else a relaxation."""
    region, var_dom, predicate = _check(region, var_dom, predicate,
                                        "estimate_region_upper_bound")
    strict = _strict(region, var_dom, predicate)
    if strict is not None:
        return strict
    aff = _Affine(var_dom, strict=False)
    dims = [_Dim(aff, r) for r in region]
    bounds = _conjunct_bounds(aff, predicate) or []
    taken = [[d.take(terms, lo, hi) for d in dims] for terms, lo, hi in bounds]
    if not all(any(row) for row in taken):  # the predicate is used whole or not at all
        for d in dims:
            d.lows, d.highs = [], []
    ana = _analyzer(var_dom)
    out = []
    for d, rng in zip(dims, region):
        box = d.box(aff, False, ana) if d.lin is not None and d.extent is not None else None
        out.append(box if box is not None else _relaxed(ana, rng, var_dom))
    return out


def _relaxed(ana: Any, rng: Range, var_dom: dict) -> IntervalSet:
    """TVM's fallback: the interval evaluation of ``[min, min + extent - 1]``."""
    from .int_set_eval import as_dom_map, eval_set

    doms = as_dom_map(var_dom, "estimate_region_upper_bound")
    lo = eval_set(ana, rng.min, doms)
    hi = eval_set(ana, ana.simplify(op.sub(op.add(rng.min, rng.extent), 1)), doms)
    return IntervalSet(lo.min_value, hi.max_value)
