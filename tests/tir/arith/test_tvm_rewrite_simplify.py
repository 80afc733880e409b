"""TVM v0.16's rewrite-simplifier tests, every row, against ``Analyzer.rewrite_simplify``."""

from __future__ import annotations

import pytest

from .tvm_port.case import params, unknown_ids
from .tvm_port.known_failures import REWRITE
from .tvm_port.run_rewrite import ROWS, outcome

#: The issue's bar: at least this share of TVM's rows pass.
PASS_RATE = 0.95


@pytest.mark.parametrize("make, extension", params(ROWS, REWRITE))
def test_tvm_rewrite_row(make, extension):
    problem = outcome(make, extension)
    assert problem is None, problem


def test_known_failures_are_rows():
    assert not unknown_ids(ROWS, REWRITE)


def test_pass_rate():
    assert 1 - len(REWRITE) / len(ROWS) >= PASS_RATE, (
        f"{len(ROWS) - len(REWRITE)} of {len(ROWS)} TVM rewrite rows pass")
