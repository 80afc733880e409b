"""Lesson 4: tails, conditionals and reductions -- one vectorized loop, the build does the rest.

Lesson 3 wrote every split, tail and partial sum by hand. ``codegen.build``'s
pipeline now does that work for a loop written the short way,
``ib.for_range(0, n, kind="vectorize")``, and says in its remarks what it did:

1. tails: a loop of any extent becomes register-wide vectors plus one masked
   last vector (``StripMineVectorLoops``); ``tir.vector_length`` picks the width;
2. conditionals: an ``if`` on the loop var becomes masked stores, masked
   loads and selects (``IfConvertVectorLoops``), and a load in a branch not
   taken never touches memory;
3. reductions: ``s[0] = s[0] + a[i]`` becomes vector accumulators and one
   horizontal reduction (``VectorizeReductions``), the index of the maximum
   too; float sums are reassociated, and ``tir.vectorize.ordered_reductions``
   keeps the serial order;
4. what stays serial (a prefix sum, a histogram), and TVM's own output, which
   ``transform.VectorizeLoop()`` run alone still gives.

Every kernel is checked against NumPy and against the same program built
serially (config ``tir.disable_vectorize``). Lane counts come from this
machine's vector registers, so the lesson runs the same on AVX2 or AVX-512.

Run it with ``python tutorials/04_tails_conditionals_reductions.py``.
"""

import numpy as np

import codegen
import tir
import transform
from tir import ir_builder

HOST = codegen.Target("llvm")
LANES = HOST.vector_width_bits // 32  # float32 lanes in one of this machine's registers
F32 = "float32"
RNG = np.random.default_rng(0)
SERIAL = {"tir.disable_vectorize": True}


def f32(value: float) -> tir.PrimExpr:
    return tir.const(value, F32)


def build(func: tir.PrimFunc, config: dict | None = None):
    """``codegen.build`` under ``config``; the module keeps its remarks (``.remarks``)."""
    with transform.PassContext(config=config or {}):
        return codegen.build(func)


def loop_remarks(module) -> list:
    """The vectorizer's one-line-per-loop remarks (other passes add their own kinds)."""
    return [r for r in module.remarks if isinstance(r, transform.VectorizeRemark)]


def show(module) -> None:
    for remark in module.remarks:
        print("  remark:", remark)


# ---------------------------------------------------------------- 1. tails


def build_saxpy(annotations: dict | None = None) -> tir.PrimFunc:
    """z[i] = alpha * x[i] + y[i] for i < n: one loop, n known only at run time."""
    n = tir.size_var("n")
    X, Y, Z = (tir.decl_buffer((n,), F32, name=name) for name in "XYZ")
    alpha = tir.var("alpha", F32)
    ib = ir_builder.create()
    x, y, z = (ib.buffer_ptr(b) for b in (X, Y, Z))
    with ib.for_range(0, n, kind="vectorize", name="i", annotations=annotations) as i:
        z[i] = alpha * x[i] + y[i]
    return tir.PrimFunc([alpha, X, Y, Z], ib.get())


def tails() -> None:
    # TVM's VectorizeLoop needs a constant extent. The build first strip-mines the
    # loop: a serial loop of full LANES-wide vectors, then ONE guarded last
    # vector whose loads and stores are masked (llvm.masked.load/store), so no
    # scalar loop is left and nothing past z[n - 1] is touched.
    print("=== 1. tails: one loop of any extent ===")
    lib = build(build_saxpy())
    show(lib)
    [remark] = loop_remarks(lib)  # one remark for the one loop written: the tail folds into it
    assert remark.outcome == "vectorized" and "predicated tail" in remark.line, remark
    assert "llvm.masked.store" in lib.get_source("ll")
    for n in (0, 1, LANES - 1, LANES, 3 * LANES + 5, 100_003):
        x, y = RNG.standard_normal(n, dtype=np.float32), RNG.standard_normal(n, dtype=np.float32)
        z = np.empty_like(x)
        lib["main"](np.float32(2), x, y, z)
        np.testing.assert_allclose(z, 2 * x + y, rtol=1e-6)

    # The vector length comes from the target's widest register; the loop
    # annotation tir.vector_length chooses another (a power of two).
    lib8 = build(build_saxpy({"tir.vector_length": 8}))
    assert "strip-mined by 8" in loop_remarks(lib8)[0].line
    print("  with tir.vector_length = 8:", loop_remarks(lib8)[0])


# ---------------------------------------------------------------- 2. conditionals


def build_rectify() -> tir.PrimFunc:
    """b[i] = sqrt(a[i]) where a[i] > 0, else -a[i] (an if/else on data)."""
    n = tir.size_var("n")
    A, B = (tir.decl_buffer((n,), F32, name=name) for name in "AB")
    ib = ir_builder.create()
    a, b = ib.buffer_ptr(A), ib.buffer_ptr(B)
    with ib.for_range(0, n, kind="vectorize", name="i") as i:
        with ib.if_scope(a[i] > f32(0)):
            b[i] = tir.sqrt(a[i])
        with ib.else_scope():
            b[i] = -a[i]
    return tir.PrimFunc([A, B], ib.get())


def build_copy_prefix() -> tir.PrimFunc:
    """out[i] = src[i] for i < m, else 0: src has only m elements (m <= n)."""
    n, m = tir.size_var("n"), tir.size_var("m")
    src = tir.decl_buffer((m,), F32, name="src")
    out = tir.decl_buffer((n,), F32, name="out")
    ib = ir_builder.create()
    s, o = ib.buffer_ptr(src), ib.buffer_ptr(out)
    with ib.for_range(0, n, kind="vectorize", name="i") as i:
        with ib.if_scope(i < m):
            o[i] = s[i]  # src[i] exists only when i < m: the load must be masked
        with ib.else_scope():
            o[i] = f32(0)
    return tir.PrimFunc([src, out], ib.get())


def conditionals() -> None:
    # TVM keeps an if on the loop var in a serial loop ("scalarized"). The
    # build's IfConvertVectorLoops pass, run before VectorizeLoop, removes it:
    # both branches store to b[i], so the if becomes b[i] = Select(c, x, y),
    # each side's loads masked by its side of the condition.
    print("=== 2. conditionals: if-conversion ===")
    lib = build(build_rectify())
    show(lib)
    assert all(r.outcome != "scalarized" for r in loop_remarks(lib))
    a = RNG.standard_normal(1000, dtype=np.float32)
    a[:4] = [np.nan, -0.0, np.inf, -np.inf]
    got, want = np.empty_like(a), np.empty_like(a)
    lib["main"](a, got)
    build(build_rectify(), SERIAL)["main"](a, want)
    np.testing.assert_array_equal(got, want)  # NaN, -0.0 and inf included, bit for bit

    # The branch not taken must not read memory the serial program would not
    # read: src[i] for i >= m lies past the end of src. The load becomes a
    # masked load (lanes with i >= m read nothing), and the bound checker,
    # on by default, would stop any lane that did read past the end.
    lib = build(build_copy_prefix())
    show(lib)
    assert "llvm.masked.load" in lib.get_source("ll")
    src = RNG.standard_normal(37, dtype=np.float32)
    out = np.full(100, np.nan, np.float32)
    lib["main"](src, out)
    np.testing.assert_array_equal(out, np.concatenate([src, np.zeros(63, np.float32)]))

    # VectorizeLoop run alone is TVM's pass, output included: the if stays
    # serial. The beyond-TVM forms come only from the passes build adds.
    func = build_saxpy_guarded()
    with transform.collect_remarks() as remarks:
        transform.VectorizeLoop()(tir.IRModule.from_expr(func))
    print("  VectorizeLoop alone:", remarks[0])
    assert remarks[0].outcome == "scalarized"


def build_saxpy_guarded() -> tir.PrimFunc:
    """A fixed-width loop with an if on its var: what TVM's test_vectorize_with_if has."""
    A = tir.decl_buffer((LANES,), F32, name="A")
    ib = ir_builder.create()
    a = ib.buffer_ptr(A)
    with ib.for_range(0, LANES, kind="vectorize", name="i") as i:
        with ib.if_scope(a[i] > f32(0)):
            a[i] = a[i] * f32(2)
    return tir.PrimFunc([A], ib.get())


# ---------------------------------------------------------------- 3. reductions


def build_reduction(update, init, outputs=(("S", F32),)) -> tir.PrimFunc:
    """``init`` the one-element outputs, then ``update(ib, i, a, *outputs)`` for i < n."""
    n = tir.size_var("n")
    A = tir.decl_buffer((n,), F32, name="A")
    outs = [tir.decl_buffer((1,), dtype, name=name) for name, dtype in outputs]
    ib = ir_builder.create()
    ptrs = [ib.buffer_ptr(b) for b in [A, *outs]]
    for ptr, value in zip(ptrs[1:], init):
        ptr[0] = value
    with ib.for_range(0, n, kind="vectorize", name="i") as i:
        update(ib, i, *ptrs)
    return tir.PrimFunc([A, *outs], ib.get())


def add(ib, i, a, s):
    s[0] = s[0] + a[i]


def maximum(ib, i, a, s):
    s[0] = tir.max(s[0], a[i])


def argmax(ib, i, a, m, k):
    with ib.if_scope(a[i] > m[0]):  # strictly greater: the first index of the maximum
        m[0] = a[i]
        k[0] = i


def reductions() -> None:
    # s[0] = s[0] + a[i] carries s from each iteration to the next, so the
    # legality check alone must keep it serial. VectorizeReductions recognizes
    # the shape (s not read anywhere else, + associative) and rewrites it into
    # vector accumulators in registers and one horizontal sum after the loop.
    print("=== 3. reductions ===")
    a = RNG.standard_normal(100_003, dtype=np.float32)
    s = np.zeros(1, np.float32)
    total = build_reduction(add, [f32(0)])
    lib = build(total)
    show(lib)
    assert any("reassociated" in str(r) for r in lib.remarks)
    lib["main"](a, s)
    # Adding in another order rounds differently: compare within a bound.
    assert abs(s[0] - a.sum(dtype=np.float64)) <= 1e-6 * len(a) * np.abs(a).sum()

    # Marking a float sum vectorized permits that reassociation (OpenMP's simd
    # reduction does the same). To keep the serial order -- bit for bit what the
    # serial build gives -- set tir.vectorize.ordered_reductions.
    ordered = {"tir.vectorize.ordered_reductions": True}
    s_ordered, s_serial = np.zeros(1, np.float32), np.zeros(1, np.float32)
    build(total, ordered)["main"](a, s_ordered)
    build(total, SERIAL)["main"](a, s_serial)
    assert s_ordered.tobytes() == s_serial.tobytes()
    print(f"  sum: reassociated {s[0]!r}, ordered {s_ordered[0]!r} (= serial {s_serial[0]!r})")

    # min and max propagate NaN and order -0.0 < +0.0 (IEEE 754-2019), which
    # makes them exact in any order: no tolerance needed.
    a[1234] = 1e30
    build(build_reduction(maximum, [f32(-np.inf)]))["main"](a, s)
    assert s[0] == a.max()

    # The index of the maximum: per lane a running max and its index, combined
    # after the loop so the FIRST maximal index wins, as in the serial loop.
    a[77] = 1e30  # a tie: the serial loop keeps 77, not 1234
    m, k = np.zeros(1, np.float32), np.zeros(1, np.int32)
    lib = build(build_reduction(argmax, [f32(-np.inf), tir.const(0, "int32")],
                                (("M", F32), ("K", "int32"))))
    show(lib)
    lib["main"](a, m, k)
    assert (m[0], k[0]) == (np.float32(1e30), 77)


# ---------------------------------------------------------------- 4. what stays serial


def build_histogram() -> tir.PrimFunc:
    """h[x[i]] += 1: two lanes may hit the same bin."""
    n = tir.size_var("n")
    X = tir.decl_buffer((n,), "int32", name="X")
    H = tir.decl_buffer((16,), "int32", name="H")
    ib = ir_builder.create()
    x, h = ib.buffer_ptr(X), ib.buffer_ptr(H)
    with ib.for_range(0, n, kind="vectorize", name="i") as i:
        h[x[i]] = h[x[i]] + 1
    return tir.PrimFunc([X, H], ib.get())


def stays_serial() -> None:
    # Not every loop marked vectorize can be: a histogram's index depends on
    # data, so two lanes may update one bin. The loop runs serially, correct,
    # and the remarks say why.
    print("=== 4. what stays serial ===")
    lib = build(build_histogram())
    show(lib)
    assert any(r.outcome in ("not vectorized", "scalarized", "partially vectorized")
               for r in loop_remarks(lib))
    x = RNG.integers(0, 16, 5000).astype(np.int32)
    h = np.zeros(16, np.int32)
    lib["main"](x, h)
    np.testing.assert_array_equal(h, np.bincount(x, minlength=16))


def main() -> None:
    tails()
    conditionals()
    reductions()
    stays_serial()
    print("lesson 4: every kernel matched NumPy and its serial build")


if __name__ == "__main__":
    main()
