"""What kind of stage a block is, and the axes a rule would tile: the analysis the rules act on.

Deciding lives here, rewriting in ``rules/``. A block is one of:

- ``inline``: a spatial block that writes an intermediate buffer with one
  store whose indices are exactly its iter vars, read by later blocks of the
  function: its value can be substituted into its readers (``compute_inline``);
- ``contraction``: a reduction whose update is ``C[s] = C[s] + X * Y`` (casts
  allowed) with at least two spatial axes: matmul- and conv-like stages,
  tiled for registers;
- ``reduction``: any other reduction (rows of softmax, layernorm, sums);
- ``elementwise``: any other spatial block.

Each kind comes with the reason a rule may still leave a block as written
(``BlockKind.why_not``), which becomes the remark the user reads.
"""

from __future__ import annotations

from typing import Any

import attrs

from tir.analysis.var_use import uses_var
from tir.block import BlockRealize
from tir.expr import Add, BufferLoad, Cast, Mul, Var
from tir.function import PrimFunc
from tir.schedule import analysis, tree
from tir.schedule.primitives.cache import indexed_reads
from tir.stmt import BufferStore


@attrs.frozen
class Contraction:
    """The axes of a contraction, as positions in the block's iter vars (= its loops)."""

    spatial: tuple[int, ...]
    reduce: tuple[int, ...]
    vec: int           # the spatial axis that is the output's last (contiguous) index
    row: int           # a spatial axis the operand along ``vec`` does not use (register reuse)
    pack_read: int | None  # ``cache_read``'s index of the operand along ``vec``, to pack
    # where ``vec``'s index sits in that operand when it is not the last (``B[j, k]`` of
    # ``A @ B.T``): packing is then required, not a choice, to read it contiguously
    vec_dim: int | None = None


@attrs.frozen
class BlockKind:
    """The kind of a block and what a rule needs to schedule it."""

    name: str
    kind: str  # "inline" | "contraction" | "reduction" | "elementwise"
    extents: tuple[int, ...]  # constant extents of the iter vars, in order
    contraction: Contraction | None = None
    why_not: str | None = None  # set when no rule can schedule the block


def classify(func: PrimFunc, realize: BlockRealize) -> BlockKind:
    """The kind of the block ``realize`` of ``func`` (as ``te.create_prim_func`` left it)."""
    block = realize.block
    name = block.name_hint
    extents = _const_extents(realize)
    if extents is None:
        return BlockKind(name, "elementwise", (), why_not="its loops do not have constant extents")
    if not _trivially_bound(func, realize):
        return BlockKind(name, "elementwise", extents,
                         why_not="it is already scheduled (its iter vars are not bound to "
                                 "one loop each)")
    if analysis.is_reduction(block):
        info = _contraction(realize)
        if isinstance(info, Contraction):
            return BlockKind(name, "contraction", extents, contraction=info)
        return BlockKind(name, "reduction", extents, why_not=None)
    if _inlinable(func, realize):
        return BlockKind(name, "inline", extents)
    return BlockKind(name, "elementwise", extents)


def _const_extents(realize: BlockRealize) -> tuple[int, ...] | None:
    out = []
    for iv in realize.block.iter_vars:
        value = getattr(iv.extent, "value", None)
        if not isinstance(value, int) or getattr(iv.min, "value", None) != 0:
            return None
        out.append(value)
    return tuple(out)


def _trivially_bound(func: PrimFunc, realize: BlockRealize) -> bool:
    """Each iter var bound to its own loop, the loops nested in iter var order."""
    loops = tree.loops_above(func, realize)
    if len(loops) != len(realize.iter_values):
        return False
    return all(isinstance(v, Var) and v is f.loop_var
               for v, f in zip(realize.iter_values, loops))


def _store(block: Any) -> BufferStore | None:
    return block.body if isinstance(block.body, BufferStore) else None


def _inlinable(func: PrimFunc, realize: BlockRealize) -> bool:
    block = realize.block
    store = _store(block)
    if store is None or id(store.buffer) in analysis.param_buffers(func):
        return False
    if [id(i) for i in store.indices] != [id(iv.var) for iv in block.iter_vars]:
        return False
    return bool(analysis.consumers(func, realize))


def _transposed(block: Any, weight: BufferLoad, vec_var: Var, spatial: tuple, reduce: tuple,
                vec: int) -> Contraction | str:
    """``B[j, k]`` along the output's last axis ``j`` (``A @ B.T``): a contraction when
    packing ``B`` into panels makes ``j`` contiguous (every index a plain iter var)."""
    ivs = block.iter_vars
    dims = [d for d, i in enumerate(weight.indices) if i is vec_var]
    if len(dims) != 1 or not all(isinstance(i, Var) for i in weight.indices):
        return "the operands do not read the output's last axis contiguously"
    rows = [k for k in spatial if k != vec and not uses_var(weight.indices, ivs[k].var)]
    if not rows:
        return "no spatial axis reuses the operand in registers"
    pack = next(i for i, b in enumerate(indexed_reads(block)) if b is weight.buffer)
    return Contraction(spatial, reduce, vec, rows[-1], pack, dims[0])


def _strip_cast(e: Any) -> Any:
    return e.value if isinstance(e, Cast) else e


def _contraction(realize: BlockRealize) -> Contraction | str:
    """The contraction axes of a reduction block, or why it is not one."""
    block = realize.block
    store = _store(block)
    if store is None or not isinstance(store.value, Add):
        return "its update is not a sum"
    acc, term = store.value.a, _strip_cast(store.value.b)
    if not (isinstance(acc, BufferLoad) and acc.buffer is store.buffer and isinstance(term, Mul)):
        return "its update is not C = C + X * Y"
    x, y = _strip_cast(term.a), _strip_cast(term.b)
    if not (isinstance(x, BufferLoad) and isinstance(y, BufferLoad)):
        return "the product's factors are not loads"
    ivs = block.iter_vars
    spatial = tuple(k for k, iv in enumerate(ivs) if not iv.is_reduce)
    reduce = tuple(k for k, iv in enumerate(ivs) if iv.is_reduce)
    if len(spatial) < 2 or not store.indices or not isinstance(store.indices[-1], Var):
        return "it has fewer than two spatial axes or a computed output index"
    vec = next((k for k in spatial if ivs[k].var is store.indices[-1]), None)
    if vec is None:
        return "the output's last index is not a spatial axis"
    vec_var = ivs[vec].var
    along = [ld for ld in (x, y) if uses_var(ld.indices, vec_var)]
    if len(along) != 1:
        return "the operands do not read the output's last axis contiguously"
    weight = along[0]
    if weight.indices[-1] is not vec_var:
        return _transposed(block, weight, vec_var, spatial, reduce, vec)
    rows = [k for k in spatial if k != vec and not uses_var(weight.indices, ivs[k].var)]
    if not rows:
        return "no spatial axis reuses the operand in registers"
    pack = None
    if ivs[vec].extent.value > 64 and all(isinstance(i, Var) for i in weight.indices):
        reads = indexed_reads(block)
        pack = next(i for i, b in enumerate(reads) if b is weight.buffer)
    return Contraction(spatial, reduce, vec, rows[-1], pack)

