"""Strip-mined loops built end to end: symbolic extents vectorize, tails are masked, and the
vectorized build, the serial build and the interpreter agree bit for bit for n in 0..100."""

import time

import numpy as np
import pytest

import codegen
import tir
import transform
from tir import ir_builder

VL = codegen.Target("llvm").vector_width_bits // 32
STRICT = {"codegen.llvm.fp_contract": False}  # no FMA: every build rounds every operation
SERIAL = {**STRICT, "tir.disable_vectorize": True}


def one_loop(dtype: str, body, nbufs: int = 2, extent=None) -> tir.PrimFunc:
    """``for i in vectorized(n): body(ib, i, n, *bufs)`` over buffers of exactly n elements."""
    n = tir.size_var("n")
    bufs = [tir.decl_buffer((n,), dtype, name=name) for name in "ABCD"[:nbufs]]
    ib = ir_builder.create()
    ptrs = [ib.buffer_ptr(b) for b in bufs]
    with ib.for_range(0, n if extent is None else extent, kind="vectorize", name="i") as i:
        body(ib, i, n, *ptrs)
    return tir.PrimFunc(bufs, ib.get())


def saxpy(ib, i, n, a, b):
    b[i] = a[i] * tir.const(3, a.dtype) + b[i]


def two_stores(ib, i, n, a, b, c):
    b[i] = a[i] - tir.const(1, a.dtype)
    c[i] = a[i] * a[i]


def reversed_load(ib, i, n, a, b):
    b[i] = a[n - 1 - i] + tir.const(2, a.dtype)  # stride -1: a gather, masked in the tail


def uniform_load(ib, i, n, a, b):
    b[i] = a[i] * a[0]  # a[0] is read iff the loop runs: in the tail, iff some lane is on


def guarded_uniform_load(ib, i, n, a, b):
    with ib.if_scope(b[i] > tir.const(0, a.dtype)):  # if-converted
        b[i] = a[i] - a[0]


def last_element(ib, i, n, a, b):
    b[0] = a[i]  # one element for every lane: the tail's mask cannot say which lane stores


KERNELS = {
    "saxpy": (saxpy, 2, "predicated"),
    "two_stores": (two_stores, 3, "predicated"),
    "reversed_load": (reversed_load, 2, "predicated"),
    "uniform_load": (uniform_load, 2, "predicated"),
    "guarded_uniform_load": (guarded_uniform_load, 2, "predicated"),
}


def build(func, config, target="llvm"):
    with transform.PassContext(config=config) as ctx:
        return codegen.build(func, target=target), ctx


def inputs(dtype, n, count, seed):
    rng = np.random.default_rng(seed)
    if dtype.startswith("float"):
        return [rng.standard_normal(n).astype(dtype) for _ in range(count)]
    return [rng.integers(-1000, 1000, n).astype(dtype) for _ in range(count)]


@pytest.mark.parametrize("dtype", ["float32", "int32", "float64", "int8"])
@pytest.mark.parametrize("name", sorted(KERNELS))
def test_vectorized_serial_and_interpreter_agree_bit_for_bit(name, dtype):
    body, nbufs, tail_outcome = KERNELS[name]
    func = one_loop(dtype, body, nbufs)
    vectorized, ctx = build(func, STRICT)  # the bound checker is on: no lane past n
    # One remark for the one loop written: the tail's folds into it.
    [remark] = [r for r in ctx.remarks if isinstance(r, transform.VectorizeRemark)]
    assert remark.outcome == "vectorized" and remark.reason.endswith(f"; {tail_outcome} tail")
    serial, _ = build(func, SERIAL)
    interpreted, _ = build(func, STRICT, target="interp")
    for n in range(101):
        outs = []
        for run in (vectorized, serial, interpreted):
            arrays = inputs(dtype, n, nbufs, seed=n)
            run["main"](*arrays)
            outs.append(b"".join(a.tobytes() for a in arrays))
        assert outs[0] == outs[1] == outs[2], n


def test_serial_build_really_differs_from_the_vectorized_one():
    func = one_loop("float32", saxpy)
    vec_ir = build(func, STRICT)[0].get_source("ll")
    serial_ir = build(func, SERIAL)[0].get_source("ll")
    assert f"@llvm.masked.store.v{VL}f32" in vec_ir
    assert "masked" not in serial_ir


def test_bound_checker_catches_an_unmasked_tail():
    """The differential test leans on the bound checker: it does reject a lane past n."""
    n = tir.size_var("n")
    A = tir.decl_buffer((n,), "float32", name="A")
    ib = ir_builder.create()
    a = ib.buffer_ptr(A)
    with ib.for_range(0, VL, kind="vectorize", name="i") as i:  # VL lanes, n may be fewer
        a[i] = a[i] + tir.const(1, "float32")
    lib = codegen.build(tir.PrimFunc([A], ib.get()))
    lib["main"](np.zeros(VL, np.float32))
    with pytest.raises(RuntimeError, match="out of bounds"):
        lib["main"](np.zeros(VL - 1, np.float32))


def test_scalarized_tail_says_why():
    _, ctx = build(one_loop("float32", last_element), STRICT)
    [remark] = ctx.remarks  # the loop's, the tail's a detail of it
    assert remark.outcome == "scalarized"
    assert "; tail scalarized: " in remark.reason and "not predicated" in remark.reason


def test_loop_carried_dependence_stays_serial_and_correct():
    n = tir.size_var("n")
    A = tir.decl_buffer((n,), "int32", name="A")
    ib = ir_builder.create()
    a = ib.buffer_ptr(A)
    with ib.for_range(1, n, kind="vectorize", name="i") as i:  # a prefix sum
        a[i] = a[i] + a[i - 1]
    func = tir.PrimFunc([A], ib.get())
    lib, ctx = build(func, STRICT)
    [remark] = ctx.remarks  # the loop's, its tail kept serial for the same reason
    assert remark.outcome == "not vectorized" and "tail" not in remark.reason
    for n in (0, 1, VL + 3, 5 * VL + 1):
        x = np.arange(n, dtype=np.int32)
        lib["main"](x)
        np.testing.assert_array_equal(x, np.cumsum(np.arange(n, dtype=np.int32)))


def test_large_constant_extent_builds_fast():
    n = 32768
    A = tir.decl_buffer((n,), "float32", name="A")
    B = tir.decl_buffer((n,), "float32", name="B")
    ib = ir_builder.create()
    a, b = ib.buffer_ptr(A), ib.buffer_ptr(B)
    with ib.for_range(0, n, kind="vectorize", name="i") as i:
        b[i] = a[i] * tir.const(2, "float32")
    codegen.clear_cache()
    start = time.perf_counter()
    lib, ctx = build(tir.PrimFunc([A, B], ib.get()), STRICT)
    assert time.perf_counter() - start < 1.0
    assert [r.lanes for r in ctx.remarks] == [VL]
    x = np.arange(n, dtype=np.float32)
    y = np.empty_like(x)
    lib["main"](x, y)
    np.testing.assert_array_equal(y, x * 2)


@pytest.mark.parametrize("dtype", ["int32", "int8"])
def test_tail_division_by_loaded_values_is_predicated_and_never_divides_by_zero(dtype):
    """Off lanes of the tail load 0: the division's divisor there becomes 1 (not SIGFPE)."""
    def divide(ib, i, n, a, b, c):
        b[i] = a[i] // c[i] + a[i] % c[i]

    func = one_loop(dtype, divide, 3)
    vectorized, ctx = build(func, STRICT)
    [remark] = [r for r in ctx.remarks if isinstance(r, transform.VectorizeRemark)]
    assert remark.outcome == "vectorized" and remark.reason.endswith("; predicated tail")
    serial, _ = build(func, SERIAL)
    for n in range(0, 3 * VL + 2):
        outs = []
        for run in (vectorized, serial):
            a, b, c = inputs(dtype, n, 3, seed=n)
            c[(c == 0) | (c == -1)] = 3  # the program itself divides by every c[i]
            run["main"](a, b, c)
            outs.append(b.tobytes())
        assert outs[0] == outs[1], n
