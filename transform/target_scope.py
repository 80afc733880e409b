"""The target a ``with codegen.Target(...)`` block names, for passes that consult it.

TVM's passes read ``Target.current()`` when a function carries no ``"target"``
attribute (``with tvm.target.Target("llvm -mattr=+sve"): VectorizeLoop()(mod)``).
The stack lives here, not in codegen, because transform must not import codegen;
``codegen.Target.__enter__`` pushes onto it. Passes read it in this order: the
``AttrStmt("target")`` around a loop, the function's ``"target"`` attribute,
then ``current_target()``.
"""

from __future__ import annotations

import threading
from typing import Any

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


def has_sve(target: Any) -> bool:
    """Whether a target (string or ``codegen.Target``) turns on SVE (``-mattr=+sve``,
    ``+sve2``, ...): scalable vectors are then allowed, as in TVM's ``TargetHasVLA``."""
    if target is None:
        return False
    mattr = getattr(target, "mattr", None)
    features = mattr if mattr is not None else _mattr_of(str(target))
    return any(f.startswith("+sve") for f in features)


def _mattr_of(text: str) -> tuple[str, ...]:
    for token in text.split():
        if token.startswith("-mattr="):
            return tuple(token[len("-mattr="):].split(","))
    return ()


__all__ = ["current_target", "has_sve", "pop_target", "push_target"]
