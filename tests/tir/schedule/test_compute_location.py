"""compute_at, reverse_compute_at, compute_inline, reverse_compute_inline (TVM's semantics).

Before functions come from ``te.create_prim_func`` (scheduled with ``split`` /
``reorder`` where a tile is needed); After functions are built by hand around
the Before's blocks (compute_at never touches a block, only its loops,
bindings and predicate). Each structural test also runs the result against
the unscheduled function (``assert_same``).
"""

from __future__ import annotations

import random

import pytest
from schedule_helpers import assert_same

import codegen.interp.backend  # noqa: F401  (schedule_helpers uses codegen.interp.backend)
import tir
from tir import te
from tir.schedule import ScheduleError, tree
from tir.schedule.primitives import compute_location as loc
from tir.schedule.primitives import inline

DataPar, CommReduce = tir.IterVarType.DataPar, tir.IterVarType.CommReduce

# ------------------------------------------------------------------ a small builder


def nest(loops, body):
    """``body`` inside serial loops ``[(var, extent), ...]`` (outer first)."""
    for v, extent in reversed(loops):
        body = tir.For(v, 0, extent, tir.ForKind.SERIAL, body)
    return body


def realize(block, values, predicate=True):
    return tir.BlockRealize(values, predicate, block)


def like(before, *stages, allocs=None):
    """A function with ``before``'s parameters and attributes whose root holds ``stages``."""
    root = tree.root_realize(before).block
    allocs = root.alloc_buffers if allocs is None else allocs
    body = tir.BlockRealize([], True, tir.Block([], "root", alloc_buffers=allocs,
                                                body=tir.SeqStmt.flatten(*stages)))
    return tir.PrimFunc([before.buffer_map[p] for p in before.params], body,
                        attrs=before.attrs)


def block_of(func, name):
    return tree.find_block(func, name).block


def loops_of(func, name):
    return [f.loop_var for f in tree.loops_above(func, tree.find_block(func, name))]


def stage(func, name):
    """The original loop nest of block ``name`` (as ``create_prim_func`` built it)."""
    return loc.removal_root(func, tree.find_block(func, name))


def check(before, after, expected):
    tir.verify_well_formed(after)
    tir.assert_structural_equal(after, expected)
    assert_same(before, after)


def ivar(name):
    return tir.Var(name, "int32")


# ------------------------------------------------------------------ functions


def elementwise_pair(m=10, n=13):
    A = te.placeholder((m, n), name="A")
    B = te.compute((m, n), lambda i, j: A[i, j] * 2.0, name="B")
    C = te.compute((m, n), lambda i, j: B[i, j] + 1.0, name="C")
    return te.create_prim_func([A, C])


def blur(h=10, w=9):
    """blur_x reads x, x+1, x+2 of A; blur_y reads rows y, y+1, y+2 of blur_x."""
    A = te.placeholder((h, w), name="A")
    bx = te.compute((h, w - 2), lambda y, x: A[y, x] + A[y, x + 1] + A[y, x + 2], name="bx")
    by = te.compute((h - 2, w - 2), lambda y, x: bx[y, x] + bx[y + 1, x] + bx[y + 2, x],
                    name="by")
    return te.create_prim_func([A, by])


def row_sum_scale(m=9, n=7):
    A = te.placeholder((m, n), name="A")
    k = te.reduce_axis((0, n), name="k")
    S = te.compute((m,), lambda i: te.sum(A[i, k], axis=k), name="S")
    D = te.compute((m,), lambda i: S[i] * 2.0, name="D")
    return te.create_prim_func([A, D])


def matmul_relu(m=8, n=8, k=5):
    A = te.placeholder((m, k), name="A")
    B = te.placeholder((k, n), name="B")
    r = te.reduce_axis((0, k), name="k")
    C = te.compute((m, n), lambda i, j: te.sum(A[i, r] * B[r, j], axis=r), name="C")
    D = te.compute((m, n), lambda i, j: tir.max(C[i, j], tir.const(0.0)), name="D")
    return te.create_prim_func([A, B, D])


def chain(n=11):
    A = te.placeholder((n,), name="A")
    B = te.compute((n,), lambda i: A[i] * 2.0, name="B")
    C = te.compute((n,), lambda i: B[i] + 1.0, name="C")
    D = te.compute((n - 2,), lambda i: C[i] * C[i + 2], name="D")
    return te.create_prim_func([A, D]), (A, B, C, D)


# ------------------------------------------------------------------ compute_at


def test_compute_at_elementwise_into_split_tile():
    before = elementwise_pair()
    sch = tir.Schedule(before)
    i, j = sch.get_loops(sch.get_block("C"))
    jo, ji = sch.split(j, [None, 4])
    split = sch.mod["main"]
    after = loc.compute_at(split, "B", jo.var)
    ax0 = ivar("ax0")
    i_, jo_, ji_ = loops_of(split, "C")
    b_new = realize(block_of(before, "B"), [i_, jo_ * 4 + ax0], jo_ * 4 + ax0 < 13)
    c = tree.find_block(split, "C")
    expected = like(before, nest([(i_, 10), (jo_, 4)], tir.SeqStmt([
        nest([(ax0, 4)], b_new), nest([(ji_, 4)], c)])))
    check(before, after, expected)


def test_compute_at_stencil_region_grows_by_two():
    before = blur()
    sch = tir.Schedule(before)
    y, x = sch.get_loops(sch.get_block("by"))
    yo, yi = sch.split(y, [None, 4])
    split = sch.mod["main"]
    after = loc.compute_at(split, "bx", yo.var)
    ax0, ax1 = ivar("ax0"), ivar("ax1")
    yo_, yi_, x_ = loops_of(split, "by")
    bx_new = realize(block_of(before, "bx"), [yo_ * 4 + ax0, ax1])
    expected = like(before, nest([(yo_, 2)], tir.SeqStmt([
        nest([(ax0, 6), (ax1, 7)], bx_new),
        nest([(yi_, 4), (x_, 7)], tree.find_block(split, "by"))])))
    check(before, after, expected)


def test_compute_at_stencil_inner_loop_three_rows():
    before = blur()
    sch = tir.Schedule(before)
    y, x = sch.get_loops(sch.get_block("by"))
    sch.compute_at(sch.get_block("bx"), y)
    after = sch.mod["main"]
    ax0, ax1 = ivar("ax0"), ivar("ax1")
    y_, x_ = loops_of(before, "by")
    bx_new = realize(block_of(before, "bx"), [y_ + ax0, ax1])
    expected = like(before, nest([(y_, 8)], tir.SeqStmt([
        nest([(ax0, 3), (ax1, 7)], bx_new), nest([(x_, 7)], tree.find_block(before, "by"))])))
    check(before, after, expected)


def test_compute_at_reduction_block():
    before = row_sum_scale()
    sch = tir.Schedule(before)
    (i,) = sch.get_loops(sch.get_block("D"))
    io, ii = sch.split(i, [None, 4])
    split = sch.mod["main"]
    after = loc.compute_at(split, "S", io.var)
    ax0, ax1 = ivar("ax0"), ivar("ax1")
    io_, ii_ = loops_of(split, "D")
    s_new = realize(block_of(before, "S"), [io_ * 4 + ax0, ax1], io_ * 4 + ax0 < 9)
    expected = like(before, nest([(io_, 3)], tir.SeqStmt([
        nest([(ax0, 4), (ax1, 7)], s_new), nest([(ii_, 4)], tree.find_block(split, "D"))])))
    check(before, after, expected)


def test_compute_at_unit_loops_preserved_or_dropped():
    before = elementwise_pair()
    i, j = loops_of(before, "C")
    dropped = loc.compute_at(before, "B", j)
    kept = loc.compute_at(before, "B", j, preserve_unit_loops=True)
    b, c = block_of(before, "B"), tree.find_block(before, "C")
    ax0, ax1 = ivar("ax0"), ivar("ax1")
    check(before, dropped, like(before, nest([(i, 10), (j, 13)], tir.SeqStmt([
        realize(b, [i, j]), c]))))
    check(before, kept, like(before, nest([(i, 10), (j, 13)], tir.SeqStmt([
        nest([(ax0, 1), (ax1, 1)], realize(b, [i + ax0, j + ax1])), c]))))


# ------------------------------------------------------------------ reverse_compute_at


def test_reverse_compute_at_relu_after_matmul_tile():
    before = matmul_relu()
    sch = tir.Schedule(before)
    i, j, k = sch.get_loops(sch.get_block("C"))
    io, ii = sch.split(i, [None, 4])
    jo, ji = sch.split(j, [None, 4])
    sch.reorder(io, jo, ii, ji, k)
    tiled = sch.mod["main"]
    after = loc.reverse_compute_at(tiled, "D", jo.var)
    ax0, ax1 = ivar("ax0"), ivar("ax1")
    io_, jo_, ii_, ji_, k_ = loops_of(tiled, "C")
    d_new = realize(block_of(before, "D"), [io_ * 4 + ax0, jo_ * 4 + ax1])
    expected = like(before, nest([(io_, 2), (jo_, 2)], tir.SeqStmt([
        nest([(ii_, 4), (ji_, 4), (k_, 5)], tree.find_block(tiled, "C")),
        nest([(ax0, 4), (ax1, 4)], d_new)])))
    check(before, after, expected)


def test_reverse_compute_at_inner_loop_of_elementwise():
    before = elementwise_pair()
    i, j = loops_of(before, "B")
    after = loc.reverse_compute_at(before, "C", i)
    ax0 = ivar("ax0")
    expected = like(before, nest([(i, 10)], tir.SeqStmt([
        nest([(j, 13)], tree.find_block(before, "B")),
        nest([(ax0, 13)], realize(block_of(before, "C"), [i, ax0]))])))
    check(before, after, expected)


# ------------------------------------------------------------------ inlining


def test_compute_inline_chain():
    before, (A, B, C, D) = chain()
    after = inline.compute_inline(inline.compute_inline(before, "B"), "C")
    d = block_of(before, "D")
    (v,) = [iv.var for iv in d.iter_vars]

    def c_of(e):
        return tir.BufferLoad(A.buffer, [e]) * 2.0 + 1.0

    body = tir.BufferStore(D.buffer, c_of(v) * c_of(v + 2), [v])
    (i,) = loops_of(before, "D")
    d_new = realize(tir.node.replace(d, body=body), [i])
    check(before, after, like(before, nest([(i, 9)], d_new), allocs=()))


def test_reverse_compute_inline_guards_the_smaller_domain():
    A = te.placeholder((10, 12), name="A")
    B = te.compute((10, 12), lambda i, j: A[i, j] * 2.0, name="B")
    E = te.compute((8, 12), lambda i, j: tir.max(B[i, j] + 1.0, tir.const(0.0)), name="E")
    before = te.create_prim_func([A, E])
    after = inline.reverse_compute_inline(before, "E")
    b = block_of(before, "B")
    vi, vj = [iv.var for iv in b.iter_vars]
    value = tir.max(tir.BufferLoad(A.buffer, [vi, vj]) * 2.0 + 1.0, tir.const(0.0))
    body = tir.IfThenElse(vi < 8, tir.BufferStore(E.buffer, value, [vi, vj]))
    i, j = loops_of(before, "B")
    expected = like(before, nest([(i, 10), (j, 12)], realize(tir.node.replace(b, body=body),
                                                              [i, j])), allocs=())
    check(before, after, expected)


def test_reverse_compute_inline_same_domain_has_no_guard():
    before = elementwise_pair()
    after = inline.reverse_compute_inline(before, "C")
    assert isinstance(block_of(after, "B").body, tir.BufferStore)
    assert not tree.root_realize(after).block.alloc_buffers
    assert [r.block.name_hint for r in tree.blocks(after)] == ["B"]
    assert_same(before, after)


# ------------------------------------------------------------------ compute_at errors


def test_compute_at_error_loop_is_ancestor():
    before = elementwise_pair()
    i, _ = loops_of(before, "B")
    with pytest.raises(ScheduleError, match=r"compute_at: block B, loop i: .*ancestor"):
        loc.compute_at(before, "B", i)


def test_compute_at_error_consumer_outside_loop():
    A = te.placeholder((8,), name="A")
    B = te.compute((8,), lambda i: A[i] * 2.0, name="B")
    C = te.compute((8,), lambda i: B[i] + 1.0, name="C")
    D = te.compute((8,), lambda i: B[i] + C[i], name="D")
    before = te.create_prim_func([A, D])
    (i,) = loops_of(before, "C")
    with pytest.raises(ScheduleError, match=r"block B, loop i: not all consumers .*block D"):
        loc.compute_at(before, "B", i)


def test_compute_at_error_block_after_loop():
    before, _ = chain()
    (i,) = loops_of(before, "B")
    with pytest.raises(ScheduleError, match=r"compute_at: block C, loop i: .*comes after the loop"):
        loc.compute_at(before, "C", i)


def test_reverse_compute_at_error_block_before_loop():
    f = _reversed_order(elementwise_pair())
    _, j = loops_of(f, "B")
    with pytest.raises(ScheduleError, match=r"reverse_compute_at: block C, loop j: .*before"):
        loc.reverse_compute_at(f, "C", j)


def test_compute_at_error_output_block():
    A = te.placeholder((8,), name="A")
    B = te.compute((8,), lambda i: A[i] * 2.0, name="B")
    C = te.compute((8,), lambda i: A[i] + 1.0, name="C")
    f = te.create_prim_func([A, B, C])
    (i,) = loops_of(f, "C")
    with pytest.raises(ScheduleError, match=r"block B, loop i: the block writes B, a parameter"):
        loc.compute_at(f, "B", i)


def _reversed_order(func):
    """``func`` with its two root stages swapped (C's nest first)."""
    seq = tree.root_realize(func).block.body.seq
    return like(func, seq[1], seq[0])


def _two_writers():
    """B[i] = A[i]; B[i] = B[i] + 1 (a second writer); C[i] = B[i] * 2, by hand."""
    A, B, C = (tir.decl_buffer((8,), "float32", n) for n in "ABC")

    def stage_(name, store):
        v, i = ivar("v"), ivar("i")
        blk = tir.Block([tir.IterVar(8, v, DataPar)], name, body=store(v))
        return nest([(i, 8)], realize(blk, [i]))

    body = [stage_("B", lambda v: tir.BufferStore(B, tir.BufferLoad(A, [v]), [v])),
            stage_("B2", lambda v: tir.BufferStore(A, tir.const(0.0), [v])),
            stage_("C", lambda v: tir.BufferStore(C, tir.BufferLoad(B, [v]) * 2.0, [v]))]
    root = tir.Block([], "root", alloc_buffers=[B], body=tir.SeqStmt(body))
    return tir.PrimFunc([A, C], tir.BlockRealize([], True, root))


def test_compute_at_error_moves_past_a_writer_of_its_input():
    f = _two_writers()
    (i,) = loops_of(f, "C")
    with pytest.raises(ScheduleError, match=r"block B, loop i: block B2 writes A, which the "
                                            r"block reads"):
        loc.compute_at(f, "B", i)


def test_compute_at_error_not_the_only_writer():
    A, B, C = (tir.decl_buffer((8,), "float32", n) for n in "ABC")
    stages = []
    for name, value in (("B", lambda v: tir.BufferLoad(A, [v])),
                        ("B2", lambda v: tir.BufferLoad(A, [v]) + 1.0)):
        v, i = ivar("v"), ivar("i")
        blk = tir.Block([tir.IterVar(8, v, DataPar)], name,
                        body=tir.BufferStore(B, value(v), [v]))
        stages.append(nest([(i, 8)], realize(blk, [i])))
    v, i = ivar("v"), ivar("i")
    blk = tir.Block([tir.IterVar(8, v, DataPar)], "C",
                    body=tir.BufferStore(C, tir.BufferLoad(B, [v]), [v]))
    stages.append(nest([(i, 8)], realize(blk, [i])))
    root = tir.Block([], "root", alloc_buffers=[B], body=tir.SeqStmt(stages))
    f = tir.PrimFunc([A, C], tir.BlockRealize([], True, root))
    with pytest.raises(ScheduleError, match=r"block B2 also writes B: the block must be the only"):
        loc.compute_at(f, "B", i)


def test_compute_at_error_different_scope():
    before = elementwise_pair()
    c = tree.find_block(before, "C")
    i, j = tree.loops_above(before, c)
    inner = tir.Block([], "wrapper", body=i)
    f = tree.replace(before, {i: tir.BlockRealize([], True, inner)})
    with pytest.raises(ScheduleError, match=r"block B, loop j: .*same block scope"):
        loc.compute_at(f, "B", j.loop_var)


# ------------------------------------------------------------------ reverse_compute_at errors


def test_reverse_compute_at_error_producer_outside_loop():
    A = te.placeholder((8,), name="A")
    B = te.compute((8,), lambda i: A[i] * 2.0, name="B")
    C = te.compute((8,), lambda i: A[i] + 1.0, name="C")
    D = te.compute((8,), lambda i: B[i] + C[i], name="D")
    before = te.create_prim_func([A, D])
    (i,) = loops_of(before, "B")
    with pytest.raises(ScheduleError, match=r"block D, loop i: not all producers .*block C"):
        loc.reverse_compute_at(before, "D", i)


def test_reverse_compute_at_error_stencil_reads_several_points():
    before = blur()
    y, _ = loops_of(before, "bx")
    with pytest.raises(ScheduleError, match=r"block by, loop y: the block reads bx at more than "
                                            r"one index"):
        loc.reverse_compute_at(before, "by", y)


# ------------------------------------------------------------------ inline errors


def test_compute_inline_errors():
    f = row_sum_scale()
    with pytest.raises(ScheduleError, match=r"compute_inline: block S: .*init"):
        inline.compute_inline(f, "S")
    f = elementwise_pair()
    with pytest.raises(ScheduleError, match=r"block C: the block writes C, a parameter"):
        inline.compute_inline(f, "C")
    sch = tir.Schedule(f)
    sch.split(sch.get_loops(sch.get_block("B"))[1], [None, 4])
    with pytest.raises(ScheduleError, match=r"block B: the block has the predicate"):
        inline.compute_inline(sch.mod["main"], "B")


def test_compute_inline_error_store_index_not_an_iter_var():
    f = elementwise_pair()
    r = tree.find_block(f, "B")
    store = r.block.body
    vi, vj = store.indices
    bad = tir.node.replace(r.block, body=tir.node.replace(store, indices=(vj, vi)))
    ok = inline.compute_inline(tree.replace(f, {r: tir.node.replace(r, block=bad)}), "B")
    assert not tree.root_realize(ok).block.alloc_buffers  # a permutation is fine
    bad = tir.node.replace(r.block, body=tir.node.replace(store, indices=(vi, vi)))
    with pytest.raises(ScheduleError, match=r"block B: the store indices must be distinct"):
        inline.compute_inline(tree.replace(f, {r: tir.node.replace(r, block=bad)}), "B")


def test_reverse_compute_inline_errors():
    A = te.placeholder((8,), name="A")
    B = te.compute((8,), lambda i: A[i] * 2.0, name="B")
    C = te.compute((8,), lambda i: A[i] + 1.0, name="C")
    D = te.compute((8,), lambda i: B[i] + C[i], name="D")
    f = te.create_prim_func([A, D])
    with pytest.raises(ScheduleError, match=r"reverse_compute_inline: block D: .*exactly one "
                                            r"buffer .*B, C"):
        inline.reverse_compute_inline(f, "D")
    with pytest.raises(ScheduleError, match=r"block D: the producer \(S\) has reduce iter vars"):
        inline.reverse_compute_inline(row_sum_scale(), "D")
    E = te.compute((7,), lambda i: B[i + 1] * 3.0, name="E")
    with pytest.raises(ScheduleError, match=r"block E: the load indices must be distinct"):
        inline.reverse_compute_inline(te.create_prim_func([A, E]), "E")
    F = te.compute((8,), lambda i: B[i] * 3.0, name="F")
    G = te.compute((8,), lambda i: B[i] + F[i], name="G")
    with pytest.raises(ScheduleError, match=r"block F: block G reads B too"):
        inline.reverse_compute_inline(te.create_prim_func([A, G]), "F")


# ------------------------------------------------------------------ schedule API and random mixes


def test_schedule_methods_and_trace():
    before = blur()
    sch = tir.Schedule(before)
    y, x = sch.get_loops(sch.get_block("by"))
    yo, yi = sch.split(y, [None, 3])
    sch.compute_at(sch.get_block("bx"), yo)
    assert "sch.compute_at(b" in str(sch.trace)
    assert_same(before, sch)


KINDS = ["elementwise", "stencil", "reduce"]
ACTIONS = ["compute_at", "reverse_compute_at", "inline"]


def _pipeline(rng, kind):
    """A 2-3 stage pipeline of random odd sizes: elementwise, stencil, or stencil + row sum."""
    m, n = rng.choice([5, 7, 9, 11]), rng.choice([5, 7, 9, 13])
    A = te.placeholder((m, n), name="A")
    B = te.compute((m, n), lambda i, j: A[i, j] * 2.0 + 1.0, name="B")
    if kind == "elementwise":
        C = te.compute((m, n), lambda i, j: tir.max(B[i, j], tir.const(0.5)), name="C")
        return te.create_prim_func([A, C]), kind
    C = te.compute((m - 1, n), lambda i, j: B[i, j] + B[i + 1, j], name="C")
    if kind == "stencil":
        return te.create_prim_func([A, C]), kind
    k = te.reduce_axis((0, n), name="k")
    D = te.compute((m - 1,), lambda i: te.sum(C[i, k], axis=k), name="D")
    return te.create_prim_func([A, D]), kind


def _split_some(sch, rng, block):
    for loop in sch.get_loops(sch.get_block(block)):
        if rng.random() < 0.6:
            sch.split(loop, [None, rng.choice([2, 3, 4])])


def _random_schedule(sch, rng, kind, action):
    """A legal mix of random splits and ``action`` (a location or inlining primitive)."""
    preserve = rng.random() < 0.3
    if action == "compute_at":
        if kind == "reduce" and rng.random() < 0.5:
            _split_some(sch, rng, "D")
            sch.compute_at(sch.get_block("C"), rng.choice(sch.get_loops(sch.get_block("D"))),
                           preserve)
        _split_some(sch, rng, "C")
        sch.compute_at(sch.get_block("B"), rng.choice(sch.get_loops(sch.get_block("C"))),
                       preserve)
    elif action == "reverse_compute_at":
        if kind == "stencil":  # C reads B at two rows: not invertible, inline instead
            with pytest.raises(ScheduleError, match="more than one index"):
                sch.reverse_compute_at(sch.get_block("C"), sch.get_loops(sch.get_block("B"))[0])
            sch.compute_inline(sch.get_block("B"))
            return
        target = "C" if kind == "elementwise" else "D"
        source = "B" if kind == "elementwise" else "C"
        _split_some(sch, rng, source)
        sch.reverse_compute_at(sch.get_block(target),
                               rng.choice(sch.get_loops(sch.get_block(source))), preserve)
    elif kind == "elementwise" and rng.random() < 0.5:
        sch.reverse_compute_inline(sch.get_block("C"))
        _split_some(sch, rng, "B")
    else:
        sch.compute_inline(sch.get_block("B"))
        _split_some(sch, rng, "C")


@pytest.mark.parametrize("seed", range(20))
def test_random_mixes_compute_what_the_original_computes(seed):
    rng = random.Random(seed)
    kind, action = KINDS[seed % 3], ACTIONS[seed // 3 % 3]  # every pair twice in 20 seeds
    before, kind = _pipeline(rng, kind)
    sch = tir.Schedule(before)
    _random_schedule(sch, rng, kind, action)
    after = sch.mod["main"]
    tir.verify_well_formed(after)
    assert_same(before, after, seed=seed, interpret=seed % 4 == 0)


def test_reverse_compute_at_refuses_a_reduction_split_across_a_parallel_loop():
    """Found by the random schedules: C's reduction bound to a parallel loop would race."""
    A = te.placeholder((5, 7), name="A")
    B = te.placeholder((7, 6), name="B")
    S = te.compute((5, 7), lambda i, j: A[i, j] * 0.5, name="S")
    r = te.reduce_axis((0, 7), name="r")
    C = te.compute((5, 6), lambda i, j: te.sum(S[i, r] * B[r, j], axis=r), name="C")
    sch = tir.Schedule(te.create_prim_func([A, B, C]))
    fused = sch.fuse(*sch.get_loops(sch.get_block("S")))
    sch.parallel(fused)
    with pytest.raises(tir.ScheduleError, match="reduction iter var v_r would be bound to the "
                                                "parallel loop i_j_fused"):
        sch.reverse_compute_at(sch.get_block("C"), fused)
    # Serially the same move is fine: partial reductions add up in order.
    sch2 = tir.Schedule(te.create_prim_func([A, B, C]))
    fused2 = sch2.fuse(*sch2.get_loops(sch2.get_block("S")))
    sch2.reverse_compute_at(sch2.get_block("C"), fused2)
    assert_same(te.create_prim_func([A, B, C]), sch2)
