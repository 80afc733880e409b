"""The default schedule of a uint8 x int8 -> int32 matmul uses the target's VNNI dot
instruction through tensorize (``rules.dot_intrin``), and only where it applies."""

from __future__ import annotations

import re

import numpy as np
import pytest

import codegen
from codegen import Target
from codegen.interp.backend import build_interpreter
from tir import te
from tirlite import meta_schedule as ms

HOST = Target("llvm")
HOST_VNNI = HOST.vector_width_bits == 512 and HOST.has_feature("avx512vnni") \
    or HOST.has_feature("avxvnni")


def int8_matmul(m: int, n: int, k: int, b_kj: bool = True):
    a = te.placeholder((m, k), "uint8", name="A")
    b = te.placeholder((k, n) if b_kj else (n, k), "int8", name="B")
    r = te.reduce_axis((0, k), name="k")
    c = te.compute((m, n), lambda i, j: te.sum(
        a[i, r].astype("int32") * (b[r, j] if b_kj else b[j, r]).astype("int32"), axis=r),
        name="C")
    return te.create_prim_func([a, b, c])


def check(func, m, n, k, b_kj=True, target="llvm"):
    mod = ms.apply_default_schedule(func, target=target)
    rng = np.random.default_rng(m * n + k)
    a = rng.integers(0, 256, (m, k)).astype(np.uint8)
    b = rng.integers(-128, 128, (k, n) if b_kj else (n, k)).astype(np.int8)
    a[0] = 255
    b[b > 100] = -128
    want = a.astype(np.int32) @ (b if b_kj else b.T).astype(np.int32)
    got = np.full((m, n), 3, np.int32)
    codegen.build(mod)(a, b, got)
    np.testing.assert_array_equal(got, want)
    return str(mod["main"])


@pytest.mark.parametrize("shape", [(8, 32, 16), (16, 64, 64), (3, 48, 8)])
def test_the_default_schedule_tensorizes_where_the_host_has_vnni(shape):
    text = check(int8_matmul(*shape), *shape)
    assert ('T.block("C_o")' in text) == HOST_VNNI
    assert ("vpdpbusd" in text) == HOST_VNNI


def test_the_serial_reading_agrees():
    m, n, k = 4, 32, 8
    func = int8_matmul(m, n, k)
    rng = np.random.default_rng(0)
    a = rng.integers(0, 256, (m, k)).astype(np.uint8)
    b = rng.integers(-128, 128, (k, n)).astype(np.int8)
    c = np.zeros((m, n), np.int32)
    build_interpreter(func)(a, b, c)
    np.testing.assert_array_equal(c, a.astype(np.int32) @ b.astype(np.int32))


def test_extents_the_intrinsic_does_not_divide_take_the_register_tiling():
    text = check(int8_matmul(4, 24, 6), 4, 24, 6)
    assert 'T.block("C_o")' not in text


@pytest.mark.parametrize("shape", [(4, 32, 8), (9, 48, 20)])
def test_a_transposed_b_is_packed_alike(shape):
    text = check(int8_matmul(*shape, b_kj=False), *shape, b_kj=False)
    assert ('T.block("C_o")' in text) == HOST_VNNI


@pytest.mark.parametrize("cpu, expected", [
    ("cascadelake", r"vpdpbusd\s+[^\n]*zmm"), ("alderlake", r"\{vex\}\s*vpdpbusd"),
    ("znver3", None), ("skylake-avx512", None),
])
def test_named_targets(cpu, expected):
    target = Target(f"llvm -mcpu={cpu}")
    mod = ms.apply_default_schedule(int8_matmul(8, 32, 16), target=target)
    text = str(mod["main"])
    assert ('T.block("C_o")' in text) == (expected is not None)
    if expected:
        assert re.search(expected, codegen.build(mod, target).get_source("asm"))
