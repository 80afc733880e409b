"""The vectorizer's legality analysis: a loop marked vectorized never computes a different result.

Every program runs three ways on the same random data -- vectorized (LLVM),
serial (``tir.disable_vectorize``, LLVM) and through the reference
interpreter -- and all three must agree bit for bit; the remark must say what
happened and name the dependence.
"""

import numpy as np
import pytest
from tir.stmt_functor import post_order_visit

import codegen
import tir
import transform
from tir import ir_builder
from tir.expr import Ramp
from tir.stmt import Evaluate, For, ForKind, SeqStmt
from transform.vector.analysis.dependence import Delta, Term, affine, may_be_zero

N, VL = 32, 8
F32, I32 = "float32", "int32"
ASSUME = {"tir.vectorize.assume_independent": True}


def strip(ib, lo, hi, body, annotations=None):
    """``for io: for v in vectorized(VL): body(lo + io*VL + v)`` and a serial tail."""
    blocks = (hi - lo) // VL
    with ib.for_range(0, blocks, name="io") as io:
        with ib.for_range(0, VL, kind="vectorize", name="v", annotations=annotations) as v:
            body(lo + io * VL + v)
    with ib.for_range(0, (hi - lo) - blocks * VL, name="t") as t:
        body(lo + blocks * VL + t)


def run_three_ways(func, arrays, scalars=()):
    """Vectorized, serial and interpreted results (each a list of arrays) and the remarks.

    Strict floating point (no FMA contraction), so the three agree bit for bit.
    """
    def run(cfg, target):
        out = [a.copy() for a in arrays]
        with transform.PassContext(config={**cfg, "codegen.llvm.fp_contract": False}):
            lib = codegen.build(func, target=target)
        lib["main"](*out, *scalars)
        return out, lib.remarks

    vec, remarks = run({}, "llvm")
    serial, _ = run({"tir.disable_vectorize": True}, "llvm")
    interp, _ = run({}, "interp")
    for got, want, name in zip(vec, serial, [b.name for b in func.buffer_map.values()]):
        np.testing.assert_array_equal(got, want, err_msg=f"{name}: vectorized vs serial")
    for got, want in zip(interp, serial):
        np.testing.assert_array_equal(got, want, err_msg="interpreter vs serial")
    return remarks


def data(func, rng, low=-4.0, high=4.0):
    out = []
    for buf in func.buffer_map.values():
        shape = [int(d) for d in buf.shape]
        if buf.dtype == F32:
            x = rng.uniform(low, high, shape).astype(np.float32)
            edges = np.array([np.nan, np.inf, -0.0, 3e38, -3e38], np.float32)
            x.flat[1::7] = edges[rng.integers(0, len(edges), x.flat[1::7].size)]
            out.append(x)
        else:
            out.append(rng.integers(0, 4, shape).astype(buf.dtype))
    return out


def has_ramp(stmt) -> bool:
    found = []
    post_order_visit(stmt, lambda n: found.append(n) if isinstance(n, Ramp) else None)
    return bool(found)


def bufs(*names, dtype=F32):
    return [tir.decl_buffer((N,), dtype, name=x) for x in names]


# ---------------------------------------------------------------- the table


def recurrence():
    A, B = bufs("a", "b")
    ib = ir_builder.create()
    a, b = ib.buffer_ptr(A), ib.buffer_ptr(B)

    def body(i):  # a linear recurrence, not a scan (VectorizeScans takes a[i - 1] + b[i])
        a[i] = a[i - 1] * 0.5 + b[i]

    strip(ib, 1, N, body)
    return tir.PrimFunc([A, B], ib.get()), "reads what a[io * 8 + v + 1] writes in the previous"


def backward_statements():
    A, B, C = bufs("a", "b", "c")
    ib = ir_builder.create()
    a, b, c = ib.buffer_ptr(A), ib.buffer_ptr(B), ib.buffer_ptr(C)

    def body(i):
        a[i] = b[i - 1]
        b[i] = c[i]

    strip(ib, 1, N, body)
    return tir.PrimFunc([A, B, C], ib.get()), "(distance 1)"


def uniform_load_written():
    A, B = bufs("a", "b")
    K = tir.var("K")
    ib = ir_builder.create()
    a, b = ib.buffer_ptr(A), ib.buffer_ptr(B)

    def body(i):
        a[i] = a[K] + b[i]

    strip(ib, 0, N, body)
    return tir.PrimFunc([A, B, K], ib.get()), "a[K] reads what a[io * 8 + v] writes"


def carried_scalar():
    A, B = bufs("a", "b")
    ib = ir_builder.create()
    a, b = ib.buffer_ptr(A), ib.buffer_ptr(B)
    x = ib.allocate(F32, (1,), name="x")
    x[0] = tir.const(0.0, F32)

    def body(i):
        a[i] = b[i] + x[0]
        x[0] = b[i]

    strip(ib, 0, N, body)
    return tir.PrimFunc([A, B], ib.get()), "x[0] is read and written by every iteration"


def counter():
    A, B = bufs("a", "b")
    ib = ir_builder.create()
    a, b = ib.buffer_ptr(A), ib.buffer_ptr(B)
    j = ib.allocate(I32, (1,), name="j")
    j[0] = -1

    def body(i):
        j[0] = j[0] + 1
        a[j[0]] = b[i]

    strip(ib, 0, N, body)
    return tir.PrimFunc([A, B], ib.get()), "j[0] is read and written by every iteration"


def prefix_sum():
    A, B = bufs("a", "b")
    S = tir.decl_buffer((1,), F32, name="s")
    ib = ir_builder.create()
    a, b, s = ib.buffer_ptr(A), ib.buffer_ptr(B), ib.buffer_ptr(S)
    s[0] = tir.const(0.0, F32)

    def body(i):
        s[0] = s[0] + a[i]
        b[i] = s[0]

    strip(ib, 0, N, body)
    return tir.PrimFunc([A, B, S], ib.get()), "s[0] is read and written by every iteration"


def histogram():
    X = tir.decl_buffer((N,), I32, name="x")
    H = tir.decl_buffer((4,), I32, name="h")
    ib = ir_builder.create()
    x, h = ib.buffer_ptr(X), ib.buffer_ptr(H)

    def body(i):
        h[x[i]] = h[x[i]] + 1

    strip(ib, 0, N, body)
    return tir.PrimFunc([X, H], ib.get()), "(the index depends on data)"


def early_exit():
    A, B = bufs("a", "b")
    ib = ir_builder.create()
    a, b = ib.buffer_ptr(A), ib.buffer_ptr(B)
    done = ib.allocate(I32, (1,), name="done")
    done[0] = 0

    def body(i):
        with ib.if_scope(done[0] == 0):
            a[i] = a[i] + b[i]
            with ib.if_scope(b[i] > 0.5):
                done[0] = 1

    strip(ib, 0, N, body)
    return tir.PrimFunc([A, B], ib.get()), "done[0] is read and written by every iteration"


def let_in_reduction():
    B = tir.decl_buffer((1,), I32, name="B")
    A = tir.decl_buffer((2,), F32, name="A")
    ib = ir_builder.create()
    b, a = ib.buffer_ptr(B), ib.buffer_ptr(A)
    with ib.for_range(0, 2, name="j", kind="vectorize") as j:
        b[0] = b[0] + tir.Let(tir.Var("t", F32), a[j], tir.const(5, I32))
    return tir.PrimFunc([B, A], ib.get()), "B[0] is read and written by every iteration"


def reduction_under_inner_loop():
    ACC = tir.decl_buffer((1,), F32, name="acc")
    A = tir.decl_buffer((6,), F32, name="A")
    ib = ir_builder.create()
    acc, a = ib.buffer_ptr(ACC), ib.buffer_ptr(A)
    with ib.for_range(0, 3, kind="vectorize", name="j") as j:
        with ib.for_range(0, 2, name="k") as k:
            acc[0] = acc[0] + a[j * 2 + k]
    return tir.PrimFunc([ACC, A], ib.get()), "acc[0] is read and written by every iteration"


TABLE = [recurrence, backward_statements, uniform_load_written, carried_scalar, counter,
         prefix_sum, histogram, early_exit, let_in_reduction, reduction_under_inner_loop]


@pytest.mark.parametrize("make", TABLE, ids=lambda f: f.__name__)
def test_loop_with_a_dependence_stays_serial_and_says_why(make):
    func, phrase = make()
    rng = np.random.default_rng(1)
    arrays = data(func, rng)
    if make is early_exit:
        arrays[1][:] = 0.1
        arrays[1][11] = 0.9  # the flag goes up in lane 3 of the second vector
    if make is reduction_under_inner_loop:
        arrays[1][:] = [1e8, 1.0, -1e8, 1.0, 1.0, 1.0]  # the float sum's order shows
    if make is histogram:
        arrays[0][:] = 0  # every lane hits the same bin
    scalars = (5,) if make is uniform_load_written else ()
    remarks = run_three_ways(func, arrays, scalars)
    vectorized = [r for r in remarks if isinstance(r, transform.VectorizeRemark)
                  and r.loop_var in ("v", "j")]
    assert [r.outcome for r in vectorized] == ["not vectorized"], remarks
    assert phrase in vectorized[0].reason


def test_histogram_counts_every_lane():
    func, _ = histogram()
    x, h = np.zeros(N, np.int32), np.zeros(4, np.int32)
    codegen.build(func)["main"](x, h)
    assert h[0] == N


def test_remark_of_a_recurrence_names_the_accesses_and_the_distance():
    func, _ = recurrence()
    with transform.collect_remarks() as remarks:
        out = transform.VectorizeLoop()(tir.IRModule.from_expr(func))["main"]
    assert remarks[0].line == (
        "main: loop v (8 lanes): not vectorized: a[io * 8 + v] reads what a[io * 8 + v + 1] "
        "writes in the previous iteration (distance 1)")
    loop = out.body.seq[0].body
    assert loop.kind == ForKind.SERIAL and loop.loop_var.name == "v" and not has_ramp(out.body)


# ---------------------------------------------------------------- legal loops keep vectorizing


def forward_anti_dependence():
    A, B = bufs("a", "b")
    ib = ir_builder.create()
    a, b = ib.buffer_ptr(A), ib.buffer_ptr(B)

    def body(i):
        a[i] = a[i + 1] + b[i]  # reads the old a[i + 1], before iteration i + 1 writes it

    strip(ib, 0, N - 1, body)
    return tir.PrimFunc([A, B], ib.get())


def forward_flow_between_statements():
    A, B, C = bufs("a", "b", "c")
    ib = ir_builder.create()
    a, b, c = ib.buffer_ptr(A), ib.buffer_ptr(B), ib.buffer_ptr(C)

    def body(i):
        b[i] = c[i] * 2.0
        a[i] = b[i - 1]  # written by an earlier statement: all lanes of it run first

    strip(ib, 1, N, body)
    return tir.PrimFunc([A, B, C], ib.get())


def distance_of_a_whole_vector():
    A, B = bufs("a", "b")
    ib = ir_builder.create()
    a, b = ib.buffer_ptr(A), ib.buffer_ptr(B)

    def body(i):
        a[i] = a[i - VL] + b[i]  # the previous vector wrote it: the outer loop keeps the order

    strip(ib, VL, N, body)
    return tir.PrimFunc([A, B], ib.get())


def scatter_last_writer_wins():
    A, B = bufs("a", "b")
    X = tir.decl_buffer((N,), I32, name="x")
    ib = ir_builder.create()
    a, b, x = ib.buffer_ptr(A), ib.buffer_ptr(B), ib.buffer_ptr(X)

    def body(i):
        a[x[i]] = b[i]

    strip(ib, 0, N, body)
    return tir.PrimFunc([A, B, X], ib.get())


def matmul_row():
    M = 8
    A = tir.decl_buffer((M, M), F32, name="A")
    B = tir.decl_buffer((M, M), F32, name="B")
    C = tir.decl_buffer((M, M), F32, name="C")
    ib = ir_builder.create()
    a, b, c = ib.buffer_ptr(A), ib.buffer_ptr(B), ib.buffer_ptr(C)
    with ib.for_range(0, M, name="i") as i:
        with ib.for_range(0, M, kind="vectorize", name="j") as j:
            c[i, j] = tir.const(0.0, F32)
            with ib.for_range(0, M, name="k") as k:
                c[i, j] = c[i, j] + a[i, k] * b[k, j]
    return tir.PrimFunc([A, B, C], ib.get())


LEGAL = [forward_anti_dependence, forward_flow_between_statements, distance_of_a_whole_vector,
         scatter_last_writer_wins, matmul_row]


@pytest.mark.parametrize("make", LEGAL, ids=lambda f: f.__name__)
def test_legal_loop_is_vectorized(make):
    func = make()
    arrays = data(func, np.random.default_rng(2))
    if make is scatter_last_writer_wins:
        arrays[2][:] = np.arange(N) % 3  # many lanes store to the same element
    remarks = run_three_ways(func, arrays)
    assert [(r.loop_var, r.outcome) for r in remarks] == [(remarks[0].loop_var, "vectorized")]


# ---------------------------------------------------------------- partial vectorization


def test_statement_with_its_own_dependence_is_scalarized_alone():
    X = tir.decl_buffer((N,), I32, name="x")
    H = tir.decl_buffer((4,), I32, name="h")
    A, B = bufs("a", "b")
    ib = ir_builder.create()
    x, h, a, b = (ib.buffer_ptr(t) for t in (X, H, A, B))

    def body(i):
        h[x[i]] = h[x[i]] + 1
        a[i] = b[i] * 2.0

    strip(ib, 0, N, body)
    func = tir.PrimFunc([X, H, A, B], ib.get())
    arrays = data(func, np.random.default_rng(3))
    # VectorizeReductions' remark on h (not a reduction: a histogram) folds into the loop's
    [remark] = [r for r in run_three_ways(func, arrays)
                if isinstance(r, transform.VectorizeRemark)]
    assert remark.outcome == "partially vectorized"
    assert remark.reason == ("h[x[io * 8 + v]] and h[x[io * 8 + v]] may be the same element in "
                             "different iterations (the index depends on data); not a reduction: "
                             "h[x[io * 8 + v]] = h[x[io * 8 + v]] + 1: the index of h changes "
                             "with v (a histogram)")
    out = transform.VectorizeLoop()(tir.IRModule.from_expr(func))["main"]
    first, second = out.body.seq[0].body.seq
    assert isinstance(first, For) and first.loop_var.name == "v_s" and not has_ramp(first)
    assert has_ramp(second)


def test_dependence_across_an_inner_loop_keeps_the_inner_loop_serial_as_a_whole():
    """acc[j] is private to lane j, but out[k + j] meets out of order across k iterations."""
    OUT = tir.decl_buffer((16,), F32, name="out")
    B = tir.decl_buffer((16,), F32, name="B")
    ib = ir_builder.create()
    out, b = ib.buffer_ptr(OUT), ib.buffer_ptr(B)
    with ib.for_range(0, 4, kind="vectorize", name="j") as j:
        b[j + 8] = b[j] * 2.0
        with ib.for_range(0, 4, name="k") as k:
            out[k + j] = b[k * 4 + j]
    func = tir.PrimFunc([OUT, B], ib.get())
    [remark] = run_three_ways(func, data(func, np.random.default_rng(4)))
    assert remark.outcome == "partially vectorized"
    assert "out[k + j] overwrites what out[k + j] writes" in remark.reason
    body = transform.VectorizeLoop()(tir.IRModule.from_expr(func))["main"].body
    first, second = body.seq
    assert has_ramp(first) and second.loop_var.name == "j_s" and second.body.loop_var.name == "k"


# ---------------------------------------------------------------- the user's promise


def test_assume_independent_skips_the_analysis():
    A, B = bufs("a", "b")
    ib = ir_builder.create()
    a, b = ib.buffer_ptr(A), ib.buffer_ptr(B)

    def body(i):
        a[i] = a[i - 1] + b[i]

    strip(ib, 1, N, body, annotations=ASSUME)
    func = tir.PrimFunc([A, B], ib.get())
    with transform.collect_remarks() as remarks:
        out = transform.VectorizeLoop()(tir.IRModule.from_expr(func))["main"]
    assert remarks[0].line == ("main: loop v (8 lanes): vectorized: dependences not checked "
                               "(tir.vectorize.assume_independent)")
    assert has_ramp(out.body)


def test_annotation_false_keeps_the_check():
    A, B = bufs("a", "b")
    ib = ir_builder.create()
    a, b = ib.buffer_ptr(A), ib.buffer_ptr(B)
    strip(ib, 1, N, lambda i: a.__setitem__(i, a[i - 1] + b[i]),
          annotations={"tir.vectorize.assume_independent": False})
    with transform.collect_remarks() as remarks:
        transform.VectorizeLoop()(tir.IRModule.from_expr(tir.PrimFunc([A, B], ib.get())))
    assert remarks[0].outcome == "not vectorized"


# ---------------------------------------------------------------- memory the analysis can't see


def _calls(*names):
    j = tir.var("j")
    seq = SeqStmt([Evaluate(tir.call_extern(I32, name, j)) for name in names])
    return tir.PrimFunc([], For(j, 0, 4, ForKind.VECTORIZED, seq))


def test_two_opaque_calls_keep_their_order():
    with transform.collect_remarks() as remarks:
        out = transform.VectorizeLoop()(tir.IRModule.from_expr(_calls("f", "g")))["main"]
    assert remarks[0].outcome == "not vectorized"
    assert "the call of g and the call of f may share state" in remarks[0].reason
    assert out.body.kind == ForKind.SERIAL


def test_views_of_one_memory_alias():
    """A 2-D view and a 1-D view of the same data: flat offsets are compared."""
    data_var = tir.Var("M", "handle")
    flat = tir.decl_buffer((16,), F32, name="flat", data=data_var)
    grid = tir.decl_buffer((4, 4), F32, name="grid", data=data_var)
    j = tir.var("j")
    body = SeqStmt([tir.BufferStore(flat, tir.const(1.0, F32), [j + 1]),
                    tir.BufferStore(grid, grid[0, j] * 2.0, [1, j])])
    func = tir.PrimFunc([flat], For(j, 0, 4, ForKind.VECTORIZED, body))
    with transform.collect_remarks() as remarks:
        transform.VectorizeLoop()(tir.IRModule.from_expr(func))
    assert remarks[0].outcome == "not vectorized"  # grid[0, j] reads flat[j] = j + 1's store


# ---------------------------------------------------------------- remarks on built modules


def test_built_module_carries_the_remarks_even_from_the_cache():
    func, _ = recurrence()
    codegen.clear_cache()
    lib = codegen.build(func)
    assert [r.outcome for r in lib.remarks] == ["not vectorized"]
    with transform.collect_remarks() as remarks:
        again = codegen.build(func)
    assert again is lib and list(remarks) == list(lib.remarks)
    assert "tir.vectorize_remarks" not in lib.get_source("tir")


# ---------------------------------------------------------------- the tests themselves


@pytest.mark.parametrize("terms, delta, expected", [
    ([Term(-1, 1, 7)], Delta(1, 1), True),      # d = 1
    ([Term(-1, 1, 7)], Delta(8, 8), False),     # d = 8: beyond the lanes
    ([Term(-2, 1, 7)], Delta(3, 3), False),     # 2d = 3: no integer d (GCD)
    ([Term(-1, 1, 7)], Delta(-3, -3), False),   # d = -3: the other direction
    ([Term(2, 0, 14), Term(1, 1, 15)], Delta(-20, -20), True),  # 2u + d = 20
    ([Term(2, 0, 6), Term(1, 1, 7)], Delta(-20, -20), False),  # at most 12 + 7
    ([Term(4, 0, 3), Term(-1, 1, 3)], Delta(-8, -8), False),  # 4k - d = 8: only d = 0, 4
    ([Term(1, 1, 7)], Delta(None, None), True),  # unknown constant part
    ([], Delta(0, 0), True),
    ([], Delta(1, 5), False),
    ([Term(3, None, None)], Delta(1, 1), False),  # 3x = -1 has no integer solution
])
def test_may_be_zero(terms, delta, expected):
    assert may_be_zero(terms, delta) is expected


def test_affine_forms():
    v, io = tir.var("v"), tir.var("io")
    form = affine((io * 8 + v) * 2 - 3, {id(v)})
    assert form.coeff(v) == 2 and str(form.rest) == "io * 8 * 2 - 3"
    assert affine(tir.floordiv(v, 2), {id(v)}) is None
    ramp = affine(Ramp(io * 4, 1, 4), {id(v)})
    assert ramp.free_terms == ((1, 0, 3),) and ramp.coeff(v) == 0
    wide = affine(tir.Cast("int64", v + 1), {id(v)})
    assert wide.coeff(v) == 1
    assert affine(tir.Cast("int8", v), {id(v)}) is None  # narrowing may wrap
