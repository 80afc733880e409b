"""The native thread pool of parallel loops (codegen/runtime/: parallel.py, pool_ir.py).

Random parallel nests agree with the serial build and the interpreter at any
thread count; errors in a task are the caller's exception; several Python
threads, a forked child and the exit of the process all work. Tests that could
hang or kill the process (fork, exit) run in a child process with a timeout.
"""

import contextlib
import os
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

import codegen
import tir
from codegen.interp.backend import build_interpreter
from codegen.runtime import parallel
from tir import ir_builder

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXTENTS = (0, 1, 2, 3, 5, 8, 13)


def _loop(ib, extent, k, kind):
    """A loop of ``kind``: "serial", "parallel" or "dynamic" (parallel, dynamic schedule)."""
    if kind == "dynamic":
        return ib.for_range(0, extent, name=f"i{k}", kind="parallel",
                            annotations={"parallel_schedule": "dynamic"})
    return ib.for_range(0, extent, name=f"i{k}", kind=kind)


def nest(shape, kinds, symbolic=False):
    """B[idx] = A[idx] * 3 + sum(i_k * 10**k), asserting A[idx] >= 0, over loops of ``kinds``."""
    dims = [tir.size_var(f"n{k}") if symbolic else e for k, e in enumerate(shape)]
    A = tir.decl_buffer(dims, "int32", name="A")
    B = tir.decl_buffer(dims, "int32", name="B")
    ib = ir_builder.create()
    a, b = ib.buffer_ptr(A), ib.buffer_ptr(B)
    with contextlib.ExitStack() as stack:
        idx = tuple(stack.enter_context(_loop(ib, d, k, kind))
                    for k, (d, kind) in enumerate(zip(dims, kinds)))
        ib.emit(tir.AssertStmt(a[idx] >= 0, "negative input", tir.Evaluate(0)))
        value = a[idx] * 3
        for k, i in enumerate(idx):
            value = value + i * 10**k
        b[idx] = value
    return tir.PrimFunc([A, B], ib.get())


def run(mod, a):
    """``B`` after ``mod(a, B)``, or the message of the RuntimeError it raised."""
    b = np.full(a.shape, -7, "int32")
    try:
        mod(a, b)
    except RuntimeError as err:
        return str(err)
    return b


def same(got, want):
    if isinstance(want, str) or isinstance(got, str):
        return got == want
    return np.array_equal(got, want)


@pytest.mark.parametrize("seed", range(24))
def test_random_parallel_nests_agree_with_serial_and_interpreter(seed):
    rng = np.random.default_rng(seed)
    depth = int(rng.integers(1, 4))
    shape = tuple(int(rng.choice(EXTENTS)) for _ in range(depth))
    kinds = tuple(str(rng.choice(["serial", "parallel", "dynamic"])) for _ in range(depth))
    kinds = kinds if set(kinds) != {"serial"} else ("parallel",) + kinds[1:]
    symbolic = bool(rng.integers(2))
    threaded = codegen.build(nest(shape, kinds, symbolic))
    serial = codegen.build(nest(shape, ("serial",) * depth, symbolic))
    oracle = build_interpreter(nest(shape, kinds, symbolic))
    a = rng.integers(0, 50, shape).astype("int32")
    bad = a.copy()
    if bad.size:  # a negative input in one task: the assert fails there only
        bad.flat[int(rng.integers(bad.size))] = -1
    for data in (a, bad):
        want = run(oracle, data)
        assert same(run(serial, data), want)
        for threads in (1, 2, 3, 8):
            with codegen.num_threads(threads):
                assert same(run(threaded, data), want), (shape, kinds, threads)
    if bad.size:
        assert want == "main: assertion failed: negative input"


@pytest.mark.parametrize("extent", [0, 1, 2, 3, 1000])
def test_empty_single_and_long_parallel_loops(extent):
    mod = codegen.build(nest((extent,), ("parallel",)))
    a = np.arange(extent, dtype="int32")
    with codegen.num_threads(4):  # more threads than iterations, and fewer
        np.testing.assert_array_equal(run(mod, a), a * 3 + np.arange(extent))


def _two_asserts():
    """A parallel loop failing "two" where A[i] == 2 and "one" where A[i] == 1."""
    A = tir.decl_buffer((64,), "int32", name="A")
    ib = ir_builder.create()
    a = ib.buffer_ptr(A)
    with ib.for_range(0, 64, name="i", kind="parallel") as i:
        ib.emit(tir.AssertStmt(a[i] != 1, "one", tir.Evaluate(0)))
        ib.emit(tir.AssertStmt(a[i] != 2, "two", tir.Evaluate(0)))
        a[i] = a[i] + 10
    return tir.PrimFunc([A], ib.get())


@pytest.mark.parametrize("first, second", [(20, 50), (40, 60), (5, 62)])
def test_the_lowest_failing_task_is_reported_as_the_serial_loop_would(first, second):
    mod = codegen.build(_two_asserts())
    for threads in (1, 2, 4):
        a = np.zeros(64, "int32")
        a[first], a[second] = 2, 1  # with 4 tasks of 16: tasks 1 and 3, 2 and 3, 0 and 3
        with codegen.num_threads(threads):
            with pytest.raises(RuntimeError, match=r"^main: assertion failed: two$"):
                mod(a)
        if threads == 4:  # the tasks without a failure ran to their end
            clean = [k for k in range(4) if k not in (first // 16, second // 16)]
            assert all((a[16 * k:16 * k + 16] == 10).all() for k in clean)


def test_a_launch_uses_min_of_threads_and_extent_workers():
    mod = codegen.build(nest((3,), ("parallel",)))
    a = np.arange(3, dtype="int32")
    with codegen.num_threads(8):
        run(mod, a)  # creates the workers it needs
        before = [parallel.worker_runs(k) for k in (1, 2, 3)]
        np.testing.assert_array_equal(run(mod, a), a * 3 + np.arange(3))
    after = [parallel.worker_runs(k) for k in (1, 2, 3)]
    assert [y - x for x, y in zip(before, after)] == [1, 1, 0]  # tasks 1 and 2 only
    with codegen.num_threads(1):
        run(mod, a)
    assert [parallel.worker_runs(k) for k in (1, 2, 3)] == after


def test_num_threads_context_nests_and_is_per_thread():
    outer = parallel.num_threads()
    seen = {}

    def other():
        seen["other"] = parallel.num_threads()

    with codegen.num_threads(3):
        assert parallel.num_threads() == 3
        with codegen.num_threads(1):
            assert parallel.num_threads() == 1
            worker = threading.Thread(target=other)
            worker.start()
            worker.join()
        assert parallel.num_threads() == 3
    assert parallel.num_threads() == outer
    assert seen["other"] == outer


@pytest.mark.parametrize("n, error", [(0, ValueError), (-2, ValueError), (2.0, TypeError),
                                      (True, TypeError), ("2", TypeError)])
def test_num_threads_rejects_what_is_not_a_positive_integer(n, error):
    with pytest.raises(error, match="codegen.num_threads: n must be"):
        with codegen.num_threads(n):
            pass


def test_eight_python_threads_calling_at_once_all_get_their_results():
    mod = codegen.build(nest((8, 16, 3), ("parallel", "serial", "parallel")))
    want_extra = np.add.outer(np.add.outer(np.arange(8), np.arange(16) * 10),
                              np.arange(3) * 100)
    barrier, failures = threading.Barrier(8), []

    def call(k: int) -> None:
        rng = np.random.default_rng(k)
        barrier.wait()
        with codegen.num_threads(1 + k % 3):
            for _ in range(200):
                a = rng.integers(0, 1000, (8, 16, 3)).astype("int32")
                got = run(mod, a)
                if not np.array_equal(got, a * 3 + want_extra):
                    failures.append(k)
                    return

    threads = [threading.Thread(target=call, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in threads)
    assert failures == []


def _child(body: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """Run KERNEL then ``body`` in a fresh Python with this repository importable."""
    code = textwrap.dedent(KERNEL) + textwrap.dedent(body)
    env = dict(os.environ, PYTHONPATH=ROOT, **(env or {}))
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)


KERNEL = """
    import os, signal, threading, numpy as np, codegen
    from codegen.runtime import parallel
    from tests.codegen.test_parallel_runtime import nest, run
    signal.signal(signal.SIGALRM, signal.SIG_DFL)
    signal.alarm(60)  # a hang is a failure, not a stuck test
    mod = codegen.build(nest((64, 9), ("parallel", "serial")))
    a = np.arange(64 * 9, dtype="int32").reshape(64, 9)
    want = a * 3 + np.add.outer(np.arange(64), np.arange(9) * 10)
    def ok():
        return np.array_equal(run(mod, a), want)
"""


def test_a_forked_child_runs_kernels_on_a_pool_of_its_own():
    out = _child("""
    assert ok() and parallel.worker_count() == 1
    busy = True
    def hammer():  # the parent launches while it forks: the child sees a pool mid-launch
        while busy:
            ok()
    t = threading.Thread(target=hammer, daemon=True)
    t.start()
    for _ in range(20):
        pid = os.fork()
        if pid == 0:
            signal.alarm(20)  # not inherited
            good = ok() and ok() and parallel.worker_count() == 1
            os._exit(0 if good else 3)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0, status
    busy = False
    t.join()
    print(ok())
    """, env={"TIRLITE_NUM_THREADS": "2"})
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.split() == ["True"]


def test_exit_joins_the_workers_and_does_not_wait_for_a_daemon_launch():
    # the daemon thread is inside a long launch when the main thread exits
    out = _child("""
    import time
    big = codegen.build(nest((2, 3000, 3000), ("parallel", "serial", "serial")))
    x = np.zeros((2, 3000, 3000), "int32")
    assert ok()
    threading.Thread(target=lambda: [run(big, x) for _ in range(100)], daemon=True).start()
    time.sleep(0.2)
    print(ok(), parallel.worker_count())
    """, env={"TIRLITE_NUM_THREADS": "3"})
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.split() == ["True", "2"]
    quiet = _child("print(ok(), parallel._pool.shutdown(), parallel._pool.shutdown(), ok())")
    assert quiet.returncode == 0, quiet.stderr[-3000:]
    # joined (0), then closed (1): later launches run serially, still correct
    assert quiet.stdout.split() == ["True", "0", "1", "True"]


def test_one_thread_from_the_environment_starts_no_worker():
    out = _child("print(ok(), parallel.num_threads(), parallel.worker_count())",
                 env={"TIRLITE_NUM_THREADS": "1"})
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.split() == ["True", "1", "0"]


def test_more_threads_than_cores():
    mod = codegen.build(nest((64, 9), ("parallel", "serial")))
    a = np.arange(64 * 9, dtype="int32").reshape(64, 9)
    with codegen.num_threads(2 * (os.cpu_count() or 1) + 1):
        for _ in range(50):
            np.testing.assert_array_equal(run(mod, a),
                                          a * 3 + np.add.outer(np.arange(64), np.arange(9) * 10))


def _triangle(schedule=None):
    """A[i] = number of j < i, the iterations of uneven cost a dynamic schedule is for."""
    n = tir.size_var("n")
    A = tir.decl_buffer((n,), "int64", name="A")
    ib = ir_builder.create()
    a = ib.buffer_ptr(A)
    notes = {"parallel_schedule": schedule} if schedule else None
    with ib.for_range(0, n, name="i", kind="parallel", annotations=notes) as i:
        with ib.for_range(0, i, name="j"):
            a[i] = a[i] + 1
    return tir.PrimFunc([A], ib.get())


@pytest.mark.parametrize("size", [0, 1, 2, 7, 100, 3001])
def test_dynamic_schedule_runs_every_iteration_once(size):
    mod = codegen.build(_triangle("dynamic"))
    assert "atomicrmw add" in mod.get_source("ll")
    for threads in (1, 2, 3, 8):
        x = np.zeros(size, "int64")
        with codegen.num_threads(threads):
            mod(x)
        np.testing.assert_array_equal(x, np.arange(size))


def test_dynamic_schedule_from_a_schedule_annotation():
    from tir import te

    a = te.placeholder((1000,), "float32", "a")
    b = te.compute((1000,), lambda i: a[i] * 2.0, name="b")
    sch = tir.Schedule(te.create_prim_func([a, b]))
    (i,) = sch.get_loops(sch.get_block("b"))
    sch.parallel(i)
    sch.annotate(i, "parallel_schedule", "dynamic")
    mod = codegen.build(sch.mod)
    assert "atomicrmw add" in mod.get_source("ll")
    x, y = np.arange(1000, dtype="float32"), np.zeros(1000, "float32")
    with codegen.num_threads(2):
        mod(x, y)
    np.testing.assert_array_equal(y, 2 * x)


def test_an_unknown_schedule_is_a_clear_error():
    with pytest.raises(ValueError, match="parallel loop i: annotation 'parallel_schedule' must "
                                         "be one of .'static', 'dynamic'., got 'guided'"):
        codegen.build(_triangle("guided"))


@pytest.mark.parametrize("triple", ["x86_64-linux-gnu", "aarch64-linux-gnu"])
def test_the_pool_compiles_for_both_supported_architectures(triple):
    from codegen import machine
    from codegen.runtime import pool_ir

    arch = triple.split("-")[0]
    addresses = {name: 0x1000 + 16 * k for k, name in enumerate(pool_ir.LIBC)}
    module = machine.parse(str(pool_ir.PoolModule(arch, addresses).emit()))
    asm = machine.target_machine(codegen.Target(f"llvm -mtriple={triple}")).emit_assembly(module)
    assert "tirlite_pool_launch:" in asm
    assert ("pause" if arch == "x86_64" else "yield") in asm
    with pytest.raises(ValueError, match="the native pool supports .'aarch64', 'x86_64'., "
                                         "not 'riscv64'"):
        pool_ir.PoolModule("riscv64", addresses)
