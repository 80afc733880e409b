"""``compute_inline`` and ``reverse_compute_inline``: fold a stage into its neighbour.

``compute_inline(func, "B")`` replaces every load ``B[idx]`` by the value the
block ``B[v...] = expr`` stores, with its iter vars bound to ``idx``, then
deletes the block, its loops and the buffer. ``reverse_compute_inline(func,
"C")`` folds a consumer ``C[f(v)] = g(B[v...])`` into the single producer of
``B``: the producer stores ``C[f(idx)] = g(value)`` directly.

The conditions follow TVM's ``compute_inline.cc`` (with tirlite's narrower
body patterns: indices must be the iter vars themselves, TVM also inverts
bijective affine maps).
"""

from __future__ import annotations

from typing import Callable

from ... import op
from ...arith import Analyzer
from ...block import BlockRealize
from ...buffer import Buffer
from ...expr import BufferLoad, PrimExpr, Var
from ...function import PrimFunc
from ...functor import StmtExprMutator, post_order_visit, substitute
from ...node import replace
from ...range import Range
from ...stmt import BufferStore, IfThenElse, Stmt
from ...structural import structural_equal
from .. import analysis, tree
from ..error import ScheduleError, fail
from .compute_location import removal_root


def compute_inline(func: PrimFunc, block: str) -> PrimFunc:
    """Substitute the value block ``block`` stores into every load of its buffer; remove it.

    The block must be spatial, without init or predicate, its body one store
    ``B[v0, v1, ...] = expr`` at distinct iter vars, into a buffer the
    function allocates and only this block writes.
    """
    realize = tree.find_block(func, block)

    def err(rule: str) -> ScheduleError:
        return fail("compute_inline", f"block {block}", rule)

    store = _single_store(realize, err)
    buf = store.buffer
    _check_inlinable_producer(func, realize, buf, err)
    index_of = _iter_positions(realize, store.indices, err)
    _check_no_opaque_use(func, buf, err)
    _check_reads_stable(func, realize, buf, err)
    params = [iv.var for iv in realize.block.iter_vars]

    def inline(load: BufferLoad) -> PrimExpr:
        vmap = {v: load.indices[index_of[id(v)]] for v in params if id(v) in index_of}
        unit = [iv for iv in realize.block.iter_vars if id(iv.var) not in index_of]
        vmap.update({iv.var: iv.min for iv in unit})
        return substitute(store.value, vmap)

    out = tree.replace(func, [(removal_root_checked(func, realize, err), None)])
    out = out.with_body(_LoadReplacer(buf, inline)(out.body))
    return _drop_alloc(out, buf)


def reverse_compute_inline(func: PrimFunc, block: str) -> PrimFunc:
    """Fold consumer ``block`` into the single producer of the one buffer it reads; remove it.

    The consumer must be spatial, without init or predicate, its body one store
    ``C[...] = g(B[v...])`` whose loads of ``B`` are all at the same distinct
    iter vars; ``B`` must be allocated by the function, written by one spatial
    block whose body is ``B[idx] = value`` (possibly under an ``if``), and read
    by this block only.
    """
    realize = tree.find_block(func, block)

    def err(rule: str) -> ScheduleError:
        return fail("reverse_compute_inline", f"block {block}", rule)

    cblock = realize.block
    store = _single_store(realize, err)
    if not op.is_const_int(realize.predicate, 1):
        raise err(f"the block has the predicate {realize.predicate}: only a block without "
                  "one can be inlined")
    buf = _single_read(func, realize, err)
    _check_complete(func, realize, err)
    producer = _single_producer(func, realize, buf, err)
    _check_sole_consumer(func, realize, producer, buf, err)
    if id(buf) in analysis.param_buffers(func):
        raise err(f"its producer {producer.block.name_hint} writes {buf.name}, a parameter of "
                  "the function (an output block): only an allocated buffer can disappear")
    _check_no_opaque_use(func, buf, err)
    pstore, pcond = _producer_store(producer, err)
    load_indices = _consumer_load_indices(store, buf, err)
    vmap = _consumer_to_producer(realize, load_indices, pstore.indices, err)
    _check_covered(producer, realize, vmap, err)
    _check_moves_safely(func, producer, realize, err)

    def take_value(load: BufferLoad) -> PrimExpr:
        return pstore.value

    folded = _LoadReplacer(buf, take_value)(substitute(store, vmap))
    guard = _in_bound_guard(producer, cblock, vmap, pcond)
    body: Stmt = folded if guard is None else IfThenElse(guard, folded)
    new_producer = replace(producer, block=replace(producer.block, body=body))
    out = tree.replace(func, [(removal_root_checked(func, realize, err), None),
                              (producer, new_producer)])
    return _drop_alloc(out, buf)


# ---------------------------------------------------------------- shared pieces


class _LoadReplacer(StmtExprMutator):
    """Every load of ``buffer`` replaced by ``fn(load)`` (its indices already rewritten)."""

    def __init__(self, buffer: Buffer, fn: Callable[[BufferLoad], PrimExpr]):
        self.buffer, self.fn = buffer, fn

    def visit_buffer_load(self, load: BufferLoad) -> PrimExpr:
        load = self.generic_visit(load)
        return self.fn(load) if load.buffer is self.buffer else load


def _single_store(realize: BlockRealize, err: Callable) -> BufferStore:
    block = realize.block
    if block.init is not None:
        raise err("the block has an init statement (a reduction): it cannot be inlined")
    if not isinstance(block.body, BufferStore):
        raise err("the body of the block must be a single store 'B[v0, v1, ...] = expr'")
    return block.body


def removal_root_checked(func: PrimFunc, realize: BlockRealize, err: Callable) -> Stmt:
    """The statement to delete with the block; the only stage of a function cannot go."""
    root = removal_root(func, realize)
    if tree.parent(func, root) is tree.root_realize(func).block:
        raise err("the block is the only leaf in its scope: removing it leaves nothing")
    return root


def _drop_alloc(func: PrimFunc, buf: Buffer) -> PrimFunc:
    """``func`` without ``buf`` among the root block's allocations."""
    root = tree.root_realize(func)
    allocs = tuple(b for b in root.block.alloc_buffers if b is not buf)
    if len(allocs) == len(root.block.alloc_buffers):
        return func
    return func.with_body(replace(root, block=replace(root.block, alloc_buffers=allocs)))


def _check_complete(func: PrimFunc, realize: BlockRealize, err: Callable,
                    who: str = "the block") -> None:
    """Spatial iter vars only, the only writer of its outputs, not reading them."""
    block = realize.block
    if analysis.is_reduction(block):
        raise err(f"{who} ({block.name_hint}) has reduce iter vars: it is not a complete block")
    written = analysis.writes(block)
    read = {id(b) for b in analysis.reads(block)}
    for b in written:
        if id(b) in read:
            raise err(f"{who} ({block.name_hint}) reads {b.name}, which it writes: it is not a "
                      "complete block")
    for other in tree.blocks(func):
        if other is not realize and any(b is w for b in analysis.writes(other.block)
                                        for w in written):
            raise err(f"block {other.block.name_hint} also writes what {who} "
                      f"({block.name_hint}) writes: it is not a complete block")


def _check_no_opaque_use(func: PrimFunc, buf: Buffer, err: Callable) -> None:
    """``buf.data`` used as a value (a call argument) would escape the rewrite."""
    found: list = []
    post_order_visit(func.body, lambda n: found.append(n) if n is buf.data else None)
    if found:
        raise err(f"{buf.name} is accessed opaquely (its data pointer {buf.data.name} is used "
                  "directly)")


# ---------------------------------------------------------------- compute_inline


def _check_inlinable_producer(func: PrimFunc, realize: BlockRealize, buf: Buffer,
                              err: Callable) -> None:
    if not op.is_const_int(realize.predicate, 1):
        raise err(f"the block has the predicate {realize.predicate}: only a block without one "
                  "can be inlined")
    if id(buf) in analysis.param_buffers(func):
        raise err(f"the block writes {buf.name}, a parameter of the function (an output "
                  "block): only a buffer the function allocates can be inlined")
    if len(analysis.writes(realize.block)) != 1:
        raise err("the block must write a single buffer")
    _check_complete(func, realize, err)


def _iter_positions(realize: BlockRealize, indices: tuple, err: Callable) -> dict[int, int]:
    """For each iter var used as a store index, its position; every index an iter var."""
    ivs = realize.block.iter_vars
    ids = {id(iv.var): iv for iv in ivs}
    out: dict[int, int] = {}
    for pos, e in enumerate(indices):
        if isinstance(e, Var) and id(e) in ids and id(e) not in out:
            out[id(e)] = pos
            continue
        raise err("the store indices must be distinct iter vars of the block "
                  f"('B[v0, v1, ...] = expr'), got index {e}")
    for iv in ivs:
        if id(iv.var) not in out and not op.is_const_int(iv.extent, 1):
            raise err(f"the iter var {iv.var.name} is not a store index: the store would be "
                      "repeated over it")
    return out


def _check_reads_stable(func: PrimFunc, realize: BlockRealize, buf: Buffer, err: Callable) -> None:
    """No block between the producer and its last consumer writes what the producer reads."""
    blocks = tree.blocks(func)
    at = blocks.index(realize)
    last = max((i for i, r in enumerate(blocks)
                if any(b is buf for b in analysis.reads(r.block))), default=at)
    reads = {id(b) for b in analysis.reads(realize.block)}
    for other in blocks[at + 1:last]:
        for b in analysis.writes(other.block):
            if id(b) in reads:
                raise err(f"block {other.block.name_hint} writes {b.name}, which the block "
                          "reads, before a consumer: the inlined value would change")


# ---------------------------------------------------------------- reverse_compute_inline


def _single_read(func: PrimFunc, realize: BlockRealize, err: Callable) -> Buffer:
    """The one buffer the block reads that some block of the function writes."""
    written = {id(b) for r in tree.blocks(func) for b in analysis.writes(r.block)}
    found = [b for b in analysis.reads(realize.block) if id(b) in written]
    if len(found) != 1:
        names = ", ".join(b.name for b in found) or "none"
        raise err(f"the block must read exactly one buffer produced in the function "
                  f"(it reads {names})")
    return found[0]


def _single_producer(func: PrimFunc, realize: BlockRealize, buf: Buffer, err: Callable
                     ) -> BlockRealize:
    writers = [r for r in tree.blocks(func) if any(b is buf for b in analysis.writes(r.block))]
    if len(writers) != 1:
        raise err(f"{buf.name} must have a single producer block, it has {len(writers)}")
    producer = writers[0]
    _check_complete(func, producer, err, who="the producer")
    return producer


def _check_sole_consumer(func: PrimFunc, realize: BlockRealize, producer: BlockRealize,
                         buf: Buffer, err: Callable) -> None:
    for other in tree.blocks(func):
        if other is realize or other is producer:
            continue
        if any(b is buf for b in analysis.reads(other.block)):
            raise err(f"block {other.block.name_hint} reads {buf.name} too: the block must be "
                      f"the only consumer of its producer {producer.block.name_hint}")


def _producer_store(producer: BlockRealize, err: Callable) -> tuple[BufferStore, PrimExpr | None]:
    body = producer.block.body
    cond = None
    if isinstance(body, IfThenElse) and body.else_case is None:
        cond, body = body.condition, body.then_case
    if not isinstance(body, BufferStore):
        raise err(f"the body of the producer {producer.block.name_hint} must be a single store "
                  "(under at most one 'if' without else)")
    return body, cond


def _consumer_load_indices(store: BufferStore, buf: Buffer, err: Callable) -> tuple:
    loads: list[BufferLoad] = []
    post_order_visit(store, lambda n: loads.append(n) if isinstance(n, BufferLoad)
                     and n.buffer is buf else None)
    first = loads[0].indices
    for load in loads[1:]:
        if len(load.indices) != len(first) or not all(
                structural_equal(a, b) for a, b in zip(first, load.indices)):
            raise err(f"every load of {buf.name} must use the same indices")
    return first


def _consumer_to_producer(realize: BlockRealize, load_indices: tuple, producer_indices: tuple,
                          err: Callable) -> dict:
    """The consumer's iter vars in the producer's: the var at load position d is index d."""
    ivs = {id(iv.var): iv for iv in realize.block.iter_vars}
    vmap: dict = {}
    for e, target in zip(load_indices, producer_indices):
        if not (isinstance(e, Var) and id(e) in ivs) or e in vmap:
            raise err(f"the load indices must be distinct iter vars of the block, got {e}")
        vmap[e] = target
    for iv in realize.block.iter_vars:
        if iv.var in vmap:
            continue
        if not op.is_const_int(iv.extent, 1):
            raise err(f"the iter var {iv.var.name} is not a load index: the producer cannot "
                      "cover it")
        vmap[iv.var] = iv.min
    return vmap


def _producer_analyzer(producer: BlockRealize) -> Analyzer:
    ana = Analyzer()
    for iv in producer.block.iter_vars:
        ana.bind(iv.var, Range.from_min_extent(iv.min, iv.extent))
    return ana


def _check_covered(producer: BlockRealize, realize: BlockRealize, vmap: dict,
                   err: Callable) -> None:
    """The producer's instances reach every point of the consumer's iter domains."""
    ana = _producer_analyzer(producer)
    doms = {iv.var: iv.dom for iv in producer.block.iter_vars}
    for iv in realize.block.iter_vars:
        got = ana.int_set(vmap[iv.var], doms)
        if (ana.can_prove(got.min_value > iv.min)
                or ana.can_prove(got.max_value < iv.min + iv.extent - 1)):
            raise err(f"the producer {producer.block.name_hint} does not cover the domain of "
                      f"{iv.var.name}")


def _in_bound_guard(producer: BlockRealize, consumer_block, vmap: dict,
                    pcond: PrimExpr | None) -> PrimExpr | None:
    """The consumer's iter-domain bounds in the producer's vars (None when always true)."""
    ana = _producer_analyzer(producer)
    conds = []
    for iv in consumer_block.iter_vars:
        v = vmap[iv.var]
        conds += [v >= iv.min, v < iv.min + iv.extent]
    guard = ana.simplify(op.all(*conds))
    if pcond is not None:
        guard = pcond if op.is_const_int(guard, 1) else ana.simplify(op.logical_and(guard, pcond))
    return None if op.is_const_int(guard, 1) else guard


def _check_moves_safely(func: PrimFunc, producer: BlockRealize, realize: BlockRealize,
                        err: Callable) -> None:
    """The consumer's store moves up to the producer: nothing in between may touch its output."""
    blocks = tree.blocks(func)
    lo, hi = blocks.index(producer), blocks.index(realize)
    if lo > hi:
        raise err(f"the producer {producer.block.name_hint} comes after the block")
    written = {id(b) for b in analysis.writes(realize.block)}
    for other in blocks[lo + 1:hi]:
        for acc in analysis.block_accesses(other.block):
            if id(acc.buffer) in written:
                raise err(f"block {other.block.name_hint} accesses {acc.buffer.name}, which the "
                          "block writes, between the producer and the block")
