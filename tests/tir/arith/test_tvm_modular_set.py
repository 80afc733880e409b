"""TVM v0.16's modular-set tests, every assertion a row, against ``Analyzer.modular_set``.

A row rebuilds the analyzer state TVM's test function has at that assertion
(binds, updates, nested constraint scopes) on a fresh ``Analyzer``. Rows
whose TVM expectation is unsound here (``UNSOUND_HERE``: TVM assumes 8-bit
arithmetic does not overflow; this project's 8-bit integers wrap) stay
strict xfails but count apart from the pass rate; all rows: 31 of 33 pass.
"""

from __future__ import annotations

import contextlib

import pytest

from tir import arith
from tir.arith import ConstIntBound

from .tvm_port.case import params, rows, unknown_ids
from .tvm_port.modular_cases import FUNCTIONS, KNOWN_FAILURES, UNSOUND_HERE

#: The bar: at least this share of TVM's rows pass.
PASS_RATE = 0.95

ROWS = rows(FUNCTIONS)


def outcome(make) -> str | None:
    """None when the row passes as in TVM, else what went wrong (one line)."""
    try:
        case = make()
    except Exception as err:
        return f"cannot build the row: {type(err).__name__}: {err}"
    analyzer = arith.Analyzer()
    try:
        for var, value in case.binds.items():
            analyzer.bind(var, value)
        for var, bounds in case.updates.items():
            analyzer.update(var, ConstIntBound(*bounds))
        with contextlib.ExitStack() as stack:
            for cond in case.constraints:
                stack.enter_context(analyzer.constraint_scope(cond))
            m = analyzer.modular_set(case.expr)
    except Exception as err:
        return f"raised {type(err).__name__}: {err}"
    if (m.coeff, m.base) == (case.coeff, case.base):
        return None
    return f"got (coeff, base) = {(m.coeff, m.base)}, TVM expects {(case.coeff, case.base)}"


@pytest.mark.parametrize("make", params(ROWS, KNOWN_FAILURES))
def test_tvm_modular_set_row(make):
    problem = outcome(make)
    assert problem is None, problem


def test_known_failures_are_rows():
    assert not unknown_ids(ROWS, KNOWN_FAILURES)


def test_pass_rate():
    assert UNSOUND_HERE <= set(KNOWN_FAILURES)
    counted = [ident for ident, _ in ROWS if ident not in UNSOUND_HERE]
    failing = [ident for ident in counted if ident in KNOWN_FAILURES]
    assert 1 - len(failing) / len(counted) >= PASS_RATE, (
        f"{len(counted) - len(failing)} of {len(counted)} TVM modular-set rows pass")
