"""Lesson 3: a kernel writer's guide -- the tools for writing fast loops by hand.

Lessons 1 and 2 showed one vectorized loop and how the pass rewrites it. Real
kernels need more, and this lesson goes through it one small kernel at a time,
each built with the ir_builder, compiled with ``codegen.build``, run on NumPy
arrays and checked against NumPy:

1. reading the vectorizer's remarks: which loops became vector code, which
   stayed serial and why, and ``tir.vectorize.assume_independent``;
2. a reduction written as partial sums in an ``allocate``d accumulator;
3. ``ib.let``: naming a value once (it becomes a vector let);
4. ``tir.fma``: multiply-add with a single rounding, and the default FMA
   contraction of ``a * b + c`` (config ``codegen.llvm.fp_contract``);
5. register blocking: a matmul block whose accumulators stay in registers;
6. explicit ``Ramp`` and ``Shuffle``: vector code with no vectorized loop;
7. reading the assembly for this machine's vector registers;
8. strided and interleaved data (complex numbers): contiguous loads and
   shuffles, no gathers, and what to look for in the IR.

Lane counts come from this machine (``<8 x float>`` on AVX2, ``<16 x float>``
on AVX-512), so the lesson runs the same on either.

Run it with ``python tutorials/03_kernel_writers_guide.py``.
"""

import numpy as np

import codegen
import tir
import transform
from tir import ir_builder
from tir.expr import BufferLoad, Ramp, Shuffle
from tir.functor import post_order_visit
from tir.stmt import BufferStore, For, ForKind

HOST = codegen.Target("llvm")  # this machine's CPU and features, as LLVM sees them
LANES = HOST.vector_width_bits // 32  # float32 lanes filling one of its vector registers
F32 = "float32"
RNG = np.random.default_rng(0)


def f32(value: float) -> tir.PrimExpr:
    """A float32 constant: a store must match its buffer's dtype, and ours hold float32."""
    return tir.const(value, F32)


def vectorize_with_remarks(func: tir.PrimFunc) -> tuple[tir.PrimFunc, list]:
    """Run VectorizeLoop on ``func``; returns the new function and the remarks it made."""
    with transform.collect_remarks() as remarks:
        out = transform.VectorizeLoop()(tir.IRModule.from_expr(func))
    return out["main"], remarks


def loop_kinds(func: tir.PrimFunc) -> list[ForKind]:
    """The kinds of the loops left in ``func`` (a loop turned into vector code is gone)."""
    kinds = []
    post_order_visit(func.body, lambda node: isinstance(node, For) and kinds.append(node.kind))
    return kinds


# ---------------------------------------------------------------- 1. remarks


def build_prefix_sum() -> tir.PrimFunc:
    """B[i] = A[0] + ... + A[i]: every iteration reads the running sum the last one wrote."""
    A = tir.decl_buffer((LANES,), F32, name="A")
    B = tir.decl_buffer((LANES,), F32, name="B")
    ib = ir_builder.create()
    a, b = ib.buffer_ptr(A), ib.buffer_ptr(B)
    s = ib.allocate(F32, (1,), name="s")
    s[0] = f32(0)
    with ib.for_range(0, LANES, kind="vectorize", name="i") as i:
        s[0] = s[0] + a[i]
        b[i] = s[0]
    return tir.PrimFunc([A, B], ib.get())


def build_shifted_double(annotations: dict | None = None) -> tir.PrimFunc:
    """A[i + k] = 2 * A[i]: independent when k >= LANES, which only the caller knows."""
    n = tir.size_var("n")
    A = tir.decl_buffer((n,), F32, name="A")
    k = tir.var("k")
    ib = ir_builder.create()
    a = ib.buffer_ptr(A)
    with ib.for_range(0, LANES, kind="vectorize", name="i", annotations=annotations) as i:
        a[i + k] = a[i] * f32(2)
    return tir.PrimFunc([A, k], ib.get())


def reading_remarks() -> None:
    """One loop the vectorizer keeps serial, one it trusts the user on."""
    # A loop marked vectorize is only a request: the pass first checks that
    # running all lanes at once computes what the serial loop computes. A
    # prefix sum fails that check -- lane i needs the sum lane i - 1 just
    # stored in s[0] -- so the loop stays serial and the remark names why.
    print("=== 1. remarks: a prefix sum stays serial ===")
    func, [remark] = vectorize_with_remarks(build_prefix_sum())
    print("remark:", remark)
    assert remark.outcome == "not vectorized" and "s[0] is read and written" in remark.reason
    assert loop_kinds(func) == [ForKind.SERIAL]

    # It still runs, and serially it is exact: the same additions in the same order.
    a = RNG.standard_normal(LANES, dtype=np.float32)
    b = np.empty_like(a)
    lib = codegen.build(build_prefix_sum())
    lib["main"](a, b)
    np.testing.assert_array_equal(b, np.cumsum(a, dtype=np.float32))

    # A[i + k] = 2 * A[i] overlaps itself for 0 < k < LANES, and k is only known
    # at run time, so the check must say no. A caller who always passes
    # k >= LANES can promise independence with the loop annotation -- the remark's
    # hint names it, since the dependence depends on a value the pass cannot know;
    # the pass then skips the check and says so. The promise is unchecked: break it
    # and the vector code silently computes something else.
    print("=== 1. remarks: the same loop, with and without the user's promise ===")
    promise = {"tir.vectorize.assume_independent": True}
    outcomes = []
    for annotations in (None, promise):
        lib = codegen.build(build_shifted_double(annotations))  # lib.remarks: the build's
        [remark] = lib.remarks
        print("remark:", remark)
        outcomes.append(remark.outcome)
        assert ("tir.vectorize.assume_independent" in remark.hint) == (annotations is None)
        x = np.arange(2 * LANES, dtype=np.float32)
        lib["main"](x, np.int32(LANES))  # k = LANES: the promise holds
        np.testing.assert_array_equal(x[LANES:], 2 * x[:LANES])
    assert outcomes == ["not vectorized", "vectorized"]
    assert "assume_independent" in remark.reason


# ---------------------------------------------------------------- 2. partial sums


def build_partial_sum(chunks: int) -> tir.PrimFunc:
    """out[0] = sum(A) over chunks * LANES floats, as LANES partial sums."""
    A = tir.decl_buffer((chunks * LANES,), F32, name="A")
    out = tir.decl_buffer((1,), F32, name="out")
    ib = ir_builder.create()
    a, o = ib.buffer_ptr(A), ib.buffer_ptr(out)
    # The accumulator lives outside the vectorized loop: one partial sum per
    # lane. Allocated memory is not zeroed, so we clear it first.
    acc = ib.allocate(F32, (LANES,), name="acc")
    with ib.for_range(0, LANES, kind="vectorize", name="j") as j:
        acc[j] = f32(0)
    # Lane j adds elements j, j + LANES, j + 2 LANES, ...: each lane reads and
    # writes only its own acc[j], so the lanes are independent -- unlike
    # s[0] += a[i], where every lane reads what the previous one wrote.
    with ib.for_range(0, chunks, name="io") as io:
        with ib.for_range(0, LANES, kind="vectorize", name="j") as j:
            acc[j] = acc[j] + a[io * LANES + j]
    # LANES partials left: a short serial loop adds them up.
    o[0] = f32(0)
    with ib.for_range(0, LANES, name="j") as j:
        o[0] = o[0] + acc[j]
    return tir.PrimFunc([A, out], ib.get())


def partial_sum_reduction() -> None:
    """A vectorized sum, and why its result differs from the serial sum in the last bits."""
    chunks = 64
    func, remarks = vectorize_with_remarks(build_partial_sum(chunks))
    print("=== 2. a sum as partial sums: the accumulator loop vectorizes ===")
    for remark in remarks:
        print("remark:", remark)
    assert [r.outcome for r in remarks] == ["vectorized", "vectorized"]

    a = RNG.standard_normal(chunks * LANES, dtype=np.float32)
    out = np.zeros(1, dtype=np.float32)
    codegen.build(build_partial_sum(chunks))["main"](a, out)

    # The same additions in the same order in NumPy: rows added one by one give
    # the LANES partials, then a left-to-right sum of those. Same order, same
    # float32 roundings: the results agree exactly.
    partials = np.zeros(LANES, dtype=np.float32)
    for row in a.reshape(chunks, LANES):
        partials += row
    same_order = np.float32(0)
    for p in partials:
        same_order += p
    assert out[0] == same_order
    # Against the serial float32 sum a[0] + a[1] + ... it may differ in the last
    # bits: float addition is not associative, and the partial sums round at
    # different points. Neither order gives the exact sum; both are within
    # about n * 2**-24 times the sum of |a| of it (n float32 additions, each
    # rounding by at most 2**-24 relative), so that is what we assert.
    exact = a.astype(np.float64).sum()
    bound = a.size * 2.0**-24 * np.abs(a).astype(np.float64).sum()
    print(f"sum of {a.size} floats: {out[0]:.9g} (exact: {exact:.9g}, serial float32: "
          f"{np.cumsum(a)[-1]:.9g})")
    np.testing.assert_allclose(out[0], exact, rtol=0, atol=bound)


# ---------------------------------------------------------------- 3. let


def build_let(n: int) -> tir.PrimFunc:
    """B[i] = x * x + x with x = 0.5 * A[i] named once by a let."""
    A = tir.decl_buffer((n, LANES), F32, name="A")
    B = tir.decl_buffer((n, LANES), F32, name="B")
    ib = ir_builder.create()
    a, b = ib.buffer_ptr(A), ib.buffer_ptr(B)
    with ib.for_range(0, n, name="i") as i:
        with ib.for_range(0, LANES, kind="vectorize", name="j") as j:
            x = ib.let("x", a[i, j] * f32(0.5))  # computed once, used three times
            b[i, j] = x * x + x
    return tir.PrimFunc([A, B], ib.get())


def let_bindings() -> None:
    """A let inside a vectorized loop becomes a let of a vector."""
    n = 4
    func, _ = vectorize_with_remarks(build_let(n))
    print(f"=== 3. let: after VectorizeLoop, x is a float32x{LANES} ===")
    print(func)
    let = func.body.body
    assert isinstance(let, tir.LetStmt) and let.var.dtype == f"float32x{LANES}"

    a = RNG.standard_normal((n, LANES), dtype=np.float32)
    b = np.empty_like(a)
    # Strict floating point: the same float32 operations in the same order as
    # NumPy's, each rounded, so the result is exact. (By default LLVM may fuse
    # x * x + x into one FMA; section 4 shows that.)
    with transform.PassContext(config={"codegen.llvm.fp_contract": False}):
        codegen.build(build_let(n))["main"](a, b)
    x = a * np.float32(0.5)
    np.testing.assert_array_equal(b, x * x + x)


# ---------------------------------------------------------------- 4. fma


def build_fma(n: int, fused: bool = True) -> tir.PrimFunc:
    """D = A * B + C: ``tir.fma`` (fused), or a product and a sum."""
    bufs = [tir.decl_buffer((n, LANES), F32, name=name) for name in "ABCD"]
    ib = ir_builder.create()
    a, b, c, d = (ib.buffer_ptr(buf) for buf in bufs)
    with ib.for_range(0, n, name="i") as i:
        with ib.for_range(0, LANES, kind="vectorize", name="j") as j:
            x, y, z = a[i, j], b[i, j], c[i, j]
            d[i, j] = tir.fma(x, y, z) if fused else x * y + z
    return tir.PrimFunc(bufs, ib.get())


def fused_multiply_add() -> None:
    """tir.fma is llvm.fma: one rounding instead of two."""
    n = 64
    lib = codegen.build(build_fma(n))
    fma_lines = [line.strip() for line in lib.get_source("ll").splitlines() if "llvm.fma" in line]
    print("=== 4. fma: the LLVM IR calls llvm.fma on vectors ===")
    print("\n".join(fma_lines[:3]))
    assert any(f"<{LANES} x float>" in line for line in fma_lines)

    a, b, c = (RNG.standard_normal((n, LANES), dtype=np.float32) for _ in range(3))
    d = np.empty_like(a)
    lib["main"](a, b, c, d)
    # a * b + c rounds the product to float32, then the sum; fma rounds only the
    # final result. In float64 the product of two float32s is exact, so
    # float64(a) * b + c is the true result rounded once to 53 bits; rounding
    # that to float32 can still differ from fma's single rounding by one unit
    # in the last place (double rounding), so we allow 1 ulp, not exactness.
    exact = (a.astype(np.float64) * b + c).astype(np.float32)
    np.testing.assert_allclose(d, exact, rtol=2.0**-23, atol=0)
    unfused = a * b + c
    print(f"{np.count_nonzero(d != unfused)} of {d.size} results differ from unfused "
          f"float32 a * b + c; {np.count_nonzero(d != exact)} from the float64 reference")
    contraction(a, b, c, exact, unfused)


def contraction(a, b, c, exact, unfused) -> None:
    """By default ``a * b + c`` may become an FMA too; strict mode rounds twice."""
    # codegen.llvm.fp_contract (default True) puts LLVM's `contract` flag on
    # float multiplies, adds and subtracts -- no other fast-math freedom -- so on
    # a CPU with FMA the product and the sum fuse, as TVM and clang do. Which
    # ones fuse is LLVM's choice: where bit-exact results matter (comparing
    # with the interpreter, or the vectorized build with the serial one),
    # build with the key set to False.
    func = build_fma(a.shape[0], fused=False)
    d = np.empty_like(a)
    lib = codegen.build(func)
    lib["main"](a, b, c, d)
    np.testing.assert_allclose(d, exact, rtol=2.0**-23, atol=0)
    with transform.PassContext(config={"codegen.llvm.fp_contract": False}):
        strict = codegen.build(func)
    strict["main"](a, b, c, d)
    np.testing.assert_array_equal(d, unfused)
    fused = lib.get_source("asm").count("vfmadd")
    if "+fma" in HOST.features.split(","):  # a CPU without FMA keeps the multiply and the add apart
        assert fused, "the default build should fuse a * b + c on this CPU"
    print(f"a * b + c: the default build has {fused} vfmadd instructions; the strict build "
          "equals NumPy's unfused result bit for bit")


# ---------------------------------------------------------------- 5. register blocking

ROWS = 4  # rows per block: ROWS vector accumulators stay live in registers


def build_matmul(m: int, k: int, n: int) -> tir.PrimFunc:
    """C = A @ B, in blocks of ROWS rows by one vector of LANES columns."""
    A = tir.decl_buffer((m, k), F32, name="A")
    B = tir.decl_buffer((k, n), F32, name="B")
    C = tir.decl_buffer((m, n), F32, name="C")
    ib = ir_builder.create()
    a, b, c = ib.buffer_ptr(A), ib.buffer_ptr(B), ib.buffer_ptr(C)
    with ib.for_range(0, m // ROWS, name="io") as io, ib.for_range(0, n // LANES, name="jo") as jo:
        # ROWS x LANES partial results. Unrolling r gives ROWS separate vector
        # accumulators; each step of kk loads one vector of B and uses it ROWS
        # times, broadcasting one A element per row. LLVM promotes acc to
        # registers: in the asm (read as in section 7) the kk loop holds the
        # ROWS accumulators in ROWS vector registers and never stores them.
        acc = ib.allocate(F32, (ROWS, LANES), name="acc")
        with ib.for_range(0, ROWS, kind="unroll", name="r") as r:
            with ib.for_range(0, LANES, kind="vectorize", name="j") as j:
                acc[r, j] = f32(0)
        with ib.for_range(0, k, name="kk") as kk:
            with ib.for_range(0, ROWS, kind="unroll", name="r") as r:
                with ib.for_range(0, LANES, kind="vectorize", name="j") as j:
                    acc[r, j] = acc[r, j] + a[io * ROWS + r, kk] * b[kk, jo * LANES + j]
        with ib.for_range(0, ROWS, kind="unroll", name="r") as r:
            with ib.for_range(0, LANES, kind="vectorize", name="j") as j:
                c[io * ROWS + r, jo * LANES + j] = acc[r, j]
    return tir.PrimFunc([A, B, C], ib.get())


def register_blocking() -> None:
    """A small matmul, ROWS x LANES outputs per block."""
    m, k, n = 2 * ROWS, 32, 2 * LANES
    lib = codegen.build(build_matmul(m, k, n))
    print(f"=== 5. register blocking: {ROWS} rows x {LANES} columns per block ===")
    for remark in lib.remarks:
        print("remark:", remark)
    assert all(r.outcome == "vectorized" for r in lib.remarks)

    a = RNG.standard_normal((m, k), dtype=np.float32)
    b = RNG.standard_normal((k, n), dtype=np.float32)
    c = np.empty((m, n), dtype=np.float32)
    lib["main"](a, b, c)
    # Each C element adds k products in order kk = 0, 1, ..., rounding each
    # time; NumPy's matmul (BLAS) uses its own order and blocking, so neither is
    # "the" float32 answer. Against the exact (float64) product both are within
    # about k * 2**-24 times the sum of the |products|; we assert that bound.
    exact = a.astype(np.float64) @ b
    bound = k * 2.0**-24 * (np.abs(a).astype(np.float64) @ np.abs(b)).max()
    np.testing.assert_allclose(c, exact, rtol=0, atol=bound)
    np.testing.assert_allclose(c, a @ b, rtol=0, atol=2 * bound)
    print(f"C ({m}x{n}) matches A @ B (max difference {np.abs(c - a @ b).max():.2g}, "
          f"bound {bound:.2g})")


# ---------------------------------------------------------------- 6. Ramp and Shuffle


def build_reverse() -> tir.PrimFunc:
    """B[0:LANES] = A[0:LANES] reversed, written as vector expressions directly."""
    A = tir.decl_buffer((LANES,), F32, name="A")
    B = tir.decl_buffer((LANES,), F32, name="B")
    # No loop at all: Ramp(0, 1, LANES) is the index vector [0, 1, ..., LANES-1],
    # so the load reads a whole vector; Shuffle picks its lanes in reverse order.
    lanes = Ramp(tir.const(0, "int32"), tir.const(1, "int32"), LANES)
    vector = BufferLoad(A, [lanes])
    reversed_ = Shuffle([vector], list(range(LANES - 1, -1, -1)))
    return tir.PrimFunc([A, B], BufferStore(B, reversed_, [lanes]))


def ramp_and_shuffle() -> None:
    """Vector code written by hand, the way the vectorizer writes it."""
    func = build_reverse()
    print("=== 6. Ramp and Shuffle, no vectorized loop ===")
    print(func)
    lib = codegen.build(func)
    a = np.arange(LANES, dtype=np.float32)
    b = np.empty_like(a)
    lib["main"](a, b)
    print("reversed:", b)
    np.testing.assert_array_equal(b, a[::-1])


# ---------------------------------------------------------------- 7. the asm


def register_prefix(bits: int) -> str:
    """The x86 name of a vector register of ``bits`` bits: zmm, ymm or xmm."""
    return {512: "zmm", 256: "ymm"}.get(bits, "xmm")


def reading_the_asm() -> None:
    """The instructions of the fma kernel that use this machine's widest registers."""
    reg = register_prefix(HOST.vector_width_bits)
    asm = codegen.build(build_fma(64)).get_source("asm")
    lines = [line.strip() for line in asm.splitlines() if f"%{reg}" in line]
    print(f"=== 7. asm: instructions on {HOST.vector_width_bits}-bit {reg} registers ===")
    print("\n".join(lines[:8]))
    assert lines, f"expected instructions on {reg} registers in the assembly"


# ---------------------------------------------------------------- 8. strided data


def build_complex_multiply() -> tir.PrimFunc:
    """C = A * B on interleaved complex float32 arrays (re, im, re, im, ...)."""
    n = tir.var("n")
    ib = ir_builder.create()
    A, B, C = (ib.pointer(F32, name=x) for x in "ABC")
    with ib.for_range(0, n, name="i", kind="vectorize") as i:
        ar, ai, br, bi = A[2 * i], A[2 * i + 1], B[2 * i], B[2 * i + 1]
        C[2 * i] = ar * br - ai * bi
        C[2 * i + 1] = ar * bi + ai * br
    return tir.PrimFunc([A, B, C, n], ib.get())


def strided_data() -> None:
    """Stride-2 loads and stores: whole registers plus shuffles, never a gather.

    Each ``A[2 * i]`` alone would load two registers and keep every other lane;
    the pipeline's ``MergeInterleavedAccesses`` sees that ``C[2 * i]`` and
    ``C[2 * i + 1]`` together write a contiguous run, so the loop stores whole
    registers of interleaved values. In the LLVM IR: plain vector loads and
    stores, ``shufflevector``s between them, no ``gather``/``scatter``.
    """
    print("=== 8. strided data: a complex multiply on interleaved arrays ===")
    lib = codegen.build(build_complex_multiply())
    print(lib.get_source("tir"))
    ll = lib.get_source("ll")
    assert "gather" not in ll and "scatter" not in ll and "shufflevector" in ll
    n = 1000
    a = RNG.standard_normal(2 * n).astype(np.float32)
    b = RNG.standard_normal(2 * n).astype(np.float32)
    c = np.empty_like(a)
    lib["main"](a, b, c, n)
    expected = a.view(np.complex64) * b.view(np.complex64)
    np.testing.assert_allclose(c.view(np.complex64), expected, rtol=1e-5, atol=1e-5)
    print(f"{n} complex products match NumPy's complex64 multiply; the IR has "
          f"{ll.count('shufflevector')} shufflevectors and no gather")


def main() -> None:
    reading_remarks()
    partial_sum_reduction()
    let_bindings()
    fused_multiply_add()
    register_blocking()
    ramp_and_shuffle()
    reading_the_asm()
    strided_data()


if __name__ == "__main__":
    main()
