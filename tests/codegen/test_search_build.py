"""Index-of-max/min loops (``if A[i] > M[0]: M[0] = A[i]; K[0] = i``), the guarded max/min
alone (``if A[i] > M[0]: M[0] = A[i]``), first-match loops
(``if K[0] == -1 and A[i] > t: K[0] = i``) and last-match loops (``if A[i] > t: K[0] = i``)
built end to end: the vectorized build, the serial
build and the interpreter agree bit for bit, with ties, NaN, signed zeros, all-equal data and
no update at all (M and K keep their start)."""

import numpy as np
import pytest
from reduction_kernels import (
    COMPARES,
    argbest,
    argmax,
    first_match,
    guarded_best,
    last_match,
)

import codegen
import transform

SERIAL = {"tir.disable_vectorize": True}
BITS = codegen.Target("llvm").vector_width_bits


def build(func, config=None, target="llvm"):
    with transform.PassContext(config=config or {}):
        return codegen.build(func, target=target)


def run(mod, a, m0, k0):
    m, k = np.array([m0], a.dtype), np.array([k0], mod.k_dtype)
    mod["main"](a.copy(), m, k)
    return m[0], k[0]


def three(dtype, compare, index_dtype="int32"):
    func = argbest(dtype, compare, index_dtype)
    mods = [build(func), build(func, SERIAL), build(func, target="interp")]
    for mod in mods:
        mod.k_dtype = index_dtype
    return mods


def same(x, y) -> bool:
    (m1, k1), (m2, k2) = x, y
    return k1 == k2 and np.asarray(m1).tobytes() == np.asarray(m2).tobytes()


def sizes(dtype):
    vl = BITS // 32 if np.dtype(dtype).itemsize <= 4 else BITS // 64
    return sorted(set(range(0, 70)) | {2 * vl - 1, 2 * vl, 2 * vl + 1, 4 * vl + 3, 1000, 4099})


def data(dtype, n, rng, kind):
    if kind == "ties":  # few distinct values: many ties
        return rng.integers(0, 4, n).astype(dtype)
    if kind == "equal":
        return np.full(n, 2, dtype)
    if kind == "zeros":
        return rng.choice([0.0, -0.0], n).astype(dtype)
    a = rng.uniform(-5, 5, n).astype(dtype)
    if kind == "nan" and n:
        a[rng.integers(0, n, 1 + n // 10)] = np.nan
    return a


@pytest.mark.parametrize("compare", list(COMPARES))
@pytest.mark.parametrize("dtype", ["float32", "float64", "int8", "int32", "uint16", "int64"])
def test_search_matches_serial_and_interpreter(dtype, compare):
    vector, serial, interp = three(dtype, compare)
    rng = np.random.default_rng(len(dtype) * 10 + len(compare))
    kinds = ["ties", "equal"] + (["random", "nan", "zeros"] if dtype.startswith("f") else [])
    starts = [(np.inf if "<" in compare else -np.inf, -1), (2, 7)] if dtype.startswith("f") \
        else [(np.iinfo(dtype).max if "<" in compare else np.iinfo(dtype).min, -1), (2, 7)]
    if dtype.startswith("f"):
        starts += [(np.nan, 5), (0.0, 3), (-0.0, 3)]
    for n in sizes(dtype):
        for kind in kinds:
            a = data(dtype, n, rng, kind)
            for m0, k0 in starts:
                want = run(serial, a, m0, k0)
                assert same(run(vector, a, m0, k0), want), (n, kind, m0, k0)
                if n < 40 and kind in ("ties", "nan", "zeros"):
                    assert same(run(interp, a, m0, k0), want), (n, kind, m0, k0)


def test_argmax_is_numpys_first_index_and_n0_keeps_the_start():
    vector = build(argmax("float32"))
    vector.k_dtype = "int32"
    rng = np.random.default_rng(2)
    for n in (1, 17, 1000, 65537):
        a = rng.integers(-3, 4, n).astype("float32")
        assert run(vector, a, -np.inf, -1) == (a.max(), np.argmax(a))
        b = -a
        assert run(vector, b, -np.inf, -1)[1] == np.argmax(b)
    assert run(vector, np.zeros(0, "float32"), 1.5, 42) == (1.5, 42)


def test_int64_index_and_remark():
    vector, serial, _ = three("float32", ">=", "int64")
    a = np.random.default_rng(4).integers(0, 3, 300).astype("float32")
    assert same(run(vector, a, -1.0, -1), run(serial, a, -1.0, -1))
    first = str(vector.remarks[0])
    assert "vectorized: search M[0], K[0] (the last index of the max)" in first


def test_no_if_left_in_the_vector_loops():
    """The per-lane update is Select: the hot loop has no branch on the data, and the lanes
    live in registers (no stack slot left after O3)."""
    tir_text = build(argmax("float32")).get_source("tir")
    assert "T.Select" in tir_text
    ll = build(argmax("float32")).get_source("ll")
    assert "alloca" not in ll and "llvm.vector.reduce.fmaximum" in ll


@pytest.mark.parametrize("dtype,index_dtype", [("float32", "int32"), ("float64", "int64"),
                                               ("int8", "int32"), ("uint32", "int64")])
def test_first_match_matches_serial_and_interpreter(dtype, index_dtype):
    func = first_match(dtype, 2, index_dtype)
    mods = [build(func), build(func, SERIAL), build(func, target="interp")]
    assert "vectorized: first match K[0] (while K[0] == " in str(mods[0].remarks[0])
    rng = np.random.default_rng(13)
    for n in sizes(dtype):
        for density in (0.0, 0.01, 0.5):  # no match, a rare one, many
            a = np.where(rng.random(n) < density, 3, 1).astype(dtype)
            if dtype.startswith("f") and n:
                a[rng.integers(0, n)] = np.nan  # never > 2
            for k0 in (-1, 7, -5):  # only the marker -1 lets the loop store
                got = []
                for mod in mods[: 3 if n < 40 else 2]:
                    k = np.array([k0], index_dtype)
                    mod["main"](a.copy(), k)
                    got.append(int(k[0]))
                want = int(np.argmax(a > 2)) if k0 == -1 and (a > 2).any() else k0
                assert got == [want] * len(got), (n, density, k0, got)


@pytest.mark.parametrize("dtype,index_dtype", [("float32", "int32"), ("float64", "int64"),
                                               ("int8", "int32"), ("uint32", "int64")])
def test_last_match_matches_serial_and_interpreter(dtype, index_dtype):
    func = last_match(dtype, 2, index_dtype)
    mods = [build(func), build(func, SERIAL), build(func, target="interp")]
    assert "vectorized: last match K[0]" in str(mods[0].remarks[0])
    rng = np.random.default_rng(17)
    for n in sizes(dtype):
        for density in (0.0, 0.01, 0.5, 1.0):  # none, rare, many, all
            a = np.where(rng.random(n) < density, 3, 1).astype(dtype)
            if dtype.startswith("f") and n:
                a[rng.integers(0, n)] = np.nan  # never > 2
            for k0 in (-1, 7):
                got = []
                for mod in mods[: 3 if n < 40 else 2]:
                    k = np.array([k0], index_dtype)
                    mod["main"](a.copy(), k)
                    got.append(int(k[0]))
                hits = np.flatnonzero(a > 2)
                want = int(hits[-1]) if hits.size else k0
                assert got == [want] * len(got), (n, density, k0, got)


@pytest.mark.parametrize("absolute", [False, True], ids=["a", "abs(a)"])
@pytest.mark.parametrize("compare", list(COMPARES))
@pytest.mark.parametrize("dtype", ["float32", "float64", "int16", "int32"])
def test_guarded_max_min_matches_serial_and_interpreter(dtype, compare, absolute):
    """The value alone, kept as ``CMP`` keeps it: NaN never taken, the first (strict) or
    last of equal values, so +0.0 and -0.0 come out as in the serial loop."""
    func = guarded_best(dtype, compare, absolute)
    with transform.collect_remarks() as remarks:
        vector = build(func)
    assert any("vectorized: search M[0] (the" in str(r) for r in remarks), remarks
    serial, interp = build(func, SERIAL), build(func, target="interp")
    rng = np.random.default_rng(len(dtype) + len(compare) + absolute)
    floats = dtype.startswith("f")
    kinds = ["ties", "equal"] + (["random", "nan", "zeros"] if floats else [])
    starts = [np.inf if "<" in compare else -np.inf, 2, np.nan, 0.0, -0.0] if floats \
        else [np.iinfo(dtype).max if "<" in compare else np.iinfo(dtype).min, 2]

    def run1(mod, a, m0):
        m = np.array([m0], dtype)
        mod["main"](a.copy(), m)
        return m.tobytes()

    for n in sizes(dtype):
        for kind in kinds:
            a = data(dtype, n, rng, kind)
            if not floats:
                a -= 2  # negative values: abs of them, and of the minimum, is in the data
            for m0 in starts:
                want = run1(serial, a, m0)
                assert run1(vector, a, m0) == want, (n, kind, m0)
                if n < 40 and kind in ("ties", "nan", "zeros"):
                    assert run1(interp, a, m0) == want, (n, kind, m0)
