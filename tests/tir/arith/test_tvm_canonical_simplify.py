"""TVM v0.16's canonical-simplifier tests, every row, against ``Analyzer.canonical_simplify``.

The rows of TVM's ``test_reduce_combiner_simplify`` and ``test_reduce_simplify``
build ``tir.Reduce`` / ``te.comm_reducer`` nodes, which tirlite does not have
yet (they come with ``te``, issue 13): they run as strict xfails and count
apart from the pass rate (``NEEDS_REDUCE``).
"""

from __future__ import annotations

import pytest

import tir
from tir import arith

from .tvm_port.canonical_cases import FUNCTIONS, KNOWN_FAILURES
from .tvm_port.case import params, rows, unknown_ids

#: The issue's bar: at least this share of TVM's rows pass.
PASS_RATE = 0.95

ROWS = rows(FUNCTIONS)

#: Row-id prefixes of the TVM tests that need the Reduce node.
NEEDS_REDUCE = ("test_reduce_combiner_simplify-", "test_reduce_simplify-")


def outcome(make) -> str | None:
    """None when the row passes as in TVM, else what went wrong (one line)."""
    try:
        row = make()
    except Exception as err:
        return f"cannot build the row: {type(err).__name__}: {err}"
    analyzer = arith.Analyzer()
    try:
        if isinstance(row.setup, dict):
            for var, (lo, hi) in row.setup.items():
                analyzer.update(var, arith.ConstIntBound(lo, hi), True)
        elif row.setup is not None:
            row.setup(analyzer)
    except Exception as err:
        return f"setup failed: {type(err).__name__}: {err}"
    try:
        after = analyzer.canonical_simplify(row.before)
        expected = row.expected(analyzer) if callable(row.expected) else row.expected
    except Exception as err:
        return f"raised {type(err).__name__}: {err}"
    expected = tir.convert(expected)
    if tir.structural_equal(after, expected):
        return None
    return f"got {after}, TVM expects {expected}"


@pytest.mark.parametrize("make", params(ROWS, KNOWN_FAILURES))
def test_tvm_canonical_row(make):
    problem = outcome(make)
    assert problem is None, problem


def test_known_failures_are_rows():
    assert not unknown_ids(ROWS, KNOWN_FAILURES)


def test_pass_rate():
    counted = [ident for ident, _ in ROWS if not ident.startswith(NEEDS_REDUCE)]
    failing = [ident for ident in counted if ident in KNOWN_FAILURES]
    assert 1 - len(failing) / len(counted) >= PASS_RATE, (
        f"{len(counted) - len(failing)} of {len(counted)} TVM canonical rows pass")
