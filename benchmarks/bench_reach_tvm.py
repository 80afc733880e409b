"""The reductions of bench_reach.py written for Apache TVM, run in TVM's own venv.

Usage (bench_reach.py does this when ``TVM_PYTHON`` names a Python with
``apache-tvm`` installed): ``$TVM_PYTHON benchmarks/bench_reach_tvm.py SIZES_JSON``.
Prints one JSON object: kernel name -> {"ms": median run time}.

TVM's ``VectorizeLoop`` keeps a reduction serial, so a TVM user writes the
partial sums by hand: an accumulator of LANES lanes (several registers, so
the adds of different registers overlap), one vectorized loop over it, then
a serial combine of the lanes. Each kernel is timed with LANES in 16, 64 and
128, and the fastest is reported (with its lane count).
"""

from __future__ import annotations

import json
import sys

import numpy as np
import tvm
from bench_tvm import median_ms  # the same directory, run in the same venv
from tvm.script import tirx as T

LANE_CHOICES = (16, 64, 128)


def kernels(n: int, LANES: int) -> dict:  # noqa: N803 (the name reads as the constant it is)
    """TVMScript sum, dot, max, argmax over n float32 (n a multiple of LANES)."""
    blocks = n // LANES

    @T.prim_func
    def vsum(A: T.Buffer((n,), "float32"), S: T.Buffer((1,), "float32")):
        acc = T.alloc_buffer((LANES,), "float32")
        for j in T.vectorized(LANES):
            acc[j] = T.float32(0)
        for i in range(blocks):
            for j in T.vectorized(LANES):
                acc[j] = acc[j] + A[i * LANES + j]
        S[0] = T.float32(0)
        for j in range(LANES):
            S[0] = S[0] + acc[j]

    @T.prim_func
    def dot(A: T.Buffer((n,), "float32"), B: T.Buffer((n,), "float32"),
            S: T.Buffer((1,), "float32")):
        acc = T.alloc_buffer((LANES,), "float32")
        for j in T.vectorized(LANES):
            acc[j] = T.float32(0)
        for i in range(blocks):
            for j in T.vectorized(LANES):
                acc[j] = acc[j] + A[i * LANES + j] * B[i * LANES + j]
        S[0] = T.float32(0)
        for j in range(LANES):
            S[0] = S[0] + acc[j]

    @T.prim_func
    def vmax(A: T.Buffer((n,), "float32"), S: T.Buffer((1,), "float32")):
        acc = T.alloc_buffer((LANES,), "float32")
        for j in T.vectorized(LANES):
            acc[j] = T.float32(-np.inf)
        for i in range(blocks):
            for j in T.vectorized(LANES):
                acc[j] = T.max(acc[j], A[i * LANES + j])
        S[0] = T.float32(-np.inf)
        for j in range(LANES):
            S[0] = T.max(S[0], acc[j])

    @T.prim_func
    def argmax(A: T.Buffer((n,), "float32"), M: T.Buffer((1,), "float32"),
               K: T.Buffer((1,), "int32")):
        best = T.alloc_buffer((LANES,), "float32")
        where = T.alloc_buffer((LANES,), "int32")
        for j in T.vectorized(LANES):
            best[j] = T.float32(-np.inf)
            where[j] = 0
        for i in range(blocks):
            for j in T.vectorized(LANES):
                where[j] = T.Select(A[i * LANES + j] > best[j], i * LANES + j, where[j])
                best[j] = T.max(best[j], A[i * LANES + j])
        M[0] = T.float32(-np.inf)
        K[0] = 0
        for j in range(LANES):
            if best[j] > M[0] or (best[j] == M[0] and where[j] < K[0]):
                M[0] = best[j]
                K[0] = where[j]

    return {"sum": vsum, "dot": dot, "max": vmax, "argmax": argmax}


def arguments(name: str, n: int, dev) -> tuple:
    """Device tensors for one kernel and a check of its outputs against NumPy."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal(n).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)
    t = lambda x: tvm.runtime.tensor(x, dev)  # noqa: E731
    out = t(np.zeros(1, np.float32))
    # float32 partial sums of 2^24 terms: bound the error by a multiple of sum |terms|
    if name == "sum":
        return [t(a), out], lambda: (abs(out.numpy()[0] - a.sum(dtype=np.float64))
                                     <= 1e-4 * np.abs(a).sum())
    if name == "dot":
        exact = np.dot(a.astype(np.float64), b)
        return [t(a), t(b), out], lambda: (abs(out.numpy()[0] - exact)
                                           <= 1e-4 * np.abs(a * b).sum())
    if name == "max":
        return [t(a), out], lambda: out.numpy()[0] == a.max()
    k = t(np.zeros(1, np.int32))
    return [t(a), out, k], lambda: k.numpy()[0] == a.argmax()


def main() -> None:
    sizes = json.loads(sys.argv[1])
    n, runs = sizes["n"], sizes["runs"]
    target = tvm.target.Target({"kind": "llvm", "mcpu": sizes["mcpu"], "mtriple": sizes["triple"]})
    dev = tvm.cpu()
    out = {}
    for lanes in LANE_CHOICES:
        for name, func in kernels(n, lanes).items():
            try:
                entry = tvm.compile(func, target=target)["main"]
                args, ok = arguments(name, n, dev)
                entry(*args)
                if not ok():
                    raise AssertionError("result differs from NumPy")
                ms = median_ms(lambda e=entry, a=args: e(*a), runs)
            except Exception as err:  # noqa: BLE001 (report it, do not stop the others)
                out.setdefault(name, {"error": f"{type(err).__name__}: "
                                               f"{str(err).splitlines()[-1][:200]}"})
                continue
            if "ms" not in out.get(name, {}) or ms < out[name]["ms"]:
                out[name] = {"ms": ms, "lanes": lanes}
    out["version"] = tvm.__version__
    print(json.dumps(out))


if __name__ == "__main__":
    main()
