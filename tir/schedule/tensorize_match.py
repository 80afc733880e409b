"""Does a loop nest compute what a tensor intrinsic's description says? (for ``tensorize``)

The description (``desc``) is loops around one block over small dense buffers;
the program's subtree is loops around one block over parts of its buffers.
They match when:

- the loops pair level by level, with equal constant extents from 0 (any kind:
  the subtree's loops may be unrolled or vectorized, they are replaced);
- the blocks have no predicate and no init (``decompose_reduction`` first)
  and their iter vars split the paired loops alike into spatial and reduction
  ones;
- with iter vars replaced by their bindings, the two bodies are the same
  expression tree, where each description buffer stands for one program
  buffer of the same dtype, accessed at a fixed *offset*: the program's index
  in each of its leading dimensions (those the description lacks) and the
  difference of the two indices in each trailing one may use only loops
  outside the subtree;
- each part is dense as the description's buffer is: the program buffer has
  no strides and its trailing dimensions but the first equal the
  description's (the implementation may load a whole part as one vector).

The analysis only decides; ``primitives.tensorize`` rewrites. A mismatch is a
``ScheduleError`` that names the first difference.
"""

from __future__ import annotations

import attrs

from ..analysis.var_use import uses_any_var
from ..arith import Analyzer
from ..block import BlockRealize, IterVarType
from ..buffer import Buffer
from ..expr import BufferLoad, IntImm, PrimExpr, Var
from ..functor import substitute
from ..node import DATA, EXPR, EXPRS, STMT, STMTS
from ..range import Range
from ..stmt import BufferStore, For, Stmt
from .error import ScheduleError


@attrs.frozen
class BufferMatch:
    """Where a description buffer lies in the program: ``target`` at ``offsets``.

    ``offsets`` has one entry per dimension of ``target``: the whole index for
    the leading dimensions the description lacks, the start of the part for
    the others. Offsets use only loops outside the tensorized subtree.
    """

    desc: Buffer
    target: Buffer
    offsets: tuple[PrimExpr, ...]


@attrs.frozen
class Match:
    """The result: the program's block, its loops in the subtree, and the buffers."""

    block_name: str
    loops: tuple[For, ...]
    buffers: tuple[BufferMatch, ...]  # in the order of the description's parameters


def match(intrin_name: str, desc_func, pattern: Stmt, subtree: Stmt) -> Match:
    """Match ``subtree`` against ``pattern`` (``desc_func``'s body); raise on the first
    difference."""
    where = f"tensorize({intrin_name!r})"
    desc_loops, desc_realize = _loop_nest(pattern)
    loops, realize = _loop_nest(subtree)
    _match_loops(where, desc_loops, loops, realize)
    _match_blocks(where, desc_realize, realize)
    _match_iter_kinds(where, desc_realize, realize, desc_loops, loops)
    desc_body = substitute(_inline_bindings(desc_realize),
                           {d.loop_var: t.loop_var for d, t in zip(desc_loops, loops)})
    target_body = _inline_bindings(realize)
    cmp = _Comparer(where, realize.block.name_hint, loops)
    cmp.stmt(desc_body, target_body)
    buffers = []
    for param in desc_func.params:
        desc_buf = desc_func.buffer_map[param]
        found = cmp.buffers.get(id(desc_buf))
        if found is None:
            fail(f"{where}: the description's buffer {desc_buf.name} is not accessed in "
                 f"block {realize.block.name_hint}")
        _check_dense(where, found)
        buffers.append(found)
    return Match(realize.block.name_hint, tuple(loops), tuple(buffers))


def _loop_nest(stmt: Stmt) -> tuple[list[For], Stmt]:
    loops = []
    while isinstance(stmt, For):
        loops.append(stmt)
        stmt = stmt.body
    return loops, stmt


def _match_loops(where: str, desc_loops: list[For], loops: list[For], realize: Stmt) -> None:
    if not isinstance(realize, BlockRealize):
        fail(f"{where}: the loops to tensorize must hold one block and nothing else; "
             f"found {type(realize).__name__} under the innermost loop")
    if len(desc_loops) != len(loops):
        fail(f"{where}: the description has {len(desc_loops)} loop(s) around its block, "
             f"the subtree {len(loops)} (split or fuse loops so the nests correspond)")
    for level, (d, t) in enumerate(zip(desc_loops, loops)):
        extent = Analyzer().simplify(t.extent)
        if not (isinstance(t.min, IntImm) and t.min.value == 0):
            fail(f"{where}: loop {t.loop_var.name} starts at {t.min}, not 0")
        if not isinstance(extent, IntImm) or extent.value != d.extent.value:
            fail(f"{where}: loop {level} ({t.loop_var.name}) has extent {t.extent}, the "
                 f"description's loop {d.loop_var.name} has {d.extent.value}")


def _match_blocks(where: str, desc: BlockRealize, realize: BlockRealize) -> None:
    name = realize.block.name_hint
    if not (isinstance(realize.predicate, IntImm) and realize.predicate.value == 1):
        fail(f"{where}: block {name} runs under the predicate {realize.predicate} (a split "
             f"that does not divide its loop); the description has none")
    if realize.block.init is not None:
        fail(f"{where}: block {name} has an init and the description has none; apply "
             f"decompose_reduction above the tensorized loops first")
    if realize.block.alloc_buffers:
        fail(f"{where}: block {name} allocates buffers; the description's block does not")


def _match_iter_kinds(where: str, desc: BlockRealize, realize: BlockRealize,
                      desc_loops: list[For], loops: list[For]) -> None:
    """Each loop of the subtree is a reduction loop in both blocks or in neither."""
    ours = _reduction_loops(realize, [t.loop_var for t in loops])
    theirs = _reduction_loops(desc, [d.loop_var for d in desc_loops])
    for d, t in zip(desc_loops, loops):
        if (id(d.loop_var) in theirs) != (id(t.loop_var) in ours):
            role = "a reduction" if id(d.loop_var) in theirs else "a spatial"
            fail(f"{where}: loop {t.loop_var.name} should be {role} loop of block "
                 f"{realize.block.name_hint}, as the description's {d.loop_var.name} is")


def _reduction_loops(realize: BlockRealize, loop_vars: list[Var]) -> set[int]:
    """The loops (by var id) that a reduction iter var of the block is bound to."""
    out = set()
    for iv, value in zip(realize.block.iter_vars, realize.iter_values):
        if iv.iter_type == IterVarType.CommReduce:
            out.update(id(v) for v in loop_vars if uses_any_var(value, [v]))
    return out


def _inline_bindings(realize: BlockRealize) -> Stmt:
    block = realize.block
    return substitute(block.body, {iv.var: v for iv, v in zip(block.iter_vars,
                                                               realize.iter_values)})


class _Comparer:
    """Walks the description's body and the program's side by side."""

    def __init__(self, where: str, block: str, loops: list[For]):
        self.where, self.block = where, block
        self.inner = [loop.loop_var for loop in loops]
        self.buffers: dict[int, BufferMatch] = {}
        self.targets: dict[int, Buffer] = {}
        self.analyzer = Analyzer()
        for loop in loops:  # (j_o * 16 + j_i) % 16 is j_i only for j_i < 16
            self.analyzer.bind(loop.loop_var, Range.from_min_extent(loop.min, loop.extent))

    def differ(self, what: str) -> None:
        fail(f"{self.where}: block {self.block} differs from the description: {what}")

    def stmt(self, d: Stmt, t: Stmt) -> None:
        self.node(d, t)

    def node(self, d, t) -> None:
        if type(d) is not type(t):
            self.differ(f"{_show(d)} in the description, {_show(t)} here")
        if isinstance(d, (BufferLoad, BufferStore)):
            self.access(d, t)
        elif isinstance(d, Var):
            if d is not t:
                self.differ(f"{d.name} in the description, {t.name} here")
        else:
            self.fields(d, t)

    def fields(self, d, t) -> None:
        for f in attrs.fields(type(d)):
            kind = f.metadata.get("kind", DATA)
            a, b = getattr(d, f.name), getattr(t, f.name)
            if kind in (EXPR, STMT):
                self.node(a, b)
            elif kind in (EXPRS, STMTS):
                if len(a) != len(b):
                    self.differ(f"{_show(d)} has {len(a)} operands there, {len(b)} here")
                for x, y in zip(a, b):
                    self.node(x, y)
            elif kind == DATA and f.name != "span" and a != b:
                self.differ(f"{_show(d)} in the description, {_show(t)} here")

    def access(self, d, t) -> None:
        if isinstance(d, BufferStore):
            self.node(d.value, t.value)
        if (d.predicate is None) != (t.predicate is None):
            self.differ(f"a masked access on one side only ({_show(t)})")
        self.bind(d.buffer, t.buffer)
        offsets = self.offsets(d, t)
        known = self.buffers.get(id(d.buffer))
        if known is None:
            self.buffers[id(d.buffer)] = BufferMatch(d.buffer, t.buffer, offsets)
            return
        for a, b in zip(known.offsets, offsets):
            if not self.analyzer.can_prove_equal(a, b):
                self.differ(f"{t.buffer.name} is accessed at two different parts "
                            f"(offsets {list(known.offsets)} and {list(offsets)})")

    def bind(self, d: Buffer, t: Buffer) -> None:
        if d.dtype != t.dtype:
            self.differ(f"buffer {d.name} is {d.dtype} in the description, {t.name} is "
                        f"{t.dtype}")
        if len(t.shape) < len(d.shape):
            self.differ(f"buffer {d.name} has {len(d.shape)} dimensions, {t.name} "
                        f"{len(t.shape)}")
        seen = self.targets.setdefault(id(d), t)
        if seen is not t:
            self.differ(f"the description's {d.name} stands for both {seen.name} and {t.name}")
        for other, buf in self.targets.items():
            if buf is t and other != id(d):
                self.differ(f"{t.name} stands for two of the description's buffers")

    def offsets(self, d, t) -> tuple[PrimExpr, ...]:
        lead = len(t.indices) - len(d.indices)
        out = [self.analyzer.simplify(i) for i in t.indices[:lead]]
        for di, ti in zip(d.indices, t.indices[lead:]):
            out.append(self.analyzer.simplify(ti - di))
        for dim, off in enumerate(out):
            if uses_any_var(off, self.inner):
                self.differ(f"{t.buffer.name}'s index {t.indices[dim]} (dimension {dim}) does "
                            f"not follow the description's {d.buffer.name}"
                            f"{list(d.indices)}")
        return tuple(out)


def _check_dense(where: str, m: BufferMatch) -> None:
    d, t = m.desc, m.target
    k = len(d.shape)
    trailing = [Analyzer().simplify(x) for x in t.shape[len(t.shape) - k + 1:]]
    same = all(isinstance(x, IntImm) and x.value == y.value
               for x, y in zip(trailing, d.shape[1:]))
    if t.strides or not same:
        fail(f"{where}: {t.name}{list(t.shape)} is not laid out as the description's "
             f"{d.name}{list(d.shape)}: its last {k - 1} dimension(s) must be "
             f"{[y.value for y in d.shape[1:]]} and dense, so that a part of it is one "
             f"block of memory (pack it first, with cache_read or transform_layout)")


def fail(message: str) -> None:
    """Raise the ``ScheduleError`` that says why the subtree does not match."""
    raise ScheduleError(message)


def _show(node) -> str:
    text = str(node).strip().splitlines()
    return repr(text[0][:80]) if text else type(node).__name__
