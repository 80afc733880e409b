"""The kernels of bench_schedule.py in Halide, run as a worker in Halide's own venv.

bench_schedule.py starts this as ``$HALIDE_PYTHON benchmarks/bench_schedule_halide.py
CONFIG_JSON`` (with ``HL_NUM_THREADS`` = the core count) and drives it through
bench_access_common.serve: it builds and checks every row, then runs one row
per line of stdin and prints its time.

Halide's Python bindings see a NumPy array's dimensions reversed (the last
NumPy axis is Halide's first, innermost one), so the arrays of
bench_schedule_common are exactly the seed's buffers: ``input(ci, x, y, n)``,
``filter(co, kx, ky, ci)``, ``bias(co)``, ``relu(c, x, y, n)``. JIT-compiled
for ``hl.get_host_target()``. The single-thread rows have no ``parallel``;
the all-cores rows (``_mt``) add it.

- conv: the algorithm and schedule of the seed (Halide's apps/conv_layer as
  quoted by MLIR's transform tutorial, Chapter H): vec = LANES, tile_w = 4,
  tile_h = 5; the single-thread row drops ``.parallel(y).parallel(n).parallel(co)``
  as the seed does, the all-cores row keeps them.
- matmul: ``prod(x, y) += A(k, y) * B(x, k)`` computed per 32 x 8 output tile
  (Halide's register-blocking idiom: the update reordered so k is outermost
  and the tile's 16 vectors stay in registers); no packing of B.
- blur: Halide's classic: blur_y tiled 256 x 32, vectorized, blur_x
  ``compute_at`` blur_y's tile, vectorized; ``parallel(y)`` in the all-cores row.
"""

from __future__ import annotations

import json
import sys
from importlib import metadata

import bench_schedule_common as common  # the same directory
import halide as hl

F32 = hl.Float(32)


def conv(s: dict, lanes: int, parallel: bool):
    inp = hl.ImageParam(F32, 4, "input")
    filt = hl.ImageParam(F32, 4, "filter")
    bias = hl.ImageParam(F32, 1, "bias")
    c, x, y, n = hl.Var("c"), hl.Var("x"), hl.Var("y"), hl.Var("n")
    r = hl.RDom([(0, s["CI"]), (0, 3), (0, 3)])
    conv_f, relu = hl.Func("conv"), hl.Func("relu")
    conv_f[c, x, y, n] = bias[c]
    conv_f[c, x, y, n] += filt[c, r.y, r.z, r.x] * inp[r.x, x + r.y, y + r.z, n]
    relu[c, x, y, n] = hl.max(0, conv_f[c, x, y, n])

    vec, tile_w, tile_h = lanes, 4, 5
    co, ci, xo, xi = hl.Var("co"), hl.Var("ci"), hl.Var("xo"), hl.Var("xi")
    relu.split(c, co, ci, vec * tile_w).split(x, xo, xi, tile_h).reorder(
        ci, xi, xo, y, n, co).vectorize(ci, vec).unroll(ci).unroll(xi)
    if parallel:
        relu.parallel(y).parallel(n).parallel(co)
    conv_f.compute_at(relu, xo).vectorize(c, vec).unroll(c).unroll(x).unroll(y)
    conv_f.update().reorder(c, x, y, r.x, r.y, r.z, n).vectorize(c, vec).unroll(c).unroll(
        x).unroll(y).unroll(r.x, 2)
    return relu, [inp, filt, bias]


def matmul(s: dict, lanes: int, parallel: bool):
    m = s["M"]
    a, b = hl.ImageParam(F32, 2, "A"), hl.ImageParam(F32, 2, "B")  # a(k, i), b(j, k)
    x, y = hl.Var("x"), hl.Var("y")
    xi, yi = hl.Var("xi"), hl.Var("yi")
    k = hl.RDom([(0, m)])
    prod, out = hl.Func("prod"), hl.Func("out")
    prod[x, y] = hl.f32(0)
    prod[x, y] += a[k.x, y] * b[x, k.x]
    out[x, y] = prod[x, y]
    out.tile(x, y, xi, yi, 2 * lanes, 8).vectorize(xi, lanes).unroll(yi)
    if parallel:
        out.parallel(y)
    prod.compute_at(out, x).vectorize(x, lanes).unroll(y)
    prod.update().reorder(x, y, k.x).vectorize(x, lanes).unroll(x).unroll(y)
    return out, [a, b]


def blur(s: dict, lanes: int, parallel: bool):
    inp = hl.ImageParam(F32, 2, "input")  # inp(x, y): x the column
    x, y, xi, yi = hl.Var("x"), hl.Var("y"), hl.Var("xi"), hl.Var("yi")
    bx, by = hl.Func("blur_x"), hl.Func("blur_y")
    three = hl.f32(3)
    bx[x, y] = (inp[x, y] + inp[x + 1, y] + inp[x + 2, y]) / three
    by[x, y] = (bx[x, y] + bx[x, y + 1] + bx[x, y + 2]) / three
    by.tile(x, y, xi, yi, 256, 32).vectorize(xi, lanes)
    if parallel:
        by.parallel(y)
    bx.compute_at(by, x).vectorize(x, lanes)
    return by, [inp]


BUILDERS = {"conv": conv, "matmul512": matmul, "matmul1024": matmul, "blur": blur}


def main() -> None:
    config = json.loads(sys.argv[1])
    quick, lanes = config["quick"], config["lanes"]
    target = hl.get_host_target()
    runners, ready = {}, {}
    for row in config["rows"]:
        kernel = common.row_kernel(row)
        try:
            func, params = BUILDERS[kernel](common.shape(kernel, quick), lanes,
                                            common.row_threads(row) == "all")
            call = func.compile_to_callable(params, target)
            args = common.arrays(kernel, quick)
            run = (lambda k=call, a=args: k(*a))
            try:
                common.run_and_check(kernel, args, run)
            except AssertionError as err:
                ready[row] = {"error": f"WRONG RESULT: {common.error_text(err)}"}
                continue
        except Exception as err:  # noqa: BLE001 (report it, build the others)
            ready[row] = {"error": common.error_text(err)}
            continue
        runners[row], ready[row] = run, {"ok": True}
    common.serve(runners, ready, {"version": metadata.version("halide"), "target": str(target)})


if __name__ == "__main__":
    main()
