"""Scans (``B[i + 1] = B[i] OP A[i]`` in a vectorized loop) built end to end.

``VectorizeScans`` computes them as in-register scans with a carried total: the
vectorized build equals the serial build (``tir.disable_vectorize``) and the
interpreter bit for bit for integers (wrapping), min and max (NaN included), and
NumPy's ``cumsum`` / ``cumprod`` / ``maximum.accumulate``; a float sum is within the
reassociation bound, and bit for bit in ordered mode, where it stays serial.
"""

import numpy as np
import pytest

import codegen
import tir
import transform
from tir import ir_builder
from transform.vector.analysis.scans import find_scan
from transform.vector.vectorize_scans import NOT_A_SCAN

BITS = codegen.Target("llvm").vector_width_bits
STRICT = {"codegen.llvm.fp_contract": False}
SERIAL = {**STRICT, "tir.disable_vectorize": True}
ORDERED = {**STRICT, "tir.vectorize.ordered_reductions": True}

OPS = {
    "add": lambda p, x: p + x, "mul": lambda p, x: p * x,
    "min": lambda p, x: tir.min(x, p), "max": lambda p, x: tir.max(p, x),
    "and": lambda p, x: p & x, "or": lambda p, x: x | p, "xor": lambda p, x: p ^ x,
}
ACCUMULATE = {"add": np.add, "mul": np.multiply, "min": np.minimum, "max": np.maximum,
              "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}
INTS = ["int8", "int16", "int32", "int64", "uint8", "uint32"]


def scan(dtype: str, kind: str, offset: int = 1) -> tir.PrimFunc:
    """``for i in vectorized(n): B[i + offset] = B[i + offset - 1] OP A[i]``; B has n + 1."""
    n = tir.size_var("n")
    A = tir.decl_buffer((n,), dtype, "A")
    B = tir.decl_buffer((n + 1,), dtype, "B")
    ib = ir_builder.create()
    a, b = ib.buffer_ptr(A), ib.buffer_ptr(B)
    with ib.for_range(0, n, kind="vectorize", name="i") as i:
        b[i + offset] = OPS[kind](b[i + offset - 1], a[i])
    return tir.PrimFunc([A, B], ib.get())


def build(func, config, target="llvm"):
    with transform.PassContext(config=config), transform.collect_remarks() as remarks:
        mod = codegen.build(func, target=target)
    mod.scan_remarks = [r.line for r in remarks]
    return mod


def sizes(dtype: str) -> list[int]:
    vl = max(1, BITS // (np.dtype(dtype).itemsize * 8))
    return sorted({0, 1, 2, 3, vl - 1, vl, vl + 1, 2 * vl, 3 * vl + 5, 1000, 4099})


def inputs(dtype: str, kind: str, n: int, rng) -> np.ndarray:
    if dtype.startswith("float"):
        if kind == "mul":
            return rng.uniform(0.999, 1.001, n).astype(dtype) * rng.choice([-1, 1], n)
        a = rng.uniform(-1e3, 1e3, n).astype(dtype)
        if kind in ("min", "max") and n > 3:
            a[[1, n // 2]] = [np.nan, -0.0]
            a[n - 1] = np.inf if kind == "max" else -np.inf
        return a
    info = np.iinfo(dtype)
    if kind == "mul":  # products of +-1 and a few 2s: no signed overflow (LLVM's nsw)
        return rng.choice([1, 1, 1, -1 if info.min < 0 else 1, 2], n).astype(dtype)
    if kind == "add" and dtype in ("int32", "int64"):  # no signed overflow either
        return rng.integers(-1000, 1000, n).astype(dtype)
    return rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)


def run(mod, a, start):
    b = np.zeros(a.size + 1, a.dtype)
    b[0] = start
    mod(a.copy(), b)
    return b


@pytest.mark.parametrize("kind", list(OPS))
@pytest.mark.parametrize("dtype", INTS)
def test_integer_scans_equal_serial_interpreter_and_numpy(dtype, kind):
    func = scan(dtype, kind)
    vector = build(func, STRICT)
    assert any(f"vectorized: scan B[i + 1] ({kind})" in r for r in vector.scan_remarks), \
        vector.scan_remarks
    serial, interp = build(func, SERIAL), build(func, STRICT, target="interp")
    rng = np.random.default_rng(len(dtype) * 7 + len(kind))
    start = 3 if kind != "mul" else 1
    for n in sizes(dtype):
        a = inputs(dtype, kind, n, rng)
        want = run(serial, a, start)
        np.testing.assert_array_equal(run(vector, a, start), want, err_msg=str(n))
        with np.errstate(over="ignore"):
            ref = ACCUMULATE[kind].accumulate(np.concatenate([[start], a]).astype(dtype),
                                              dtype=dtype)
        np.testing.assert_array_equal(want, ref)
        if n < 40:
            np.testing.assert_array_equal(run(interp, a, start), want)


@pytest.mark.parametrize("kind", ["min", "max"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_float_min_max_scans_are_exact(dtype, kind):
    func = scan(dtype, kind)
    vector, serial = build(func, STRICT), build(func, SERIAL)
    assert any("vectorized: scan" in r for r in vector.scan_remarks)
    rng = np.random.default_rng(5)
    for n in sizes(dtype):
        for start in (0.0, -0.0, np.nan, -np.inf):
            a = inputs(dtype, kind, n, rng)
            got, want = run(vector, a, start), run(serial, a, start)
            assert got.tobytes() == want.tobytes(), (n, start)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_a_float_prefix_sum_is_cumsum_within_reassociation(dtype):
    func = scan(dtype, "add")
    vector = build(func, STRICT)
    assert any("float terms regrouped" in r for r in vector.scan_remarks)
    rng = np.random.default_rng(9)
    for n in sizes(dtype):
        a = inputs(dtype, "add", n, rng)
        got = run(vector, a, 2.0)
        exact = np.cumsum(np.concatenate([[2.0], a.astype("float64")]))
        bound = np.finfo(dtype).eps * 16 * np.cumsum(np.abs(np.concatenate([[2.0], a])))
        assert (np.abs(got - exact) <= bound + 1e-30).all(), n
    # ordered mode: serial, bit for bit
    ordered = build(func, ORDERED)
    assert any(NOT_A_SCAN in r and "ordered_reductions" in r for r in ordered.scan_remarks)
    a = inputs(dtype, "add", 1000, rng)
    assert run(ordered, a, 2.0).tobytes() == run(build(func, SERIAL), a, 2.0).tobytes()


def _looks_like(ib, i, a, b):
    b[i + 2] = b[i] + a[i]  # reads two back: not a scan


def _minus(ib, i, a, b):
    b[i + 1] = b[i] - a[i]


def _reads_again(ib, i, a, b):
    b[i + 1] = b[i] + (b[i] & a[i])


REFUSED = [(_looks_like, None), (_minus, "not an associative op"),
           (_reads_again, "reads B too")]


@pytest.mark.parametrize("body,reason", REFUSED, ids=["distance 2", "minus", "reads B"])
def test_look_alikes_stay_serial_with_a_reason(body, reason):
    n = tir.size_var("n")
    A = tir.decl_buffer((n,), "int32", "A")
    B = tir.decl_buffer((n + 2,), "int32", "B")
    ib = ir_builder.create()
    a, b = ib.buffer_ptr(A), ib.buffer_ptr(B)
    with ib.for_range(0, n, kind="vectorize", name="i") as i:
        body(ib, i, a, b)
    func = tir.PrimFunc([A, B], ib.get())
    found, why = find_scan(func.body)
    vector, serial = build(func, STRICT), build(func, SERIAL)
    if reason is None:  # another recurrence, not a look-alike: no scan remark at all
        assert found is None and why is None
        assert not any(NOT_A_SCAN in r for r in vector.scan_remarks)
    else:
        assert found is None and reason in why
        assert any(NOT_A_SCAN in r and reason in r for r in vector.scan_remarks)
    a = np.arange(50, dtype="int32")
    got, want = np.ones(52, "int32"), np.ones(52, "int32")
    vector(a, got)
    serial(a, want)
    np.testing.assert_array_equal(got, want)


def test_a_row_scan_in_a_2d_nest():
    """B[r, j + 1] = B[r, j] + A[r, j] for each row r (the row index fixed in the loop)."""
    rows, n = tir.size_var("rows"), tir.size_var("n")
    A = tir.decl_buffer((rows, n), "int64", "A")
    B = tir.decl_buffer((rows, n + 1), "int64", "B")
    ib = ir_builder.create()
    a, b = ib.buffer_ptr(A), ib.buffer_ptr(B)
    with ib.for_range(0, rows, name="r") as r:
        with ib.for_range(0, n, kind="vectorize", name="j") as j:
            b[r, j + 1] = b[r, j] + a[r, j]
    func = tir.PrimFunc([A, B], ib.get())
    vector = build(func, STRICT)
    assert any("vectorized: scan B[r, j + 1] (add)" in r for r in vector.scan_remarks)
    a = np.random.default_rng(2).integers(-9, 9, (5, 37)).astype("int64")
    b = np.zeros((5, 38), "int64")
    vector(a, b)
    np.testing.assert_array_equal(b[:, 1:], np.cumsum(a, axis=1))
