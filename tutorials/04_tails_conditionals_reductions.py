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
   ``transform.VectorizeLoop()`` run alone still gives;
5. whole kernels -- softmax, layernorm, a depthwise convolution: one remark per
   loop you wrote, in your names, with a hint where an annotation would help.

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


# ---------------------------------------------------------------- 5. whole kernels


def build_softmax() -> tir.PrimFunc:
    """y = exp(x - max(x)) / sum(exp(x - max(x))) over a row of n: three loops."""
    n = tir.size_var("n")
    X, Y = (tir.decl_buffer((n,), F32, name=name) for name in "XY")
    ib = ir_builder.create()
    x, y = ib.buffer_ptr(X), ib.buffer_ptr(Y)
    m, s = ib.allocate(F32, (1,), name="m"), ib.allocate(F32, (1,), name="s")
    m[0], s[0] = f32(-np.inf), f32(0)
    with ib.for_range(0, n, kind="vectorize", name="i") as i:
        m[0] = tir.max(m[0], x[i])
    with ib.for_range(0, n, kind="vectorize", name="j") as j:
        y[j] = tir.exp(x[j] - m[0])
        s[0] = s[0] + y[j]
    with ib.for_range(0, n, kind="vectorize", name="k") as k:
        y[k] = y[k] / s[0]
    return tir.PrimFunc([X, Y], ib.get())


def build_layernorm() -> tir.PrimFunc:
    """y = (x - mean) / sqrt(variance + 1e-5) * g + b over a row of n: three loops."""
    n = tir.size_var("n")
    X, G, B, Y = (tir.decl_buffer((n,), F32, name=name) for name in "XGBY")
    ib = ir_builder.create()
    x, g, b, y = (ib.buffer_ptr(buf) for buf in (X, G, B, Y))
    s, q = ib.allocate(F32, (1,), name="s"), ib.allocate(F32, (1,), name="q")
    s[0], q[0] = f32(0), f32(0)
    with ib.for_range(0, n, kind="vectorize", name="i") as i:
        s[0] = s[0] + x[i]
    mean = ib.let("mean", s[0] / tir.Cast(F32, n))
    with ib.for_range(0, n, kind="vectorize", name="j") as j:
        q[0] = q[0] + (x[j] - mean) * (x[j] - mean)
    rstd = ib.let("rstd", f32(1) / tir.sqrt(q[0] / tir.Cast(F32, n) + f32(1e-5)))
    with ib.for_range(0, n, kind="vectorize", name="k") as k:
        y[k] = (x[k] - mean) * rstd * g[k] + b[k]
    return tir.PrimFunc([X, G, B, Y], ib.get())


def build_depthwise(channels: int = 4, rows: int = 6) -> tir.PrimFunc:
    """out[c, r, x] = sum of w[c, dr, dx] * img[c, r + dr, x + dx] over a 3x3 window per
    channel: int8 pixels and weights, int32 sums; an image row is ``width`` wide."""
    width = tir.size_var("width")
    IMG = tir.decl_buffer((channels, rows + 2, width), "int8", name="img")
    WGT = tir.decl_buffer((channels, 3, 3), "int8", name="wgt")
    OUT = tir.decl_buffer((channels, rows, width - 2), "int32", name="out")
    ib = ir_builder.create()
    img, wgt, out = (ib.buffer_ptr(buf) for buf in (IMG, WGT, OUT))
    with ib.for_range(0, channels, name="c") as c, ib.for_range(0, rows, name="r") as r:
        with ib.for_range(0, width - 2, kind="vectorize", name="x") as x:
            terms = [tir.Cast("int32", img[c, r + dr, x + dx]) * tir.Cast("int32", wgt[c, dr, dx])
                     for dr in range(3) for dx in range(3)]
            out[c, r, x] = sum(terms[1:], terms[0])
    return tir.PrimFunc([IMG, WGT, OUT], ib.get())


def vectorized_loops(func: tir.PrimFunc) -> int:
    """How many loops of ``func`` are marked vectorize."""
    found = []
    tir.stmt_functor.post_order_visit(
        func.body, lambda n: found.append(n) if isinstance(n, tir.For)
        and n.kind == tir.ForKind.VECTORIZED else None)
    return len(found)


def whole_kernels() -> None:
    # Behind each loop the build makes several: full vectors, a masked tail, a
    # reduction's accumulators. Its remarks still come one per loop you wrote,
    # in your loop and buffer names, with the copies' stories as details.
    print("=== 5. whole kernels: one remark per loop ===")
    x = RNG.standard_normal(1003, dtype=np.float32)
    lib = build(build_softmax())
    show(lib)
    assert len(loop_remarks(lib)) == vectorized_loops(build_softmax()) == 3
    y = np.empty_like(x)
    lib["main"](x, y)
    e = np.exp(x - x.max())
    np.testing.assert_allclose(y, e / e.sum(), rtol=1e-5, atol=1e-7)

    lib = build(build_layernorm())
    show(lib)
    assert len(loop_remarks(lib)) == vectorized_loops(build_layernorm())
    g, b = RNG.standard_normal(1003, dtype=np.float32), RNG.standard_normal(1003, dtype=np.float32)
    lib["main"](x, g, b, y)
    want = (x - x.mean()) / np.sqrt(x.var() + 1e-5) * g + b
    np.testing.assert_allclose(y, want, rtol=1e-4, atol=1e-4)

    # int8 pixels, int32 sums: the vector length follows the int8 loads, so each
    # load fills a register, and the int32 sums span four registers (the remark
    # says so). Sized by int32 instead, each load would fill a quarter of one.
    func = build_depthwise()
    lib = build(func)
    show(lib)
    [remark] = loop_remarks(lib)
    assert "int8 loads, 4 registers of int32" in remark.reason, remark
    img = RNG.integers(-128, 128, (4, 8, 37 + 2), dtype=np.int8)
    wgt = RNG.integers(-128, 128, (4, 3, 3), dtype=np.int8)
    out = np.empty((4, 6, 37), np.int32)
    lib["main"](img, wgt, out)
    windows = np.lib.stride_tricks.sliding_window_view(img.astype(np.int32), (3, 3), (1, 2))
    np.testing.assert_array_equal(out, np.einsum("crxij,cij->crx", windows, wgt.astype(np.int32)))


def main() -> None:
    tails()
    conditionals()
    reductions()
    stays_serial()
    whole_kernels()
    print("lesson 4: every kernel matched NumPy and its serial build")


if __name__ == "__main__":
    main()
