"""Loop kinds and annotations: ``parallel``, ``vectorize``, ``unroll``, ``annotate``.

``parallel`` and ``vectorize`` follow TVM's checks (``for_kind.cc``): the
blocks directly under the loop must each be a complete block or a reduction
block of that subtree, and every block iter var whose binding uses the loop
var must be spatial (a reduction loop cannot run its iterations at once).
``unroll`` has no check.

One difference from TVM: ``annotate`` with a key that is already there
replaces its value (TVM silently keeps the old one).
"""

from __future__ import annotations

from typing import Any

from ...analysis.var_use import uses_any_var, uses_var
from ...block import Block, BlockRealize, IterVarType
from ...expr import Var
from ...function import PrimFunc
from ...node import replace
from ...stmt import For, ForKind
from ...structural import structural_equal
from .. import analysis, tree
from ..error import fail

_KINDS = {"parallel": ForKind.PARALLEL, "vectorize": ForKind.VECTORIZED,
          "unroll": ForKind.UNROLLED}
_DONE = {"parallel": "parallelized", "vectorize": "vectorized"}


def set_kind(func: PrimFunc, loop: Var, kind: str) -> PrimFunc:
    """``func`` with ``loop`` run as ``kind``: ``"parallel"``, ``"vectorize"`` or ``"unroll"``."""
    if kind not in _KINDS:
        raise ValueError(f"set_kind: kind must be one of {', '.join(_KINDS)}, got {kind!r}")
    target = tree.loop_for(func, loop, kind)
    if kind != "unroll":
        _check_compact_dataflow(target, kind)
        _check_spatial_bindings(target, kind)
    if target.kind == _KINDS[kind]:
        return func
    return tree.replace(func, {target: replace(target, kind=_KINDS[kind])})


def _child_blocks(loop: For) -> list[BlockRealize]:
    """The block realizes under ``loop`` that no other block encloses."""
    return [s for s, above in tree.walk(loop.body)
            if isinstance(s, BlockRealize) and not any(isinstance(a, Block) for a in above)]


def _check_spatial_bindings(loop: For, kind: str) -> None:
    """Every iter var bound to an expression of the loop var is spatial (all blocks below)."""
    v = loop.loop_var
    for s, _ in tree.walk(loop.body):
        if not isinstance(s, BlockRealize):
            continue
        for iv, value in zip(s.block.iter_vars, s.iter_values):
            if iv.iter_type != IterVarType.DataPar and uses_var(value, v):
                what = "a reduction" if iv.is_reduce else f"a {iv.iter_type.name}"
                raise fail(kind, f"loop {v.name} of block {s.block.name_hint}",
                           f"iter var {iv.var.name} is {what} iter var bound to the loop "
                           f"({iv.var.name} = {value}); only loops bound to spatial iter "
                           f"vars can be {_DONE[kind]}")


def _check_compact_dataflow(loop: For, kind: str) -> None:
    """Each child block is a complete block or a reduction block within ``loop`` (TVM's rule)."""
    children = _child_blocks(loop)
    writers: dict[int, int] = {}
    for r in children:
        if _is_init_of_update(r.block, children):
            continue  # with its update it is one reduction, as before decompose_reduction
        for b in analysis.writes(r.block):
            writers[id(b)] = writers.get(id(b), 0) + 1
    for r in children:
        why_not_complete = _not_complete(r.block, writers)
        why_not_reduction = _not_reduction(r.block, writers)
        if why_not_complete and why_not_reduction:
            raise fail(kind, f"loop {loop.loop_var.name} of block {r.block.name_hint}",
                       f"the block is neither complete ({why_not_complete}) nor a reduction "
                       f"block ({why_not_reduction})")


def _not_complete(block: Block, writers: dict[int, int]) -> str:
    """Why ``block`` is not a complete block ('' if it is)."""
    if any(iv.iter_type != IterVarType.DataPar for iv in block.iter_vars):
        return "it has non-spatial iter vars"
    if any(writers[id(b)] > 1 for b in analysis.writes(block)):
        return "another block under the loop writes the same buffer"
    written = {id(b) for b in analysis.writes(block)}
    if any(id(b) in written for b in analysis.reads(block)):
        return "it reads a buffer it writes"
    return ""


def _not_reduction(block: Block, writers: dict[int, int]) -> str:
    """Why ``block`` is not a reduction block ('' if it is)."""
    if block.init is None and not _decomposed_update(block):
        return "it has no init"
    if any(iv.iter_type not in (IterVarType.DataPar, IterVarType.CommReduce)
           for iv in block.iter_vars):
        return "it has iter vars other than spatial and reduction ones"
    if any(writers[id(b)] > 1 for b in analysis.writes(block)):
        return "another block under the loop writes the same buffer"
    reduce_ids = {id(iv.var) for iv in block.iter_vars if iv.is_reduce}
    for a in analysis.block_accesses(block):
        if a.is_write and any(uses_any_var(i, reduce_ids) for i in a.indices):
            return "a reduction iter var indexes the output"
    return ""


def _is_init_of_update(block: Block, children: list[BlockRealize]) -> bool:
    """``block`` only stores one buffer that a decomposed update among ``children`` reduces."""
    written = analysis.writes(block)
    if (block.init is not None or len(written) != 1
            or any(b is written[0] for b in analysis.reads(block))
            or any(iv.iter_type != IterVarType.DataPar for iv in block.iter_vars)):
        return False
    return any(r.block is not block and r.block.init is None
               and analysis.writes(r.block) == written and _decomposed_update(r.block)
               for r in children)


def _decomposed_update(block: Block) -> bool:
    """A reduction whose init ``decompose_reduction`` moved out: reduce iter vars, and every
    read of its output at exactly the element it writes (``C[i, j] = C[i, j] + ...``).

    TVM refuses to vectorize or parallelize loops over such a block, so schedules must
    annotate before decomposing; tirlite accepts either order, as the checks that matter
    (no reduction iter var bound to the loop, one writer) still apply.
    """
    if not any(iv.is_reduce for iv in block.iter_vars):
        return False
    accesses = analysis.block_accesses(block)
    stores = [a for a in accesses if a.is_write]
    written = {id(a.buffer) for a in stores}
    for a in accesses:
        if not a.is_write and id(a.buffer) in written:
            if not any(st.buffer is a.buffer and structural_equal(tuple(st.indices),
                                                                  tuple(a.indices))
                       for st in stores):
                return False
    return True


# ------------------------------------------------------------------ annotations


def annotate(func: PrimFunc, target: str | Var, key: str, value: Any) -> PrimFunc:
    """``func`` with ``key = value`` in the annotations of block ``target`` (a name) or loop."""
    if not isinstance(key, str):
        raise TypeError(f"annotate: the key must be a str, got {type(key).__name__}")
    stmt = _annotated(func, target, "annotate")
    anns = dict(stmt.annotations)
    anns[key] = value
    return _with_annotations(func, stmt, anns)


def unannotate(func: PrimFunc, target: str | Var, key: str) -> PrimFunc:
    """``func`` without annotation ``key`` on block ``target`` (a name) or loop ``target``."""
    stmt = _annotated(func, target, "unannotate")
    if key not in stmt.annotations:
        have = ", ".join(sorted(stmt.annotations)) or "none"
        raise fail("unannotate", _describe(stmt), f"no annotation {key!r} (it has: {have})")
    anns = {k: v for k, v in stmt.annotations.items() if k != key}
    return _with_annotations(func, stmt, anns)


def _annotated(func: PrimFunc, target: str | Var, primitive: str) -> Block | For:
    if isinstance(target, str):
        return tree.find_block(func, target).block
    return tree.loop_for(func, target, primitive)


def _describe(stmt: Block | For) -> str:
    return f"block {stmt.name_hint}" if isinstance(stmt, Block) else f"loop {stmt.loop_var.name}"


def _with_annotations(func: PrimFunc, stmt: Block | For, anns: dict) -> PrimFunc:
    if isinstance(stmt, Block):
        realize = next(r for r in tree.blocks(func) if r.block is stmt)
        new_block = replace(stmt, annotations=anns)
        return tree.replace(func, {realize: replace(realize, block=new_block)})
    return tree.replace(func, {stmt: replace(stmt, annotations=anns)})
