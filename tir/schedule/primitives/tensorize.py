"""``tensorize``: replace a loop nest by a tensor intrinsic's implementation.

TVM's semantics (``blockize_tensorize.cc``), in two steps:

- ``tensorize_match.match`` checks that the loops under the given loop (or
  the given block) compute what the intrinsic's description says, and finds
  which part of each program buffer each description buffer stands for;
- the loops are replaced by a block ``<block>_o`` without iter vars holding
  the intrinsic's implementation, its buffer accesses moved onto those parts.

TVM first blockizes the loops into a block ``<block>_o`` whose iter vars carry
the outer loops, and binds the implementation's buffers with
``match_buffer``. tirlite's IR has no ``match_buffer`` in blocks: the part's
offsets (expressions of the outer loops) are added to the implementation's
indices instead, and the block is opaque (it refers to the outer loops). The
block keeps later primitives on the outer loops working (``parallel``,
``reorder``), as TVM's does.
"""

from __future__ import annotations

from ... import dtype as dt
from ...analysis.var_use import uses_any_var
from ...arith import Analyzer
from ...block import Block, BlockRealize
from ...buffer import Buffer, flat_view
from ...expr import Broadcast, BufferLoad, IntImm, PrimExpr, Ramp, Var
from ...function import PrimFunc
from ...functor import StmtExprMutator, copy_with_fresh_binders
from ...node import replace
from ...op import const, sum_of
from ...stmt import BufferStore, Stmt
from ...tensor_intrinsic import TensorIntrin, pattern_of
from .. import tree
from ..error import ScheduleError
from ..tensorize_match import Match, match
from .cache import unique_block_name


def tensorize(func: PrimFunc, target: Var | str, intrin_name: str,
              allow_inexact: bool = False) -> tuple[PrimFunc, str]:
    """Replace the loop of var ``target`` (or the block named ``target``) by the
    implementation of the tensor intrinsic ``intrin_name`` (one registered as inexact
    only with ``allow_inexact``).

    Returns:
        ``(new_func, name of the new block)``.
    Raises:
        ScheduleError: the intrinsic is unknown, or the subtree does not compute what
        its description says (the message names the first difference).
    """
    subtree = tree.find_block(func, target) if isinstance(target, str) else \
        tree.loop_for(func, target, "tensorize")
    try:
        intrin = TensorIntrin.get(intrin_name)
    except ValueError as err:
        raise ScheduleError(f"tensorize: {err}") from None
    if intrin.inexact and not allow_inexact:
        raise ScheduleError(f"tensorize({intrin_name!r}): its result may differ from the "
                            f"serial loop's: {intrin.inexact}; pass allow_inexact=True to "
                            f"accept that")
    found = match(intrin_name, intrin.desc, pattern_of(intrin.desc), subtree)
    body = _instantiate(intrin_name, intrin.impl, found)
    name = unique_block_name(func, f"{found.block_name}_o")
    realize = BlockRealize((), const(True), Block((), name, body=body))
    return tree.replace(func, {subtree: realize}), name


def _instantiate(intrin_name: str, impl: PrimFunc, found: Match) -> Stmt:
    """``impl``'s body on the program's buffers: its accesses moved to the matched parts."""
    table = {id(impl.buffer_map[p]): m for p, m in zip(impl.params, found.buffers)}
    body = _MoveAccesses(table)(copy_with_fresh_binders(pattern_of(impl)))
    data = [impl.buffer_map[p].data for p in impl.params]
    if uses_any_var(body, data):
        raise ScheduleError(f"tensorize({intrin_name!r}): the implementation uses a buffer "
                            f"other than through loads and stores (its data pointer); "
                            f"tirlite moves loads and stores only")
    return body


class _MoveAccesses(StmtExprMutator):
    """Accesses of the implementation's buffers become accesses of the program's."""

    def __init__(self, table: dict):
        self.table = table
        self.views: dict[int, Buffer] = {}
        self.analyzer = Analyzer()

    def visit_buffer_load(self, op: BufferLoad) -> PrimExpr:
        return self._access(self.generic_visit(op))

    def visit_buffer_store(self, op: BufferStore) -> Stmt:
        return self._access(self.generic_visit(op))

    def _access(self, op):
        m = self.table.get(id(op.buffer))
        if m is None:
            return op
        if _within_dims(m.desc, op.indices):
            return replace(op, buffer=m.target, indices=self._indices(m, op.indices))
        # A vector load across rows (B.vload([0, 0], "int8x64") of a 16 x 4 B) is one run of
        # memory because the part is dense: address it in a flat view of the buffer.
        flat = self._flat_view(m.target)
        base = sum_of(off * stride for off, stride in zip(m.offsets, _strides(m.target.shape)))
        index = _flat_index(op.indices, _strides(m.desc.shape))
        return replace(op, buffer=flat, indices=(self._add(self.analyzer.simplify(base),
                                                           index),))

    def _flat_view(self, buf: Buffer) -> Buffer:
        if id(buf) not in self.views:
            self.views[id(buf)] = flat_view(buf)  # at the buffer's element offset too
        return self.views[id(buf)]

    def _indices(self, m, indices: tuple) -> tuple:
        lead = len(m.offsets) - len(indices)
        moved = [self._add(off, i) for off, i in zip(m.offsets[lead:], indices)]
        return tuple(m.offsets[:lead]) + tuple(moved)

    def _add(self, offset: PrimExpr, index: PrimExpr) -> PrimExpr:
        if isinstance(index, Ramp):
            return Ramp(self.analyzer.simplify(offset + index.base), index.stride, index.lanes)
        if isinstance(index, Broadcast):
            return Broadcast(self.analyzer.simplify(offset + index.value), index.lanes)
        if index.dtype == offset.dtype:
            return self.analyzer.simplify(offset + index)
        return Broadcast(offset, dt.lanes_of(index.dtype)) + index


def _strides(shape: tuple) -> list[PrimExpr]:
    """Dense strides, in elements, of a buffer of ``shape``."""
    out, step = [], const(1)
    for d in reversed(shape):
        out.append(step)
        step = step * d
    return out[::-1]


def _flat_index(indices: tuple, strides: list) -> PrimExpr:
    """One flat index for an access of a dense buffer (a vector index stays a Ramp)."""
    scalar = [i * s for i, s in zip(indices[:-1], strides[:-1])]
    last = indices[-1]
    base = Analyzer().simplify(sum_of(scalar)) if scalar else const(0)
    if isinstance(last, Ramp):
        return Ramp(Analyzer().simplify(base + last.base), last.stride, last.lanes)
    return Analyzer().simplify(base + last)


def _within_dims(buf: Buffer, indices: tuple) -> bool:
    """Whether each index of a constant access stays inside its own dimension."""
    for index, dim in zip(indices, buf.shape):
        if isinstance(index, Ramp) and isinstance(index.base, IntImm) \
                and isinstance(index.stride, IntImm):
            last = index.base.value + index.stride.value * (_lanes(index) - 1)
            if min(index.base.value, last) < 0 or max(index.base.value, last) >= dim.value:
                return False
    return True


def _lanes(ramp: Ramp) -> int:
    return ramp.lanes if isinstance(ramp.lanes, int) else ramp.lanes.value
