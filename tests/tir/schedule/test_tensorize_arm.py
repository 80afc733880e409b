"""The AArch64 tensor intrinsics (tir/tensor_intrin/arm.py): 8-bit matmuls tensorized with
``sdot``/``udot`` and their NEON fallbacks, built for AArch64 and run under QEMU.

Each intrinsic's matmul is built for ``llvm -mtriple=aarch64-linux-gnu`` with
``+dotprod`` (``sdot``, ``udot``) or ``+neon`` (the fallbacks), run under QEMU
user emulation on NumPy arrays (codegen/emulation, as the SVE tests do) and
compared bit for bit with NumPy's int64 matmul wrapped to 32 bits: on random
data, on the extremes (-128 or 255 everywhere) and on sums that wrap. Without
QEMU and the cross tools those tests skip and say what to install; the
assembly, the build error and the matcher's refusals need LLVM only.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import codegen
import tir
from codegen import emulation
from codegen.interp.backend import build_interpreter
from target.tensor_intrinsics import arm_dot_intrin_for
from tir import te
from tir.schedule import ScheduleError
from tir.script import tir as T

DOTPROD = "llvm -mtriple=aarch64-linux-gnu -mattr=+dotprod"
NEON = "llvm -mtriple=aarch64-linux-gnu -mattr=+neon"
SHIPPED = {  # name -> (operand dtype, accumulator dtype, target)
    "dot_4x4_i8i8s32_sdot": ("int8", "int32", DOTPROD),
    "dot_4x4_u8u8u32_udot": ("uint8", "uint32", DOTPROD),
    "dot_4x4_i8i8s32_neon": ("int8", "int32", NEON),
    "dot_4x4_u8u8u32_neon": ("uint8", "uint32", NEON),
}


def int8_matmul(m: int, n: int, k: int, dtype: str, acc: str) -> tir.PrimFunc:
    """``C[i, j] = sum_k A[i, k] * B[j, k]`` with B packed as [j / 4, k / 4, 4, 4]."""
    a = te.placeholder((m, k), dtype, name="A")
    b = te.placeholder((n // 4, k // 4, 4, 4), dtype, name="B")
    r = te.reduce_axis((0, k), name="k")
    c = te.compute((m, n), lambda i, j: te.sum(
        a[i, r].astype(acc) * b[j // 4, r // 4, j % 4, r % 4].astype(acc), axis=r), name="C")
    return te.create_prim_func([a, b, c])


def accumulating_matmul(m: int, n: int, k: int, dtype: str, acc: str) -> tir.PrimFunc:
    """``C[i, j] += sum_k A[i, k] * B[j, k]``: no init, so C's own values can make it wrap."""
    @T.prim_func
    def func(A: T.Buffer((m, k), dtype), B: T.Buffer((n // 4, k // 4, 4, 4), dtype),
             C: T.Buffer((m, n), acc)):
        for i, j, r in T.grid(m, n, k):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, r])
                C[vi, vj] = C[vi, vj] + T.cast(A[vi, vk], acc) * T.cast(
                    B[vj // 4, vk // 4, vj % 4, vk % 4], acc)
    return func


def tensorized(func: tir.PrimFunc, name: str, *, decompose: bool = True) -> tir.Schedule:
    sch = tir.Schedule(func)
    blk = sch.get_block("C")
    i, j, k = sch.get_loops(blk)
    jo, ji = sch.split(j, [None, 4])
    ko, ki = sch.split(k, [None, 4])
    sch.reorder(i, jo, ko, ji, ki)
    if decompose:
        sch.decompose_reduction(blk, ko)
    sch.tensorize(ji, name)
    return sch


def built(name: str, m: int, n: int, k: int) -> codegen.Module:
    dtype, acc, target = SHIPPED[name]
    return codegen.build(tensorized(int8_matmul(m, n, k, dtype, acc), name).mod, target)


def pack(b: np.ndarray) -> np.ndarray:
    n, k = b.shape
    return b.reshape(n // 4, 4, k // 4, 4).transpose(0, 2, 1, 3).copy()


def reference(a: np.ndarray, b: np.ndarray, acc: str, c0: np.ndarray | None = None):
    """The serial loop's result: exact int64 sums wrapped to ``acc``'s 32 bits."""
    exact = a.astype(np.int64) @ b.astype(np.int64).T
    if c0 is not None:
        exact = exact + c0.astype(np.int64)
    return exact.astype(np.uint32).view(acc)  # modulo 2**32, then read as acc


def operands(m: int, n: int, k: int, dtype: str, kind: str, seed: int = 0):
    rng = np.random.default_rng(seed)
    lo, hi = np.iinfo(dtype).min, np.iinfo(dtype).max
    if kind == "extreme":  # the largest products: -128 * -128 or 255 * 255 everywhere
        return np.full((m, k), lo if lo else hi, dtype), np.full((n, k), lo if lo else hi, dtype)
    if kind == "edges":  # a mix of the two ends of the range (-128 * 127 and the like)
        return (np.where(rng.random((m, k)) < 0.5, lo, hi).astype(dtype),
                np.where(rng.random((n, k)) < 0.7, lo, hi).astype(dtype))
    return (rng.integers(lo, hi + 1, (m, k)).astype(dtype),
            rng.integers(lo, hi + 1, (n, k)).astype(dtype))


# ---------------------------------------------------------------- under QEMU


@pytest.mark.parametrize("name", sorted(SHIPPED))
@pytest.mark.parametrize("shape", [(1, 4, 4), (1, 8, 12), (5, 12, 16), (3, 16, 64)])
def test_arm_intrinsics_compute_the_serial_matmul(tools, name, shape):
    m, n, k = shape
    dtype, acc, _ = SHIPPED[name]
    em = codegen.emulate(built(name, m, n, k), tools=tools)
    for seed, kind in enumerate(["random", "extreme", "edges"]):
        a, b = operands(m, n, k, dtype, kind, seed)
        c = np.full((m, n), 7, acc)  # the init block must overwrite it
        em(a, pack(b), c)
        np.testing.assert_array_equal(c, reference(a, b, acc), err_msg=f"{name} {kind}")
    serial = np.zeros((m, n), acc)  # the unscheduled function, read serially
    build_interpreter(int8_matmul(m, n, k, dtype, acc))(a, pack(b), serial)
    np.testing.assert_array_equal(serial, reference(a, b, acc))


@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_sums_wrap_in_32_bits_as_the_serial_loop_does(tools, name):
    """C starts next to the end of its range and the dot products carry it over."""
    dtype, acc, target = SHIPPED[name]
    m, n, k = 2, 8, 8
    func = accumulating_matmul(m, n, k, dtype, acc)
    em = codegen.emulate(codegen.build(tensorized(func, name, decompose=False).mod, target),
                         tools=tools)
    info = np.iinfo(acc)
    for kind in ["extreme", "edges"]:
        a, b = operands(m, n, k, dtype, kind, seed=4)
        c0 = np.resize(np.array([info.max - 5, info.min + 5, info.max, info.min], acc), (m, n))
        c = c0.copy()
        em(a, pack(b), c)
        np.testing.assert_array_equal(c, reference(a, b, acc, c0), err_msg=f"{name} {kind}")
        exact = a.astype(np.int64) @ b.astype(np.int64).T + c0
        assert ((exact < info.min) | (exact > info.max)).any()  # some sums did wrap


@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_a_long_reduction_wraps_in_32_bits(tools, name):
    """K large enough that the sum of extreme products alone passes 2**31 (or 2**32)."""
    dtype, acc, _ = SHIPPED[name]
    k = 135168 if dtype == "int8" else 69632  # 16384 * k > 2**31, 65025 * k > 2**32
    a, b = operands(1, 4, k, dtype, "extreme")
    c = np.zeros((1, 4), acc)
    codegen.emulate(built(name, 1, 4, k), tools=tools)(a, pack(b), c)
    want = reference(a, b, acc)
    np.testing.assert_array_equal(c, want)
    assert (a.astype(np.int64) @ b.astype(np.int64).T > np.iinfo(acc).max).all()


def test_a_register_tile_with_a_local_accumulator(tools):
    """sdot in 2 x 3 tensorized blocks per k step into a cache_write("local") tile."""
    m, n, k = 6, 24, 16
    sch = tir.Schedule(int8_matmul(m, n, k, "int8", "int32"))
    blk = sch.get_block("C")
    local = sch.cache_write(blk, 0, "local")
    i, j, r = sch.get_loops(blk)
    io, ii = sch.split(i, [None, 2])
    jo, jt, ji = sch.split(j, [None, 3, 4])
    ko, ki = sch.split(r, [None, 4])
    sch.reorder(io, jo, ko, ii, jt, ji, ki)
    sch.reverse_compute_at(local, jo)
    sch.decompose_reduction(blk, ko)
    sch.tensorize(ji, "dot_4x4_i8i8s32_sdot")
    sch.unroll(jt)
    sch.unroll(ii)
    em = codegen.emulate(codegen.build(sch.mod, DOTPROD), tools=tools)
    for kind in ("random", "extreme"):
        a, b = operands(m, n, k, "int8", kind, seed=5)
        c = np.zeros((m, n), np.int32)
        em(a, pack(b), c)
        np.testing.assert_array_equal(c, reference(a, b, "int32"))


class _WithoutDotprod(emulation.EmulatedModule):
    """Runs on QEMU's Cortex-A53 (Armv8.0: NEON, no dotprod)."""

    cpu = "cortex-a53"


def test_the_fallback_runs_where_sdot_does_not(tools):
    m, n, k = 3, 8, 8
    a, b = operands(m, n, k, "int8", "random", seed=6)
    fallback = _WithoutDotprod(built("dot_4x4_i8i8s32_neon", m, n, k), None, tools, 120.0)
    c = np.zeros((m, n), np.int32)
    fallback(a, pack(b), c)
    np.testing.assert_array_equal(c, reference(a, b, "int32"))
    sdot = _WithoutDotprod(built("dot_4x4_i8i8s32_sdot", m, n, k), None, tools, 120.0)
    with pytest.raises(RuntimeError, match="signal 4"):  # SIGILL
        sdot(a, pack(b), c)


# ---------------------------------------------------------------- code and errors (LLVM only)


@pytest.mark.parametrize("name, instruction", [
    ("dot_4x4_i8i8s32_sdot", r"\bsdot\s+v\d+\.4s, v\d+\.16b, v\d+\.16b"),
    ("dot_4x4_u8u8u32_udot", r"\budot\s+v\d+\.4s, v\d+\.16b, v\d+\.16b"),
    ("dot_4x4_i8i8s32_neon", r"\bsmull\s+v\d+\.8h, v\d+\.8b, v\d+\.8b"),
    ("dot_4x4_u8u8u32_neon", r"\bumull\s+v\d+\.8h, v\d+\.8b, v\d+\.8b"),
])
def test_the_code_has_the_instruction(name, instruction):
    asm = built(name, 2, 8, 8).get_source("asm")
    assert re.search(instruction, asm)
    if name.endswith("_neon"):
        assert not re.search(r"\b[su]dot\b", asm)
        assert re.search(r"\baddp\s+v\d+\.4s", asm)


def test_sdot_without_dotprod_is_a_clear_error():
    sch = tensorized(int8_matmul(2, 8, 8, "int8", "int32"), "dot_4x4_i8i8s32_sdot")
    with pytest.raises(ValueError, match=r"llvm\.aarch64\.neon\.sdot\.v4i32\.v16i8.*cannot be "
                                         r"compiled for target.*\+neon"):
        codegen.build(sch.mod, NEON)
    sch = tensorized(int8_matmul(2, 8, 8, "uint8", "uint32"), "dot_4x4_u8u8u32_udot")
    with pytest.raises(ValueError, match=r"udot.*cannot be compiled"):
        codegen.build(sch.mod, "llvm -mtriple=aarch64-linux-gnu")


def _mixed_matmul(a_dtype: str, b_dtype: str, acc: str) -> tir.PrimFunc:
    a = te.placeholder((2, 8), a_dtype, name="A")
    b = te.placeholder((2, 2, 4, 4), b_dtype, name="B")
    r = te.reduce_axis((0, 8), name="k")
    c = te.compute((2, 8), lambda i, j: te.sum(
        a[i, r].astype(acc) * b[j // 4, r // 4, j % 4, r % 4].astype(acc), axis=r), name="C")
    return te.create_prim_func([a, b, c])


@pytest.mark.parametrize("name, dtypes, message", [
    ("dot_4x4_i8i8s32_sdot", ("uint8", "int8", "int32"),
     r"buffer A is int8 in the description, A is uint8"),
    ("dot_4x4_i8i8s32_sdot", ("int8", "uint8", "int32"),
     r"buffer B is int8 in the description, B is uint8"),
    ("dot_4x4_u8u8u32_udot", ("uint8", "int8", "uint32"),
     r"buffer B is uint8 in the description, B is int8"),
    ("dot_4x4_u8u8u32_udot", ("uint8", "uint8", "int32"), r"uint32.*int32"),
    ("dot_4x4_i8i8s32_neon", ("uint8", "int8", "int32"),
     r"buffer A is int8 in the description, A is uint8"),
])
def test_the_matcher_refuses_other_dtypes(name, dtypes, message):
    with pytest.raises(ScheduleError, match=message):
        tensorized(_mixed_matmul(*dtypes), name)


@pytest.mark.parametrize("target, signed, expected", [
    (DOTPROD, True, "dot_4x4_i8i8s32_sdot"),
    (DOTPROD, False, "dot_4x4_u8u8u32_udot"),
    ("llvm -mtriple=aarch64-linux-gnu -mattr=+v8.2a,+dotprod", True, "dot_4x4_i8i8s32_sdot"),
    (NEON, True, "dot_4x4_i8i8s32_neon"),
    ("llvm -mtriple=aarch64-linux-gnu", False, "dot_4x4_u8u8u32_neon"),
    ("llvm -mtriple=aarch64-linux-gnu -mattr=+dotprod,-dotprod", True, "dot_4x4_i8i8s32_neon"),
    ("llvm -mtriple=x86_64-linux-gnu -mcpu=znver3", True, None),
])
def test_arm_dot_intrin_for_names_what_the_target_runs(target, signed, expected):
    got = arm_dot_intrin_for(codegen.Target(target), signed=signed)
    assert got == (None if expected is None else (expected, 4))
    assert arm_dot_intrin_for(target, signed=signed) == got  # the string works too
    if expected is not None:
        assert tir.TensorIntrin.get(expected) is not None
