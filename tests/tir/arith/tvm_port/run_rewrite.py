"""Running one ported rewrite row: the analyzer TVM's BaseCompare sets up, and the comparison."""

from __future__ import annotations

import contextlib

import tir
from tir import arith

from .case import rows
from .rewrite_cases import CLASSES

ROWS = rows(CLASSES)


def outcome(make, extension) -> str | None:
    """None when the row passes as in TVM, else what went wrong (one line)."""
    try:
        case = make()
    except Exception as err:
        return f"cannot build the row: {type(err).__name__}: {err}"
    analyzer = arith.Analyzer()
    if extension is not None:
        try:
            analyzer.enabled_extensions = getattr(arith.Extension, extension)
        except Exception as err:
            return f"extension {extension}: {type(err).__name__}: {err}"
    scope = (analyzer.constraint_scope(case.constraint) if case.constraint is not None
             else contextlib.nullcontext())
    if case.raises:
        try:
            with scope:
                analyzer.rewrite_simplify(case.before)
        except case.expected:
            return None
        except Exception as err:
            return f"raised {type(err).__name__} instead of {case.expected.__name__}: {err}"
        return f"did not raise {case.expected.__name__}"
    try:
        with scope:
            after = analyzer.rewrite_simplify(case.before)
    except Exception as err:
        return f"raised {type(err).__name__}: {err}"
    expected = tir.convert(case.expected)
    if tir.structural_equal(after, expected):
        return None
    return f"got {after}, TVM expects {expected}"
