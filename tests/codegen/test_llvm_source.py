"""What the generated code looks like: vector widths, blends, target instructions."""

import numpy as np
import pytest

import codegen
import tir
from tir import ir_builder

AARCH64 = "llvm -mtriple=aarch64-linux-gnu"


def vector_add(lanes=8, kind="vectorize"):
    """C = A + B over (n, lanes) buffers with the inner loop of ``kind``."""
    n = tir.size_var("n")
    bufs = [tir.decl_buffer((n, lanes), "float32", name=x) for x in "ABC"]
    ib = ir_builder.create()
    a, b, c = (ib.buffer_ptr(x) for x in bufs)
    with ib.for_range(0, n, name="i") as i, ib.for_range(0, lanes, kind=kind, name="j") as j:
        c[i, j] = a[i, j] + b[i, j]
    return tir.PrimFunc(bufs, ib.get())


def test_vector_add_uses_the_host_vector_width():
    """As many float lanes as the host's widest register holds, in registers of that width."""
    host = codegen.Target("llvm")
    lanes = host.vector_width_bits // 32
    mod = codegen.build(vector_add(lanes))
    assert f"<{lanes} x float>" in mod.get_source("ll")
    if host.arch == "x86_64":
        register = {128: "%xmm", 256: "%ymm", 512: "%zmm"}[host.vector_width_bits]
        assert register in mod.get_source("asm")
    a = np.random.default_rng(0).standard_normal((100, lanes), dtype=np.float32)
    c = np.empty_like(a)
    mod(a, a, c)
    np.testing.assert_array_equal(c, a + a)


def test_vector_select_is_a_blend_without_branches():
    A = tir.decl_buffer((64,), "float32", name="A")
    B = tir.decl_buffer((64,), "float32", name="B")
    i = tir.Var("i", "int32")
    ramp = tir.Ramp(i * 8, 1, 8)
    x = tir.BufferLoad(A, [ramp])
    zero = tir.Broadcast(tir.const(0.0), 8)
    body = tir.BufferStore(B, tir.Select(x > zero, x, x * tir.Broadcast(tir.const(0.1), 8)),
                           [ramp])
    mod = codegen.build(tir.PrimFunc([A, B], tir.For(i, 0, 8, tir.ForKind.SERIAL, body)))
    ll = mod.get_source("ll")
    body_ir = ll[ll.index("define"):]
    assert "select <8 x i1>" in body_ir
    assert body_ir.count("br ") <= 1  # only the loop back edge, if the loop is kept
    a = np.linspace(-1, 1, 64).astype("float32")
    b = np.zeros(64, "float32")
    mod(a, b)
    np.testing.assert_allclose(b, np.where(a > 0, a, a * np.float32(0.1)))


def test_llvm_vectorizes_a_serial_loop_itself():
    """LLVM's loop vectorizer is on: a plain serial loop gets vector code too."""
    n = tir.size_var("n")
    A = tir.decl_buffer((n,), "float32", name="A")
    ib = ir_builder.create()
    a = ib.buffer_ptr(A)
    with ib.for_range(0, n, name="i") as i:
        a[i] = a[i] * 2.0
    assert "x float>" in codegen.build(tir.PrimFunc([A], ib.get())).get_source("ll")


def test_aarch64_cross_compile_uses_neon():
    mod = codegen.build(vector_add(4), target=AARCH64)
    assert mod.target.triple == "aarch64-linux-gnu"
    asm = mod.get_source("asm")
    assert "fadd\tv" in asm and ".4s" in asm


def test_aarch64_sve_with_scalable_vectors():
    n = tir.size_var("n")
    A = tir.decl_buffer((n,), "float32", name="A")
    C = tir.decl_buffer((n,), "float32", name="C")
    i = tir.Var("i", "int32")
    vl = 4 * tir.vscale()
    ramp = tir.Ramp(i * vl, 1, vl)
    body = tir.BufferStore(C, tir.BufferLoad(A, [ramp]) + tir.BufferLoad(A, [ramp]), [ramp])
    func = tir.PrimFunc([A, C], tir.For(i, 0, 4, tir.ForKind.SERIAL, body))
    mod = codegen.build(func, target=AARCH64 + " -mattr=+sve")
    assert "<vscale x 4 x float>" in mod.get_source("ll")
    asm = mod.get_source("asm")
    # ldr z: a whole-register load (vscale_range lets LLVM unroll the 4 iterations)
    assert ("ld1w" in asm or "ldr\tz" in asm) and "z0.s" in asm


def test_cross_compiled_module_cannot_be_called():
    mod = codegen.build(vector_add(4), target=AARCH64)
    with pytest.raises(RuntimeError, match="aarch64-linux-gnu.*cannot run on this machine"):
        mod["main"]


def test_skylake_target_without_host_features():
    mod = codegen.build(vector_add(8), target="llvm -mcpu=skylake")
    assert "ymm" in mod.get_source("asm")
    sse = codegen.build(vector_add(8), target="llvm -mcpu=x86-64")
    assert "ymm" not in sse.get_source("asm") and "xmm" in sse.get_source("asm")


def test_get_source_rejects_unknown_formats():
    with pytest.raises(ValueError, match="unknown format 'c'"):
        codegen.build(vector_add(8)).get_source("c")


def test_get_source_tir_shows_the_lowered_program():
    tir_text = codegen.build(vector_add(8)).get_source("tir")
    assert "T.vectorized" not in tir_text and "0:8]" in tir_text  # vectorized into ramps


def test_buffer_params_are_noalias_unless_configured():
    import transform

    func = vector_add(8)
    with transform.PassContext(config={"codegen.llvm.opt_level": 0}):
        assert codegen.build(func).get_source("ll").count("ptr noalias") == 3
    with transform.PassContext(config={"codegen.llvm.opt_level": 0, "tir.noalias": False}):
        assert "noalias" not in codegen.build(func).get_source("ll")


def test_a_function_declaring_its_params_may_alias_has_no_noalias_params():
    import transform

    func = vector_add(8).with_attr("tir.noalias", False)
    with transform.PassContext(config={"codegen.llvm.opt_level": 0}):
        assert "noalias" not in codegen.build(func).get_source("ll")


def test_sve_ramps_broadcasts_gathers_and_predicates():
    """C[r] = A[stride-2 ramp] + Ramp(i, 3) + Broadcast(i), stored where r < n."""
    n = tir.size_var("n")
    A = tir.decl_buffer((n,), "int32", name="A")
    C = tir.decl_buffer((n,), "int32", name="C")
    i = tir.Var("i", "int32")
    vl = 4 * tir.vscale()
    ramp = tir.Ramp(i * vl, 1, vl)
    value = (tir.BufferLoad(A, [tir.Ramp(i * vl, 2, vl)]) + tir.Ramp(i, 3, vl)
             + tir.Broadcast(i, vl))
    store = tir.BufferStore(C, value, [ramp], predicate=tir.LT(ramp, tir.Broadcast(n, vl)))
    func = tir.PrimFunc([A, C], tir.For(i, 0, 4, tir.ForKind.SERIAL, store))
    asm = codegen.build(func, target=AARCH64 + " -mattr=+sve").get_source("asm")
    assert "index\tz" in asm  # the step vector of a ramp
    assert "ld1w\t{ z" in asm and ".s, sxtw #2]" in asm  # a gather: [x0, z0.s, sxtw #2]
    assert "st1w" in asm and "cmpgt\tp" in asm  # a predicated store
