"""``LegalizeParallelLoops``: parallel loops whose iterations share memory.

A reduction becomes partial results per chunk (exact for integers, min/max and
bitwise ops; float sums reassociated, the same bits at any thread count); any
other conflict keeps the loop serial with a remark naming it; independent
loops stay as written. Results are checked against the serial reading (the
interpreter on the IR as written), at several thread counts, on inputs with
tails, empty loops, extreme values and NaN.
"""

import numpy as np
import pytest

import codegen
import tir
import transform
from codegen.interp.backend import build_interpreter
from tir import ir_builder
from transform.parallel import (
    ASSUME_INDEPENDENT,
    PARALLEL_REDUCTION,
    SERIAL,
    analyze_parallel_loop,
)
from transform.parallel.partials import CHUNKS
from transform.vector.vectorize_reductions import ORDERED

EXTENTS = (0, 1, 2, 3, 63, 64, 65, 1000)
THREADS = (1, 2, 3, 8)


def parallel_loop(body, dtype="float32", n=None, acc_dtype=None, annotations=None,
                  kind="parallel", extra=1):
    """``for i in <kind>(n): body(ib, i, s, a, b)``: A, B (n,) of ``dtype``, S (2,)."""
    n = tir.size_var("n") if n is None else n
    A = tir.decl_buffer((n,), dtype, "A")
    B = tir.decl_buffer((n + extra,), dtype, "B")
    S = tir.decl_buffer((2,), acc_dtype or dtype, "S")
    ib = ir_builder.create()
    a, b, s = (ib.buffer_ptr(x) for x in (A, B, S))
    with ib.for_range(0, n, kind=kind, name="i", annotations=annotations) as i:
        body(ib, i, s, a, b)
    return tir.PrimFunc([A, B, S], ib.get())


def build(func, config=None):
    """The LLVM build of ``func`` and the remarks of the parallel pass."""
    with transform.PassContext(config=config or {}), transform.collect_remarks() as remarks:
        mod = codegen.build(func)
    return mod, [str(r) for r in remarks if "parallel loop" in str(r)]


def inputs(dtype, n, seed):
    """A and B with extremes: NaN and infinities for floats, the ends of the range for ints."""
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "f":
        a = rng.standard_normal(n).astype(dtype) * 100
        if n > 4:
            a[rng.integers(0, n, 2)] = [np.finfo(dtype).max, -np.finfo(dtype).max]
    else:
        info = np.iinfo(dtype)
        a = rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
    return a, np.arange(n + 1).astype(dtype)


def call(mod, a, b, s0, threads=1):
    a, b, s = a.copy(), b.copy(), s0.copy()
    with codegen.num_threads(threads):
        mod(a, b, s)
    return b, s


# ------------------------------------------------------------ reductions: what they compute

EXACT = {  # name -> (body, dtype, start of S)
    "int sum": (lambda ib, i, s, a, b: s.__setitem__(0, s[0] + a[i]), "int32", 5),
    "int product": (lambda ib, i, s, a, b: s.__setitem__(0, s[0] * (a[i] & 3)), "int64", 1),
    "xor": (lambda ib, i, s, a, b: s.__setitem__(1, s[1] ^ a[i]), "int32", 0),
    "and": (lambda ib, i, s, a, b: s.__setitem__(0, s[0] & a[i]), "int64", -1),
    "or": (lambda ib, i, s, a, b: s.__setitem__(0, a[i] | s[0]), "uint8", 0),
    "float max": (lambda ib, i, s, a, b: s.__setitem__(0, tir.max(s[0], a[i])), "float32",
                  -np.inf),
    "float min": (lambda ib, i, s, a, b: s.__setitem__(1, tir.min(a[i], s[1])), "float64",
                  np.inf),
}


@pytest.mark.parametrize("name", sorted(EXACT))
@pytest.mark.parametrize("n", EXTENTS)
def test_exact_reductions_equal_the_serial_loop_at_any_thread_count(name, n):
    body, dtype, start = EXACT[name]
    func = parallel_loop(body, dtype)
    mod, remarks = build(func)
    assert any(PARALLEL_REDUCTION in r for r in remarks), remarks
    a, b = inputs(dtype, n, seed=n)
    if dtype.startswith("float") and n > 3:
        a[n // 2] = np.nan  # min/max of tirlite ignore no NaN: the serial loop decides
    s0 = np.array([start, start], dtype)
    want_b, want_s = call(build_interpreter(func), a, b, s0)
    for threads in THREADS:
        got_b, got_s = call(mod, a, b, s0, threads)
        np.testing.assert_array_equal(got_s, want_s, err_msg=f"{threads} threads")
        np.testing.assert_array_equal(got_b, want_b)


def float_sum(ib, i, s, a, b):
    s[0] = s[0] + a[i] * a[i]


@pytest.mark.parametrize("n", EXTENTS + (100_000,))
def test_a_float_sum_is_close_to_the_serial_one_and_the_same_at_any_thread_count(n):
    func = parallel_loop(float_sum)
    mod, remarks = build(func)
    assert any("reassociated" in r for r in remarks), remarks
    a, b = inputs("float32", n, seed=n)
    a = np.clip(a, -1e3, 1e3)
    s0 = np.array([-0.0, 7], "float32")
    _, want = call(build_interpreter(func), a, b, s0)
    results = [call(mod, a, b, s0, t)[1] for t in THREADS]
    for got in results[1:]:
        assert got.tobytes() == results[0].tobytes()  # bit for bit: chunks do not move
    exact = float(np.sum(a.astype("float64") ** 2))
    assert abs(float(results[0][0]) - exact) <= 1e-5 * exact + 1e-30
    assert abs(float(want[0]) - exact) <= 1e-4 * exact + 1e-30
    if n == 0:  # the identity is -0.0: an empty sum keeps the sign of the start
        assert np.signbit(results[0][0])
    # the pipeline's interpreter runs the same rewrite: the same bits as the LLVM build
    # once LLVM may not fuse a * a + s into one fma (which rounds once)
    strict, _ = build(func, {"codegen.llvm.fp_contract": False})
    with transform.PassContext(config={"codegen.llvm.fp_contract": False}):
        interp = codegen.build(func, target="interp")
    assert call(interp, a, b, s0)[1].tobytes() == call(strict, a, b, s0, 2)[1].tobytes()


def test_nan_and_inf_in_a_float_sum_come_out_as_in_the_serial_loop():
    func = parallel_loop(lambda ib, i, s, a, b: s.__setitem__(0, s[0] + a[i]))
    mod, _ = build(func)
    for special in ([np.nan], [np.inf], [np.inf, -np.inf], [-np.inf]):
        a = np.ones(500, "float32")
        a[[97, 401][:len(special)]] = special
        b = np.zeros(501, "float32")
        s0 = np.zeros(2, "float32")
        _, want = call(build_interpreter(func), a, b, s0)
        for threads in THREADS:
            _, got = call(mod, a, b, s0, threads)
            np.testing.assert_array_equal(got, want)


def test_a_conditional_reduction_and_the_rest_of_the_body_run_as_written():
    def body(ib, i, s, a, b):
        b[i] = a[i] * 2
        with ib.if_scope(a[i] > 0):
            s[0] = s[0] + a[i]

    func = parallel_loop(body, "int32")
    mod, remarks = build(func)
    assert any(PARALLEL_REDUCTION in r for r in remarks)
    for n in EXTENTS:
        a, b = inputs("int32", n, n)
        a //= 4
        s0 = np.array([3, 3], "int32")
        want = call(build_interpreter(func), a, b, s0)
        for threads in THREADS:
            got = call(mod, a, b, s0, threads)
            np.testing.assert_array_equal(got[0], want[0])
            np.testing.assert_array_equal(got[1], want[1])


def nested(inner_kind):
    """for i in parallel(n): for j in <inner_kind>(m): S[0] += A[i, j]."""
    n, m = tir.size_var("n"), tir.size_var("m")
    A = tir.decl_buffer((n, m), "int32", "A")
    S = tir.decl_buffer((1,), "int32", "S")
    ib = ir_builder.create()
    a, s = ib.buffer_ptr(A), ib.buffer_ptr(S)
    with ib.for_range(0, n, kind="parallel", name="i") as i:
        with ib.for_range(0, m, kind=inner_kind, name="j") as j:
            s[0] = s[0] + a[i, j]
    return tir.PrimFunc([A, S], ib.get())


@pytest.mark.parametrize("inner_kind", ["serial", "vectorize", "parallel"])
def test_an_update_in_a_nested_loop_is_reduced(inner_kind):
    func = nested(inner_kind)
    mod, remarks = build(func)
    assert any(PARALLEL_REDUCTION in r for r in remarks), remarks
    rng = np.random.default_rng(1)
    for shape in ((0, 5), (5, 0), (1, 1), (3, 17), (70, 33)):
        a = rng.integers(-2**31, 2**31 - 1, shape, dtype="int32")
        want = np.array([a.sum(dtype="int64")], "int64").astype("int32")  # wraps like int32
        for threads in THREADS:
            s = np.zeros(1, "int32")
            with codegen.num_threads(threads):
                mod(a, s)
            np.testing.assert_array_equal(s, want)


def test_float_sums_stay_serial_in_ordered_mode():
    func = parallel_loop(float_sum)
    mod, remarks = build(func, {ORDERED: True, "codegen.llvm.fp_contract": False})
    assert any(SERIAL in r and ORDERED in r for r in remarks), remarks
    a, b = inputs("float32", 1000, 3)
    a = np.clip(a, -1e3, 1e3)
    s0 = np.zeros(2, "float32")
    _, want = call(build_interpreter(func), a, b, s0)
    _, got = call(mod, a, b, s0, 2)
    assert got.tobytes() == want.tobytes()


def test_the_rewrite_splits_into_fixed_chunks_and_folds_in_order():
    func = parallel_loop(lambda ib, i, s, a, b: s.__setitem__(0, s[0] + a[i]), "int32")
    out = transform.LegalizeParallelLoops()(tir.IRModule.from_expr(func))["main"]
    loops = []
    tir.functor.post_order_visit(out.body, lambda x: loops.append(x)
                                 if isinstance(x, tir.For) else None)
    kinds = {str(x.loop_var): (x.kind, x.extent) for x in loops}
    assert kinds["i_chunk"][0] == tir.ForKind.PARALLEL and kinds["i_chunk"][1].value == CHUNKS
    assert kinds["i"][0] == tir.ForKind.SERIAL
    assert kinds["i_fold"][0] == tir.ForKind.SERIAL and kinds["i_fold"][1].value == CHUNKS
    short = parallel_loop(lambda ib, i, s, a, b: s.__setitem__(0, s[0] + a[i]), "int32", n=5)
    out = transform.LegalizeParallelLoops()(tir.IRModule.from_expr(short))["main"]
    assert "T.parallel(5)" in str(out)  # no more chunks than iterations


def test_accumulators_in_two_elements_of_one_buffer():
    def body(ib, i, s, a, b):
        s[0] = s[0] + a[i]
        s[1] = tir.max(s[1], a[i])

    func = parallel_loop(body, "int64")
    mod, remarks = build(func)
    assert any("S[0] (add), S[1] (max)" in r for r in remarks), remarks
    for n in EXTENTS:
        a, b = inputs("int64", n, n)
        a //= 1 << 20
        s0 = np.array([5, -(1 << 62)], "int64")
        want = call(build_interpreter(func), a, b, s0)[1]
        for threads in THREADS:
            np.testing.assert_array_equal(call(mod, a, b, s0, threads)[1], want)


# ------------------------------------------------------------ conflicts that stay serial

SERIAL_CASES = {  # name -> (body, words the remark must hold)
    "scan": (lambda ib, i, s, a, b: b.__setitem__(i + 1, b[i] + a[i]), "may read what"),
    "last write": (lambda ib, i, s, a, b: s.__setitem__(0, a[i]), "the last write"),
    "two writers": (lambda ib, i, s, a, b: b.__setitem__(i // 2, a[i]), "B[i // 2] may be"),
    "subtraction": (lambda ib, i, s, a, b: s.__setitem__(0, s[0] - a[i]), "not associative"),
    "histogram": (lambda ib, i, s, a, b: b.__setitem__(tir.min(a[i] & 7, i),
                                                       b[tir.min(a[i] & 7, i)] + 1),
                  "histogram"),
    "two accumulations": (lambda ib, i, s, a, b: [s.__setitem__(0, s[0] + a[i]),
                                                  s.__setitem__(0, s[0] + b[i])],
                          "writes S"),
    "read of the accumulator": (lambda ib, i, s, a, b: [s.__setitem__(0, s[0] + a[i]),
                                                        b.__setitem__(i, s[0])], "reads S"),
}


@pytest.mark.parametrize("name", sorted(SERIAL_CASES))
def test_other_conflicts_keep_the_loop_serial_and_say_why(name):
    body, words = SERIAL_CASES[name]
    func = parallel_loop(body, "int32")
    mod, remarks = build(func)
    assert len(remarks) == 1 and SERIAL in remarks[0] and words in remarks[0], remarks
    for n in EXTENTS:
        a, b = inputs("int32", n, n)
        a %= 1000
        s0 = np.array([1, 2], "int32")
        want = call(build_interpreter(func), a, b, s0)
        got = call(mod, a, b, s0, 4)
        np.testing.assert_array_equal(got[0], want[0])
        np.testing.assert_array_equal(got[1], want[1])


def test_an_opaque_call_and_a_while_loop_keep_the_loop_serial():
    def call_extern(ib, i, s, a, b):
        ib.emit(tir.Evaluate(tir.call_extern("int32", "rand")))

    def while_loop(ib, i, s, a, b):
        with ib.while_loop(b[i] < 0):
            b[i] = b[i] + 1

    for body, words in ((call_extern, "rand"), (while_loop, "while loop")):
        remarks = build(parallel_loop(body, "int32"))[1]
        assert len(remarks) == 1 and SERIAL in remarks[0] and words in remarks[0], remarks


# ------------------------------------------------------------ loops left alone

INDEPENDENT = {
    "elementwise": lambda ib, i, s, a, b: b.__setitem__(i, a[i] + 1),
    "shifted read of another buffer": lambda ib, i, s, a, b: b.__setitem__(i + 1, a[i] * 2),
    "write then read in one iteration": lambda ib, i, s, a, b: [
        b.__setitem__(i, a[i]), b.__setitem__(i, b[i] + 1)],
    "reads only": lambda ib, i, s, a, b: b.__setitem__(i, s[0] + s[1] + a[i]),
}


@pytest.mark.parametrize("name", sorted(INDEPENDENT))
def test_independent_iterations_stay_parallel_without_a_remark(name):
    func = parallel_loop(INDEPENDENT[name], "int32")
    out = transform.LegalizeParallelLoops()(tir.IRModule.from_expr(func))["main"]
    assert out is func
    analysis = analyze_parallel_loop(func.body, tir.arith.Analyzer())
    assert analysis.independent, [c.describe() for c in analysis.conflicts]


def test_the_user_promise_skips_the_check():
    func = parallel_loop(lambda ib, i, s, a, b: s.__setitem__(0, a[i]), "int32",
                         annotations={ASSUME_INDEPENDENT: True})
    assert transform.LegalizeParallelLoops()(tir.IRModule.from_expr(func))["main"] is func


def test_blocks_parallelized_by_a_schedule_keep_their_parallel_loops():
    """rfactor + parallel: the partial results of a schedule are indexed by the parallel
    loop, so no conflict; the full sum is correct at any thread count."""
    from tir import te

    n = 100_003
    A = te.placeholder((n,), name="A")
    k = te.reduce_axis((0, n), name="k")
    B = te.compute((1,), lambda _: te.sum(A[k], axis=k), name="B")
    sch = tir.Schedule(te.create_prim_func([A, B]))
    _, kk = sch.get_loops(sch.get_block("B"))
    ko, _ = sch.split(kk, [4, None])
    rf = sch.rfactor(ko, 0)
    sch.parallel(sch.get_loops(rf)[1])
    mod, remarks = build(sch.mod)
    assert remarks == []
    assert "T.parallel" in str(codegen.lower(sch.mod))
    a = np.random.default_rng(0).random(n).astype("float32")
    for threads in THREADS:
        b = np.zeros(1, "float32")
        with codegen.num_threads(threads):
            mod(a, b)
        np.testing.assert_allclose(b[0], a.sum(dtype="float64"), rtol=1e-5)



def fused(write_row_only: bool):
    """for v in parallel(rows * 80): B[v // 80, v % 80 or 0] = A[v // 80, v % 80] + 1."""
    rows = tir.size_var("rows")
    A = tir.decl_buffer((rows, 80), "int32", "A")
    B = tir.decl_buffer((rows, 80), "int32", "B")
    ib = ir_builder.create()
    a, b = ib.buffer_ptr(A), ib.buffer_ptr(B)
    with ib.for_range(0, rows * 80, kind="parallel", name="v") as v:
        col = tir.const(0) if write_row_only else tir.floormod(v, 80)
        b[tir.floordiv(v, 80), col] = a[tir.floordiv(v, 80), tir.floormod(v, 80)] + 1
    return tir.PrimFunc([A, B], ib.get())


def test_a_fused_loop_indexed_by_its_quotient_and_remainder_stays_parallel():
    """v // 80 and v % 80 (what fuse leaves): independent when the pair is injective."""
    func = fused(write_row_only=False)
    assert transform.LegalizeParallelLoops()(tir.IRModule.from_expr(func))["main"] is func
    serial_func = fused(write_row_only=True)  # every column of a row writes B[row, 0]
    mod, remarks = build(serial_func)
    assert len(remarks) == 1 and SERIAL in remarks[0], remarks
    a = np.arange(3 * 80, dtype="int32").reshape(3, 80)
    got, want = np.zeros_like(a), np.zeros_like(a)
    with codegen.num_threads(4):
        mod(a, got)
    build_interpreter(serial_func)(a, want)
    np.testing.assert_array_equal(got, want)
