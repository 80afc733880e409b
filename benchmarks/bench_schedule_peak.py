"""The machine's float32 FMA peak per core and on all cores, measured as STREAM measures bandwidth.

Run from the repository root::

    .venv/bin/python benchmarks/bench_schedule_peak.py            # about 2 s
    .venv/bin/python benchmarks/bench_schedule_peak.py --quick

bench_schedule.py calls ``measure()`` and prints each kernel's GFLOP/s as a
share of this peak. The kernel is a chain of FMAs into K = 16 independent
vector accumulators, ``acc[k] = acc[k] * a + b``, repeated ``iters`` times:
no loads or stores in the loop, and more independent chains than the FMA
latency times the FMA units per cycle (4 cycles x 2 units on Zen 4/5 and
recent Intel cores = 8 chains), so the FMA units never wait.

Two versions, each at the native vector width (16 float32 on AVX-512) and
at 8 (AVX2's ymm):

- **tirlite**: a ``PrimFunc`` from ``tir.ir_builder``, the accumulators one
  local buffer of K x lanes floats, the update ``tir.fma`` in a vectorized
  loop of K x lanes, built by ``codegen.build``; its all-cores version is an
  outer ``kind="parallel"`` loop with one chain set per thread
  (``TIRLITE_NUM_THREADS`` threads). ``asm_check`` counts the ``vfmadd``
  instructions on zmm/ymm registers in the emitted assembly.
- **C**: the same loop in GNU C vector types, compiled with ``cc -O3
  -march=native`` and called through ctypes (which releases the GIL, so the
  all-cores figure comes from one Python thread per core). A cross-check
  that tirlite's code is not the bottleneck of the measurement.

The figure reported is the best of a few repeats (a peak, not a typical time).
"""

from __future__ import annotations

import argparse
import ctypes
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

CHAINS = 16  # independent accumulators (zmm registers); 8 would already cover 4 x 2
CHAINS_YMM = 12  # ymm without AVX-512 has 16 registers: 12 chains and the two constants fit


def chains(lanes: int) -> int:
    """Accumulator registers at ``lanes`` float32: 16 of the 32 zmm, 12 of the 16 ymm."""
    return CHAINS if lanes >= 16 else CHAINS_YMM
A, B, STEP = 0.999, 1e-3, 1e-3  # acc_0 = STEP * lane; acc -> acc * A + B
CHECK_ITERS = 500  # the result is checked after this many iterations, then timed at many more

_C_SOURCE = r"""
#define K %(chains)d
typedef float vf __attribute__((vector_size(%(lanes)d * 4)));
void fma_chain(long iters, float *out) {
    vf acc[K];
    vf a, b;
    for (int l = 0; l < %(lanes)d; l++) { a[l] = %(a)sf; b[l] = %(b)sf; }
    for (int k = 0; k < K; k++)
        for (int l = 0; l < %(lanes)d; l++) acc[k][l] = (float)(k * %(lanes)d + l) * %(step)sf;
    for (long i = 0; i < iters; i++) {
#pragma GCC unroll 16
        for (int k = 0; k < K; k++) acc[k] = acc[k] * a + b;
    }
    for (int k = 0; k < K; k++)
        for (int l = 0; l < %(lanes)d; l++) out[k * %(lanes)d + l] = acc[k][l];
}
"""


# ---------------------------------------------------------------- tirlite


def tir_fma_chain(lanes: int, threads: int):
    """``acc = acc * a + b`` on chains(lanes) x lanes floats, ``iters`` (a parameter) times, in
    ``threads`` parallel copies; each thread's CHAINS x lanes results go to its row of ``out``."""
    import tir
    from tir import ir_builder

    width = chains(lanes) * lanes
    iters = tir.Var("iters", "int32")
    out_buf = tir.decl_buffer((threads, width), "float32", "out")
    ib = ir_builder.create()
    out = ib.buffer_ptr(out_buf)
    a, b = tir.const(A, "float32"), tir.const(B, "float32")
    kind = "parallel" if threads > 1 else "serial"
    with ib.for_range(0, threads, name="t", kind=kind) as t:
        acc = ib.allocate("float32", (width,), name="acc", scope="local")
        with ib.for_range(0, width, name="j", kind="vectorize") as j:
            acc[j] = tir.Cast("float32", j) * tir.const(STEP, "float32")
        with ib.for_range(0, iters, name="i"):
            with ib.for_range(0, width, name="j", kind="vectorize") as j:
                acc[j] = tir.fma(acc[j], a, b)
        with ib.for_range(0, width, name="j", kind="vectorize") as j:
            out[t, j] = acc[j]
    return tir.PrimFunc([iters, out_buf], ib.get())


def expected(lanes: int, iters: int) -> np.ndarray:
    """The recurrence in float32 NumPy (multiply, then add: within a few ulps of the FMA's)."""
    acc = np.arange(chains(lanes) * lanes, dtype=np.float32) * np.float32(STEP)
    for _ in range(iters):
        acc = acc * np.float32(A) + np.float32(B)
    return acc


def asm_check(module) -> dict:
    """Count vfmadd instructions by register width in the module's assembly."""
    asm = module.get_source("asm")
    counts = {"zmm": 0, "ymm": 0, "xmm": 0}
    for line in asm.splitlines():
        if "vfmadd" in line or "vfnmadd" in line:
            for reg in counts:
                if f"%{reg}" in line:
                    counts[reg] += 1
                    break
    return counts


def _best_seconds(run, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    return best


def tirlite_peak(lanes: int, iters: int, threads: int, repeats: int) -> dict:
    """GFLOP/s of tirlite's FMA chain at ``lanes`` with ``threads`` threads (checked first)."""
    import codegen

    native = codegen.Target("llvm").vector_width_bits // 32
    # CHAINS x lanes floats are CHAINS registers only if lanes is the target's width:
    # below the native width, build for a target without AVX-512 (ymm registers)
    target = "llvm" if lanes >= native else "llvm -mattr=-avx512f"
    module = codegen.build(tir_fma_chain(lanes, threads), target=target)
    out = np.zeros((threads, chains(lanes) * lanes), np.float32)
    module["main"](CHECK_ITERS, out)
    want = expected(lanes, CHECK_ITERS)
    for row in out:
        np.testing.assert_allclose(row, want, rtol=1e-4, err_msg="tirlite FMA chain")
    seconds = _best_seconds(lambda: module["main"](iters, out), repeats)
    flops = 2.0 * chains(lanes) * lanes * iters * threads
    return {"gflops": flops / seconds / 1e9, "fma": asm_check(module)}


# ---------------------------------------------------------------- C


def _compile_c(lanes: int, workdir: str) -> ctypes.CDLL:
    src = Path(workdir) / f"fma{lanes}.c"
    lib = Path(workdir) / f"fma{lanes}.so"
    src.write_text(_C_SOURCE % {"chains": chains(lanes), "lanes": lanes, "a": A, "b": B,
                                "step": STEP})
    subprocess.run(["cc", "-O3", "-march=native", "-shared", "-fPIC", "-o", str(lib), str(src)],
                   check=True, capture_output=True, text=True)
    dll = ctypes.CDLL(str(lib))
    dll.fma_chain.argtypes = [ctypes.c_long, ctypes.c_void_p]
    dll.fma_chain.restype = None
    return dll


def c_peak(lanes: int, iters: int, threads: int, repeats: int, workdir: str) -> dict:
    """GFLOP/s of the C FMA chain, one Python thread per core (ctypes releases the GIL)."""
    fn = _compile_c(lanes, workdir).fma_chain
    outs = [np.zeros(chains(lanes) * lanes, np.float32) for _ in range(threads)]
    fn(CHECK_ITERS, outs[0].ctypes.data)
    np.testing.assert_allclose(outs[0], expected(lanes, CHECK_ITERS), rtol=1e-4,
                               err_msg="C FMA chain")

    def run_all():
        workers = [threading.Thread(target=fn, args=(iters, out.ctypes.data)) for out in outs]
        for w in workers:
            w.start()
        for w in workers:
            w.join()

    seconds = _best_seconds(run_all if threads > 1 else (lambda: fn(iters, outs[0].ctypes.data)),
                            repeats)
    return {"gflops": 2.0 * chains(lanes) * lanes * iters * threads / seconds / 1e9}


# ---------------------------------------------------------------- driver


def measure(quick: bool = False, threads: int | None = None) -> dict:
    """Peak GFLOP/s per core and on ``threads`` cores (default all), tirlite and C, 8/native lanes.

    Returns ``{"per_core": best single-core GFLOP/s, "all_cores": best all-core GFLOP/s,
    "threads": n, "rows": [...]}``; a version that fails is listed with its error.
    """
    import codegen

    threads = threads or os.cpu_count() or 1
    native = codegen.Target("llvm").vector_width_bits // 32
    iters = 2_000_000 if quick else 10_000_000  # 16 x 16 x 2 x 1e7 = 5 GFLOP: ~50 ms a core
    repeats = 3 if quick else 5
    rows = []
    with tempfile.TemporaryDirectory() as workdir:
        for lanes in sorted({8, native}):
            for nthreads in sorted({1, threads}):
                for label, fn in (("tirlite", lambda: tirlite_peak(lanes, iters, nthreads,
                                                                    repeats)),
                                  ("C", lambda: c_peak(lanes, iters, nthreads, repeats,
                                                       workdir))):
                    row = {"impl": label, "lanes": lanes, "threads": nthreads}
                    try:
                        row.update(fn())
                    except Exception as err:  # noqa: BLE001 (report it, measure the rest)
                        row["error"] = f"{type(err).__name__}: {str(err).strip()[:300]}"
                    rows.append(row)
    best = {n: max((r["gflops"] for r in rows if r["threads"] == n and "gflops" in r),
                   default=None) for n in {1, threads}}
    return {"per_core": best[1], "all_cores": best[threads], "threads": threads,
            "iters": iters, "chains": {lanes: chains(lanes) for lanes in sorted({8, native})},
            "rows": rows}


def print_peak(peak: dict) -> None:
    """The probe's table."""
    print(f"FMA peak probe: independent FMA chains (lanes: chains) {peak['chains']}, "
          f"{peak['iters']} iterations, best of repeats")
    print(f"{'impl':<9}{'lanes':>6}{'threads':>8}{'GFLOP/s':>10}  vfmadd in asm (zmm/ymm/xmm)")
    for r in peak["rows"]:
        if "error" in r:
            print(f"{r['impl']:<9}{r['lanes']:>6}{r['threads']:>8}  {r['error']}")
            continue
        fma = r.get("fma")
        asm = f"{fma['zmm']}/{fma['ymm']}/{fma['xmm']}" if fma else "-"
        print(f"{r['impl']:<9}{r['lanes']:>6}{r['threads']:>8}{r['gflops']:>10.1f}  {asm}")
    print(f"peak: {_gf(peak['per_core'])} GFLOP/s per core, {_gf(peak['all_cores'])} GFLOP/s on "
          f"{peak['threads']} cores")


def _gf(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer iterations")
    opts = parser.parse_args()
    os.environ.setdefault("TIRLITE_NUM_THREADS", str(os.cpu_count() or 1))
    print_peak(measure(opts.quick))


if __name__ == "__main__":
    main()
