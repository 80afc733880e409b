"""bench_parallel.py's peer rows, in the peer's own venv: TVM's or numba's thread pool.

    $TVM_PYTHON benchmarks/bench_parallel_peer.py tvm CONFIG_JSON      # TVM_NUM_THREADS set
    $NUMBA_PYTHON benchmarks/bench_parallel_peer.py numba CONFIG_JSON

CONFIG_JSON: ``{"threads": [1, 2], "repeats": 1000, "runs": 15, "stream": 16777216,
"sum": 4194304}``. Prints one JSON line: ``{"version": ..., "launch_us": {threads: µs},
"stream_ms": {threads: ms}, "sum_ms": {threads: ms}}``, medians of ``runs`` timed
calls after a warm-up, each result checked against NumPy first. NumPy only besides
the peer, so it runs in any venv.

The kernels are bench_parallel.py's: ``repeats`` launches of a parallel loop of
``threads`` iterations doing ``A[i] += 1`` inside one call (the time per launch,
without the Python call), the streaming ``a = b * 2 + c`` with its outer
loop parallel, and ``sum(A)`` (numba: a ``prange`` reduction; TVM: the
schedule tirlite's default makes, written by hand: ``rfactor`` into 64
parallel chunks, then ``rfactor`` over a 16-lane split, vectorized). TVM reads its
thread count once per process (``TVM_NUM_THREADS``), so bench_parallel.py starts one
TVM worker per count; numba sets it per call.
"""

from __future__ import annotations

import json
import statistics
import sys
import time

import numpy as np

BLOCK = 1 << 16  # elements per task of the streaming kernel (as bench_parallel.py)


def median_s(fn, runs: int) -> float:
    fn()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def stream_arrays(n: int) -> tuple:
    rng = np.random.default_rng(0)
    b, c = rng.standard_normal(n, dtype=np.float32), rng.standard_normal(n, dtype=np.float32)
    return np.zeros(n, np.float32), b, c


def tvm_rows(config: dict) -> dict:
    import tvm
    from tvm import te
    from tvm.script import tirx as T

    threads, repeats = config["threads"][0], config["repeats"]  # one count per process

    @T.prim_func
    def launches(A: T.Buffer((threads,), "float32")):
        for r in range(repeats):
            for i in T.parallel(threads):
                A[i] = A[i] + T.float32(1)

    dev = tvm.cpu()
    launch = tvm.compile(launches, target="llvm")["main"]
    a = tvm.runtime.tensor(np.zeros(threads, np.float32), dev)
    launch(a)
    assert np.all(a.numpy() == repeats), "TVM launch kernel: wrong result"
    n = config["stream"]
    b_, c_ = te.placeholder((n,), "float32", "b"), te.placeholder((n,), "float32", "c")
    out = te.compute((n,), lambda i: b_[i] * T.float32(2) + c_[i], name="a")
    sch = tvm.s_tir.Schedule(te.create_prim_func([b_, c_, out]))
    o, i = sch.split(sch.get_loops(sch.get_sblock("a"))[0], [None, BLOCK])
    sch.parallel(o)
    _, vi = sch.split(i, [None, 16])
    sch.vectorize(vi)
    stream = tvm.compile(sch.mod["main"], target="llvm")["main"]
    arrs = stream_arrays(n)
    ta, tb, tc = (tvm.runtime.tensor(x, dev) for x in arrs)
    stream(tb, tc, ta)
    assert np.array_equal(ta.numpy(), arrs[1] * 2 + arrs[2]), "TVM stream: wrong result"
    total, data, out_ = tvm_sum(config["sum"], dev)
    total(data, out_)
    want = float(data.numpy().sum(dtype=np.float64))
    assert abs(out_.numpy()[0] - want) <= 1e-5 * want, "TVM sum: wrong result"
    return {"version": tvm.__version__,
            "launch_us": {threads: median_s(lambda: launch(a), config["runs"]) / repeats * 1e6},
            "stream_ms": {threads: median_s(lambda: stream(tb, tc, ta), config["runs"]) * 1e3},
            "sum_ms": {threads: median_s(lambda: total(data, out_), config["runs"]) * 1e3}}


def tvm_sum(n: int, dev) -> tuple:
    """TVM's sum(A): rfactor into 64 parallel chunks, then over 16 lanes, vectorized."""
    import tvm
    from tvm import te

    A = te.placeholder((n,), "float32", "A")
    k = te.reduce_axis((0, n), "k")
    B = te.compute((1,), lambda _: te.sum(A[k], axis=k), name="B")
    sch = tvm.s_tir.Schedule(te.create_prim_func([A, B]))
    _, kk = sch.get_loops(sch.get_sblock("B"))
    ko, _ = sch.split(kk, [64, None])
    chunked = sch.rfactor(ko, 0)
    loops = sch.get_loops(chunked)
    sch.parallel(loops[-2])
    _, lanes = sch.split(loops[-1], [None, 16])
    partials = sch.rfactor(lanes, 2)
    sch.vectorize(sch.get_loops(partials)[-1])
    fn = tvm.compile(sch.mod["main"], target="llvm")["main"]
    data = tvm.runtime.tensor(np.random.default_rng(0).random(n, dtype=np.float32), dev)
    return fn, data, tvm.runtime.tensor(np.zeros(1, np.float32), dev)


def numba_rows(config: dict) -> dict:
    import numba
    from numba import njit, prange

    @njit(parallel=True)
    def launches(a, repeats):
        for _ in range(repeats):
            for i in prange(a.shape[0]):
                a[i] += 1.0

    @njit(parallel=True)
    def stream(a, b, c):
        for i in prange(a.shape[0]):
            a[i] = b[i] * np.float32(2) + c[i]

    @njit(parallel=True)
    def total(a):
        s = np.float32(0)
        for i in prange(a.shape[0]):
            s += a[i]
        return s

    repeats, result = config["repeats"], {"version": numba.__version__, "launch_us": {},
                                          "stream_ms": {}, "sum_ms": {}}
    data = np.random.default_rng(0).random(config["sum"], dtype=np.float32)
    want = float(data.sum(dtype=np.float64))
    arrs = stream_arrays(config["stream"])
    for threads in config["threads"]:
        numba.set_num_threads(threads)
        a = np.zeros(threads, np.float32)
        launches(a, repeats)
        assert np.all(a == repeats), "numba launch kernel: wrong result"
        stream(*arrs)
        assert np.array_equal(arrs[0], arrs[1] * 2 + arrs[2]), "numba stream: wrong result"
        result["launch_us"][threads] = (
            median_s(lambda: launches(a, repeats), config["runs"]) / repeats * 1e6)
        result["stream_ms"][threads] = median_s(lambda: stream(*arrs), config["runs"]) * 1e3
        # (float32 running sums: 1e-3, not the 1e-5 of the others)
        assert abs(total(data) - want) <= 1e-3 * want, "numba sum: wrong result"
        result["sum_ms"][threads] = median_s(lambda: total(data), config["runs"]) * 1e3
    return result


def main() -> None:
    peer, config = sys.argv[1], json.loads(sys.argv[2])
    rows = {"tvm": tvm_rows, "numba": numba_rows}[peer](config)
    print(json.dumps(rows), flush=True)


if __name__ == "__main__":
    main()
