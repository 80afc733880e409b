"""Test helpers with TVM's names: ``CompareBeforeAfter``.

>>> class TestRemoveEmptyLoop(tir.testing.CompareBeforeAfter):   # doctest: +SKIP
...     transform = transform.RemoveNoOp()
...     def before(A: T.Buffer((16,), "float32")):
...         for i in range(16):
...             T.evaluate(0)
...     def expected(A: T.Buffer((16,), "float32")):
...         T.evaluate(0)

pytest collects ``test_compare`` from each subclass. ``before`` and
``expected`` are TVMScript functions (parsed as ``@T.prim_func``; no
decorator needed), ``PrimFunc``s or ``IRModule``s; ``expected`` may instead be
an exception class the transform must raise. ``transform`` is a pass (anything
callable on an ``IRModule``) or a method returning one.
"""

from __future__ import annotations

import inspect
from typing import Any

from .function import IRModule, PrimFunc
from .structural import assert_structural_equal


class CompareBeforeAfter:
    """Run ``transform`` on ``before`` and compare the result with ``expected``."""

    transform: Any = None
    before: Any = None
    expected: Any = None

    def test_compare(self) -> None:
        """The transformed ``before`` is structurally equal to ``expected`` (or raises it)."""
        cls = type(self)
        before = _as_module(self, cls.before, "before")
        transform = cls.transform
        if inspect.isfunction(transform):
            transform = transform(self) if _takes_self(transform) else transform()
        if transform is None:
            raise TypeError(f"{cls.__name__}: set transform to a pass")
        expected = cls.expected
        if isinstance(expected, type) and issubclass(expected, BaseException):
            import pytest

            with pytest.raises(expected):
                transform(before)
            return
        assert_structural_equal(transform(before), _as_module(self, expected, "expected"))


def _as_module(test: Any, value: Any, what: str) -> IRModule:
    """``value`` (a TVMScript function, a method returning IR, IR) as an ``IRModule``."""
    if inspect.isfunction(value):
        if _takes_self(value):
            value = value(test)
        else:
            from .script.entry import parse_function

            value = parse_function(value, extra=dict(vars(type(test))), depth=None)
    if isinstance(value, PrimFunc):
        return IRModule.from_expr(value)
    if isinstance(value, IRModule):
        return value
    raise TypeError(f"{type(test).__name__}.{what} must be a TVMScript function, a PrimFunc "
                    f"or an IRModule, got {type(value).__name__}")


def _takes_self(func: Any) -> bool:
    params = list(inspect.signature(func).parameters)
    return bool(params) and params[0] == "self"
