"""Reductions and searches over a loop with an int64 var (a size_var("n", "int64"), or
what VectorizeWhileSearch makes of an int64 index): every block copy vectorizes (the lane
buffers are indexed in the loop var's own type; an int32 cast of the lane hid from the
dependence analysis that distinct lanes are distinct elements), and the results are the
serial build's and the interpreter's."""

import numpy as np
import pytest

import codegen
import tir
import transform
from tir import ir_builder

SERIAL = {"tir.disable_vectorize": True}
LANES = codegen.Target("llvm").vector_width_bits // 32


def _loop_func(dtype: str, acc_dtype: str, body) -> tir.PrimFunc:
    n = tir.size_var("n", "int64")
    A = tir.decl_buffer((n,), dtype, "A")
    K = tir.decl_buffer((1,), acc_dtype, "K")
    ib = ir_builder.create()
    a, k = ib.buffer_ptr(A), ib.buffer_ptr(K)
    with ib.for_range(tir.const(0, "int64"), n, kind="vectorize", name="i",
                      dtype="int64") as i:
        body(ib, i, a, k, n)
    return tir.PrimFunc([A, K], ib.get())


def _first_match(ib, i, a, k, n):
    with ib.if_scope(tir.all(k[0] == n, a[i] > 2)):
        k[0] = i


def _last_match(ib, i, a, k, n):
    with ib.if_scope(a[i] > 2):
        k[0] = i


def _sum(ib, i, a, k, n):
    k[0] = k[0] + a[i]


KERNELS = {
    "first match": (_first_match, "int64", "first match K[0]"),
    "last match": (_last_match, "int64", "last match K[0]"),
    "sum": (_sum, "int32", "reduction K[0]"),
}


def _build(func, config=None, target="llvm"):
    with transform.PassContext(config=config or {}), transform.collect_remarks() as remarks:
        mod = codegen.build(func, target=target)
    return mod, [r.line for r in remarks]


def _start(name: str, n: int) -> int:
    return n if name == "first match" else -5


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_int64_loops_vectorize_every_block(name):
    body, acc_dtype, what = KERNELS[name]
    mod, remarks = _build(_loop_func("int32", acc_dtype, body))
    text = " ".join(remarks)
    assert f"vectorized: {what}" in text
    assert "a copy not vectorized" not in text, text


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_int64_loops_match_serial_and_interpreter(name):
    body, acc_dtype, _ = KERNELS[name]
    func = _loop_func("int32", acc_dtype, body)
    mods = [_build(func)[0], _build(func, SERIAL)[0], _build(func, target="interp")[0]]
    rng = np.random.default_rng(64)
    for n in sorted({0, 1, LANES - 1, LANES, 4 * LANES + 3, 1001}):
        datas = [np.ones(n, "int32"), np.full(n, 3, "int32"),
                 rng.integers(-2**31, 2**31, n, dtype=np.int64).astype(np.int32),
                 np.where(rng.random(n) < 0.01, 3, 1).astype(np.int32)]
        for a in datas:
            got = []
            for mod in mods[: 3 if n < 64 else 2]:
                k = np.array([_start(name, n) if acc_dtype == "int64" else 7], acc_dtype)
                mod["main"](a.copy(), k)
                got.append(int(k[0]))
            assert got == [_expected(name, a)] * len(got), (name, n, got)


def _expected(name: str, a: np.ndarray) -> int:
    hits = np.flatnonzero(a > 2)
    if name == "first match":
        return int(hits[0]) if hits.size else a.size
    if name == "last match":
        return int(hits[-1]) if hits.size else -5
    return int(np.int32(7) + a.sum(dtype=np.int32))
