"""Strided, reversed and transposed vector accesses (codegen/llvm/access_plan.py).

Each kernel runs vectorized, serial (``tir.disable_vectorize``) and in the
interpreter, and must match NumPy exactly (copies and integer arithmetic),
with loop extents at the edges: empty, one element, one short of a vector,
a vector, one past, and a long odd length. Stores write into a buffer filled
with a sentinel first, so a chunk that writes an element no lane writes shows.
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
from codegen.llvm.access_plan import lane_forms, plan_access
from tir import ir_builder
from transform.vector.strip_mine_vector_loops import MAX_VECTORS

HOST = codegen.Target("llvm")
EXTENTS = [0, 1, 7, 8, 9, 16, 17, 63, 64, 65, 1001]
SENTINEL = -77


def _lanes(dtype: str) -> int:
    return max(2, HOST.vector_width_bits // np.dtype(dtype).itemsize // 8)


#: The widest square tile whose two vectorized loops merge into one vector on this host
#: (MAX_VECTORS registers: 8 x 8 float32 on 512 bits, 4 x 4 on 256).
TILE = max(t for t in (2, 4, 8, 16) if t * t <= MAX_VECTORS * _lanes("float32"))


def _builds(func):
    vec = codegen.build(func)
    with transform.PassContext(config={"tir.disable_vectorize": True}):
        serial = codegen.build(func)
    return vec, serial, codegen.build(func, "interp")


def _values(rng, size, dtype):
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        out = rng.standard_normal(size).astype(dtype) * 1e3
        if size > 3:
            out[::7] = np.nan
            out[1::11] = np.finfo(dtype).max
            out[2::13] = -np.inf
        return out
    if dtype.kind == "b":
        return rng.integers(0, 2, size).astype(bool)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, size, endpoint=True).astype(dtype)


def _run_all(func, make_args, out_index):
    results = []
    for mod in _builds(func):
        args = make_args()
        mod(*args)
        results.append(args[out_index])
    return results


def assert_no_lane_by_lane_access(ll: str) -> None:
    """Neither a gather/scatter nor its emulation (one scalar load or store per lane)."""
    assert "gather" not in ll and "scatter" not in ll
    assert not re.search(r"(load (float|double|i\d+), ptr|store (float|double|i\d+) )", ll)


def _assert_all_equal(results, expected):
    for got in results:
        np.testing.assert_array_equal(got, expected)


# ---------------------------------------------------------------- strided loads


def strided_load(stride: int, offset: int, dtype: str, lanes: int) -> tir.PrimFunc:
    """``B[i] = A[stride * i + offset]`` over a vectorized loop of n iterations."""
    n = tir.var("n")
    ib = ir_builder.create()
    A = ib.pointer(dtype, name="A")
    B = ib.pointer(dtype, name="B")
    with ib.for_range(0, n, name="i", kind="vectorize") as i:
        B[i] = A[i * stride + offset]
    return tir.PrimFunc([A, B, n], ib.get())


@pytest.mark.parametrize("dtype", ["float32", "float64", "int8", "int16", "int32", "uint8"])
@pytest.mark.parametrize("stride", [2, 3, 4, 5, 8, -1, -2, -3])
def test_strided_load_matches_serial(stride, dtype):
    """One build per stride and dtype; the offset ``off`` is a runtime value."""
    rng = np.random.default_rng(abs(stride) * 10 + len(dtype))
    builds = _builds(strided_copy_at(stride, "load", dtype))
    for n in EXTENTS:
        size = abs(stride) * max(n, 1) + 3
        offset = 1 if stride > 0 else size - 2  # the last lane lands on size-2 - |s|(n-1) >= 1
        src = _values(rng, size, dtype)
        idx = np.arange(n) * stride + offset
        for mod in builds:
            out = np.zeros(n, dtype)
            mod(src.copy(), out, np.int32(n), np.int32(offset))
            np.testing.assert_array_equal(out.view(np.uint8), src[idx].view(np.uint8))


def test_a_chunk_proven_inside_its_buffer_loads_without_a_mask():
    """A declared 2n elements long, B[i] = A[2 * i]: every chunk lies inside A."""
    n = 1024
    A = tir.decl_buffer((2 * n,), "float32", name="A")
    B = tir.decl_buffer((n,), "float32", name="B")
    ib = ir_builder.create()
    a, b = ib.buffer_ptr(A), ib.buffer_ptr(B)
    with ib.for_range(0, n, name="i", kind="vectorize") as i:
        b[i] = a[i * 2]
    mod = codegen.build(tir.PrimFunc([A, B], ib.get()))
    ll = mod.get_source("ll")
    assert "masked.load" not in ll and "shufflevector" in ll
    assert_no_lane_by_lane_access(ll)
    x = np.random.default_rng(0).standard_normal(2 * n).astype(np.float32)
    y = np.zeros(n, np.float32)
    mod(x, y)
    np.testing.assert_array_equal(y, x[::2])


def test_stride_2_and_reversed_loads_have_no_gather():
    for stride, offset in ((2, 0), (-1, 1000)):
        ll = codegen.build(strided_load(stride, offset, "float32", 8)).get_source("ll")
        assert_no_lane_by_lane_access(ll)
        assert "shufflevector" in ll


def test_reversed_copy_is_one_load_and_one_reverse_per_vector():
    """B[i] = A[n - 1 - i]: the vector body loads one register and reverses it."""
    lanes = _lanes("float32")
    n = tir.var("n")
    ib = ir_builder.create()
    A, B = ib.pointer("float32", name="A"), ib.pointer("float32", name="B")
    with ib.for_range(0, n, name="i", kind="vectorize") as i:
        B[i] = A[n - 1 - i]
    mod = codegen.build(tir.PrimFunc([A, B, n], ib.get()))
    ll = mod.get_source("ll")
    reverse = ", ".join(f"i32 {lanes - 1 - k}" for k in range(lanes))
    assert reverse in ll
    assert_no_lane_by_lane_access(ll)
    src = np.arange(1001, dtype=np.float32)
    out = np.zeros(1001, np.float32)
    mod(src, out, np.int32(1001))
    np.testing.assert_array_equal(out, src[::-1])


# ---------------------------------------------------------------- strided stores


def strided_store(stride: int, offset: int, dtype: str) -> tir.PrimFunc:
    """``B[stride * i + offset] = A[i]``."""
    n = tir.var("n")
    ib = ir_builder.create()
    A = ib.pointer(dtype, name="A")
    B = ib.pointer(dtype, name="B")
    with ib.for_range(0, n, name="i", kind="vectorize") as i:
        B[i * stride + offset] = A[i]
    return tir.PrimFunc([A, B, n], ib.get())


@pytest.mark.parametrize("dtype", ["float32", "float64", "int8", "int16", "int32"])
@pytest.mark.parametrize("stride", [2, 3, 5, 8, -1, -2])
def test_strided_store_matches_serial(stride, dtype):
    rng = np.random.default_rng(abs(stride) * 100 + len(dtype))
    builds = _builds(strided_copy_at(stride, "store", dtype))
    for n in EXTENTS:
        size = abs(stride) * max(n, 1) + 3
        offset = 1 if stride > 0 else size - 2
        src = _values(rng, n, dtype)
        expected = np.full(size, SENTINEL, dtype)
        expected[np.arange(n) * stride + offset] = src
        for mod in builds:
            out = np.full(size, SENTINEL, dtype)
            mod(src.copy(), out, np.int32(n), np.int32(offset))
            np.testing.assert_array_equal(out.view(np.uint8), expected.view(np.uint8))


def test_interleaving_stores_complex_multiply():
    """C[2i] = ar*br - ai*bi; C[2i+1] = ar*bi + ai*br over interleaved complex arrays."""
    n = tir.var("n")
    ib = ir_builder.create()
    A, B, C = (ib.pointer("float32", name=x) for x in "ABC")
    with ib.for_range(0, n, name="i", kind="vectorize") as i:
        ar, ai, br, bi = A[2 * i], A[2 * i + 1], B[2 * i], B[2 * i + 1]
        C[2 * i] = ar * br - ai * bi
        C[2 * i + 1] = ar * bi + ai * br
    func = tir.PrimFunc([A, B, C, n], ib.get())
    rng = np.random.default_rng(5)
    with transform.PassContext(config={"codegen.llvm.fp_contract": False}):
        mod = codegen.build(func)
    assert_no_lane_by_lane_access(mod.get_source("ll"))
    for count in EXTENTS:
        a = rng.standard_normal(2 * count + 1).astype(np.float32)
        b = rng.standard_normal(2 * count + 1).astype(np.float32)
        c = np.full(2 * count + 1, SENTINEL, np.float32)
        mod(a, b, c, np.int32(count))
        za = a[:2 * count].view(np.complex64)
        zb = b[:2 * count].view(np.complex64)
        np.testing.assert_allclose(c[:2 * count].view(np.complex64), za * zb, rtol=1e-5,
                                   atol=1e-6)
        assert c[2 * count] == SENTINEL


def test_rgb_to_gray_stride_3():
    n = tir.var("n")
    ib = ir_builder.create()
    rgb = ib.pointer("float32", name="rgb")
    gray = ib.pointer("float32", name="gray")
    with ib.for_range(0, n, name="i", kind="vectorize") as i:
        gray[i] = (rgb[3 * i] * tir.const(0.299, "float32")
                   + rgb[3 * i + 1] * tir.const(0.587, "float32")
                   + rgb[3 * i + 2] * tir.const(0.114, "float32"))
    func = tir.PrimFunc([rgb, gray, n], ib.get())
    rng = np.random.default_rng(3)
    for count in EXTENTS:
        pixels = rng.random(3 * count).astype(np.float32)
        results = _run_all(func, lambda: (pixels.copy(), np.zeros(count, np.float32),
                                          np.int32(count)), 1)
        p = pixels.reshape(-1, 3)
        expected = (p[:, 0] * np.float32(0.299) + p[:, 1] * np.float32(0.587)
                    + p[:, 2] * np.float32(0.114))
        for r in results:
            np.testing.assert_allclose(r, expected, rtol=1e-6)


# ---------------------------------------------------------------- transposed tiles


def transpose_1d(size: int, tile: int) -> tir.PrimFunc:
    """B[r * size + c] = A[c * size + r] in tile x tile blocks, both block loops vectorized."""
    ib = ir_builder.create()
    A = ib.pointer("float32", name="A")
    B = ib.pointer("float32", name="B")
    blocks = size // tile
    with (
        ib.for_range(0, blocks, name="ro") as ro,
        ib.for_range(0, blocks, name="co") as co,
        ib.for_range(0, tile, name="r", kind="vectorize") as r,
        ib.for_range(0, tile, name="c", kind="vectorize") as c,
    ):
        B[(ro * tile + r) * size + co * tile + c] = A[(co * tile + c) * size + ro * tile + r]
    return tir.PrimFunc([A, B], ib.get())


@pytest.mark.parametrize("size, tile", sorted({(16, 4), (4 * TILE, TILE), (3 * TILE, TILE)}))
def test_transposed_tile_uses_row_loads(size, tile):
    func = transpose_1d(size, tile)
    a = np.random.default_rng(1).standard_normal(size * size).astype(np.float32)
    results = _run_all(func, lambda: (a.copy(), np.zeros(size * size, np.float32)), 1)
    _assert_all_equal(results, a.reshape(size, size).T.ravel())
    assert_no_lane_by_lane_access(codegen.build(func).get_source("ll"))


# ---------------------------------------------------------------- the planner itself


def test_plan_of_stride_two_slides_the_last_chunk_back():
    """8 lanes at stride 2 span 15 elements: chunks [0, 8) and [7, 15), never element 15."""
    plan = plan_access(tir.Ramp(tir.var("b"), 2, 8), native=16, store=False)
    assert [(c.start, c.width) for c in plan.groups[0].chunks] == [(0, 8), (7, 8)]
    assert plan.load_picks() == [0, 2, 4, 6, 9, 11, 13, 15]


def test_plan_with_cheap_masked_loads_keeps_the_grid_and_masks_the_end():
    """Where a masked load costs what a plain one does, the chunks stay on the grid
    from the first element (aligned like it) and the last one masks what passes max."""
    plan = plan_access(tir.Ramp(tir.var("b"), 3, 16), native=16, store=False, masked_end=True)
    chunks = plan.groups[0].chunks
    assert [(c.start, c.width, c.masked) for c in chunks] == [(0, 16, False), (16, 16, False),
                                                               (32, 16, True)]
    assert chunks[-1].last == 45
    assert plan.load_picks() == [3 * k for k in range(16)]
    reverse = plan_access(tir.Ramp(tir.var("b"), -1, 8), native=16, store=False,
                          masked_end=True)
    assert [(c.start, c.width, c.masked) for c in reverse.groups[0].chunks] == [(-7, 8, False)]


def test_plan_of_a_store_never_writes_past_the_last_lane():
    plan = plan_access(tir.Ramp(tir.var("b"), 2, 8), native=8, store=True)
    assert [(c.start, c.width) for c in plan.groups[0].chunks] == [(0, 7), (8, 7)]
    assert plan.element_lanes(0, plan.groups[0].chunks[1]) == [4, -1, 5, -1, 6, -1, 7]


def test_sparse_access_stays_a_gather():
    """A stride as wide as the register: one chunk per lane is no better than a gather."""
    assert plan_access(tir.Ramp(tir.var("b"), 64, 8), native=16, store=False) is None
    w = tir.var("w")
    assert plan_access(tir.Ramp(tir.var("b"), w, 8), native=16, store=False) is None


def test_lane_forms_group_symbolic_rows():
    w, b = tir.var("w"), tir.var("b")
    rows = tir.Shuffle([tir.Ramp(b + w * k, 1, 4) for k in range(4)], list(range(16)))
    forms = lane_forms(rows)
    assert len({f.key for f in forms}) == 4
    plan = plan_access(rows, native=16, store=False)
    assert plan.chunk_count == 4


# ---------------------------------------------------------------- no lane past the ends


def strided_copy_at(stride: int, direction: str, dtype: str = "float32") -> tir.PrimFunc:
    """``B[i] = A[stride * i + off]`` (load) or ``B[stride * i + off] = A[i]`` (store)."""
    n, off = tir.var("n"), tir.var("off")
    ib = ir_builder.create()
    A = ib.pointer(dtype, name="A")
    B = ib.pointer(dtype, name="B")
    with ib.for_range(0, n, name="i", kind="vectorize") as i:
        if direction == "load":
            B[i] = A[i * stride + off]
        else:
            B[i * stride + off] = A[i]
    return tir.PrimFunc([A, B, n, off], ib.get())


# The strided side ends (or starts) at an inaccessible page and the kernel touches
# exactly up to it: a chunk reaching one element too far kills the subprocess (SIGSEGV).
_GUARD_SCRIPT = textwrap.dedent("""
    import sys
    import numpy as np
    import codegen
    sys.path.insert(0, {test_dir!r})
    from test_strided_access import exact_strided_load, strided_copy_at
    from guard_page import at_page_end, at_page_start

    for stride in (2, 3, 5, -1, -2, -3):
        load = codegen.build(strided_copy_at(stride, "load"), {target!r})
        store = codegen.build(strided_copy_at(stride, "store"), {target!r})
        for n in range(1, 70):
            span = abs(stride) * (n - 1) + 1
            off = 0 if stride > 0 else span - 1
            idx = np.arange(n) * stride + off
            values = np.arange(n, dtype=np.float32) + 1
            for place in (at_page_end, at_page_start):
                region, a = place(span)
                a[:] = np.arange(span, dtype=np.float32)
                out = np.zeros(n, np.float32)
                load(a, out, np.int32(n), np.int32(off))
                assert (out == a[idx]).all(), ("load", stride, n)
                a[:] = -1
                store(values, a, np.int32(n), np.int32(off))
                expected = np.full(span, -1, np.float32)
                expected[idx] = values
                assert (a == expected).all(), ("store", stride, n)
                del a
    # a buffer declared exactly as long as the lanes reach: no chunk may be proven
    # inside it past its last element (codegen drops masks it can prove useless)
    for stride in (2, 3):
        for n in (16, 17, 33, 64):
            span = stride * (n - 1) + 1
            region, a = at_page_end(span)
            a[:] = np.arange(span, dtype=np.float32)
            out = np.zeros(n, np.float32)
            codegen.build(exact_strided_load(stride, n), {target!r})(a, out)
            assert (out == a[::stride]).all(), ("exact", stride, n)
    print("ok")
""")


def exact_strided_load(stride: int, n: int) -> tir.PrimFunc:
    """``B[i] = A[stride * i]`` with A declared ``stride * (n - 1) + 1`` long."""
    A = tir.decl_buffer((stride * (n - 1) + 1,), "float32", name="A")
    B = tir.decl_buffer((n,), "float32", name="B")
    ib = ir_builder.create()
    a, b = ib.buffer_ptr(A), ib.buffer_ptr(B)
    with ib.for_range(0, n, name="i", kind="vectorize") as i:
        b[i] = a[i * stride]
    return tir.PrimFunc([A, B], ib.get())


# The host (masked chunk ends where masked loads are cheap) and baseline x86-64 (SSE2:
# chunks slide back to end on the last element instead).
@pytest.mark.parametrize("target", ["llvm", "llvm -mcpu=x86-64"])
def test_no_chunk_reaches_past_either_end_of_the_buffer(target):
    script = _GUARD_SCRIPT.format(test_dir=str(Path(__file__).parent), target=target)
    done = subprocess.run([sys.executable, "-c", script], cwd=Path(__file__).parents[2],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]


def test_transpose_with_a_symbolic_row_length_uses_row_loads():
    """B[r, c] = A[c, r] over n x n with n a runtime value: lane offsets (t*ro + r) * n + ...
    group by row (r * n differs per row), each row t contiguous elements (t = TILE)."""
    t = TILE
    func = _tiled_transpose(t)
    mod = codegen.build(func)
    assert_no_lane_by_lane_access(mod.get_source("ll"))
    for size in (0, t, 3 * t, 5 * t):
        x = np.random.default_rng(size).standard_normal((size, size)).astype(np.float32)
        results = _run_all(func, lambda: (x.copy(), np.zeros_like(x)), 1)
        _assert_all_equal(results, x.T)


def _tiled_transpose(t: int, dtype: str = "float32") -> tir.PrimFunc:
    """``B[ro*t + r, co*t + c] = A[co*t + c, ro*t + r]`` over t x t tiles, r and c vectorized."""
    n = tir.size_var("n")
    A = tir.decl_buffer((n, n), dtype, name="A")
    B = tir.decl_buffer((n, n), dtype, name="B")
    ib = ir_builder.create()
    a, b = ib.buffer_ptr(A), ib.buffer_ptr(B)
    with (
        ib.for_range(0, n // t, name="ro") as ro,
        ib.for_range(0, n // t, name="co") as co,
        ib.for_range(0, t, name="r", kind="vectorize") as r,
        ib.for_range(0, t, name="c", kind="vectorize") as c,
    ):
        b[ro * t + r, co * t + c] = a[co * t + c, ro * t + r]
    return tir.PrimFunc([A, B], ib.get())


# A tile of VL rows of one register each is merged even past MAX_VECTORS registers
# (8 x 8 float32 on AVX2, 8 x 8 float64 on AVX-512): one shuffle network, not 8 columns
# read lane by lane.
@pytest.mark.parametrize("target, dtype", [("llvm -mcpu=znver3", "float32"),
                                           ("llvm -mcpu=haswell", "float32"),
                                           ("llvm", "float64")])
def test_a_register_square_transpose_tile_is_one_network(target, dtype):
    t = codegen.Target(target).vector_width_bits // (8 * np.dtype(dtype).itemsize)
    if t > 2 * MAX_VECTORS:
        t = 2 * MAX_VECTORS  # wider registers: the rule's limit
    func = _tiled_transpose(t, dtype)
    mod = codegen.build(func, target)
    assert_no_lane_by_lane_access(mod.get_source("ll"))
    for size in (0, t, 3 * t):
        x = np.random.default_rng(size).standard_normal((size, size)).astype(dtype)
        y = np.zeros_like(x)
        mod(x, y)
        np.testing.assert_array_equal(y, x.T)



# On 256-bit registers the tile is the classic AVX network (transpose_network.py):
# W*log2(W) in-lane shuffles, then W half swaps; the general shuffle tree crossed the
# 128-bit halves and LLVM lowered it to 60 shuffles and blends for 8 x 8 float32.
@pytest.mark.parametrize("cpu", ["znver3", "haswell"])
@pytest.mark.parametrize("dtype", ["float32", "int32", "float64"])
def test_a_ymm_transpose_tile_is_the_avx_network(cpu, dtype):
    t = 256 // (8 * np.dtype(dtype).itemsize)
    mod = codegen.build(_tiled_transpose(t, dtype), f"llvm -mcpu={cpu}")
    asm = mod.get_source("asm")
    # per stored row (LLVM may unroll the tile loop): log2(t) shuffles, the network's
    shuffles = len(re.findall(r"\bv(?:unpck|shuf|perm|blend|insert|pshuf|punpck|alignr)", asm))
    rows = len(re.findall(r"\bvmov\w*\s+%ymm\d+,\s*-?\w*\(", asm))
    assert rows and shuffles <= rows * np.log2(t), (shuffles, rows)
    rng = np.random.default_rng(t)
    for size in (0, t, 5 * t):
        x = (rng.standard_normal((size, size)) * 1e3).astype(dtype)
        y = np.zeros_like(x)
        mod(x, y)
        np.testing.assert_array_equal(y, x.T)

# An AVX2 target runs on every host these tests are for (x86-64 with AVX2 or AVX-512):
# 256-bit registers, masked chunk ends for 32/64-bit elements, slid-back chunks for
# 8/16-bit ones (vmaskmov has no byte form).
@pytest.mark.parametrize("dtype", ["float32", "int8", "float64"])
@pytest.mark.parametrize("stride", [2, 3, -1])
def test_strided_access_on_an_avx2_target(stride, dtype):
    rng = np.random.default_rng(abs(stride) + len(dtype))
    for n in EXTENTS:
        size = abs(stride) * max(n, 1) + 3
        off = 1 if stride > 0 else size - 2
        load = codegen.build(strided_load(stride, off, dtype, 0), "llvm -mcpu=haswell")
        store = codegen.build(strided_store(stride, off, dtype), "llvm -mcpu=haswell")
        src = _values(rng, size, dtype)
        out = np.zeros(n, dtype)
        load(src, out, np.int32(n))
        idx = np.arange(n) * stride + off
        np.testing.assert_array_equal(out.view(np.uint8), src[idx].view(np.uint8))
        values = _values(rng, n, dtype)
        dst = np.full(size, SENTINEL, dtype)
        store(values, dst, np.int32(n))
        expected = np.full(size, SENTINEL, dtype)
        expected[idx] = values
        np.testing.assert_array_equal(dst.view(np.uint8), expected.view(np.uint8))


def _whole_vector_store(stride: int, dtype: str) -> tir.PrimFunc:
    """``B[stride * i + 3 * |stride|] = A[i]`` for i < 64: whole vectors, no tail."""
    ib = ir_builder.create()
    A = ib.pointer(dtype, name="A")
    B = ib.pointer(dtype, name="B")
    with ib.for_range(0, 64, name="i", kind="vectorize") as i:
        B[i * stride + 64 * abs(stride)] = A[i]
    return tir.PrimFunc([A, B], ib.get())


# AMD's AVX2 masked store (vmaskmovps) is microcoded: on Zen a strided store writes its
# partly covered chunks element by element instead (planned_access.py); Intel keeps it.
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])
@pytest.mark.parametrize("stride", [2, 3, -2])
@pytest.mark.parametrize("cpu, masked", [("haswell", True), ("znver3", False)])
def test_partly_covered_store_chunks_on_avx2_cpus(cpu, masked, stride, dtype):
    rng = np.random.default_rng(abs(stride) * 7 + len(dtype) + len(cpu))
    target = f"llvm -mcpu={cpu}"
    # 64 elements: whole vectors, no predicated tail (whose masked store stays)
    ir_text = codegen.build(_whole_vector_store(stride, dtype), target).get_source("ll")
    assert ("llvm.masked.store" in ir_text) == masked
    assert "masked.scatter" not in ir_text  # still a planned store: chunks, not lanes
    for n in EXTENTS:
        size = abs(stride) * max(n, 1) + 3
        off = 1 if stride > 0 else size - 2
        store = codegen.build(strided_store(stride, off, dtype), target)
        values = _values(rng, n, dtype)
        dst = np.full(size, SENTINEL, dtype)
        store(values, dst, np.int32(n))
        expected = np.full(size, SENTINEL, dtype)
        expected[np.arange(n) * stride + off] = values
        np.testing.assert_array_equal(dst.view(np.uint8), expected.view(np.uint8))


def test_predicated_strided_store_keeps_its_masked_store_on_zen():
    """Under a predicate the mask is data: one masked store per chunk, never per element
    branches (what the element-wise path would need)."""
    n = tir.var("n")
    ib = ir_builder.create()
    A = ib.pointer("float32", name="A")
    B = ib.pointer("float32", name="B")
    with ib.for_range(0, n, name="i", kind="vectorize") as i:
        with ib.if_scope(A[i] > 0):
            B[i * 2] = A[i]
    func = tir.PrimFunc([A, B, n], ib.get())
    mod = codegen.build(func, "llvm -mcpu=znver3")
    src = np.random.default_rng(5).standard_normal(37).astype(np.float32)
    dst = np.full(80, SENTINEL, np.float32)
    mod(src, dst, np.int32(37))
    expected = np.full(80, SENTINEL, np.float32)
    expected[np.arange(37)[src > 0] * 2] = src[src > 0]
    np.testing.assert_array_equal(dst, expected)


def test_a_transposed_store_whose_rows_may_alias_keeps_serial_order():
    """B[c * w + r] = A[r * 4 + c] under two vectorized loops (r outer, c inner): the
    store's lanes group by c, which interleave in lane order; with w < 4 rows overlap
    and the serial loops' last write (largest r, then c) must win, as a scatter's later
    lane does. So the store stays a scatter unless the groups are proven apart."""
    w = tir.var("w")
    ib = ir_builder.create()
    A = ib.pointer("float32", name="A")
    B = ib.pointer("float32", name="B")
    with (
        ib.for_range(0, 4, name="r", kind="vectorize") as r,
        ib.for_range(0, 4, name="c", kind="vectorize") as c,
    ):
        B[c * w + r] = A[r * 4 + c]
    func = tir.PrimFunc([A, B, w], ib.get())
    a = np.arange(16, dtype=np.float32) + 1
    for width in (0, 1, 2, 3, 4, 5):
        expected = np.full(24, -1.0, np.float32)
        for rr in range(4):
            for cc in range(4):
                expected[cc * width + rr] = a[rr * 4 + cc]
        results = _run_all(func, lambda: (a.copy(), np.full(24, -1.0, np.float32),
                                          np.int32(width)), 1)
        _assert_all_equal(results, expected)


def _strided_copy(n: int, stride: int):
    ib = ir_builder.create()
    A = ib.pointer("float32", name="A")
    B = ib.pointer("float32", name="B")
    with ib.for_range(0, n, name="i", kind="vectorize") as i:
        B[i] = A[i * stride]
    return tir.PrimFunc([A, B], ib.get())


# With 512-bit vectors a loop of shuffled chunk loads stays rolled (planned_access.py,
# keep_rolled: unrolled, its loads ran out of address order and slower); 256-bit
# vectors and contiguous loops keep LLVM's unrolling.
@pytest.mark.parametrize("cpu, rolled", [("znver4", True), ("skylake-avx512", True),
                                         ("znver3", False), ("haswell", False)])
def test_loops_of_shuffled_loads_stay_rolled_with_512_bit_vectors(cpu, rolled):
    target = f"llvm -mcpu={cpu}"
    strided = codegen.build(_strided_copy(4096, 3), target).get_source("ll")
    contiguous = codegen.build(_strided_copy(4096, 1), target).get_source("ll")
    assert ("llvm.loop.unroll.disable" in strided) == rolled
    assert "llvm.loop.unroll.disable" not in contiguous


@pytest.mark.parametrize("stride", [2, 3, 5])
@pytest.mark.parametrize("n", [0, 1, 17, 4099])
def test_rolled_strided_copy_matches_numpy(stride, n):
    func = _strided_copy(n, stride)
    a = np.random.default_rng(stride * 31 + n).standard_normal(stride * n + 1)
    a = a.astype(np.float32)
    b = np.full(n, SENTINEL, np.float32)
    codegen.build(func)(a, b)
    np.testing.assert_array_equal(b, a[: stride * n : stride])
