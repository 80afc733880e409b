"""One ported row: an input, what TVM expects for it, and the facts it assumes."""

from __future__ import annotations

from typing import Any

import pytest

import tir


class TestCase:
    """TVM's ``TestCase(before, expected, preconditions)``.

    ``expected`` is an expression, a Python number, or an exception class the
    simplifier must raise. ``preconditions`` is None, a condition, or a list
    of conditions that all hold.
    """

    __test__ = False   # not a pytest class

    def __init__(self, before: Any, expected: Any, preconditions: Any = None) -> None:
        self.before = before
        self.expected = expected
        self.preconditions = preconditions

    @property
    def constraint(self) -> Any:
        if self.preconditions is None:
            return None
        if isinstance(self.preconditions, (list, tuple)):
            return tir.all(*self.preconditions)
        return self.preconditions

    @property
    def raises(self) -> bool:
        return isinstance(self.expected, type) and issubclass(self.expected, Exception)


Case = TestCase


def rows(tables) -> list[tuple]:
    """``(id, make_row, *extra)`` for every row of ``tables``, ids ``Name-k`` (k from 0).

    ``tables`` holds ``(name, build, *extra)``: ``build()`` returns the row
    makers of one TVM class or test function. A table whose own body fails
    (it uses something tirlite lacks) becomes one row that raises that error.
    """
    out = []
    for name, build, *extra in tables:
        try:
            makers = build()
        except Exception as err:  # the class body itself uses what we lack
            makers = [_raiser(err)]
        for k, make in enumerate(makers):
            out.append((f"{name}-{k}", make, *extra))
    return out


def unknown_ids(rows, known_failures: dict[str, str]) -> list[str]:
    """Known-failure ids that name no row (a typo, or a row TVM's file no longer has)."""
    ids = {row[0] for row in rows}
    return sorted(set(known_failures) - ids)


def _raiser(err: Exception):
    def make():
        raise err
    return make


def params(rows, known_failures: dict[str, str]) -> list:
    """One ``pytest.param(*args, id=ident)`` per row ``(ident, *args)``.

    A row listed in ``known_failures`` is a strict xfail with its reason, so
    a row that starts passing fails the run until its line is removed.
    """
    out = []
    for ident, *args in rows:
        marks = ()
        if ident in known_failures:
            marks = (pytest.mark.xfail(reason=known_failures[ident], strict=True),)
        out.append(pytest.param(*args, id=ident, marks=marks))
    return out
