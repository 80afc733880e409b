"""The benchmark kernels written for Apache TVM, run by bench_kernels.py in TVM's own venv.

Usage (bench_kernels.py does this when ``TVM_PYTHON`` names a Python with
``apache-tvm`` installed): ``$TVM_PYTHON benchmarks/bench_tvm.py SIZES_JSON``.
Prints one JSON object: kernel name -> {"ms": median run time, "compile_ms": ...}.
The kernels have the same loop structure as the tirlite ones (serial outer
loops, an 8-lane vectorized inner loop) and are compiled for the host CPU.
"""

from __future__ import annotations

import json
import statistics
import sys
import time

import numpy as np
import tvm
from tvm.script import tirx as T


def kernels(n: int, m: int, h: int = 8, c: int = 16) -> dict:
    """TVMScript versions of the benchmark kernels (vectors of n, m x m matrices, h x h images)."""
    blocks = n // 8
    cols = m // 8
    xblocks = h // 8

    @T.prim_func
    def vector_add(A: T.Buffer((n,), "float32"), B: T.Buffer((n,), "float32"),
                   C: T.Buffer((n,), "float32")):
        for i in range(blocks):
            for j in T.vectorized(8):
                C[i * 8 + j] = A[i * 8 + j] + B[i * 8 + j]

    @T.prim_func
    def saxpy(a: T.float32, X: T.Buffer((n,), "float32"), Y: T.Buffer((n,), "float32"),
              Z: T.Buffer((n,), "float32")):
        for i in range(blocks):
            for j in T.vectorized(8):
                Z[i * 8 + j] = a * X[i * 8 + j] + Y[i * 8 + j]

    @T.prim_func
    def relu(A: T.Buffer((n,), "float32"), B: T.Buffer((n,), "float32")):
        for i in range(blocks):
            for j in T.vectorized(8):
                B[i * 8 + j] = T.Select(A[i * 8 + j] > T.float32(0), A[i * 8 + j], T.float32(0))

    @T.prim_func
    def gather(A: T.Buffer((n,), "float32"), idx: T.Buffer((n,), "int32"),
               C: T.Buffer((n,), "float32")):
        for i in range(blocks):
            for j in T.vectorized(8):
                C[i * 8 + j] = A[idx[i * 8 + j]]

    @T.prim_func
    def vsum(A: T.Buffer((n,), "float32"), S: T.Buffer((1,), "float32")):
        acc = T.alloc_buffer((8,), "float32")
        for j in T.vectorized(8):
            acc[j] = T.float32(0)
        for i in range(blocks):
            for j in T.vectorized(8):
                acc[j] = acc[j] + A[i * 8 + j]
        S[0] = T.float32(0)
        for j in range(8):
            S[0] = S[0] + acc[j]

    @T.prim_func
    def matmul(A: T.Buffer((m, m), "float32"), B: T.Buffer((m, m), "float32"),
               C: T.Buffer((m, m), "float32")):
        for i in range(m):
            for jo in range(cols):
                for j in T.vectorized(8):
                    C[i, jo * 8 + j] = T.float32(0)
            for k in range(m):
                for jo in range(cols):
                    for j in T.vectorized(8):
                        C[i, jo * 8 + j] = C[i, jo * 8 + j] + A[i, k] * B[k, jo * 8 + j]

    @T.prim_func
    def conv(I: T.Buffer((c, h + 2, h + 2), "float32"), W: T.Buffer((c, c, 3, 3), "float32"),
             O: T.Buffer((c, h, h), "float32")):
        for co in range(c):
            for y in range(h):
                for xo in range(xblocks):
                    for x in T.vectorized(8):
                        O[co, y, xo * 8 + x] = T.float32(0)
                for ci in range(c):
                    for ky in range(3):
                        for kx in range(3):
                            for xo in range(xblocks):
                                for x in T.vectorized(8):
                                    O[co, y, xo * 8 + x] = (
                                        O[co, y, xo * 8 + x]
                                        + I[ci, y + ky, xo * 8 + x + kx] * W[co, ci, ky, kx])

    return {"vector_add": vector_add, "saxpy": saxpy, "relu": relu, "gather": gather,
            "sum": vsum, "matmul": matmul, "conv": conv}


def arguments(name: str, n: int, m: int, dev, h: int = 8, c: int = 16) -> list:
    """Device tensors for one kernel, the same shapes as the tirlite run."""
    rng = np.random.default_rng(0)
    vec = lambda: tvm.runtime.tensor(rng.random(n, dtype=np.float32), dev)
    mat = lambda: tvm.runtime.tensor(rng.random((m, m), dtype=np.float32), dev)
    table = {
        "vector_add": lambda: [vec(), vec(), vec()],
        "saxpy": lambda: [np.float32(2.0), vec(), vec(), vec()],
        "relu": lambda: [vec(), vec()],
        "gather": lambda: [vec(), tvm.runtime.tensor(rng.integers(0, n, n, dtype=np.int32), dev),
                           vec()],
        "sum": lambda: [vec(), tvm.runtime.tensor(np.zeros(1, np.float32), dev)],
        "matmul": lambda: [mat(), mat(), mat()],
        "conv": lambda: [tvm.runtime.tensor(rng.random((c, h + 2, h + 2), dtype=np.float32), dev),
                         tvm.runtime.tensor(rng.random((c, c, 3, 3), dtype=np.float32), dev),
                         tvm.runtime.tensor(np.zeros((c, h, h), np.float32), dev)],
    }
    return table[name]()


def expected(name: str, args: list) -> tuple:
    """(output tensor, NumPy result, rtol) to check one kernel's first run."""
    x = [a.numpy() if hasattr(a, "numpy") else a for a in args]
    table = {
        "vector_add": lambda: (args[2], x[0] + x[1], 1e-6),
        "saxpy": lambda: (args[3], x[0] * x[1] + x[2], 1e-5),
        "relu": lambda: (args[1], np.maximum(x[0], 0), 0),
        "gather": lambda: (args[2], x[0][x[1]], 0),
        "sum": lambda: (args[1], np.array([x[0].sum(dtype=np.float64)]), 1e-3),
        "matmul": lambda: (args[2], x[0] @ x[1], 1e-4),
        "conv": lambda: (args[2], np.einsum(
            "chwij,ocij->ohw",
            np.lib.stride_tricks.sliding_window_view(x[0], (3, 3), axis=(1, 2)), x[1]), 1e-4),
    }
    return table[name]()


def median_ms(fn, runs: int, warmup: int = 2) -> float:
    """Median wall time of ``fn()`` over ``runs`` runs after ``warmup`` runs, in ms."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def call_overhead(target, dev, sizes: dict) -> dict:
    """Time per call (µs) of saxpy on ``call_n`` floats: the median of ``runs`` loops."""
    n, reps = sizes["call_n"], sizes["call_reps"]
    entry = tvm.compile(kernels(n, 8)["saxpy"], target=target)["main"]
    args = arguments("saxpy", n, 8, dev)
    loop = lambda: [entry(*args) for _ in range(reps)]
    return {"us": median_ms(loop, sizes["runs"]) * 1e3 / reps}


def main() -> None:
    """Build and time each kernel with TVM; print the timings as JSON."""
    sizes = json.loads(sys.argv[1])
    n, m, runs = sizes["n"], sizes["m"], sizes["runs"]
    target = tvm.target.Target({"kind": "llvm", "mcpu": sizes["mcpu"], "mtriple": sizes["triple"]})
    dev = tvm.cpu()
    out = {}
    h = sizes.get("h", 8)
    for name, func in kernels(n, m, h).items():
        try:
            start = time.perf_counter()
            lib = tvm.compile(func, target=target)
            compile_ms = (time.perf_counter() - start) * 1e3
            args = arguments(name, n, m, dev, h)
            entry = lib["main"]
            entry(*args)
            tensor, want, rtol = expected(name, args)
            np.testing.assert_allclose(tensor.numpy(), want, rtol=rtol, atol=1e-5)
            out[name] = {"ms": median_ms(lambda e=entry, a=args: e(*a), runs),
                         "compile_ms": compile_ms}
        except Exception as err:  # noqa: BLE001 (report it, do not stop the other kernels)
            out[name] = {"error": f"{type(err).__name__}: {str(err).splitlines()[-1][:200]}"}
    out["call_overhead"] = call_overhead(target, dev, sizes)
    out["version"] = tvm.__version__
    print(json.dumps(out))


if __name__ == "__main__":
    main()
