"""The gather policy (codegen/llvm/gather.py): hardware gathers or scalar loads, per target.

Both policies must compute what the serial loop computes (duplicates in a
scatter: the later lane wins), the table's choice must show in the emitted IR,
the scalar choice must survive LLVM's optimizer, and int64 offsets that
provably fit become 32-bit gather indices.
"""

import re
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import codegen
import tir
import transform
from codegen.llvm.gather import GATHER_TABLE, POLICIES, gather_policy
from target.target import Target
from tir import ir_builder
from tir.stmt import BufferStore, For, ForKind

ROOT = Path(__file__).resolve().parents[2]
LANES = 8
BLOCKS = 13
N = LANES * BLOCKS
SRC = 50  # elements of the gathered-from buffer: indices repeat
BOTH = ("hardware", "scalar")
DTYPES = ("float32", "float64", "int8", "int16", "int32")


def _build(func, policy, target="llvm", **config):
    with transform.PassContext(config={"codegen.gather": policy, **config}):
        return codegen.build(func, target)


def _block_loop(body):
    """``for i in range(BLOCKS): body(i, ramp)`` with ``ramp = i*LANES : i*LANES + LANES``."""
    i = tir.Var("i", "int32")
    ramp = tir.Ramp(i * LANES, 1, LANES)
    return For(i, tir.const(0, "int32"), tir.const(BLOCKS, "int32"), ForKind.SERIAL,
               body(i, ramp))


def gather_func(dtype, idx_dtype="int32", predicated=False):
    """C[ramp] = A[idx[ramp]] (lanes >= k masked off if ``predicated``), hand-vectorized."""
    A = tir.decl_buffer((SRC,), dtype, name="A")
    idx = tir.decl_buffer((N,), idx_dtype, name="idx")
    C = tir.decl_buffer((N,), dtype, name="C")
    k = tir.Var("k", "int32")

    def body(i, ramp):
        mask = None
        if predicated:
            mask = tir.Ramp(i * LANES, 1, LANES) < tir.Broadcast(k, LANES)
        return BufferStore(C, tir.BufferLoad(A, [idx[ramp]], predicate=mask), [ramp])

    return tir.PrimFunc([A, idx, C, k], _block_loop(body))


def scatter_func(dtype, idx_dtype="int32", predicated=False):
    """C[idx[ramp]] = A[ramp] (lanes >= k masked off if ``predicated``), hand-vectorized."""
    A = tir.decl_buffer((N,), dtype, name="A")
    idx = tir.decl_buffer((N,), idx_dtype, name="idx")
    C = tir.decl_buffer((SRC,), dtype, name="C")
    k = tir.Var("k", "int32")

    def body(i, ramp):
        mask = tir.Ramp(i * LANES, 1, LANES) < tir.Broadcast(k, LANES) if predicated else None
        return BufferStore(C, A[ramp], [idx[ramp]], predicate=mask)

    return tir.PrimFunc([A, idx, C, k], _block_loop(body))


def _values(rng, dtype, n):
    if dtype.startswith("float"):
        return rng.standard_normal(n).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, n, endpoint=True).astype(dtype)


def _ways(func, args, out):
    """``out`` after running ``func`` under both policies and in the interpreter."""
    results = {}
    for way in (*BOTH, "interp"):
        call = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        mod = codegen.build(func, "interp") if way == "interp" else _build(func, way)
        mod(*call)
        results[way] = call[out]
    return results


@pytest.mark.parametrize("predicated", [False, True])
@pytest.mark.parametrize("idx_dtype", ["int32", "int64"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_gather_matches_serial(dtype, idx_dtype, predicated):
    rng = np.random.default_rng(7)
    a = _values(rng, dtype, SRC)
    idx = rng.integers(0, SRC, N).astype(idx_dtype)
    k = N - 5 if predicated else N
    if predicated:
        idx[k:] = [-(2**30), 2**30, -1, SRC, 2**30 - 1]  # masked off: never read
    want = np.zeros(N, dtype)
    for j in range(k):
        want[j] = a[idx[j]]
    for way, got in _ways(gather_func(dtype, idx_dtype, predicated),
                          (a, idx, np.full(N, 3, dtype), k), 2).items():
        np.testing.assert_array_equal(got, want, err_msg=way)


@pytest.mark.parametrize("predicated", [False, True])
@pytest.mark.parametrize("dtype", DTYPES)
def test_scatter_later_lane_wins_as_serial(dtype, predicated):
    rng = np.random.default_rng(11)
    a = _values(rng, dtype, N)
    idx = rng.integers(0, 6, N).astype("int32")  # many duplicates, also inside one vector
    idx[:LANES] = [2, 2, 2, 5, 5, 2, 0, 5]
    k = N - 3 if predicated else N
    if predicated:
        idx[k:] = [-(2**30), 2**30, SRC]
    start = _values(rng, dtype, SRC)
    want = start.copy()
    for j in range(k):  # the serial reading
        want[idx[j]] = a[j]
    for way, got in _ways(scatter_func(dtype, "int32", predicated), (a, idx, start, k),
                          2).items():
        np.testing.assert_array_equal(got, want, err_msg=way)


@pytest.mark.parametrize("n", [0, 1, 7, 8, 1003])
@pytest.mark.parametrize("policy", BOTH)
def test_vectorized_gather_with_tail_equals_serial_build(policy, n):
    """Through the vectorizer: a loop over a symbolic n, its tail, serial build, NumPy."""
    m = tir.size_var("m")
    ib = ir_builder.create()
    A = ib.pointer("float64", name="A")
    idx = ib.pointer("int64", name="idx")
    C = ib.pointer("float64", name="C")
    with ib.for_range(0, m, name="i", kind="vectorize") as i:
        C[i] = A[idx[i]] * 2.0
    func = tir.PrimFunc([A, idx, C, m], ib.get())
    rng = np.random.default_rng(n)
    a = rng.standard_normal(max(n, 1))
    a[0] = np.nan
    ix = rng.integers(0, max(n, 1), n)
    want = a[ix] * 2.0
    for config in ({}, {"tir.disable_vectorize": True},
                   {"tir.enable_buffer_level_predication": True}):
        c = np.zeros(n)
        _build(func, policy, **config)(a, ix, c, n)
        np.testing.assert_array_equal(c, want, err_msg=str(config))


# ---------------------------------------------------------------- bounds


BAD_INDEX = textwrap.dedent("""
    import sys
    import numpy as np
    import codegen, transform
    sys.path.insert(0, "tests/codegen")
    from test_gather_policy import gather_func, scatter_func, N, SRC

    policy, kind, idx_dtype = sys.argv[1:4]
    func = (gather_func if kind == "gather" else scatter_func)("float32", idx_dtype)
    with transform.PassContext(config={"codegen.gather": policy}):
        lib = codegen.build(func)
    a = np.ones(SRC if kind == "gather" else N, "float32")
    c = np.zeros(N if kind == "gather" else SRC, "float32")
    for bad in map(int, sys.argv[4:]):
        idx = np.arange(N, dtype=idx_dtype) % SRC
        idx[N - 3] = bad
        try:
            lib(a, idx, c, N)
        except RuntimeError as e:
            print(bad, e)
        else:
            print(bad, "no error")
""")


@pytest.mark.parametrize("idx_dtype", ["int32", "int64", "uint16"])
@pytest.mark.parametrize("kind", ["gather", "scatter"])
@pytest.mark.parametrize("policy", BOTH)
def test_out_of_range_indices_raise_the_bounds_error(policy, kind, idx_dtype):
    bads = [-1, SRC, -(2**31), 2**31 - 1]
    if idx_dtype == "int64":
        bads += [2**32, 2**32 + 1, -(2**32), 2**63 - 1]  # wrap to small uint32 if truncated
    if idx_dtype == "uint16":
        bads = [SRC, 2**15, 2**16 - 1]
    result = subprocess.run([sys.executable, "-c", BAD_INDEX, policy, kind, idx_dtype,
                             *map(str, bads)],
                            cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    access = "A[idx[i * 8:i * 8 + 8]]" if kind == "gather" else "C[idx[i * 8:i * 8 + 8]]"
    want = f"main: assertion failed: index out of bounds: {access} with extent {SRC}"
    lines = result.stdout.strip().splitlines()
    assert lines == [f"{bad} {want}" for bad in bads]


def test_gather_bounds_check_is_one_vector_compare_and_one_all_reduction():
    mod = _build(gather_func("float32"), "auto", target="llvm")
    ll = mod.get_source("ll")
    assert re.search(r"llvm\.vector\.reduce\.and\.v8i1|bitcast <8 x i1> %\S+ to i8", ll)
    assert "reduce.umax" not in ll and "reduce.smin" not in ll and "reduce.smax" not in ll


def test_gather_check_of_an_int32_index_against_an_int64_extent_compares_in_64_bits():
    nA = tir.Var("nA", "int64")
    A = tir.decl_buffer((nA,), "float32", name="A")
    idx = tir.decl_buffer((N,), "int32", name="idx")
    C = tir.decl_buffer((N,), "float32", name="C")
    func = tir.PrimFunc([A, idx, C], _block_loop(lambda i, r: BufferStore(C, A[idx[r]], [r])))
    text = codegen.lower(func)["main"].script()
    assert 'T.reinterpret("uint64x8", T.Cast("int64x8", idx_1[' in text
    assert "tir.vector_reduce_and" in text


# ---------------------------------------------------------------- the table


@pytest.mark.parametrize("target, dtype, want", [
    ("llvm -mcpu=haswell", "float32", "scalar"),
    ("llvm -mcpu=skylake-avx512", "float32", "scalar"),
    ("llvm -mcpu=icelake-server", "int32", "scalar"),
    ("llvm -mcpu=znver3", "float64", "scalar"),
    ("llvm -mcpu=znver4", "float32", "scalar"),
    ("llvm -mcpu=znver5", "float32", "scalar"),
    ("llvm -mcpu=sapphirerapids", "float32", "hardware"),
    ("llvm -mcpu=sapphirerapids", "int16", "scalar"),  # no 16-bit gather on x86
    ("llvm -mcpu=haswell -mattr=+fast-gather", "float32", "hardware"),
    ("llvm -mcpu=sapphirerapids -mattr=+prefer-no-gather", "float32", "scalar"),
    ("llvm -mtriple=aarch64-linux-gnu -mattr=+sve", "float32", "hardware"),
    ("llvm -mtriple=aarch64-linux-gnu", "int8", "hardware"),
])
def test_table_choice(target, dtype, want):
    assert gather_policy(Target(target), dtype) == want
    for forced in BOTH:
        assert gather_policy(Target(target), dtype, forced) == forced


def test_table_names_only_cpus_llvm_knows():
    known = set(Target("llvm -mtriple=x86_64-linux-gnu").known_cpus())
    assert set(GATHER_TABLE) <= known


def test_bad_config_value_is_rejected():
    assert POLICIES == ("auto", "hardware", "scalar")
    with pytest.raises(ValueError, match="codegen.gather"):
        transform.PassContext(config={"codegen.gather": "fast"})


@pytest.mark.parametrize("target, gathers", [
    ("llvm -mcpu=haswell", False),
    ("llvm -mcpu=skylake-avx512", False),
    ("llvm -mcpu=znver4", False),
    ("llvm -mcpu=znver5", False),
    ("llvm -mcpu=sapphirerapids", True),
    ("llvm -mtriple=aarch64-linux-gnu -mattr=+sve", True),
    ("llvm -mtriple=aarch64-linux-gnu", True),
])
def test_table_choice_shows_in_the_ir(target, gathers):
    for func in (gather_func("float32"), scatter_func("float32")):
        ll = _build(func, "auto", target=target).get_source("ll")
        assert ("llvm.masked.gather" in ll or "llvm.masked.scatter" in ll) == gathers, target


@pytest.mark.parametrize("policy", BOTH)
def test_config_overrides_the_table_and_keys_the_build_cache(policy):
    func = gather_func("float32")
    mod = _build(func, policy, target="llvm -mcpu=haswell")
    assert ("llvm.masked.gather" in mod.get_source("ll")) == (policy == "hardware")
    other = "scalar" if policy == "hardware" else "hardware"
    assert _build(func, other, target="llvm -mcpu=haswell") is not mod


def _symbolic_stride_func():
    """C[ramp] = A[(i*8 + lane) * s]: a Ramp gather with a runtime stride."""
    s = tir.Var("s", "int32")
    A = tir.decl_buffer((SRC * N,), "float32", name="A")
    C = tir.decl_buffer((N,), "float32", name="C")
    body = lambda i, r: BufferStore(C, A[tir.Ramp(i * LANES * s, s, LANES)], [r])  # noqa: E731
    return tir.PrimFunc([A, C, s], _block_loop(body))


@pytest.mark.parametrize("make", [lambda: gather_func("float32"),
                                  lambda: gather_func("float64", predicated=True),
                                  lambda: scatter_func("int32"), _symbolic_stride_func])
def test_scalar_policy_survives_llvm_on_a_cpu_with_fast_gathers(make):
    """sapphirerapids has fast gathers in LLVM's cost model: O3 must not re-form one."""
    mod = _build(make(), "scalar", target="llvm -mcpu=sapphirerapids")
    ll, asm = mod.get_source("ll"), mod.get_source("asm")
    assert "masked.gather" not in ll and "masked.scatter" not in ll
    assert not re.search(r"\bv\w*(gather|scatter)\w*", asm)


def test_symbolic_stride_both_policies_equal_serial():
    func = _symbolic_stride_func()
    a = np.arange(SRC * N, dtype="float32")
    for s in (0, 1, 3, 49):
        want = a[np.arange(N) * s]
        for policy in BOTH:
            c = np.zeros(N, "float32")
            _build(func, policy)(a, c, s)
            np.testing.assert_array_equal(c, want, err_msg=f"{policy} s={s}")


# ---------------------------------------------------------------- 32-bit indices


def _row_gather(idx_dtype, scale=1):
    """C[i, :] = A[i * 1000 + idx[i, :] * scale] with an int64 row loop (offsets in int64)."""
    rows = 40
    A = tir.decl_buffer((rows * 1000 + 50 * scale,), "float32", name="A")
    idx = tir.decl_buffer((rows, LANES), idx_dtype, name="idx")
    C = tir.decl_buffer((rows, LANES), "float32", name="C")
    ib = ir_builder.create()
    a, ix, c = (ib.buffer_ptr(b) for b in (A, idx, C))
    with ib.for_range(tir.const(0, "int64"), tir.const(rows, "int64"), name="i") as i:
        with ib.for_range(0, LANES, name="j", kind="vectorize") as j:
            c[i, j] = a[i * 1000 + tir.Cast("int64", ix[i, j]) * scale]
    return tir.PrimFunc([A, idx, C], ib.get())


@pytest.mark.parametrize("idx_dtype, dword", [("int16", True), ("int32", False),
                                              ("int64", False)])
def test_offsets_that_provably_fit_are_dword_gather_indices(idx_dtype, dword):
    """i * 1000 + idx * 7 in int64: an int16 idx provably fits int32 (dword indices);
    an int32 or int64 idx may not (idx * 7 can pass 2**31), so the indices stay qwords."""
    mod = _build(_row_gather(idx_dtype, 7), "hardware", target="llvm -mcpu=skylake-avx512")
    found = set(re.findall(r"\bv(?:p?)gather([dq])\w+", mod.get_source("asm")))
    assert found == ({"d"} if dword else {"q"})


def test_narrowed_offsets_compute_the_same_values():
    func = _row_gather("int16", 7)
    rng = np.random.default_rng(3)
    a = rng.standard_normal(40 * 1000 + 350).astype("float32")
    ix = rng.integers(0, 50, (40, LANES)).astype("int16")
    want = a[np.arange(40)[:, None] * 1000 + ix.astype(np.int64) * 7]
    for policy in BOTH:
        c = np.zeros((40, LANES), "float32")
        _build(func, policy)(a, ix, c)
        np.testing.assert_array_equal(c, want, err_msg=policy)


# ---------------------------------------------------------------- scalar index loads


def test_scalar_policy_reads_indices_as_scalar_loads_not_lane_extracts():
    """idx[b + k] per lane (one load each), even though the bounds check loads idx whole."""
    mod = _build(gather_func("float32"), "scalar", target="llvm -mcpu=skylake-avx512")
    asm = mod.get_source("asm")
    assert "pextr" not in asm and "gather" not in asm
    assert len(re.findall(r"movslq\s+-?\d*\(%", asm)) >= LANES  # sign-extending index loads


def test_gather_after_a_store_to_its_index_buffer_reads_the_new_indices():
    """idx[r] = idx[r] + 1; C[r] = A[idx[r]]: the scalar re-reads of idx see the store."""
    A = tir.decl_buffer((SRC,), "float32", name="A")
    idx = tir.decl_buffer((N,), "int32", name="idx")
    C = tir.decl_buffer((N,), "float32", name="C")

    def body(i, r):
        bump = BufferStore(idx, idx[r] + tir.Broadcast(tir.const(1, "int32"), LANES), [r])
        return tir.SeqStmt([bump, BufferStore(C, A[idx[r]], [r])])

    func = tir.PrimFunc([A, idx, C], _block_loop(body))
    rng = np.random.default_rng(5)
    a = rng.standard_normal(SRC).astype("float32")
    ix = rng.integers(0, SRC - 1, N).astype("int32")
    for way, got in _ways(func, (a, ix, np.zeros(N, "float32")), 2).items():
        np.testing.assert_array_equal(got, a[ix + 1], err_msg=way)


def test_scatter_through_its_own_buffer_reads_every_index_before_storing():
    """X[X[r]] = A[r]: all lanes' indices are read before the first lane stores."""
    X = tir.decl_buffer((N,), "int32", name="X")
    A = tir.decl_buffer((N,), "int32", name="A")
    func = tir.PrimFunc([X, A], _block_loop(lambda i, r: BufferStore(X, A[r], [X[r]])))
    x = np.array([(j // LANES) * LANES + (j + 1) % LANES for j in range(N)], "int32")
    a = np.arange(N, dtype="int32") + 1000
    want = x.copy()
    for block in range(BLOCKS):  # the vector statement: indices first, then the stores
        lanes = slice(block * LANES, (block + 1) * LANES)
        want[want[lanes].copy()] = a[lanes]
    for way, got in _ways(func, (x, a), 0).items():
        np.testing.assert_array_equal(got, want, err_msg=way)
