"""The while search (``while I[0] < n and keep(I[0]): I[0] += 1``) built end to end: the
vectorized build (``VectorizeWhileSearch``, then ``VectorizeReductions``' first match), the
serial build (config ``tir.vectorize.while_search`` False) and the interpreter agree on a
match at the start, the end, in the tail, none, all, NaN, empty ranges and starts at or past
``n``; the vector code is really there, and a negative start fails the bound check as the
serial loop does."""

import numpy as np
import pytest

import codegen
import tir
import transform
from tir import ir_builder

SERIAL = {"tir.vectorize.while_search": False}
LANES = codegen.Target("llvm").vector_width_bits // 32  # float32 / int32 lanes on the host


def while_search(dtype="float32", form="guarded", index_dtype="int32", keep=None):
    """``while I[0] < n and keep(A[I[0]]): I[0] += 1``; the guarded form tests ``keep`` in
    ``if_then_else(I[0] < n, keep, False)`` over ``A`` of shape ``(n,)``; the and form reads
    ``A`` of shape ``(m,)`` up to ``n = m - 1`` (its last test reads ``A[n]``). Call as
    ``(a, i)``."""
    keep = keep or (lambda x: x <= tir.const(2, dtype))
    m = tir.size_var("m", index_dtype)
    A = tir.decl_buffer((m,), dtype, "A")
    n = m if form == "guarded" else m - 1
    I = tir.decl_buffer((1,), index_dtype, "I")  # noqa: E741 (the index buffer)
    ib = ir_builder.create()
    a, i = ib.buffer_ptr(A), ib.buffer_ptr(I)
    test, kept = i[0] < n, keep(a[i[0]])
    cond = tir.if_then_else(test, kept, tir.const(False, "bool")) if form == "guarded" \
        else tir.all(test, kept)
    with ib.while_loop(cond):
        i[0] = i[0] + 1
    return tir.PrimFunc([A, I], ib.get())


def build(func, config=None, target="llvm"):
    with transform.PassContext(config=config or {}):
        return codegen.build(func, target=target)


def cases(n, dtype, rng):
    """Data for ``keep = a <= 2``: no match, all, the first, the last, the tail, random."""
    yield np.ones(n)
    yield np.full(n, 3.0)
    for at in {0, n - 1, n // 2, max(n - 2, 0), max(n - LANES - 1, 0)} if n else ():
        a = np.ones(n)
        a[at] = 3.0
        yield a
    for density in (0.002, 0.05, 0.5):
        yield np.where(rng.random(n) < density, 3.0, 1.0)
    if dtype.startswith("float") and n > 1:
        a = np.ones(n)
        a[rng.integers(0, n)] = np.nan  # NaN <= 2 is false: NaN stops the search
        yield a


def expect(keep_np, a, start, n):
    """The serial loop's final I[0]."""
    i = start
    while i < n and keep_np(a[i]):
        i += 1
    return i


def run(mod, a, start, index_dtype):
    i = np.array([start], index_dtype)
    mod["main"](a.copy(), i)
    return int(i[0])


def check(func, form, dtype, index_dtype, keep_np, seed):
    mods = [build(func), build(func, SERIAL), build(func, target="interp")]
    rng = np.random.default_rng(seed)
    for n in sorted({0, 1, 2, LANES - 1, LANES, LANES + 1, 4 * LANES + 3, 1000}):
        for data in cases(n, dtype, rng):
            a = np.append(data, 3.0) if form == "and" else data  # A[n] of the and form
            a = a.astype(dtype)
            for start in sorted({0, 1, n // 3, n - 1, n, n + 5} - {-1}):
                if form == "and" and start > n:  # the serial test reads A[start], past A
                    continue
                got = [run(mod, a, start, index_dtype) for mod in mods[: 3 if n < 40 else 2]]
                want = expect(keep_np, a, start, n) if start < n else start
                assert got == [want] * len(got), (n, start, got, want)


@pytest.mark.parametrize("form", ["guarded", "and"])
@pytest.mark.parametrize("dtype,index_dtype", [("float32", "int32"), ("float64", "int64"),
                                               ("int32", "int32"), ("int16", "int64")])
def test_while_search_matches_serial_and_interpreter(form, dtype, index_dtype):
    func = while_search(dtype, form, index_dtype)
    check(func, form, dtype, index_dtype, lambda x: x <= 2, seed=37)


@pytest.mark.parametrize("form", ["guarded", "and"])
def test_keep_while_above_a_threshold(form):
    """``keep = a > 2``: the first element at most 2, or a NaN (NaN > 2 is false)."""
    func = while_search("float32", form, keep=lambda x: x > tir.const(2, "float32"))
    check(func, form, "float32", "int32", lambda x: x > 2, seed=47)


@pytest.mark.parametrize("form", ["guarded", "and"])
def test_search_for_the_first_nan(form):
    """``keep = a == a``: the search stops at the first NaN (``a != a``)."""
    func = while_search("float32", form, keep=lambda x: x == x)
    mods = [build(func), build(func, SERIAL), build(func, target="interp")]
    rng = np.random.default_rng(41)
    for n in (0, 1, LANES + 1, 1000):
        for at in sorted({0, n // 2, n - 1}) if n else (None,):
            a = rng.random(n + (form == "and")).astype("float32")
            if at is not None:
                a[at:] = np.where(rng.random(len(a) - at) < 0.5, np.nan, 1.0)
                a[at] = np.nan
            got = [run(mod, a, 0, "int32") for mod in mods[: 3 if n < 40 else 2]]
            want = expect(lambda x: x == x, a, 0, n)
            assert got == [want] * len(got), (n, at, got)


def test_the_build_is_vectorized_and_the_config_turns_it_off():
    func = while_search()
    vector, serial = build(func), build(func, SERIAL)
    text = " ".join(" ".join(str(r) for r in vector.remarks).split())
    assert f"({LANES} lanes): vectorized: first match I_found[0]" in text
    assert "leaving after the first block with a match" in text
    assert f"x{LANES}" in vector.get_source("tir") or "Ramp" in vector.get_source("tir")
    assert "Ramp" not in serial.get_source("tir") and not serial.remarks


def test_a_negative_start_runs_the_loop_as_written():
    """A start below 0 runs the while loop as written (the proof that reading ahead is
    harmless assumed a start >= 0): the interpreter, running the built IR, fails on A[-3]
    exactly as it does on the serial program."""
    func = while_search()
    assert "if 0 <= I_start and I_start < m:" in build(func).get_source("tir")
    a = np.ones(100, "float32")
    for mod in (build(func, target="interp"), build(func, SERIAL, target="interp")):
        with pytest.raises(IndexError, match="index -3 is out of bounds"):
            run(mod, a, -3, "int32")
        assert run(mod, a, 7, "int32") == 100


def rows_search(rows=5):
    """``for r in range(rows): while I[r] < n and A[r, I[r]] <= 2: I[r] += 1`` (guarded)."""
    n = tir.size_var("n")
    A = tir.decl_buffer((rows, n), "float32", "A")
    I = tir.decl_buffer((rows,), "int32", "I")  # noqa: E741 (the index buffer)
    ib = ir_builder.create()
    a, i = ib.buffer_ptr(A), ib.buffer_ptr(I)
    with ib.for_range(0, rows, "r") as r:
        with ib.while_loop(tir.if_then_else(i[r] < n, a[r, i[r]] <= tir.const(2, "float32"),
                                            tir.const(False, "bool"))):
            i[r] = i[r] + 1
    return tir.PrimFunc([A, I], ib.get())


@pytest.mark.parametrize("func", [while_search(), while_search(form="and"), rows_search()],
                         ids=["guarded", "and", "rows"])
def test_every_form_leaves_after_the_first_block_with_a_match(func):
    text = " ".join(" ".join(str(r) for r in build(func).remarks).split())
    assert "leaving after the first block with a match" in text, text


def test_a_search_per_row_matches_serial_and_interpreter():
    func = rows_search()
    mods = [build(func), build(func, SERIAL), build(func, target="interp")]
    rng = np.random.default_rng(43)
    for n in (0, 1, LANES + 3, 300):
        a = np.where(rng.random((5, n)) < 0.02, 3.0, 1.0).astype("float32")
        a[1, :] = 1.0  # a row without a match
        starts = np.array([0, 0, n // 2, n, n + 2], "int32")
        got = []
        for mod in mods:
            i = starts.copy()
            mod["main"](a, i)
            got.append(i.tolist())
        want = [expect(lambda x: x <= 2, a[r], int(s), n) if s < n else int(s)
                for r, s in enumerate(starts)]
        assert got == [want] * 3, (n, got, want)


def test_a_search_reading_no_memory_from_a_negative_start():
    """``keep = I[0] % 7 != 3`` reads nothing: a start below 0 (the loop as written) and one
    above agree with the serial build."""
    n = tir.size_var("m")
    A = tir.decl_buffer((n,), "int32", "A")
    I = tir.decl_buffer((1,), "int32", "I")  # noqa: E741 (the index buffer)
    ib = ir_builder.create()
    i = ib.buffer_ptr(I)
    with ib.while_loop(tir.if_then_else(i[0] < n, tir.floormod(i[0], 7) != 3,
                                        tir.const(False, "bool"))):
        i[0] = i[0] + 1
    func = tir.PrimFunc([A, I], ib.get())
    mods = [build(func), build(func, SERIAL), build(func, target="interp")]
    a = np.zeros(50, "int32")
    for start in (-20, -4, 0, 4, 45, 49, 50, 60):
        got = [run(mod, a, start, "int32") for mod in mods]
        want = start
        while want < 50 and want % 7 != 3:  # Python's % is floor modulo, as floormod
            want += 1
        assert got == [want] * 3, (start, got, want)
