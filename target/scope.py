"""The target a ``with codegen.Target(...)`` block names, for passes that consult it.

TVM's passes read ``Target.current()`` when a function carries no ``"target"``
attribute (``with tvm.target.Target("llvm -mattr=+sve"): VectorizeLoop()(mod)``).
``Target.__enter__`` pushes onto this stack. Passes read it in this order: the
``AttrStmt("target")`` around a loop, the function's ``"target"`` attribute,
then ``current_target()``.
"""

from __future__ import annotations

import threading

_local = threading.local()


def _stack() -> list[str]:
    if not hasattr(_local, "stack"):
        _local.stack = []
    return _local.stack


def current_target() -> str | None:
    """The target string of the innermost entered ``codegen.Target``, or None."""
    stack = _stack()
    return stack[-1] if stack else None


def push_target(text: str) -> None:
    """Enter a target scope (``codegen.Target.__enter__`` calls this)."""
    _stack().append(text)


def pop_target() -> None:
    """Leave the innermost target scope."""
    _stack().pop()


__all__ = ["current_target", "pop_target", "push_target"]
