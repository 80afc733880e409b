"""The design space: every rule applied to every block of a function, choices through a Sampler.

``apply_rules`` is the one place that decides which rule meets which block,
in this order (MetaSchedule's CPU rules, in spirit):

1. producers to inline (``compute_inline``): elementwise stages read by one
   later stage, or cheap ones (no calls) read by several;
2. contractions, register-tiled (``rules.contraction``), with the one
   elementwise stage that reads their result moved into their tile;
3. other reductions and the remaining elementwise stages (``rules.rows`` and
   ``rules.elementwise``).

A block no rule can schedule stays as written and gets a ``ScheduleRemark``
saying why. Run with a default ``Sampler`` it is ``apply_default_schedule``;
with a random or forced one it is a point of the search's space.
"""

from __future__ import annotations

import attrs

from tir.dtype import DataType
from tir.expr import Call
from tir.functor import post_order_visit
from tir.schedule import Schedule, ScheduleError, analysis, tree

from .block_kinds import BlockKind, classify
from .rules.contraction import schedule_contraction
from .rules.elementwise import schedule_elementwise
from .rules.reduction import schedule_reduction
from .rules.rows import schedule_row_group
from .sampler import Sampler
from .target_info import TargetInfo


@attrs.frozen
class ScheduleRemark:
    """Why a rule left a block as written (or what it did), for the user to read."""

    func: str
    block: str
    message: str

    def __str__(self) -> str:
        return f"{self.func}: block {self.block}: {self.message}"


def apply_rules(sch: Schedule, info: TargetInfo, sampler: Sampler) -> list[ScheduleRemark]:
    """Schedule every block of ``sch``'s function the rules recognize; the remarks of the rest."""
    run = _RuleRun(sch, info, sampler)
    inlined = _inline_producers(sch, run.kinds)
    fused = run.contractions(inlined)
    left = [n for n, k in run.kinds.items()
            if n not in inlined and n not in fused and k.kind != "contraction"]
    grouped = run.row_groups(left)
    run.singles([n for n in left if n not in grouped])
    return run.remarks


class _RuleRun:
    """One ``apply_rules`` call: the blocks as classified before any rule ran, and the remarks."""

    def __init__(self, sch: Schedule, info: TargetInfo, sampler: Sampler):
        self.sch, self.info, self.sampler = sch, info, sampler
        func = sch.func
        self.kinds = {r.block.name_hint: classify(func, r) for r in tree.blocks(func)}
        self.elem_bytes = {r.block.name_hint: _elem_bytes(r) for r in tree.blocks(func)}
        self.remarks: list[ScheduleRemark] = []

    def note(self, block: str, why: str | None) -> None:
        if why is not None:
            self.remarks.append(ScheduleRemark(self.sch.func_name, block,
                                               f"left as written: {why}"))

    def contractions(self, inlined: set[str]) -> set[str]:
        """Step 2: tile each contraction; returns the consumers fused into their tiles."""
        sch, info, sampler = self.sch, self.info, self.sampler
        fused = set()
        for name, kind in self.kinds.items():
            if kind.kind != "contraction" or name in inlined:
                continue
            consumer = _fusable_consumer(sch, name, self.kinds)
            why = _try(sch, lambda: schedule_contraction(sch, kind, info, sampler, consumer,
                                                       self.elem_bytes[name]))
            self.note(name, why)
            if why is None and consumer is not None:
                fused.add(consumer)
        return fused

    def row_groups(self, left: list[str]) -> set[str]:
        """Step 3a: reductions with the stages that share their rows; returns the blocks done."""
        sch, kinds = self.sch, self.kinds
        grouped = set()
        for output, members in _row_groups(sch, left, kinds):
            why = _try(sch, lambda: schedule_row_group(
                sch, kinds[output], [kinds[m] for m in members], self.info, self.sampler,
                self.elem_bytes[output]))
            if why is None:
                grouped.update([output, *members])
            else:
                self.note(output, why)
        return grouped

    def singles(self, names: list[str]) -> None:
        """Step 3b: each remaining reduction or elementwise stage on its own."""
        sch, info, sampler = self.sch, self.info, self.sampler
        for name in names:
            kind = self.kinds[name]
            rule = schedule_reduction if kind.kind == "reduction" else schedule_elementwise
            if kind.why_not is not None:
                self.note(name, kind.why_not)
            else:
                self.note(name, _try(sch, lambda: rule(sch, kind, info, sampler,
                                                       self.elem_bytes[name])))


def _try(sch: Schedule, rule) -> str | None:
    """Run a rule; if a primitive refuses, undo the rule's steps and say why."""
    saved = sch.copy()
    try:
        return rule()
    except ScheduleError as err:
        sch.__dict__.update(saved.__dict__)
        return f"a schedule primitive refused: {err}"


def _elem_bytes(realize) -> int:
    written = analysis.writes(realize.block)
    if not written:
        return 4
    return max(1, DataType(written[0].dtype).bits // 8)


def _inline_producers(sch: Schedule, kinds: dict[str, BlockKind]) -> set[str]:
    inlined = set()
    for name in reversed(list(kinds)):
        if kinds[name].kind != "inline":
            continue
        realize = tree.find_block(sch.func, name)
        readers = analysis.consumers(sch.func, realize)
        if len(readers) > 1 and _has_call(realize.block.body):
            continue  # an exp read by two stages would be computed twice
        try:
            sch.compute_inline(sch.get_block(name))
        except ScheduleError:
            continue
        inlined.add(name)
    return inlined


def _has_call(stmt) -> bool:
    found = []
    post_order_visit(stmt, lambda n: found.append(n) if isinstance(n, Call) else None)
    return bool(found)


def _fusable_consumer(sch: Schedule, name: str, kinds: dict[str, BlockKind]) -> str | None:
    """The one elementwise stage reading a contraction's intermediate result, if any."""
    func = sch.func
    realize = tree.find_block(func, name)
    out = analysis.writes(realize.block)
    if not out or id(out[0]) in analysis.param_buffers(func):
        return None
    readers = analysis.consumers(func, realize)
    if len(readers) != 1:
        return None
    reader = readers[0].block.name_hint
    kind = kinds.get(reader)
    spatial = tuple(kinds[name].extents[k] for k in kinds[name].contraction.spatial)
    if kind is None or kind.kind != "elementwise" or kind.extents != spatial:
        return None
    return reader


def _row_groups(sch: Schedule, names: list[str], kinds: dict[str, BlockKind]
                ) -> list[tuple[str, list[str]]]:
    """Output stages with the reductions feeding them over the same row axis (program order).

    A producer joins a group when every block reading it is in the group and
    it has the output's row extent as its first axis; a group without a
    reduction is no row group (its stages are elementwise, scheduled alone).
    """
    func = sch.func
    params = analysis.param_buffers(func)
    candidates = set(names)
    groups = []
    for output in reversed(names):
        realize = tree.find_block(func, output)
        if not any(id(b) in params for b in analysis.writes(realize.block)):
            continue
        if len(kinds[output].extents) < 2 or kinds[output].why_not is not None:
            continue
        members: list[str] = []
        inside = {output}
        for name in reversed(names[:names.index(output)]):
            if name not in candidates or kinds[name].why_not is not None:
                continue
            r = tree.find_block(func, name)
            readers = {c.block.name_hint for c in analysis.consumers(func, r)}
            same_row = kinds[name].extents[:1] == kinds[output].extents[:1]
            if readers and readers <= inside and same_row:
                members.insert(0, name)
                inside.add(name)
        if any(kinds[m].kind == "reduction" for m in members):
            groups.append((output, members))
            candidates -= inside
    return groups
