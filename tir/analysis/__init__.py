"""Shared questions about TIR that many passes ask (TVM: ``tir/analysis``).

Passes used to answer these with small walkers of their own, each slightly
different; they live here once, below every pass, so that a fix or a speed-up
reaches every caller and the answers agree:

- ``var_use``: which vars an expression or statement uses (``uses_var``,
  ``uses_any_var``, ``uses_only``, ``used_vars``; TVM's ``UsesVar``).
- ``linear_form``: an integer index as ``sum(coeff * var) + rest`` in given vars
  (``linear_form`` with integer coefficients, ``linear_coefficient`` with a
  symbolic one; TVM's ``DetectLinearEquation``).

Like the rest of ``tir``, this package imports nothing from ``transform``,
``codegen`` or ``tirlite``; it does not use the ``arith`` analyzer either, so
``arith`` itself can ask these questions.
"""

from .linear_form import (
    LinearForm,
    int_const,
    is_widening_int_cast,
    linear_coefficient,
    linear_form,
)
from .var_use import used_var_ids, used_vars, uses_a_var, uses_any_var, uses_only, uses_var, var_ids

__all__ = ["LinearForm", "int_const", "is_widening_int_cast", "linear_coefficient",
           "linear_form", "used_var_ids", "used_vars", "uses_a_var", "uses_any_var",
           "uses_only", "uses_var", "var_ids"]
