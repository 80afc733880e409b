"""The ``Analyzer``: one object holding variable facts and the analyses that use them.

>>> from tir import var, Range
>>> a = Analyzer()
>>> x = var("x")
>>> a.bind(x, Range(0, 8))
>>> a.can_prove(x < 10)
True

Semantics, as in TVM:

- Index arithmetic does not overflow. The integer rules (and linear forms)
  rely on it and serve signed 32- and 64-bit integers; 8/16-bit and unsigned
  integers, which wrap in practice, only get identities that survive
  wraparound (``a - a``, ``(a + b) - b``, ``a + b == b + a``, ``a < a``,
  ``a ^ a`` ..., not ``a + 1 > a``); floats only get exact constant
  folding and rules that never reassociate.
- ``can_prove`` is sound: ``False`` means "not proven", never "false".
- ``bind(var, Range)`` sets the var's bound ``[min, min + extent - 1]``;
  ``bind(var, expr)`` makes the var an alias replaced by ``expr``. Binding a
  var again to something else needs ``allow_override=True``.
- ``constraint_scope(cond)`` assumes ``cond`` inside the ``with`` block; on
  exit every fact added inside it (constraints, and binds made inside) is undone.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from .. import dtype as dt
from .. import op
from ..analysis.var_use import uses_var
from ..expr import GE, GT, LE, LT, Broadcast, FloorDiv, IntImm, Max, PrimExpr, Var
from ..functor import deep_recursion
from ..range import Range
from .canonical_simplify import CanonicalSimplifier
from .const_int_bound import ConstIntBound, ConstIntBoundAnalyzer
from .constraints import add_constraint, as_nonpositive, conjuncts, prove_from_constraints
from .extensions import Extension
from .facts import Facts
from .intern import StructureIds
from .modular_set import ModularSet, ModularSetAnalyzer
from .pattern import same_expr
from .rewrite_simplify import RewriteSimplifier

_ORDERED = (LT, LE, GT, GE)

#: How many rewrite + canonical rounds ``simplify`` runs at most.
SIMPLIFY_ROUNDS = 2


class Analyzer:
    """Bounds, residues, simplification and proofs under the facts given by bind/constraints."""

    def __init__(self) -> None:
        self.facts = Facts()
        self.structure_ids = StructureIds()
        self.bound_analyzer = ConstIntBoundAnalyzer(self.facts)
        self.modular_analyzer = ModularSetAnalyzer(self.facts, self.bound_analyzer)
        self.rewriter = RewriteSimplifier(self)
        self.canonicalizer = CanonicalSimplifier(self)
        self._extensions = Extension.NoExtensions

    @property
    def enabled_extensions(self) -> Extension:
        """The rewrite-simplifier extensions in use (see ``extensions.py``)."""
        return self._extensions

    @enabled_extensions.setter
    def enabled_extensions(self, flags: Extension) -> None:
        if not isinstance(flags, Extension):
            raise TypeError(f"enabled_extensions: expected a tir.arith.Extension, got {flags!r}")
        self._extensions = flags
        self.facts.changed()  # results cached without the extension may now simplify further

    # ------------------------------------------------------------ analyses

    def const_int_bound(self, e: Any) -> ConstIntBound:
        """A sound ``[min_value, max_value]`` for ``e`` (all lanes of a vector)."""
        e = _expr(e, "const_int_bound")
        with deep_recursion():
            return self.bound_analyzer(e)

    def modular_set(self, e: Any) -> ModularSet:
        """``coeff``, ``base`` such that every value of ``e`` is ``coeff * k + base``."""
        e = _expr(e, "modular_set")
        with deep_recursion():
            return self.modular_analyzer(e)

    def rewrite_simplify(self, e: Any) -> PrimExpr:
        """``e`` simplified by the rewrite rules."""
        e = _expr(e, "rewrite_simplify")
        with deep_recursion():
            return self.rewriter(e)

    def canonical_simplify(self, e: Any) -> PrimExpr:
        """``e`` with index arithmetic as sums of split terms (TVM's canonical form)."""
        e = _expr(e, "canonical_simplify")
        with deep_recursion():
            return self.canonicalizer(e)

    def int_set(self, e: Any, dom_map: Any = None) -> Any:
        """The ``IntervalSet`` of ``e`` with ``dom_map``'s vars (``Var`` -> IntSet or Range)
        relaxed; without ``dom_map``, the vars with known ranges (see int_set.py)."""
        from .int_set_eval import as_dom_map, bound_domains, eval_set

        e = _expr(e, "int_set")
        doms = bound_domains(self) if dom_map is None else as_dom_map(dom_map, "int_set")
        with deep_recursion():
            return eval_set(self, e, doms)

    def simplify(self, e: Any, steps: int = SIMPLIFY_ROUNDS) -> PrimExpr:
        """``e`` simplified: rewrite, then canonical form, alternating (``steps`` rounds at most).

        The result is in canonical form, as TVM's ``Simplify`` ends in it (``x - 7``,
        not the rewrite rules' ``x + -7``). Unlike TVM's single rewrite + canonical
        pass, a round whose canonical form changed something is followed by another,
        so that simplifying a simplified expression changes nothing (the rewrite
        rules and the canonical form disagree on a few forms, e.g. TVM's canonical
        ``truncmod(x, -2) * -1`` where the rules give ``truncmod(x, 2) * -1``).
        """
        e = _expr(e, "simplify")
        with deep_recursion():
            out = self.rewriter(e)
            for i in range(steps):
                if isinstance(out, IntImm):
                    break
                canonical = self.canonicalizer(out)
                if canonical is out or same_expr(canonical, out):
                    break
                out = canonical if i == steps - 1 else self.rewriter(canonical)
            return out

    # ------------------------------------------------------------ proofs

    def can_prove(self, cond: Any) -> bool:
        """True only if ``cond`` holds for every value of its variables (False: unknown)."""
        cond = _expr(cond, "can_prove")
        if not cond.dtype.startswith("bool"):
            raise TypeError(f"can_prove: condition must be bool, got {cond.dtype} ({cond})")
        with deep_recursion():
            return self._prove(cond)

    def _prove(self, cond: PrimExpr) -> bool:
        if self._quick_proof(cond):
            return True
        simple = self.simplify(cond)
        if _is_true(simple):
            return True
        return self._known(simple) or self._all_parts(simple) or prove_from_constraints(
            self, simple)

    def _quick_proof(self, cond: PrimExpr) -> bool:
        """Settle each conjunct by the bound of ``a - b`` alone (the common, cheap case)."""
        for part in conjuncts(cond):
            if _is_true(part):
                continue
            diffs = as_nonpositive(part) if type(part) in _ORDERED else []
            if not diffs or any(self.bound_analyzer.interval(d)[1] > 0 for d in diffs):
                return False
        return True

    def _all_parts(self, cond: PrimExpr) -> bool:
        parts = list(conjuncts(cond))
        if len(parts) < 2:
            return False
        return all(_is_true(p) or self._known(p) for p in parts)

    def _known(self, cond: PrimExpr) -> bool:
        """``cond`` is one of the constraints in scope (after simplification)."""
        return any(same_expr(known, cond) for known in self.facts.constraints)

    def can_prove_equal(self, a: Any, b: Any) -> bool:
        """True only if ``a == b`` for every value of the variables."""
        a, b = op.promote(a, b, "can_prove_equal")
        if same_expr(a, b):
            return True
        if not dt.DataType(dt.element_of(a.dtype)).is_integer:
            return same_expr(self.simplify(a), self.simplify(b))
        diff = self.simplify(op.sub(a, b))
        return _is_zero(diff)

    # ------------------------------------------------------------ facts

    def bind(self, var: Var, value: Any, allow_override: bool = False) -> None:
        """Bind ``var`` to a ``Range`` (its values) or an expression (an alias)."""
        if not isinstance(var, Var):
            raise TypeError(f"bind: expected a tir.Var, got {type(var).__name__}")
        if isinstance(value, Range):
            self._bind_range(var, value, allow_override)
            return
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            value = op.const(value, var.dtype)
        value = _expr(value, "bind")
        if value.dtype != var.dtype:
            raise TypeError(f"bind: {var.name} is {var.dtype} but the value is {value.dtype}")
        value = self.simplify(value)  # earlier aliases are substituted: no cycles through them
        if uses_var(value, var):
            raise ValueError(f"bind: {var.name} cannot be bound to an expression that uses it")
        old = self.facts.aliases.get(var)
        if old is not None and not allow_override and not same_expr(old, value):
            raise ValueError(
                f"bind: {var.name} is already bound to {old}; pass allow_override=True to rebind"
            )
        self.facts.aliases[var] = value
        self.facts.changed()

    def _bind_range(self, var: Var, rng: Range, allow_override: bool) -> None:
        lo = self.bound_analyzer.interval(rng.min)[0]
        hi = self.bound_analyzer.interval(op.sub(op.add(rng.min, rng.extent), 1))[1]
        new = (lo, hi)
        old = self.facts.bounds.get(var)
        if old is not None and old != new and not allow_override:
            raise ValueError(
                f"bind: {var.name} already has the range {_show(old)}, got {_show(new)}; "
                "pass allow_override=True to rebind"
            )
        self.facts.bounds[var] = new
        if type(rng.min) is not IntImm or type(rng.extent) is not IntImm:
            # a symbolic range is also kept as comparisons, for proofs such as i + 1 <= n
            self.facts.constraints.append(op.greater_equal(var, rng.min))
            self.facts.constraints.append(op.less(var, op.add(rng.min, rng.extent)))
            self.facts.constraints.extend(_block_facts(var, rng))
        self.facts.changed()

    @contextlib.contextmanager
    def loop_scope(self, var: Var, min_value: Any, extent: Any) -> Iterator[None]:
        """Within the block, ``var`` ranges over ``[min_value, min_value + extent)``.

        The facts are forgotten afterwards, so a var reused by a later loop
        starts afresh. Passes that walk loops (Simplify, the bound checker)
        use this one rule.
        """
        snap = self.facts.snapshot()
        self.bind(var, Range.from_min_extent(min_value, extent), allow_override=True)
        try:
            yield
        finally:
            self.facts.restore(snap)

    def update(self, var: Var, info: ConstIntBound, override: bool = False) -> None:
        """Set ``var``'s bound directly (TVM's ``Analyzer.update``)."""
        if not isinstance(info, ConstIntBound):
            raise TypeError(
                f"update: expected a ConstIntBound for {var}, got {type(info).__name__}"
            )
        old = self.facts.bounds.get(var)
        new = info.to_interval()
        if old is not None and old != new and not override:
            raise ValueError(f"update: {var.name} already has the range {_show(old)}")
        self.facts.bounds[var] = new
        self.facts.changed()

    def const_int_bound_is_bound(self, var: Var) -> bool:
        """Whether ``var`` has a range from ``bind``, ``update`` or a constraint."""
        return var in self.facts.bounds

    @contextlib.contextmanager
    def constraint_scope(self, cond: Any) -> Iterator[None]:
        """Within the ``with`` block, assume ``cond`` holds."""
        cond = _expr(cond, "constraint_scope")
        snap = self.facts.snapshot()
        add_constraint(self, self.simplify(cond))
        try:
            yield
        finally:
            self.facts.restore(snap)


def _block_facts(var: Var, rng: Range) -> list:
    """For ``extent = n // c``: ``(var - min + 1) * c <= n``.

    ``var < n // c`` says the same, but in this form the analyzer proves the
    last element of a block in bounds: ``var * c + (c - 1) < n``.
    """
    extent = rng.extent
    if not (isinstance(extent, FloorDiv) and isinstance(extent.b, IntImm) and extent.b.value > 0):
        return []
    one = op.const(1, var.dtype)
    block = op.mul(op.add(op.sub(var, rng.min), one), extent.b)
    facts = [op.less_equal(block, extent.a)]
    total = extent.a
    if isinstance(total, Max) and isinstance(total.b, IntImm) and total.b.value == 0:
        # n // c written max(n, 0) // c (StripMineVectorLoops): if the loop runs, max(n, 0) is n
        facts.append(op.less_equal(block, total.a))
    return facts


def _expr(e: Any, who: str) -> PrimExpr:
    if isinstance(e, PrimExpr):
        return e
    if isinstance(e, (bool, int, float)):
        return op.const(e)
    raise TypeError(f"{who}: expected a PrimExpr or a number, got {type(e).__name__}")


def _is_true(e: PrimExpr) -> bool:
    if type(e) is Broadcast:
        e = e.value
    return type(e) is IntImm and e.value != 0


def _is_zero(e: PrimExpr) -> bool:
    if type(e) is Broadcast:
        e = e.value
    return type(e) is IntImm and e.value == 0


def _show(iv: tuple) -> str:
    return f"[{iv[0]}, {iv[1]}]"


__all__ = ["Analyzer", "ConstIntBound", "ModularSet"]
