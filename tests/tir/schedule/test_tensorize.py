"""``tir.TensorIntrin`` and ``Schedule.tensorize``: matching, rewriting, the shipped x86
intrinsics, and every refusal.

The int8 matmul tests run the intrinsic the host ``Target`` can run (``dot_intrin_for``),
so on an AVX2 host (or under ``TIRLITE_HOST_TARGET="llvm -mcpu=znver3"``) they run the
AVX2 fallback; the others are compiled to assembly for named CPUs.
"""

from __future__ import annotations

import numpy as np
import pytest

import codegen
import tir
from codegen import Target
from codegen.interp.backend import build_interpreter
from target.tensor_intrinsics import dot_intrin_for
from tir import TensorIntrin, te
from tir.schedule import ScheduleError
from tir.script import tir as T
from tir.tensor_intrin import x86

HOST = Target("llvm")
SHIPPED = {  # name -> (lanes, what the host needs to run it)
    "dot_16x4_vnni": (16, ("avx512vnni",)),
    "dot_16x4_avx512": (16, ("avx512bw",)),
    "dot_8x4_avxvnni": (8, ("avx512vnni", "avx512vl")),  # or avxvnni
    "dot_8x4_avx2": (8, ("avx2",)),
}


def runnable(name: str) -> bool:
    lanes, needs = SHIPPED[name]
    if name == "dot_8x4_avxvnni" and HOST.has_feature("avxvnni"):
        return True
    return all(HOST.has_feature(f) for f in needs)


def int8_matmul(m: int, n: int, k: int, lanes: int) -> tir.PrimFunc:
    """``C[i, j] = sum_k A[i, k] * B[j, k]`` with B packed as [j / lanes, k / 4, lanes, 4]."""
    a = te.placeholder((m, k), "uint8", name="A")
    b = te.placeholder((n // lanes, k // 4, lanes, 4), "int8", name="B")
    r = te.reduce_axis((0, k), name="k")
    c = te.compute((m, n), lambda i, j: te.sum(
        a[i, r].astype("int32") * b[j // lanes, r // 4, j % lanes, r % 4].astype("int32"),
        axis=r), name="C")
    return te.create_prim_func([a, b, c])


def tensorized(func: tir.PrimFunc, name: str, lanes: int, *, decompose: bool = True,
               split: int | None = None) -> tir.Schedule:
    sch = tir.Schedule(func)
    blk = sch.get_block("C")
    i, j, k = sch.get_loops(blk)
    jo, ji = sch.split(j, [None, split or lanes])
    ko, ki = sch.split(k, [None, 4])
    sch.reorder(i, jo, ko, ji, ki)
    if decompose:
        sch.decompose_reduction(blk, ko)
    sch.tensorize(ji, name)
    return sch


def pack(b: np.ndarray, lanes: int) -> np.ndarray:
    n, k = b.shape
    return b.reshape(n // lanes, lanes, k // 4, 4).transpose(0, 2, 1, 3).copy()


def operands(m: int, n: int, k: int, kind: str, seed: int = 0):
    rng = np.random.default_rng(seed)
    if kind == "extreme":  # every product is 255 * -128 or 255 * 127: int16 pair sums saturate
        a = np.full((m, k), 255, np.uint8)
        b = np.where(rng.random((n, k)) < 0.7, -128, 127).astype(np.int8)
    elif kind == "zero":
        a, b = np.zeros((m, k), np.uint8), rng.integers(-128, 128, (n, k)).astype(np.int8)
    else:
        a = rng.integers(0, 256, (m, k)).astype(np.uint8)
        b = rng.integers(-128, 128, (n, k)).astype(np.int8)
    return a, b


# The ones the host cannot run are compiled for named CPUs in test_intrinsic_code_for_named_cpus.
@pytest.mark.parametrize("name", [n for n in sorted(SHIPPED) if runnable(n)])
@pytest.mark.parametrize("shape", [(1, 16, 4), (5, 32, 12), (3, 48, 64)])
@pytest.mark.parametrize("kind", ["random", "extreme", "zero"])
def test_shipped_intrinsics_compute_the_serial_matmul(name, shape, kind):
    lanes = SHIPPED[name][0]
    m, n, k = shape
    func = int8_matmul(m, n, k, lanes)
    a, b = operands(m, n, k, kind)
    expected = a.astype(np.int32) @ b.astype(np.int32).T
    c = np.full((m, n), 7, np.int32)  # the init block must overwrite it
    codegen.build(tensorized(func, name, lanes).mod)(a, pack(b, lanes), c)
    np.testing.assert_array_equal(c, expected)
    serial = np.zeros((m, n), np.int32)
    build_interpreter(func)(a, pack(b, lanes), serial)
    np.testing.assert_array_equal(serial, expected)


def test_the_host_gets_the_best_intrinsic_it_can_run():
    name, lanes = dot_intrin_for(HOST)
    assert runnable(name) and SHIPPED[name][0] == lanes
    if HOST.has_feature("avx512vnni") and HOST.vector_width_bits == 512:
        assert name == "dot_16x4_vnni"
    elif HOST.vector_width_bits < 512:
        assert lanes == 8
    m, n, k = 4, 2 * lanes, 8
    a, b = operands(m, n, k, "random", seed=3)
    c = np.zeros((m, n), np.int32)
    codegen.build(tensorized(int8_matmul(m, n, k, lanes), name, lanes).mod)(a, pack(b, lanes), c)
    np.testing.assert_array_equal(c, a.astype(np.int32) @ b.astype(np.int32).T)


@pytest.mark.parametrize("cpu, name, instruction", [
    ("cascadelake", "dot_16x4_vnni", r"vpdpbusd\s+[^\n]*zmm"),
    ("skylake-avx512", "dot_16x4_avx512", r"vpmaddwd\s+[^\n]*zmm"),
    ("alderlake", "dot_8x4_avxvnni", r"\{vex\}\s*vpdpbusd"),
    ("haswell", "dot_8x4_avx2", r"vpmaddwd\s+[^\n]*ymm"),
])
def test_intrinsic_code_for_named_cpus(cpu, name, instruction):
    import re

    target = Target(f"llvm -mcpu={cpu}")
    assert dot_intrin_for(target)[0] == name
    lanes = SHIPPED[name][0]
    mod = codegen.build(tensorized(int8_matmul(4, 2 * lanes, 8, lanes), name, lanes).mod, target)
    assert re.search(instruction, mod.get_source("asm"))


def test_an_intrinsic_the_target_lacks_is_a_clear_error():
    sch = tensorized(int8_matmul(2, 16, 4, 16), "dot_16x4_vnni", 16)
    with pytest.raises(ValueError, match=r"vpdpbusd.*cannot be compiled for target.*haswell"):
        codegen.build(sch.mod, "llvm -mcpu=haswell")


def test_the_loops_become_one_block_with_the_implementation():
    sch = tensorized(int8_matmul(2, 32, 8, 16), "dot_16x4_avx512", 16)
    text = str(sch.mod["main"])
    assert 'T.block("C_o")' in text and "llvm.x86.avx512.pmaddw.d.512" in text
    assert 'T.block("C")' not in text
    with pytest.raises(ScheduleError, match="no block named 'C'"):
        sch.get_block("C")
    assert sch.get_block("C_o") is not None


def test_the_trace_replays_to_the_same_function():
    func = int8_matmul(2, 32, 8, 16)
    sch = tensorized(func, "dot_16x4_vnni", 16)
    fresh = tir.Schedule(func)
    sch.trace.apply_to_schedule(fresh)
    tir.assert_structural_equal(fresh.mod["main"], sch.mod["main"])
    again = tir.Schedule(func)
    tir.schedule.Trace.apply_json_to_schedule(sch.trace.as_json(), again)
    tir.assert_structural_equal(again.mod["main"], sch.mod["main"])


# ---------------------------------------------------------------- refusals


def _refused(sch_fn, match: str):
    with pytest.raises(ScheduleError, match=match):
        sch_fn()


def test_an_unknown_intrinsic_is_named():
    sch = tir.Schedule(int8_matmul(2, 16, 4, 16))
    loop = sch.get_loops(sch.get_block("C"))[1]
    _refused(lambda: sch.tensorize(loop, "dot_16x4_nosuch"), r"no tensor intrinsic "
             r"'dot_16x4_nosuch'.*dot_16x4_vnni")


def test_a_loop_of_another_extent_is_named():
    _refused(lambda: tensorized(int8_matmul(2, 32, 8, 16), "dot_16x4_vnni", 16, split=8),
             r"has extent 8, the description's loop i has 16")


def test_an_init_left_in_place_asks_for_decompose_reduction():
    _refused(lambda: tensorized(int8_matmul(2, 32, 8, 16), "dot_16x4_vnni", 16,
                                decompose=False), r"has an init.*decompose_reduction")


def test_a_wrong_dtype_is_named():
    a = te.placeholder((2, 8), "int8", name="A")  # int8, the intrinsic takes uint8
    b = te.placeholder((2, 2, 16, 4), "int8", name="B")
    r = te.reduce_axis((0, 8), name="k")
    c = te.compute((2, 32), lambda i, j: te.sum(
        a[i, r].astype("int32") * b[j // 16, r // 4, j % 16, r % 4].astype("int32"), axis=r),
        name="C")
    _refused(lambda: tensorized(te.create_prim_func([a, b, c]), "dot_16x4_vnni", 16),
             r"buffer A is uint8 in the description, A is int8")


def test_another_computation_is_the_first_difference():
    a = te.placeholder((2, 8), "uint8", name="A")
    b = te.placeholder((2, 2, 16, 4), "int8", name="B")
    r = te.reduce_axis((0, 8), name="k")
    c = te.compute((2, 32), lambda i, j: te.sum(
        a[i, r].astype("int32") + b[j // 16, r // 4, j % 16, r % 4].astype("int32"), axis=r),
        name="C")
    _refused(lambda: tensorized(te.create_prim_func([a, b, c]), "dot_16x4_vnni", 16),
             r"differs from the description.*\*.*\+")


def test_an_unpacked_operand_asks_for_a_layout():
    a = te.placeholder((2, 8), "uint8", name="A")
    b = te.placeholder((32, 8), "int8", name="B")  # B[j, k]: a 16 x 4 part is not dense
    r = te.reduce_axis((0, 8), name="k")
    c = te.compute((2, 32), lambda i, j: te.sum(
        a[i, r].astype("int32") * b[j, r].astype("int32"), axis=r), name="C")
    _refused(lambda: tensorized(te.create_prim_func([a, b, c]), "dot_16x4_vnni", 16),
             r"B\[32, 8\] is not laid out as the description's B\[16, 4\].*transform_layout")


def test_a_swapped_reduction_loop_is_named():
    @T.prim_func
    def desc(A: T.Buffer((4,), "float32"), C: T.Buffer((4,), "float32")) -> None:
        with T.block("root"):
            for i in T.serial(0, 4):
                with T.block("u"):
                    vi = T.axis.spatial(4, i)
                    C[vi] = C[vi] + A[vi]

    @T.prim_func
    def impl(A: T.Buffer((4,), "float32"), C: T.Buffer((4,), "float32")) -> None:
        with T.block("root"):
            C[T.ramp(0, 1, 4)] = C.vload([0], "float32x4") + A.vload([0], "float32x4")

    TensorIntrin.register("test_add4", desc, impl, override=True)
    a = te.placeholder((8,), "float32", name="A")
    r = te.reduce_axis((0, 4), name="r")
    c = te.compute((8,), lambda i: te.sum(a[r + i - i], axis=r), name="C")
    sch = tir.Schedule(te.create_prim_func([a, c]))
    blk = sch.get_block("C")
    sch.decompose_reduction(blk, sch.get_loops(blk)[0])
    _refused(lambda: sch.tensorize(sch.get_loops(blk)[1], "test_add4"),
             r"should be a spatial loop")


def test_a_failed_tensorize_leaves_the_schedule_unchanged():
    sch = tir.Schedule(int8_matmul(2, 32, 8, 16))
    blk = sch.get_block("C")
    i, j, k = sch.get_loops(blk)
    before, n = sch.mod["main"], len(sch.trace.insts)
    with pytest.raises(ScheduleError):
        sch.tensorize(j, "dot_16x4_vnni")
    assert sch.mod["main"] is before and len(sch.trace.insts) == n


# ---------------------------------------------------------------- a user's own intrinsic


@T.prim_func
def _add4_desc(A: T.Buffer((4,), "float32"), C: T.Buffer((4,), "float32")) -> None:
    with T.block("root"):
        for i in T.serial(0, 4):
            with T.block("u"):
                vi = T.axis.spatial(4, i)
                C[vi] = A[vi] * T.float32(2)


@T.prim_func
def _add4_impl(A: T.Buffer((4,), "float32"), C: T.Buffer((4,), "float32")) -> None:
    with T.block("root"):
        C[T.ramp(0, 1, 4)] = A.vload([0], "float32x4") + A.vload([0], "float32x4")


def test_a_registered_intrinsic_replaces_an_elementwise_loop_anywhere():
    TensorIntrin.register("test_double4", _add4_desc, _add4_impl, override=True)
    a = te.placeholder((6, 12), "float32", name="A")
    c = te.compute((6, 12), lambda i, j: a[i, j] * tir.const(2.0, "float32"), name="C")
    func = te.create_prim_func([a, c])
    sch = tir.Schedule(func)
    i, j = sch.get_loops(sch.get_block("C"))
    jo, ji = sch.split(j, [None, 4])
    sch.tensorize(ji, "test_double4")
    x = np.random.default_rng(1).standard_normal((6, 12)).astype(np.float32)
    x[0, :3] = [np.nan, -0.0, np.inf]
    out = np.zeros_like(x)
    codegen.build(sch.mod)(x, out)
    np.testing.assert_array_equal(out, x * 2)


def test_register_refuses_what_tensorize_could_not_use():
    with pytest.raises(ValueError, match="registered already"):
        TensorIntrin.register("dot_16x4_vnni", x86.dot_product_16x4_u8i8i32_desc,
                              x86.dot_product_16x4_u8i8i32_vnni)
    with pytest.raises(ValueError, match=r"buffer A is float32\[4\] in desc but float32\[8\]"):
        @T.prim_func
        def wide(A: T.Buffer((8,), "float32"), C: T.Buffer((4,), "float32")) -> None:
            with T.block("root"):
                C[T.ramp(0, 1, 4)] = A.vload([0], "float32x4")
        TensorIntrin.register("test_bad", _add4_desc, wide)

    @T.prim_func
    def reads_past(A: T.Buffer((4,), "float32"), C: T.Buffer((4,), "float32")) -> None:
        with T.block("root"):
            C[T.ramp(0, 1, 4)] = A.vload([1], "float32x4")
    with pytest.raises(ValueError, match=r"impl accesses A at flat elements \[1, 5\), "
                                         r"outside its 4"):
        TensorIntrin.register("test_bad", _add4_desc, reads_past)
    with pytest.raises(TypeError, match="desc must be a PrimFunc"):
        TensorIntrin.register("test_bad", "desc", _add4_impl)
    assert TensorIntrin.get("test_bad", allow_missing=True) is None
    assert {"dot_16x4_vnni", "dot_8x4_avx2"} <= set(TensorIntrin.names())


def test_a_register_tile_with_a_local_accumulator():
    """The fast schedule: a cache_write("local") accumulator, 4 x 2 tensorized blocks per k
    step (the local buffer's region is computed from the implementation's vector accesses)."""
    name, lanes = dot_intrin_for(HOST)
    m, n, k = 8, 4 * lanes, 16
    sch = tir.Schedule(int8_matmul(m, n, k, lanes))
    blk = sch.get_block("C")
    local = sch.cache_write(blk, 0, "local")
    i, j, r = sch.get_loops(blk)
    io, ii = sch.split(i, [None, 4])
    jo, jt, ji = sch.split(j, [None, 2, lanes])
    ko, ki = sch.split(r, [None, 4])
    sch.reorder(io, jo, ko, ii, jt, ji, ki)
    sch.reverse_compute_at(local, jo)
    sch.decompose_reduction(blk, ko)
    sch.tensorize(ji, name)
    sch.unroll(jt)
    sch.unroll(ii)
    for kind in ("random", "extreme"):
        a, b = operands(m, n, k, kind, seed=5)
        c = np.zeros((m, n), np.int32)
        codegen.build(sch.mod)(a, pack(b, lanes), c)
        np.testing.assert_array_equal(c, a.astype(np.int32) @ b.astype(np.int32).T)


# ---------------------------------------------------------------- bfloat16 pairs (inexact)

BF16 = "dot_16x2_bf16_avx512bf16"


def bf16_matmul(m: int, n: int, k: int) -> tir.PrimFunc:
    a = te.placeholder((m, k), "bfloat16", name="A")
    b = te.placeholder((n // 16, k // 2, 16, 2), "bfloat16", name="B")
    r = te.reduce_axis((0, k), name="k")
    c = te.compute((m, n), lambda i, j: te.sum(
        a[i, r].astype("float32") * b[j // 16, r // 2, j % 16, r % 2].astype("float32"),
        axis=r), name="C")
    return te.create_prim_func([a, b, c])


def bf16_tensorized(func: tir.PrimFunc, **kw) -> tir.Schedule:
    sch = tir.Schedule(func)
    blk = sch.get_block("C")
    i, j, k = sch.get_loops(blk)
    jo, ji = sch.split(j, [None, 16])
    ko, ki = sch.split(k, [None, 2])
    sch.reorder(i, jo, ko, ji, ki)
    sch.decompose_reduction(blk, ko)
    sch.tensorize(ji, BF16, **kw)
    return sch


def test_an_inexact_intrinsic_must_be_allowed():
    with pytest.raises(ScheduleError, match=r"may differ from the serial loop's: vdpbf16ps adds "
                                            r".*flushes subnormal.*allow_inexact=True"):
        bf16_tensorized(bf16_matmul(2, 16, 4))


@pytest.mark.skipif(not HOST.has_feature("avx512bf16"),
                    reason="vdpbf16ps needs AVX512-BF16 (its code is checked for cooperlake)")
@pytest.mark.parametrize("shape", [(1, 16, 2), (5, 32, 64)])
def test_bf16_pairs_agree_with_the_serial_loop_to_float32_rounding(shape):
    import ml_dtypes

    m, n, k = shape
    rng = np.random.default_rng(2)
    a = rng.standard_normal((m, k)).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((n, k)).astype(ml_dtypes.bfloat16)
    a[0, 0] = np.nan if m > 1 else a[0, 0]
    packed = b.reshape(n // 16, 16, k // 2, 2).transpose(0, 2, 1, 3).copy()
    func = bf16_matmul(m, n, k)
    got, serial = np.zeros((m, n), np.float32), np.zeros((m, n), np.float32)
    codegen.build(bf16_tensorized(func, allow_inexact=True).mod)(a, packed, got)
    codegen.build(func)(a, packed, serial)
    exact = a.astype(np.float64) @ b.astype(np.float64).T
    bound = k * 2.0 ** -23 * (np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64)).T)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(exact))
    ok = ~np.isnan(exact)
    assert np.all(np.abs(got[ok] - exact[ok]) <= bound[ok] + 1e-30)
    assert np.all(np.abs(serial[ok] - exact[ok]) <= bound[ok] + 1e-30)


def test_an_allowed_inexact_tensorize_replays_from_its_trace():
    func = bf16_matmul(2, 16, 4)
    sch = bf16_tensorized(func, allow_inexact=True)
    again = tir.Schedule(func)
    tir.schedule.Trace.apply_json_to_schedule(sch.trace.as_json(), again)
    tir.assert_structural_equal(again.mod["main"], sch.mod["main"])


def test_bf16_pairs_code_for_a_named_cpu():
    import re

    target = Target("llvm -mcpu=cooperlake")
    mod = codegen.build(bf16_tensorized(bf16_matmul(2, 16, 4), allow_inexact=True).mod, target)
    assert re.search(r"vdpbf16ps\s+[^\n]*zmm", mod.get_source("asm"))
    with pytest.raises(ValueError, match="dpbf16ps.*cannot be compiled"):
        codegen.build(bf16_tensorized(bf16_matmul(2, 16, 4), allow_inexact=True).mod,
                      "llvm -mcpu=znver3")
