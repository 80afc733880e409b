"""cache_read, cache_write, decompose_reduction and transform_layout (TVM's semantics).

Before/After: the function from te.create_prim_func, scheduled, against the expected
function written with the small builder below; errors name the block or loop and the
rule; differential runs compare with the unscheduled function (schedule_helpers).
"""

from __future__ import annotations

import pytest
from schedule_helpers import assert_same

import tir
import transform
from tir import te
from tir.block import Block, BlockRealize, IterVar, IterVarType
from tir.functor import post_order_visit
from tir.schedule import ScheduleError
from tir.stmt import Allocate, BufferStore, For, ForKind, SeqStmt

S, R = IterVarType.DataPar, IterVarType.CommReduce


# ---------------------------------------------------------------- builder for expected IR


def _nest(extents, make):
    """Loops of ``extents`` (outer first) around ``make(*loop_vars)``."""
    loops = [tir.Var(f"l{d}") for d in range(len(extents))]
    stmt = make(*loops)
    for v, n in reversed(list(zip(loops, extents))):
        stmt = For(v, 0, n, ForKind.SERIAL, stmt)
    return stmt


def _block(name, values, kinds, extents, body, init=None):
    """A realize binding fresh iter vars (of ``kinds`` / ``extents``) to ``values``.

    ``body`` and ``init`` are callables of the iter vars.
    """
    ivs = [IterVar(n, tir.Var(f"v{d}"), k) for d, (n, k) in enumerate(zip(extents, kinds))]
    vs = [iv.var for iv in ivs]
    block = Block(ivs, name, body=body(*vs), init=None if init is None else init(*vs))
    return BlockRealize(values, True, block)


def _copy(name, src, dst, extents):
    return _nest(extents, lambda *ls: _block(
        name, ls, [S] * len(ls), extents, lambda *v: BufferStore(dst, src[v], list(v))))


def _func(params, body, alloc):
    root = BlockRealize([], True, Block([], "root", alloc_buffers=list(alloc),
                                        body=SeqStmt.flatten(*body)))
    f = tir.PrimFunc(params, root)
    return f.with_attr("global_symbol", "main").with_attr("tir.noalias", True)


def _check(sch, want):
    tir.assert_structural_equal(sch.mod["main"], want)
    assert tir.verify_well_formed(sch.mod["main"])


# ---------------------------------------------------------------- te functions


def _elementwise(n=16):
    A = te.placeholder((n, n), name="A")
    B = te.compute((n, n), lambda i, j: A[i, j] * 2.0, name="B")
    C = te.compute((n, n), lambda i, j: B[i, j] + 1.0, name="C")
    return (A, B, C), te.create_prim_func([A, C])


def _matmul(m=16, n=16, k=8):
    A = te.placeholder((m, k), name="A")
    B = te.placeholder((k, n), name="B")
    r = te.reduce_axis((0, k), name="k")
    C = te.compute((m, n), lambda i, j: te.sum(A[i, r] * B[r, j], axis=r), name="C")
    return (A, B, C), te.create_prim_func([A, B, C])


def _elementwise_want(a, b, c, n, a_src=None, b_dst=None, b_src=None, c_src=None):
    """The elementwise pair with optional buffer swaps (None: the original buffer)."""
    stage_b = _nest([n, n], lambda i, j: _block(
        "B", [i, j], [S, S], [n, n],
        lambda vi, vj: BufferStore(b_dst or b, (a_src or a)[vi, vj] * 2.0, [vi, vj])))
    stage_c = _nest([n, n], lambda i, j: _block(
        "C", [i, j], [S, S], [n, n],
        lambda vi, vj: BufferStore(c, (c_src or b_src or b)[vi, vj] + 1.0, [vi, vj])))
    return stage_b, stage_c


def _matmul_block(a, b, c, acc, m, n, k, b_index=None, init=True):
    """C's update (and init) accumulating into ``acc``; ``b_index`` maps B's indices."""
    def update(vi, vj, vk):
        bi = b_index(vk, vj) if b_index else (vk, vj)
        return BufferStore(acc, acc[vi, vj] + a[vi, vk] * b[bi], [vi, vj])
    return lambda i, j, kk: _block(
        "C", [i, j, kk], [S, S, R], [m, n, k], update,
        init=(lambda vi, vj, vk: BufferStore(acc, tir.const(0.0), [vi, vj])) if init else None)


# ---------------------------------------------------------------- cache_read


def test_cache_read_of_a_parameter_goes_first_and_feeds_the_reader():
    (A, B, C), func = _elementwise()
    sch = tir.Schedule(func)
    blk = sch.cache_read(sch.get_block("B"), 0, "global")
    assert blk.name == "A_global"
    n = 16
    a_global = tir.decl_buffer((n, n), "float32", "A_global", scope="global")
    stage_b, stage_c = _elementwise_want(A.buffer, B.buffer, C.buffer, n, a_src=a_global)
    want = _func([A.buffer, C.buffer],
                 [_copy("A_global", A.buffer, a_global, [n, n]), stage_b, stage_c],
                 [B.buffer, a_global])
    _check(sch, want)
    assert_same(func, sch)


def test_cache_read_of_an_intermediate_goes_after_its_writer():
    (A, B, C), func = _elementwise()
    sch = tir.Schedule(func)
    sch.cache_read(sch.get_block("C"), 0, "local")
    n = 16
    b_local = tir.decl_buffer((n, n), "float32", "B_local", scope="local")
    stage_b, stage_c = _elementwise_want(A.buffer, B.buffer, C.buffer, n, b_src=b_local)
    want = _func([A.buffer, C.buffer],
                 [stage_b, _copy("B_local", B.buffer, b_local, [n, n]), stage_c],
                 [B.buffer, b_local])
    _check(sch, want)
    assert_same(func, sch)


def test_cache_read_only_the_named_consumers_read_the_cache():
    n = 8
    A = te.placeholder((n,), name="A")
    B = te.compute((n,), lambda i: A[i] * 2.0, name="B")
    C = te.compute((n,), lambda i: A[i] + B[i], name="C")
    func = te.create_prim_func([A, C])
    sch = tir.Schedule(func)
    sch.cache_read(sch.get_block("B"), 0, "global", consumer_blocks=[sch.get_block("C")])
    text = str(sch.mod["main"])
    b_body = text.split('T.block("B")')[1].split("T.block")[0]
    assert "A_global" not in b_body
    c_body = text.split('T.block("C")')[1]
    assert "A_global[v_i]" in c_body
    assert_same(func, sch)


def test_cache_read_names_are_unique_and_scopes_chain():
    (A, B, C), func = _elementwise()
    sch = tir.Schedule(func)
    first = sch.cache_read(sch.get_block("B"), 0, "shared")
    second = sch.cache_read(sch.get_block("B"), 0, "local")
    assert (first.name, second.name) == ("A_shared", "A_shared_local")
    third = sch.cache_read(sch.get_block("C"), 0, "local")
    fourth = sch.cache_read(sch.get_block("B_local"), 0, "local")
    assert (third.name, fourth.name) == ("B_local", "B_local_1")
    assert tir.verify_well_formed(sch.mod["main"])
    assert_same(func, sch, interpret=False)


def test_cache_read_of_matmul_counts_A_and_B_not_the_accumulator():
    (A, B, C), func = _matmul()
    sch = tir.Schedule(func)
    assert sch.cache_read(sch.get_block("C"), 1, "global").name == "B_global"
    assert sch.cache_read(sch.get_block("C"), 0, "global").name == "A_global"
    with pytest.raises(ScheduleError, match=r"cache_read: block C: read buffer index 2 is out "
                       r"of range: the block reads 2 buffer\(s\) \(A_global, B_global\)"):
        sch.cache_read(sch.get_block("C"), 2, "global")


def test_cache_read_errors():
    (A, B, C), func = _elementwise()
    sch = tir.Schedule(func)
    with pytest.raises(ScheduleError, match="cache_read: storage scope 'texture_x': is not a "
                       "storage scope"):
        sch.cache_read(sch.get_block("B"), 0, "texture_x")
    with pytest.raises(ScheduleError, match="cache_read: block B: consumer block C does not "
                       "read A"):
        sch.cache_read(sch.get_block("B"), 0, "global", consumer_blocks=[sch.get_block("C")])
    with pytest.raises(ScheduleError, match="cache_read: block C: block B writes B; it cannot "
                       "read the cache of its own output"):
        sch.cache_read(sch.get_block("C"), 0, "global", consumer_blocks=[sch.get_block("B")])
    # Failed primitives leave the function and the trace as they were.
    assert {inst.name for inst in sch.trace} == {"get_block"}
    tir.assert_structural_equal(sch.mod["main"], func)


def test_cache_read_refuses_a_reader_fused_with_the_writer():
    (A, B, C), func = _elementwise()
    sch = tir.Schedule(func)
    sch.compute_at(sch.get_block("B"), sch.get_loops(sch.get_block("C"))[0])
    with pytest.raises(ScheduleError, match="cache_read: block C: consumer C of B is in the "
                       "same loop nest as its writer B"):
        sch.cache_read(sch.get_block("C"), 0, "local")


def test_cache_read_refuses_two_writers():
    n = 8
    A, B = (tir.decl_buffer((n,), "float32", x) for x in "AB")
    t = tir.decl_buffer((n,), "float32", "T")
    def write(name, value):
        return _nest([n], lambda i: _block(name, [i], [S], [n],
                                           lambda v: BufferStore(t, value(v), [v])))
    read = _nest([n], lambda i: _block("R", [i], [S], [n],
                                       lambda v: BufferStore(B, t[v], [v])))
    func = _func([A, B], [write("W0", lambda v: A[v]), write("W1", lambda v: A[v] + 1.0), read],
                 [t])
    sch = tir.Schedule(func)
    with pytest.raises(ScheduleError, match=r"cache_read: block R: buffer T is written by 2 "
                       r"blocks \(W0, W1\); cache_read needs at most one writer"):
        sch.cache_read(sch.get_block("R"), 0, "local")
    with pytest.raises(ScheduleError, match="cache_write: block W0: buffer T is also written "
                       "by W1; cache_write needs the only writer"):
        sch.cache_write(sch.get_block("W0"), 0, "local")


# ---------------------------------------------------------------- cache_write


def test_cache_write_redirects_the_block_and_copies_back_right_after():
    (A, B, C), func = _elementwise()
    sch = tir.Schedule(func)
    blk = sch.cache_write(sch.get_block("B"), 0, "local")
    assert blk.name == "B_local"
    n = 16
    b_local = tir.decl_buffer((n, n), "float32", "B_local", scope="local")
    stage_b, stage_c = _elementwise_want(A.buffer, B.buffer, C.buffer, n, b_dst=b_local)
    want = _func([A.buffer, C.buffer],
                 [stage_b, _copy("B_local", b_local, B.buffer, [n, n]), stage_c],
                 [B.buffer, b_local])
    _check(sch, want)
    assert_same(func, sch)


def test_cache_write_of_a_reduction_moves_init_and_accumulator():
    (A, B, C), func = _matmul()
    sch = tir.Schedule(func)
    sch.cache_write(sch.get_block("C"), 0, "local")
    a, b, c = A.buffer, B.buffer, C.buffer
    c_local = tir.decl_buffer((16, 16), "float32", "C_local", scope="local")
    want = _func([a, b, c], [_nest([16, 16, 8], _matmul_block(a, b, c, c_local, 16, 16, 8)),
                             _copy("C_local", c_local, c, [16, 16])], [c_local])
    _check(sch, want)
    assert_same(func, sch)


def test_cache_write_consumer_blocks_read_the_cache():
    (A, B, C), func = _elementwise()
    sch = tir.Schedule(func)
    sch.cache_write(sch.get_block("B"), 0, "global", consumer_blocks=[sch.get_block("C")])
    n = 16
    b_global = tir.decl_buffer((n, n), "float32", "B_global", scope="global")
    stage_b, stage_c = _elementwise_want(A.buffer, B.buffer, C.buffer, n, b_dst=b_global,
                                         c_src=b_global)
    want = _func([A.buffer, C.buffer],
                 [stage_b, _copy("B_global", b_global, B.buffer, [n, n]), stage_c],
                 [B.buffer, b_global])
    _check(sch, want)
    assert_same(func, sch)


def test_cache_write_errors():
    (A, B, C), func = _elementwise()
    sch = tir.Schedule(func)
    with pytest.raises(ScheduleError, match=r"cache_write: block B: write buffer index 1 is out "
                       r"of range: the block writes 1 buffer\(s\) \(B\)"):
        sch.cache_write(sch.get_block("B"), 1, "local")
    with pytest.raises(ScheduleError, match="cache_write: block C: consumer block B does not "
                       "read C"):
        sch.cache_write(sch.get_block("C"), 0, "local", consumer_blocks=[sch.get_block("B")])
    sch.compute_at(sch.get_block("B"), sch.get_loops(sch.get_block("C"))[0])
    with pytest.raises(ScheduleError, match="cache_write: block B: block C reads B inside the "
                       "loop nest of B"):
        sch.cache_write(sch.get_block("B"), 0, "local")


# ---------------------------------------------------------------- decompose_reduction


def test_decompose_reduction_at_a_spatial_loop_copies_the_inner_spatial_loops():
    (A, B, C), func = _matmul()
    sch = tir.Schedule(func)
    blk = sch.get_block("C")
    i, j, k = sch.get_loops(blk)
    init = sch.decompose_reduction(blk, j)
    assert init.name == "C_init"
    a, b, c = A.buffer, B.buffer, C.buffer

    def under_i(vi_loop):
        init_nest = _nest([16], lambda j_init: _block(
            "C_init", [vi_loop, j_init], [S, S], [16, 16],
            lambda vi, vj: BufferStore(c, tir.const(0.0), [vi, vj])))
        update = _nest([16, 8], lambda jj, kk: _matmul_block(a, b, c, c, 16, 16, 8, init=False)(
            vi_loop, jj, kk))
        return SeqStmt.flatten(init_nest, update)

    want = _func([a, b, c], [_nest([16], under_i)], [])
    _check(sch, want)
    assert_same(func, sch)


def test_decompose_reduction_at_the_reduction_loop_and_at_the_top():
    for at in (0, 2):
        (A, B, C), func = _matmul(8, 12, 4)
        sch = tir.Schedule(func)
        blk = sch.get_block("C")
        sch.decompose_reduction(blk, sch.get_loops(blk)[at])
        f = sch.mod["main"]
        assert tir.verify_well_formed(f)
        assert sch.get(blk).init is None
        init_loops = [x for x in sch.get_loops(sch.get_block("C_init"))]
        assert len(init_loops) == 2  # i and j (or their copies): never k
        assert_same(func, sch, interpret=at == 0)


def test_decompose_reduction_after_split_keeps_the_inner_predicate():
    (A, B, C), func = _matmul(10, 8, 6)
    sch = tir.Schedule(func)
    blk = sch.get_block("C")
    i, j, k = sch.get_loops(blk)
    io, ii = sch.split(i, [None, 4])  # 12 iterations for 10 rows: a predicate
    sch.reorder(io, k, ii)
    sch.decompose_reduction(blk, k)
    init = sch.get(sch.get_block("C_init"))
    assert [iv.var.name for iv in init.iter_vars] == ["v_i", "v_j"]
    realize = sch.mod["main"]
    preds = []
    post_order_visit(realize.body, lambda n: preds.append(str(n.predicate))
                     if isinstance(n, BlockRealize) and n.block.name_hint == "C_init" else None)
    assert preds and "< 10" in preds[0]
    assert_same(func, sch)


def test_decompose_reduction_errors():
    (A, B, C), func = _elementwise()
    sch = tir.Schedule(func)
    with pytest.raises(ScheduleError, match="decompose_reduction: block B: the block has no "
                       "init"):
        sch.decompose_reduction(sch.get_block("B"), sch.get_loops(sch.get_block("B"))[0])

    (A, B, C), func = _matmul()
    sch = tir.Schedule(func)
    blk = sch.get_block("C")
    i, j, k = sch.get_loops(blk)
    sch.cache_write(blk, 0, "local")
    other = sch.get_loops(sch.get_block("C_local"))[0]
    with pytest.raises(ScheduleError, match=r"decompose_reduction: loop ax0: is not a loop "
                       r"around block C"):
        sch.decompose_reduction(blk, other)
    sch.reorder(k, i, j)
    with pytest.raises(ScheduleError, match="decompose_reduction: loop i: is below loop k, which "
                       "the reduction iter var v_k of block C is bound to; decompose at loop k "
                       "or above"):
        sch.decompose_reduction(blk, i)
    sch.decompose_reduction(blk, k)
    with pytest.raises(ScheduleError, match="the block has no init"):
        sch.decompose_reduction(blk, k)


# ---------------------------------------------------------------- transform_layout


def test_transform_layout_packs_a_cache_and_rewrites_every_access():
    (A, B, C), func = _matmul(8, 32, 4)
    sch = tir.Schedule(func)
    blk = sch.get_block("C")
    b_cache = sch.cache_read(blk, 1, "global")
    sch.transform_layout(blk, ("read", 1), lambda k, n: (n // 16, k, n % 16))
    a, b, c = A.buffer, B.buffer, C.buffer
    packed = tir.decl_buffer((2, 4, 16), "float32", "B_global", scope="global")
    copy = _nest([4, 32], lambda l0, l1: _block(
        "B_global", [l0, l1], [S, S], [4, 32],
        lambda v0, v1: BufferStore(packed, b[v0, v1], [v1 // 16, v0, v1 % 16])))
    want = _func([a, b, c], [copy, _nest([8, 32, 4], _matmul_block(
        a, packed, c, c, 8, 32, 4, b_index=lambda k, n: (n // 16, k, n % 16)))], [packed])
    _check(sch, want)
    assert b_cache.name == "B_global"
    assert_same(func, sch)


def test_transform_layout_with_holes_rounds_the_shape_up():
    (A, B, C), func = _elementwise(20)
    sch = tir.Schedule(func)
    sch.transform_layout(sch.get_block("B"), "B", lambda i, j: (j // 8, i, j % 8))
    root = sch.mod["main"].body.block
    assert [int(s.value) for s in root.alloc_buffers[0].shape] == [3, 20, 8]
    assert_same(func, sch)


def test_transform_layout_errors():
    (A, B, C), func = _elementwise()
    sch = tir.Schedule(func)
    blk = sch.get_block("B")
    with pytest.raises(ScheduleError, match="transform_layout: buffer A: is a parameter of the "
                       r"function.*sch.cache_read"):
        sch.transform_layout(blk, ("read", 0), lambda i, j: (j, i))
    with pytest.raises(ScheduleError, match="transform_layout: buffer B: the index map sends "
                       "two elements to the same place"):
        sch.transform_layout(blk, ("write", 0), lambda i, j: (i, j % 8))
    with pytest.raises(ScheduleError, match="transform_layout: buffer B: the new index j - 1 "
                       "may be negative"):
        sch.transform_layout(blk, "B", lambda i, j: (i, j - 1))
    with pytest.raises(ScheduleError, match="transform_layout: block B: no buffer named 'X'"):
        sch.transform_layout(blk, "X", lambda i, j: (j, i))
    with pytest.raises(ScheduleError, match=r"transform_layout: block B: read buffer index 3 is "
                       r"out of range"):
        sch.transform_layout(blk, ("read", 3), lambda i, j: (j, i))
    with pytest.raises(ScheduleError, match="transform_layout: buffer B: the new index q \\* i "
                       "uses q, which is neither an old index nor a parameter"):
        sch.transform_layout(blk, "B", lambda i, j: (tir.Var("q") * i, j))
    with pytest.raises(ScheduleError, match="has no bound over the buffer's shape"):
        sch.transform_layout(blk, "B", lambda i, j: (tir.call_extern("int32", "f", i), j))
    with pytest.raises(ScheduleError, match="pad_value is not supported"):
        sch.transform_layout(blk, "B", lambda i, j: (i, j // 3, j % 3), pad_value=0.0)


def test_transform_layout_symbolic_shape_uses_mapped_extents():
    n = tir.Var("n")
    A = te.placeholder((n, 16), name="A")
    B = te.compute((n, 16), lambda i, j: A[i, j] + 1.0, name="B")
    C = te.compute((n, 16), lambda i, j: B[i, j] * 3.0, name="C")
    sch = tir.Schedule(te.create_prim_func([A, C]))
    sch.transform_layout(sch.get_block("C"), ("read", 0), lambda i, j: (j // 4, i, j % 4))
    shape = sch.mod["main"].body.block.alloc_buffers[0].shape
    tir.assert_structural_equal(list(shape), [tir.const(4), n, tir.const(4)], map_free_vars=True)
    assert tir.verify_well_formed(sch.mod["main"])


# ---------------------------------------------------------------- the packed matmul


def test_packed_matmul_schedule_matches_the_unscheduled_function():
    """B packed into [N/16, K, 16], a 4 x 16 local accumulator per tile, init decomposed."""
    (A, B, C), func = _matmul(32, 64, 24)
    sch = tir.Schedule(func)
    blk = sch.get_block("C")
    packed = sch.cache_read(blk, 1, "global")
    sch.transform_layout(packed, ("write", 0), lambda k, n: (n // 16, k, n % 16))
    acc = sch.cache_write(blk, 0, "local")
    i, j, k = sch.get_loops(blk)
    io, ii = sch.split(i, [None, 4])
    jo, ji = sch.split(j, [None, 16])
    sch.reorder(io, jo, k, ii, ji)
    sch.reverse_compute_at(acc, jo)
    sch.vectorize(ji)
    sch.decompose_reduction(blk, k)
    assert_same(func, sch)

    # The lowering gives the accumulator its tile only: 4 x 16 floats.
    lowered = transform.Sequential([transform.LowerInitBlock(),
                                    transform.PlanAndUpdateBufferAllocationLocation(),
                                    transform.CompactBufferAllocation(),
                                    transform.LowerOpaqueBlock()])(sch.mod)["main"]
    sizes = {}
    post_order_visit(lowered.body, lambda n: sizes.setdefault(n.buffer_var.name, [
        int(e.value) for e in n.extents]) if isinstance(n, Allocate) else None)
    assert sizes["C_local"] in ([4, 16], [64])
    assert sizes["B_global"] in ([4, 24, 16], [1536])


def test_transform_layout_index_map_arity_must_match_the_buffer():
    A = te.placeholder((8, 4), name="A")
    S = te.compute((8, 4), lambda i, j: A[i, j] + 1.0, name="S")
    D = te.compute((8, 4), lambda i, j: S[i, j] * 2.0, name="D")
    sch = tir.Schedule(te.create_prim_func([A, D]))
    with pytest.raises(ScheduleError, match="index_map takes 3 indices but buffer S has 2"):
        sch.transform_layout(sch.get_block("S"), ("write", 0), lambda a, b, c: (a, b, c))
