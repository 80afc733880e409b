"""Every ported TVM rewrite row, checked for value, whatever form our simplifier reaches.

``test_tvm_rewrite_simplify.py`` asks for TVM's exact form; this file asks
the weaker, stricter-to-keep question: at random points where the row's
preconditions hold, ``rewrite_simplify(before)`` and ``simplify(before)``
compute what ``before`` computes (see value_check.py for the dtype rules).
Rows with nodes the evaluator does not model (floats, calls, lets, loads,
scalable vectors) are checked by the exact-form tests only.
"""

from __future__ import annotations

import pytest

from tir import arith

from .tvm_port.run_rewrite import ROWS
from .value_check import TooFewPoints, Unsupported, mismatch


def _params() -> list:
    return [pytest.param(make, id=ident) for ident, make, _ in ROWS]


def _case(make):
    try:
        case = make()
    except Exception:
        pytest.skip("the row cannot be built (see the exact-form test's known failures)")
    if case.raises:
        pytest.skip("the row expects an error")
    return case


@pytest.mark.parametrize("method", ["rewrite_simplify", "simplify"])
@pytest.mark.parametrize("make", _params())
def test_row_keeps_value(make, method):
    case = _case(make)
    analyzer = arith.Analyzer()
    if case.constraint is not None:
        with analyzer.constraint_scope(case.constraint):
            after = getattr(analyzer, method)(case.before)
    else:
        after = getattr(analyzer, method)(case.before)
    try:
        problem = mismatch(case.before, after, case.constraint)
    except Unsupported as why:
        pytest.skip(f"not modelled by the evaluator: {why}")
    except TooFewPoints as why:
        pytest.skip(f"preconditions rarely hold on random points: {why}")
    assert problem is None, f"{case.before} -> {after}: {problem}"
