"""The rewrite simplifier: bottom-up, apply the rule table of each node kind until none fires.

Children are simplified first, the node is rebuilt with the folding builders
of ``tir.op`` (constant folding, ``x + 0``, ``x * 1`` ...), then the rules of
its class (``rules.RULES``) are tried in order. A rule's result is
simplified again, with a depth limit so that no rule set can loop forever.
Results are memoized per expression object and per structure (hash-consing,
see ``intern.py``) until the analyzer's facts change.

Soundness: integer rules assume index arithmetic does not overflow (as TVM
does) and serve 32/64-bit signed integers; other integers get the ring
identities and equality modulo ``2**bits`` only; bools get comparisons of
identical operands; float expressions only get exact constant folding and rules
that do not reassociate (identical Select branches, constant conditions). A
rule whose constant arithmetic overflows a non-wrapping type does not apply
(``j - INT32_MIN`` is not ``j + INT32_MIN``; see ``pattern.build``).
"""

from __future__ import annotations

import functools
from typing import Any

from .. import dtype as dt
from .. import op
from ..expr import (
    CmpOpNode,
    FloatImm,
    IntImm,
    PrimExpr,
    Var,
)
from ..functor import ExprMutator, substitute
from .const_int_bound import wraps
from .constraints import prove_from_constraints
from .pattern import BUILDERS, child_types, could_match
from .rules import ANY_DTYPE_KINDS, BOOL_RULES, FLOAT_RULES, RING_RULES, RULES
from .rules.compare import known_bool

#: How many rule applications may nest before the simplifier gives up on a node.
MAX_DEPTH = 24
_MEMO_LIMIT = 200_000



def is_int(e: PrimExpr) -> bool:
    """Whether ``e`` (or each lane of it) is an index-like integer: signed, 32 or 64 bits.

    Only those get the integer rules, which assume no overflow. Unsigned
    values would need negative constants, which wrap; 8- and 16-bit integers
    are data that does wrap in practice (``min(a + a, a + b)`` is not
    ``a + min(a, b)`` in int8). They get the ring identities only.
    """
    return index_like(e.dtype)


@functools.cache
def index_like(dtype: str) -> bool:
    """Signed 32- or 64-bit integer elements: the types the no-overflow rules serve."""
    t = dt.DataType(dt.element_of(dtype))
    return t.is_int and t.bits >= 32


class _Children(ExprMutator):
    """Rebuilds a node from simplified children, folding through ``tir.op``."""

    def __init__(self, owner: RewriteSimplifier) -> None:
        self.owner = owner

    def visit_expr(self, e: PrimExpr) -> PrimExpr:
        return self.owner.rewrite(e)

    def rebuild(self, e: PrimExpr) -> PrimExpr:
        """``e`` with its children simplified (the node itself is not rewritten)."""
        return self._method_for(type(e))(self, e)

    def visit_binary(self, e) -> PrimExpr:
        a, b = self.owner.rewrite(e.a), self.owner.rewrite(e.b)
        if a is e.a and b is e.b and not (_is_const(a) or _is_const(b)):
            return e
        # A constant-zero divisor raises tir.TVMError ("Divide by zero"), as TVM's folding does.
        return BUILDERS[type(e)](a, b)

    visit_add = visit_sub = visit_mul = visit_div = visit_mod = visit_binary
    visit_floor_div = visit_floor_mod = visit_min = visit_max = visit_binary
    visit_eq = visit_ne = visit_lt = visit_le = visit_gt = visit_ge = visit_binary
    visit_and = visit_or = visit_binary

    def visit_not(self, e) -> PrimExpr:
        a = self.owner.rewrite(e.a)
        return e if a is e.a and not _is_const(a) else op.logical_not(a)

    def visit_var(self, v) -> PrimExpr:
        alias = self.owner.facts.aliases.get(v)
        if alias is None:
            return known_bool(self.owner.facts, v) if v.dtype == "bool" else v
        return self.owner.rewrite(alias)

    def visit_select(self, e) -> PrimExpr:
        cond = self.owner.rewrite(e.condition)
        if type(cond) is IntImm:
            return self.owner.rewrite(e.true_value if cond.value else e.false_value)
        return self.generic_visit(e) if cond is e.condition else op.select(
            cond, self.owner.rewrite(e.true_value), self.owner.rewrite(e.false_value))

    def visit_cast(self, e) -> PrimExpr:
        value = self.owner.rewrite(e.value)
        return e if value is e.value and not _is_const(value) else op.cast(e.dtype, value)

    def visit_call(self, e) -> PrimExpr:
        out = self.generic_visit(e)
        if out.op == "tir.if_then_else" and type(out.args[0]) is IntImm:
            return out.args[1] if out.args[0].value else out.args[2]
        if out.op == "tir.likely" and type(out.args[0]) is IntImm:
            return out.args[0]
        return out

    def visit_let(self, e) -> PrimExpr:
        value = self.owner.rewrite(e.value)
        if type(value) in (IntImm, FloatImm) or isinstance(value, Var):
            return self.owner.rewrite(substitute(e.body, {e.var: value}))
        body = self.owner.rewrite(e.body)
        if value is e.value and body is e.body:
            return e
        return type(e)(e.var, value, body)


def _is_const(e: PrimExpr) -> bool:
    return type(e) is IntImm or type(e) is FloatImm


_RULE_INDEX: dict[tuple, tuple] = {}


def _rules_for(table: dict, cls: type, types: tuple) -> tuple:
    """The rules of ``cls`` whose pattern accepts children of these classes (cached)."""
    key = (id(table), cls, types)
    hit = _RULE_INDEX.get(key)
    if hit is None:
        hit = tuple(r for r in table[cls] if could_match(r.pattern, types))
        _RULE_INDEX[key] = hit
    return hit


class RewriteSimplifier:
    """Simplifies by rules; the facts and analyses come from the owning Analyzer."""

    def __init__(self, analyzer: Any) -> None:
        self.analyzer = analyzer
        self.facts = analyzer.facts
        self.bounds = analyzer.bound_analyzer
        self.mods = analyzer.modular_analyzer
        self._children = _Children(self)
        self.ids = analyzer.structure_ids
        self._memo: dict[int, tuple] = {}
        self._by_structure: dict[int, PrimExpr] = {}
        self._epoch = -1
        self._depth = 0
        self._proving = False

    def __call__(self, e: PrimExpr) -> PrimExpr:
        return self.rewrite(e)

    def rewrite(self, e: PrimExpr) -> PrimExpr:
        """The simplified ``e`` (memoized by object and by structure)."""
        if self._epoch != self.facts.epoch:
            self._memo.clear()
            self._by_structure.clear()
            self._epoch = self.facts.epoch
        hit = self._memo.get(id(e))
        if hit is not None and hit[0] is e:
            return hit[1]
        sid = self.ids.of(e)
        out = self._by_structure.get(sid)
        if out is None:
            out = self._rewrite_node(self._children.rebuild(e))
            if self._depth > MAX_DEPTH // 2:
                return out  # rules may have been cut short here: do not remember it
            self._by_structure[sid] = out
            self._by_structure[self.ids.of(out)] = out
        if len(self._memo) > _MEMO_LIMIT:
            self._memo.clear()
            self._by_structure.clear()
        self._memo[id(e)] = (e, out)
        self._memo[id(out)] = (out, out)
        return out

    def _rewrite_node(self, e: PrimExpr) -> PrimExpr:
        if self._depth >= MAX_DEPTH or type(e) not in RULES:
            return e
        table = self._table(e)
        if table is None or type(e) not in table:
            return e
        rules = _rules_for(table, type(e), child_types(e))
        for rule in rules:
            out = rule.apply(e, self)
            if out is not None and out is not e:
                self._depth += 1
                try:
                    return self.rewrite(out)
                finally:
                    self._depth -= 1
        return e

    @staticmethod
    def _table(e: PrimExpr) -> dict | None:
        """Which rules fit ``e``: all, ring identities (wrapping ints), comparisons of
        identical operands (bool), or exact ones (floats)."""
        if type(e) in ANY_DTYPE_KINDS:
            return RULES
        operand = e.a if isinstance(e, CmpOpNode) else e
        if is_int(operand):
            return RULES
        if wraps(operand.dtype):
            return RING_RULES
        if dt.element_of(operand.dtype) == "bool":
            return BOOL_RULES
        return FLOAT_RULES

    # ------------------------------------------------------------ helpers for rule conditions

    def interval(self, e: PrimExpr) -> tuple:
        """The bound of ``e`` as ``(lo, hi)`` (``math.inf`` ends)."""
        return self.bounds.interval(e)

    def diff_interval(self, a: PrimExpr, b: PrimExpr) -> tuple:
        """The bound of the simplified ``a - b``."""
        if self._depth >= MAX_DEPTH:
            return self.bounds.interval(op.sub(a, b))
        self._depth += 2  # proofs recurse: keep them shallower than rewriting
        try:
            return self.bounds.interval(self.rewrite(op.sub(a, b)))
        finally:
            self._depth -= 2

    def rewrite_nested(self, e: PrimExpr) -> PrimExpr:
        """``rewrite(e)`` from inside a rule, counted in the depth limit like a rule's result."""
        if self._depth >= MAX_DEPTH:
            return e
        self._depth += 1
        try:
            return self.rewrite(e)
        finally:
            self._depth -= 1

    def le(self, a: PrimExpr, b: PrimExpr) -> bool:
        """Provably ``a <= b``."""
        return self.diff_interval(a, b)[1] <= 0

    def lt(self, a: PrimExpr, b: PrimExpr) -> bool:
        """Provably ``a < b``."""
        return self.diff_interval(a, b)[1] < 0

    def prove_lt(self, a: PrimExpr, b: PrimExpr) -> bool:
        """Provably ``a < b``, by bounds or from a symbolic constraint in scope (``j < n``)."""
        if self.lt(a, b):
            return True
        if self._proving or not self.facts.constraints:
            return False
        self._proving = True  # a proof does not start another proof from constraints
        try:
            return prove_from_constraints(self.analyzer, op.less(a, b))
        finally:
            self._proving = False

    def nonneg(self, e: PrimExpr) -> bool:
        """Provably ``e >= 0``."""
        return self.bounds.interval(e)[0] >= 0

    def within(self, e: PrimExpr, lo: int, hi: int) -> bool:
        """Provably ``lo <= e <= hi``."""
        iv = self.bounds.interval(e)
        return lo <= iv[0] and iv[1] <= hi

    def modular(self, e: PrimExpr) -> tuple:
        """``(coeff, base)`` of ``e``."""
        return self.mods.mod(e)
