"""Lesson 5: write the algorithm once, schedule it separately -- te compute plus tir.Schedule.

Lessons 1-4 wrote every loop nest by hand. Here the algorithm is declared once
with ``te`` (TVM's names) and a ``tir.Schedule`` rewrites its loops, step by
step, without touching what it computes:

1. the seed's conv layer (conv + bias + ReLU, Halide's ``apps/conv_layer``),
   from the naive loop nest to a register-blocked kernel: tile, compute the
   conv inside the ReLU's tile (``compute_at``), move the reduction loops out
   (``reorder``, ``decompose_reduction``), ``vectorize``/``unroll``, then
   ``parallel``; the time after each step;
2. Halide's two-stage blur, where ``compute_at`` turns "compute all of
   ``blur_x``, then all of ``blur_y``" into tiles that stay in cache;
3. what a schedule refuses: each primitive checks its rule and raises a
   ``ScheduleError`` naming the block or loop.

The register tile is sized for this CPU by the rule lesson 7's default schedule
uses. Every schedule is checked against NumPy (schedules never change results).
Vector widths come from this machine (``codegen.Target("llvm")``), so the
lesson runs the same on AVX2 or AVX-512.

Run it with ``python tutorials/05_schedules.py``; ``--full`` uses the seed's
full layer size (N=5, CI=CO=128, 100x80), which the timings in README use.
"""

import sys
import time

import numpy as np

import codegen
import tir
from tir import te
from tirlite import meta_schedule as ms
from tirlite.meta_schedule.rules import contraction

HOST = codegen.Target("llvm")
LANES = HOST.vector_width_bits // 32  # float32 lanes in one register
RNG = np.random.default_rng(0)


def best_time(fn, *args, repeat: int = 5) -> float:
    """Median seconds of ``repeat`` calls after a warm-up call (a call over 0.5 s: that call)."""
    start = time.perf_counter()
    fn(*args)
    first = time.perf_counter() - start
    if first > 0.5:  # the naive schedules of the full layer take seconds
        return first
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn(*args)
        times.append(time.perf_counter() - t)
    return float(np.median(times))


# ---------------------------------------------------------------- 1. the conv layer


def conv_layer(N: int, CI: int, CO: int, W: int, H: int) -> tir.PrimFunc:
    """relu = max(0, bias + conv3x3(input, filter)), channels innermost as in Halide's app.

    input[n, y, x, ci] is padded by one pixel on each side (H+2 x W+2),
    filter[ci, ky, kx, co], output relu[n, y, x, co].
    """
    inp = te.placeholder((N, H + 2, W + 2, CI), name="input")
    flt = te.placeholder((CI, 3, 3, CO), name="filter")
    bias = te.placeholder((CO,), name="bias")
    ry = te.reduce_axis((0, 3), name="ry")
    rx = te.reduce_axis((0, 3), name="rx")
    rc = te.reduce_axis((0, CI), name="rc")
    conv = te.compute(
        (N, H, W, CO),
        lambda n, y, x, c: te.sum(flt[rc, ry, rx, c] * inp[n, y + ry, x + rx, rc],
                                  axis=[ry, rx, rc], init=bias[c]),
        name="conv")
    relu = te.compute((N, H, W, CO), lambda n, y, x, c: tir.max(conv[n, y, x, c], 0.0),
                      name="relu")
    return te.create_prim_func([inp, flt, bias, relu])


def conv_reference(inp, flt, bias):
    H, W = inp.shape[1] - 2, inp.shape[2] - 2
    out = np.broadcast_to(bias, inp.shape[:1] + (H, W) + bias.shape).astype(np.float64)
    for ky in range(3):
        for kx in range(3):
            out = out + np.einsum("nyxc,cd->nyxd", inp[:, ky:ky + H, kx:kx + W, :],
                                  flt[:, ky, kx, :].astype(np.float64))
    return np.maximum(out, 0).astype(np.float32)


def tile_relu(sch: tir.Schedule, x_tile: int, c_tile: int):
    """Step 2: tile the ReLU's (x, c) plane and compute the conv tile by tile."""
    relu = sch.get_block("relu")
    n, y, x, c = sch.get_loops(relu)
    co, ci = sch.split(c, [None, c_tile])
    xo, xi = sch.split(x, [None, x_tile])
    sch.reorder(n, y, co, xo, xi, ci)
    sch.compute_at(sch.get_block("conv"), xo)  # the conv intermediate shrinks to one tile
    return n, y, co, xo, xi, ci


def register_block(sch: tir.Schedule):
    """Step 3: reduction loops outside the tile, the bias init in a block of its own."""
    conv = sch.get_block("conv")
    cx, cc, ry, rx, rc = sch.get_loops(conv)[-5:]
    sch.reorder(ry, rx, rc, cx, cc)
    init = sch.decompose_reduction(conv, ry)
    return conv, init, (cx, cc)


def vectorize_tiles(sch: tir.Schedule, relu_loops, conv_loops, init) -> None:
    """Step 4: vectors across channels, the x tile unrolled: a grid of accumulators."""
    _n, _y, _co, _xo, xi, ci = relu_loops
    sch.vectorize(ci)
    sch.unroll(xi)
    cx, cc = conv_loops
    sch.vectorize(cc)
    sch.unroll(cx)
    ix, ic = sch.get_loops(init)[-2:]
    sch.vectorize(ic)
    sch.unroll(ix)


def schedule_steps(func: tir.PrimFunc, x_tile: int, c_tile: int):
    """(label, scheduled function) after each step; the last one runs on all cores."""
    sch = tir.Schedule(func)
    yield "1. naive loop nest", sch.mod["main"]
    loops = tile_relu(sch, x_tile, c_tile)
    yield "2. tile + compute_at", sch.mod["main"]
    _conv, init, conv_loops = register_block(sch)
    yield "3. + reorder, decompose_reduction", sch.mod["main"]
    vectorize_tiles(sch, loops, conv_loops, init)
    yield "4. + vectorize, unroll", sch.mod["main"]
    n, y = loops[:2]
    sch.parallel(sch.fuse(n, y))
    yield "5. + parallel (all cores)", sch.mod["main"]
    print("  the final schedule's trace:")
    for line in str(sch.trace).splitlines():
        print("    " + line)


def register_tile(width: int, channels: int) -> tuple[int, int]:
    """x_tile pixels x c_tile channels of accumulators that fit this CPU's vector registers.

    Not a number written for one CPU: the rule ``apply_default_schedule`` uses
    (lesson 7) picks it from the target -- 16 registers on AVX2, 32 on AVX-512 --
    among the tiles that divide the loops, so no guard lands in the tile.
    """
    info = ms.TargetInfo.from_target("llvm")
    tiles = contraction.register_tiles(width, channels, LANES, info.vector_registers)
    mr, nv = tiles[contraction.default_register_tile(tiles, LANES)]
    return mr, nv * LANES


def conv_demo(full: bool) -> None:
    print("=== 1. the conv layer: one algorithm, five schedules ===")
    N, CI, CO, W, H = (5, 128, 128, 100, 80) if full else (1, 32, 32, 20, 6)
    x_tile, c_tile = register_tile(W, CO)
    func = conv_layer(N, CI, CO, W, H)
    inp = RNG.standard_normal((N, H + 2, W + 2, CI)).astype(np.float32)
    flt = RNG.standard_normal((CI, 3, 3, CO)).astype(np.float32)
    bias = RNG.standard_normal(CO).astype(np.float32)
    want = conv_reference(inp, flt, bias)
    flops = 2.0 * N * H * W * CO * CI * 9
    print(f"  N={N} CI={CI} CO={CO} {W}x{H}: {flops / 1e9:.2f} GFLOP; tiles of {x_tile} pixels "
          f"x {c_tile} channels ({LANES} float32 lanes per register, tile sized for this CPU)")
    for label, scheduled in schedule_steps(func, x_tile, c_tile):
        module = codegen.build(scheduled)
        out = np.empty_like(want)
        module["main"](inp, flt, bias, out)
        np.testing.assert_allclose(out, want, rtol=2e-4, atol=2e-3)
        if full or not label.startswith("1."):
            seconds = best_time(module["main"], inp, flt, bias, out)
            print(f"  {label:36s} {seconds * 1e3:9.2f} ms  {flops / seconds / 1e9:7.1f} GFLOP/s")
        else:
            print(f"  {label:36s} (correct)")


# ---------------------------------------------------------------- 2. a blur with compute_at


def blur(H: int, W: int) -> tir.PrimFunc:
    """Halide's two-stage 3x3 box blur on a padded input (H+2 x W+2 -> H x W)."""
    inp = te.placeholder((H + 2, W + 2), name="input")
    bx = te.compute((H + 2, W), lambda y, x: (inp[y, x] + inp[y, x + 1] + inp[y, x + 2]) / 3.0,
                    name="blur_x")
    by = te.compute((H, W), lambda y, x: (bx[y, x] + bx[y + 1, x] + bx[y + 2, x]) / 3.0,
                    name="blur_y")
    return te.create_prim_func([inp, by])


def blur_schedule(func: tir.PrimFunc, tile_y: int, tile_x: int) -> tir.Schedule:
    """Halide's schedule: tile blur_y, compute blur_x per tile, vectorize both."""
    sch = tir.Schedule(func)
    by = sch.get_block("blur_y")
    y, x = sch.get_loops(by)
    yo, xo, yi, xi = sch.tile([y, x], [tile_y, tile_x])
    sch.compute_at(sch.get_block("blur_x"), xo)  # tile_y + 2 rows of blur_x per tile
    xi_o, xi_i = sch.split(xi, [None, LANES])
    sch.vectorize(xi_i)
    bx_x = sch.get_loops(sch.get_block("blur_x"))[-1]
    bx_o, bx_i = sch.split(bx_x, [None, LANES])
    sch.vectorize(bx_i)
    sch.parallel(yo)
    return sch


def blur_demo(full: bool) -> None:
    print("\n=== 2. a two-stage blur: compute_at keeps blur_x in cache ===")
    H, W = (2048, 4096) if full else (64, 256)
    func = blur(H, W)
    sch = blur_schedule(func, 32, 256 if full else 64)
    img = RNG.standard_normal((H + 2, W + 2)).astype(np.float32)
    bx = (img[:, :-2] + img[:, 1:-1] + img[:, 2:]) / np.float32(3)
    want = (bx[:-2] + bx[1:-1] + bx[2:]) / np.float32(3)
    for label, f in (("all of blur_x, then blur_y", func), ("tiled, compute_at", sch.mod["main"])):
        module = codegen.build(f)
        out = np.empty_like(want)
        module["main"](img, out)
        np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)
        seconds = best_time(module["main"], img, out)
        print(f"  {label:28s} {seconds * 1e3:8.3f} ms")
    lowered = codegen.lower(sch.mod)["main"].script()
    sizes = [line.strip() for line in lowered.splitlines() if "T.allocate" in line]
    print("  blur_x's buffer after compute_at:", sizes[0] if sizes else "(none)")


# ---------------------------------------------------------------- 3. what a schedule refuses


def refusals() -> None:
    print("\n=== 3. what a schedule refuses ===")
    n = 16
    A = te.placeholder((n, n), name="A")
    k = te.reduce_axis((0, n), name="k")
    S = te.compute((n,), lambda i: te.sum(A[i, k], axis=k), name="S")
    sch = tir.Schedule(te.create_prim_func([A, S]))
    i, kk = sch.get_loops(sch.get_block("S"))
    for label, attempt in (
        ("vectorize a reduction loop", lambda: sch.vectorize(kk)),
        ("split into two unknown factors", lambda: sch.split(i, [None, None])),
        ("inline a function output", lambda: sch.compute_inline(sch.get_block("S"))),
    ):
        try:
            attempt()
        except tir.ScheduleError as err:
            print(f"  {label}: ScheduleError: {err}")
        else:
            raise AssertionError(f"{label} was accepted")
    # A split that does not divide the extent gets a guard, never a silent gap:
    io, ii = sch.split(i, [None, 5])  # 16 = 4 x 5 - 4: the last tile is guarded
    text = sch.mod["main"].script()
    assert "T.where" in text
    print("  split(16, [None, 5]) adds a guard:",
          next(line.strip() for line in text.splitlines() if "T.where" in line))


def main() -> None:
    full = "--full" in sys.argv
    conv_demo(full)
    blur_demo(full)
    refusals()


if __name__ == "__main__":
    main()
