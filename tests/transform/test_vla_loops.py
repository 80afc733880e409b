"""Vector-length-agnostic loops on SVE targets: StripMineVectorLoops and VectorizeReductions.

On a target with ``+sve`` a vectorized loop that needs strip-mining becomes
seed 000's VLA loop (every vector predicated by ``get_active_lane_mask``)
and a reduction accumulates in a scalable vector; on x86 the same loops keep
fixed vectors. Structural tests against the expected IR, then the IR
``codegen.build`` emits, then the interpreter at several vscales.
"""

import numpy as np
import pytest

import codegen
import tir
import transform
from codegen.interp.backend import build_interpreter
from tir import ir_builder
from tir.expr import Broadcast, BufferLoad, Call, Ramp
from tir.stmt import BufferStore, For, ForKind, IfThenElse
from transform.vector.tail import PREDICATE_TAIL, STRIP_MINED, vla_loop
from transform.vector.vector_length import is_scalable_extent, scalable_vector_length

SVE = "llvm -mtriple=aarch64-linux-gnu -mattr=+sve"
X86 = "llvm -mtriple=x86_64-linux-gnu -mcpu=skylake-avx512"
VL4 = tir.vscale() * 4


def saxpy(dtype="float32", extent=None):
    n = tir.size_var("n")
    X = tir.decl_buffer((n,), dtype, name="X")
    Y = tir.decl_buffer((n,), dtype, name="Y")
    ib = ir_builder.create()
    x, y = ib.buffer_ptr(X), ib.buffer_ptr(Y)
    with ib.for_range(0, n if extent is None else extent, kind="vectorize", name="i") as i:
        y[i] = tir.const(2, dtype) * x[i] + y[i]
    return tir.PrimFunc([X, Y], ib.get())


def total(dtype="float32", conditional=False):
    n = tir.size_var("n")
    A = tir.decl_buffer((n,), dtype, name="A")
    S = tir.decl_buffer((1,), dtype, name="S")
    ib = ir_builder.create()
    a, s = ib.buffer_ptr(A), ib.buffer_ptr(S)
    with ib.for_range(0, n, kind="vectorize", name="i") as i:
        if conditional:
            with ib.if_scope(a[i] > tir.const(0, dtype)):
                s[0] = s[0] + a[i]
        else:
            s[0] = s[0] + a[i]
    return tir.PrimFunc([A, S], ib.get())


def strip_mine(func, target):
    mod = tir.IRModule.from_expr(func.with_attr("target", target))
    return transform.StripMineVectorLoops()(mod)["main"]


def test_symbolic_loop_on_sve_becomes_one_predicated_vla_loop():
    func = saxpy()
    after = strip_mine(func, SVE)
    outer = after.body
    assert isinstance(outer, For) and outer.kind == ForKind.SERIAL
    inner = outer.body
    assert inner.kind == ForKind.VECTORIZED and is_scalable_extent(inner.extent)
    assert tir.expr.scalable_factor(inner.extent) == 4  # float32: 128 / 32 lanes per vscale
    assert isinstance(inner.body, IfThenElse)  # the guard i_outer * VL + i < n
    assert inner.annotations[PREDICATE_TAIL]  # the guard becomes get_active_lane_mask


def test_vla_loop_is_the_expected_ir():
    func = saxpy()
    loop = func.body
    X, Y = (func.buffer_map[p] for p in func.params)
    after = vla_loop(loop, VL4, "note")
    i_outer, i = after.loop_var, after.body.loop_var
    n = X.shape[0]
    done = i_outer * VL4 + i
    body = IfThenElse(done < n, BufferStore(Y, tir.const(2, "float32") * X[done] + Y[done],
                                            [done]))
    steps = (n - 1) // VL4 + 1
    expected = For(i_outer, 0, steps, ForKind.SERIAL, For(
        i, 0, VL4, ForKind.VECTORIZED, body,
        {STRIP_MINED: "note", PREDICATE_TAIL: True}))
    tir.assert_structural_equal(after, expected)


@pytest.mark.parametrize("dtype, factor", [("float32", 4), ("float64", 2), ("int8", 16),
                                           ("int16", 8)])
def test_scalable_vector_length_follows_the_widest_element(dtype, factor):
    func = saxpy(dtype)
    vl, note = scalable_vector_length(func.body)
    assert tir.expr.scalable_factor(vl) == factor
    assert "vscale x 128 bits" in note


def test_vector_length_annotation_keeps_fixed_vectors_on_sve():
    func = saxpy()
    loop = func.body
    annotated = func.with_body(tir.node.replace(loop, annotations={"tir.vector_length": 4}))
    after = strip_mine(annotated, SVE)
    main, tail = after.body.seq  # full vectors, then the peeled tail
    assert main.body.extent.value == 4 and tail.extent.value == 4  # the user chose 4


def test_fixed_target_keeps_fixed_strip_mining():
    after = strip_mine(saxpy(), X86)
    main, tail = after.body.seq
    assert main.body.extent.value == 16 and tail.extent.value == 16  # AVX-512 float32


def test_scalable_loop_written_by_hand_is_left_to_vectorize_loop():
    func = saxpy(extent=VL4)
    assert strip_mine(func, SVE).body is func.body


def test_vla_build_is_scalable_and_predicated():
    mod = codegen.build(saxpy(), target=SVE)
    ll = mod.get_source("ll")
    assert "<vscale x 4 x float>" in ll and "llvm.get.active.lane.mask.nxv4i1" in ll
    assert "llvm.masked.load.nxv4f32" in ll and "llvm.masked.store.nxv4f32" in ll
    [remark] = mod.remarks
    assert remark.lanes == "vscale x 4" and remark.outcome == "predicated"


@pytest.mark.parametrize("vscale", [1, 2, 4, 16])
@pytest.mark.parametrize("n", [0, 1, 5, 37, 64])
def test_vla_saxpy_in_the_interpreter(vscale, n):
    lowered = codegen.lower(saxpy(), SVE)
    run = build_interpreter(lowered, vscale=vscale)
    rng = np.random.default_rng(n + vscale)
    x = rng.standard_normal(n).astype("float32")
    y = rng.standard_normal(n).astype("float32")
    expected = np.float32(2) * x + y
    run(x, y)
    np.testing.assert_array_equal(y, expected)


# ---------------------------------------------------------------- reductions

def test_sum_on_sve_accumulates_in_a_scalable_vector():
    lowered = codegen.lower(total(), SVE)["main"]
    text = str(lowered)
    assert "T.allocate([T.vscale() * 4]" in text
    assert "tir.vector_reduce_add_reassoc" in text and "get_active_lane_mask" in text
    with transform.collect_remarks() as remarks:
        codegen.lower(total(), SVE)
    assert any("an accumulator of vscale x 4 lanes" in r.line for r in remarks)


def test_sum_on_sve_llvm_reduces_a_scalable_vector():
    ll = codegen.build(total(), target=SVE).get_source("ll")
    assert "llvm.vector.reduce.fadd.nxv4f32" in ll


def test_ordered_float_sum_on_sve_keeps_the_fixed_ordered_plan():
    with transform.PassContext(config={"tir.vectorize.ordered_reductions": True}):
        text = str(codegen.lower(total(), SVE)["main"])
    assert "vscale" not in text  # the serial order needs fixed vectors folded in order


@pytest.mark.parametrize("dtype", ["float32", "int32", "int8", "float64"])
@pytest.mark.parametrize("conditional", [False, True], ids=["sum", "conditional_sum"])
@pytest.mark.parametrize("vscale", [1, 4, 16])
def test_scalable_sum_in_the_interpreter(dtype, conditional, vscale):
    lowered = codegen.lower(total(dtype, conditional), SVE)
    run = build_interpreter(lowered, vscale=vscale)
    rng = np.random.default_rng(vscale)
    for n in (0, 1, 7, 100):
        a = (rng.standard_normal(n) * 10).astype(dtype)
        s = np.array([3], dtype)
        run(a, s)
        picked = a[a > 0] if conditional else a
        if dtype.startswith("float"):
            expected = np.float64(3) + picked.astype("float64").sum()
            assert abs(float(s[0]) - expected) <= 1e-5 * (1 + np.abs(picked).sum())
        else:
            assert s[0] == np.array([3], dtype)[0] + picked.sum(dtype=dtype)


def test_predicated_scalable_buffer_through_the_vectorizer():
    """TVM's test_predicated_scalable_buffer: written with a scalable vectorized loop and a
    tail guard, built for SVE, the IR has the lane mask and masked loads and stores."""
    A = tir.decl_buffer((16,), "float32", name="A")
    B = tir.decl_buffer((16,), "float32", name="B")
    i0, i1 = tir.var("i_0"), tir.var("i_1")
    idx = i0 * 4 * tir.vscale() + i1
    body = For(i0, 0, tir.ceildiv(16, 4 * tir.vscale()), ForKind.SERIAL, For(
        i1, 0, 4 * tir.vscale(), ForKind.VECTORIZED,
        IfThenElse(idx < 14, BufferStore(B, A[idx] + tir.const(1.0, "float32"), [idx]))))
    func = tir.PrimFunc([A, B], body)
    lowered = codegen.lower(func, SVE)["main"]
    vector = lowered.body.body
    assert isinstance(vector, BufferStore) and isinstance(vector.predicate, Call)
    assert vector.predicate.op == "tir.get_active_lane_mask"
    assert isinstance(vector.indices[0], Ramp) and isinstance(vector.value.a, BufferLoad)
    assert vector.value.a.predicate is not None and isinstance(vector.value.b, Broadcast)
    ll = codegen.build(func, target=SVE).get_source("ll")
    assert "get.active.lane.mask" in ll
    assert "llvm.masked.load" in ll
    assert "llvm.masked.store" in ll


def test_vla_loop_the_vectorizer_cannot_widen_stays_serial():
    """A strip-mined loop (ours, not the user's) whose body holds a fixed vector cannot
    become scalable: it stays a serial loop with a remark, where a user's own
    ``k * vscale()`` loop would be TVM's error."""
    n = tir.size_var("n")
    A = tir.decl_buffer((n,), "float32", name="A")
    B = tir.decl_buffer((n,), "float32", name="B")
    i = tir.var("i")
    pick = tir.Shuffle([Broadcast(A[i], 2)], [1])  # a 2-lane vector per iteration
    func = tir.PrimFunc([A, B], For(i, 0, n, ForKind.VECTORIZED,
                                    BufferStore(B, A[i] + pick, [i])))
    with transform.collect_remarks() as remarks:
        lowered = codegen.lower(func, SVE)
    [remark] = [r for r in remarks if r.loop_var == "i"]
    assert remark.outcome == "not vectorized"
    assert "Creating scalable vectors from existing vectors" in remark.reason
    for vscale in (1, 4):
        a = np.arange(9, dtype="float32")
        b = np.zeros(9, "float32")
        build_interpreter(lowered, vscale=vscale)(a, b)
        np.testing.assert_array_equal(b, 2 * a)
