"""Time tirlite kernels against NumPy, numba and (optionally) TVM, single-threaded.

Run from the repository root::

    .venv/bin/python benchmarks/bench_kernels.py            # full sizes
    .venv/bin/python benchmarks/bench_kernels.py --quick    # small sizes, a smoke run

Prints a table and writes it as JSON to benchmarks/results.json. See
benchmarks/README.md for what each column means.
"""

from __future__ import annotations

import os

# One thread everywhere, set before NumPy/numba/tirlite start their thread pools.
for _var in ("TIRLITE_NUM_THREADS", "NUMBA_NUM_THREADS", "OMP_NUM_THREADS",
             "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "TVM_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse
import contextlib
import json
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import codegen
import tir
from tir import ir_builder

try:
    import numba
except ImportError:  # numba is optional
    numba = None


class Bench(NamedTuple):
    """One benchmark: the tirlite PrimFunc, its arguments, and the peers' versions."""

    name: str
    func: tir.PrimFunc
    args: tuple
    numpy_fn: Callable
    numba_fn: Callable | None
    check: Callable  # () -> None, asserts the tirlite result after a run


# ---------------------------------------------------------------- tirlite kernels



@contextlib.contextmanager
def _vector_loop(ib, blocks):
    """``for i in range(blocks): for j in vectorized(8)``; yields the index ``i * 8 + j``."""
    with (
        ib.for_range(0, blocks, name="i") as i,
        ib.for_range(0, 8, name="j", kind="vectorize") as j,
    ):
        yield i * 8 + j


def _vectors(n: int, *names: str, dtype: str = "float32") -> list:
    return [tir.decl_buffer((n,), dtype, name) for name in names]


def _elementwise(n: int, names: str, body: Callable) -> tir.PrimFunc:
    """A kernel over n-element buffers: ``for i in n/8: for j in vectorized(8): body``."""
    bufs = _vectors(n, *names)
    ib = ir_builder.create()
    views = [ib.buffer_ptr(b) for b in bufs]
    with _vector_loop(ib, n // 8) as k:
        body(k, *views)
    return tir.PrimFunc(bufs, ib.get())


def tir_vector_add(n: int) -> tir.PrimFunc:
    """C = A + B."""

    def body(k, A, B, C):
        C[k] = A[k] + B[k]

    return _elementwise(n, ["A", "B", "C"], body)


def tir_saxpy(n: int) -> tir.PrimFunc:
    """Z = a * X + Y with a scalar param a."""
    a = tir.var("a", "float32")
    X, Y, Z = _vectors(n, "X", "Y", "Z")
    ib = ir_builder.create()
    x, y, z = (ib.buffer_ptr(b) for b in (X, Y, Z))
    with _vector_loop(ib, n // 8) as k:
        z[k] = a * x[k] + y[k]
    return tir.PrimFunc([a, X, Y, Z], ib.get())


def tir_relu(n: int) -> tir.PrimFunc:
    """B = Select(A > 0, A, 0)."""

    def body(k, A, B):
        B[k] = tir.Select(A[k] > 0.0, A[k], tir.const(0.0, "float32"))

    return _elementwise(n, ["A", "B"], body)


def tir_gather(n: int) -> tir.PrimFunc:
    """C = A[idx]."""
    A, C = _vectors(n, "A", "C")
    (idx,) = _vectors(n, "idx", dtype="int32")
    ib = ir_builder.create()
    a, c, ix = (ib.buffer_ptr(b) for b in (A, C, idx))
    with _vector_loop(ib, n // 8) as k:
        c[k] = a[ix[k]]
    return tir.PrimFunc([A, idx, C], ib.get())


def tir_sum(n: int) -> tir.PrimFunc:
    """S[0] = sum(A) with 8 partial sums in a vectorized loop, then a serial 8-term sum."""
    (A,) = _vectors(n, "A")
    S = tir.decl_buffer((1,), "float32", "S")
    ib = ir_builder.create()
    a, s = ib.buffer_ptr(A), ib.buffer_ptr(S)
    acc = ib.allocate("float32", (8,), name="acc")
    with ib.for_range(0, 8, name="j", kind="vectorize") as j:
        acc[j] = 0.0
    with (
        ib.for_range(0, n // 8, name="i") as i,
        ib.for_range(0, 8, name="j", kind="vectorize") as j,
    ):
        acc[j] = acc[j] + a[i * 8 + j]
    s[0] = 0.0
    with ib.for_range(0, 8, name="j") as j:
        s[0] = s[0] + acc[j]
    return tir.PrimFunc([A, S], ib.get())


def tir_matmul(m: int) -> tir.PrimFunc:
    """C = A @ B, naive i-k-j order with the j loop vectorized by 8."""
    bufs = [tir.decl_buffer((m, m), "float32", name) for name in "ABC"]
    ib = ir_builder.create()
    A, B, C = (ib.buffer_ptr(b) for b in bufs)
    with ib.for_range(0, m, name="i") as i:
        with (
            ib.for_range(0, m // 8, name="jo") as jo,
            ib.for_range(0, 8, name="j", kind="vectorize") as j,
        ):
            C[i, jo * 8 + j] = 0.0
        with (
            ib.for_range(0, m, name="k") as k,
            ib.for_range(0, m // 8, name="jo") as jo,
            ib.for_range(0, 8, name="j", kind="vectorize") as j,
        ):
            C[i, jo * 8 + j] = C[i, jo * 8 + j] + A[i, k] * B[k, jo * 8 + j]
    return tir.PrimFunc(bufs, ib.get())


CONV_C = 16  # input and output channels of the conv benchmark


def tir_conv(h: int) -> tir.PrimFunc:
    """3x3 conv, CONV_C -> CONV_C channels, h x h output, x vectorized by 8.

    ``O[co, y, x] = sum over ci, ky, kx of I[ci, y + ky, x + kx] * W[co, ci, ky, kx]``
    on an input padded to (h + 2) x (h + 2); the same loop nest for every peer.
    """
    c = CONV_C
    inp = tir.decl_buffer((c, h + 2, h + 2), "float32", "I")
    weight = tir.decl_buffer((c, c, 3, 3), "float32", "W")
    out = tir.decl_buffer((c, h, h), "float32", "O")
    ib = ir_builder.create()
    I, W, O = (ib.buffer_ptr(b) for b in (inp, weight, out))
    with ib.for_range(0, c, name="co") as co, ib.for_range(0, h, name="y") as y:
        with ib.for_range(0, h // 8, name="xo") as xo, \
                ib.for_range(0, 8, name="x", kind="vectorize") as x:
            O[co, y, xo * 8 + x] = 0.0
        with (
            ib.for_range(0, c, name="ci") as ci,
            ib.for_range(0, 3, name="ky") as ky,
            ib.for_range(0, 3, name="kx") as kx,
            ib.for_range(0, h // 8, name="xo") as xo,
            ib.for_range(0, 8, name="x", kind="vectorize") as x,
        ):
            O[co, y, xo * 8 + x] = (O[co, y, xo * 8 + x]
                                    + I[ci, y + ky, xo * 8 + x + kx] * W[co, ci, ky, kx])
    return tir.PrimFunc([inp, weight, out], ib.get())


def _numpy_conv(inp: np.ndarray, weight: np.ndarray, out: np.ndarray) -> None:
    windows = np.lib.stride_tricks.sliding_window_view(inp, (3, 3), axis=(1, 2))
    np.einsum("chwij,ocij->ohw", windows, weight, out=out, optimize=True)


# ---------------------------------------------------------------- numba kernels


def _numba_kernels() -> dict:
    """The same loops for numba (plain @njit; numba vectorizes what LLVM can)."""
    if numba is None:
        return {}
    njit = numba.njit(cache=False)

    @njit
    def add(a, b, c):
        for i in range(a.size):
            c[i] = a[i] + b[i]

    @njit
    def saxpy(a, x, y, z):
        for i in range(x.size):
            z[i] = a * x[i] + y[i]

    @njit
    def relu(a, b):
        for i in range(a.size):
            b[i] = a[i] if a[i] > 0 else np.float32(0)

    @njit
    def gather(a, idx, c):
        for i in range(idx.size):
            c[i] = a[idx[i]]

    @njit
    def total(a, s):
        acc = np.float32(0)
        for i in range(a.size):
            acc += a[i]
        s[0] = acc

    @njit
    def matmul(a, b, c):
        m = a.shape[0]
        for i in range(m):
            for j in range(m):
                c[i, j] = 0
            for k in range(m):
                for j in range(m):
                    c[i, j] += a[i, k] * b[k, j]

    @njit
    def conv(inp, weight, out):
        c, h = out.shape[0], out.shape[1]
        for co in range(c):
            for y in range(h):
                for x in range(h):
                    out[co, y, x] = 0
                for ci in range(c):
                    for ky in range(3):
                        for kx in range(3):
                            for x in range(h):
                                out[co, y, x] += inp[ci, y + ky, x + kx] * weight[co, ci, ky, kx]

    return {"vector_add": add, "saxpy": saxpy, "relu": relu, "gather": gather,
            "sum": total, "matmul": matmul, "conv": conv}


# ---------------------------------------------------------------- the benchmark set


def _close(got: np.ndarray, want: np.ndarray, rtol: float = 1e-5) -> Callable:
    return lambda: np.testing.assert_allclose(got, want(), rtol=rtol, atol=1e-5)


def benchmarks(n: int, m: int, h: int) -> list:
    """The benchmarks for vectors of ``n``, ``m`` x ``m`` matrices, ``h`` x ``h`` images."""
    rng = np.random.default_rng(0)
    vec = lambda: rng.random(n, dtype=np.float32)
    nb = _numba_kernels()
    a, b, c = vec(), vec(), np.zeros(n, np.float32)
    x, y, z = vec(), vec(), np.zeros(n, np.float32)
    r_in, r_out = vec() - np.float32(0.5), np.zeros(n, np.float32)
    g_src, g_idx, g_out = vec(), rng.integers(0, n, n, dtype=np.int32), np.zeros(n, np.float32)
    s_in, s_out = vec(), np.zeros(1, np.float32)
    ma, mb, mc = (rng.random((m, m), dtype=np.float32) for _ in range(2)), None, None
    ma, mb = list(ma)
    mc = np.zeros((m, m), np.float32)
    alpha = np.float32(2.0)
    ci = rng.random((CONV_C, h + 2, h + 2), dtype=np.float32)
    cw = rng.random((CONV_C, CONV_C, 3, 3), dtype=np.float32)
    co = np.zeros((CONV_C, h, h), np.float32)
    conv_want = np.zeros_like(co)
    _numpy_conv(ci, cw, conv_want)
    return [
        Bench("vector_add", tir_vector_add(n), (a, b, c), lambda: np.add(a, b, out=c),
              nb.get("vector_add") and (lambda: nb["vector_add"](a, b, c)),
              _close(c, lambda: a + b)),
        Bench("saxpy", tir_saxpy(n), (2.0, x, y, z),
              lambda: np.add(np.multiply(x, alpha, out=z), y, out=z),
              nb.get("saxpy") and (lambda: nb["saxpy"](alpha, x, y, z)),
              _close(z, lambda: alpha * x + y)),
        Bench("relu", tir_relu(n), (r_in, r_out), lambda: np.maximum(r_in, 0, out=r_out),
              nb.get("relu") and (lambda: nb["relu"](r_in, r_out)),
              _close(r_out, lambda: np.maximum(r_in, 0))),
        Bench("gather", tir_gather(n), (g_src, g_idx, g_out),
              lambda: np.take(g_src, g_idx, out=g_out),
              nb.get("gather") and (lambda: nb["gather"](g_src, g_idx, g_out)),
              _close(g_out, lambda: g_src[g_idx])),
        Bench("sum", tir_sum(n), (s_in, s_out), lambda: s_in.sum(),
              nb.get("sum") and (lambda: nb["sum"](s_in, s_out)),
              _close(s_out, lambda: np.array([s_in.sum(dtype=np.float64)], np.float32), 1e-3)),
        Bench("matmul", tir_matmul(m), (ma, mb, mc), lambda: np.matmul(ma, mb, out=mc),
              nb.get("matmul") and (lambda: nb["matmul"](ma, mb, mc)),
              _close(mc, lambda: ma @ mb, 1e-4)),
        Bench("conv", tir_conv(h), (ci, cw, co), lambda: _numpy_conv(ci, cw, co),
              nb.get("conv") and (lambda: nb["conv"](ci, cw, co)),
              _close(co, lambda: conv_want, 1e-4)),
    ]


# ---------------------------------------------------------------- timing


def interleaved_median_ms(fns: dict, runs: int, warmup: int = 2) -> dict:
    """Median wall time in ms of each ``fns[name]()``, over ``runs`` rounds after ``warmup``.

    Each round runs every function once, so that load from other processes on
    the machine falls on all of them alike.
    """
    for _ in range(warmup):
        for fn in fns.values():
            fn()
    times: dict = {name: [] for name in fns}
    for _ in range(runs):
        for name, fn in fns.items():
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(t) * 1e3 for name, t in times.items()}


def import_seconds(repeats: int = 3) -> float:
    """Median time of ``import tir, transform, codegen`` in a fresh interpreter."""
    code = ("import time; t = time.perf_counter(); import tir, transform, codegen; "
            "print(time.perf_counter() - t)")
    times = [float(subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True,
                                  capture_output=True, text=True).stdout)
             for _ in range(repeats)]
    return statistics.median(times)


def run_tvm(n: int, m: int, h: int, runs: int) -> dict:
    """Timings from benchmarks/bench_tvm.py under ``$TVM_PYTHON``, or {} without TVM."""
    python = os.environ.get("TVM_PYTHON")
    if not python:
        return {}
    import llvmlite.binding as llvm

    sizes = {"n": n, "m": m, "h": h, "runs": runs, "call_n": CALL_N, "call_reps": CALL_REPS,
             "mcpu": llvm.get_host_cpu_name(),
             "triple": llvm.get_process_triple()}
    proc = subprocess.run([python, str(ROOT / "benchmarks" / "bench_tvm.py"), json.dumps(sizes)],
                          capture_output=True, text=True, timeout=900, check=False)
    if proc.returncode != 0:
        print(f"TVM run failed: {proc.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
        return {}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def measure(bench: Bench, runs: int, tvm: dict) -> dict:
    """Compile and time one benchmark against its peers."""
    row = {"kernel": bench.name, "tirlite_compile_ms": None, "error": None}
    fns = {"numpy": bench.numpy_fn}
    if bench.numba_fn:
        fns["numba"] = bench.numba_fn
    try:
        codegen.clear_cache()
        start = time.perf_counter()
        entry = codegen.build(bench.func, target="llvm")["main"]
        row["tirlite_compile_ms"] = (time.perf_counter() - start) * 1e3
        entry(*bench.args)
        bench.check()
        fns["tirlite"] = lambda: entry(*bench.args)
    except Exception as err:  # noqa: BLE001 (report it in the table, time the peers anyway)
        row["error"] = f"{type(err).__name__}: {str(err).splitlines()[0][:160]}"
    times = interleaved_median_ms(fns, runs)
    row.update({
        "tirlite_ms": times.get("tirlite"),
        "numpy_ms": times["numpy"],
        "numba_ms": times.get("numba"),
        "tvm_ms": tvm.get(bench.name, {}).get("ms"),
        "tvm_compile_ms": tvm.get(bench.name, {}).get("compile_ms"),
    })
    peers = [row[k] for k in ("numpy_ms", "numba_ms", "tvm_ms") if row[k] is not None]
    ratio = min(peers) / row["tirlite_ms"] if row["tirlite_ms"] else None
    row["best_peer_over_tirlite"] = ratio
    return row


# ---------------------------------------------------------------- call overhead

CALL_N = 2**10  # elements per array in the call-overhead benchmark
CALL_REPS = 20_000  # calls per timed round


def per_call_us(fns: dict, runs: int) -> dict:
    """Median over ``runs`` interleaved rounds of the time per call, in µs."""
    def loop(fn):
        return lambda: [fn() for _ in range(CALL_REPS)]

    return {name: ms * 1e3 / CALL_REPS
            for name, ms in interleaved_median_ms({k: loop(f) for k, f in fns.items()},
                                                  runs).items()}


def call_overhead(runs: int, tvm: dict) -> dict:
    """Time per call of saxpy on 2^10 floats (three arrays and a scalar) for every peer."""
    rng = np.random.default_rng(1)
    x, y = rng.random(CALL_N, dtype=np.float32), rng.random(CALL_N, dtype=np.float32)
    z = np.zeros(CALL_N, np.float32)
    entry = codegen.build(tir_saxpy(CALL_N), target="llvm")["main"]
    fns = {"tirlite": lambda: entry(2.0, x, y, z),
           "tirlite (Python checks)": lambda: entry.call_checked(2.0, x, y, z),
           "numpy": lambda: np.add(x, y, out=z)}
    nb = _numba_kernels()
    if nb:
        alpha = np.float32(2.0)
        nb["saxpy"](alpha, x, y, z)
        fns["numba"] = lambda: nb["saxpy"](alpha, x, y, z)
    out = per_call_us(fns, runs)
    if "call_overhead" in tvm:
        out["tvm"] = tvm["call_overhead"].get("us")
    return out


# ---------------------------------------------------------------- report


def _cell(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def print_table(rows: list, meta: dict) -> None:
    """The results as a fixed-width text table."""
    head = (f"{'kernel':<11}{'tirlite ms':>12}{'numpy ms':>11}{'numba ms':>11}{'tvm ms':>10}"
            f"{'peer/tirlite':>14}{'compile ms':>12}")
    print(head)
    print("-" * len(head))
    for r in rows:
        print(f"{r['kernel']:<11}{_cell(r['tirlite_ms']):>12}{_cell(r['numpy_ms']):>11}"
              f"{_cell(r['numba_ms']):>11}{_cell(r['tvm_ms']):>10}"
              f"{_cell(r['best_peer_over_tirlite'], 2):>14}{_cell(r['tirlite_compile_ms'], 1):>12}")
    for r in rows:
        if r["error"]:
            print(f"  {r['kernel']}: tirlite failed: {r['error']}")
    print(f"\nimport tir, transform, codegen: {meta['import_s'] * 1e3:.0f} ms (fresh process)")
    print(f"first codegen.build (LLVM start-up included): {meta['first_build_ms']:.0f} ms")
    print(f"sizes: vectors of {meta['n']} float32, matmul {meta['m']}x{meta['m']}, conv "
          f"{CONV_C}x{meta['h']}x{meta['h']} (3x3, {CONV_C} -> {CONV_C} channels); "
          f"median of {meta['runs']} runs after 2 warm-up runs; 1 thread")
    calls = ", ".join(f"{k} {_cell(v, 2)}" for k, v in meta["call_us"].items())
    print(f"call overhead, us per call of saxpy on {CALL_N} float32 (numpy: one np.add): "
          f"{calls}")
    print(f"host: {meta['cpu']}, numba {meta['numba']}, tvm {meta['tvm']}; load average "
          f"{meta['load_average_before']:.1f} before, {meta['load_average_after']:.1f} after")


def _host_cpu() -> str:
    import llvmlite.binding as llvm

    return f"{llvm.get_host_cpu_name()}, {os.cpu_count()} cores"


def first_build_ms() -> float:
    """Time of the process's first ``codegen.build`` (LLVM initialisation included)."""
    ib = ir_builder.create()
    A = ib.pointer("float32", name="A")
    A[0] = 1.0
    start = time.perf_counter()
    codegen.build(tir.PrimFunc([A], ib.get()), target="llvm")
    return (time.perf_counter() - start) * 1e3


def main() -> None:
    """Run every benchmark, print the table and write the JSON results."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes and 3 runs")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results.json"))
    opts = parser.parse_args()
    n, m, h, runs = (2**16, 64, 16, 3) if opts.quick else (2**24, 256, 64, 7)
    meta = {"n": n, "m": m, "h": h, "runs": runs, "import_s": import_seconds(),
            "first_build_ms": first_build_ms(), "numba": getattr(numba, "__version__", None)}
    tvm = run_tvm(n, m, h, runs)
    meta["tvm"] = tvm.pop("version", None)
    meta["cpu"] = _host_cpu()
    meta["load_average_before"] = os.getloadavg()[0]
    rows = [measure(bench, runs, tvm) for bench in benchmarks(n, m, h)]
    meta["call_us"] = call_overhead(runs, tvm)
    meta["load_average_after"] = os.getloadavg()[0]
    print_table(rows, meta)
    Path(opts.out).write_text(json.dumps({"meta": meta, "rows": rows, "tvm_raw": tvm}, indent=2))


if __name__ == "__main__":
    main()
