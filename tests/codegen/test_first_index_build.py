"""The first index with a flag (``if F[0] == 0 and A[i] > t: K[0] = i; F[0] = 1``) built
end to end: the vectorized build, the serial build and the interpreter agree bit for bit on
no match, a match in the first lane or the tail, NaN, all-equal data and a flag raised at the
start; a look-alike that would change the result stays serial with a remark."""

import numpy as np
import pytest
from reduction_kernels import flagged_match

import codegen
import tir
import transform
from tir import ir_builder

SERIAL = {"tir.disable_vectorize": True}
LANES = codegen.Target("llvm").vector_width_bits // 32


def build(func, config=None, target="llvm"):
    with transform.PassContext(config=config or {}):
        return codegen.build(func, target=target)


def cases(n, rng):
    """Data reaching the edges: none, all, first lane, last element, random, with NaN."""
    yield np.ones(n)
    yield np.full(n, 3.0)
    for at in {0, n - 1, n // 2, max(n - LANES - 1, 0)} if n else ():  # first lane, tail
        a = np.ones(n)
        a[at] = 3.0
        yield a
    for density in (0.01, 0.5):
        yield np.where(rng.random(n) < density, 3.0, 1.0)


@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_flagged_first_match_matches_serial_and_interpreter(dtype):
    func = flagged_match(dtype, 2)
    mods = [build(func), build(func, SERIAL), build(func, target="interp")]
    assert "vectorized: first match K[0] (while F[0] == 0)" in str(mods[0].remarks[0])
    rng = np.random.default_rng(29)
    for n in sorted({0, 1, 2, LANES - 1, LANES, LANES + 1, 1000}):
        for data in cases(n, rng):
            a = data.astype(dtype)
            if dtype == "float32" and n > 1:
                a[rng.integers(0, n)] = np.nan  # never > 2
            for f0 in (0, 1):  # a raised flag keeps K and F untouched
                got = []
                for mod in mods[: 3 if n < 40 else 2]:
                    k, f = np.array([-7], "int32"), np.array([f0], "int32")
                    mod["main"](a.copy(), k, f)
                    got.append((int(k[0]), int(f[0])))
                hit = a > 2
                want = (int(np.argmax(hit)), 1) if f0 == 0 and hit.any() else (-7, f0)
                assert got == [want] * len(got), (n, f0, got)


def _flag_kept_open(raise_to: int) -> tir.PrimFunc:
    """The flag form with ``F[0] = raise_to``; 0 keeps the search open (the LAST match)."""
    n = tir.size_var("n")
    A = tir.decl_buffer((n,), "float32", "A")
    K = tir.decl_buffer((1,), "int32", "K")
    F = tir.decl_buffer((1,), "int32", "F")
    ib = ir_builder.create()
    a, k, f = ib.buffer_ptr(A), ib.buffer_ptr(K), ib.buffer_ptr(F)
    with ib.for_range(0, n, "i", kind="vectorize") as i:
        with ib.if_scope(tir.all(f[0] == 0, a[i] > tir.const(2.0, "float32"))):
            k[0] = i
            f[0] = raise_to
    return tir.PrimFunc([A, K, F], ib.get())


def test_a_flag_that_stays_down_is_refused_with_a_remark():
    mod = build(_flag_kept_open(0))
    text = " ".join(" ".join(str(r) for r in mod.remarks).split())  # the remark wraps
    assert "F[0] = 0 must store a constant failing F[0] == 0" in text
    a = np.array([3, 1, 3, 3], "float32")
    k, f = np.array([-1], "int32"), np.array([0], "int32")
    mod["main"](a, k, f)
    assert (k[0], f[0]) == (3, 0)  # the serial loop's answer: the last match


#: the sentinel forms: the guard on K[0] and the remark's words for it
SENTINELS = {"k == n": (lambda k, n: k == n, "(while K[0] == n)"),
             "k < 0": (lambda k, n: k < 0, "(while K[0] < 0)")}


def sentinel_match(dtype: str, guard) -> tir.PrimFunc:
    """``if guard(K[0], n) and A[i] > 2: K[0] = i``; call as ``(a, k)``."""
    n = tir.size_var("n")
    A = tir.decl_buffer((n,), dtype, "A")
    K = tir.decl_buffer((1,), "int32", "K")
    ib = ir_builder.create()
    a, k = ib.buffer_ptr(A), ib.buffer_ptr(K)
    with ib.for_range(0, n, "i", kind="vectorize") as i:
        with ib.if_scope(tir.all(guard(k[0], n), a[i] > tir.const(2, dtype))):
            k[0] = i
    return tir.PrimFunc([A, K], ib.get())


@pytest.mark.parametrize("form", list(SENTINELS))
@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_sentinel_first_match_matches_serial_and_interpreter(dtype, form):
    guard, words = SENTINELS[form]
    func = sentinel_match(dtype, guard)
    mods = [build(func), build(func, SERIAL), build(func, target="interp")]
    assert f"vectorized: first match K[0] {words}" in str(mods[0].remarks[0])
    rng = np.random.default_rng(31)
    for n in sorted({0, 1, 2, LANES - 1, LANES, LANES + 1, 1000}):
        for data in cases(n, rng):
            a = data.astype(dtype)
            if dtype == "float32" and n > 1:
                a[rng.integers(0, n)] = np.nan
            for k0 in sorted({n, -1, 5}):  # only the sentinel lets the loop store
                got = []
                for mod in mods[: 3 if n < 40 else 2]:
                    k = np.array([k0], "int32")
                    mod["main"](a.copy(), k)
                    got.append(int(k[0]))
                opens = bool(guard(k0, n))
                hit = a > 2
                want = int(np.argmax(hit)) if opens and hit.any() else k0
                assert got == [want] * len(got), (n, k0, got)


def test_first_match_leaves_after_the_first_block_with_a_match():
    """The blocks run in a ``while`` that tests the lanes; a last match has no early exit."""
    from reduction_kernels import last_match
    assert "while " in build(flagged_match("float32", 2)).get_source("tir")
    assert "while " not in build(last_match("float32", 2)).get_source("tir")


def _gathered_match() -> tir.PrimFunc:
    """``if F[0] == 0 and A[C[i]] > 2: K[0] = i; F[0] = 1``: a load not provably in bounds."""
    n = tir.size_var("n")
    A, C = tir.decl_buffer((n,), "float32", "A"), tir.decl_buffer((n,), "int32", "C")
    K, F = tir.decl_buffer((1,), "int32", "K"), tir.decl_buffer((1,), "int32", "F")
    ib = ir_builder.create()
    a, c, k, f = (ib.buffer_ptr(b) for b in (A, C, K, F))
    with ib.for_range(0, n, "i", kind="vectorize") as i:
        with ib.if_scope(tir.all(f[0] == 0, a[c[i]] > tir.const(2.0, "float32"))):
            k[0] = i
            f[0] = 1
    return tir.PrimFunc([A, C, K, F], ib.get())


def test_a_load_not_proven_in_bounds_keeps_every_block():
    """The serial loop evaluates A[C[i]] past the match too (its bound check may fail
    there), so the vector loop runs every block: vectorized, without the early exit."""
    func = _gathered_match()
    mods = [build(func), build(func, SERIAL), build(func, target="interp")]
    text = " ".join(str(mods[0].remarks[0]).split())
    assert "no early exit: A[C[i]] is not provably in bounds" in text
    assert "while " not in mods[0].get_source("tir")
    rng = np.random.default_rng(37)
    for n in sorted({0, 1, LANES - 1, LANES + 1, 1000}):
        a = np.where(rng.random(n) < 0.02, 3.0, 1.0).astype("float32")
        c = rng.integers(0, max(n, 1), n).astype("int32")
        got = []
        for mod in mods[: 3 if n < 40 else 2]:
            k, f = np.array([-1], "int32"), np.array([0], "int32")
            mod["main"](a, c, k, f)
            got.append((int(k[0]), int(f[0])))
        hit = a[c] > 2
        want = (int(np.argmax(hit)), 1) if hit.any() else (-1, 0)
        assert got == [want] * len(got), (n, got)
