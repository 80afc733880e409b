"""``UnrollLoop``: replace loops by copies of their body, one per iteration.

A ``ForKind.UNROLLED`` loop with a constant extent becomes a ``SeqStmt`` of
its body with the loop var replaced by ``min + k`` for each ``k``; variables
bound inside the body get fresh ``Var`` objects in every copy after the
first, so that no variable is bound twice. An ``UNROLLED`` loop whose extent
is not constant cannot be unrolled and becomes ``SERIAL``.

Config ``"tir.UnrollLoop"`` (TVM's options) also lets the pass pick serial
loops itself: a serial loop with a constant extent is unrolled when no
non-unrolled loop is inside it, the unrolled nest inside it is at most
``auto_max_depth`` deep, and its total step count (extent times the
statements its body runs, counting stores and evaluates) is at most
``auto_max_step`` -- or its extent is at most ``auto_max_extent``. With
``explicit_unroll`` False, chosen loops are only marked ``UNROLLED`` (left
for the code generator, which asks LLVM to unroll them fully) instead of copied.

Two loop annotations (TVM's names) set these options for the loop they are on
and the loops inside it: ``pragma_unroll_explicit`` (``explicit_unroll``) and
``pragma_auto_unroll_max_step`` (``auto_max_step``). The tuner's register tiles
carry ``pragma_unroll_explicit = 0``: LLVM then unrolls the tile from one copy of
its body, where copying it here first made every later pass, the LLVM IR
emission and LLVM's own passes work on each copy (``tirlite.meta_schedule``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tir import op
from tir.expr import IntImm
from tir.functor import StmtMutator, copy_with_fresh_binders, substitute
from tir.node import replace
from tir.stmt import BufferStore, Evaluate, For, ForKind, SeqStmt, Stmt

from .pass_base import PrimFuncPass, prim_func_pass

#: Loop annotations that set an option for the loop and the loops inside it.
SCOPED_OPTIONS = {"pragma_unroll_explicit": ("explicit_unroll", bool),
                  "pragma_auto_unroll_max_step": ("auto_max_step", int)}


def unroll(loop: For) -> Stmt:
    """The body of ``loop`` (constant extent) repeated once per iteration."""
    copies = []
    for k in range(loop.extent.value):
        index = op.add(loop.min, op.const(k, loop.loop_var.dtype))
        if k == 0:  # the first copy keeps the original binders
            copies.append(substitute(loop.body, {loop.loop_var: index}))
        else:
            copies.append(copy_with_fresh_binders(loop.body, {loop.loop_var: index}))
    return SeqStmt.flatten(*copies)


class LoopUnroller(StmtMutator):
    """Unroll ``UNROLLED`` loops, and serial loops the auto-unroll options pick.

    While walking a loop body it tracks ``steps`` (how many stores and
    evaluates the body runs), ``unroll_depth`` (the deepest nest of unrolled
    loops in it) and ``has_normal_loop`` (whether a loop in it stays a loop).
    """

    def __init__(self, auto_max_step: int = 0, auto_max_depth: int = 8,
                 auto_max_extent: int = 0, explicit_unroll: bool = True):
        self.auto_max_step = auto_max_step
        self.auto_max_depth = auto_max_depth
        self.auto_max_extent = auto_max_extent
        self.explicit_unroll = explicit_unroll
        self.steps = 0
        self.unroll_depth = 0
        self.has_normal_loop = False

    def visit_buffer_store(self, stmt: BufferStore) -> Stmt:
        self.steps += 1
        return stmt

    def visit_evaluate(self, stmt: Evaluate) -> Stmt:
        self.steps += 1
        return stmt

    def visit_seq_stmt(self, stmt: SeqStmt) -> Stmt:
        new = self.generic_visit(stmt)
        return new if new is stmt else SeqStmt.flatten(*new.seq)  # splice unrolled copies in

    def visit_for(self, loop: For) -> Stmt:
        before = (self.steps, self.unroll_depth, self.has_normal_loop)
        self.steps, self.unroll_depth, self.has_normal_loop = 0, 0, False
        options = self._scoped_options(loop)
        saved = {name: getattr(self, name) for name in options}
        self._set(options)
        try:
            new = self._visit_loop(loop)
        finally:
            self._set(saved)
        # What this loop counts adds to what its earlier siblings counted.
        self.steps += before[0]
        self.unroll_depth = max(self.unroll_depth, before[1])
        self.has_normal_loop = self.has_normal_loop or before[2]
        return new

    def _visit_loop(self, loop: For) -> Stmt:
        new = self.generic_visit(loop)
        extent = new.extent.value if isinstance(new.extent, IntImm) else None
        if new.kind == ForKind.UNROLLED and extent is None:
            self.has_normal_loop = True
            return replace(new, kind=ForKind.SERIAL)
        if not (new.kind == ForKind.UNROLLED or self._auto_unroll(new, extent)):
            self.has_normal_loop = True
            return new
        self.steps *= max(extent, 0)
        self.unroll_depth += 1
        if self.explicit_unroll or extent <= 0:
            return unroll(new)
        return new if new.kind == ForKind.UNROLLED else replace(new, kind=ForKind.UNROLLED)

    def _set(self, options: dict[str, Any]) -> None:
        for name, value in options.items():
            setattr(self, name, value)

    @staticmethod
    def _scoped_options(loop: For) -> dict[str, Any]:
        """The options ``loop``'s annotations set for it and the loops inside it."""
        options = {}
        for key, (name, kind) in SCOPED_OPTIONS.items():
            if key in loop.annotations:
                value = loop.annotations[key]
                value = value.value if isinstance(value, IntImm) else value
                if not isinstance(value, (bool, int)):
                    raise ValueError(f"loop {loop.loop_var.name}: annotation {key} must be "
                                     f"an integer, got {value!r}")
                options[name] = kind(value)
        return options

    def _auto_unroll(self, loop: For, extent: int | None) -> bool:
        """Whether the auto-unroll options pick this serial loop (body already visited)."""
        if loop.kind != ForKind.SERIAL or extent is None or self.has_normal_loop:
            return False
        if self.unroll_depth >= self.auto_max_depth:
            return False
        return extent * self.steps <= self.auto_max_step or extent <= self.auto_max_extent


def unroll_loops(stmt: Stmt, config: Mapping[str, Any] | None = None) -> Stmt:
    """``stmt`` with its loops unrolled under ``config`` (the ``"tir.UnrollLoop"`` options)."""
    config = dict(config or {})
    config.pop("unroll_local_access", None)
    return LoopUnroller(**config)(stmt)


def UnrollLoop() -> PrimFuncPass:
    """The ``tir.UnrollLoop`` pass, configured by ``PassContext`` config ``"tir.UnrollLoop"``."""

    def transform_function(func, mod, ctx):
        return func.with_body(unroll_loops(func.body, ctx.config.get("tir.UnrollLoop")))

    return prim_func_pass(transform_function, opt_level=0, name="tir.UnrollLoop")
