"""split, fuse, reorder, parallel/vectorize/unroll and annotate (TVM's loop primitives).

Before functions come from ``te.create_prim_func`` (or blocks written by hand);
After functions are built by hand around the Before's block (the primitives
never touch a block's body, only its loops, bindings and predicate).
"""

from __future__ import annotations

import random

import pytest
from schedule_helpers import assert_same

import codegen.interp.backend  # noqa: F401  (schedule_helpers uses codegen.interp.backend)
import tir
from tir import te
from tir.schedule import tree
from tir.schedule.primitives import annotate as annotate_prims
from tir.schedule.primitives import loops as loop_prims

SERIAL, PARALLEL = tir.ForKind.SERIAL, tir.ForKind.PARALLEL
VECTORIZED, UNROLLED = tir.ForKind.VECTORIZED, tir.ForKind.UNROLLED

# ------------------------------------------------------------------ functions


def elementwise(m=16, n=12):
    A = te.placeholder((m, n), name="A")
    B = te.compute((m, n), lambda i, j: A[i, j] * 2.0, name="B")
    return te.create_prim_func([A, B])


def matmul(m=13, n=9, k=7):
    A = te.placeholder((m, k), name="A")
    B = te.placeholder((k, n), name="B")
    r = te.reduce_axis((0, k), name="k")
    C = te.compute((m, n), lambda i, j: te.sum(A[i, r] * B[r, j], axis=r), name="C")
    return te.create_prim_func([A, B, C])


def two_stages():
    A = te.placeholder((8, 6), name="A")
    B = te.compute((8, 6), lambda i, j: A[i, j] + 1.0, name="B")
    C = te.compute((8, 6), lambda i, j: B[i, j] * 3.0, name="C")
    return te.create_prim_func([A, C])


def handwritten(loops, values, predicate=True, iter_types=None, stmts=None):
    """A function with one block "B" (B[v0, v1] = A[v0, v1] + 1) under ``loops``.

    ``loops`` is a list of ``(var, extent)`` outer first; ``values`` the two
    bindings; ``stmts`` wraps the realize (to build non-chains).
    """
    A = tir.decl_buffer((16, 16), "float32", "A")
    B = tir.decl_buffer((16, 16), "float32", "B")
    types = iter_types or [tir.IterVarType.DataPar] * 2
    ivs = [tir.IterVar(16, tir.Var(f"v{k}"), t) for k, t in enumerate(types)]
    store = tir.BufferStore(B, tir.BufferLoad(A, [ivs[0].var, ivs[1].var]) + 1.0,
                            [ivs[0].var, ivs[1].var])
    body = tir.BlockRealize(values, predicate, tir.Block(ivs, "B", body=store))
    if stmts is not None:
        body = stmts(body)
    for var, ext in reversed(loops):
        body = tir.For(var, 0, ext, SERIAL, body)
    root = tir.BlockRealize([], True, tir.Block([], "root", body=body))
    return tir.PrimFunc([A, B], root)


# ------------------------------------------------------------------ a tiny After builder


def rebuilt(before, name, loops, values, predicate=True):
    """``before`` with block ``name`` re-realized by ``values`` under ``loops`` (outer first).

    ``loops`` holds ``(var, extent)`` or ``(var, extent, kind)`` or
    ``(var, extent, kind, annotations)``; the rest of the function is kept.
    """
    realize = tree.find_block(before, name)
    body = tir.BlockRealize(values, predicate, realize.block)
    for spec in reversed(loops):
        var, ext, kind, anns = (tuple(spec) + (SERIAL, None))[:4]
        body = tir.For(var, 0, ext, kind, body, anns)
    top = tree.loops_above(before, realize)[0]
    return tree.replace(before, {top: body})


def sched(func):
    sch = tir.Schedule(func)
    return sch, sch.get_loops(sch.get_block(tree.blocks(func)[-1].block.name_hint))


def new_vars(*names):
    return [tir.Var(n) for n in names]


def check(sch, expected):
    tir.assert_structural_equal(sch.mod["main"], expected)
    assert tir.verify_well_formed(sch.mod["main"])


# ------------------------------------------------------------------ split


def test_split_divisible():
    f = elementwise()
    sch, (i, j) = sched(f)
    outs = sch.split(i, factors=[4, 4])
    assert [o.var.name for o in outs] == ["i_0", "i_1"]
    i0, i1, jv = *new_vars("i_0", "i_1"), tir.Var("j")
    check(sch, rebuilt(f, "B", [(i0, 4), (i1, 4), (jv, 12)], [i0 * 4 + i1, jv]))


def test_split_not_dividing_guards_the_block():
    f = elementwise()
    sch, (i, j) = sched(f)
    sch.split(j, factors=[None, 5])
    iv, j0, j1 = new_vars("i", "j_0", "j_1")
    check(sch, rebuilt(f, "B", [(iv, 16), (j0, 3), (j1, 5)], [iv, j0 * 5 + j1],
                       predicate=j0 * 5 + j1 < 12))


def test_split_three_factors_inferred_in_the_middle():
    f = elementwise()
    sch, (i, j) = sched(f)
    sch.split(i, factors=[2, None, 4])
    i0, i1, i2, jv = new_vars("i_0", "i_1", "i_2", "j")
    check(sch, rebuilt(f, "B", [(i0, 2), (i1, 2), (i2, 4), (jv, 12)],
                       [i0 * 8 + i1 * 4 + i2, jv]))


def test_split_keeps_unit_loops_unless_asked():
    f = elementwise()
    sch, (i, _) = sched(f)
    sch.split(i, factors=[2, 1, 8])
    i0, i1, i2, jv = new_vars("i_0", "i_1", "i_2", "j")
    check(sch, rebuilt(f, "B", [(i0, 2), (i1, 1), (i2, 8), (jv, 12)],
                       [i0 * 8 + i1 * 8 + i2, jv]))
    sch, (i, _) = sched(f)
    sch.split(i, factors=[2, 1, 8], preserve_unit_iters=False)
    check(sch, rebuilt(f, "B", [(i0, 2), (i1, 1), (i2, 8), (jv, 12)], [i0 * 8 + i2, jv]))


def test_split_symbolic_extent():
    n = te.var("n")
    A = te.placeholder((n, 8), name="A")
    B = te.compute((n, 8), lambda i, j: A[i, j] + 1.0, name="B")
    f = te.create_prim_func([A, B])
    sch, (i, _) = sched(f)
    sch.split(i, factors=[None, 4])
    i0, i1, jv = new_vars("i_0", "i_1", "j")
    check(sch, rebuilt(f, "B", [(i0, tir.floordiv(n + 3, 4)), (i1, 4), (jv, 8)],
                       [i0 * 4 + i1, jv], predicate=i0 * 4 + i1 < n))


def test_split_by_a_symbolic_factor():
    t = te.var("t")
    A = te.placeholder((16, 12), name="A")
    B = te.compute((16, 12), lambda i, j: A[i, j] * 2.0, name="B")
    f = te.create_prim_func([A, B, t])
    sch, (i, _) = sched(f)
    sch.split(i, factors=[None, t])
    i0, i1, jv = new_vars("i_0", "i_1", "j")
    check(sch, rebuilt(f, "B", [(i0, tir.floordiv(t + 15, t)), (i1, t), (jv, 12)],
                       [i0 * t + i1, jv], predicate=i0 * t + i1 < 16))


def test_split_nonzero_min():
    i, j = new_vars("i", "j")
    A = tir.decl_buffer((16, 16), "float32", "A")
    B = tir.decl_buffer((16, 16), "float32", "B")
    v0, v1 = tir.IterVar(16, tir.Var("v0")), tir.IterVar(16, tir.Var("v1"))
    store = tir.BufferStore(B, tir.BufferLoad(A, [v0.var, v1.var]) + 1.0, [v0.var, v1.var])
    block = tir.Block([v0, v1], "B", body=store)
    nest = tir.For(i, 3, 13, SERIAL, tir.For(j, 0, 16, SERIAL,
                                              tir.BlockRealize([i, j], True, block)))
    f = tir.PrimFunc([A, B], tir.BlockRealize([], True, tir.Block([], "root", body=nest)))
    sch = tir.Schedule(f)
    sch.split(sch.get_loops(sch.get_block("B"))[0], factors=[None, 4])
    i0, i1 = new_vars("i_0", "i_1")
    want = tir.For(i0, 0, 4, SERIAL, tir.For(i1, 0, 4, SERIAL, tir.For(
        j, 0, 16, SERIAL, tir.BlockRealize([i0 * 4 + i1 + 3, j], i0 * 4 + i1 < 13, block))))
    check(sch, tree.replace(f, {nest: want}))
    assert_same(f, sch)


@pytest.mark.parametrize("factors, rule", [
    ([None, None], "only one factor may be None"),
    ([0, None], "factor 0 is 0: factors must be positive"),
    ([None, -4], "factor 1 is -4: factors must be positive"),
    ([3, 5], r"the factors 3 \* 5 = 15 do not cover the extent 16"),
    ([], "factors must be a non-empty list"),
])
def test_split_errors(factors, rule):
    f = elementwise()
    sch, (i, _) = sched(f)
    with pytest.raises(tir.ScheduleError, match=f"split: loop i: {rule}"):
        sch.split(i, factors=factors)
    assert sch.mod["main"] is f and len(sch.trace) == 2  # unchanged, nothing recorded


def test_split_a_loop_that_is_gone():
    f = elementwise()
    sch, (i, _) = sched(f)
    sch.split(i, factors=[4, 4])
    with pytest.raises(tir.ScheduleError, match="loop i is no longer in the function"):
        sch.split(i, factors=[2, 8])
    with pytest.raises(tir.ScheduleError, match="split: loop i: .*no longer"):
        loop_prims.split(sch.mod["main"], i.var, [2, 8])


def test_split_and_fuse_refuse_annotated_loops():
    f = elementwise()
    sch, (i, j) = sched(f)
    sch.annotate(j, "pragma_x", 1)
    with pytest.raises(tir.ScheduleError, match="split: loop j: the loop has annotations"):
        sch.split(j, factors=[None, 4])
    with pytest.raises(tir.ScheduleError, match="fuse: loop j: the loop has annotations"):
        sch.fuse(i, j)


def test_split_guard_goes_to_every_block_under_the_loop():
    f = two_stages()
    i, j = new_vars("i", "j")
    rb, rc = tree.find_block(f, "B"), tree.find_block(f, "C")
    A, C = (f.buffer_map[p] for p in f.params)
    nest = tir.For(i, 0, 8, SERIAL, tir.For(j, 0, 6, SERIAL, tir.SeqStmt([
        tir.BlockRealize([i, j], True, rb.block), tir.BlockRealize([i, j], True, rc.block)])))
    root = tree.root_realize(f)
    g = f.with_body(tir.BlockRealize([], True, tir.node.replace(root.block, body=nest)))
    got, (j0, j1) = loop_prims.split(g, j, [4, 2])
    for name in ("B", "C"):
        r = tree.find_block(got, name)
        tir.assert_structural_equal(r.predicate, j0 * 2 + j1 < 6, map_free_vars=True)
    assert_same(g, got)


# ------------------------------------------------------------------ fuse


def test_fuse():
    f = elementwise()
    sch, (i, j) = sched(f)
    fused = sch.fuse(i, j)
    assert fused.var.name == "i_j_fused"
    fv = tir.Var("i_j_fused")
    check(sch, rebuilt(f, "B", [(fv, 192)], [tir.floordiv(fv, 12), tir.floormod(fv, 12)]))


def test_fuse_three_loops_of_a_reduction():
    f = matmul()
    sch, (i, j, k) = sched(f)
    sch.fuse(i, j, k)
    fv = tir.Var("i_j_k_fused")
    check(sch, rebuilt(f, "C", [(fv, 819)], [
        tir.floordiv(fv, 63), tir.floordiv(tir.floormod(fv, 63), 7), tir.floormod(fv, 7)]))
    assert_same(f, sch)


def test_fuse_split_round_trip():
    f = elementwise()
    sch, (i, j) = sched(f)
    io, ii = sch.split(i, factors=[4, 4])
    sch.fuse(io, ii)
    fv, jv = tir.Var("i_0_i_1_fused"), tir.Var("j")
    check(sch, rebuilt(f, "B", [(fv, 16), (jv, 12)], [fv, jv]))


def test_fuse_symbolic_extent():
    n = te.var("n")
    A = te.placeholder((n, 8), name="A")
    B = te.compute((n, 8), lambda i, j: A[i, j] + 1.0, name="B")
    f = te.create_prim_func([A, B])
    sch, (i, j) = sched(f)
    sch.fuse(i, j)
    fv = tir.Var("i_j_fused")
    check(sch, rebuilt(f, "B", [(fv, n * 8)], [tir.floordiv(fv, 8), tir.floormod(fv, 8)]))


def test_fuse_nonzero_min():
    i, j = new_vars("i", "j")
    A = tir.decl_buffer((16, 16), "float32", "A")
    B = tir.decl_buffer((16, 16), "float32", "B")
    v0, v1 = tir.IterVar(16, tir.Var("v0")), tir.IterVar(16, tir.Var("v1"))
    store = tir.BufferStore(B, tir.BufferLoad(A, [v0.var, v1.var]) + 1.0, [v0.var, v1.var])
    block = tir.Block([v0, v1], "B", body=store)
    nest = tir.For(i, 2, 14, SERIAL, tir.For(j, 5, 11, SERIAL,
                                              tir.BlockRealize([i, j], True, block)))
    f = tir.PrimFunc([A, B], tir.BlockRealize([], True, tir.Block([], "root", body=nest)))
    got, fv = loop_prims.fuse(f, [i, j])
    want = tir.For(fv, 0, 154, SERIAL, tir.BlockRealize(
        [tir.floordiv(fv, 11) + 2, tir.floormod(fv, 11) + 5], True, block))
    tir.assert_structural_equal(got, tree.replace(f, {nest: want}))
    assert_same(f, got)


def test_fuse_errors():
    f = elementwise()
    sch, (i, j) = sched(f)
    with pytest.raises(tir.ScheduleError,
                       match="fuse: loops j, i: loop i is not the only statement in the body of "
                       "loop j"):
        sch.fuse(j, i)
    f = two_stages()
    sch = tir.Schedule(f)
    (ib, _), (ic, _) = sch.get_loops(sch.get_block("B")), sch.get_loops(sch.get_block("C"))
    with pytest.raises(tir.ScheduleError, match="fuse: loops i, i: loop i is not the only"):
        sch.fuse(ib, ic)
    i, j = new_vars("i", "j")
    g = handwritten([(i, 16), (j, i + 1)], [i, j])
    with pytest.raises(tir.ScheduleError, match="fuse: loop j: its range depends on loop i"):
        loop_prims.fuse(g, [i, j])


# ------------------------------------------------------------------ reorder


def test_reorder_moves_the_reduction_loop_outward():
    f = matmul()
    sch, (i, j, k) = sched(f)
    sch.reorder(k, i)
    iv, jv, kv = new_vars("i", "j", "k")
    check(sch, rebuilt(f, "C", [(kv, 7), (jv, 9), (iv, 13)], [iv, jv, kv]))
    assert_same(f, sch)


def test_reorder_keeps_loops_not_given_in_place():
    f = matmul()
    sch, (i, j, k) = sched(f)
    io, ii = sch.split(i, factors=[None, 4])
    sch.reorder(k, ii, io)  # positions of io, ii, k hold k, ii, io; j stays second
    i0, i1, jv, kv = new_vars("i_0", "i_1", "j", "k")
    check(sch, rebuilt(f, "C", [(kv, 7), (i1, 4), (jv, 9), (i0, 4)],
                       [i0 * 4 + i1, jv, kv], predicate=i0 * 4 + i1 < 13))
    assert_same(f, sch)


def test_reorder_single_loop_is_a_no_op():
    f = elementwise()
    sch, (i, _) = sched(f)
    sch.reorder(i)
    assert sch.mod["main"] is f


def test_reorder_errors():
    f = elementwise()
    sch, (i, j) = sched(f)
    with pytest.raises(tir.ScheduleError, match="reorder: loop i: the loop is given more than"):
        sch.reorder(j, i, i)
    f = two_stages()
    sch = tir.Schedule(f)
    ib = sch.get_loops(sch.get_block("B"))[0]
    jc = sch.get_loops(sch.get_block("C"))[1]
    with pytest.raises(tir.ScheduleError, match="reorder: loops j, i: loop i is not on the path"):
        sch.reorder(jc, ib)


def test_reorder_needs_a_single_child_chain():
    i, j, k = new_vars("i", "j", "k")
    other = tir.Evaluate(0)
    g = handwritten([(i, 16), (j, 16)], [i, j],
                    stmts=lambda r: tir.SeqStmt([other, tir.For(k, 0, 1, SERIAL, r)]))
    with pytest.raises(tir.ScheduleError, match="reorder: loop j: its body is not just loop k"):
        loop_prims.reorder(g, [k, i])


def test_reorder_dependent_loop_cannot_move_above():
    i, j = new_vars("i", "j")
    g = handwritten([(i, 16), (j, 16 - i)], [i, j])
    with pytest.raises(tir.ScheduleError, match="reorder: loop j: its range depends on loop i"):
        loop_prims.reorder(g, [j, i])


def test_reorder_block_rules():
    i, j = new_vars("i", "j")
    g = handwritten([(i, 4), (j, 4)], [i * j, j])
    with pytest.raises(tir.ScheduleError, match=r"reorder: block B: the binding v0 = i \* j is "
                       "not affine"):
        loop_prims.reorder(g, [j, i])
    g = handwritten([(i, 16), (j, 16)], [i, j],
                    iter_types=[tir.IterVarType.DataPar, tir.IterVarType.Ordered])
    with pytest.raises(tir.ScheduleError, match="reorder: block B: iter var v1 is neither"):
        loop_prims.reorder(g, [j, i])
    # a binding affine after a fuse (floordiv/floormod by constants) is fine
    f = elementwise()
    sch, (i2, j2) = sched(f)
    fused = sch.fuse(i2, j2)
    o, inner = sch.split(fused, factors=[None, 8])
    sch.reorder(inner, o)
    assert_same(f, sch)


# ------------------------------------------------------------------ kinds


def test_parallel_vectorize_unroll():
    f = matmul()
    sch, (i, j, k) = sched(f)
    sch.parallel(i)
    sch.unroll(k)
    sch.vectorize(j)
    iv, jv, kv = new_vars("i", "j", "k")
    check(sch, rebuilt(f, "C", [(iv, 13, PARALLEL), (jv, 9, VECTORIZED), (kv, 7, UNROLLED)],
                       [iv, jv, kv]))
    assert_same(f, sch)


def test_reduction_loop_cannot_be_vectorized_or_parallel():
    f = matmul()
    sch, (_, _, k) = sched(f)
    for how in ("vectorize", "parallel"):
        with pytest.raises(tir.ScheduleError, match=f"{how}: loop k of block C: iter var v_k is "
                           "a reduction iter var bound to the loop"):
            getattr(sch, how)(k)
    sch.unroll(k)  # unroll has no check


def test_parallel_needs_compact_dataflow():
    i, j = new_vars("i", "j")
    A = tir.decl_buffer((16,), "float32", "A")
    v = tir.IterVar(16, tir.Var("v"))
    # B[v] += A[v] with no init: neither a complete block nor a reduction block
    body = tir.BufferStore(A, tir.BufferLoad(A, [v.var]) + 1.0, [v.var])
    realize = tir.BlockRealize([i], True, tir.Block([v], "inc", body=body))
    f = tir.PrimFunc([A], tir.BlockRealize([], True, tir.Block(
        [], "root", body=tir.For(i, 0, 16, SERIAL, realize))))
    with pytest.raises(tir.ScheduleError, match="parallel: loop i of block inc: the block is "
                       r"neither complete \(it reads a buffer it writes\)"):
        annotate_prims.set_kind(f, i, "parallel")
    assert annotate_prims.set_kind(f, i, "unroll") is not f


def test_set_kind_rejects_unknown_kinds():
    f = elementwise()
    with pytest.raises(ValueError, match="kind must be one of"):
        annotate_prims.set_kind(f, tree.loops_above(f, tree.find_block(f, "B"))[0], "tensorize")


# ------------------------------------------------------------------ annotate


def test_annotate_and_unannotate_loop_and_block():
    f = elementwise()
    sch, (i, j) = sched(f)
    b = sch.get_block("B")
    sch.annotate(i, "pragma_unroll", 4)
    sch.annotate(b, "meta", "x")
    sch.annotate(b, "meta", "y")  # a second annotate replaces the value
    iv, jv = new_vars("i", "j")
    want = rebuilt(f, "B", [(iv, 16, SERIAL, {"pragma_unroll": 4}), (jv, 12)], [iv, jv])
    realize = tree.find_block(want, "B")
    block = tir.node.replace(realize.block, annotations={"meta": "y"})
    want = tree.replace(want, {realize: tir.node.replace(realize, block=block)})
    check(sch, want)
    sch.unannotate(i, "pragma_unroll")
    sch.unannotate(b, "meta")
    check(sch, f)
    with pytest.raises(tir.ScheduleError, match="unannotate: loop i: no annotation 'meta'"):
        sch.unannotate(i, "meta")
    with pytest.raises(tir.ScheduleError, match="unannotate: block B: no annotation 'meta'"):
        sch.unannotate(b, "meta")


# ------------------------------------------------------------------ trace


def test_trace_lists_the_calls():
    f = matmul()
    sch = tir.Schedule(f)
    i, j, k = sch.get_loops(sch.get_block("C"))
    io, ii = sch.split(i, factors=[None, 4])
    sch.reorder(k, io)
    fused = sch.fuse(ii, j)
    sch.vectorize(fused)
    sch.annotate(io, "a", 1)
    assert str(sch.trace).splitlines() == [
        "b0 = sch.get_block('C')",
        "l1, l2, l3 = sch.get_loops(b0)",
        "l4, l5 = sch.split(l1, factors=[None, 4])",
        "sch.reorder(l3, l4)",
        "l6 = sch.fuse(l5, l2)",
        "sch.vectorize(l6)",
        "sch.annotate(l4, 'a', 1)",
    ]
    assert_same(f, sch)


# ------------------------------------------------------------------ differential


def test_non_dividing_split_with_vectorized_inner_loop():
    f = elementwise(13, 7)
    sch, (i, j) = sched(f)
    _, ji = sch.split(j, factors=[None, 4])
    sch.vectorize(ji)
    assert_same(f, sch)
    f = matmul()
    sch, (i, j, k) = sched(f)
    jo, ji = sch.split(j, factors=[None, 8])
    sch.reorder(k, ji)
    sch.vectorize(ji)
    sch.parallel(i)
    assert_same(f, sch)


def _random_schedule(f, rng):
    """Up to six random legal loop primitives on the only block of ``f``."""
    sch = tir.Schedule(f)
    name = tree.blocks(f)[0].block.name_hint
    for _ in range(rng.randint(1, 6)):
        loops = sch.get_loops(sch.get_block(name))
        op = rng.choice(["split", "split", "fuse", "reorder", "kind"])
        if op == "split":
            loop = rng.choice(loops)
            factors = [rng.randint(1, 6), None]
            rng.shuffle(factors)
            sch.split(loop, factors=factors)
        elif op == "fuse" and len(loops) > 1:
            at = rng.randrange(len(loops) - 1)
            sch.fuse(loops[at], loops[at + 1])
        elif op == "reorder" and len(loops) > 1:
            picked = rng.sample(loops, rng.randint(2, len(loops)))
            sch.reorder(*picked)
    for loop in sch.get_loops(sch.get_block(name)):
        kind = rng.choice(["vectorize", "unroll", "parallel", None, None])
        if kind is None:
            continue
        try:
            getattr(sch, kind)(loop)
        except tir.ScheduleError as e:  # only a reduction loop may refuse
            assert "reduction iter var" in str(e)
    return sch


@pytest.mark.parametrize("seed", range(30))
def test_random_loop_schedules(seed):
    rng = random.Random(seed)
    f = matmul(9, 11, 5) if seed % 2 else elementwise(13, 7)
    sch = _random_schedule(f, rng)
    assert tir.verify_well_formed(sch.mod["main"]), str(sch.trace)
    try:
        assert_same(f, sch, seed=seed)
    except AssertionError as e:
        raise AssertionError(f"{e}\ntrace:\n{sch.trace}") from None


def _matmul_func(n=12, m=20, k=6):
    A = te.placeholder((n, k), name="A")
    B = te.placeholder((k, m), name="B")
    r = te.reduce_axis((0, k), name="r")
    C = te.compute((n, m), lambda i, j: te.sum(A[i, r] * B[r, j], axis=r), name="C")
    return te.create_prim_func([A, B, C])


def test_vectorize_and_parallel_after_decompose_reduction():
    """TVM wants loops annotated before decompose_reduction; tirlite takes either order."""
    func = _matmul_func()
    sch = tir.Schedule(func)
    block = sch.get_block("C")
    i, j, r = sch.get_loops(block)
    sch.reorder(i, r, j)
    sch.decompose_reduction(block, r)
    sch.vectorize(j)
    sch.parallel(i)  # holds both C_init and the decomposed C: one reduction
    kinds = {f.loop_var.name: f.kind for f, _ in tree.walk(sch.mod["main"].body)
             if isinstance(f, tir.For)}
    assert kinds["i"] == tir.ForKind.PARALLEL and kinds["j"] == tir.ForKind.VECTORIZED
    assert_same(func, sch)


def test_a_block_without_init_reading_other_elements_of_its_output_is_not_a_reduction():
    """C[i] = C[i] + C[i - 1]-like updates are not decomposed reductions: no parallel."""
    n = 8
    C = tir.decl_buffer((n,), name="C")
    i, r = tir.Var("i"), tir.Var("r")
    vi = tir.IterVar(n, tir.Var("vi"), tir.IterVarType.DataPar)
    vr = tir.IterVar(2, tir.Var("vr"), tir.IterVarType.CommReduce)
    prev = tir.max(vi.var - 1, 0)
    body = tir.BufferStore(C, C[vi.var] + C[prev], [vi.var])
    block = tir.Block([vi, vr], "C", body=body)
    nest = tir.For(i, 0, n, tir.ForKind.SERIAL, tir.For(
        r, 0, 2, tir.ForKind.SERIAL, tir.BlockRealize([i, r], True, block)))
    func = tir.PrimFunc([C], tir.BlockRealize([], True, tir.Block([], "root", body=nest)))
    sch = tir.Schedule(func)
    with pytest.raises(tir.ScheduleError, match="parallel: loop i of block C: .*no init"):
        sch.parallel(sch.get_loops(sch.get_block("C"))[0])
