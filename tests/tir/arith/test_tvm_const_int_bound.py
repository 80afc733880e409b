"""TVM v0.16's const-int-bound tests, every row, against ``Analyzer.const_int_bound``.

Each row runs as TVM's ``BaseCompare.test_const_bounds`` does: ``update``
the known bounds, enter the constraint, compare the bound (an expected end
of None is not checked). TVM's class TestBoundsUsingReciprocals is xfail in
TVM itself; its rows run here too but count apart from the pass rate.
"""

from __future__ import annotations

import contextlib

import pytest

from tir import arith
from tir.arith import ConstIntBound

from .tvm_port.bound_cases import CLASSES, KNOWN_FAILURES, TVM_XFAIL_CLASSES
from .tvm_port.case import params, rows, unknown_ids

#: The bar: at least this share of TVM's rows pass (TVM's own xfail class aside).
PASS_RATE = 0.95

ROWS = rows(CLASSES)


def outcome(make) -> str | None:
    """None when the row passes as in TVM, else what went wrong (one line)."""
    try:
        case = make()
    except Exception as err:
        return f"cannot build the row: {type(err).__name__}: {err}"
    analyzer = arith.Analyzer()
    try:
        for var, bounds in case.known_bounds.items():
            analyzer.update(var, ConstIntBound(*bounds))
        with contextlib.ExitStack() as stack:
            if case.constraint is not None:
                stack.enter_context(analyzer.constraint_scope(case.constraint))
            bounds = analyzer.const_int_bound(case.expr)
    except Exception as err:
        return f"raised {type(err).__name__}: {err}"
    lo, hi = case.expected_bounds
    got = (bounds.min_value, bounds.max_value)
    if (lo is None or got[0] == lo) and (hi is None or got[1] == hi):
        return None
    return f"got {got}, TVM expects {case.expected_bounds}"


@pytest.mark.parametrize("make", params(ROWS, KNOWN_FAILURES))
def test_tvm_const_int_bound_row(make):
    problem = outcome(make)
    assert problem is None, problem


def test_known_failures_are_rows():
    assert not unknown_ids(ROWS, KNOWN_FAILURES)


def _counted(ident: str) -> bool:
    return ident.rsplit("-", 1)[0] not in TVM_XFAIL_CLASSES


def test_pass_rate():
    counted = [ident for ident, _ in ROWS if _counted(ident)]
    failing = [ident for ident in counted if ident in KNOWN_FAILURES]
    assert 1 - len(failing) / len(counted) >= PASS_RATE, (
        f"{len(counted) - len(failing)} of {len(counted)} TVM const-int-bound rows pass")
