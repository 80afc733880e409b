"""Test helpers: a tiny evaluator of integer TIR expressions, a printer, equality, and
the Hypothesis strategy of random integer expressions the property tests share."""

from __future__ import annotations

from hypothesis import strategies as st

import tir
from tir import expr as E


def tdiv(a: int, b: int) -> int:
    """C division: rounds towards zero."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def tmod(a: int, b: int) -> int:
    """C remainder: the sign of ``a``."""
    return a - tdiv(a, b) * b


_BIN = {
    E.Add: lambda a, b: a + b, E.Sub: lambda a, b: a - b, E.Mul: lambda a, b: a * b,
    E.FloorDiv: lambda a, b: a // b, E.FloorMod: lambda a, b: a % b,
    E.Div: tdiv, E.Mod: tmod, E.Min: min, E.Max: max,
    E.LT: lambda a, b: int(a < b), E.LE: lambda a, b: int(a <= b),
    E.GT: lambda a, b: int(a > b), E.GE: lambda a, b: int(a >= b),
    E.EQ: lambda a, b: int(a == b), E.NE: lambda a, b: int(a != b),
    E.And: lambda a, b: int(bool(a and b)), E.Or: lambda a, b: int(bool(a or b)),
}


def _wrap(v: int, dtype: str) -> int:
    """Two's-complement wraparound for 8- and 16-bit results (as the machine computes)."""
    bits = {"int8": 8, "int16": 16}.get(tir.DataType(dtype).element_of.__str__())
    if bits is None:
        return v
    v &= (1 << bits) - 1
    return v - (1 << bits) if v >= 1 << (bits - 1) else v


def evaluate(e, env: dict):
    """The value of ``e`` with vars from ``env`` (Var -> int); vectors give lists."""
    if isinstance(e, E.Var):
        return env[e]
    rule = _EVAL.get(type(e))
    if rule is None:
        raise TypeError(f"evaluate: unsupported {type(e).__name__}")
    return rule(e, env)


def _lanewise(n: int, *values) -> list:
    """Each value as a list of ``n`` lanes (a scalar repeated)."""
    return [v if isinstance(v, list) else [v] * n for v in values]


def _binary(e, env: dict):
    a, b = evaluate(e.a, env), evaluate(e.b, env)
    fn = _BIN[type(e)]
    if not (isinstance(a, list) or isinstance(b, list)):
        return _wrap(fn(a, b), e.dtype)
    a, b = _lanewise(len(a) if isinstance(a, list) else len(b), a, b)
    return [_wrap(fn(p, q), e.dtype) for p, q in zip(a, b)]


def _not(e, env: dict):
    a = evaluate(e.a, env)
    return [1 - v for v in a] if isinstance(a, list) else 1 - a


def _select(e, env: dict):
    c, t, f = (evaluate(v, env) for v in (e.condition, e.true_value, e.false_value))
    if not isinstance(c, list):
        return t if c else f
    t, f = _lanewise(len(c), t, f)
    return [p if q else r for q, p, r in zip(c, t, f)]


def _ramp(e, env: dict) -> list:
    b, s = evaluate(e.base, env), evaluate(e.stride, env)
    return [b + i * s for i in range(e.lanes)]


#: ``evaluate``'s rule per node class (a Var is looked up in the environment).
_EVAL = {
    **dict.fromkeys(_BIN, _binary),
    E.IntImm: lambda e, env: e.value,
    E.Not: _not,
    E.Select: _select,
    E.Ramp: _ramp,
    E.Broadcast: lambda e, env: [evaluate(e.value, env)] * e.lanes,
    E.Cast: lambda e, env: evaluate(e.value, env),
}


_SYM = {
    E.Add: "+", E.Sub: "-", E.Mul: "*", E.LT: "<", E.LE: "<=", E.GT: ">", E.GE: ">=",
    E.EQ: "==", E.NE: "!=", E.And: "&&", E.Or: "||",
}
_FN = {E.FloorDiv: "floordiv", E.FloorMod: "floormod", E.Div: "truncdiv", E.Mod: "truncmod",
       E.Min: "min", E.Max: "max"}


def show(e) -> str:
    """A compact text of ``e`` (for test ids and failure messages)."""
    cls = type(e)
    if cls in _SYM:
        return f"({show(e.a)} {_SYM[cls]} {show(e.b)})"
    if cls in _FN:
        return f"{_FN[cls]}({show(e.a)}, {show(e.b)})"
    if cls is E.IntImm:
        return str(e.value) if e.dtype in ("int32", "bool") else f"{e.dtype}({e.value})"
    if isinstance(e, E.Var):
        return e.name
    if cls is E.Not:
        return f"!{show(e.a)}"
    if cls is E.Select:
        return f"select({show(e.condition)}, {show(e.true_value)}, {show(e.false_value)})"
    if cls is E.Ramp:
        return f"ramp({show(e.base)}, {show(e.stride)}, {e.lanes})"
    if cls is E.Broadcast:
        return f"broadcast({show(e.value)}, {e.lanes})"
    if cls is E.Cast:
        return f"{e.dtype}({show(e.value)})"
    return repr(e)


def struct_equal(a, b) -> bool:
    """Structural equality (``tir.structural_equal``)."""
    return tir.structural_equal(a, b)


def assert_same(got, expected, source=None) -> None:
    """Fail with readable text unless ``got`` equals ``expected`` structurally."""
    if not isinstance(expected, tir.PrimExpr):
        expected = tir.const(expected, got.dtype)
    where = f" (from {show(source)})" if source is not None else ""
    assert struct_equal(got, expected), f"got {show(got)}, expected {show(expected)}{where}"


def lift(e, var, vector):
    """``e`` with ``var`` replaced by ``vector``, scalars broadcast as the operators do."""
    from tir.arith.pattern import BUILDERS

    cls = type(e)
    if e is var:
        return vector
    if cls in BUILDERS:
        return BUILDERS[cls](lift(e.a, var, vector), lift(e.b, var, vector))
    if cls is E.Select:
        c, t, f = (lift(x, var, vector) for x in (e.condition, e.true_value, e.false_value))
        t, f = tir.op.promote(t, f)
        lanes = max(tir.DataType(x.dtype).lanes for x in (c, t))
        if lanes > 1:
            c = tir.op.cast(f"boolx{lanes}", c)
            t = tir.op.cast(f"{tir.DataType(t.dtype).element_of}x{lanes}", t)
            f = tir.op.cast(f"{tir.DataType(f.dtype).element_of}x{lanes}", f)
        return tir.Select(c, t, f)
    return e


#: The comparisons a random Select may branch on.
COMPARISONS = (lambda a, b: a < b, lambda a, b: a <= b, lambda a, b: a == b,
               lambda a, b: a != b)


def int_expressions(leaves, divisors, comparisons=COMPARISONS, max_leaves: int = 8):
    """A Hypothesis strategy of integer expressions: + - * (by constants and not),
    trunc/floor div/mod by ``divisors``, min, max and Select on ``comparisons``."""
    def extend(children):
        pair = st.tuples(children, children)
        cmp_ops = st.sampled_from(list(comparisons))
        return st.one_of(
            pair.map(lambda p: p[0] + p[1]),
            pair.map(lambda p: p[0] - p[1]),
            st.tuples(children, st.integers(-3, 4)).map(lambda p: p[0] * p[1]),
            pair.map(lambda p: tir.Mul(p[0], p[1])),
            st.tuples(children, divisors).map(lambda p: tir.floordiv(p[0], p[1])),
            st.tuples(children, divisors).map(lambda p: tir.floormod(p[0], p[1])),
            st.tuples(children, divisors).map(lambda p: tir.truncdiv(p[0], p[1])),
            st.tuples(children, divisors).map(lambda p: tir.truncmod(p[0], p[1])),
            pair.map(lambda p: tir.min(p[0], p[1])),
            pair.map(lambda p: tir.max(p[0], p[1])),
            st.tuples(cmp_ops, children, children, children, children).map(
                lambda p: tir.Select(p[0](p[1], p[2]), p[3], p[4])),
        )

    return st.recursive(leaves, extend, max_leaves=max_leaves)
