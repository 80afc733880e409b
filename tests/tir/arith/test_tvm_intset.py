"""TVM v0.16's int-set tests, every row, against ``Analyzer.int_set`` and the region estimates."""

from __future__ import annotations

import pytest

import tir
from tir import arith

from .tvm_port import intset_cases as cases
from .tvm_port.case import params, rows, unknown_ids

#: The issue's bar: at least this share of TVM's rows pass.
PASS_RATE = 0.95

_MODES = {
    "lowerbound": arith.estimate_region_lower_bound,
    "upperbound": arith.estimate_region_upper_bound,
}


ROWS = rows((table.__name__, table) for table in cases.TABLES)


def outcome(make) -> str | None:
    """None when the row passes as in TVM, else what went wrong (one line)."""
    try:
        case = make()
    except Exception as err:
        return f"cannot build the row: {type(err).__name__}: {err}"
    try:
        if isinstance(case, cases.Claim):
            return None if case.holds() else f"assert {case.text} fails"
        if isinstance(case, cases.Verify):
            return _verify(case)
        return _region(case)
    except Exception as err:
        return f"raised {type(err).__name__}: {err}"


def _verify(case: cases.Verify) -> str | None:
    analyzer = arith.Analyzer()
    if case.setup is not None:
        case.setup(analyzer)
    res = analyzer.int_set(case.data, case.dmap)
    lo, hi = case.expected
    if analyzer.can_prove_equal(res.min_value, lo) and analyzer.can_prove_equal(res.max_value, hi):
        return None
    return f"got {res}, TVM expects [{lo}, {hi}]"


def _region(case: cases.Region) -> str | None:
    region, expect = [], []
    for k, v in case.expect_region.items():
        if not isinstance(k, (tuple, list)):
            k = (k, k + 1)
        region.append(tir.Range.from_min_extent(k[0], arith.Analyzer().simplify(k[1] - k[0])))
        expect.append(v)
    predicate = tir.IntImm("bool", 1) if case.predicate is None else case.predicate
    estimate = _MODES.get(case.mode, arith.estimate_region_strict_bound)
    result = estimate(region=region, var_dom=case.var_dom, predicate=predicate)
    if result is None:
        return None if all(e is None for e in expect) else f"got None, TVM expects {expect}"
    if len(result) != len(expect):
        return f"got {len(result)} sets for {len(expect)} dimensions"
    for intset, desc in zip(result, expect):
        problem = _check_dim(intset, desc)
        if problem is not None:
            return problem
    return None


def _check_dim(intset, desc) -> str | None:
    if desc is None:
        return f"got {intset}, TVM expects no estimate (None)"
    if not isinstance(desc, dict):
        desc = {(): desc}
        fresh = True
    else:
        fresh = False
    for binding, (begin, end) in desc.items():
        analyzer = arith.Analyzer()
        for k, v in binding:
            analyzer.bind(k, v)
        if fresh:  # TVM compares the plain ends, without simplifying them first
            got_begin, got_end = intset.min_value, intset.max_value + 1
        else:
            got_begin = analyzer.simplify(intset.min_value, 3)
            got_end = analyzer.simplify(intset.max_value + 1, 3)
        if not (analyzer.can_prove_equal(got_begin - begin, 0)
                and analyzer.can_prove_equal(got_end - end, 0)):
            where = f" with {binding}" if binding else ""
            return f"got [{got_begin}, {got_end}){where}, TVM expects [{begin}, {end})"
    return None


@pytest.mark.parametrize("make", params(ROWS, cases.KNOWN_FAILURES))
def test_tvm_intset_row(make):
    problem = outcome(make)
    assert problem is None, problem


def test_known_failures_are_rows():
    assert not unknown_ids(ROWS, cases.KNOWN_FAILURES)


def test_pass_rate():
    assert 1 - len(cases.KNOWN_FAILURES) / len(ROWS) >= PASS_RATE, (
        f"{len(ROWS) - len(cases.KNOWN_FAILURES)} of {len(ROWS)} TVM int-set rows pass")
