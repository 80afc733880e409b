"""``cache_read`` and ``cache_write``: stage a buffer through a copy in another storage scope.

``cache_read`` adds a block that copies a buffer into a new buffer ``A_<scope>``
and makes the consumers read the copy; ``cache_write`` makes a block write a
new buffer ``C_<scope>`` and adds a block that copies it back into ``C``. The
copies cover the whole buffer, in loop nests of their own at the root of the
function; ``compute_at`` / ``reverse_compute_at`` then move them next to their
users, and the lowering's buffer compaction shrinks the cache to the region
used there. The cache buffer is allocated by the root block, so the lowering
can move its allocation to where it is used.

As TVM's ``cache_read_write.cc``, except that the new stage is always inserted
at the root (between the nest of the writer and the nest of the first
consumer): a writer and a consumer already fused under one loop (by
``compute_at``) are refused; cache before moving blocks.
"""

from __future__ import annotations

from typing import Any, Iterable

from ...block import Block, BlockRealize, IterVar, IterVarType
from ...buffer import Buffer, decl_buffer
from ...expr import BufferLoad, Var
from ...function import PrimFunc
from ...functor import StmtExprMutator
from ...node import replace
from ...stmt import BufferStore, For, ForKind, SeqStmt, Stmt
from .. import analysis, tree
from ..error import fail

# The storage scopes TVM knows (its CheckStorageScope); a tag after a dot is allowed.
_SCOPES = ("global", "local", "shared", "warp", "wmma", "texture", "metal")


def cache_read(func: PrimFunc, block: str, read_buffer_index: int, storage_scope: str,
               consumer_blocks: list[str] | None = None) -> tuple[PrimFunc, str]:
    """Copy the ``read_buffer_index``-th buffer ``block`` reads into ``<name>_<scope>``.

    The copy block goes right after the block writing the buffer (at the start
    of the root when the buffer is a parameter); ``consumer_blocks`` (default:
    every block reading the buffer after its writer) read the copy instead.

    Returns:
        ``(new_func, name of the new cache block)``.
    Raises:
        ScheduleError: bad index or scope, several writers, a consumer before the
        writer or fused with it.
    """
    where = f"block {block}"
    realize = tree.find_block(func, block)
    buf = _nth(indexed_reads(realize.block), read_buffer_index, "cache_read", where, "read")
    _check_scope("cache_read", storage_scope)
    writers = _writers(func, buf)
    if len(writers) > 1:
        names = ", ".join(w.block.name_hint for w in writers)
        raise fail("cache_read", where, f"buffer {buf.name} is written by {len(writers)} blocks "
                   f"({names}); cache_read needs at most one writer")
    writer = writers[0] if writers else None
    consumers = _read_consumers(func, buf, writer, consumer_blocks, where)
    if not consumers:
        raise fail("cache_read", where, f"no block reads {buf.name} after its writer "
                   f"{writer.block.name_hint if writer else ''}".rstrip())

    name = unique_block_name(func, f"{buf.name}_{storage_scope}")
    cache = decl_buffer(buf.shape, buf.dtype, name, scope=storage_scope)
    pos = 0 if writer is None else top_index(func, writer) + 1
    first = min(top_index(func, c) for c in consumers)
    if first < pos:
        raise fail("cache_read", where, f"consumer {_first_name(func, consumers)} of "
                   f"{buf.name} is in the same loop nest as its writer "
                   f"{writer.block.name_hint} (cache_read before compute_at)")
    rewritten = [(c.block, _swap_buffer(c.block, buf, cache, stores=False)) for c in consumers]
    func = tree.replace(func, rewritten)
    return insert_at_root(func, pos, copy_stage(name, buf, cache), cache), name


def cache_write(func: PrimFunc, block: str, write_buffer_index: int, storage_scope: str,
                consumer_blocks: list[str] | None = None) -> tuple[PrimFunc, str]:
    """Make ``block`` write ``<name>_<scope>`` and copy it back into the buffer right after.

    ``block`` (its init too) stores into and loads from the cache; a new block
    named like the cache copies the whole cache into the buffer, right after
    ``block``'s loop nest. ``consumer_blocks`` read the cache instead of the
    buffer; the other readers keep reading the buffer.

    Returns:
        ``(new_func, name of the new write-back block)``.
    Raises:
        ScheduleError: bad index or scope, another block writes the buffer, a
        reader fused into ``block``'s loop nest.
    """
    where = f"block {block}"
    realize = tree.find_block(func, block)
    buf = _nth(analysis.writes(realize.block), write_buffer_index, "cache_write", where, "write")
    _check_scope("cache_write", storage_scope)
    others = [w.block.name_hint for w in _writers(func, buf) if w is not realize]
    if others:
        raise fail("cache_write", where, f"buffer {buf.name} is also written by "
                   f"{', '.join(others)}; cache_write needs the only writer")
    listed = [tree.find_block(func, n) for n in consumer_blocks or []]
    for c in listed:
        if not any(b is buf for b in analysis.reads(c.block)) or c is realize:
            raise fail("cache_write", where, f"consumer block {c.block.name_hint} does not read "
                       f"{buf.name} after {block}")
    pos = top_index(func, realize) + 1
    skip = {id(realize), *(id(c) for c in listed)}
    readers = [r for r in tree.blocks(func) if id(r) not in skip
               and any(b is buf for b in analysis.reads(r.block))]
    for r in readers:
        if top_index(func, r) == pos - 1:
            raise fail("cache_write", where, f"block {r.block.name_hint} reads {buf.name} inside "
                       f"the loop nest of {block} (cache_write before compute_at)")

    name = unique_block_name(func, f"{buf.name}_{storage_scope}")
    cache = decl_buffer(buf.shape, buf.dtype, name, scope=storage_scope)
    table = [(realize.block, _swap_buffer(realize.block, buf, cache, stores=True))]
    table += [(c.block, _swap_buffer(c.block, buf, cache, stores=False)) for c in listed]
    func = tree.replace(func, table)
    return insert_at_root(func, pos, copy_stage(name, cache, buf), cache), name


# ---------------------------------------------------------------- helpers shared by primitives


def indexed_reads(block: Block) -> list[Buffer]:
    """The buffers a ``read_buffer_index`` counts, in TVM's order for te blocks.

    ``analysis.reads`` without the accumulator of a reduction: a block with an
    init that loads the buffer it initializes (``C[i, j] = C[i, j] + ...``) does
    not count ``C`` as a read, as TVM's ``create_prim_func`` leaves it out of the
    block's reads (so index 0 / 1 of a te matmul are ``A`` / ``B``).
    """
    reads = analysis.reads(block)
    if block.init is None:
        return reads
    initialized = {id(a.buffer) for a in analysis.block_accesses(
        Block([], "init", body=block.init)) if a.is_write}
    return [b for b in reads if id(b) not in initialized]


def unique_block_name(func: PrimFunc, base: str) -> str:
    """``base``, or ``base_1``, ``base_2``, ... : the first name no block of ``func`` has."""
    taken = {r.block.name_hint for r in tree.blocks(func)}
    name, n = base, 0
    while name in taken:
        n += 1
        name = f"{base}_{n}"
    return name


def root_items(func: PrimFunc) -> list[Stmt]:
    """The statements of the root block's body (its loop nests), in order."""
    body = tree.root_realize(func).block.body
    return list(body.seq) if isinstance(body, SeqStmt) else [body]


def top_index(func: PrimFunc, stmt: Stmt) -> int:
    """The position in the root body of the statement that contains ``stmt``."""
    items = root_items(func)
    outer = tree.above(func, stmt)
    for s in (*outer, stmt):
        for i, item in enumerate(items):
            if s is item:
                return i
    raise AssertionError("statement is not under the root block")


def insert_at_root(func: PrimFunc, pos: int, stmt: Stmt, alloc: Buffer | None = None
                   ) -> PrimFunc:
    """``func`` with ``stmt`` at position ``pos`` of the root body, ``alloc`` allocated there."""
    root = tree.root_realize(func)
    items = root_items(func)
    items.insert(pos, stmt)
    allocs = root.block.alloc_buffers + ((alloc,) if alloc is not None else ())
    block = replace(root.block, body=SeqStmt.flatten(*items), alloc_buffers=allocs)
    return func.with_body(replace(root, block=block))


def copy_stage(name: str, src: Buffer, dst: Buffer) -> Stmt:
    """A loop nest over ``dst``'s shape with a block ``name`` doing ``dst[v] = src[v]``."""
    loops = [Var(f"ax{d}", s.dtype) for d, s in enumerate(dst.shape)]
    ivs = [IterVar((0, s), Var(f"v{d}", s.dtype), IterVarType.DataPar)
           for d, s in enumerate(dst.shape)]
    idx = [iv.var for iv in ivs]
    body = BufferStore(dst, BufferLoad(src, idx), idx)
    stmt: Stmt = BlockRealize(loops, True, Block(ivs, name, body=body))
    for lv, s in reversed(list(zip(loops, dst.shape))):
        stmt = For(lv, 0, s, ForKind.SERIAL, stmt)
    return stmt


class _SwapBuffer(StmtExprMutator):
    """Loads (and stores, with ``stores``) of ``old`` go to ``new`` at the same indices."""

    def __init__(self, old: Buffer, new: Buffer, stores: bool):
        self.old, self.new, self.stores = old, new, stores

    def visit_buffer_load(self, e: BufferLoad) -> Any:
        e = self.generic_visit(e)
        if e.buffer is not self.old:
            return e
        return BufferLoad(self.new, e.indices, e.predicate)

    def visit_buffer_store(self, s: BufferStore) -> Any:
        s = self.generic_visit(s)
        if not self.stores or s.buffer is not self.old:
            return s
        return BufferStore(self.new, s.value, s.indices, s.predicate)


def _swap_buffer(block: Block, old: Buffer, new: Buffer, stores: bool) -> Block:
    m = _SwapBuffer(old, new, stores)
    init = None if block.init is None else m.visit_stmt(block.init)
    return replace(block, init=init, body=m.visit_stmt(block.body))


def _nth(bufs: list[Buffer], index: int, prim: str, where: str, kind: str) -> Buffer:
    if not isinstance(index, int) or not 0 <= index < len(bufs):
        names = ", ".join(b.name for b in bufs) or "none"
        raise fail(prim, where, f"{kind} buffer index {index} is out of range: the block "
                   f"{kind}s {len(bufs)} buffer(s) ({names})")
    return bufs[index]


def _check_scope(prim: str, scope: Any) -> None:
    if not isinstance(scope, str) or scope.split(".")[0] not in _SCOPES:
        raise fail(prim, f"storage scope {scope!r}", "is not a storage scope (use one of "
                   + ", ".join(repr(s) for s in _SCOPES) + ")")


def _writers(func: PrimFunc, buf: Buffer) -> list[BlockRealize]:
    return [r for r in tree.blocks(func) if any(b is buf for b in analysis.writes(r.block))]


def _read_consumers(func: PrimFunc, buf: Buffer, writer: BlockRealize | None,
                    names: Iterable[str] | None, where: str) -> list[BlockRealize]:
    """The blocks that will read the cache: those named, or every reader after ``writer``."""
    order = tree.blocks(func)
    after = order if writer is None else order[order.index(writer) + 1:]
    if names is None:
        return [r for r in after if any(b is buf for b in analysis.reads(r.block))]
    out = []
    for n in names:
        r = tree.find_block(func, n)
        if r is writer:
            raise fail("cache_read", where, f"block {n} writes {buf.name}; it cannot read the "
                       "cache of its own output")
        if not any(b is buf for b in analysis.reads(r.block)):
            raise fail("cache_read", where, f"consumer block {n} does not read {buf.name}")
        out.append(r)
    return out


def _first_name(func: PrimFunc, realizes: list[BlockRealize]) -> str:
    return min(realizes, key=lambda r: top_index(func, r)).block.name_hint
