"""Parallel loops: the cost of a launch and the speed-up with threads, beside TVM, numba, OpenBLAS.

    .venv/bin/python benchmarks/bench_parallel.py                  # all rows
    .venv/bin/python benchmarks/bench_parallel.py --quick          # small sizes, few runs
    TVM_PYTHON=/work/tvm-venv/bin/python NUMBA_PYTHON=/work/numba-venv/bin/python \\
        .venv/bin/python benchmarks/bench_parallel.py

Rows, each a median of ``--runs`` timed calls after a warm-up, each candidate
run back to back after a pause (thread pools spin after a call: a candidate
timed right after another would share the cores with its spinners), every
result checked against NumPy first:

- **launch**: a parallel loop of ``threads`` iterations doing ``A[i] += 1``,
  launched ``--repeats`` times inside one call (a serial loop around it): the
  time per launch, without the Python call. tirlite's pool
  (codegen/runtime/pool_ir.py), TVM's (``TVMBackendParallelLaunch``) and
  numba's (``prange``, its default threading layer) run the same loop nest.
  tirlite's row also gives the time of one call from Python with one launch.
- **stream**: ``a = b * 2 + c`` over 16M float32 (the loop split in blocks of
  64K elements, the blocks parallel): memory-bound, so the speed-up is what
  the memory system gives; NumPy (one thread, two ufuncs) for scale.
- **sum**: ``sum(A)`` over 4M float32 (16 MB) under ``ms.apply_default_schedule``
  (for n threads: ``rfactor`` into 64 chunks run in parallel, each chunk's
  partials in vector lanes), beside numba's ``prange`` reduction, TVM with the
  same two ``rfactor`` steps written by hand, and NumPy's ``sum`` (one thread).
- **matmul512, matmul1024, conv**: ``ms.apply_default_schedule`` (the tuner's
  rules, no search) under ``codegen.num_threads(n)``, so the rules add a
  parallel loop when n > 1; the 1-thread time is the 1-thread schedule's.
  Beside it NumPy on OpenBLAS at the same thread count (``threadpoolctl``).
  Shapes and data are bench_tune's (bench_tune_common.py).

Targets (issue 25), on this 2-core machine: a launch of at most 5 µs and at
or below TVM's; matmul512 at least 1.8x its 1-thread time on 2 cores, conv at
least 1.9x. Other jobs on the machine change everything here: the script
prints the load average before and after.

Peers, each in its own venv, skipped with a note when absent:

- TVM: ``python3 -m venv /work/tvm-venv && /work/tvm-venv/bin/pip install
  apache-tvm``, then ``TVM_PYTHON=/work/tvm-venv/bin/python`` (one worker
  process per thread count: TVM reads ``TVM_NUM_THREADS`` once);
- numba: ``pip install numba`` in this venv, or in a venv of its own named by
  ``NUMBA_PYTHON`` (numba pins its own llvmlite);
- OpenBLAS: NumPy's, with ``threadpoolctl`` (``pip install threadpoolctl``).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import bench_tune_common as common  # noqa: E402

import codegen  # noqa: E402
import tir  # noqa: E402
from tir import ir_builder  # noqa: E402

CORES = os.cpu_count() or 1
BLOCK = 1 << 16  # elements per task of the streaming kernel (as bench_parallel_peer.py)
STREAM = 1 << 24
SUM = 1 << 22
KERNELS = ("matmul512", "matmul1024", "conv")


def thread_counts() -> list[int]:
    """1, 2, and all cores (and the powers of two between)."""
    counts, n = {1, CORES}, 2
    while n < CORES:
        counts.add(n)
        n *= 2
    return sorted(counts)


def median_ms(fn, runs: int, pause: float = 0.3) -> float:
    """The median of ``runs`` timed calls of ``fn`` after a pause and a warm-up."""
    time.sleep(pause)
    fn()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


# ---------------------------------------------------------------- tirlite kernels


def launch_kernel(threads: int, repeats: int):
    """``repeats`` launches of ``for i in parallel(threads): A[i] += 1``."""
    A = tir.decl_buffer((threads,), "float32", name="A")
    ib = ir_builder.create()
    a = ib.buffer_ptr(A)
    with ib.for_range(0, repeats, name="r"):
        with ib.for_range(0, threads, name="i", kind="parallel") as i:
            a[i] = a[i] + 1.0
    return codegen.build(tir.PrimFunc([A], ib.get()))["main"]


def stream_kernel(n: int):
    """``a = b * 2 + c`` in parallel blocks of BLOCK elements (LLVM vectorizes a block)."""
    a, b, c = (tir.decl_buffer((n,), "float32", name=x) for x in "abc")
    ib = ir_builder.create()
    pa, pb, pc = (ib.buffer_ptr(x) for x in (a, b, c))
    with ib.for_range(0, n // BLOCK, name="o", kind="parallel") as o:
        with ib.for_range(0, BLOCK, name="i") as i:
            k = o * BLOCK + i
            pa[k] = pb[k] * 2.0 + pc[k]
    return codegen.build(tir.PrimFunc([a, b, c], ib.get()))["main"]


def sum_kernel(n: int, threads: int):
    """``B[0] = sum(A)`` under the default schedule made for ``threads`` threads."""
    from tir import te
    from tirlite import meta_schedule as ms

    A = te.placeholder((n,), name="A")
    k = te.reduce_axis((0, n), name="k")
    B = te.compute((1,), lambda _: te.sum(A[k], axis=k), name="B")
    with codegen.num_threads(threads):
        return codegen.build(ms.apply_default_schedule(te.create_prim_func([A, B]), "llvm"))


def scheduled(kernel: str, threads: int, quick: bool):
    """``kernel`` under the default schedule made for ``threads`` threads."""
    from tirlite import meta_schedule as ms
    from tirlite.meta_schedule.testing import te_workload as W

    s = common.shape(kernel, quick)
    func = (W.matmul(s["M"]) if kernel.startswith("matmul")
            else W.conv2d_nhwc_bias_relu(s["N"], s["H"], s["W"], s["CI"], s["CO"]))
    with codegen.num_threads(threads):
        return codegen.build(ms.apply_default_schedule(func, "llvm"))["main"]


# ---------------------------------------------------------------- rows


def launch_rows(args) -> dict:
    rows = {}
    for threads in thread_counts():
        many = launch_kernel(threads, args.repeats)
        once = launch_kernel(threads, 1)
        a = np.zeros(threads, np.float32)
        with codegen.num_threads(threads):
            many(a)
            assert (a == args.repeats).all(), "tirlite launch kernel: wrong result"
            in_kernel = median_ms(lambda: many(a), args.runs) / args.repeats * 1e3
            calls = 1000
            per_call = median_ms(lambda: [once(a) for _ in range(calls)], args.runs) / calls * 1e3
        rows[threads] = {"in_kernel_us": in_kernel, "per_call_us": per_call}
    return rows


def stream_rows(args) -> dict:
    n = STREAM // 16 if args.quick else STREAM
    rng = np.random.default_rng(0)
    b, c = rng.standard_normal(n, dtype=np.float32), rng.standard_normal(n, dtype=np.float32)
    a = np.zeros(n, np.float32)
    fn = stream_kernel(n)
    fn(a, b, c)
    assert np.array_equal(a, b * 2 + c), "tirlite stream: wrong result"
    rows = {}
    for threads in thread_counts():
        with codegen.num_threads(threads):
            rows[threads] = median_ms(lambda: fn(a, b, c), args.runs)

    def numpy_stream():
        np.multiply(b, 2, out=a)
        np.add(a, c, out=a)

    return {"tirlite": rows, "numpy_1": median_ms(numpy_stream, args.runs)}


def sum_rows(args) -> dict:
    n = SUM // 16 if args.quick else SUM
    a = np.random.default_rng(0).random(n, dtype=np.float32)
    want = float(a.sum(dtype=np.float64))
    out = np.zeros(1, np.float32)
    rows = {}
    for threads in thread_counts():
        fn = sum_kernel(n, threads)
        with codegen.num_threads(threads):
            fn(a, out)
            assert abs(out[0] - want) <= 1e-5 * want, "tirlite sum: wrong result"
            rows[threads] = median_ms(lambda: fn(a, out), args.runs)
    return {"tirlite": rows, "numpy_1": median_ms(lambda: a.sum(), args.runs)}


def kernel_rows(kernel: str, args) -> dict:
    data = common.arrays(kernel, args.quick)
    want = common.expected(kernel, data)
    blas = blas_limits()
    rows = {}
    for threads in thread_counts():
        fn = scheduled(kernel, threads, args.quick)
        with codegen.num_threads(threads):
            data[-1][...] = 0
            fn(*data)
            common.check(kernel, data[-1], want)
            mine = median_ms(lambda: fn(*data), args.runs)
        ref = common.numpy_fn(kernel, data)
        if blas is None:
            theirs = None
        else:
            with blas(limits=threads, user_api="blas"):
                theirs = median_ms(ref, args.runs)
        rows[threads] = {"tirlite_ms": mine, "openblas_ms": theirs}
    return rows


def blas_limits():
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return None
    return threadpool_limits


def peer_rows(peer: str, python: str | None, args) -> dict | str:
    """TVM's or numba's rows from bench_parallel_peer.py in ``python``, or why not."""
    if python is None:
        return "not installed (see the docstring)"
    config = {"repeats": args.repeats, "runs": args.runs,
              "stream": STREAM // 16 if args.quick else STREAM,
              "sum": SUM // 16 if args.quick else SUM}
    counts = [[n] for n in thread_counts()] if peer == "tvm" else [thread_counts()]
    merged: dict = {"launch_us": {}, "stream_ms": {}, "sum_ms": {}}
    for threads in counts:
        env = {**os.environ, "TVM_NUM_THREADS": str(threads[0])} if peer == "tvm" else None
        proc = subprocess.run([python, str(ROOT / "benchmarks" / "bench_parallel_peer.py"), peer,
                               json.dumps({**config, "threads": threads})], env=env,
                              capture_output=True, text=True, timeout=1800)
        if proc.returncode != 0:
            return "failed: " + (proc.stderr.strip().splitlines() or ["?"])[-1]
        out = json.loads(proc.stdout)
        merged["version"] = out["version"]
        for key in ("launch_us", "stream_ms", "sum_ms"):
            merged[key].update({int(k): v for k, v in out[key].items()})
    return merged


def peer_python(peer: str) -> str | None:
    if peer == "numba" and importlib.util.find_spec("numba") is not None:
        return sys.executable
    return os.environ.get({"tvm": "TVM_PYTHON", "numba": "NUMBA_PYTHON"}[peer]) or None


# ---------------------------------------------------------------- report


def fmt(value, unit: str = "") -> str:
    return "-" if value is None else f"{value:.3g}{unit}"


def report(results: dict) -> None:
    peers = {p: results[p] for p in ("tvm", "numba")}
    print(f"\nlaunch, µs per launch ({results['repeats']} in one call; tirlite also per call "
          "from Python)")
    for p, rows in peers.items():
        if isinstance(rows, str):
            print(f"  {p}: {rows}")
    for threads, row in results["launch"].items():
        cells = [f"tirlite {fmt(row['in_kernel_us'])}", f"(per call {fmt(row['per_call_us'])})"]
        cells += [f"{p} {fmt(rows['launch_us'].get(threads))}" for p, rows in peers.items()
                  if not isinstance(rows, str)]
        print(f"  {threads} threads: " + "  ".join(cells))
    _peer_table("stream a = b*2 + c", results["stream"], peers, "stream_ms")
    _peer_table("sum(A)", results["sum"], peers, "sum_ms")
    for kernel in KERNELS:
        rows = results[kernel]
        base, blas_base = rows[1]["tirlite_ms"], rows[1]["openblas_ms"]
        print(f"\n{kernel} ({common.describe(kernel, results['quick'])}), ms and speed-up "
              "over 1 thread")
        for threads, row in rows.items():
            blas = row["openblas_ms"]
            blas_cell = "-" if blas is None else f"{blas:.3g} ({blas_base / blas:.2f}x)"
            print(f"  {threads} threads: tirlite {row['tirlite_ms']:.3g} "
                  f"({base / row['tirlite_ms']:.2f}x)  openblas {blas_cell}")


def _peer_table(title: str, row: dict, peers: dict, key: str) -> None:
    """tirlite's times per thread count beside each peer's ``key`` times."""
    print(f"\n{title}, ms (numpy, 1 thread: {fmt(row['numpy_1'])})")
    for threads, ms in row["tirlite"].items():
        cells = [f"tirlite {fmt(ms)}"]
        cells += [f"{p} {fmt(rows[key].get(threads))}" for p, rows in peers.items()
                  if not isinstance(rows, str)]
        print(f"  {threads} threads: " + "  ".join(cells))


def load_average() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, few runs")
    parser.add_argument("--runs", type=int, default=None, help="timed calls per row")
    parser.add_argument("--repeats", type=int, default=1000, help="launches per call")
    parser.add_argument("--out", default=None, help="write the results as JSON here")
    args = parser.parse_args()
    args.runs = args.runs or (5 if args.quick else 21)
    results = {"quick": args.quick, "repeats": args.repeats, "cores": CORES,
               "load_before": load_average()}
    print(f"{CORES} cores, load average {results['load_before']}")
    results["launch"] = launch_rows(args)
    results["stream"] = stream_rows(args)
    results["sum"] = sum_rows(args)
    for kernel in KERNELS:
        results[kernel] = kernel_rows(kernel, args)
    for peer in ("tvm", "numba"):
        results[peer] = peer_rows(peer, peer_python(peer), args)
    results["load_after"] = load_average()
    report(results)
    print(f"\nload average before {results['load_before']}, after {results['load_after']}")
    if args.out:
        Path(args.out).write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
