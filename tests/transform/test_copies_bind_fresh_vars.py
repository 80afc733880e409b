"""Passes that repeat a loop body (unrolling, strip-mining, reductions) bind fresh vars in
each copy: their output is well formed, and every access still names a bound buffer."""

import numpy as np
import pytest

import codegen
import tir
import transform
from tir import ir_builder
from tir.expr import BufferLoad
from tir.functor import copy_with_fresh_binders, post_order_visit
from tir.stmt import Allocate, BufferStore, For, ForKind, SeqStmt

F32 = "float32"


def busy_loop(n, with_sum=True):
    """A vectorized loop whose body binds an inner loop var, a let var and an allocation."""
    A = tir.decl_buffer((n,), F32, name="A")
    B = tir.decl_buffer((n,), F32, name="B")
    S = tir.decl_buffer((1,), F32, name="S")
    ib = ir_builder.create()
    a, b, s = (ib.buffer_ptr(x) for x in (A, B, S))
    s[0] = tir.const(0, F32)
    with ib.for_range(0, n, kind="vectorize", name="i") as i:
        t = ib.allocate(F32, (2,), name="t")
        x = ib.let("x", a[i] * tir.const(2, F32))
        t[0] = x
        with ib.for_range(0, 2, name="k") as k:
            t[1] = t[0] + tir.Cast(F32, k)
        b[i] = t[1]
        if with_sum:
            s[0] = s[0] + a[i]
    return tir.PrimFunc([A, B, S], ib.get())


@pytest.mark.parametrize("n", [tir.size_var("n"), 37, 100])
def test_the_build_pipeline_output_is_well_formed(n):
    lowered = codegen.lower(busy_loop(n))
    assert tir.verify_well_formed(lowered)  # raises, naming the var, if one is bound twice


def test_busy_loop_computes_what_its_serial_build_computes():
    func = busy_loop(tir.size_var("n"))
    with transform.PassContext(config={"codegen.llvm.fp_contract": False}):
        vec = codegen.build(func)["main"]
    with transform.PassContext(config={"tir.disable_vectorize": True,
                                       "codegen.llvm.fp_contract": False}):
        ser = codegen.build(func)["main"]
    for size in (0, 1, 17, 70):
        a = np.random.default_rng(size).standard_normal(size).astype(F32)
        outs = []
        for run in (vec, ser):
            b, s = np.zeros(size, F32), np.zeros(1, F32)
            run(a, b, s)
            outs.append((b, s))
        np.testing.assert_array_equal(outs[0][0], outs[1][0])
        assert abs(outs[0][1][0] - outs[1][1][0]) <= 1e-5 * (1 + np.abs(a).sum())


def _dangling(stmt):
    """Accesses inside an Allocate that name its buffer but not its (maybe renewed) var."""
    bad = []

    def check(node):
        if isinstance(node, Allocate):
            post_order_visit(node.body, lambda m: bad.append(m) if isinstance(
                m, (BufferLoad, BufferStore)) and m.buffer.name == node.buffer_var.name
                and m.buffer.data is not node.buffer_var else None)

    post_order_visit(stmt, check)
    return bad


def test_a_var_allocated_twice_in_one_body_gets_two_fresh_vars_in_a_copy():
    """Two allocations of one var in sequence (strip-mining used to leave them): each copy's
    stores must name the copy's own var (an unrolled build once failed: 't' not bound)."""
    buf = tir.decl_buffer((2,), F32, name="t")
    i = tir.var("i")

    def alloc():
        return Allocate(buf.data, F32, [2], tir.const(True, "bool"),
                        BufferStore(buf, tir.Cast(F32, i), [0]))

    loop = For(i, 0, 3, ForKind.UNROLLED, SeqStmt([alloc(), alloc()]))
    copy = copy_with_fresh_binders(loop.body, {i: tir.const(1, "int32")})
    assert _dangling(copy) == []
    unrolled = transform.UnrollLoop()(tir.IRModule.from_expr(
        tir.PrimFunc([], loop)))["main"].body
    assert _dangling(unrolled) == []
