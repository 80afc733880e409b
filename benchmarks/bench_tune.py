"""Automatic schedules, 1 thread: tirlite's default and tuned against BLAS, TVM and Halide.

    .venv/bin/python benchmarks/bench_tune.py                    # all kernels, 64 trials each
    .venv/bin/python benchmarks/bench_tune.py --quick            # small sizes, 8 trials
    TIRLITE_HOST_TARGET="llvm -mcpu=znver3" .venv/bin/python benchmarks/bench_tune.py  # AVX2
    TVM_PYTHON=/work/tvm-venv/bin/python HALIDE_PYTHON=/work/halide-venv/bin/python \\
        .venv/bin/python benchmarks/bench_tune.py --kernels matmul512,conv --trials 64

Candidates, each on one thread, each checked against NumPy before it is timed:

- **tirlite default**: ``ms.apply_default_schedule`` (rules sized by the target, no search);
- **tirlite tuned**: ``ms.tune_tir`` with ``--trials`` candidates (database in
  ``--db``, per target; a second run reuses it: ``--fresh`` starts over), then
  ``compile_tir``; the table gives its tuning time, trials per minute and the
  time it took to reach 90% of its final speed;
- **tirlite hand**: bench_schedule.py's hand schedule (matmul, conv), with the
  tiles it was written with;
- **numpy**: NumPy on OpenBLAS (``threadpoolctl`` names the kernel it picked;
  under an AVX2 override, ``OPENBLAS_CORETYPE=Haswell`` makes it pick the AVX2
  one, and ``NPY_DISABLE_CPU_FEATURES`` keeps NumPy's own loops on AVX2) and
  **torch** (PyTorch's CPU matmul, oneDNN/MKL) where installed;
- **tvm ms**: TVM's MetaSchedule ``tune_tir`` at the same trial budget, and
  **halide m16** / **halide a19**: Halide's Mullapudi2016 and Adams2019
  autoschedulers, in their own venvs (bench_tune_tvm.py, bench_tune_halide.py;
  ``TVM_PYTHON`` / ``HALIDE_PYTHON``, see benchmarks/README.md).

Under ``TIRLITE_HOST_TARGET`` the peers are asked for the same CPU where they
can be (TVM's ``-mcpu``, Halide's target features, OpenBLAS's core type).
Results: benchmarks/tune_results_<cpu>.json.
"""

from __future__ import annotations

import os

_OVERRIDE = os.environ.get("TIRLITE_HOST_TARGET", "").strip()
for _var in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
             "TIRLITE_NUM_THREADS", "TVM_NUM_THREADS", "HL_NUM_THREADS"):
    os.environ[_var] = "1"
if _OVERRIDE and "avx512" not in _OVERRIDE:
    os.environ.setdefault("OPENBLAS_CORETYPE", "Haswell")  # OpenBLAS's AVX2 kernels
    # NumPy's exp, max and sum dispatch on the real CPU: without this its AVX-512 loops
    # would stand in for an AVX2 machine's (names of NumPy 2.4 and of 1.x; unknown ones
    # are ignored)
    os.environ.setdefault("NPY_DISABLE_CPU_FEATURES",
                          "X86_V4 AVX512_SPR AVX512_ICL AVX512_CNL AVX512_CLX AVX512_SKX AVX512F")

import argparse  # noqa: E402
import json  # noqa: E402
import shutil  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import bench_schedule_peak as peak_probe  # noqa: E402
import bench_tune_common as common  # noqa: E402
from bench_schedule import TE_KERNELS, _timed, interleaved_ms  # noqa: E402
from bench_workers import Worker, WorkerDied, source_version  # noqa: E402

os.environ["TIRLITE_NUM_THREADS"] = "1"  # bench_schedule sets all cores for its own rows

import codegen  # noqa: E402
from tirlite import meta_schedule as ms  # noqa: E402
from tirlite.meta_schedule.testing import te_workload as W  # noqa: E402

CANDIDATES = ("tirlite default", "tirlite tuned", "tirlite hand", "numpy", "torch", "tvm ms",
              "halide m16", "halide a19")


def workload(kernel: str, quick: bool):
    """The unscheduled PrimFunc of ``kernel`` (tirlite's te, as a user writes it)."""
    s = common.shape(kernel, quick)
    if kernel.startswith("matmul"):
        return W.matmul(s["M"])
    if kernel == "conv":
        return W.conv2d_nhwc_bias_relu(s["N"], s["H"], s["W"], s["CI"], s["CO"])
    if kernel == "softmax":
        return W.softmax_rows(s["rows"], s["cols"])
    if kernel == "layernorm":
        return W.layernorm_rows(s["rows"], s["cols"])
    raise KeyError(kernel)


def tune(kernel: str, func, trials: int, db_dir: Path, seed: int) -> tuple:
    """Tune ``func``; the tuned schedule's function and the tuning statistics."""
    start = time.perf_counter()
    times: list[tuple[float, float]] = []  # (seconds since start, best GFLOP/s so far)
    db = ms.tune_tir(func, "llvm", work_dir=str(db_dir), max_trials_global=trials, seed=seed,
                     progress=sys.stderr.isatty())
    elapsed = time.perf_counter() - start
    records = [r for r in db.get_all_tuning_records()
               if r.run_secs and not r.meta.get("confirmed")]  # trials, not the final re-timing
    best = None
    for k, r in enumerate(sorted(records, key=lambda r: r.meta.get("trial", 0))):
        secs = min(r.run_secs)
        best = secs if best is None else min(best, secs)
        times.append((k + 1, best))
    to_90 = next((n for n, b in times if b <= best / 0.9), None) if best else None
    sch = ms.tir_integration.compile_tir(db, func, "llvm")
    return sch.mod["main"], {"tune_s": elapsed, "trials": len(records),
                             "trials_per_min": 60 * len(records) / elapsed if elapsed else None,
                             "trials_to_90pct": to_90}


def start_workers(config: dict) -> dict:
    """TVM's and Halide's workers, when their venv's Python is named."""
    workers = {}
    for label, var, script in (("tvm", "TVM_PYTHON", "bench_tune_tvm.py"),
                               ("halide", "HALIDE_PYTHON", "bench_tune_halide.py")):
        python = os.environ.get(var)
        if not python:
            print(f"note: {var} is not set, {label} skipped (see benchmarks/README.md)")
            continue
        try:
            workers[label] = Worker(label, python, script, config)
        except (OSError, RuntimeError, json.JSONDecodeError) as err:
            print(f"note: {label} worker failed to start, skipped: {err}")
    return workers


def blas_info() -> str:
    """The BLAS NumPy calls and the kernel it picked for this CPU (threadpoolctl)."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return "unknown (pip install threadpoolctl)"
    blas = [i for i in threadpool_info() if i.get("user_api") == "blas"]
    if not blas:
        return "unknown"
    b = blas[0]
    return f"{b.get('internal_api')} {b.get('version')} ({b.get('architecture')} kernels)"


def torch_fn(kernel: str, args: list):
    """PyTorch's CPU version of ``kernel`` on the same arrays (None when not installed)."""
    try:
        import torch
    except ImportError:
        return None
    torch.set_num_threads(1)
    t = [torch.from_numpy(a) for a in args]
    if kernel.startswith("matmul"):
        return lambda: torch.matmul(t[0], t[1], out=t[2])
    if kernel == "softmax":
        return lambda: t[1].copy_(torch.softmax(t[0], dim=1))
    if kernel == "layernorm":
        n = t[0].shape[1]
        return lambda: t[3].copy_(torch.nn.functional.layer_norm(t[0], (n,), t[1], t[2], 1e-5))
    return None


def measure(kernel: str, opts, workers: dict, db_root: Path) -> dict:
    """Build, check and time every candidate of one kernel."""
    args = common.arrays(kernel, opts.quick)
    want = common.expected(kernel, args)
    func = workload(kernel, opts.quick)
    row = {"kernel": kernel, "size": common.describe(kernel, opts.quick),
           "flops": common.flops(kernel, opts.quick), "ms": {}, "errors": {}, "tuning": None}
    fns = {}

    def add(label, make):
        try:
            fn = make()
        except Exception as err:  # noqa: BLE001 (a missing peer or a failed build is a row note)
            row["errors"][label] = f"{type(err).__name__}: {err}"[:300]
            return
        if fn is None:
            return
        args[-1][...] = 0
        fn()
        try:
            common.check(kernel, args[-1], want)
        except AssertionError as err:
            row["errors"][label] = f"WRONG RESULT: {str(err)[:200]}"
            return
        fns[label] = _timed(fn)

    def built(f):
        m = codegen.build(f)
        return lambda: m(*args)

    add("tirlite default", lambda: built(ms.apply_default_schedule(func)))
    db_dir = db_root / kernel
    if opts.fresh and db_dir.exists():
        shutil.rmtree(db_dir)

    def tuned():
        f, row["tuning"] = tune(kernel, func, opts.trials, db_dir, opts.seed)
        return built(f)

    add("tirlite tuned", tuned)
    if kernel in TE_KERNELS:
        lanes = codegen.Target("llvm").vector_width_bits // 32
        add("tirlite hand", lambda: built(TE_KERNELS[kernel](common.shape(kernel, opts.quick),
                                                             lanes, False)))
    add("numpy", lambda: common.numpy_fn(kernel, args))
    add("torch", lambda: torch_fn(kernel, args))
    times = interleaved_ms(fns, opts.runs)
    row["ms"] = {label: statistics.median(t) for label, t in times.items()}
    for worker in workers.values():
        _time_peer(kernel, worker, opts.runs, row)
    return row


def _time_peer(kernel: str, worker: Worker, runs: int, row: dict) -> None:
    """Time each of ``worker``'s candidates for ``kernel`` into ``row`` (or note its error)."""
    for cand, ready in worker.ready.items():
        if not cand.startswith(kernel + ":"):
            continue
        name = cand.split(":", 1)[1]
        if not (ready is True or (isinstance(ready, dict) and ready.get("ok"))):
            row["errors"][name] = str(ready.get("error") if isinstance(ready, dict) else ready)
            continue
        try:
            worker.run_ms(cand)  # the second of two calls in a row, as for tirlite's
            row["ms"][name] = statistics.median(worker.run_ms(cand) for _ in range(runs))
        except WorkerDied as err:
            row["errors"][name] = str(err)
    for key, value in worker.meta.get("tuning", {}).get(kernel, {}).items():
        row.setdefault("peer_tuning", {})[key] = value


def print_table(rows: list, meta: dict) -> None:
    peak = meta["peak"]["per_core"]
    present = [c for c in CANDIDATES if any(c in r["ms"] for r in rows)]
    head = f"{'kernel':<12}{'size':<24}" + "".join(f"{c:>17}" for c in present)
    print(head + "\n" + "-" * len(head))
    for r in rows:
        cells = []
        for c in present:
            t = r["ms"].get(c)
            if t is None:
                cells.append("-")
            elif r["flops"]:
                g = r["flops"] / t / 1e6
                cells.append(f"{g:.1f}" + (f" ({100 * g / peak:.0f}%)" if peak else ""))
            else:
                cells.append(f"{t:.2f} ms")
        print(f"{r['kernel']:<12}{r['size']:<24}" + "".join(f"{v:>17}" for v in cells))
    print("\nGFLOP/s (% of the FMA peak) for matmul and conv, ms for softmax and layernorm; "
          f"median of {meta['runs']} interleaved rounds, 1 thread")
    for r in rows:
        t = r["tuning"]
        if t:
            print(f"  {r['kernel']}: tuned {t['trials']} trials in {t['tune_s']:.0f} s "
                  f"({t['trials_per_min']:.0f}/min), 90% of the final speed after "
                  f"{t['trials_to_90pct']} trials")
        for k, v in r.get("peer_tuning", {}).items():
            print(f"  {r['kernel']}: {k}: {v}")
        for label, err in r["errors"].items():
            print(f"  {r['kernel']}: {label}: {err}")
    print(f"\nFMA peak: {peak_probe._gf(peak)} GFLOP/s per core; BLAS: {meta['blas']}")
    print(f"host: {meta['cpu']}; tirlite target {meta['target']}; {meta['tirlite_source']}; "
          f"tvm {meta['tvm']}, halide {meta['halide']}; load average {meta['load_before']:.1f} "
          f"before, {meta['load_after']:.1f} after")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, 8 trials, 3 rounds")
    parser.add_argument("--kernels", default=",".join(common.KERNELS))
    parser.add_argument("--trials", type=int, default=None, help="trials per kernel (64)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--fresh", action="store_true", help="forget earlier tuning records")
    parser.add_argument("--db", default=str(ROOT / "benchmarks" / "tune_db"))
    parser.add_argument("--no-peak", action="store_true")
    opts = parser.parse_args()
    opts.trials = opts.trials or (8 if opts.quick else 64)
    opts.runs = 3 if opts.quick else 9
    kernels = [k for k in opts.kernels.split(",") if k]
    unknown = set(kernels) - set(common.KERNELS)
    if unknown:
        parser.error(f"unknown kernels: {sorted(unknown)}")
    import llvmlite.binding as llvm

    target = codegen.Target("llvm")
    meta = {"quick": opts.quick, "runs": opts.runs, "trials": opts.trials,
            "target": f"{target.mcpu} ({target.vector_width_bits}-bit)",
            "cpu": f"{llvm.get_host_cpu_name()}, {os.cpu_count()} cores",
            "tirlite_source": source_version(), "load_before": os.getloadavg()[0],
            "blas": blas_info()}
    meta["peak"] = ({"per_core": None} if opts.no_peak else
                    peak_probe.measure(quick=opts.quick, threads=1))
    config = {"quick": opts.quick, "rows": kernels, "trials": opts.trials,
              "mcpu": target.mcpu, "triple": target.triple,
              "vector_bits": target.vector_width_bits}
    workers = start_workers(config)
    meta["tvm"] = workers["tvm"].meta.get("version") if "tvm" in workers else None
    meta["halide"] = workers["halide"].meta.get("version") if "halide" in workers else None
    db_root = Path(opts.db) / target.mcpu
    try:
        rows = [measure(k, opts, workers, db_root) for k in kernels]
    finally:
        for w in workers.values():
            w.close()
    meta["load_after"] = os.getloadavg()[0]
    print_table(rows, meta)
    out = ROOT / "benchmarks" / f"tune_results_{target.mcpu}.json"
    out.write_text(json.dumps({"meta": meta, "rows": rows}, indent=2, default=str) + "\n")
    if any("WRONG" in e for r in rows for e in r["errors"].values()):
        sys.exit(1)


if __name__ == "__main__":
    main()
