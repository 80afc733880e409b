"""``VersionSymbolicStrides``: Before (ir_builder) / After (by hand), the remarks, the loops
left alone, the config key, and differential runs (vectorized build == serial build ==
interpreter == NumPy) over strides 1, 2, 3, 0, -1 and extents around the vector length."""

import numpy as np
import pytest

import codegen
import tir
import transform
from tir import ir_builder
from tir.analysis import linear_coefficient
from tir.stmt import For, ForKind, IfThenElse
from tir.structural import assert_structural_equal
from transform.vector.analysis.strides import MAX_FAST_STRIDE

F32 = "float32"
BITS = codegen.Target("llvm").vector_width_bits
VL = BITS // 32  # float32 lanes per register on this host
SIZE = 4096


def run(func, config=None):
    """The pass's output under ``config`` and the remarks it emitted."""
    with transform.collect_remarks() as remarks, transform.PassContext(config=config or {}):
        after = transform.VersionSymbolicStrides()(tir.IRModule.from_expr(func))["main"]
    return after, [r.line for r in remarks]


def copy(index=lambda i, s: i * s, extent=None, s=None):
    """``for i in vectorized(n): B[i] = A[index(i, s)]``; returns the function and its parts."""
    n = tir.size_var("n") if extent is None else extent
    s = tir.var("s") if s is None else s
    A = tir.decl_buffer((SIZE,), F32, name="A")
    B = tir.decl_buffer((SIZE,), F32, name="B")
    ib = ir_builder.create()
    a, b = ib.buffer_ptr(A), ib.buffer_ptr(B)
    with ib.for_range(0, n, kind="vectorize", name="i") as i:
        b[i] = a[index(i, s)]
    params = [A, B] + [v for v in (n, s) if isinstance(v, tir.Var)]
    return tir.PrimFunc(params, ib.get()), (A, B, n, s)


# ---------------------------------------------------------------- the rewrite


def test_strided_copy_gets_a_contiguous_fast_path_and_keeps_the_general_one():
    func, (A, B, n, s) = copy()
    after, remarks = run(func)
    ib = ir_builder.create()
    a, b = ib.buffer_ptr(A), ib.buffer_ptr(B)
    with ib.if_scope(s == 1):
        with ib.for_range(0, n, kind="vectorize", name="i") as i:
            b[i] = a[i]
    with ib.else_scope():
        with ib.for_range(0, n, kind="vectorize", name="i") as i:
            b[i] = a[i * s]
    assert_structural_equal(after.body, ib.get())
    assert after.body.else_case is func.body  # the general path is the loop as written
    assert after.body.then_case.loop_var is not func.body.loop_var  # bound once each
    tir.verify_well_formed(tir.IRModule.from_expr(after))
    assert remarks == ["main: loop i: versioned on s == 1 (contiguous fast path for "
                       "A[i * s]); general path otherwise"]


@pytest.mark.parametrize("index, fast", [
    (lambda i, s: 7 + i * s, lambda i: i + 7),
    (lambda i, s: (i + 1) * s, lambda i: i + 1),
    (lambda i, s: s * i - 3, lambda i: i - 3),
])
def test_offsets_and_factored_strides(index, fast):
    func, (A, B, n, s) = copy(index)
    after, remarks = run(func)
    assert isinstance(after.body, IfThenElse)
    ib = ir_builder.create()
    a, b = ib.buffer_ptr(A), ib.buffer_ptr(B)
    with ib.for_range(0, n, kind="vectorize", name="i") as i:
        b[i] = a[fast(i)]
    assert_structural_equal(after.body.then_case, ib.get())
    assert "versioned on s == 1 (contiguous fast path" in remarks[0]


def test_two_dimensional_access_in_the_last_dimension():
    n, s = tir.size_var("n"), tir.var("s")
    A = tir.decl_buffer((8, SIZE), F32, name="A")
    B = tir.decl_buffer((8, SIZE), F32, name="B")
    ib = ir_builder.create()
    a, b = ib.buffer_ptr(A), ib.buffer_ptr(B)
    with ib.for_range(0, 8, name="r") as r, \
            ib.for_range(0, n, kind="vectorize", name="j") as j:
        b[r, j] = a[r, j * s]
    after, remarks = run(tir.PrimFunc([A, B, n, s], ib.get()))
    branch = after.body.body
    assert isinstance(branch, IfThenElse)  # inside the serial row loop
    assert "A[r, j]" in str(branch.then_case) and "A[r, j * s]" in str(branch.else_case)
    assert remarks == ["main: loop j: versioned on s == 1 (contiguous fast path for "
                       "A[r, j * s]); general path otherwise"]


def test_a_stride_in_a_non_last_dimension_gets_a_constant_stride_fast_path():
    n, s = tir.size_var("n"), tir.var("s")
    A = tir.decl_buffer((SIZE, 8), F32, name="A")
    B = tir.decl_buffer((SIZE,), F32, name="B")
    ib = ir_builder.create()
    a, b = ib.buffer_ptr(A), ib.buffer_ptr(B)
    with ib.for_range(0, n, kind="vectorize", name="i") as i:
        b[i] = a[i * s, 3]
    after, remarks = run(tir.PrimFunc([A, B, n, s], ib.get()))
    assert "A[i, 3]" in str(after.body.then_case)
    assert remarks == ["main: loop i: versioned on s == 1 (constant-stride fast path for "
                       "A[i * s, 3] (stride 8)); general path otherwise"]


def test_a_nest_of_vectorized_loops_is_versioned_once_at_its_outer_loop():
    s = tir.var("s")
    A = tir.decl_buffer((SIZE,), F32, name="A")
    B = tir.decl_buffer((32,), F32, name="B")
    ib = ir_builder.create()
    a, b = ib.buffer_ptr(A), ib.buffer_ptr(B)
    with ib.for_range(0, 4, kind="vectorize", name="i") as i, \
            ib.for_range(0, 8, kind="vectorize", name="j") as j:
        b[i * 8 + j] = a[i * 8 + j * s]
    after, remarks = run(tir.PrimFunc([A, B, s], ib.get()))
    assert isinstance(after.body, IfThenElse)
    for branch in (after.body.then_case, after.body.else_case):
        assert branch.kind == ForKind.VECTORIZED and branch.body.kind == ForKind.VECTORIZED
    assert "A[i * 8 + j]" in str(after.body.then_case)
    assert remarks == ["main: loop i: versioned on s == 1 (contiguous fast path for "
                       "A[i * 8 + j * s]); general path otherwise"]


def test_two_stride_vars_are_versioned_together_and_at_most_two():
    n, s, t, u = tir.size_var("n"), tir.var("s"), tir.var("t"), tir.var("u")
    A, C, D, B = (tir.decl_buffer((SIZE,), F32, name=x) for x in "ACDB")
    ib = ir_builder.create()
    a, c, d, b = (ib.buffer_ptr(x) for x in (A, C, D, B))
    with ib.for_range(0, n, kind="vectorize", name="i") as i:
        b[i] = a[i * s] + c[i * t]
    after, remarks = run(tir.PrimFunc([A, C, D, B, n, s, t, u], ib.get()))
    assert str(after.body.condition) == str(tir.all(s == 1, t == 1))
    assert "A[i] + C[i]" in str(after.body.then_case)
    assert remarks == ["main: loop i: versioned on s == 1 && t == 1 (contiguous fast path "
                       "for A[i * s], C[i * t]); general path otherwise"]

    ib = ir_builder.create()
    a, c, d, b = (ib.buffer_ptr(x) for x in (A, C, D, B))
    with ib.for_range(0, n, kind="vectorize", name="i") as i:
        b[i] = a[i * s] + c[i * t] + d[i * u]
    after, remarks = run(tir.PrimFunc([A, C, D, B, n, s, t, u], ib.get()))
    assert "D[i * u]" in str(after.body.then_case)  # the third stays a gather
    assert remarks[0].startswith("main: loop i: versioned on s == 1 && t == 1 (")


def test_a_var_that_strides_more_accesses_is_preferred():
    n, s, t = tir.size_var("n"), tir.var("s"), tir.var("t")
    A, C, B = (tir.decl_buffer((SIZE,), F32, name=x) for x in "ACB")
    ib = ir_builder.create()
    a, c, b = (ib.buffer_ptr(x) for x in (A, C, B))
    with ib.for_range(0, n, kind="vectorize", name="i") as i:
        b[i * t] = a[i * s * t] + c[i * t]  # t == 1 alone regularizes two accesses
    _, remarks = run(tir.PrimFunc([A, C, B, n, s, t], ib.get()))
    assert remarks[0].startswith("main: loop i: versioned on s == 1 && t == 1 (")
    # ... and with the budget one var, t wins over s:
    from transform.vector.analysis import strides as stride_analysis

    saved = stride_analysis.MAX_VERSIONED_VARS
    stride_analysis.MAX_VERSIONED_VARS = 1
    try:
        _, remarks = run(tir.PrimFunc([A, C, B, n, s, t], ib.get()))
    finally:
        stride_analysis.MAX_VERSIONED_VARS = saved
    assert remarks == ["main: loop i: versioned on t == 1 (contiguous fast path for "
                       "C[i * t], B[i * t]); general path otherwise"]


def test_linear_coefficient():
    i, s, b = tir.var("i"), tir.var("s"), tir.var("b")
    an = tir.arith.Analyzer()
    assert str(an.simplify(linear_coefficient(b + (i + 1) * s * 4 + 3, i))) == "s * 4"
    assert str(an.simplify(linear_coefficient(b - i * s, i))) == "0 - s"
    assert linear_coefficient(i * i * s, i) is None
    assert linear_coefficient(tir.floordiv(i * s, 2), i) is None
    assert linear_coefficient(b + s, i).value == 0


# ---------------------------------------------------------------- left alone


@pytest.mark.parametrize("index", [
    lambda i, s: i + s,          # unit stride already
    lambda i, s: i * 2,          # a constant stride: nothing to speculate on
    lambda i, s: s,              # no vector access depending on s
])
def test_nothing_to_version(index):
    func, _ = copy(index)
    after, remarks = run(func)
    assert after is func and remarks == []


def test_a_stride_bound_inside_the_loop_is_not_versioned():
    A = tir.decl_buffer((SIZE,), F32, name="A")
    B = tir.decl_buffer((SIZE,), F32, name="B")
    ib = ir_builder.create()
    a, b = ib.buffer_ptr(A), ib.buffer_ptr(B)
    with ib.for_range(0, 8, kind="vectorize", name="i") as i, \
            ib.for_range(0, 4, name="k") as k:
        b[i * 4 + k] = a[i * k]
    func = tir.PrimFunc([A, B], ib.get())
    after, remarks = run(func)
    assert after is func
    assert remarks == ["main: loop i: not versioned: the stride of A[i * k] uses k, which is "
                       "bound inside the loop"]


def test_a_stride_that_reads_memory_is_not_versioned():
    A = tir.decl_buffer((SIZE,), F32, name="A")
    B = tir.decl_buffer((SIZE,), F32, name="B")
    S = tir.decl_buffer((1,), "int32", name="S")
    ib = ir_builder.create()
    a, b, st = ib.buffer_ptr(A), ib.buffer_ptr(B), ib.buffer_ptr(S)
    with ib.for_range(0, 16, kind="vectorize", name="i") as i:
        b[i] = a[i * st[0]]
    func = tir.PrimFunc([A, B, S], ib.get())
    after, remarks = run(func)
    assert after is func
    assert remarks == ["main: loop i: not versioned: the stride of A[i * S[0]] reads memory"]


def test_an_enclosing_loop_var_is_not_versioned_on():
    n = tir.size_var("n")
    A = tir.decl_buffer((SIZE,), F32, name="A")
    B = tir.decl_buffer((SIZE,), F32, name="B")
    ib = ir_builder.create()
    a, b = ib.buffer_ptr(A), ib.buffer_ptr(B)
    with ib.for_range(0, 4, name="k") as k, \
            ib.for_range(0, n, kind="vectorize", name="i") as i:
        b[i] = a[i * k]
    func = tir.PrimFunc([A, B, n], ib.get())
    after, remarks = run(func)
    assert after is func
    assert remarks == ["main: loop i: not versioned: the stride of A[i * k] uses k, the var "
                       "of an enclosing loop"]


def test_a_symbolic_row_length_is_not_made_constant_by_versioning():
    n, s, m = tir.size_var("n"), tir.var("s"), tir.size_var("m")
    A = tir.decl_buffer((SIZE, m), F32, name="A")
    B = tir.decl_buffer((SIZE,), F32, name="B")
    ib = ir_builder.create()
    a, b = ib.buffer_ptr(A), ib.buffer_ptr(B)
    with ib.for_range(0, n, kind="vectorize", name="i") as i:
        b[i] = a[i * s, 0]
    func = tir.PrimFunc([A, B, n, s, m], ib.get())
    after, remarks = run(func)
    assert after is func
    assert remarks == ["main: loop i: not versioned: no access gets a stride of at most 8 "
                       "with s set to 1"]


def test_a_large_constant_stride_is_not_worth_a_copy_of_the_loop():
    n, s = tir.size_var("n"), tir.var("s")
    A = tir.decl_buffer((SIZE, 100), F32, name="A")
    B = tir.decl_buffer((SIZE,), F32, name="B")
    ib = ir_builder.create()
    a, b = ib.buffer_ptr(A), ib.buffer_ptr(B)
    with ib.for_range(0, n, kind="vectorize", name="i") as i:
        b[i] = a[i * s, 0]  # stride 100 with s == 1: still a gather
    func = tir.PrimFunc([A, B, n, s], ib.get())
    after, remarks = run(func)
    assert after is func
    assert remarks == ["main: loop i: not versioned: no access gets a stride of at most "
                       f"{MAX_FAST_STRIDE} with s set to 1"]


def test_known_not_one_is_not_versioned_and_a_second_run_changes_nothing():
    func, (A, B, n, s) = copy()
    once, _ = run(func)
    twice, remarks = run(once)
    assert twice is once
    assert remarks == ["main: loop i: not versioned: s != 1 here"]


def test_known_one_takes_the_fast_path_without_a_branch():
    func, (A, B, n, s) = copy()
    guarded = func.with_body(IfThenElse(s == 1, func.body))
    after, remarks = run(guarded)
    assert isinstance(after.body.then_case, For)
    assert "A[i]" in str(after.body.then_case) and "i * s" not in str(after)
    assert remarks == ["main: loop i: versioned: s == 1 holds here: contiguous fast path for "
                       "A[i * s], without a branch"]


def test_config_key_off_and_disable_vectorize_leave_the_loop_alone():
    func, _ = copy()
    for config in ({"tir.vectorize.version_strides": False}, {"tir.disable_vectorize": True}):
        after, remarks = run(func, config)
        assert after is func and remarks == []
    assert transform.config.known_configs()["tir.vectorize.version_strides"].default is True


def test_the_pass_is_in_the_pipeline_before_strip_mining():
    names = [p.info.name for p in codegen.default_pipeline()]
    k = names.index("tir.VersionSymbolicStrides")
    assert names[k + 1] == "tir.StripMineVectorLoops"


# ---------------------------------------------------------------- through codegen.build

#: Strict floating point: the ways are compared bit for bit (no FMA contraction).
STRICT = {"codegen.llvm.fp_contract": False}
STRIDES = [1, 2, 3, 0, -1]
EXTENTS = [0, 1, VL - 1, VL, VL + 1, 1000]


def strided_kernel(kind, dtype=F32, index_dtype="int32"):
    """``for i in vectorized(n)`` over ``A[b + i * s]``, with n, s, b runtime values:
    gather (``B[i] = A[..] * 2 + 1``), scatter (``A[..] = B[i] * 2``), rmw (``A[..] =
    A[..] + B[i]``), sum (``B[0] = B[0] + A[..]``), select (``B[i] = A[..] if A[..] > 0
    else -1``)."""
    n = tir.size_var("n")
    s, base = tir.var("s", index_dtype), tir.var("b", index_dtype)
    A = tir.decl_buffer((SIZE,), dtype, name="A")
    B = tir.decl_buffer((SIZE,), dtype, name="B")
    ib = ir_builder.create()
    a, b = ib.buffer_ptr(A), ib.buffer_ptr(B)
    two, one = tir.const(2, dtype), tir.const(1, dtype)
    with ib.for_range(0, n, kind="vectorize", name="i") as i:
        k = base + i * s
        if kind == "gather":
            b[i] = a[k] * two + one
        elif kind == "scatter":
            a[k] = b[i] * two
        elif kind == "rmw":
            a[k] = a[k] + b[i]
        elif kind == "sum":  # a reduction: VectorizeReductions runs first
            b[0] = b[0] + a[k]
        else:
            with ib.if_scope(a[k] > tir.const(0, dtype)):
                b[i] = a[k]
            with ib.else_scope():
                b[i] = tir.const(-1, dtype)
    return tir.PrimFunc([A, B, n, s, base], ib.get())


def reference(kind, a, b, n, s, base):
    """What the serial loop computes, iteration by iteration (NumPy scalars)."""
    a, b = a.copy(), b.copy()
    with np.errstate(all="ignore"):
        for i in range(n):
            k = base + i * s
            if kind == "gather":
                b[i] = a[k] * a.dtype.type(2) + a.dtype.type(1)
            elif kind == "scatter":
                a[k] = b[i] * a.dtype.type(2)
            elif kind == "rmw":
                a[k] = a[k] + b[i]
            elif kind == "sum":
                b[0] = b[0] + a[k]
            else:
                b[i] = a[k] if a[k] > 0 else a.dtype.type(-1)
    return a, b


def edge_values(rng, dtype):
    """Random values with the edges of the type sprinkled in (NaN, infinities, extremes)."""
    if dtype == F32:
        x = rng.uniform(-4, 4, SIZE).astype(dtype)
        edges = [np.nan, np.inf, -np.inf, np.finfo(dtype).max, -np.finfo(dtype).max,
                 np.finfo(dtype).tiny, -0.0]
    else:
        info = np.iinfo(dtype)
        x = rng.integers(-1000, 1000, SIZE).astype(dtype)
        edges = [info.max, info.min, -1, 0]
    spots = rng.choice(SIZE, 200, replace=False)
    x[spots] = np.array(edges, dtype)[np.arange(200) % len(edges)]
    return x


def builds(func):
    """The ways: vectorized build (versioned), versioning off, serial build, the
    interpreter on the build pipeline's output, the interpreter on the TIR as written."""
    from codegen.interp.backend import build_interpreter

    ways = {}
    for name, config in [("vectorized", {}),
                         ("unversioned", {"tir.vectorize.version_strides": False}),
                         ("serial", {"tir.disable_vectorize": True})]:
        with transform.PassContext(config={**STRICT, **config}):
            ways[name] = codegen.build(func)["main"]
    with transform.PassContext(config=STRICT):
        ways["lowered_interp"] = codegen.build(func, "interp")["main"]
    ways["interp"] = build_interpreter(func)["main"]
    return ways


@pytest.mark.parametrize("kind, dtype, index_dtype", [
    ("gather", F32, "int32"), ("scatter", F32, "int32"), ("rmw", F32, "int32"),
    ("select", F32, "int32"), ("gather", "int32", "int32"), ("rmw", "int32", "int32"),
    ("sum", "int32", "int32"), ("gather", F32, "int64"), ("scatter", "int32", "int64"),
])
def test_differential_strides_and_extents(kind, dtype, index_dtype):
    func = strided_kernel(kind, dtype, index_dtype)
    with transform.collect_remarks() as remarks:
        codegen.lower(func)
    assert "".join(r.line for r in remarks).count("versioned on s == 1") >= 1
    ways = builds(func)
    rng = np.random.default_rng(9)
    a0, b0 = edge_values(rng, dtype), edge_values(rng, dtype)
    for s in STRIDES:
        for n in EXTENTS:
            base = 3 + max(0, -s) * max(n - 1, 0)  # every index b + i * s in [3, SIZE)
            want = reference(kind, a0, b0, n, s, base)
            for name, fn in ways.items():
                a, b = a0.copy(), b0.copy()
                fn(a, b, n, s, base)
                for got, expected, buf in ((a, want[0], "A"), (b, want[1], "B")):
                    np.testing.assert_array_equal(
                        got, expected, err_msg=f"{name}: {kind} {dtype} s={s} n={n} {buf}")


def test_two_versioned_vars_differential():
    """``C[c + i * t] = A[b + i * s] * 3 - C[c + i * t]``, versioned on s == 1 && t == 1:
    every pair of strides (one of them 1 takes the general path too)."""
    n, s, t, base_a, base_c = (tir.size_var("n"), tir.var("s"), tir.var("t"), tir.var("b"),
                               tir.var("c"))
    A = tir.decl_buffer((SIZE,), F32, name="A")
    C = tir.decl_buffer((SIZE,), F32, name="C")
    ib = ir_builder.create()
    a, c = ib.buffer_ptr(A), ib.buffer_ptr(C)
    with ib.for_range(0, n, kind="vectorize", name="i") as i:
        c[base_c + i * t] = a[base_a + i * s] * tir.const(3, F32) - c[base_c + i * t]
    func = tir.PrimFunc([A, C, n, s, t, base_a, base_c], ib.get())
    with transform.collect_remarks() as remarks:
        codegen.lower(func)
    assert "versioned on s == 1 && t == 1" in remarks[0].line
    ways = builds(func)
    rng = np.random.default_rng(3)
    a0, c0 = edge_values(rng, F32), edge_values(rng, F32)
    for s_value in STRIDES:
        for t_value in STRIDES:
            for n_value in EXTENTS:
                bases = [3 + max(0, -x) * max(n_value - 1, 0) for x in (s_value, t_value)]
                want = c0.copy()
                with np.errstate(all="ignore"):
                    for i in range(n_value):
                        k = bases[1] + i * t_value
                        want[k] = a0[bases[0] + i * s_value] * np.float32(3) - want[k]
                for name, fn in ways.items():
                    got = c0.copy()
                    fn(a0.copy(), got, n_value, s_value, t_value, *bases)
                    np.testing.assert_array_equal(
                        got, want, err_msg=f"{name}: s={s_value} t={t_value} n={n_value}")


def test_nested_vectorized_loops_differential():
    s, base = tir.var("s"), tir.var("b")
    A = tir.decl_buffer((SIZE,), F32, name="A")
    B = tir.decl_buffer((32,), F32, name="B")
    ib = ir_builder.create()
    a, b = ib.buffer_ptr(A), ib.buffer_ptr(B)
    with ib.for_range(0, 4, kind="vectorize", name="i") as i, \
            ib.for_range(0, 8, kind="vectorize", name="j") as j:
        b[i * 8 + j] = a[base + i * 16 + j * s] - tir.const(0.5, F32)
    func = tir.PrimFunc([A, B, s, base], ib.get())
    ways = builds(func)
    a0 = edge_values(np.random.default_rng(1), F32)
    for s_value in STRIDES:
        base_value = 20
        idx = base_value + np.arange(4)[:, None] * 16 + np.arange(8)[None, :] * s_value
        with np.errstate(all="ignore"):
            want = (a0[idx.ravel()] - np.float32(0.5)).astype(F32)
        for name, fn in ways.items():
            out = np.zeros(32, F32)
            fn(a0.copy(), out, s_value, base_value)
            np.testing.assert_array_equal(out, want, err_msg=f"{name}: s={s_value}")


def test_fast_path_vectorizes_where_the_general_path_stays_serial():
    """``A[b + i * s] = A[b + i * s] + B[i]``: for all the dependence analysis knows, every
    iteration may touch one element (s == 0 does), so the original stays serial; under
    s == 1 the accesses are A[b + i] and the loop vectorizes."""
    with transform.collect_remarks() as remarks:
        codegen.build(strided_kernel("rmw"))
    # One remark for the loop: the fast path heads it, the general path is a detail.
    [remark] = remarks
    assert remark.outcome == "vectorized"
    assert ("; versioned on s == 1 (contiguous fast path for A[b + i * s]); general path "
            "otherwise; predicated tail; general path not vectorized: A[b + i * s] reads what "
            "A[b + i * s] writes in an earlier iteration") in remark.line
    with transform.collect_remarks() as off, transform.PassContext(
            config={"tir.vectorize.version_strides": False}):
        codegen.build(strided_kernel("rmw"))
    [remark] = off  # the loop and its tail stay serial for one reason
    assert remark.outcome == "not vectorized" and "earlier iteration" in remark.reason
    assert "tail" not in remark.reason


def test_remarks_through_the_pipeline_show_both_paths_vectorized():
    func, _ = copy()
    with transform.collect_remarks() as remarks:
        codegen.build(func)
    note = f"strip-mined by {VL} (the target's {BITS}-bit registers / float32)"
    # Both paths vectorize alike: one remark, the versioning and the tail as details.
    assert [r.line for r in remarks] == [
        f"main: loop i ({VL} lanes): vectorized: {note}; versioned on s == 1 (contiguous fast "
        "path for A[i * s]); general path otherwise; predicated tail"]


def _gathers(ll: str) -> bool:
    """Whether LLVM IR gathers floats: the intrinsic, or one scalar load per lane inserted
    into a vector (which of the two is the target's gather policy, codegen's choice)."""
    return "llvm.masked.gather" in ll or ll.count(f"insertelement <{VL} x float>") >= VL


def test_llvm_ir_fast_path_loads_a_plain_vector_and_the_general_path_gathers():
    func, _ = copy()
    plain = f"load <{VL} x float>"
    ll = codegen.build(func).get_source("ll")
    # with its bounds checked once before the loop, LLVM turns the contiguous copy into memcpy
    assert (plain in ll or "@llvm.memcpy" in ll) and _gathers(ll)
    with transform.PassContext(config={"tir.vectorize.version_strides": False}):
        ll_off = codegen.build(func).get_source("ll")
    assert plain not in ll_off and "@llvm.memcpy" not in ll_off and _gathers(ll_off)
