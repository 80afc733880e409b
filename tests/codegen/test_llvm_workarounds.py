"""Workarounds for LLVM bugs: code for AVX-512 CPUs has no VEX mask move of ymm16-31.

Only the host's code runs; AVX-512 CPUs the host may lack are compiled, never called.
"""

import numpy as np
import pytest

import codegen
import tir
import transform
from codegen import Target, evex_workaround, machine
from tir import ir_builder

X86_64 = "llvm -mtriple=x86_64-unknown-linux-gnu"
AVX512_CPUS = ["znver4", "znver5", "x86-64-v4"]


def _floormod_kernel() -> tir.PrimFunc:
    """The fuzzer's kernel: SLP turns its floormods into a vector srem plus a lane-wise fix."""
    A3 = tir.decl_buffer((6, 8, 6), "int32", name="A3")
    B2 = tir.decl_buffer((480,), "int32", name="B2")
    A0 = tir.decl_buffer((288,), "float16", name="A0")
    B0 = tir.decl_buffer((240,), "float32", name="B0")
    ib = ir_builder.create()
    a3, b2, a0, b0 = (ib.buffer_ptr(x) for x in (A3, B2, A0, B0))
    with ib.for_range(1, 3, name="i0") as i0:
        with ib.for_range(0, 4, name="i1") as i1:
            with ib.for_range(0, 8, name="j") as j:
                with ib.if_scope(tir.isnan(a0[i1 * 2 + j * 3 - i0 * 2 + 4])):
                    b0[j] = tir.const(3.0, "float32") / i0.astype("float32")
            with ib.for_range(0, 8, name="j") as j:
                b2[i0 * 96 + j * 12 - i1 * 2 - 85] = tir.max(
                    a3[i1, j, tir.floormod(0 - i0 * 3 - j, 6)], tir.floormod(0 - i1 - j * 3, 6))
    return tir.PrimFunc([A3, B2, A0, B0], ib.get())


def _expected_b2(a3: np.ndarray) -> np.ndarray:
    want = np.full(480, -1, "int32")
    for i0 in range(1, 3):
        for i1 in range(4):
            for j in range(8):
                want[i0 * 96 + j * 12 - i1 * 2 - 85] = max(a3[i1, j, (-i0 * 3 - j) % 6],
                                                           (-i1 - j * 3) % 6)
    return want


@pytest.mark.parametrize("opt_level", [0, 2, 3])
def test_fuzzer_floormod_kernel_matches_numpy_on_the_host(opt_level):
    rng = np.random.default_rng(1)
    a3 = rng.integers(-100, 100, (6, 8, 6)).astype("int32")
    a0 = rng.standard_normal(288).astype("float16")
    b2 = np.full(480, -1, "int32")
    with transform.PassContext(config={"codegen.llvm.opt_level": opt_level}):
        codegen.build(_floormod_kernel(), target="llvm")(a3, b2, a0, np.zeros(240, "float32"))
    np.testing.assert_array_equal(b2, _expected_b2(a3))


@pytest.mark.parametrize("cpu", AVX512_CPUS)
def test_avx512_code_has_no_vex_mask_move_of_a_high_register(cpu):
    """Compiled only: on znver4/5, LLVM 22 moved a mask from ymm16 with a VEX vmovmskps."""
    mod = codegen.build(_floormod_kernel(), target=f"{X86_64} -mcpu={cpu}")
    assert not evex_workaround.has_bad_mask_move(mod.get_source("asm"))
    if mod.machine_target != mod.target:  # the workaround: the same IR, without AVX512VL
        assert mod.machine_target.mattr[-1] == "-avx512vl"
        assert mod.machine_target.options["mcpu"] == cpu


REPRODUCER = evex_workaround.UPSTREAM_REPRODUCER


@pytest.mark.parametrize("cpu", ["skylake-avx512", "znver5"])
def test_upstream_reproducer_is_caught_and_recompiled_without_avx512vl(cpu):
    target = Target(f"{X86_64} -mcpu={cpu}")
    asm = machine.target_machine(target).emit_assembly(machine.parse(REPRODUCER))
    if evex_workaround.AFFECTED:
        assert evex_workaround.has_bad_mask_move(asm), (
            "this LLVM no longer has the bug: remove codegen/evex_workaround.py")
    fixed = machine.machine_target(target, REPRODUCER)
    assert (fixed != target) == evex_workaround.has_bad_mask_move(asm)
    fixed_asm = machine.target_machine(fixed).emit_assembly(machine.parse(REPRODUCER))
    assert not evex_workaround.has_bad_mask_move(fixed_asm)


@pytest.mark.parametrize("line, bad", [
    ("\tvmovmskps\t%ymm16, %r15d", True),
    ("\tvmovmskpd\t%xmm31, %eax", True),
    ("\tvpmovmskb\t%ymm20, %ecx", True),
    ("\tvmovmskps\t%ymm15, %eax", False),
    ("\tvmovmskps\t%ymm1, %eax", False),
    ("\tvpmovd2m\t%ymm16, %k0", False),  # EVEX: any register is fine
])
def test_footprint_is_a_vex_mask_move_of_registers_16_to_31(line, bad):
    assert evex_workaround.has_bad_mask_move(line) == bad


def test_only_vector_compares_on_x86_that_may_have_avx512vl_are_checked():
    ir = "%c = icmp slt <8 x i32> %a, %b\n%m = extractelement <8 x i1> %c, i64 0"
    may = evex_workaround.may_be_miscompiled
    assert may(Target(f"{X86_64} -mcpu=znver5"), ir) == evex_workaround.AFFECTED
    assert not may(Target(f"{X86_64} -mcpu=znver5"), "%s = add <8 x i32> %a, %b")
    assert not may(Target(f"{X86_64} -mcpu=znver5 -mattr=-avx512vl"), ir)
    assert not may(Target("llvm -mtriple=aarch64-linux-gnu"), ir)
    host = Target("llvm")
    if host.arch == "x86_64":
        has_vl = "+avx512vl" in host.features.split(",")
        assert may(host, ir) == (evex_workaround.AFFECTED and has_vl)


# ------------------------------------------------------------ truncating masked stores

#: LLVM 22 turns a masked store of a truncated vector whose mask is one active lane into
#: a scalar store of the *untruncated* element (8 bytes for an i32 lane): the element
#: after it is overwritten. codegen/llvm/memory.py hides the trunc behind an empty asm.
TRUNCATING_STORE_REPRODUCER = """
declare void @llvm.masked.store.v8i32.p0(<8 x i32>, ptr, i32, <8 x i1>)
define void @f(ptr %out, ptr %in) {
  %x = load <8 x i64>, ptr %in, align 8
  %t = trunc <8 x i64> %x to <8 x i32>
  call void @llvm.masked.store.v8i32.p0(<8 x i32> %t, ptr %out, i32 4,
      <8 x i1> <i1 true, i1 false, i1 false, i1 false, i1 false, i1 false, i1 false, i1 false>)
  ret void
}
"""


SIZE = 256  # elements in each buffer: room for 3 vectors and a lane of int8


def _narrowing_copy(src: str, dst: str, extent: int) -> tir.PrimFunc:
    """``A[i + 3] = (dst) B[i + 7]``: a constant extent, so the tail's mask is a constant."""
    A = tir.decl_buffer((SIZE,), dst, name="A")
    B = tir.decl_buffer((SIZE,), src, name="B")
    ib = ir_builder.create()
    a, b = ib.buffer_ptr(A), ib.buffer_ptr(B)
    with ib.for_range(0, extent, kind="vectorize", name="i") as i:
        a[i + 3] = tir.Cast(dst, b[i + 7])
    return tir.PrimFunc([A, B], ib.get())


HOST_TARGETS = ["llvm"] + (["llvm -mcpu=haswell"]  # AVX2 code runs on any AVX2 host
                           if not Target("llvm -mcpu=haswell").missing_host_features else [])


@pytest.mark.parametrize("target", HOST_TARGETS)
@pytest.mark.parametrize("src, dst", [("int64", "int32"), ("int64", "int16"),
                                      ("int64", "int8"), ("int32", "int8"),
                                      ("int32", "int16"), ("int16", "int8")])
def test_narrowing_store_with_one_lane_tail_writes_only_that_lane(target, src, dst):
    lanes = Target(target).vector_width_bits // int(src[3:])
    y = np.random.default_rng(0).integers(-2**62, 2**62, SIZE).astype(src)
    for extent in (lanes + 1, 3 * lanes + 1, lanes + 2):
        func = _narrowing_copy(src, dst, extent)
        got = np.full(SIZE, -7, dst)
        codegen.build(func, target=target)["main"](got, y)
        want = np.full(SIZE, -7, dst)
        want[3:3 + extent] = y[7:7 + extent].astype(dst)
        np.testing.assert_array_equal(got, want, err_msg=f"extent {extent}")


def test_narrowing_store_reproducer_still_parses():
    """The reproducer above is valid IR (kept for the upstream report)."""
    import llvmlite.binding as llvm

    llvm.parse_assembly(TRUNCATING_STORE_REPRODUCER).verify()
