"""The kernels of bench_access.py written for Halide, run as a worker in Halide's own venv.

bench_access.py starts this as ``$HALIDE_PYTHON benchmarks/bench_access_halide.py
CONFIG_JSON`` and drives it through bench_access_common.serve: it builds and
checks every kernel, then runs one kernel per line of stdin and prints its time.

The algorithms are the plain Halide expressions (``f[x] = A[2 * x]``,
``f[x] = A[clamp(idx[x], 0, n - 1)]``, ...), JIT-compiled for the host
(``hl.get_host_target()``) as callables that take the NumPy arrays directly.
Schedules: the output vectorized at the native width (LANES float32), no
``parallel`` (one thread, like every other candidate). The complex multiply
is a 2-D function over (re/im, x) with the re/im dimension unrolled, so Halide
interleaves the two stores into dense ones. The strided sums use ``rfactor``
into an accumulator of 4 x LANES lanes (four vectors per step, as the TVM
version's hand-written partial sums). The transpose is tiled TRANSPOSE_TILE x TRANSPOSE_TILE (8) and
timed under two schedules, the fastest reported: the column loop vectorized
with the row loop unrolled, and both vectorized (Halide's transpose shuffles).
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from importlib import metadata

import bench_access_common as common  # the same directory
import halide as hl

x, y, c = hl.Var("x"), hl.Var("y"), hl.Var("c")


def _f32(name: str, dims: int = 1) -> hl.ImageParam:
    return hl.ImageParam(hl.Float(32), dims, name)


def copy(stride: int, lanes: int):
    a = _f32("A")
    f = hl.Func("copy")
    f[x] = a[stride * x]
    f.vectorize(x, lanes)
    return f, [a]


def total(stride: int, n: int, lanes: int):
    a = _f32("A")
    r = hl.RDom([(0, n)])
    f = hl.Func("sum")
    f[x] = hl.f32(0)
    f[x] += a[stride * r.x]
    rxo, rxi = hl.RVar("rxo"), hl.RVar("rxi")
    u, uo, ui = hl.Var("u"), hl.Var("uo"), hl.Var("ui")
    f.update().split(r.x, rxo, rxi, 4 * lanes)
    partial = f.update().rfactor(rxi, u)
    partial.compute_root().vectorize(u, lanes)
    partial.update().split(u, uo, ui, lanes).reorder(ui, uo, rxo).vectorize(ui).unroll(uo)
    return f, [a]


def reverse(n: int, lanes: int):
    a = _f32("A")
    f = hl.Func("reverse")
    f[x] = a[n - 1 - x]
    f.vectorize(x, lanes)
    return f, [a]


def cmul(lanes: int):
    """(n, 2) arrays seen by Halide as (c, x): c the re/im index, stride 1; x stride 2."""
    p, q = _f32("X", 2), _f32("Y", 2)
    for buf in (p, q):
        buf.dim(0).set_bounds(0, 2)
        buf.dim(1).set_stride(2)
    f = hl.Func("cmul")
    re = p[0, x] * q[0, x] - p[1, x] * q[1, x]
    im = p[0, x] * q[1, x] + p[1, x] * q[0, x]
    f[c, x] = hl.select(c == 0, re, im)
    f.output_buffer().dim(0).set_bounds(0, 2)
    f.output_buffer().dim(1).set_stride(2)
    f.reorder(c, x).bound(c, 0, 2).unroll(c).vectorize(x, lanes)
    return f, [p, q]


def gray_f32(lanes: int):
    rgb = _f32("RGB")
    w0, w1, w2 = (hl.f32(w) for w in common.GRAY_F32)
    f = hl.Func("gray")
    f[x] = w0 * rgb[3 * x] + w1 * rgb[3 * x + 1] + w2 * rgb[3 * x + 2]
    f.vectorize(x, lanes)
    return f, [rgb]


def gray_u8(lanes: int):
    rgb = hl.ImageParam(hl.UInt(8), 1, "RGB")
    u0, u1, u2 = common.GRAY_U8
    wide = lambda e: hl.cast(hl.Int(32), e)  # noqa: E731
    f = hl.Func("gray")
    f[x] = hl.cast(hl.UInt(8), (wide(rgb[3 * x]) * u0 + wide(rgb[3 * x + 1]) * u1
                                + wide(rgb[3 * x + 2]) * u2 + 128) >> 8)
    f.vectorize(x, lanes)
    return f, [rgb]


def transpose(lanes: int, schedule: str):
    """NumPy's (row, col) is Halide's (x = col, y = row): ``f[x, y] = A[y, x]`` transposes."""
    a = _f32("A", 2)
    f = hl.Func("transpose")
    f[x, y] = a[y, x]
    xo, yo, xi, yi = hl.Var("xo"), hl.Var("yo"), hl.Var("xi"), hl.Var("yi")
    f.tile(x, y, xo, yo, xi, yi, lanes, lanes).vectorize(xi)
    if schedule == "unroll":
        f.unroll(yi)
    else:
        f.vectorize(yi)
    return f, [a]


def gather(n: int, lanes: int):
    a, idx = _f32("A"), hl.ImageParam(hl.Int(32), 1, "idx")
    f = hl.Func("gather")
    f[x] = a[hl.clamp(idx[x], 0, n - 1)]
    f.vectorize(x, lanes)
    return f, [a, idx]


#: The kernels this peer has a pipeline for (the others: "not written for this peer").
WRITTEN = ("copy_s2", "copy_s3", "sum_s2", "sum_s3", "reverse", "cmul", "rgb_gray_f32",
           "rgb_gray_u8", "gather", "transpose")


def pipelines(name: str, n: int, lanes: int) -> dict:
    """Schedule label -> (Func, its ImageParams in call order) for kernel ``name``."""
    table = {
        "copy_s2": lambda: copy(2, lanes), "copy_s3": lambda: copy(3, lanes),
        "sum_s2": lambda: total(2, n, lanes), "sum_s3": lambda: total(3, n, lanes),
        "reverse": lambda: reverse(n, lanes), "cmul": lambda: cmul(lanes),
        "rgb_gray_f32": lambda: gray_f32(lanes), "rgb_gray_u8": lambda: gray_u8(lanes),
        "gather": lambda: gather(n, lanes),
    }
    if name == "transpose":
        return {s: transpose(common.TRANSPOSE_TILE, s) for s in ("unroll", "vectorize")}
    return {"": table[name]()}


def _halide_args(name: str, args: list) -> list:
    """The arrays as Halide sees them (complex numbers as (n, 2): re/im the inner dimension)."""
    return [a.reshape(-1, 2) for a in args] if name == "cmul" else args


def _quick_ms(run, rounds: int = 5) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def main() -> None:
    config = json.loads(sys.argv[1])
    n, lanes = config["n"], config["lanes"]
    target = hl.get_host_target()
    runners, ready = {}, {}
    for name in (k for k in config["kernels"] if k in WRITTEN):
        args = common.arrays(name, n)
        best, wrong = None, None
        try:
            schedules = pipelines(name, n, lanes)
            for label, (func, params) in schedules.items():
                call = func.compile_to_callable(params, target)
                run = (lambda k=call, a=_halide_args(name, args): k(*a))
                try:
                    common.run_and_check(name, args, run)
                except AssertionError as err:
                    wrong = f"WRONG RESULT ({label or 'default'}): {common.error_text(err)}"
                    break
                ms = _quick_ms(run) if len(schedules) > 1 else 0.0
                if best is None or ms < best[0]:
                    best = (ms, label, run)
        except Exception as err:  # noqa: BLE001 (report it, build the others)
            ready[name] = {"error": common.error_text(err)}
            continue
        if wrong:
            ready[name] = {"error": wrong}
            continue
        runners[name] = best[2]
        ready[name] = {"ok": True, "schedule": best[1]}
    common.serve(runners, ready, {"version": metadata.version("halide"), "target": str(target)})


if __name__ == "__main__":
    main()
