"""bench_tune.py's kernels scheduled by Halide's autoschedulers, a worker in Halide's own venv.

bench_tune.py starts this as ``$HALIDE_PYTHON benchmarks/bench_tune_halide.py
CONFIG_JSON`` and drives it through bench_access_common.serve: it defines,
autoschedules, compiles and checks every kernel, prints one JSON hello, then
runs one candidate per line of stdin and prints its time in ms.

Config (JSON, the first argument): ``rows`` (kernel names, bench_tune_common.KERNELS),
``quick`` (the small sizes); optional ``vector_bits`` (below 512: the AVX-512
features are taken off the host target, to match an AVX2 run of tirlite).

Candidates, ``"<kernel>:halide m16"`` and ``"<kernel>:halide a19"`` in the hello's
``ready`` (``{"ok": true}`` or ``{"error": "..."}``):

- **halide m16**: Mullapudi2016 (``libautoschedule_mullapudi2016.so``),
  ``parallelism=1``, its other parameters at their defaults (last_level_cache_size
  16 MB, balance 40);
- **halide a19**: Adams2019 (``libautoschedule_adams2019.so``) with the weights
  built into the plugin (the shipped baseline), ``parallelism=1``, beam_size 32.

Both plugins come from the halide wheel's ``lib64``. One thread: the autoschedulers
are told there is one core, and ``HL_NUM_THREADS=1`` (set here unless the caller
set it) caps Halide's thread pool should a schedule still say ``parallel``.

Algorithms as Halide apps write them, each output and input with its bounds
estimates (the autoschedulers need them); Halide sees NumPy's dimensions
reversed, so ``x[i, j]`` (NumPy) is ``x(j, i)``:

- matmul: ``prod(x, y) = 0; prod(x, y) += A(k, y) * B(x, k); out(x, y) = prod(x, y)``;
- conv: the seed's conv_layer (as bench_schedule_halide.py): ``conv(c, x, y, n) =
  bias(c)``, ``+= filter(c, r.y, r.z, r.x) * input(r.x, x + r.y, y + r.z, n)``,
  ``relu = max(0, conv)``;
- softmax: ``mx(i) = maximum(x(r, i))``, ``e(j, i) = exp(x(j, i) - mx(i))``,
  ``s(i) = sum(e(r, i))``, ``out(j, i) = e(j, i) / s(i)``;
- layernorm: ``s1(i) = sum(x(r, i))``, ``s2(i) = sum(x(r, i)^2)``, ``mean = s1 / cols``,
  ``var = s2 / cols - mean^2``, ``out(j, i) = (x(j, i) - mean(i)) / sqrt(var(i) + 1e-5)
  * gamma(j) + beta(j)``.

The hello's ``tuning`` gives, per kernel and candidate, the seconds the
autoscheduler took (``schedule_s``), the compile seconds and the schedule's length.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import sys
import time
from importlib import metadata

os.environ.setdefault("HL_NUM_THREADS", "1")

import bench_tune_common as common  # noqa: E402 (the same directory)
import halide as hl  # noqa: E402
from bench_access_common import error_text, serve  # noqa: E402

F32 = hl.Float(32)

#: candidate label -> (plugin library, autoscheduler name, its parameters)
AUTOSCHEDULERS = {
    "halide m16": ("libautoschedule_mullapudi2016.so", "Mullapudi2016", {"parallelism": "1"}),
    "halide a19": ("libautoschedule_adams2019.so", "Adams2019", {"parallelism": "1"}),
}


@contextlib.contextmanager
def stdout_to_stderr():
    """Send what is printed on stdout (Python's or C's) to stderr: the hello must come first.

    Halide prints compiler warnings (e.g. "Not folding Func ...") on stdout.
    """
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


def _ranges(*extents: int) -> list:
    return [hl.Range(0, e) for e in extents]


def matmul(s: dict):
    m = s["M"]
    a, b = hl.ImageParam(F32, 2, "A"), hl.ImageParam(F32, 2, "B")  # a(k, i), b(j, k)
    x, y = hl.Var("x"), hl.Var("y")
    k = hl.RDom([(0, m)])
    prod, out = hl.Func("prod"), hl.Func("out")
    prod[x, y] = hl.f32(0)
    prod[x, y] += a[k.x, y] * b[x, k.x]
    out[x, y] = prod[x, y]
    a.set_estimates(_ranges(m, m))
    b.set_estimates(_ranges(m, m))
    out.set_estimates(_ranges(m, m))
    return out, [a, b]


def conv(s: dict):
    n_, ci_, co_, w_, h_ = s["N"], s["CI"], s["CO"], s["W"], s["H"]
    inp = hl.ImageParam(F32, 4, "input")  # input(ci, x, y, n)
    filt = hl.ImageParam(F32, 4, "filter")  # filter(co, kx, ky, ci)
    bias = hl.ImageParam(F32, 1, "bias")
    c, x, y, n = hl.Var("c"), hl.Var("x"), hl.Var("y"), hl.Var("n")
    r = hl.RDom([(0, ci_), (0, 3), (0, 3)])
    conv_f, relu = hl.Func("conv"), hl.Func("relu")
    conv_f[c, x, y, n] = bias[c]
    conv_f[c, x, y, n] += filt[c, r.y, r.z, r.x] * inp[r.x, x + r.y, y + r.z, n]
    relu[c, x, y, n] = hl.max(0, conv_f[c, x, y, n])
    inp.set_estimates(_ranges(ci_, w_ + 2, h_ + 2, n_))
    filt.set_estimates(_ranges(co_, 3, 3, ci_))
    bias.set_estimates(_ranges(co_))
    relu.set_estimates(_ranges(co_, w_, h_, n_))
    return relu, [inp, filt, bias]


def softmax(s: dict):
    rows, cols = s["rows"], s["cols"]
    xin = hl.ImageParam(F32, 2, "x")  # x(j, i): j the column
    j, i = hl.Var("j"), hl.Var("i")
    r = hl.RDom([(0, cols)])
    mx, e, total, out = hl.Func("row_max"), hl.Func("exp"), hl.Func("row_sum"), hl.Func("softmax")
    mx[i] = hl.maximum(xin[r.x, i])
    e[j, i] = hl.exp(xin[j, i] - mx[i])
    total[i] = hl.sum(e[r.x, i])
    out[j, i] = e[j, i] / total[i]
    xin.set_estimates(_ranges(cols, rows))
    out.set_estimates(_ranges(cols, rows))
    return out, [xin]


def layernorm(s: dict):
    rows, cols = s["rows"], s["cols"]
    xin = hl.ImageParam(F32, 2, "x")  # x(j, i)
    gamma, beta = hl.ImageParam(F32, 1, "gamma"), hl.ImageParam(F32, 1, "beta")
    j, i = hl.Var("j"), hl.Var("i")
    r = hl.RDom([(0, cols)])
    s1, s2, out = hl.Func("row_sum"), hl.Func("row_sq"), hl.Func("layernorm")
    s1[i] = hl.sum(xin[r.x, i])
    s2[i] = hl.sum(xin[r.x, i] * xin[r.x, i])
    inv = hl.f32(1.0 / cols)
    mean = s1[i] * inv
    var = s2[i] * inv - mean * mean
    out[j, i] = ((xin[j, i] - mean) / hl.sqrt(var + hl.f32(1e-5)) * gamma[j] + beta[j])
    xin.set_estimates(_ranges(cols, rows))
    gamma.set_estimates(_ranges(cols))
    beta.set_estimates(_ranges(cols))
    out.set_estimates(_ranges(cols, rows))
    return out, [xin, gamma, beta]


BUILDERS = {"matmul512": matmul, "matmul1024": matmul, "conv": conv, "softmax": softmax,
            "layernorm": layernorm}


def host_target(vector_bits: int | None):
    """The host target; without its AVX-512 features when ``vector_bits`` < 512."""
    target = hl.get_host_target()
    if vector_bits and vector_bits < 512:
        parts = [p for p in str(target).split("-") if not p.startswith("avx512")]
        target = hl.Target("-".join(parts))
    return target


def load_plugins() -> dict:
    """Load both autoscheduler plugins; label -> None or the error text."""
    lib = os.path.join(os.path.dirname(hl.__file__), "lib64")
    status = {}
    for label, (so, _, _) in AUTOSCHEDULERS.items():
        try:
            hl.load_plugin(os.path.join(lib, so))
            status[label] = None
        except Exception as err:  # noqa: BLE001 (a missing plugin is that candidate's error)
            status[label] = f"load_plugin({so}): {error_text(err)}"
    return status


def build(kernel: str, label: str, quick: bool, target) -> tuple:
    """Define ``kernel``, autoschedule it with ``label``'s autoscheduler, compile; stats too."""
    _, name, params = AUTOSCHEDULERS[label]
    out, inputs = BUILDERS[kernel](common.shape(kernel, quick))
    pipeline = hl.Pipeline(out)
    start = time.perf_counter()
    result = pipeline.apply_autoscheduler(target, hl.AutoschedulerParams(name, params))
    schedule_s = time.perf_counter() - start
    start = time.perf_counter()
    call = pipeline.compile_to_callable(inputs, target)
    compile_s = time.perf_counter() - start
    lines = [ln for ln in result.schedule_source.splitlines() if ln.strip()]
    return call, {"schedule_s": round(schedule_s, 3), "compile_s": round(compile_s, 3),
                  "schedule_lines": len(lines)}


def build_kernel(kernel: str, quick: bool, target, plugins: dict, runners: dict, ready: dict,
                 tuning: dict) -> None:
    """Autoschedule, compile and check ``kernel`` with each autoscheduler; fill the dicts."""
    for label in AUTOSCHEDULERS:
        cand = f"{kernel}:{label}"
        if plugins[label]:
            ready[cand] = {"error": plugins[label]}
            continue
        try:
            call, stats = build(kernel, label, quick, target)
            tuning.setdefault(kernel, {})[label] = stats
            args = common.arrays(kernel, quick)
            run = (lambda k=call, a=args: k(*a))
            args[-1][...] = 0
            run()
            try:
                common.check(kernel, args[-1], common.expected(kernel, args))
            except AssertionError as err:
                ready[cand] = {"error": f"WRONG RESULT: {error_text(err)}"}
                continue
        except Exception as err:  # noqa: BLE001 (report it, build the others)
            ready[cand] = {"error": error_text(err)}
            continue
        runners[cand], ready[cand] = run, {"ok": True}


def main() -> None:
    config = json.loads(sys.argv[1])
    quick = config["quick"]
    target = host_target(config.get("vector_bits"))
    runners, ready, tuning = {}, {}, {}
    with stdout_to_stderr():
        plugins = load_plugins()
        for kernel in config["rows"]:
            build_kernel(kernel, quick, target, plugins, runners, ready, tuning)
    serve(runners, ready, {
        "version": metadata.version("halide"), "target": str(target),
        "threads": os.environ.get("HL_NUM_THREADS"),
        "autoschedulers": {label: f"{name} {params}"
                           for label, (_, name, params) in AUTOSCHEDULERS.items()},
        "tuning": tuning})


if __name__ == "__main__":
    main()
