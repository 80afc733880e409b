"""The LLVM backend on scalable (SVE) vectors: every construct verifies and emits asm.

Kernels come from scalable_kernels.py (hand-built TIR with ``k * vscale()``
lanes); the checks after them are TVM's scalable codegen tests
(tests/python/codegen/test_target_codegen_llvm_vla.py) on our backend. The
SVE asm checks of LLVM's own loop vectorizer (TVM's test_target_codegen_aarch64.py)
are in test_scalable_aarch64_asm.py.
"""

from __future__ import annotations

import re

import pytest
import scalable_kernels as K

import codegen
import tir
import transform

SVE = "llvm -mtriple=aarch64-linux-gnu -mattr=+sve"

#: What each kernel's optimized LLVM IR must contain (besides scalable types).
_IR_CHECKS = {
    "arith": [r"\bsdiv <vscale x|\budiv <vscale x|\bfdiv <vscale x"],
    "logic": [r"select <vscale x \d+ x i1>|select <vscale x", r"icmp|fcmp"],
    "convert": [r" to <vscale x \d+ x "],
    "if_then_else": [r"select <vscale x"],
    "predicated": [r"@llvm\.masked\.load\.nxv", r"@llvm\.masked\.store\.nxv",
                   r"@llvm\.get\.active\.lane\.mask\.nxv"],
    "gather_scatter": [r"@llvm\.masked\.gather\.nxv", r"@llvm\.masked\.scatter\.nxv"],
    "reductions": [r"@llvm\.vector\.reduce\.\w+\.nxv"],
    "accumulate": [r"@llvm\.vector\.reduce\.add\.nxv|@llvm\.vector\.reduce\.fadd\.nxv"],
    "vscale_index": [r"@llvm\.vscale\.i32"],
}


def _build(func, target=SVE, **config):
    with transform.PassContext(config=config):
        return codegen.build(func, target=target)


@pytest.mark.parametrize("dtype", K.ALL)
@pytest.mark.parametrize("name", list(K.KERNELS))
def test_every_scalable_construct_verifies_and_emits_sve(name, dtype):
    mod = _build(K.KERNELS[name].make(dtype))  # build parses and verifies the IR
    ll = mod.get_source("ll")
    for pattern in _IR_CHECKS[name]:
        assert re.search(pattern, ll), pattern
    asm = mod.get_source("asm")
    if name != "vscale_index":  # that one is scalar code with vscale-dependent indices
        assert re.search(r"<vscale x \d+ x (i\d+|half|float|double)>", ll)
        assert re.search(r"\bz\d+\.[bhsd]", asm)  # SVE registers
    else:
        assert re.search(r"\b(rdvl|cnt[bhwd])\b", asm)  # vscale read from the hardware


def test_float_product_of_a_scalable_vector_runs_in_lane_order():
    """llvm.vector.reduce.fmul on a scalable vector aborts LLVM: we emit a lane loop."""
    vl = 4 * tir.vscale()
    A = tir.decl_buffer((64,), "float32", name="A")
    O = tir.decl_buffer((2,), "float32", name="O")
    a = tir.BufferLoad(A, [tir.Ramp(0, 1, vl)])
    body = tir.SeqStmt([
        tir.BufferStore(O, tir.Call("float32", "tir.vector_reduce_mul", [a]), [0]),
        tir.BufferStore(O, tir.Call("float32", "tir.vector_reduce_mul_reassoc", [a]), [1])])
    ll = _build(tir.PrimFunc([A, O], body)).get_source("ll")
    assert re.search(r"extractelement <vscale x 4 x float>", ll)  # the ordered product
    assert re.findall(r"call (\w+ )?float @llvm\.vector\.reduce\.fmul", ll) == ["reassoc "]


def test_bool_reductions_of_a_scalable_mask():
    vl = 4 * tir.vscale()
    A = tir.decl_buffer((64,), "int32", name="A")
    O = tir.decl_buffer((2,), "bool", name="O")
    positive = tir.GT(tir.BufferLoad(A, [tir.Ramp(0, 1, vl)]), tir.Broadcast(0, vl))
    body = tir.SeqStmt([
        tir.BufferStore(O, tir.Call("bool", f"tir.vector_reduce_{kind}", [positive]), [k])
        for k, kind in enumerate(("and", "or"))])
    ll = _build(tir.PrimFunc([A, O], body)).get_source("ll")
    assert "@llvm.vector.reduce.and.nxv4i1" in ll and "@llvm.vector.reduce.or.nxv4i1" in ll


@pytest.mark.parametrize("dtype", ["float32", "int8"])
def test_scalable_allocations_are_scalable_stack_slots(dtype):
    """`k * vscale()` elements, or elements of a scalable dtype: `alloca <vscale x ...>`,
    never aligned_alloc; LLVM's O3 keeps them in registers."""
    func = K.KERNELS["accumulate"].make(dtype)
    k = K.lanes_for(dtype)
    elem = "float" if dtype == "float32" else "i8"
    raw = _build(func, **{"codegen.llvm.opt_level": 0}).get_source("ll")
    assert f"alloca <vscale x {2 * k} x {elem}>" in raw  # acc[2 * k * vscale]
    assert f"alloca <vscale x {k} x {elem}>" in raw  # vacc[1] of dtype <vscale x k x T>
    assert "aligned_alloc" not in raw
    assert "alloca" not in _build(func).get_source("ll")


def test_a_large_scalable_allocation_goes_to_the_heap_sized_by_vscale():
    vl = 4 * tir.vscale()
    A = tir.decl_buffer((4,), "float32", name="A")
    big = tir.decl_buffer((1,), "float32xvscalex4", name="big")
    store = tir.BufferStore(big, tir.Broadcast(tir.const(1.0), vl), [0])
    read = tir.BufferStore(A, tir.Call("float32", "tir.vector_reduce_add",
                                       [tir.BufferLoad(big, [0])]), [0])
    body = tir.Allocate(big.data, big.dtype, [4096], tir.const(True), tir.SeqStmt([store, read]))
    ll = _build(tir.PrimFunc([A], body), **{"codegen.llvm.opt_level": 0}).get_source("ll")
    assert "aligned_alloc" in ll and "@llvm.vscale.i32" in ll


# ---------------------------------------------------------------- TVM's VLA codegen tests


def test_codegen_vscale():
    A = tir.decl_buffer((5,), "int32", name="A")
    i = tir.Var("i", "int32")
    body = tir.For(i, 0, 5, tir.ForKind.SERIAL, tir.BufferStore(A, 2 * tir.vscale(), [i]))
    assert "llvm.vscale.i32" in _build(tir.PrimFunc([A], body)).get_source("ll")


def test_scalable_buffer_load_store():
    A = tir.decl_buffer((128,), "float32", name="A")
    B = tir.decl_buffer((128,), "float32", name="B")
    r = tir.Ramp(0, 1, 4 * tir.vscale())
    ll = _build(tir.PrimFunc([A, B], tir.BufferStore(B, tir.BufferLoad(A, [r]), [r]))) \
        .get_source("ll")
    assert re.search(r"load <vscale x 4 x float>", ll)
    assert re.search(r" store <vscale x 4 x float>", ll)


def test_scalable_broadcast():
    A = tir.decl_buffer((128,), "float32", name="A")
    vl = 4 * tir.vscale()
    store = tir.BufferStore(A, tir.Broadcast(tir.const(1.0), vl), [tir.Ramp(0, 1, vl)])
    ll = _build(tir.PrimFunc([A], store)).get_source("ll")
    assert ("shufflevector (<vscale x 4 x float> insertelement (<vscale x 4 x float>" in ll
            or "store <vscale x 4 x float> splat (float 1.000000e+00)" in ll)
    assert re.search(r" store <vscale x 4 x float>", ll)
    raw = _build(tir.PrimFunc([A], store), **{"codegen.llvm.opt_level": 0}).get_source("ll")
    assert re.search(r"shufflevector <vscale x 4 x float> .*, <vscale x 4 x i32> zeroinitializer",
                     raw)


def test_get_active_lane_mask():
    A = tir.decl_buffer((30,), "bool", name="A")
    i = tir.Var("i", "int32")
    vl = 4 * tir.vscale()
    mask = tir.op.get_active_lane_mask("uint1xvscalex4", i, 30)
    body = tir.For(i, 0, tir.floordiv(30 + vl - 1, vl), tir.ForKind.SERIAL,
                   tir.BufferStore(A, mask, [tir.Ramp(i, 1, vl)]))
    assert "get.active.lane.mask" in _build(tir.PrimFunc([A], body)).get_source("ll")


def test_predicated_scalable_buffer():
    """TVM's After form of `if i_0 * 4 * vscale + i_1 < 14: B[..] = A[..] + 1.0`."""
    A = tir.decl_buffer((16,), "float32", name="A")
    B = tir.decl_buffer((16,), "float32", name="B")
    i0 = tir.Var("i_0", "int32")
    vl = 4 * tir.vscale()
    base = i0 * vl
    mask = tir.op.get_active_lane_mask("uint1xvscalex4", base, 14)
    r = tir.Ramp(base, 1, vl)
    value = tir.BufferLoad(A, [r], predicate=mask) + tir.Broadcast(tir.const(1.0), vl)
    body = tir.For(i0, 0, tir.floordiv(16 + vl - 1, vl), tir.ForKind.SERIAL,
                   tir.BufferStore(B, value, [r], predicate=mask))
    ll = _build(tir.PrimFunc([A, B], body)).get_source("ll")
    assert "get.active.lane.mask" in ll
    assert "llvm.masked.load" in ll
    assert "llvm.masked.store" in ll


def _add_one():
    n = tir.size_var("m")
    A = tir.decl_buffer((n,), "float32", name="A")
    C = tir.decl_buffer((n,), "float32", name="C")
    i = tir.Var("i", "int32")
    body = tir.BufferStore(C, tir.BufferLoad(A, [i]) + tir.const(1.0), [i])
    return tir.PrimFunc([A, C], tir.For(i, 0, n, tir.ForKind.SERIAL, body))


@pytest.mark.parametrize("mattr,expect_attr", [
    ("+neon", False),
    ("+sve", True),
    ("+v9a", False),  # LLVM >= 19: Armv9.0-A does not imply SVE
    ("+sme", True),
    ("+sve2", True),
    ("+sve,-sve", False),
])
def test_vscale_range_function_attribute(mattr, expect_attr):
    target = f"llvm -mtriple=aarch64-linux-gnu -mattr={mattr}"
    ll = _build(_add_one(), target=target).get_source("ll")
    attrs = re.findall(r"vscale_range\(\d+,\d+\)", ll)
    if expect_attr:
        assert attrs and set(attrs) == {"vscale_range(1,16)"}
    else:
        assert not attrs


def test_non_sve_ir_has_no_vscale_range():
    ll = _build(_add_one(), target="llvm -mtriple=x86_64-linux-gnu -mcpu=skylake").get_source("ll")
    assert "vscale_range" not in ll
