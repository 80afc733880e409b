"""Vectorized reductions built end to end: for every op x dtype the vectorized build, the
serial build (``tir.disable_vectorize``) and the interpreter agree — integers, bools and
float min/max bit for bit, float sums and products within a reassociation bound (bit for
bit with ``tir.vectorize.ordered_reductions``) — for n around the vector lengths."""

import re
import zlib

import numpy as np
import pytest
from reduction_kernels import (
    dot,
    guarded,
    moments,
    reduction,
    sum_and_scale,
    sum_kernel,
    unrolled_sum,
)

import codegen
import tir
import transform
from tir import ir_builder

BITS = codegen.Target("llvm").vector_width_bits
STRICT = {"codegen.llvm.fp_contract": False}
SERIAL = {**STRICT, "tir.disable_vectorize": True}
ORDERED = {**STRICT, "tir.vectorize.ordered_reductions": True}
INTS = ["int8", "int16", "int32", "int64", "uint8", "uint32"]
INT_KINDS = ["add", "mul", "min", "max", "and", "or", "xor"]
CASES = ([(d, k) for d in INTS for k in INT_KINDS]
         + [(d, k) for d in ("float32", "float64") for k in ("add", "mul", "min", "max")]
         + [("bool", "and"), ("bool", "or")])


def lanes(dtype: str) -> int:
    """VL as the pass computes it: the host's widest register over the element (bool: a byte)."""
    return max(1, BITS // max(8, np.dtype(dtype).itemsize * 8))


def sizes(dtype: str) -> list[int]:
    """0..100, and around VL, K*VL (K up to 4) and a few large n."""
    vl = lanes(dtype)
    edges = {m * vl + d for m in (1, 2, 4, 8, 9) for d in (-1, 0, 1)}
    return sorted(set(range(0, 101)) | {e for e in edges if e >= 0} | {4099, 65537})


def build(func, config, target="llvm"):
    with transform.PassContext(config=config):
        return codegen.build(func, target=target)


def values(dtype: str, kind: str, n: int, rng) -> np.ndarray:
    """Inputs reaching the edges of the type, without signed overflow of int32/int64."""
    if dtype == "bool":
        return rng.random(n) < (0.97 if kind == "and" else 0.03)  # both results occur
    if dtype.startswith("float"):
        if kind == "mul":  # |product| stays in range; signs vary
            return (rng.uniform(0.99, 1.01, n) * rng.choice([-1, 1], n)).astype(dtype)
        return rng.uniform(-1e3, 1e3, n).astype(dtype)
    info = np.iinfo(dtype)
    if dtype in ("int32", "int64") and kind in ("add", "mul"):  # nsw: overflow is undefined
        if kind == "mul":
            return rng.choice([-1, 1, 1, 1], n).astype(dtype)
        return rng.integers(-(2 ** (info.bits - 20)), 2 ** (info.bits - 20), n, dtype=dtype)
    out = rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
    out[: min(n, 2)] = [info.min, info.max][: min(n, 2)]
    return out


def run(mod, *arrays):
    arrays = [a.copy() for a in arrays]
    mod["main"](*arrays)
    return arrays[-1][0]


def same_bits(x, y) -> bool:
    x, y = np.asarray(x), np.asarray(y)
    if x.dtype.kind == "f" and np.isnan(x) and np.isnan(y):
        return True
    return x.tobytes() == y.tobytes()


def float_bound(dtype: str, kind: str, init, a: np.ndarray) -> float:
    """How far two evaluation orders may differ: each is within (n+1)*u*sum|terms| of the
    exact sum (u = eps/2), so the two within (n+1)*eps*sum|terms|; for products
    (1+u)^n - 1 ~ n*u relative to |product| each."""
    eps = float(np.finfo(dtype).eps)
    n = a.size + 1
    if kind == "add":
        return n * eps * (abs(float(init)) + np.abs(a.astype("float64")).sum())
    return 2 * n * eps * abs(float(init) * np.prod(a.astype("float64")))


@pytest.mark.parametrize("dtype,kind", CASES)
def test_reduction_matches_serial_and_interpreter(dtype, kind):
    func = reduction(dtype, kind)
    vector, serial = build(func, STRICT), build(func, SERIAL)
    interp = build(func, STRICT, target="interp")
    rng = np.random.default_rng(zlib.crc32(f"{dtype} {kind}".encode()))  # stable per case
    exact = not (dtype.startswith("float") and kind in ("add", "mul"))
    for n in sizes(dtype):
        a, init = values(dtype, kind, n, rng), values(dtype, kind, 1, rng)
        want = run(serial, a, init)
        got = run(vector, a, init)
        if exact:
            assert same_bits(got, want), (n, got, want)
        else:
            assert abs(float(got) - float(want)) <= float_bound(dtype, kind, init[0], a), n
        if n <= 100 and n % 7 in (0, 1):  # the interpreter is slow; a spread of sizes
            got = run(interp, a, init)  # it sums in lane order: another order, same bound
            if exact:
                assert same_bits(got, want), n
            else:
                assert abs(float(got) - float(want)) <= float_bound(dtype, kind, init[0], a), n


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kind", ["add", "mul"])
def test_ordered_float_reduction_is_bit_exact(dtype, kind):
    func = reduction(dtype, kind)
    ordered, serial = build(func, ORDERED), build(func, SERIAL)
    interp = build(func, ORDERED, target="interp")
    rng = np.random.default_rng(7)
    for n in sizes(dtype):
        a, init = values(dtype, kind, n, rng), values(dtype, kind, 1, rng)
        want = run(serial, a, init)
        assert same_bits(run(ordered, a, init), want), n
        if n <= 40:
            assert same_bits(run(interp, a, init), want), n


def test_reassociated_sum_differs_from_serial_but_within_the_bound():
    """The reassociation is real (so the remark's note is needed) and bounded."""
    func = sum_kernel("float32")
    vector, serial = build(func, STRICT), build(func, SERIAL)
    a = np.random.default_rng(3).uniform(0, 1, 1 << 16).astype("float32")
    init = np.zeros(1, "float32")
    got, want = run(vector, a, init), run(serial, a, init)
    assert got != want
    assert abs(float(got) - float(want)) <= float_bound("float32", "add", 0.0, a)


@pytest.mark.parametrize("config", [STRICT, ORDERED], ids=["reassoc", "ordered"])
@pytest.mark.parametrize("special", ["nan", "inf", "-inf", "inf-inf", "negzero"])
def test_float_sum_specials(config, special):
    func = sum_kernel("float32")
    vector, serial = build(func, config), build(func, SERIAL)
    for n in (1, 17, 100, 1000):
        a = np.random.default_rng(n).uniform(-1, 1, n).astype("float32")
        init = np.zeros(1, "float32")
        if special == "negzero":
            a[:], init[0] = -0.0, -0.0  # -0.0 + -0.0 stays -0.0: the identity must be -0.0
        elif special == "inf-inf":
            a[0], a[-1] = np.inf, -np.inf
        else:
            a[n // 2] = float(special)
        assert same_bits(run(vector, a, init), run(serial, a, init)), (n, special)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kind", ["min", "max"])
def test_float_min_max_nan_and_signed_zeros_bit_exact(dtype, kind):
    func = reduction(dtype, kind)
    vector, serial = build(func, STRICT), build(func, SERIAL)
    rng = np.random.default_rng(11)
    for n in (1, 5, lanes(dtype) + 3, 200):
        for fill in (0.0, -0.0, np.nan, np.inf, -np.inf):
            a = rng.choice([0.0, -0.0, 1.0, -1.0], n).astype(dtype)
            a[rng.integers(0, n)] = fill
            for init in (0.0, -0.0, np.nan):
                s = np.array([init], dtype)
                assert same_bits(run(vector, a, s), run(serial, a, s)), (n, fill, init)


def test_dot_with_fma_contraction_within_bound_and_ordered_without():
    func = dot("float32")
    rng = np.random.default_rng(5)
    a, b = (rng.uniform(-1, 1, 1003).astype("float32") for _ in range(2))
    init = np.array([0.25], "float32")
    want = run(build(func, SERIAL), a, b, init)
    got = run(build(func, {}), a, b, init)
    assert abs(float(got) - float(want)) <= float_bound("float32", "add", 0.25, a * b)
    assert same_bits(run(build(func, ORDERED), a, b, init), want)


def test_other_statements_run_once_per_iteration():
    func = sum_and_scale("int32")
    vector, serial = build(func, STRICT), build(func, SERIAL)
    for n in sizes("int32"):
        a = (np.arange(n) % 1000).astype("int32")
        outs = []
        for mod in (vector, serial):
            b, s = np.full(n, -7, "int32"), np.array([3], "int32")
            mod["main"](a, b, s)
            outs.append((b, s))
        np.testing.assert_array_equal(outs[0][0], outs[1][0])
        assert outs[0][1][0] == outs[1][1][0] == 3 + 2 * a.sum()


def test_remark_says_vectorized_and_notes_reassociation():
    with transform.PassContext(config=STRICT):
        mod = codegen.build(sum_kernel("float32"))
    first = mod.remarks[0].line
    assert ": vectorized: reduction S[0] (add): 4 accumulators" in first
    assert "float sum reassociated: results may differ from the serial order in rounding" in first
    exact = build(reduction("float32", "max"), STRICT).remarks[0].line
    assert ": vectorized: reduction S[0] (max)" in exact and "reassociated" not in exact


def stack_slots(ll: str) -> list[str]:
    """The names of the allocas left in optimized LLVM IR."""
    return re.findall(r"%([\w.]+) = alloca", ll)


def test_llvm_reduces_horizontally_and_keeps_accumulators_in_registers():
    """After O3 the hot accumulators have no stack slot (SROA promoted them to registers):
    the main loop has no load or store of them; one llvm.vector.reduce after it. Only the
    tail's accumulator, written by a masked store, may stay in memory."""
    ll = build(sum_kernel("float32"), STRICT).get_source("ll")
    assert "call reassoc float @llvm.vector.reduce.fadd" in ll
    assert all(name.startswith("S_tail") for name in stack_slots(ll)), stack_slots(ll)
    ordered = build(sum_kernel("float32"), ORDERED).get_source("ll")
    assert "call float @llvm.vector.reduce.fadd" in ordered  # no reassoc flag
    assert all(name.startswith("S_tail") for name in stack_slots(ordered))
    for kind in ("min", "max", "and", "xor"):
        ll = build(reduction("int32", kind), STRICT).get_source("ll")
        assert f"@llvm.vector.reduce.{'s' if kind in ('min', 'max') else ''}{kind}" in ll
        assert all(name.startswith("S_tail") for name in stack_slots(ll))


def row_sums(kind: str, lo: int, loop_dtype: str = "int32"):
    """``S[r] = 0; for i in vectorized(lo, n): S[r] += A[r, i]`` under a ``kind`` row loop."""
    m = tir.size_var("m", loop_dtype)
    n = tir.size_var("n", loop_dtype)
    A = tir.decl_buffer((m, n), "float64", "A")
    S = tir.decl_buffer((m,), "float64", "S")
    ib = ir_builder.create()
    a, s = ib.buffer_ptr(A), ib.buffer_ptr(S)
    with ib.for_range(0, m, kind=kind, name="r") as r:
        s[r] = tir.const(0, "float64")
        with ib.for_range(tir.const(lo, loop_dtype), n, kind="vectorize", name="i") as i:
            s[r] = s[r] + a[r, i]
    return tir.PrimFunc([A, S], ib.get())


@pytest.mark.parametrize("kind", ["serial", "parallel"])
@pytest.mark.parametrize("lo", [0, 3])
@pytest.mark.parametrize("loop_dtype", ["int32", "int64"])
def test_row_sums_inside_serial_and_parallel_loops(kind, lo, loop_dtype):
    """Accumulators per row (each parallel task its own), a loop start other than 0, and
    extents below 0 (n < lo: no iteration)."""
    mod = build(row_sums(kind, lo, loop_dtype), ORDERED)
    assert "vectorized: reduction S[r] (add)" in mod.remarks[0].line
    for rows, cols in [(1, 0), (2, 1), (3, 5), (7, 37), (64, 1001)]:
        a = np.random.default_rng(cols).uniform(-1, 1, (rows, cols))
        s = np.full(rows, 9.0)
        mod["main"](a, s)
        want = [float(np.sum(a[r, lo:], dtype="float64")) if cols > lo else 0.0
                for r in range(rows)]
        np.testing.assert_allclose(s, want, rtol=1e-12, atol=1e-12)


NO_IF_CONVERSION = {**STRICT, "tir.vectorize.if_conversion": False}


@pytest.mark.parametrize("dtype,kind", [("float32", "add"), ("float64", "mul"),
                                        ("int32", "add"), ("int8", "max"), ("uint32", "xor")])
@pytest.mark.parametrize("config", [STRICT, ORDERED, NO_IF_CONVERSION],
                         ids=["reassoc", "ordered", "if-scalarized"])
def test_conditional_reduction(dtype, kind, config):
    """``if A[i] > 0: S[0] OP= A[i] else: B[i] = A[i]``: the if stays around the update of
    each lane's accumulator (if-converted: masked); the else-branch still runs."""
    func = guarded(dtype, kind)
    vector, serial = build(func, config), build(func, SERIAL)
    assert f"reduction S[0] ({kind}, under an if)" in vector.remarks[0].line
    rng = np.random.default_rng(9)
    exact = config is ORDERED or not (dtype.startswith("float") and kind in ("add", "mul"))
    for n in sizes(dtype):
        a, init = values(dtype, kind, n, rng), values(dtype, kind, 1, rng)
        outs = []
        for mod in (vector, serial):
            b, s = np.zeros(n, dtype), init.copy()
            mod["main"](a, b, s)
            outs.append((b, s[0]))
        np.testing.assert_array_equal(outs[0][0], outs[1][0])
        if exact:
            assert same_bits(outs[0][1], outs[1][1]), n
        else:
            assert abs(float(outs[0][1]) - float(outs[1][1])) <= \
                float_bound(dtype, kind, init[0], a[a > 0]), n


@pytest.mark.parametrize("dtype", ["int32", "int64", "float64"])
def test_accumulators_in_elements_of_one_buffer_match_serial_and_interpreter(dtype):
    """M[0], M[1], M[2] of one buffer: each a reduction of its own (the others are apart)."""
    func = moments(dtype)
    with transform.collect_remarks() as remarks:
        vector = build(func, STRICT)
    assert any("reduction M[0] (add), M[1] (add), M[2] (max)" in r.line for r in remarks)
    serial, interp = build(func, SERIAL), build(func, STRICT, target="interp")
    rng = np.random.default_rng(7)
    for n in sizes(dtype):
        a = rng.integers(-1000, 1000, n).astype(dtype)
        start = np.array([3, -2, -5000], dtype)
        got, want = start.copy(), start.copy()
        vector(a, got)
        serial(a, want)
        if dtype.startswith("float"):  # sums of integers in float64: exact in any order
            assert got.tobytes() == want.tobytes(), n
        else:
            np.testing.assert_array_equal(got, want)
        if n < 70:
            again = start.copy()
            interp(a, again)
            np.testing.assert_array_equal(again, want)


def test_an_accumulator_read_by_another_keeps_the_loop_serial():
    n = tir.size_var("n")
    A, M = tir.decl_buffer((n,), "int32", "A"), tir.decl_buffer((2,), "int32", "M")
    ib = ir_builder.create()
    a, m = ib.buffer_ptr(A), ib.buffer_ptr(M)
    with ib.for_range(0, n, kind="vectorize", name="i") as i:
        m[0] = m[0] + a[i]
        m[1] = m[1] + m[0]  # a running total of running totals: not a reduction of M[1]
    func = tir.PrimFunc([A, M], ib.get())
    with transform.collect_remarks() as remarks:
        vector = build(func, STRICT)
    assert any("not a reduction: M[0] = M[0] + A[i]: M[1] = M[1] + M[0] reads M" in r.line
               for r in remarks), remarks
    a = np.arange(100, dtype="int32")
    got, want = np.zeros(2, "int32"), np.zeros(2, "int32")
    vector(a, got)
    build(func, SERIAL)(a, want)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", ["int32", "uint8", "float32"])
def test_a_sum_unrolled_by_hand_is_a_reduction_of_its_terms(dtype):
    """s + a0 + a1 + ... + a4 is taken as s + (a0 + ... + a4): integers exactly, floats
    within the reassociation bound; in ordered mode the float form stays serial."""
    func = unrolled_sum(dtype)
    with transform.collect_remarks() as remarks:
        vector = build(func, STRICT)
    assert any("vectorized: reduction S[0] (add)" in r.line for r in remarks), remarks
    serial = build(func, SERIAL)
    rng = np.random.default_rng(3)
    for n in sizes(dtype)[::3]:
        if dtype == "float32":
            a = rng.uniform(-1e3, 1e3, (n, 5)).astype(dtype)
        else:
            a = rng.integers(0, 200, (n, 5)).astype(dtype)  # uint8 wraps: exact either way
        got, want = np.array([7], dtype), np.array([7], dtype)
        vector(a, got)
        serial(a, want)
        if dtype == "float32":
            bound = 1e-5 * (np.abs(a).astype("float64").sum() + 7)
            assert abs(float(got[0]) - float(want[0])) <= bound, n
        else:
            np.testing.assert_array_equal(got, want)
    if dtype == "float32":
        with transform.collect_remarks() as remarks:
            build(func, ORDERED)
        assert any("not a reduction" in r.line and "float rounding" in r.line
                   for r in remarks), remarks
