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

One remark per loop the user wrote. Passes copy loops: strip-mining makes a
main loop and a tail, a reduction's rewrite one sub-loop per accumulator,
versioning a fast path. A remark emitted about a loop names it
(``emit_remark(remark, loop=loop_var)``), and a pass that copies a loop says
which loop the copy came from (``note_loop_copy``). A pass run (the outermost
``Pass`` call: a whole ``codegen.build`` pipeline, or one pass run alone) holds
its remarks in a batch (``remark_batch``); when it ends, the remarks of the
copies of one source loop fold into one (``type(remark).fold``) in the user's
loop names, and only then reach the listeners.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterable, Iterator
from typing import Any

import attrs

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


def emit_remark(remark: Any, loop: Any = None) -> None:
    """Send ``remark`` to the listeners (see the module doc).

    ``loop``: the loop var the remark is about. Inside a ``remark_batch`` the
    remarks of the copies of one source loop fold into one when the batch ends.
    """
    batch = _batch()
    if batch is None:
        deliver([remark])
    else:
        batch.items.append((remark, loop))


def note_loop_copy(copy: Any, source: Any, index: Any = None) -> None:
    """Record that the loop of var ``copy`` runs iterations of the loop of var ``source``;
    ``index`` is ``source``'s value in the copy (``i_outer * 16 + i``), shown in remarks
    as ``source``'s name. Nothing is kept outside a ``remark_batch``."""
    batch = _batch()
    if batch is not None and copy is not source:
        batch.sources[id(copy)] = _Source(copy, source, index)


def note_body_copy(original: Any, copy: Any) -> None:
    """Record each loop of ``copy`` (``original`` copied with fresh binders) as a copy of
    the loop in the same place of ``original``."""
    if _batch() is None:
        return
    old_vars, new_vars = _loop_vars(original), _loop_vars(copy)
    if len(old_vars) != len(new_vars):
        return  # not a copy of the same shape: its remarks stay its own, the build goes on
    for old, new in zip(old_vars, new_vars):
        note_loop_copy(new, old)


def _loop_vars(stmt: Any) -> list:
    from tir.functor import post_order_visit
    from tir.stmt import For

    found: list = []
    post_order_visit(stmt, lambda n: found.append(n.loop_var) if isinstance(n, For) else None)
    return found


def user_form(expr: Any) -> Any:
    """``expr`` (an index in a loop copy) in the var of the loop the user wrote, simplified:
    ``A[i_outer * 16 + i + 1]`` of a strip-mined ``for i in range(1, n)`` is ``A[i]``.
    For remark text only; ``expr`` itself outside a ``remark_batch``."""
    batch = _batch()
    if batch is None or not batch.sources:
        return expr
    from tir.arith import Analyzer
    from tir.functor import substitute

    return Analyzer().simplify(substitute(expr, batch.user_vars()))


def deliver(remarks: Iterable[Any]) -> None:
    """Send remarks already made (e.g. those of a cached build) to every listener."""
    from .pass_context import PassContext

    remarks = list(remarks)
    for collector in _collectors():
        collector.extend(remarks)
    ctx = PassContext.entered()
    if ctx is not None:
        ctx.remarks.extend(remarks)


# ------------------------------------------------------------------ batches


@attrs.frozen
class _Source:
    """A loop copy's var, the var of the loop it copies and the source var's value in it."""

    copy: Any  # held so that id(copy) stays this var's for as long as the batch lives
    source: Any
    index: Any


@attrs.define
class _Batch:
    """The remarks of one pass run, with the loop each is about, and where copies came from."""

    items: list = attrs.Factory(list)
    sources: dict = attrs.Factory(dict)

    def root(self, var: Any) -> Any:
        """The user's loop var ``var``'s loop was copied from (``var`` itself if none)."""
        while id(var) in self.sources:
            var = self.sources[id(var)].source
        return var

    def user_vars(self) -> dict:
        """Each copy's var -> its value in the user's loop var (``i - 1 - i_outer * 16``)."""
        from tir import op

        vmap = {}
        for s in self.sources.values():
            root = self.root(s.source)
            vmap[s.copy] = root if s.index is None else op.add(root, op.sub(s.copy, s.index))
        return vmap


def _batch() -> _Batch | None:
    return getattr(_local, "batch", None)


@contextlib.contextmanager
def remark_batch() -> Iterator[None]:
    """Hold the remarks emitted inside; at the end of the outermost batch, fold those of
    the copies of one loop into one and deliver them (inner batches join the outer)."""
    if _batch() is not None:
        yield
        return
    batch = _local.batch = _Batch()
    try:
        yield
    finally:
        _local.batch = None
        deliver(fold(batch))


def fold(batch: _Batch) -> list:
    """The batch's remarks, one per (function, source loop), in the order of the last
    remark of each (the last pass sees the loops in program order)."""
    groups: dict[tuple, list] = {}
    last: dict[tuple, int] = {}
    for position, (remark, loop) in enumerate(batch.items):
        key = ("remark", position) if loop is None else (
            getattr(remark, "func_name", ""), id(batch.root(loop)))
        groups.setdefault(key, []).append((remark, loop))
        last[key] = position
    out = []
    for key in sorted(groups, key=last.__getitem__):
        remarks = [remark for remark, _ in groups[key]]
        if key[0] == "remark" or not hasattr(type(remarks[0]), "fold"):
            out.extend(remarks)
            continue
        source = batch.root(groups[key][0][1])
        out.append(type(remarks[0]).fold(remarks, source.name))
    return out


__all__ = ["collect_remarks", "deliver", "emit_remark", "fold", "note_body_copy",
           "note_loop_copy", "remark_batch", "user_form"]
