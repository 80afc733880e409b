"""Arithmetic analysis: bounds, modular sets, rewrite and canonical simplification, proofs.

The entry point is ``Analyzer``; see analyzer.py. Modules: ``const_int_bound``
(intervals), ``modular_set`` (residues), ``pattern`` + ``rules/`` +
``rewrite_simplify`` (rule-based simplifier), ``canonical_simplify`` (linear
forms), ``constraints`` (facts from conditions), ``speculation`` (which
expressions may be simplified under a fact that may not hold where they run),
``int_set`` (symbolic intervals and region estimates).
"""

from .analyzer import Analyzer
from .const_int_bound import ConstIntBound
from .extensions import Extension
from .int_set import (
    IntervalSet, IntSet, estimate_region_lower_bound, estimate_region_strict_bound,
    estimate_region_upper_bound,
)
from .modular_set import ModularSet

__all__ = [
    "Analyzer", "ConstIntBound", "Extension", "IntSet", "IntervalSet", "ModularSet",
    "estimate_region_lower_bound", "estimate_region_strict_bound", "estimate_region_upper_bound",
]
