"""Patterns for the rewrite rules: TIR expressions with pattern variables as leaves.

A pattern is built with the ordinary operators, e.g. ``floordiv(x * c1 + y, c1)``
where ``x``, ``y`` are ``PVar`` (match any expression) and ``c1`` a ``PConst``
(matches a constant). A variable used twice must match structurally equal
expressions. ``ramp(b, s)`` and ``broadcast(v)`` match vectors of any lane
count and rebuild with the matched one. A constant in a pattern matches a
constant of the same value in any dtype.

>>> x, y = PVar("x"), PVar("y")
>>> rule = Rule(x + y - y, x)
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import attrs

from .. import op
from ..expr import (
    EQ,
    GE,
    GT,
    LE,
    LT,
    NE,
    Add,
    And,
    Broadcast,
    Cast,
    Div,
    FloatImm,
    FloorDiv,
    FloorMod,
    IntImm,
    Max,
    Min,
    Mod,
    Mul,
    Not,
    Or,
    PrimExpr,
    Ramp,
    Select,
    Sub,
    Var,
)
from ..expr_vector import scalable_factor
from ..node import EXPR, EXPRS, child_fields, init_fields, node, replace
from .const_int_bound import wraps

#: The lane count written in vector patterns; it matches any lane count.
ANY_LANES = 65521


@node
class PVar(Var):
    """A pattern variable matching any expression (``dtype`` only shapes the pattern)."""


@node
class PConst(Var):
    """A pattern variable matching an integer or float constant."""


def ramp(base: PrimExpr, stride: PrimExpr) -> Ramp:
    """A ramp pattern of any lane count."""
    return Ramp(base, stride, ANY_LANES)


def broadcast(value: PrimExpr) -> Broadcast:
    """A broadcast pattern of any lane count."""
    return Broadcast(value, ANY_LANES)


# ---------------------------------------------------------------- structural equality


@functools.cache
def _shape(cls: type) -> tuple[tuple, tuple]:
    """(child fields, data fields) of a node class, the data ones being constructor fields."""
    children = tuple((n, k) for n, k, _ in child_fields(cls))
    names = {n for n, _ in children}
    data = tuple(n for n in init_fields(cls) if n not in names)
    return children, data


def same_expr(a: Any, b: Any, seen: set | None = None) -> bool:
    """Structural equality of two expressions (free variables compared by identity).

    Pairs already found equal are remembered, so shared sub-expressions are compared once.
    """
    if a is b:
        return True
    cls = type(a)
    if cls is not type(b):
        return False
    if cls is IntImm:
        return a.value == b.value and a.dtype == b.dtype
    if cls is FloatImm:  # repr keeps -0.0 apart from 0.0 (and nan equal to itself)
        return repr(a.value) == repr(b.value) and a.dtype == b.dtype
    if isinstance(a, Var) or a.dtype != b.dtype:
        return False
    seen = set() if seen is None else seen
    if (id(a), id(b)) in seen:
        return True
    if not _same_fields(a, b, seen):
        return False
    seen.add((id(a), id(b)))
    return True


def _same_fields(a: Any, b: Any, seen: set) -> bool:
    children, data = _shape(type(a))
    for name in data:
        x, y = getattr(a, name), getattr(b, name)
        if x is not y and (isinstance(x, PrimExpr) and not same_expr(x, y, seen) or
                           not isinstance(x, PrimExpr) and x != y):
            return False
    for name, kind in children:
        x, y = getattr(a, name), getattr(b, name)
        if kind == EXPR:
            if (x is None) != (y is None) or x is not None and not same_expr(x, y, seen):
                return False
        elif kind == EXPRS:
            if len(x) != len(y) or not all(same_expr(p, q, seen) for p, q in zip(x, y)):
                return False
        elif x is not y:
            return False
    return True


# ---------------------------------------------------------------- matching


def _bind(env: dict, name: str, value: Any) -> bool:
    prev = env.get(name)
    if prev is None:
        env[name] = value
        return True
    return prev is value or same_expr(prev, value)


def match(pat: Any, e: Any, env: dict) -> bool:
    """Whether ``e`` matches ``pat``; bindings go into ``env`` (name -> expression)."""
    cls = type(pat)
    if cls is PVar:
        return _bind(env, pat.name, e)
    if cls is PConst:
        return (type(e) is IntImm or type(e) is FloatImm) and _bind(env, pat.name, e)
    if cls is IntImm or cls is FloatImm:
        return type(e) is cls and e.value == pat.value
    if type(e) is not cls:
        return False
    children, data = _shape(cls)
    for name in data:
        if not _match_data(name, getattr(pat, name), getattr(e, name), env):
            return False
    for name, kind in children:
        p, x = getattr(pat, name), getattr(e, name)
        if kind == EXPR and not match(p, x, env):
            return False
    return True


def _accepts(pat: Any, cls: type) -> bool:
    """Whether a node of class ``cls`` could match ``pat`` at the top."""
    pcls = type(pat)
    if pcls is PVar:
        return True
    if pcls is PConst:
        return cls is IntImm or cls is FloatImm
    return pcls is cls


def child_types(e: Any) -> tuple:
    """The classes of ``e``'s expression children, the key of ``rules_for``."""
    return tuple(type(getattr(e, n)) for n, k in _shape(type(e))[0] if k == EXPR)


def could_match(rule_pattern: Any, types: tuple) -> bool:
    """Whether a pattern's children accept children of these classes."""
    pats = [getattr(rule_pattern, n) for n, k in _shape(type(rule_pattern))[0] if k == EXPR]
    return len(pats) == len(types) and all(_accepts(p, t) for p, t in zip(pats, types))


def compile_pattern(pat: Any) -> Callable[[Any, dict], bool]:
    """A function doing ``match(pat, e, env)`` with the pattern's shape resolved once."""
    cls = type(pat)
    if cls is PVar or cls is PConst or cls is IntImm or cls is FloatImm:
        return lambda e, env: match(pat, e, env)
    children, data = _shape(cls)
    subs = tuple((n, compile_pattern(getattr(pat, n))) for n, k in children if k == EXPR)
    if not data and len(subs) == 2 and subs[0][0] == "a" and subs[1][0] == "b":
        fa, fb = subs[0][1], subs[1][1]
        return lambda e, env: type(e) is cls and fa(e.a, env) and fb(e.b, env)
    fixed = tuple((n, getattr(pat, n)) for n in data)

    def matcher(e: Any, env: dict) -> bool:
        if type(e) is not cls:
            return False
        if not all(_match_data(n, p, getattr(e, n), env) for n, p in fixed):
            return False
        return all(f(getattr(e, n), env) for n, f in subs)

    return matcher


def _match_data(name: str, p: Any, x: Any, env: dict) -> bool:
    if name == "lanes" and p == ANY_LANES:
        return _bind_lanes(env, x)
    return p == x


def _bind_lanes(env: dict, lanes: Any) -> bool:
    """Bind the lane count; ``4 * vscale()`` and ``vscale() * 4`` count the same lanes."""
    prev = env.setdefault("lanes", lanes)
    if prev is lanes:
        return True
    if isinstance(prev, int) or isinstance(lanes, int):
        return prev == lanes if isinstance(prev, int) and isinstance(lanes, int) else False
    if same_expr(prev, lanes):
        return True
    factor = scalable_factor(prev)
    return factor is not None and factor == scalable_factor(lanes)


# ---------------------------------------------------------------- building results

#: The folding builder of each binary node class.
BUILDERS: dict[type, Callable] = {
    Add: op.add, Sub: op.sub, Mul: op.mul, Div: op.truncdiv, Mod: op.truncmod,
    FloorDiv: op.floordiv, FloorMod: op.floormod, Min: op.min, Max: op.max,
    EQ: op.equal, NE: op.not_equal, LT: op.less, LE: op.less_equal, GT: op.greater,
    GE: op.greater_equal, And: op.logical_and, Or: op.logical_or,
}


def build(t: Any, env: dict) -> PrimExpr:
    """Instantiate template ``t`` with the bindings; constants fold as they meet."""
    cls = type(t)
    if cls is PVar or cls is PConst:
        return env[t.name]
    if cls is IntImm or cls is FloatImm:
        return t
    fn = BUILDERS.get(cls)
    if fn is not None:
        a, b = build(t.a, env), build(t.b, env)
        out = fn(a, b)
        if type(out) is IntImm and type(a) is IntImm and type(b) is IntImm:
            _check_exact(cls, a.value, b.value, out)
        return out
    if cls is Not:
        return op.logical_not(build(t.a, env))
    if cls is Select:
        return _select(build(t.condition, env), build(t.true_value, env),
                       build(t.false_value, env))
    if cls is Ramp:
        return Ramp(build(t.base, env), build(t.stride, env), _lanes(t.lanes, env))
    if cls is Broadcast:
        return Broadcast(build(t.value, env), _lanes(t.lanes, env))
    if cls is Cast:
        return op.cast(t.dtype, build(t.value, env))
    changes = {n: build(getattr(t, n), env) for n, k in _shape(cls)[0] if k == EXPR}
    return replace(t, **changes)


class ConstantOverflow(Exception):
    """A rule's constant arithmetic left its type: the rule does not apply."""


#: The exact (unbounded) result of folding two integer constants, per node class.
_EXACT: dict[type, Callable] = {
    Add: lambda a, b: a + b, Sub: lambda a, b: a - b, Mul: lambda a, b: a * b,
    FloorDiv: lambda a, b: a // b, Div: lambda a, b: -(-a // b) if (a < 0) != (b < 0) else a // b,
}


def _check_exact(cls: type, a: int, b: int, out: IntImm) -> None:
    """Raise ``ConstantOverflow`` if ``out`` is a wrapped value of a type assumed not to wrap.

    ``0 - c1`` with ``c1 = INT32_MIN`` folds to ``INT32_MIN``: right modulo
    ``2**32``, wrong for the no-overflow rules (``j - INT32_MIN`` is not
    ``j + INT32_MIN``). Types that do wrap get only ring identities, where
    the wrapped constant is right.
    """
    exact = _EXACT.get(cls)
    if exact is not None and exact(a, b) != out.value and not wraps(out.dtype):
        raise ConstantOverflow(f"{a} {cls.__name__} {b} overflows {out.dtype}")


def _lanes(lanes: Any, env: dict) -> Any:
    return env["lanes"] if lanes == ANY_LANES else lanes


def _select(cond: PrimExpr, t: PrimExpr, f: PrimExpr) -> PrimExpr:
    if type(cond) is IntImm:
        return t if cond.value else f
    return op.select(cond, t, f)


# ---------------------------------------------------------------- rules


class Match:
    """The bindings of a successful match, as attributes, plus the simplifier (``m.s``)."""

    __slots__ = ("env", "s")

    def __init__(self, env: dict, simplifier: Any) -> None:
        self.env = env
        self.s = simplifier

    def __getattr__(self, name: str) -> Any:
        try:
            return self.env[name]
        except KeyError:
            raise AttributeError(f"pattern has no variable {name!r}") from None

    def v(self, name: str) -> Any:
        """The Python value of a matched constant."""
        return self.env[name].value


@attrs.frozen
class Rule:
    """``pattern -> result`` if ``when(match)``; ``result``: a template, a number or a function."""

    pattern: PrimExpr
    result: Any
    when: Callable[[Match], bool] | None = None
    _matcher: Callable = attrs.field(init=False, repr=False, eq=False)

    def __attrs_post_init__(self) -> None:
        object.__setattr__(self, "_matcher", compile_pattern(self.pattern))

    def apply(self, e: PrimExpr, simplifier: Any) -> PrimExpr | None:
        """The rewritten ``e``, or None if the rule does not apply."""
        env: dict = {}
        if not self._matcher(e, env):
            return None
        m = Match(env, simplifier)
        if self.when is not None and not self.when(m):
            return None
        try:
            out = self._result(m)
        except ConstantOverflow:
            return None
        if out is None or out.dtype == e.dtype:
            return out
        if type(out) in (IntImm, FloatImm):
            return op.cast(e.dtype, out)
        return None  # the template could not keep the dtype; not applicable

    def _result(self, m: Match) -> PrimExpr | None:
        r = self.result
        if isinstance(r, (bool, int, float)):
            return op.const(r, "bool" if isinstance(r, bool) else None)
        if isinstance(r, PrimExpr):
            return build(r, m.env)
        return r(m)
