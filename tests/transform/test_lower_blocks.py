"""Lowering blocks to plain loops: LowerInitBlock, PlanAndUpdateBufferAllocationLocation,
CompactBufferAllocation, LowerOpaqueBlock (Before/After), then built and run end to end."""

import numpy as np
import pytest

import codegen
import tir
import transform
from codegen.interp.backend import build_interpreter
from tir import BufferStore, For, ForKind, IfThenElse, SeqStmt, Var
from tir.block import Block, BlockRealize, IterVar, IterVarType
from tir.stmt import Allocate
from transform.lower_blocks import lower_blocks_passes

SERIAL, VECTORIZED = ForKind.SERIAL, ForKind.VECTORIZED
REDUCE = IterVarType.CommReduce


def loop(var, extent, body, kind=SERIAL):
    return For(var, 0, extent, kind, body)


def root(body, alloc=()):
    return BlockRealize([], True, Block([], "root", alloc_buffers=alloc, body=body))


def run_pass(p, func):
    return p(tir.IRModule.from_expr(func))["main"]


def lower_all(func):
    for p in lower_blocks_passes():
        func = run_pass(p, func)
    return func


def buffers(*specs):
    return [tir.decl_buffer(shape, "float32", name) for name, shape in specs]


# ---------------------------------------------------------------- the programs


def matmul(M=8, N=12, K=16):
    """C = A @ B as one reduction block with an init."""
    A, B, C = buffers(("A", (M, K)), ("B", (K, N)), ("C", (M, N)))
    i, j, k = Var("i"), Var("j"), Var("k")
    vi, vj, vk = Var("vi"), Var("vj"), Var("vk")
    block = Block([IterVar(M, vi), IterVar(N, vj), IterVar(K, vk, REDUCE)], "C",
                  init=BufferStore(C, tir.const(0.0), [vi, vj]),
                  body=BufferStore(C, C[vi, vj] + A[vi, vk] * B[vk, vj], [vi, vj]))
    body = loop(i, M, loop(j, N, loop(k, K, BlockRealize([i, j, k], True, block))))
    return tir.PrimFunc([A, B, C], root(body)), (A, B, C), block


def two_stage(M=6, N=10, fused=False):
    """T = A * 2 (intermediate in the root block), C = T + 1; ``fused``: both under one i loop."""
    A, C = buffers(("A", (M, N)), ("C", (M, N)))
    (T,) = buffers(("T", (M, N)))
    i1, j1, i2, j2 = Var("i"), Var("j"), Var("i"), Var("j")
    ti, tj, ci, cj = Var("vi"), Var("vj"), Var("vi"), Var("vj")
    produce = Block([IterVar(M, ti), IterVar(N, tj)], "T",
                    body=BufferStore(T, A[ti, tj] * 2.0, [ti, tj]))
    consume = Block([IterVar(M, ci), IterVar(N, cj)], "C",
                    body=BufferStore(C, T[ci, cj] + 1.0, [ci, cj]))
    if fused:  # compute_at-like: T's row i is made right before C's row i
        stages = SeqStmt([loop(j1, N, BlockRealize([i1, j1], True, produce)),
                          loop(j2, N, BlockRealize([i1, j2], True, consume))])
        body = loop(i1, M, stages)
    else:
        body = SeqStmt([loop(i1, M, loop(j1, N, BlockRealize([i1, j1], True, produce))),
                        loop(i2, M, loop(j2, N, BlockRealize([i2, j2], True, consume)))])
    return tir.PrimFunc([A, C], root(body, [T])), (A, C, T)


def cached_matmul(M=8, N=8, K=16, t=4):
    """matmul with cache_write(C, "local"): a C_local tile per (io, jo) written back to C."""
    A, B, C = buffers(("A", (M, K)), ("B", (K, N)), ("C", (M, N)))
    L = tir.decl_buffer((M, N), "float32", "C_local", scope="local")
    io, jo, ii, ji, k, ii2, ji2 = (Var(n) for n in ("io", "jo", "ii", "ji", "k", "ii", "ji"))
    vi, vj, vk, wi, wj = (Var(n) for n in ("vi", "vj", "vk", "vi", "vj"))
    update = Block([IterVar(M, vi), IterVar(N, vj), IterVar(K, vk, REDUCE)], "C_local",
                   init=BufferStore(L, tir.const(0.0), [vi, vj]),
                   body=BufferStore(L, L[vi, vj] + A[vi, vk] * B[vk, vj], [vi, vj]))
    write_back = Block([IterVar(M, wi), IterVar(N, wj)], "C",
                       body=BufferStore(C, L[wi, wj], [wi, wj]))
    compute = loop(ii, t, loop(ji, t, loop(k, K, BlockRealize(
        [io * t + ii, jo * t + ji, k], True, update))))
    store = loop(ii2, t, loop(ji2, t, BlockRealize([io * t + ii2, jo * t + ji2], True, write_back)))
    body = loop(io, M // t, loop(jo, N // t, SeqStmt([compute, store])))
    return tir.PrimFunc([A, B, C], root(body, [L])), (A, B, C, L)


def guarded(n=10, t=4, kind=VECTORIZED, staged=False):
    """B = A * 2 + 1 over a split loop, ``io * t + ii < n`` as the block predicate.

    ``staged``: through an intermediate T made and used under each ``io``.
    """
    A, B = buffers(("A", (n,)), ("B", (n,)))
    (T,) = buffers(("T", (n,)))
    io, ii, ii2 = Var("io"), Var("ii"), Var("ii")
    v, w = Var("v"), Var("w")
    outer = (n + t - 1) // t
    if not staged:
        block = Block([IterVar(n, v)], "B", body=BufferStore(B, A[v] * 2.0 + 1.0, [v]))
        body = loop(io, outer, loop(ii, t, BlockRealize([io * t + ii], io * t + ii < n, block),
                                    kind))
        return tir.PrimFunc([A, B], root(body)), (A, B)
    make = Block([IterVar(n, v)], "T", body=BufferStore(T, A[v] * 2.0, [v]))
    use = Block([IterVar(n, w)], "B", body=BufferStore(B, T[w] + 1.0, [w]))
    body = loop(io, outer, SeqStmt([
        loop(ii, t, BlockRealize([io * t + ii], io * t + ii < n, make), kind),
        loop(ii2, t, BlockRealize([io * t + ii2], io * t + ii2 < n, use), kind)]))
    return tir.PrimFunc([A, B], root(body, [T])), (A, B, T)


# ---------------------------------------------------------------- LowerInitBlock


def test_lower_init_block_guards_the_init_by_the_reduce_var():
    func, (A, B, C), block = matmul()
    after = run_pass(transform.LowerInitBlock(), func)
    vi, vj, vk = (iv.var for iv in block.iter_vars)
    i_loop = func.body.block.body
    j_loop = i_loop.body
    k_loop = j_loop.body
    i, j, k = i_loop.loop_var, j_loop.loop_var, k_loop.loop_var
    expected_block = Block(block.iter_vars, "C", body=SeqStmt([
        IfThenElse(tir.op.equal(vk, 0), BufferStore(C, tir.const(0.0), [vi, vj])),
        block.body]))
    expected = root(loop(i, 8, loop(j, 12, loop(k, 16, BlockRealize([i, j, k], True,
                                                                     expected_block)))))
    tir.assert_structural_equal(after.body, expected)


def test_lower_init_block_with_two_reduce_vars_and_a_nonzero_min():
    (C,) = buffers(("C", (4,)))
    (A,) = buffers(("A", (4, 3, 5)))
    vi, vk, vl = Var("vi"), Var("vk"), Var("vl")
    init = BufferStore(C, tir.const(0.0), [vi])
    block = Block([IterVar(4, vi), IterVar((1, 3), vk, REDUCE), IterVar(5, vl, REDUCE)], "C",
                  init=init, body=BufferStore(C, C[vi] + A[vi, vk, vl], [vi]))
    i, k, l_ = Var("i"), Var("k"), Var("l")
    body = loop(i, 4, For(k, 1, 2, SERIAL, loop(l_, 5, BlockRealize([i, k, l_], True, block))))
    after = run_pass(transform.LowerInitBlock(), tir.PrimFunc([A, C], root(body)))
    lowered = after.body.block.body.body.body.body.block
    cond = tir.op.logical_and(tir.op.equal(vk, 1), tir.op.equal(vl, 0))
    expected = SeqStmt([IfThenElse(cond, init), block.body])
    tir.assert_structural_equal(lowered.body, expected, map_free_vars=True)
    assert lowered.init is None


def test_functions_without_blocks_come_back_unchanged():
    A = tir.decl_buffer((8,), "float32", "A")
    i = Var("i")
    func = tir.PrimFunc([A], loop(i, 8, BufferStore(A, A[i] + 1.0, [i])))
    mod = tir.IRModule.from_expr(func)
    for p in lower_blocks_passes():
        assert p(mod) is mod


# ---------------------------------------------------------------- PlanAndUpdate...Location


def test_plan_keeps_an_intermediate_used_by_two_loop_nests_in_the_root():
    func, _ = two_stage()
    after = run_pass(transform.PlanAndUpdateBufferAllocationLocation(), func)
    assert after is func or tir.structural_equal(after, func)


def test_plan_moves_an_intermediate_under_the_loop_holding_its_uses():
    func, (A, C, T) = two_stage(fused=True)
    after = run_pass(transform.PlanAndUpdateBufferAllocationLocation(), func)
    outer = func.body.block.body
    holder = Block([], "alloc", alloc_buffers=[T], body=outer.body)
    expected = BlockRealize([], True, Block([], "root", body=tir.node.replace(
        outer, body=BlockRealize([], True, holder))))
    tir.assert_structural_equal(after.body, expected)


def test_plan_keeps_a_reduction_accumulator_above_the_reduced_loop():
    # C_local is used by the reduction block only: it must outlive the k loop.
    func, _, block = matmul()
    local = tir.decl_buffer((8, 12), "float32", "acc")
    vi, vj, vk = (iv.var for iv in block.iter_vars)
    acc_block = tir.node.replace(
        block, init=BufferStore(local, tir.const(0.0), [vi, vj]),
        body=BufferStore(local, local[vi, vj] + 1.0, [vi, vj]))
    i = func.body.block.body
    body = tir.node.replace(i, body=tir.node.replace(i.body, body=tir.node.replace(
        i.body.body, body=BlockRealize(i.body.body.body.iter_values, True, acc_block))))
    func = tir.PrimFunc(func.params, root(body, [local]), buffer_map=func.buffer_map)
    after = run_pass(transform.PlanAndUpdateBufferAllocationLocation(), func)
    j_loop = after.body.block.body.body
    assert isinstance(j_loop.body, BlockRealize) and j_loop.body.block.alloc_buffers == (local,)
    assert isinstance(j_loop.body.block.body, For)  # the k loop runs inside the allocation


# ---------------------------------------------------------------- CompactBufferAllocation


def test_compact_shrinks_a_row_intermediate_and_rebases_its_indices():
    func, (A, C, T) = two_stage(fused=True)
    planned = run_pass(transform.PlanAndUpdateBufferAllocationLocation(), func)
    after = run_pass(transform.CompactBufferAllocation(), planned)
    i = func.body.block.body.loop_var
    row = tir.decl_buffer((1, 10), "float32", "T")
    produce_loop, consume_loop = func.body.block.body.body.seq
    p_block, c_block = produce_loop.body.block, consume_loop.body.block
    ti, tj = (iv.var for iv in p_block.iter_vars)
    ci, cj = (iv.var for iv in c_block.iter_vars)
    new_p = tir.node.replace(p_block, body=BufferStore(row, A[ti, tj] * 2.0, [ti - i, tj]))
    new_c = tir.node.replace(c_block, body=BufferStore(C, row[ci - i, cj] + 1.0, [ci, cj]))
    stages = SeqStmt([
        tir.node.replace(produce_loop, body=tir.node.replace(produce_loop.body, block=new_p)),
        tir.node.replace(consume_loop, body=tir.node.replace(consume_loop.body, block=new_c))])
    holder = Block([], "alloc", alloc_buffers=[row], body=stages)
    expected = root(loop(i, 6, BlockRealize([], True, holder)))
    tir.assert_structural_equal(after.body, expected)


def test_compact_leaves_a_buffer_used_whole_alone():
    func, _ = two_stage()
    planned = run_pass(transform.PlanAndUpdateBufferAllocationLocation(), func)
    assert run_pass(transform.CompactBufferAllocation(), planned) is planned


def test_compact_cache_write_tile_becomes_a_small_allocation_inside_the_tile_loop():
    func, (A, B, C, L) = cached_matmul()
    lowered = lower_all(func)
    jo_loop = lowered.body.body  # io -> jo -> Allocate
    alloc = jo_loop.body
    assert isinstance(alloc, Allocate) and alloc.buffer_var is L.data
    assert [e.value for e in alloc.extents] == [4, 4]
    compute, store = alloc.body.seq
    ii, ji = compute.loop_var, compute.body.loop_var
    update = compute.body.body.body.seq[1]  # after `if k == 0: init`
    assert [e.value for e in update.buffer.shape] == [4, 4]
    ana = tir.arith.Analyzer()
    assert [ana.simplify(x) for x in update.indices] == [ii, ji]  # rebased to the tile
    assert store.body.body.value.buffer is update.buffer


def test_compact_uses_the_guard_and_never_indexes_out_of_the_tile():
    func, (A, B, T) = guarded(staged=True, kind=SERIAL)
    lowered = lower_all(func)
    alloc = lowered.body.body
    assert isinstance(alloc, Allocate) and [e.value for e in alloc.extents] == [4]
    # The interpreter raises IndexError on any access outside the 4-element tile.
    a = np.arange(10, dtype="float32")
    b = np.zeros(10, "float32")
    build_interpreter(lowered)(a, b)
    np.testing.assert_allclose(b, a * 2 + 1)


# ---------------------------------------------------------------- LowerOpaqueBlock


def test_lower_opaque_block_substitutes_iter_vars_and_guards_the_predicate():
    func, (A, B) = guarded(kind=SERIAL)
    after = run_pass(transform.LowerOpaqueBlock(), func)
    outer = func.body.block.body
    io, ii = outer.loop_var, outer.body.loop_var
    x = io * 4 + ii
    expected = loop(io, 3, loop(ii, 4, IfThenElse(x < 10, BufferStore(B, A[x] * 2.0 + 1.0, [x]))))
    tir.assert_structural_equal(after.body, expected)


def test_lower_opaque_block_turns_allocations_into_allocate_and_keeps_loop_kinds():
    func, (A, B, T) = guarded(staged=True)
    after = lower_all(func)
    alloc = after.body.body
    assert isinstance(alloc, Allocate) and alloc.dtype == "float32"
    assert [s.kind for s in alloc.body.seq] == [VECTORIZED, VECTORIZED]
    found = []
    tir.stmt_functor.post_order_visit(after.body, lambda n: found.append(n)
                                      if isinstance(n, (Block, BlockRealize)) else None)
    assert not found


# ---------------------------------------------------------------- end to end


def _run_both(func, arrays, out_index):
    native = [a.copy() for a in arrays]
    codegen.build(func)(*native)
    interp = [a.copy() for a in arrays]
    build_interpreter(func)(*interp)
    return native[out_index], interp[out_index]


def test_matmul_with_init_matches_numpy_and_the_interpreter():
    func, _, _ = matmul()
    rng = np.random.default_rng(0)
    a, b = rng.random((8, 16), "float32"), rng.random((16, 12), "float32")
    c = np.full((8, 12), 7.0, "float32")  # the init must overwrite it
    native, interp = _run_both(func, [a, b, c], 2)
    np.testing.assert_allclose(native, a @ b, rtol=1e-5)
    np.testing.assert_allclose(interp, a @ b, rtol=1e-5)


@pytest.mark.parametrize("fused", [False, True])
def test_two_stage_with_an_intermediate_matches_numpy(fused):
    func, _ = two_stage(fused=fused)
    a = np.random.default_rng(1).random((6, 10), "float32")
    native, interp = _run_both(func, [a, np.zeros((6, 10), "float32")], 1)
    np.testing.assert_allclose(native, a * 2 + 1)
    np.testing.assert_allclose(interp, a * 2 + 1)


def test_cached_matmul_matches_numpy_and_the_interpreter():
    func, _ = cached_matmul()
    rng = np.random.default_rng(2)
    a, b = rng.random((8, 16), "float32"), rng.random((16, 8), "float32")
    native, interp = _run_both(func, [a, b, np.zeros((8, 8), "float32")], 2)
    np.testing.assert_allclose(native, a @ b, rtol=1e-5)
    np.testing.assert_allclose(interp, a @ b, rtol=1e-5)


@pytest.mark.parametrize("staged", [False, True])
def test_guarded_vectorized_split_matches_numpy(staged):
    func, _ = guarded(staged=staged)
    a = np.arange(10, dtype="float32")
    b = np.full(10, -1.0, "float32")
    native, interp = _run_both(func, [a, b], 1)
    np.testing.assert_allclose(native, a * 2 + 1)
    np.testing.assert_allclose(interp, a * 2 + 1)


def test_lower_shows_plain_loops():
    func, _ = cached_matmul()
    text = codegen.lower(func)["main"].script()
    assert "T.block" not in text and "T.allocate([4, 4]" in text


def test_compact_shrinks_a_row_of_a_symbolic_intermediate_and_runs():
    n = tir.size_var("n")
    A, C = (tir.decl_buffer((4, n), "float32", name) for name in ("A", "C"))
    T = tir.decl_buffer((4, n), "float32", "T")
    i, j1, j2, ti, tj, ci, cj = (Var(x) for x in ("i", "j", "j", "vi", "vj", "vi", "vj"))
    produce = Block([IterVar(4, ti), IterVar(n, tj)], "T",
                    body=BufferStore(T, A[ti, tj] * 2.0, [ti, tj]))
    consume = Block([IterVar(4, ci), IterVar(n, cj)], "C",
                    body=BufferStore(C, T[ci, cj] + 1.0, [ci, cj]))
    body = loop(i, 4, SeqStmt([loop(j1, n, BlockRealize([i, j1], True, produce)),
                               loop(j2, n, BlockRealize([i, j2], True, consume))]))
    func = tir.PrimFunc([A, C], root(body, [T]))
    alloc = lower_all(func).body.body
    assert isinstance(alloc, Allocate) and alloc.extents[0].value == 1 and alloc.extents[1] is n
    a = np.random.default_rng(3).random((4, 7), "float32")
    native, interp = _run_both(func, [a, np.zeros((4, 7), "float32")], 1)
    np.testing.assert_allclose(native, a * 2 + 1)
    np.testing.assert_allclose(interp, a * 2 + 1)


def test_compact_keeps_a_buffer_whose_uses_are_not_bounded():
    # T[vi, vj] with vj from a loop of symbolic extent m: no constant tile under i.
    m = tir.size_var("m")
    A, C = (tir.decl_buffer((4, 16), "float32", name) for name in ("A", "C"))
    (T,) = buffers(("T", (4, 16)))
    i, j1, j2, ti, tj, ci, cj = (Var(x) for x in ("i", "j", "j", "vi", "vj", "vi", "vj"))
    produce = Block([IterVar(4, ti), IterVar(16, tj)], "T",
                    body=BufferStore(T, A[ti, tj] * 2.0, [ti, tj]))
    consume = Block([IterVar(4, ci), IterVar(16, cj)], "C",
                    body=BufferStore(C, T[ci, cj] + 1.0, [ci, cj]))
    body = SeqStmt([loop(i, 4, loop(j1, 16, BlockRealize([i, j1], True, produce))),
                    loop(j2, m, BlockRealize([j2 // 16, j2 % 16], True, consume))])
    func = tir.PrimFunc([A, C, m], root(body, [T]))
    planned = run_pass(transform.PlanAndUpdateBufferAllocationLocation(), func)
    assert run_pass(transform.CompactBufferAllocation(), planned) is planned
