"""Statement codegen: loops of every kind, branches, while, let, assert, parallel loops."""

import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import codegen
import tir
import transform
from codegen.runtime import parallel
from tir import ir_builder


def _kernel(kind="serial", n=64):
    """B[i] = A[i] * 2 + i over a loop of ``kind``."""
    A = tir.decl_buffer((n,), "float32", name="A")
    B = tir.decl_buffer((n,), "float32", name="B")
    ib = ir_builder.create()
    a, b = ib.buffer_ptr(A), ib.buffer_ptr(B)
    with ib.for_range(0, n, name="i", kind=kind) as i:
        b[i] = a[i] * 2.0 + tir.Cast("float32", i)
    return tir.PrimFunc([A, B], ib.get())


@pytest.mark.parametrize("kind", ["serial", "parallel", "vectorize", "unroll"])
def test_loop_kinds(kind):
    a, b = np.arange(64, dtype="float32"), np.zeros(64, "float32")
    codegen.build(_kernel(kind))(a, b)
    np.testing.assert_array_equal(b, a * 3)


def test_loop_kinds_left_to_llvm_get_loop_metadata():
    """Without the TIR passes, UNROLLED and VECTORIZED loops carry llvm.loop hints."""
    from codegen.llvm import CodeGenLLVM

    for kind, hint in (("unroll", "llvm.loop.unroll.full"),
                       ("vectorize", "llvm.loop.vectorize.enable")):
        cg = CodeGenLLVM(codegen.Target("llvm"))
        cg.add_function("main", _kernel(kind))
        assert hint in str(cg.module)


def test_loop_annotated_not_to_unroll_gets_unroll_disable():
    """``codegen.llvm.unroll = False`` on a serial loop: LLVM is told not to unroll it (the
    tuner's packing copies, which LLVM unrolled into code that only cost build time)."""
    from codegen.llvm import CodeGenLLVM

    def emitted(annotations):
        func = _kernel()
        loop = func.body
        func = func.with_body(tir.For(loop.loop_var, loop.min, loop.extent, loop.kind, loop.body,
                                      annotations=annotations))
        cg = CodeGenLLVM(codegen.Target("llvm"))
        cg.add_function("main", func)
        return str(cg.module), func

    text, func = emitted({"codegen.llvm.unroll": False})
    assert "llvm.loop.unroll.disable" in text
    a, b = np.arange(64, dtype="float32"), np.zeros(64, "float32")
    codegen.build(func)(a, b)
    np.testing.assert_array_equal(b, a * 3)
    for annotations in ({"codegen.llvm.unroll": True}, {}):
        assert "llvm.loop.unroll.disable" not in emitted(annotations)[0]


def _index_kernel(rows=7, cols=13):
    """B[i, j] = A[rows - 1 - i, (cols - 1 - j) * 1 + 0] + A[i, j] over int32 loop vars: its
    flat indices are sums and products of loop vars, constants and the shape."""
    A = tir.decl_buffer((rows, cols), "float32", name="A")
    B = tir.decl_buffer((rows, cols), "float32", name="B")
    n = tir.Var("n", "int32")
    ib = ir_builder.create()
    a, b = ib.buffer_ptr(A), ib.buffer_ptr(B)
    with ib.for_range(0, tir.min(n, rows), name="i") as i:
        with ib.for_range(0, cols, name="j") as j:
            b[i, j] = a[rows - 1 - i, (cols - 1 - j) * 1 + 0] + a[i, j]
    return tir.PrimFunc([A, B, n], ib.get())


def test_int32_indices_are_computed_in_i64():
    """An int32 index's sums and products reach the GEP in i64, with no sign extension of
    the sum for LLVM's IndVarSimplify to widen (about a fifth of LLVM's time on a matmul)."""
    from codegen.llvm import CodeGenLLVM

    cg = CodeGenLLVM(codegen.Target("llvm"))
    cg.add_function("main", _index_kernel())
    text = str(cg.module)
    geps = re.findall(r'getelementptr inbounds float, ptr %"[AB]", i64 (%"[^"]+")', text)
    assert len(geps) == 3
    for name in geps:  # each GEP index is i64 arithmetic, not a sext of an i32 sum
        definition = re.search(re.escape(name) + r" = (\w+) (?:nsw )?(\w+)", text)
        assert definition.group(1) in ("add", "sub", "mul") and definition.group(2) == "i64"


@pytest.mark.parametrize("n", [-3, 0, 1, 4, 7, 100])
def test_int32_indices_in_i64_agree_with_the_interpreter(n):
    func = _index_kernel()
    a = np.random.default_rng(n + 10).standard_normal((7, 13)).astype("float32")
    want = np.full((7, 13), -1.0, "float32")
    codegen.build(func, target="interp")(a, want, n)
    got = np.full((7, 13), -1.0, "float32")
    codegen.build(func)(a, got, n)
    np.testing.assert_array_equal(got, want)
    rows = max(0, min(n, 7))
    np.testing.assert_array_equal(got[:rows], a[::-1, ::-1][:rows] + a[:rows])


def test_loop_with_nonzero_min_and_int64_var():
    A = tir.decl_buffer((10,), "int64", name="A")
    i = tir.Var("i", "int64")
    body = tir.For(i, tir.const(3, "int64"), tir.const(5, "int64"), tir.ForKind.SERIAL,
                   tir.BufferStore(A, i * i, [i]))
    a = np.zeros(10, "int64")
    codegen.build(tir.PrimFunc([A], body))(a)
    np.testing.assert_array_equal(a, [0, 0, 0, 9, 16, 25, 36, 49, 0, 0])


def test_if_then_else_and_while_and_let():
    """Collatz steps of each A[i], counted with a while loop and branches."""
    A = tir.decl_buffer((8,), "int32", name="A")
    B = tir.decl_buffer((8,), "int32", name="B")
    ib = ir_builder.create()
    a, b = ib.buffer_ptr(A), ib.buffer_ptr(B)
    x = ib.allocate("int32", (1,), name="x")
    with ib.for_range(0, 8, name="i") as i:
        x[0] = a[i]
        b[i] = 0
        with ib.while_loop(x[0] != 1):
            v = ib.let("v", x[0])
            with ib.if_scope(tir.floormod(v, 2) == 0):
                x[0] = tir.floordiv(v, 2)
            with ib.else_scope():
                x[0] = v * 3 + 1
            b[i] = b[i] + 1
    a = np.array([1, 2, 3, 6, 7, 9, 27, 97], dtype="int32")
    b = np.zeros(8, "int32")
    codegen.build(tir.PrimFunc([A, B], ib.get()))(a, b)
    np.testing.assert_array_equal(b, [0, 1, 7, 8, 16, 19, 111, 118])


def test_assert_stmt_raises_with_its_message():
    n = tir.size_var("n")
    A = tir.decl_buffer((n,), "float32", name="A")
    body = tir.AssertStmt(n > 2, "A needs more than 2 elements",
                          tir.BufferStore(A, tir.const(1.0), [2]))
    mod = codegen.build(tir.PrimFunc([A], body))
    a = np.zeros(3, "float32")
    mod(a)
    assert a[2] == 1
    with pytest.raises(RuntimeError, match="main: assertion failed: A needs more than 2"):
        mod(np.zeros(2, "float32"))


def test_parallel_loop_is_outlined_and_correct_for_any_size():
    n = tir.size_var("n")
    A = tir.decl_buffer((n,), "float64", name="A")
    B = tir.decl_buffer((n,), "float64", name="B")
    k = tir.Var("k", "float64")
    ib = ir_builder.create()
    a, b = ib.buffer_ptr(A), ib.buffer_ptr(B)
    with ib.for_range(0, n, name="i", kind="parallel") as i:
        b[i] = a[i] * k + 1.0
    mod = codegen.build(tir.PrimFunc([A, B, k], ib.get()))
    assert "tirlite_main_parallel0" in mod.get_source("ll")
    for size in (0, 1, 2, 3, 1000, 12345):
        a = np.random.default_rng(size).standard_normal(size)
        b = np.zeros(size)
        mod(a, b, 2.5)
        # a * k + 1.0 may be one FMA (codegen.llvm.fp_contract): it differs from
        # the twice-rounded sum by the product's rounding error plus one of the sum's
        product = a * 2.5
        bound = 2.0**-53 * np.abs(product) + 2.0**-52 * np.abs(product + 1.0)
        assert (np.abs(b - (product + 1.0)) <= bound).all()


def test_nested_parallel_loops_and_assert_inside_a_task():
    m, n = tir.size_var("m"), tir.size_var("n")
    A = tir.decl_buffer((m, n), "int32", name="A")
    ib = ir_builder.create()
    a = ib.buffer_ptr(A)
    with ib.for_range(0, m, name="i", kind="parallel") as i:
        with ib.for_range(0, n, name="j", kind="parallel") as j:
            ib.emit(tir.AssertStmt(a[i, j] >= 0, "negative input", tir.Evaluate(0)))
            a[i, j] = a[i, j] + i * 10 + j
    mod = codegen.build(tir.PrimFunc([A], ib.get()))
    x = np.zeros((7, 5), "int32")
    mod(x)
    np.testing.assert_array_equal(x, np.add.outer(np.arange(7) * 10, np.arange(5)))
    x[3, 2] = -100
    with pytest.raises(RuntimeError, match="negative input"):
        mod(x)


def test_parallel_loop_runs_on_several_threads():
    code = textwrap.dedent("""
        import numpy as np, codegen, tir
        from codegen.runtime import parallel
        from tir import ir_builder
        A = tir.decl_buffer((4096,), "float32", name="A")
        ib = ir_builder.create()
        a = ib.buffer_ptr(A)
        with ib.for_range(0, 4096, name="i", kind="parallel") as i:
            a[i] = a[i] + 1.0
        mod = codegen.build(tir.PrimFunc([A], ib.get()))
        x = np.zeros(4096, "float32")
        mod(x)
        assert (x == 1).all()
        print(parallel.worker_count(), parallel.worker_runs(1))
    """)
    # Two tasks: one on the calling thread, one on the pool's only worker.
    env = dict(os.environ, TIRLITE_NUM_THREADS="2", PYTHONPATH=os.getcwd())
    out = subprocess.run([sys.executable, "-c", code], check=False, env=env,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["1", "1"]


def test_num_threads_from_the_environment(monkeypatch):
    monkeypatch.setenv("TIRLITE_NUM_THREADS", "5")
    assert parallel.env_threads() == 5
    monkeypatch.setenv("TIRLITE_NUM_THREADS", "zero")
    with pytest.raises(ValueError, match="TIRLITE_NUM_THREADS must be a positive integer"):
        parallel.env_threads()
    monkeypatch.delenv("TIRLITE_NUM_THREADS")
    assert parallel.env_threads() == (os.cpu_count() or 1)


def test_runtime_failure_in_a_launch_is_an_exception():
    # The pool reads the variable once, when it is made: in a process of its own.
    code = textwrap.dedent("""
        import numpy as np, codegen
        from tests.codegen.test_llvm_stmt import _kernel
        mod = codegen.build(_kernel("parallel"))
        try:
            mod(np.zeros(64, "float32"), np.zeros(64, "float32"))
        except RuntimeError as err:
            print(err)
        with codegen.num_threads(2):  # an explicit count does not need the variable
            b = np.zeros(64, "float32")
            mod(np.arange(64, dtype="float32"), b)
        print((b == np.arange(64) * 3).all())
    """)
    env = dict(os.environ, TIRLITE_NUM_THREADS="-1", PYTHONPATH=os.getcwd())
    out = subprocess.run([sys.executable, "-c", code], check=False, env=env,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [
        "main: the parallel runtime failed: TIRLITE_NUM_THREADS must be a positive integer, "
        "got -1", "True"]


def test_fast_math_flags_only_when_configured():
    func = _kernel("serial")
    plain = codegen.build(func).get_source("ll")
    with transform.PassContext(config={"codegen.llvm.fast_math": True}):
        fast = codegen.build(func).get_source("ll")
    assert "fmul fast" not in plain and "fadd fast" not in plain
    assert "fast" in fast and fast != plain


def test_parallel_task_keeps_buffers_noalias():
    """The task's loop is vectorized without runtime alias checks between A and B."""
    n, m = tir.size_var("n"), tir.size_var("m")
    A = tir.decl_buffer((n, m), "float32", name="A")
    B = tir.decl_buffer((n, m), "float32", name="B")
    ib = ir_builder.create()
    a, b = ib.buffer_ptr(A), ib.buffer_ptr(B)
    with ib.for_range(0, n, name="i", kind="parallel") as i:
        with ib.for_range(0, m, name="j") as j:
            b[i, j] = a[i, j] * 2.0
    mod = codegen.build(tir.PrimFunc([A, B], ib.get()))
    ll = mod.get_source("ll")
    assert re.search(r"<\d+ x float>", ll) and "diff.check" not in ll and "memcheck" not in ll
    x = np.arange(3 * 37, dtype="float32").reshape(3, 37)
    y = np.zeros_like(x)
    mod(x, y)
    np.testing.assert_array_equal(y, 2 * x)


STEPPED = textwrap.dedent("""
    import sys
    import numpy as np, tir, codegen
    from tir import ir_builder
    ib = ir_builder.create(); s = tir.var("s")
    A = tir.decl_buffer((16,), "int32", name="A"); a = ib.buffer_ptr(A)
    with ib.for_range(0, 16, name="i", step=s) as i:
        a[i] = 1
    lib = codegen.build(tir.PrimFunc([A, s], ib.get()), target=sys.argv[1])
    for step in (0, -3):
        try:
            lib["main"](np.zeros(16, "int32"), step)
            print("no error")
        except RuntimeError as err:
            print("RuntimeError:", err)
""")


@pytest.mark.parametrize("target", ["llvm", "interp"])
def test_symbolic_step_zero_or_negative_is_a_runtime_error_not_sigfpe(target):
    # a child process: the trip count's division by zero was a SIGFPE
    out = subprocess.run([sys.executable, "-c", STEPPED, target], cwd=os.getcwd(),
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    message = "RuntimeError: main: assertion failed: for_range i: the step s must be positive"
    assert out.stdout.splitlines() == [message, message]


@pytest.mark.parametrize("target", ["llvm", "interp"])
@pytest.mark.parametrize("step", [1, 3, 15, 16, 17, 2**31 - 1])
def test_symbolic_step_visits_range_0_16_step(target, step):
    ib = ir_builder.create()
    s = tir.var("s")
    A = tir.decl_buffer((16,), "int32", name="A")
    a = ib.buffer_ptr(A)
    with ib.for_range(0, 16, name="i", step=s) as i:
        a[i] = a[i] + 1
    x = np.zeros(16, "int32")
    codegen.build(tir.PrimFunc([A, s], ib.get()), target=target)(x, step)
    want = np.zeros(16, "int32")
    want[list(range(0, 16, step))] = 1
    np.testing.assert_array_equal(x, want)
