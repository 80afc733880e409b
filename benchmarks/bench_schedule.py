"""Time scheduled kernels (issue 13) against NumPy/OpenBLAS, TVM and Halide, next to the FMA peak.

Run from the repository root::

    .venv/bin/python benchmarks/bench_schedule.py            # full sizes
    .venv/bin/python benchmarks/bench_schedule.py --quick    # small sizes, a smoke run
    TVM_PYTHON=/work/tvm-venv/bin/python HALIDE_PYTHON=/work/halide-venv/bin/python \\
        .venv/bin/python benchmarks/bench_schedule.py --kernels conv,matmul1024

First the FMA peak probe (bench_schedule_peak.py): the machine's float32
GFLOP/s per core and on all cores. Then four kernels (bench_schedule_common.py):
the seed's conv layer (Halide's conv_layer: N=5, CI=CO=128, 100 x 80, 3x3,
bias, ReLU), matmul 512^3 and 1024^3, and Halide's two-stage blur; each in a
single-thread row and an all-cores row (``_mt``). Candidates:

- **tirlite**: ``te.compute`` + a hand schedule through ``tir.Schedule``,
  the same shape as the TVM schedule, built by ``codegen.build``; the
  all-cores row adds ``parallel`` on the outer loop (``TIRLITE_NUM_THREADS``
  = the core count). While a te or schedule piece is missing, the row says
  ``not available (<error>)``.
- **tirlite ib** (matmul): a hand-written ``tir.ir_builder`` loop nest, i-k-j
  with j vectorized (bench_kernels.py's matmul), the baseline a schedule
  should beat.
- **numpy**: in this process with OpenBLAS on one thread; the all-cores row
  in a worker process with ``OPENBLAS_NUM_THREADS`` = the core count.
- **tvm** (bench_schedule_tvm.py, ``TVM_PYTHON``), **halide**
  (bench_schedule_halide.py, ``HALIDE_PYTHON``): workers in their own venvs.

Every candidate's result is checked against NumPy before it is timed; a
wrong result is listed instead of a time and the script exits with status 1.
Results: benchmarks/schedule_results.json. See benchmarks/README.md.
"""

from __future__ import annotations

import os

# One thread for every library here; parallel loops (the all-cores rows) use all cores.
_CORES = os.cpu_count() or 1
for _var in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"
os.environ["TIRLITE_NUM_THREADS"] = str(_CORES)

import argparse  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import bench_schedule_common as common  # noqa: E402
import bench_schedule_peak as peak_probe  # noqa: E402
from bench_workers import Worker, WorkerDied, source_version  # noqa: E402

import codegen  # noqa: E402
import tir  # noqa: E402
from tir import ir_builder  # noqa: E402

F32 = "float32"
CANDIDATES = ("tirlite", "tirlite ib", "numpy", "tvm", "halide")
PEERS = ("numpy", "tvm", "halide")


# ---------------------------------------------------------------- tirlite: te + schedule
# The same definitions and schedules as bench_schedule_tvm.py, in tirlite's names
# (tir.Schedule, get_block). ``parallel`` adds the all-cores loop.


def te_conv(s: dict, lanes: int, parallel: bool) -> tir.PrimFunc:
    """The seed's conv layer, scheduled as tutorials/05_schedules.py builds it step by step.

    The ReLU's (x, c) plane in tiles of 10 pixels x 2 registers of channels, the conv
    computed per tile (compute_at: its buffer shrinks to the tile), reduction loops
    outside the tile, bias as the reduction's init (decompose_reduction), channels
    vectorized and pixels unrolled: 20 accumulators on AVX-512 (on AVX2: 10 x 16).
    """
    from tir import te

    n_, ci_, co_, w_, h_ = s["N"], s["CI"], s["CO"], s["W"], s["H"]
    inp = te.placeholder((n_, h_ + 2, w_ + 2, ci_), F32, "inp")
    filt = te.placeholder((ci_, 3, 3, co_), F32, "filt")
    bias = te.placeholder((co_,), F32, "bias")
    ry, rx, rc = (te.reduce_axis((0, 3), "ry"), te.reduce_axis((0, 3), "rx"),
                  te.reduce_axis((0, ci_), "rc"))
    conv = te.compute((n_, h_, w_, co_), lambda n, y, x, c: te.sum(
        filt[rc, ry, rx, c] * inp[n, y + ry, x + rx, rc], axis=[ry, rx, rc], init=bias[c]),
        name="conv")
    relu = te.compute((n_, h_, w_, co_), lambda n, y, x, c: tir.max(
        conv[n, y, x, c], tir.const(0, F32)), name="relu")
    sch = tir.Schedule(te.create_prim_func([inp, filt, bias, relu]))
    x_tile = 10 if w_ % 10 == 0 else 5
    n, y, x, c = sch.get_loops(sch.get_block("relu"))
    co, ci = sch.split(c, [None, 2 * lanes])
    xo, xi = sch.split(x, [None, x_tile])
    sch.reorder(n, y, co, xo, xi, ci)
    sch.compute_at(sch.get_block("conv"), xo)
    b_conv = sch.get_block("conv")
    tx, tc, ly, lx, lc = sch.get_loops(b_conv)[-5:]
    sch.reorder(ly, lx, lc, tx, tc)
    init = sch.decompose_reduction(b_conv, ly)
    for px, ch in ((xi, ci), (tx, tc), tuple(sch.get_loops(init)[-2:])):
        sch.vectorize(ch)
        sch.unroll(px)
    if parallel:
        sch.parallel(sch.fuse(n, y))
    return sch.mod["main"]


def te_matmul(s: dict, lanes: int, parallel: bool) -> tir.PrimFunc:
    """C = A @ B, B packed by the schedule into 2 x lanes column panels, C tiled 8 x 2 lanes.

    cache_read copies B, transform_layout stores the copy as [N / bn, K, bn] (each
    panel contiguous), cache_write gives the tile a local accumulator that the
    build keeps in registers.
    """
    from tir import te

    m = s["M"]
    bn, mr = 2 * lanes, 8
    a = te.placeholder((m, m), F32, "A")
    b = te.placeholder((m, m), F32, "B")
    k = te.reduce_axis((0, m), "k")
    c = te.compute((m, m), lambda i, j: te.sum(a[i, k] * b[k, j], axis=k), name="C")
    sch = tir.Schedule(te.create_prim_func([a, b, c]))
    b_c = sch.get_block("C")
    packed = sch.cache_read(b_c, 1, "global")
    sch.transform_layout(packed, ("write", 0), lambda kk, jj: (jj // bn, kk, jj % bn))
    i, j, kk = sch.get_loops(b_c)
    io, ii = sch.split(i, [None, mr])
    jo, ji = sch.split(j, [None, bn])
    ko, ki = sch.split(kk, [None, 4])
    sch.reorder(jo, io, ko, ki, ii, ji)
    b_cc = sch.cache_write(b_c, 0, "local")
    sch.reverse_compute_at(b_cc, io)
    sch.vectorize(sch.get_loops(b_cc)[-1])
    sch.vectorize(ji)
    sch.unroll(ii)
    sch.unroll(ki)
    pk, pj = sch.get_loops(packed)
    pjo, pji = sch.split(pj, [None, lanes])
    sch.reorder(pjo, pk, pji)
    sch.vectorize(pji)
    if parallel:
        if m >= 1024:  # a launch costs ~0.1 ms: not worth it for a 1 MB copy
            sch.parallel(pjo)
        sch.parallel(jo)
    sch.decompose_reduction(b_c, ko)
    return sch.mod["main"]


def te_blur(s: dict, lanes: int, parallel: bool) -> tir.PrimFunc:
    """Halide's classic: blur_y in 32 x 256 tiles, blur_x computed at the tile, both vectorized."""
    from tir import te

    h_, w_ = s["H"], s["W"]
    a = te.placeholder((h_ + 2, w_ + 2), F32, "A")
    three = tir.const(3, F32)
    bx = te.compute((h_ + 2, w_), lambda y, x: (a[y, x] + a[y, x + 1] + a[y, x + 2]) / three,
                    name="blur_x")
    by = te.compute((h_, w_), lambda y, x: (bx[y, x] + bx[y + 1, x] + bx[y + 2, x]) / three,
                    name="blur_y")
    sch = tir.Schedule(te.create_prim_func([a, by]))
    b_y, b_x = sch.get_block("blur_y"), sch.get_block("blur_x")
    y, x = sch.get_loops(b_y)
    yo, yi = sch.split(y, [None, 32])
    xo, xi = sch.split(x, [None, 256])
    sch.reorder(yo, xo, yi, xi)
    sch.vectorize(sch.split(xi, [None, lanes])[1])
    sch.compute_at(b_x, xo)
    sch.vectorize(sch.split(sch.get_loops(b_x)[-1], [None, lanes])[1])
    if parallel:
        sch.parallel(yo)
    return sch.mod["main"]


TE_KERNELS = {"conv": te_conv, "matmul512": te_matmul, "matmul1024": te_matmul, "blur": te_blur}


# ---------------------------------------------------------------- tirlite: ir_builder baseline


def ib_matmul(s: dict, lanes: int, parallel: bool) -> tir.PrimFunc:
    """C = A @ B as a user writes it with the ir_builder: i-k-j, j vectorized by ``lanes``."""
    m = s["M"]
    bufs = [tir.decl_buffer((m, m), F32, name) for name in "ABC"]
    ib = ir_builder.create()
    A, B, C = (ib.buffer_ptr(b) for b in bufs)
    with ib.for_range(0, m, name="i", kind="parallel" if parallel else "serial") as i:
        with (ib.for_range(0, m // lanes, name="jo") as jo,
              ib.for_range(0, lanes, name="j", kind="vectorize") as j):
            C[i, jo * lanes + j] = tir.const(0, F32)
        with (ib.for_range(0, m, name="k") as k,
              ib.for_range(0, m // lanes, name="jo") as jo,
              ib.for_range(0, lanes, name="j", kind="vectorize") as j):
            C[i, jo * lanes + j] = C[i, jo * lanes + j] + A[i, k] * B[k, jo * lanes + j]
    return tir.PrimFunc(bufs, ib.get())


IB_KERNELS = {"matmul512": ib_matmul, "matmul1024": ib_matmul}


# ---------------------------------------------------------------- workers


def start_workers(config: dict) -> dict:
    """The NumPy all-cores worker, and TVM and Halide when their venv's Python is named."""
    threads = str(_CORES)
    specs = [("numpy", sys.executable, "bench_schedule_common.py",
              {"OPENBLAS_NUM_THREADS": threads, "OMP_NUM_THREADS": threads})]
    for label, var, script, env in (
            ("tvm", "TVM_PYTHON", "bench_schedule_tvm.py", {"TVM_NUM_THREADS": threads}),
            ("halide", "HALIDE_PYTHON", "bench_schedule_halide.py", {"HL_NUM_THREADS": threads})):
        python = os.environ.get(var)
        if not python:
            print(f"note: {var} is not set, {label} skipped (see benchmarks/README.md)")
            continue
        specs.append((label, python, script, env))
    workers = {}
    for label, python, script, env in specs:
        try:
            workers[label] = Worker(label, python, script, config, env)
        except (OSError, RuntimeError, json.JSONDecodeError) as err:
            print(f"note: {label} worker failed to start, skipped: {err}")
    return workers


# ---------------------------------------------------------------- timing


def _timed(fn: Callable) -> Callable:
    def run() -> float:
        start = time.perf_counter()
        fn()
        return (time.perf_counter() - start) * 1e3
    return run


def interleaved_ms(candidates: dict, runs: int, warmup: int = 1) -> dict:
    """Each candidate's ms in ``runs`` rounds after ``warmup``; a round calls every candidate
    twice in a row and keeps the second time (its own data back in the caches)."""
    for _ in range(warmup):
        for fn in candidates.values():
            fn()
    times: dict = {name: [] for name in candidates}
    for _ in range(runs):
        for name, fn in candidates.items():
            fn()
            times[name].append(fn())
    return times


def blocked_ms(candidates: dict, runs: int, warmup: int = 1, pause: float = 0.5) -> dict:
    """Like ``interleaved_ms``, but each candidate's rounds run back to back, after a pause.

    For the all-cores rows: thread pools (OpenBLAS, TVM's) spin-wait for a while after
    a call, so a candidate timed right after another one would share its cores with
    the other's idle spinners. Each candidate gets the machine to itself instead.
    """
    times: dict = {name: [] for name in candidates}
    for name, fn in candidates.items():
        time.sleep(pause)
        for _ in range(warmup):
            fn()
        for _ in range(runs):
            fn()
            times[name].append(fn())
    return times


def _tirlite_candidate(label: str, make: Callable, kernel: str, args: list, row: dict,
                       candidates: dict) -> None:
    """Build ``make()`` and add it to ``candidates``; a failure is the row's error for ``label``."""
    try:
        func = make()
    except Exception as err:  # noqa: BLE001 (te/schedule pieces may be missing)
        row["errors"][label] = f"not available ({common.error_text(err)})"
        return
    try:
        start = time.perf_counter()
        module = codegen.build(func, target="llvm")
        row["compile_ms"][label] = (time.perf_counter() - start) * 1e3
    except Exception as err:  # noqa: BLE001
        row["errors"][label] = f"build failed ({common.error_text(err)})"
        return
    entry = module["main"]
    candidates[label] = (lambda e=entry: e(*args))


def _checked(kernel: str, args: list, candidates: dict, row: dict) -> dict:
    """The candidates that compute the right result, timed; the others noted in ``row``."""
    checked: dict = {}
    for label, fn in candidates.items():
        try:
            common.run_and_check(kernel, args, fn)
        except AssertionError as err:
            row["wrong"].append(label)
            row["errors"][label] = f"WRONG RESULT: {common.error_text(err)}"
            continue
        except Exception as err:  # noqa: BLE001 (a run that raises is reported, not timed)
            row["errors"][label] = f"run failed ({common.error_text(err)})"
            continue
        checked[label] = _timed(fn)
    return checked


def _add_peers(name: str, parallel: bool, workers: dict, row: dict, checked: dict) -> None:
    """Each peer worker's kernel for row ``name`` into ``checked``, or its error into ``row``."""
    for label, worker in workers.items():
        if label == "numpy" and not parallel:
            continue
        status = worker.ready.get(name, {"error": "not written for this peer"})
        if "ok" in status:
            checked[label] = (lambda w=worker: w.run_ms(name))
        elif status["error"].startswith("WRONG RESULT"):
            row["wrong"].append(label)
            row["errors"][label] = status["error"]
        else:
            row["errors"][label] = status["error"]


def measure(name: str, quick: bool, lanes: int, runs: int, workers: dict) -> dict:
    """Build, check and time one row for every candidate."""
    kernel, parallel = common.row_kernel(name), common.row_threads(name) == "all"
    s = common.shape(kernel, quick)
    args = common.arrays(kernel, quick)
    row: dict = {"row": name, "kernel": kernel, "threads": _CORES if parallel else 1,
                 "size": common.describe(kernel, quick), "flops": common.flops(kernel, quick),
                 "errors": {}, "wrong": [], "compile_ms": {}}
    candidates: dict = {}
    _tirlite_candidate("tirlite", lambda: TE_KERNELS[kernel](s, lanes, parallel), kernel, args,
                       row, candidates)
    if kernel in IB_KERNELS:
        _tirlite_candidate("tirlite ib", lambda: IB_KERNELS[kernel](s, lanes, parallel), kernel,
                           args, row, candidates)
    if not parallel:
        candidates["numpy"] = common.numpy_fn(kernel, args)
    checked = _checked(kernel, args, candidates, row)
    _add_peers(name, parallel, workers, row, checked)
    timer = blocked_ms if parallel else interleaved_ms
    try:
        raw = timer(checked, runs)
    except WorkerDied as err:  # time the others without it, and say so
        row["errors"][err.label] = str(err)
        del workers[err.label], checked[err.label]
        raw = timer(checked, runs)
    times = {label: statistics.median(t) for label, t in raw.items()}
    row["ms"] = {label: times.get(label) for label in CANDIDATES}
    row["min_ms"] = {label: min(t) for label, t in raw.items()}
    row["gflops"] = {label: (row["flops"] / (t * 1e6) if row["flops"] and t else None)
                     for label, t in row["ms"].items()}
    peers = [p for p in PEERS if p in times]
    row["best_peer"] = min(peers, key=times.get, default=None)
    row["best_peer_over_tirlite"] = (times[row["best_peer"]] / times["tirlite"]
                                     if peers and "tirlite" in times else None)
    return row


# ---------------------------------------------------------------- report


def _cell(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def print_table(rows: list, meta: dict) -> None:
    peak = meta["peak"]
    head = (f"{'row':<15}{'size':<26}" + "".join(f"{c + ' ms':>14}" for c in CANDIDATES)
            + f"{'peer/tirlite':>14}  best peer")
    print(head)
    print("-" * len(head))
    for r in rows:
        print(f"{r['row']:<15}{r['size']:<26}"
              + "".join(f"{_cell(r['ms'][c]):>14}" for c in CANDIDATES)
              + f"{_cell(r['best_peer_over_tirlite'], 2):>14}  {r['best_peer'] or '-'}")
    print("\nGFLOP/s (% of the measured FMA peak for the row's threads)")
    for r in rows:
        if not r["flops"]:
            continue
        top = peak["per_core"] if r["threads"] == 1 else peak["all_cores"]
        cells = []
        for c in CANDIDATES:
            g = r["gflops"][c]
            cells.append("-" if g is None else
                         f"{g:.1f} ({100 * g / top:.0f}%)" if top else f"{g:.1f}")
        print(f"{r['row']:<15}" + "".join(f"{c}: {v}   " for c, v in zip(CANDIDATES, cells)))
    for r in rows:
        for label, err in r["errors"].items():
            print(f"  {r['row']}: {label}: {err}")
    print(f"\nFMA peak (bench_schedule_peak.py): {_cell(peak['per_core'], 1)} GFLOP/s per core, "
          f"{_cell(peak['all_cores'], 1)} GFLOP/s on {peak['threads']} cores")
    print(f"median of {meta['runs']} interleaved rounds (the second of two calls in a row) after "
          f"1 warm-up round; single-thread rows have no parallel loop and OpenBLAS on 1 thread; "
          f"_mt rows: {_CORES} threads, each candidate timed alone after a pause (no "
          f"interleaving: idle pools spin)")
    if max(meta["load_before"], meta["load_after"]) >= 1 and any(r["threads"] > 1 for r in rows):
        print("WARNING: load average >= 1: another process holds a core, so the _mt rows and the "
              "all-cores peak are not meaningful (OpenBLAS and TVM's pool spin-wait on it)")
    print(f"host: {meta['cpu']}; numpy {np.__version__}, tvm {meta['tvm']}, halide "
          f"{meta['halide']}; load average {meta['load_before']:.1f} before, "
          f"{meta['load_after']:.1f} after; tirlite {meta['tirlite_source']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, 3 timed rounds")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "schedule_results.json"))
    parser.add_argument("--kernels", default=",".join(common.KERNELS),
                        help="comma-separated subset of " + ",".join(common.KERNELS))
    parser.add_argument("--threads", choices=("1", "all", "both"), default="both",
                        help="the single-thread rows, the all-cores rows, or both")
    parser.add_argument("--no-peak", action="store_true", help="skip the FMA peak probe")
    opts = parser.parse_args()
    names = [k for k in opts.kernels.split(",") if k]
    unknown = set(names) - set(common.KERNELS)
    if unknown:
        parser.error(f"unknown kernels: {sorted(unknown)}")
    row_names = [r for r in common.rows(names)
                 if opts.threads == "both" or common.row_threads(r) == opts.threads]
    runs = 3 if opts.quick else 9
    lanes = codegen.Target("llvm").vector_width_bits // 32
    import llvmlite.binding as llvm

    meta = {"quick": opts.quick, "runs": runs, "lanes": lanes, "tirlite_source": source_version(),
            "cpu": f"{llvm.get_host_cpu_name()}, {_CORES} cores",
            "load_before": os.getloadavg()[0]}
    if opts.no_peak:
        meta["peak"] = {"per_core": None, "all_cores": None, "threads": _CORES}
    else:
        meta["peak"] = peak_probe.measure(quick=opts.quick, threads=_CORES)
        peak_probe.print_peak(meta["peak"])
        print()
    config = {"quick": opts.quick, "lanes": lanes, "rows": row_names,
              "mcpu": llvm.get_host_cpu_name(), "triple": llvm.get_process_triple()}
    workers = start_workers(config)
    meta["tvm"] = workers["tvm"].meta.get("version") if "tvm" in workers else None
    meta["halide"] = workers["halide"].meta.get("version") if "halide" in workers else None
    try:
        rows = [measure(name, opts.quick, lanes, runs, workers) for name in row_names]
    finally:
        for worker in workers.values():
            worker.close()
    meta["load_after"] = os.getloadavg()[0]
    print_table(rows, meta)
    Path(opts.out).write_text(json.dumps({"meta": meta, "rows": rows}, indent=2) + "\n")
    wrong = [(r["row"], w) for r in rows for w in r["wrong"]]
    if wrong:
        print(f"\nWRONG RESULTS (not timed): {wrong}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
