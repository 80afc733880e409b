"""Vectorized kernels compiled to native code compute what the serial ones compute."""

import numpy as np
import pytest

import codegen
import tir
import transform
from tir import ir_builder
from tir.stmt import BufferStore, For, ForKind, IfThenElse

A = tir.decl_buffer((128,), "float32", name="A")
B = tir.decl_buffer((128,), "float32", name="B")
C = tir.decl_buffer((16,), "float32", name="C")
i, j = tir.var("i"), tir.var("j")
VEC, SERIAL = ForKind.VECTORIZED, ForKind.SERIAL


def nest(outer, inner, body):
    return For(i, 0, outer, VEC, For(j, 0, inner, VEC, body))


CASES = {
    "vector-add": For(i, 0, 16, SERIAL, For(j, 0, 8, VEC, BufferStore(
        A, B[i * 8 + j] + C[j], [i * 8 + j]))),
    "nested-contiguous": nest(4, 4, BufferStore(A, B[i * 4 + j] + C[i] + B[j], [i * 4 + j])),
    "nested-gapped": nest(2, 4, BufferStore(A, B[i * 8 + j] * C[i], [i * 8 + j])),
    "nested-transposed": nest(4, 4, BufferStore(A, B[i * 4 + j], [j * 4 + i])),
    "gather": For(j, 0, 8, VEC, BufferStore(A, B[tir.floormod(j * j, 16)], [j])),
    "scalarized-if": For(j, 0, 8, VEC, IfThenElse(j < 5, BufferStore(A, B[j], [j]))),
    "division-patterns": For(i, 0, 4, SERIAL, For(j, 0, 8, VEC, BufferStore(
        A, B[tir.floordiv(i * 8 + j, 8)] + tir.Cast("float32", tir.floormod(j, 3)),
        [i * 8 + j]))),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_compiled_vector_code_matches_serial(name):
    mod = tir.IRModule.from_expr(tir.PrimFunc([A, B, C], CASES[name]))
    with transform.PassContext(config={"tir.disable_vectorize": True}):
        serial = codegen.build(mod, target="llvm")
    vector = codegen.build(mod, target="llvm")
    rng = np.random.default_rng(3)
    b = rng.standard_normal(128).astype(np.float32)
    c = rng.standard_normal(16).astype(np.float32)
    want, got = np.zeros(128, np.float32), np.zeros(128, np.float32)
    serial["main"](want, b, c)
    vector["main"](got, b, c)
    np.testing.assert_array_equal(got, want)


def test_nested_loops_become_one_16_lane_vector():
    mod = tir.IRModule.from_expr(tir.PrimFunc([A, B, C], CASES["nested-contiguous"]))
    assert "<16 x float>" in codegen.build(mod, target="llvm").get_source("ll")


def test_int64_split_loop_with_guard_builds_and_runs():
    """TVM's test_vectorize_with_if_cond_int64, built and run: m = 10 is not a multiple of 4."""
    m = tir.size_var("m", "int64")
    X = tir.decl_buffer((m,), "float32", name="X")
    Y = tir.decl_buffer((m,), "float32", name="Y")
    ib = ir_builder.create()
    x, y = ib.buffer_ptr(X), ib.buffer_ptr(Y)
    with ib.for_range(0, (m + 3) // 4, name="o", dtype="int64") as o:
        with ib.for_range(0, 4, kind="vectorize", name="v", dtype="int64") as v:
            k = o * 4 + v
            with ib.if_scope(k < m):
                y[k] = tir.if_then_else(k < 2, x[k], x[k] * tir.const(2, "float32"))
    lib = codegen.build(tir.IRModule.from_expr(tir.PrimFunc([X, Y], ib.get())), target="llvm")
    data, out = np.arange(10, dtype=np.float32), np.zeros(10, np.float32)
    lib["main"](data, out)
    np.testing.assert_array_equal(out, np.where(np.arange(10) < 2, data, data * 2))
