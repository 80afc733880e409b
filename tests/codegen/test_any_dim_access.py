"""Transfer-style access through ``codegen.build`` (issue 9): columns, stores through a
column, a matmul register block over rows, 2-D transposes of nested vectorized loops, and
padded stencil reads. Each kernel runs five ways that must agree bit for bit -- vectorized
(the pipeline sets ``tir.vectorize.any_dim_access``), serial (``tir.disable_vectorize``),
vectorized with the key off (TVM's rule: those statements stay serial), the interpreter
on the lowered TIR, vectorized for baseline x86-64 -- and match NumPy, at sizes that
reach the edges (empty, one element, around the vector length) and with NaN and extreme
values.
"""

import re

import numpy as np
import pytest

import codegen
import tir
import transform
from tir import ir_builder
from transform.vector.strip_mine_vector_loops import MAX_VECTORS

ANY_DIM = "tir.vectorize.any_dim_access"
STRICT = {"codegen.llvm.fp_contract": False}  # bit-exact with the interpreter
WAYS = {
    "vectorized": ({}, "llvm"),
    "serial": ({"tir.disable_vectorize": True}, "llvm"),
    "key_off": ({ANY_DIM: False}, "llvm"),
    "interp": ({}, "interp"),
    # baseline x86-64 (SSE2, runs on every host): no AVX masked loads, LLVM expands them
    "sse2": ({}, "llvm -mcpu=x86-64"),
}
SIZES = [0, 1, 2, 7, 8, 9, 15, 16, 17, 31, 33, 64]
#: The widest square tile whose two vectorized loops merge into one vector on this host:
#: the merged vector may fill MAX_VECTORS registers (8 x 8 on 512 bits, 4 x 4 on 256).
HOST_LANES = codegen.Target("llvm").vector_width_bits // 32
MERGED_TILE = max(t for t in (2, 4, 8, 16) if t * t <= MAX_VECTORS * HOST_LANES)


def build(func, way):
    config, target = WAYS[way]
    with transform.PassContext(config={**config, **STRICT}) as ctx:
        module = codegen.build(func, target)
    return module, [r for r in ctx.remarks if isinstance(r, transform.VectorizeRemark)]


def modules(func):
    return {way: build(func, way) for way in WAYS}


def run_ways(built, make_args, outputs, reference):
    """Run every way on fresh copies of the same inputs; compare them and NumPy."""
    results = {}
    for way, (module, _) in built.items():
        args = make_args()
        module["main"](*args)
        results[way] = [args[k] for k in outputs]
    for way, got in results.items():
        for a, b in zip(got, results["serial"]):
            np.testing.assert_array_equal(a, b, err_msg=f"{way} vs serial")
    with np.errstate(all="ignore"):  # inf * 0 and friends: NaN, as in the kernels
        want = reference(make_args())
    for a, b in zip(results["vectorized"], want):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6, equal_nan=True)


def values(rng, shape, nan=True):
    """Random floats with NaN, infinities, -0.0 and huge values sprinkled in."""
    out = rng.uniform(-4, 4, shape).astype(np.float32)
    flat = out.reshape(-1)
    if nan and flat.size:
        specials = np.array([np.nan, np.inf, -np.inf, -0.0, 3e38, -3e38], np.float32)
        picks = rng.integers(0, flat.size, min(flat.size, 6))
        flat[picks] = specials[: picks.size]
    return out


def outcomes(remarks):
    return [r.outcome for r in remarks]


# ------------------------------------------------------------ columns


def column_kernel():
    """B[i] = A[i, c] * 2 + 1 over i vectorized: c is a broadcast dimension."""
    n, m, c = tir.size_var("n"), tir.size_var("m"), tir.var("c")
    A = tir.decl_buffer((n, m), "float32", "A")
    B = tir.decl_buffer((n,), "float32", "B")
    ib = ir_builder.create()
    a, b = ib.buffer_ptr(A), ib.buffer_ptr(B)
    with ib.for_range(0, n, name="i", kind="vectorize") as i:
        b[i] = a[i, c] * 2.0 + 1.0
    return tir.PrimFunc([A, B, c], ib.get())


def test_column_read_vectorizes_and_matches():
    built = modules(column_kernel())
    assert "vectorized" in outcomes(built["vectorized"][1])[0]
    assert outcomes(built["key_off"][1])[0] == "scalarized"
    assert "other than the last" in built["key_off"][1][0].reason
    rng = np.random.default_rng(1)
    for n in SIZES:
        for m, c in ((1, 0), (5, 4), (3, 1)):
            data = values(rng, (n, m))
            run_ways(built, lambda d=data, c=c, n=n: (d.copy(), np.zeros(n, np.float32), c),
                     [1], lambda args: [args[0][:, args[2]] * np.float32(2) + np.float32(1)])


def column_store_kernel():
    """B[i, c] = A[i] - 3 over i vectorized: a store through a column."""
    n, m, c = tir.size_var("n"), tir.size_var("m"), tir.var("c")
    A = tir.decl_buffer((n,), "float32", "A")
    B = tir.decl_buffer((n, m), "float32", "B")
    ib = ir_builder.create()
    a, b = ib.buffer_ptr(A), ib.buffer_ptr(B)
    with ib.for_range(0, n, name="i", kind="vectorize") as i:
        b[i, c] = a[i] - 3.0
    return tir.PrimFunc([A, B, c], ib.get())


def test_store_through_a_column_writes_that_column_only():
    built = modules(column_store_kernel())
    assert "vectorized" in outcomes(built["vectorized"][1])[0]
    rng = np.random.default_rng(2)
    for n in SIZES:
        for m, c in ((4, 0), (4, 3), (7, 2)):
            data, fill = values(rng, (n,)), np.full((n, m), 9.0, np.float32)

            def reference(args, fill=fill, c=c):
                out = fill.copy()
                out[:, c] = args[0] - np.float32(3)
                return [out]

            run_ways(built, lambda d=data, f=fill, c=c: (d.copy(), f.copy(), c), [1], reference)


# ------------------------------------------------------------ matmul register block


def matmul_kernel(rows=4, cols=8):
    """C = A @ B with a rows x cols register block: rows and columns both vectorized."""
    M, N, K = 12, 24, 7
    A = tir.decl_buffer((M, K), "float32", "A")
    B = tir.decl_buffer((K, N), "float32", "B")
    C = tir.decl_buffer((M, N), "float32", "C")
    ib = ir_builder.create()
    a, b, c = ib.buffer_ptr(A), ib.buffer_ptr(B), ib.buffer_ptr(C)
    with (
        ib.for_range(0, M // rows, name="io") as io,
        ib.for_range(0, N // cols, name="jo") as jo,
        ib.for_range(0, K, name="k") as k,
        ib.for_range(0, rows, name="ii", kind="vectorize") as ii,
        ib.for_range(0, cols, name="jj", kind="vectorize") as jj,
    ):
        r, q = io * rows + ii, jo * cols + jj
        c[r, q] = c[r, q] + a[r, k] * b[k, q]
    return tir.PrimFunc([A, B, C], ib.get()), (M, N, K)


@pytest.mark.parametrize("rows, cols", [(4, 8), (4, 1), (3, 8)])
def test_matmul_register_block_vectorizes_rows(rows, cols):
    func, (M, N, K) = matmul_kernel(rows, cols)
    built = modules(func)
    vec = built["vectorized"][1]
    assert vec[0].loop_var == "ii" and vec[0].outcome == "vectorized", vec
    assert "scalarized" in outcomes(built["key_off"][1])
    rng = np.random.default_rng(3)
    a, b = values(rng, (M, K), nan=False), values(rng, (K, N), nan=False)

    def reference(args):
        out = np.zeros((M, N), np.float32)
        for k in range(K):  # the kernel's order of float additions
            out = out + args[0][:, k:k + 1] * args[1][k:k + 1, :]
        return [out]

    run_ways(built, lambda: (a.copy(), b.copy(), np.zeros((M, N), np.float32)), [2], reference)


# ------------------------------------------------------------ transposes


def transpose_kernel(tile=8, guarded=True):
    """B = A.T in tile x tile blocks, both tile loops vectorized; ``guarded`` covers
    shapes that are not multiples of the tile (an ``if`` on both lanes' positions)."""
    n, m = tir.size_var("n"), tir.size_var("m")
    A = tir.decl_buffer((m, n), "float32", "A")
    B = tir.decl_buffer((n, m), "float32", "B")
    ib = ir_builder.create()
    a, b = ib.buffer_ptr(A), ib.buffer_ptr(B)
    tiles_n = (n + tile - 1) // tile if guarded else n // tile
    tiles_m = (m + tile - 1) // tile if guarded else m // tile
    with (
        ib.for_range(0, tiles_n, name="to") as to,
        ib.for_range(0, tiles_m, name="so") as so,
        ib.for_range(0, tile, name="ti", kind="vectorize") as ti,
        ib.for_range(0, tile, name="si", kind="vectorize") as si,
    ):
        r, q = to * tile + ti, so * tile + si
        if guarded:
            with ib.if_scope(tir.all(r < n, q < m)):
                b[r, q] = a[q, r]
        else:
            b[r, q] = a[q, r]
    return tir.PrimFunc([A, B], ib.get())


def _transpose_reference(tile):
    def reference(args):
        out = args[1].copy()
        rows, cols = (args[0].shape[1] // tile) * tile, (args[0].shape[0] // tile) * tile
        out[:rows, :cols] = args[0].T[:rows, :cols]
        return [out]
    return reference


@pytest.mark.parametrize("tile", sorted({4, 8, MERGED_TILE}))
def test_transpose_of_full_tiles(tile):
    built = modules(transpose_kernel(tile, guarded=False))
    vec = built["vectorized"][1]
    # the tile loops merge where tile * tile lanes fit MAX_VECTORS registers, or the tile
    # is lanes x lanes of at most 2 * MAX_VECTORS registers (strip_mine_vector_loops.py);
    # else ti stays serial
    square = tile == HOST_LANES <= 2 * MAX_VECTORS
    expected = "vectorized" if tile <= MERGED_TILE or square else "not vectorized"
    assert [r.outcome for r in vec][:1] == [expected], vec
    rng = np.random.default_rng(4)
    for n, m in ((8, 8), (16, 8), (8, 24), (17, 9), (0, 8), (7, 7), (2 * tile + 1, tile)):
        data = values(rng, (m, n))
        run_ways(built, lambda d=data, n=n, m=m: (d.copy(), np.full((n, m), -1.0, np.float32)),
                 [1], _transpose_reference(tile))


def test_transpose_with_a_guarded_edge():
    built = modules(transpose_kernel(guarded=True))
    rng = np.random.default_rng(5)
    for n, m in ((8, 8), (9, 8), (8, 13), (1, 1), (17, 23), (0, 5), (3, 0)):
        data = values(rng, (m, n))
        run_ways(built, lambda d=data, n=n, m=m: (d.copy(), np.zeros((n, m), np.float32)),
                 [1], lambda args: [args[0].T.copy()])


def test_transpose_tile_merges_both_loops_into_one_vector():
    """Both tile loops become one tile * tile-lane access in each dimension (how codegen
    lowers such an access -- row loads and shuffles, or a gather -- is codegen/llvm's)."""
    lowered = codegen.lower(transpose_kernel(MERGED_TILE, guarded=False))["main"]
    stores = []
    tir.functor.post_order_visit(lowered.body, lambda s: stores.append(s)
                                 if isinstance(s, tir.BufferStore) else None)
    lanes = MERGED_TILE * MERGED_TILE
    assert len(stores) == 1 and stores[0].value.dtype == f"float32x{lanes}"
    assert [tir.dtype.lanes_of(i.dtype) for i in stores[0].indices] == [lanes, lanes]
    assert [tir.dtype.lanes_of(i.dtype) for i in stores[0].value.indices] == [lanes, lanes]


# ------------------------------------------------------------ padded reads


def stencil_kernel(offsets=(-1, 1), weights=(0.25, 0.5, 0.25)):
    """B[i] = w0 * pad(A, i + d0) + w1 * A[i] + w2 * pad(A, i + d1), where
    pad(A, k) = if_then_else(0 <= k < n, A[k], pad): the padded read of issue 9."""
    n = tir.size_var("n")
    pad = tir.var("pad", "float32")
    A = tir.decl_buffer((n,), "float32", "A")
    B = tir.decl_buffer((n,), "float32", "B")
    ib = ir_builder.create()
    a, b = ib.buffer_ptr(A), ib.buffer_ptr(B)
    with ib.for_range(0, n, name="i", kind="vectorize") as i:
        left, right = (tir.if_then_else(tir.all(0 <= i + d, i + d < n), a[i + d], pad)
                       for d in offsets)
        b[i] = left * weights[0] + a[i] * weights[1] + right * weights[2]
    return tir.PrimFunc([A, B, pad], ib.get())


def _stencil_reference(offsets, weights):
    def reference(args):
        x, pad = args[0], np.float32(args[2])
        n = x.size
        padded = np.full(n + 8, pad, np.float32)
        padded[4:4 + n] = x
        left = padded[4 + offsets[0]:4 + offsets[0] + n]
        right = padded[4 + offsets[1]:4 + offsets[1] + n]
        w = [np.float32(v) for v in weights]
        return [left * w[0] + x * w[1] + right * w[2]]

    return reference


@pytest.mark.parametrize("offsets", [(-1, 1), (-3, 2)])
def test_padded_stencil_at_both_edges(offsets):
    weights = (0.25, 0.5, 0.25)
    built = modules(stencil_kernel(offsets, weights))
    assert all(o in ("vectorized", "predicated") for o in outcomes(built["vectorized"][1]))
    assert "scalarized" in outcomes(built["key_off"][1])
    rng = np.random.default_rng(6)
    for n in SIZES:
        for pad in (0.0, 2.5, -7.0, float("nan")):
            data = values(rng, (n,))
            run_ways(built, lambda d=data, n=n, pad=pad: (d.copy(), np.zeros(n, np.float32),
                                                          pad),
                     [1], _stencil_reference(offsets, weights))


def test_padded_read_is_one_masked_load_with_the_pad_as_passthru():
    """LLVM folds Select(cond, masked.load(p, cond, 0), pad) into masked.load(p, cond, pad):
    a padded read costs one masked load, no gather, no separate select of the pad."""
    module, _ = build(stencil_kernel((-1, 1)), "vectorized")
    ll = module.get_source("ll")
    assert "masked.load" in ll and "gather" not in ll
    func = tir.PrimFunc  # a constant pad, to see it in the passthru
    n = tir.size_var("n")
    A = tir.decl_buffer((n,), "float32", "A")
    B = tir.decl_buffer((n,), "float32", "B")
    ib = ir_builder.create()
    a, b = ib.buffer_ptr(A), ib.buffer_ptr(B)
    with ib.for_range(0, n, name="i", kind="vectorize") as i:
        b[i] = tir.if_then_else(1 <= i, a[i - 1], tir.const(7.0, "float32"))
    ll = build(func([A, B], ib.get()), "vectorized")[0].get_source("ll")
    assert re.search(r"masked\.load\.v\d+f32\.p0\([^\n]*splat \(float 7\.0+e\+00\)\)", ll)


def vector_element_kernel(uniform):
    """Padded reads of a float32x4 buffer: ``V[i - 1]`` (a contiguous masked load), and
    with ``uniform`` also ``V[c]`` read only where ``c <= i``."""
    n, c = tir.size_var("n"), tir.var("c")
    V = tir.decl_buffer((n,), "float32x4", "V")
    B = tir.decl_buffer((n,), "float32x4", "B")
    ib = ir_builder.create()
    v, b = ib.buffer_ptr(V), ib.buffer_ptr(B)
    pad = tir.Broadcast(tir.const(-1.0, "float32"), 4)
    with ib.for_range(0, n, name="i", kind="vectorize") as i:
        second = tir.if_then_else(c <= i, v[c], pad) if uniform else pad
        b[i] = tir.if_then_else(1 <= i, v[i - 1], pad) + second
    return tir.PrimFunc([V, B, c], ib.get())


@pytest.mark.parametrize("uniform", [False, True])
def test_padded_reads_of_vector_elements(uniform):
    """A uniform read of vector elements under a varying condition would be a gather of
    vectors, which codegen does not do: that statement stays serial and says why."""
    built = modules(vector_element_kernel(uniform))
    remarks = built["vectorized"][1]
    if uniform:
        assert remarks[0].outcome == "scalarized"
        assert "a load of V in a branch of if_then_else does not depend on i" in remarks[0].reason
    else:
        assert remarks[0].outcome == "vectorized"
    rng = np.random.default_rng(8)

    def reference(args):
        x, c = args[0], args[2]
        out = np.full(x.shape, -1.0, np.float32)
        out[1:] = x[:-1]
        second = np.full(x.shape, -1.0, np.float32)
        if uniform and c < len(x):
            second[c:] = x[c]
        return [out + second]

    for n in SIZES:
        data = values(rng, (n, 4))
        for c in (0, 3, 70):
            run_ways(built, lambda d=data, n=n, c=c: (d.copy(), np.zeros((n, 4), np.float32), c),
                     [1], reference)


def test_a_column_of_vector_elements_stays_serial():
    """V[i, c] of a float32x4 buffer over i would gather whole vectors (codegen has no such
    gather): the statement stays serial, with TVM's remark, and computes the column."""
    n, c = tir.size_var("n"), tir.var("c")
    V = tir.decl_buffer((n, 3), "float32x4", "V")
    B = tir.decl_buffer((n,), "float32x4", "B")
    ib = ir_builder.create()
    v, b = ib.buffer_ptr(V), ib.buffer_ptr(B)
    with ib.for_range(0, n, name="i", kind="vectorize") as i:
        b[i] = v[i, c]
    built = modules(tir.PrimFunc([V, B, c], ib.get()))
    remark = built["vectorized"][1][0]
    assert remark.outcome == "scalarized" and "other than the last" in remark.reason
    rng = np.random.default_rng(10)
    for n in (0, 1, 5, 21):
        data = values(rng, (n, 3, 4))
        run_ways(built, lambda d=data, n=n: (d.copy(), np.zeros((n, 4), np.float32), 2), [1],
                 lambda args: [args[0][:, 2].copy()])


def test_an_out_of_bounds_row_raises_instead_of_reading_past_the_buffer():
    """B[i, j] = A[j + s, i] under two vectorized loops: the bound check reads the
    row index (a Shuffle of ramps) by the lanes of its ramps and asserts at run time."""
    s = tir.var("s")
    A = tir.decl_buffer((8, 8), "float32", "A")
    B = tir.decl_buffer((8, 8), "float32", "B")
    ib = ir_builder.create()
    a, b = ib.buffer_ptr(A), ib.buffer_ptr(B)
    with (
        ib.for_range(0, 8, name="i", kind="vectorize") as i,
        ib.for_range(0, 8, name="j", kind="vectorize") as j,
    ):
        b[i, j] = a[j + s, i]
    func = tir.PrimFunc([A, B, s], ib.get())
    lowered = str(codegen.lower(func)["main"].body)
    assert "vector_reduce" not in lowered  # proven from the ramps, not reduced per call
    for way in ("vectorized", "serial"):
        module, _ = build(func, way)
        data = values(np.random.default_rng(12), (8, 8))
        out = np.zeros((8, 8), np.float32)
        module["main"](data, out, 0)
        np.testing.assert_array_equal(out, data.T)
        with pytest.raises(RuntimeError, match="index out of bounds"):
            module["main"](data, out, 1)
