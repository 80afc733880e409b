"""The kernels of bench_schedule.py in TVM (te compute + a hand schedule), a worker in TVM's venv.

bench_schedule.py starts this as ``$TVM_PYTHON benchmarks/bench_schedule_tvm.py
CONFIG_JSON`` (with ``TVM_NUM_THREADS`` = the core count) and drives it
through bench_access_common.serve: it builds and checks every row, then runs
one row per line of stdin and prints its time.

Each kernel is a ``te.compute`` definition turned into a PrimFunc by
``te.create_prim_func`` and scheduled by hand with ``tvm.s_tir.Schedule``
(TVM 0.27's name for ``tvm.tir.Schedule``; blocks are ``get_sblock``), no
meta-schedule tuning. The all-cores row (``_mt``) is the same schedule with
its outer loop ``parallel``; the single-thread row has no parallel loop, so
it runs on one thread whatever ``TVM_NUM_THREADS`` says.

- conv: the seed's Halide schedule in TVM's primitives: relu split
  c -> (co, 4 x 16 lanes), x -> (xo, 5), order co, n, y, xo, xi, ci; the conv
  ``compute_at`` relu's ``xo`` with its intermediate in ``local`` scope (20
  zmm accumulators), reduction loops ky, kx, ci outside the 5 x 64 tile, the
  16 lanes vectorized, the rest of the tile unrolled.
- matmul: B packed into 32-column panels (``packedB[j // 32, k, j % 32]``),
  C tiled 8 rows x 32 columns (16 zmm accumulators) through ``cache_write``
  into ``local``, k split by 4 and unrolled; panels outermost so one panel
  stays in L2 while the rows stream past it.
- blur: Halide's classic schedule: blur_y tiled 32 rows x 256 columns,
  blur_x ``compute_at`` the tile, both vectorized at the native width.
"""

from __future__ import annotations

import json
import sys

import bench_schedule_common as common  # the same directory
import tvm
from tvm import te
from tvm import tirx as tir

Schedule = tvm.s_tir.Schedule
F32 = "float32"


def conv(s: dict, lanes: int, parallel: bool):
    n_, ci_, co_, w_, h_ = s["N"], s["CI"], s["CO"], s["W"], s["H"]
    inp = te.placeholder((n_, h_ + 2, w_ + 2, ci_), F32, "inp")
    filt = te.placeholder((ci_, 3, 3, co_), F32, "filt")
    bias = te.placeholder((co_,), F32, "bias")
    ry, rx, rc = (te.reduce_axis((0, 3), "ry"), te.reduce_axis((0, 3), "rx"),
                  te.reduce_axis((0, ci_), "rc"))
    conv_t = te.compute((n_, h_, w_, co_), lambda n, y, x, c: te.sum(
        inp[n, y + ry, x + rx, rc] * filt[rc, ry, rx, c], axis=[ry, rx, rc]), name="conv")
    relu = te.compute((n_, h_, w_, co_), lambda n, y, x, c: tir.max(
        conv_t[n, y, x, c] + bias[c], tir.const(0, F32)), name="relu")
    sch = Schedule(te.create_prim_func([inp, filt, bias, relu]))
    b_relu, b_conv = sch.get_sblock("relu"), sch.get_sblock("conv")
    n, y, x, c = sch.get_loops(b_relu)
    co, ci = sch.split(c, [None, 4 * lanes])
    xo, xi = sch.split(x, [None, 5])
    sch.reorder(co, n, y, xo, xi, ci)
    cio, cii = sch.split(ci, [None, lanes])
    sch.vectorize(cii)
    sch.compute_at(b_conv, xo)
    sch.set_scope(b_conv, 0, "local")
    # below co, n, y, xo: the tile's x (5) and c (64) (compute_at drops unit loops), ry, rx, rc
    tx, tc, ly, lx, lc = sch.get_loops(b_conv)[4:]
    sch.reorder(ly, lx, lc, tx, tc)
    tco, tci = sch.split(tc, [None, lanes])
    sch.vectorize(tci)
    sch.unroll(tco)
    sch.unroll(tx)
    if parallel:
        sch.parallel(sch.fuse(co, n))
    # last: TVM checks vectorize/parallel against the whole (undecomposed) reduction
    sch.decompose_reduction(b_conv, ly)
    return sch.mod["main"]


def matmul(s: dict, lanes: int, parallel: bool):
    m = s["M"]
    bn, mr = 2 * lanes, 8
    a = te.placeholder((m, m), F32, "A")
    b = te.placeholder((m, m), F32, "B")
    packed = te.compute((m // bn, m, bn), lambda jo, k, ji: b[k, jo * bn + ji], name="packedB")
    k = te.reduce_axis((0, m), "k")
    c = te.compute((m, m), lambda i, j: te.sum(a[i, k] * packed[j // bn, k, j % bn], axis=k),
                   name="C")
    sch = Schedule(te.create_prim_func([a, b, c]))
    b_c = sch.get_sblock("C")
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
    b_pack = sch.get_sblock("packedB")
    pj, _, pi = sch.get_loops(b_pack)
    sch.vectorize(pi)
    if parallel:
        sch.parallel(pj)
        sch.parallel(jo)
    sch.decompose_reduction(b_c, ko)  # last: TVM checks vectorize/parallel on the whole reduction
    return sch.mod["main"]


def blur(s: dict, lanes: int, parallel: bool):
    h_, w_ = s["H"], s["W"]
    a = te.placeholder((h_ + 2, w_ + 2), F32, "A")
    three = tir.const(3, F32)
    bx = te.compute((h_ + 2, w_), lambda y, x: (a[y, x] + a[y, x + 1] + a[y, x + 2]) / three,
                    name="blur_x")
    by = te.compute((h_, w_), lambda y, x: (bx[y, x] + bx[y + 1, x] + bx[y + 2, x]) / three,
                    name="blur_y")
    sch = Schedule(te.create_prim_func([a, by]))
    b_y, b_x = sch.get_sblock("blur_y"), sch.get_sblock("blur_x")
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


BUILDERS = {"conv": conv, "matmul512": matmul, "matmul1024": matmul, "blur": blur}


def main() -> None:
    config = json.loads(sys.argv[1])
    quick, lanes = config["quick"], config["lanes"]
    target = tvm.target.Target({"kind": "llvm", "mcpu": config["mcpu"],
                                "mtriple": config["triple"]})
    dev = tvm.cpu()
    runners, ready = {}, {}
    for row in config["rows"]:
        kernel = common.row_kernel(row)
        try:
            func = BUILDERS[kernel](common.shape(kernel, quick), lanes,
                                    common.row_threads(row) == "all")
            entry = tvm.compile(func, target=target)["main"]
            args = common.arrays(kernel, quick)
            tensors = [tvm.runtime.tensor(a, dev) for a in args]
            run = (lambda e=entry, t=tensors: e(*t))
            try:
                common.run_and_check(kernel, args, run, result=lambda t=tensors: t[-1].numpy())
            except AssertionError as err:
                ready[row] = {"error": f"WRONG RESULT: {common.error_text(err)}"}
                continue
        except Exception as err:  # noqa: BLE001 (report it, build the others)
            ready[row] = {"error": common.error_text(err)}
            continue
        runners[row], ready[row] = run, {"ok": True}
    common.serve(runners, ready, {"version": tvm.__version__})


if __name__ == "__main__":
    main()
