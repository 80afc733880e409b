"""Remarks: what a pass did and why, reported beside the IR, never stored in it.

Like LLVM's optimization-remark stream and MLIR's diagnostic handlers, a
pass *emits* a remark and whoever listens receives it:

- every open ``collect_remarks()`` scope (innermost and outer ones alike);
- the innermost entered ``PassContext`` (its ``remarks`` list);
- ``codegen.build``, which keeps the remarks of its pipeline on the built
  module (``Module.remarks``).

>>> with transform.collect_remarks() as remarks:          # doctest: +SKIP
...     mod = transform.VectorizeLoop()(mod)
>>> for remark in remarks:                               # doctest: +SKIP
...     print(remark)    # main: loop j (4 lanes): vectorized

Nothing listens by default, so a pass run outside any scope keeps no
remarks (and no memory grows with them).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterable, Iterator
from typing import Any

_local = threading.local()


def _collectors() -> list[list]:
    if not hasattr(_local, "collectors"):
        _local.collectors = []
    return _local.collectors


@contextlib.contextmanager
def collect_remarks() -> Iterator[list]:
    """A scope that receives every remark emitted inside it, in order (a list).

    Scopes nest: a remark reaches every open scope of the current thread.
    """
    remarks: list = []
    stack = _collectors()
    stack.append(remarks)
    try:
        yield remarks
    finally:  # by identity: two scopes' lists may be equal
        del stack[next(k for k in range(len(stack) - 1, -1, -1) if stack[k] is remarks)]


def emit_remark(remark: Any) -> None:
    """Send ``remark`` to the open collecting scopes and the innermost entered PassContext."""
    deliver([remark])


def deliver(remarks: Iterable[Any]) -> None:
    """Send remarks already made (e.g. those of a cached build) to every listener."""
    from .pass_context import PassContext

    remarks = list(remarks)
    for collector in _collectors():
        collector.extend(remarks)
    ctx = PassContext.entered()
    if ctx is not None:
        ctx.remarks.extend(remarks)


__all__ = ["collect_remarks", "deliver", "emit_remark"]
