"""What a block reads and writes, and which blocks feed which (derived, never stored).

Blocks keep no ``reads``/``writes`` fields (see ``tir.block``): the accesses
come from the body each time, in terms of the block's iter vars.
"""

from __future__ import annotations

from typing import Any

import attrs

from ..block import Block, BlockRealize
from ..buffer import Buffer
from ..expr import BufferLoad
from ..function import PrimFunc
from ..functor import post_order_visit
from ..stmt import BufferStore
from . import tree


@attrs.frozen
class Access:
    """One load or store of a block: ``buffer[indices]`` (indices in the block's iter vars)."""

    buffer: Buffer
    indices: tuple
    is_write: bool


def block_accesses(block: Block) -> list[Access]:
    """Every load and store in ``block``'s init and body, in program order."""
    out: list[Access] = []

    def note(n: Any) -> None:
        if isinstance(n, BufferLoad):
            out.append(Access(n.buffer, n.indices, False))
        elif isinstance(n, BufferStore):
            out.append(Access(n.buffer, n.indices, True))

    if block.init is not None:
        post_order_visit(block.init, note)
    post_order_visit(block.body, note)
    return out


def reads(block: Block) -> list[Buffer]:
    """The buffers ``block`` loads from, first load first, each once."""
    return _unique(a.buffer for a in block_accesses(block) if not a.is_write)


def writes(block: Block) -> list[Buffer]:
    """The buffers ``block`` stores to, first store first, each once."""
    return _unique(a.buffer for a in block_accesses(block) if a.is_write)


def _unique(items: Any) -> list:
    seen: dict[int, Any] = {}
    for b in items:
        seen.setdefault(id(b), b)
    return list(seen.values())


def is_reduction(block: Block) -> bool:
    """A block with a reduction iter var (it combines many values into one output)."""
    return any(iv.is_reduce for iv in block.iter_vars)


def producers(func: PrimFunc, realize: BlockRealize) -> list[BlockRealize]:
    """The blocks before ``realize`` that write a buffer it reads, in program order."""
    read = {id(b) for b in reads(realize.block)}
    out = []
    for r in tree.blocks(func):
        if r is realize:
            break
        if any(id(b) in read for b in writes(r.block)):
            out.append(r)
    return out


def consumers(func: PrimFunc, realize: BlockRealize) -> list[BlockRealize]:
    """The blocks after ``realize`` that read a buffer it writes, in program order."""
    written = {id(b) for b in writes(realize.block)}
    out, after = [], False
    for r in tree.blocks(func):
        if r is realize:
            after = True
            continue
        if after and any(id(b) in written for b in reads(r.block)):
            out.append(r)
    return out


def param_buffers(func: PrimFunc) -> set[int]:
    """ids of the buffers passed in from outside (the function's ``buffer_map``)."""
    return {id(b) for b in func.buffer_map.values()}
