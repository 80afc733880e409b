"""bench_tune.py's kernels tuned by TVM's MetaSchedule (``tune_tir``), a worker in TVM's venv.

bench_tune.py starts this as ``$TVM_PYTHON benchmarks/bench_tune_tvm.py CONFIG_JSON``
and drives it through bench_access_common.serve: it defines, tunes, compiles
and checks every kernel, prints one JSON hello, then runs one candidate per
line of stdin and prints its time in ms.

Config (JSON, the first argument): ``rows`` (kernel names, bench_tune_common.KERNELS),
``quick`` (the small sizes), ``trials`` (``max_trials_global`` of each kernel's
``tune_tir``), ``mcpu`` and ``triple`` (LLVM's host CPU and triple, e.g. ``znver4``,
``x86_64-unknown-linux-gnu``); optional ``seed`` (0) and ``keep_work_dir`` (false:
the tuning databases and logs are deleted once the hello is out).

The candidate is ``"<kernel>:tvm ms"`` in the hello's ``ready`` (``{"ok": true}``
or ``{"error": "..."}``). Per kernel:

1. the kernel in ``tvm.te`` (matmul ``C = A @ B``; conv as bench_schedule_tvm.py:
   ``conv`` a pure sum, ``relu = max(conv + bias, 0)``, the epilogue TVM's
   rules inline; softmax and layernorm as tirlite's te workloads), made a
   PrimFunc by ``te.create_prim_func``;
2. ``tune_tir(func, target, work_dir, max_trials_global=trials)``, target
   ``{"kind": "llvm", "mcpu": mcpu, "mtriple": triple, "num-cores": 1}`` (TVM
   0.25+ takes no target strings; older versions get ``llvm -mcpu=... -num-cores=1``),
   with TVM's defaults (64 candidates a batch, XGBoost cost model, evolutionary
   search, LocalRunner), in a fresh work_dir under /tmp, except the builder:
   TVM's LocalBuilder restarts its worker processes for each batch, and its
   default build function imports ``tvm.s_tir.tensor_intrin`` in each (15-20 s
   in TVM 0.25, mostly the CUDA intrinsics' TVMScript), so that under its
   30 s timeout all 8 builds of a 128^3 matmul timed out on a busy 2-core
   machine; ``_build`` here is that function without the import (no float32
   CPU schedule tensorizes), under the same 30 s timeout (a candidate whose
   LLVM build takes longer, e.g. a softmax with its 1024-long loops unrolled,
   is a failed trial, as in TVM);
3. ``compile_tir`` on the best record, ``tvm.compile``, one run checked against
   bench_tune_common.expected.

One thread: ``num-cores`` 1 makes the rules size their parallel loops for one
core, and ``TVM_NUM_THREADS=1`` (set here unless the caller set it) gives TVM's
pool one thread, in this process and in the runner's.

The tuning runs in a child process of this script (``--tune``), so that a crash
inside TVM is that kernel's error and the child is restarted for the kernels
after it: apache-tvm 0.26.0 and 0.27.0.post1 with apache-tvm-ffi 0.1.15.post2
(what pip picks: they ask for >= 0.1.13.post2 and >= 0.1.14.post0) die with a
segfault in ``tvm::ffi::ToJSONGraph`` before the first trial; with 0.1.13.post3
or 0.1.14.post1 they tune. ``import tvm`` failing makes every row that error:
apache-tvm 0.25.0.post1 (which asks for >= 0.1.12) runs only with
apache-tvm-ffi 0.1.12; with a later one ``libtvm_runtime.so: undefined symbol
_ZN3tvm3ffi4json9Stringify...`` (``Optional<int>`` became ``const&`` in 0.1.13).

The hello's ``tuning`` gives, per kernel, under ``"tvm ms"``: ``tune_s`` (the
wall time of ``tune_tir``), ``trials`` (records measured), ``failed`` (records
that did not build or run), ``best_ms`` (the best time MetaSchedule's runner
measured) and ``compile_s``; ``startup_s`` in the hello is the one-off import
of ``tvm.s_tir.tensor_intrin`` that ``TuneContext`` does (kept out of ``tune_s``).
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

os.environ.setdefault("TVM_NUM_THREADS", "1")

import bench_tune_common as common  # noqa: E402 (the same directory)
from bench_access_common import error_text, serve  # noqa: E402

LABEL = "tvm ms"
BUILD_TIMEOUT_S = 30  # TVM's default
FAILED = 1e9  # MetaSchedule records a failed build or run as 1e10 s


def _tvm():
    """tvm and the modules whose names changed: (tvm, te, tir, meta_schedule)."""
    import tvm
    from tvm import te

    tir = getattr(tvm, "tirx", None) or tvm.tir  # 0.25+: tvm.tirx
    s_tir = getattr(tvm, "s_tir", None)
    if s_tir is not None and hasattr(s_tir, "meta_schedule"):
        ms = s_tir.meta_schedule  # 0.25+
    else:
        from tvm import meta_schedule as ms
    return tvm, te, tir, ms


def make_target(config: dict):
    tvm = _tvm()[0]
    try:
        return tvm.target.Target({"kind": "llvm", "mcpu": config["mcpu"],
                                  "mtriple": config["triple"], "num-cores": 1})
    except Exception:  # noqa: BLE001 (older TVM: the string form)
        return tvm.target.Target(f"llvm -mcpu={config['mcpu']} -mtriple={config['triple']} "
                                 f"-num-cores=1")


# ---------------------------------------------------------------- the kernels in te


def workload(kernel: str, quick: bool):
    """The unscheduled PrimFunc of ``kernel``; arguments in bench_tune_common.arrays' order."""
    tvm, te, tir, _ = _tvm()
    f32 = "float32"
    s = common.shape(kernel, quick)
    if kernel.startswith("matmul"):
        m = s["M"]
        a, b = te.placeholder((m, m), f32, "A"), te.placeholder((m, m), f32, "B")
        k = te.reduce_axis((0, m), "k")
        c = te.compute((m, m), lambda i, j: te.sum(a[i, k] * b[k, j], axis=k), name="C")
        return te.create_prim_func([a, b, c])
    if kernel == "conv":
        n_, ci_, co_, w_, h_ = s["N"], s["CI"], s["CO"], s["W"], s["H"]
        inp = te.placeholder((n_, h_ + 2, w_ + 2, ci_), f32, "inp")
        filt = te.placeholder((ci_, 3, 3, co_), f32, "filt")
        bias = te.placeholder((co_,), f32, "bias")
        ry, rx, rc = (te.reduce_axis((0, 3), "ry"), te.reduce_axis((0, 3), "rx"),
                      te.reduce_axis((0, ci_), "rc"))
        conv = te.compute((n_, h_, w_, co_), lambda n, y, x, c: te.sum(
            inp[n, y + ry, x + rx, rc] * filt[rc, ry, rx, c], axis=[ry, rx, rc]), name="conv")
        relu = te.compute((n_, h_, w_, co_), lambda n, y, x, c: tir.max(
            conv[n, y, x, c] + bias[c], tir.const(0, f32)), name="relu")
        return te.create_prim_func([inp, filt, bias, relu])
    rows, cols = s["rows"], s["cols"]
    x = te.placeholder((rows, cols), f32, "x")
    k1, k2 = te.reduce_axis((0, cols), "k1"), te.reduce_axis((0, cols), "k2")
    if kernel == "softmax":
        mx = te.compute((rows,), lambda i: te.max(x[i, k1], axis=k1), name="row_max")
        e = te.compute((rows, cols), lambda i, j: tir.exp(x[i, j] - mx[i]), name="exp")
        total = te.compute((rows,), lambda i: te.sum(e[i, k2], axis=k2), name="row_sum")
        out = te.compute((rows, cols), lambda i, j: e[i, j] / total[i], name="softmax")
        return te.create_prim_func([x, out])
    if kernel == "layernorm":
        gamma, beta = te.placeholder((cols,), f32, "gamma"), te.placeholder((cols,), f32, "beta")
        s1 = te.compute((rows,), lambda i: te.sum(x[i, k1], axis=k1), name="row_sum")
        s2 = te.compute((rows,), lambda i: te.sum(x[i, k2] * x[i, k2], axis=k2), name="row_sq")
        inv = tir.const(1.0 / cols, f32)

        def norm(i, j):
            mean = s1[i] * inv
            var = s2[i] * inv - mean * mean
            return (x[i, j] - mean) / tir.sqrt(var + tir.const(1e-5, f32)) * gamma[j] + beta[j]

        out = te.compute((rows, cols), norm, name="layernorm")
        return te.create_prim_func([x, gamma, beta, out])
    raise KeyError(kernel)


# ---------------------------------------------------------------- tuning (the child process)


def _build(mod, target, _params):
    """MetaSchedule's default_build without ``import tvm.s_tir.tensor_intrin`` (see the top).

    Runs in the builder's worker processes (cloudpickle sends it by value).
    """
    from tvm.driver import build as tvm_build
    try:
        from tvm.s_tir.transform import RemoveWeightLayoutRewriteBlock
    except ImportError:
        from tvm.tir.transform import RemoveWeightLayoutRewriteBlock
    mod = RemoveWeightLayoutRewriteBlock(skip_tensor_rewrite=True)(mod)
    return tvm_build(mod, target=target)


MARK = "@bench_tune_tvm "  # the child's own lines on stdout start with it (TVM may print too)


def _emit(**fields) -> None:
    print(MARK + json.dumps(fields), flush=True)


def tune_child(config: dict) -> None:
    """Tune each of ``config["tune_rows"]`` into ``config["work_dirs"][kernel]``; JSON lines out."""
    start = time.perf_counter()
    tvm, _, _, ms = _tvm()
    try:  # TuneContext imports it on first use: take its time out of the first kernel's
        import tvm.s_tir.tensor_intrin  # noqa: F401
    except ImportError:
        pass
    target = make_target(config)
    builder = ms.builder.LocalBuilder(f_build=_build, timeout_sec=BUILD_TIMEOUT_S)
    _emit(startup_s=time.perf_counter() - start)
    for kernel in config["tune_rows"]:
        _emit(start=kernel)
        try:
            func = workload(kernel, config["quick"])
            t0 = time.perf_counter()
            ms.tune_tir(func, target, work_dir=config["work_dirs"][kernel],
                        max_trials_global=config["trials"], builder=builder,
                        seed=config.get("seed", 0))
            _emit(kernel=kernel, tune_s=time.perf_counter() - t0)
        except Exception as err:  # noqa: BLE001 (that kernel's error; tune the others)
            _emit(kernel=kernel, error=f"tune_tir: {error_text(err)}")


def _signal_text(code: int) -> str:
    if code < 0:
        try:
            return f"killed by signal {-code} ({signal.Signals(-code).name})"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exited with status {code}"


def tune_all(config: dict, kernels: list, work_dirs: dict) -> tuple:
    """Run the tuning child until every kernel has a result; (results per kernel, startup_s)."""
    results, startup = {}, None
    remaining = list(kernels)
    while remaining:
        child_config = {**config, "tune_rows": remaining, "work_dirs": work_dirs}
        with tempfile.TemporaryFile(mode="w+") as err_file:
            proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--tune",
                                     json.dumps(child_config)], stdout=subprocess.PIPE,
                                    stderr=err_file, text=True)
            current = None
            for line in proc.stdout:
                if not line.startswith(MARK):
                    continue
                msg = json.loads(line[len(MARK):])
                if "startup_s" in msg:
                    startup = msg["startup_s"] if startup is None else startup
                elif "start" in msg:
                    current = msg["start"]
                elif "kernel" in msg:
                    results[msg["kernel"]] = msg
                    current = None
            code = proc.wait()
            if current is None and all(k in results for k in remaining):
                break
            err_file.seek(0)
            lines = [ln.strip() for ln in err_file.read().splitlines() if ln.strip()]
            # TVM's crash handler prints the stack innermost first: keep its TVM frames
            tail = [ln for ln in lines if " in tvm::" in ln][:2] or lines[-3:]
        dead = current or remaining[0]  # died before its first kernel: blame that one
        results[dead] = {"kernel": dead, "error": f"tune_tir died: {_signal_text(code)}; "
                                                  f"stderr: {' | '.join(tail)[-400:]}"}
        remaining = [k for k in remaining if k not in results]
        if current is None:  # it died while starting up: the others would die the same way
            for k in remaining:
                results[k] = dict(results[dead], kernel=k)
            remaining = []
    return results, startup


# ---------------------------------------------------------------- the worker


@contextlib.contextmanager
def stdout_to_stderr():
    """Send what is printed on stdout (Python's or C's) to stderr: the hello must come first."""
    sys.stdout.flush()
    saved = os.dup(1)
    os.dup2(2, 1)
    try:
        with contextlib.redirect_stdout(sys.stderr):
            yield
    finally:
        sys.stdout.flush()
        ctypes.CDLL(None).fflush(None)  # C stdio's buffer, before fd 1 is stdout again
        os.dup2(saved, 1)
        os.close(saved)


def record_stats(ms, work_dir: str) -> dict:
    """Records in ``work_dir``'s JSON database: measured, failed, the best measured ms."""
    db = ms.database.JSONDatabase(work_dir=work_dir)
    secs = []
    for rec in db.get_all_tuning_records():
        run = [float(getattr(s, "value", s)) for s in (rec.run_secs or [])]
        secs.append(sum(run) / len(run) if run else FAILED * 10)
    ok = [s for s in secs if s < FAILED]
    return {"trials": len(ok), "failed": len(secs) - len(ok),
            "best_ms": round(min(ok) * 1e3, 4) if ok else None}, db


def tune_and_build(config: dict, kernels: list, root: str, meta: dict, ready: dict,
                   runners: dict) -> dict:
    """Tune every kernel (in the child), then compile and check the best of each; the stats."""
    tvm, _, _, ms = _tvm()
    quick, target = config["quick"], make_target(config)
    tuning = {}
    work_dirs = {k: os.path.join(root, k) for k in kernels}
    results, meta["startup_s"] = tune_all(config, kernels, work_dirs)
    compile_tir = getattr(ms, "tir_integration", ms).compile_tir
    compile_fn = getattr(tvm, "compile", None) or tvm.build
    to_device = getattr(tvm.runtime, "tensor", None) or tvm.nd.array
    dev = tvm.cpu()
    for kernel in kernels:
        cand = f"{kernel}:{LABEL}"
        res = results[kernel]
        if "error" in res:
            ready[cand] = {"error": res["error"]}
            continue
        try:
            stats, db = record_stats(ms, work_dirs[kernel])
            stats["tune_s"] = round(res["tune_s"], 2)
            tuning[kernel] = {LABEL: stats}
            func = workload(kernel, quick)
            start = time.perf_counter()
            sch = compile_tir(db, func, target)
            if sch is None:
                ready[cand] = {"error": f"no valid schedule in {stats['trials']} trials "
                                        f"({stats['failed']} failed)"}
                continue
            entry = compile_fn(sch.mod, target=target)["main"]
            stats["compile_s"] = round(time.perf_counter() - start, 2)
            args = common.arrays(kernel, quick)
            tensors = [to_device(a, dev) for a in args]
            run = (lambda e=entry, t=tensors: e(*t))
            tensors[-1].copyfrom(args[-1])  # zeroed
            run()
            try:
                common.check(kernel, tensors[-1].numpy(), common.expected(kernel, args))
            except AssertionError as err:
                ready[cand] = {"error": f"WRONG RESULT: {error_text(err)}"}
                continue
        except Exception as err:  # noqa: BLE001 (report it, build the others)
            ready[cand] = {"error": error_text(err)}
            continue
        runners[cand], ready[cand] = run, {"ok": True}
    return tuning


def main() -> None:
    if sys.argv[1] == "--tune":
        tune_child(json.loads(sys.argv[2]))
        return
    config = json.loads(sys.argv[1])
    kernels = list(config["rows"])
    ready, runners = {}, {}
    meta = {"version": None, "threads": os.environ.get("TVM_NUM_THREADS")}
    try:
        tvm = _tvm()[0]
        target = make_target(config)
    except Exception as err:  # noqa: BLE001 (e.g. libtvm_runtime.so and apache-tvm-ffi apart)
        text = f"import tvm: {error_text(err)}"
        serve({}, {f"{k}:{LABEL}": {"error": text} for k in kernels}, meta)
        return
    meta["version"] = tvm.__version__
    try:
        from importlib import metadata
        meta["ffi"] = metadata.version("apache-tvm-ffi")
    except Exception:  # noqa: BLE001 (older TVM: no separate ffi package)
        meta["ffi"] = None
    meta["target"] = str(target)
    meta["trials"] = config["trials"]
    root = tempfile.mkdtemp(prefix="bench_tune_tvm_", dir="/tmp")
    with stdout_to_stderr():
        tuning = tune_and_build(config, kernels, root, meta, ready, runners)
    meta["tuning"] = tuning
    if not config.get("keep_work_dir"):
        shutil.rmtree(root, ignore_errors=True)
    else:
        meta["work_dir"] = root
    serve(runners, ready, meta)


if __name__ == "__main__":
    main()
