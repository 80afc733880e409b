"""What bench_schedule.py and its TVM, Halide and NumPy workers share: shapes, data, checks.

NumPy only, so that it runs unchanged in tirlite's venv, TVM's and Halide's.
Every process builds its inputs from the same seed, so every candidate
computes on the same numbers and is checked against the same NumPy result.

Rows: each kernel runs on one thread (row ``conv``) and on all cores (row
``conv_mt``); ``row_kernel`` and ``row_threads`` split a row name.

Layouts (NumPy, C order; the same for every candidate):

- ``conv``: Halide's conv_layer app as in the seed (the MLIR transform
  dialect's "Chapter H"): ``inp[n, y + 2, x + 2, ci]`` (Halide's
  ``input(ci, x, y, n)``: CI innermost), ``filt[ci, ky, kx, co]`` (Halide's
  ``filter(co, kx, ky, ci)``), ``bias[co]``, and the output
  ``out[n, y, x, co] = max(0, bias[co] + sum_{ci, ky, kx} filt[ci, ky, kx, co]
  * inp[n, y + ky, x + kx, ci])``.
- ``matmul512``, ``matmul1024``: ``c = a @ b``, square float32.
- ``blur``: Halide's two-stage blur on float32,
  ``bx[y, x] = (a[y, x] + a[y, x + 1] + a[y, x + 2]) / 3`` over the H + 2 rows,
  ``out[y, x] = (bx[y, x] + bx[y + 1, x] + bx[y + 2, x]) / 3``; ``a`` is
  (H + 2) x (W + 2), ``out`` H x W.

Run as a script (``python bench_schedule_common.py CONFIG_JSON``) this module
is the NumPy worker for the all-cores rows: bench_schedule.py starts it with
``OPENBLAS_NUM_THREADS`` set to the core count (OpenBLAS reads it once, at
load), and drives it like the TVM and Halide workers
(``bench_access_common.serve``).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable

import numpy as np
from bench_access_common import error_text, serve  # noqa: F401 (re-exported to the workers)

KERNELS = ("conv", "matmul512", "matmul1024", "blur")
MT = "_mt"  # suffix of the all-cores row of a kernel


def row_kernel(row: str) -> str:
    """The kernel a row runs: ``conv_mt`` -> ``conv``."""
    return row[:-len(MT)] if row.endswith(MT) else row


def row_threads(row: str) -> str:
    """``"1"`` or ``"all"``."""
    return "all" if row.endswith(MT) else "1"


def rows(kernels: list) -> list:
    """Row names of ``kernels``: every kernel on one thread, then every kernel on all cores.

    The all-cores rows come last, together: timed right after a single-thread row
    whose peers had just run, tirlite's 2-thread matmul once came out no faster
    than on one thread (9.5 ms against 5.7 ms alone).
    """
    return [k for k in kernels] + [k + MT for k in kernels]


def shape(kernel: str, quick: bool) -> dict:
    """The sizes of ``kernel`` (smaller ones under ``--quick``)."""
    if kernel == "conv":
        # the seed's sizes; quick keeps CO a multiple of the 64-channel tile and W of 5
        return (dict(N=1, CI=64, CO=64, W=20, H=8) if quick
                else dict(N=5, CI=128, CO=128, W=100, H=80))
    if kernel in ("matmul512", "matmul1024"):
        m = int(kernel[len("matmul"):])
        return dict(M=m // 4 if quick else m)
    if kernel == "blur":
        return dict(H=256, W=512) if quick else dict(H=4096, W=2048)
    raise KeyError(kernel)


def describe(kernel: str, quick: bool) -> str:
    """The sizes as one short string for the table."""
    s = shape(kernel, quick)
    if kernel == "conv":
        return f"N={s['N']} CI={s['CI']} CO={s['CO']} {s['W']}x{s['H']}"
    if kernel == "blur":
        return f"{s['H']}x{s['W']}"
    return f"{s['M']}^3"


def flops(kernel: str, quick: bool) -> float | None:
    """Floating-point operations of one run (multiply and add counted apart; None for blur)."""
    s = shape(kernel, quick)
    if kernel == "conv":
        # the seed's text says ~5.9e9 for N*H*W*CO*(2*3*3*CI + 2), but that product is 11.8e9
        return float(s["N"] * s["H"] * s["W"] * s["CO"] * (2 * 9 * s["CI"] + 2))
    if kernel.startswith("matmul"):
        return 2.0 * s["M"] ** 3
    return None  # memory-bound; the table gives its time only


def arrays(kernel: str, quick: bool) -> list:
    """The arguments of ``kernel`` in call order (inputs, then the zeroed output)."""
    rng = np.random.default_rng(sum(map(ord, kernel)))
    s = shape(kernel, quick)

    def vec(*dims):
        return rng.random(dims, dtype=np.float32) - np.float32(0.5)

    if kernel == "conv":
        n, ci, co, w, h = s["N"], s["CI"], s["CO"], s["W"], s["H"]
        return [vec(n, h + 2, w + 2, ci), vec(ci, 3, 3, co), vec(co),
                np.zeros((n, h, w, co), np.float32)]
    if kernel.startswith("matmul"):
        m = s["M"]
        return [vec(m, m), vec(m, m), np.zeros((m, m), np.float32)]
    if kernel == "blur":
        return [vec(s["H"] + 2, s["W"] + 2), np.zeros((s["H"], s["W"]), np.float32)]
    raise KeyError(kernel)


def expected(kernel: str, args: list) -> np.ndarray:
    """NumPy's result (conv and matmul accumulated in float64)."""
    if kernel == "conv":
        inp, filt, bias, out = args
        _, h, w, _ = out.shape
        acc = np.zeros(out.shape, np.float64) + bias
        for ky in range(3):
            for kx in range(3):
                acc += inp[:, ky:ky + h, kx:kx + w, :].astype(np.float64) @ filt[:, ky, kx, :]
        return np.maximum(acc, 0).astype(np.float32)
    if kernel.startswith("matmul"):
        return (args[0].astype(np.float64) @ args[1]).astype(np.float32)
    if kernel == "blur":
        a = args[0]
        bx = (a[:, :-2] + a[:, 1:-1] + a[:, 2:]) / np.float32(3)
        return (bx[:-2] + bx[1:-1] + bx[2:]) / np.float32(3)
    raise KeyError(kernel)


def check(kernel: str, got: np.ndarray, want: np.ndarray) -> None:
    """Raise AssertionError unless ``got`` is ``want`` within float32 rounding of the sums."""
    if got.shape != want.shape:
        raise AssertionError(f"{kernel}: shape {got.shape}, want {want.shape}")
    # conv and matmul sum 1152 and 1024 products of magnitude < 0.25 in float32 in any order
    # (FMA, reassociation): results are O(1), the rounding O(1e-5)
    tol = 1e-6 if kernel == "blur" else 2e-4
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol, err_msg=kernel)


def run_and_check(kernel: str, args: list, run: Callable, result: Callable | None = None) -> None:
    """Zero the output, run once, check against NumPy; ``result()`` reads the output."""
    args[-1][...] = 0
    run()
    got = result() if result is not None else args[-1]
    check(kernel, np.asarray(got), expected(kernel, args))


# ---------------------------------------------------------------- NumPy


def numpy_fn(kernel: str, args: list) -> Callable:
    """What a NumPy user writes, into preallocated outputs where NumPy can.

    conv: ``np.tensordot`` over ``sliding_window_view`` (one BLAS sgemm of the
    windows, which NumPy first copies into an (N*H*W) x (CI*9) matrix), then bias
    and ReLU in place. blur: the two stages as in-place ufuncs on a preallocated
    blur_x. Threads: whatever OpenBLAS was started with.
    """
    if kernel == "conv":
        inp, filt, bias, out = args
        windows = np.lib.stride_tricks.sliding_window_view(inp, (3, 3), axis=(1, 2))
        # windows[n, y, x, ci, ky, kx]; filt[ci, ky, kx, co]

        def conv():
            out[...] = np.tensordot(windows, filt, axes=([3, 4, 5], [0, 1, 2]))
            np.add(out, bias, out=out)
            np.maximum(out, 0, out=out)
        return conv
    if kernel.startswith("matmul"):
        a, b, c = args
        return lambda: np.matmul(a, b, out=c)
    if kernel == "blur":
        a, out = args
        bx = np.empty((a.shape[0], a.shape[1] - 2), np.float32)
        third = np.float32(3)

        def blur():
            np.add(a[:, :-2], a[:, 1:-1], out=bx)
            np.add(bx, a[:, 2:], out=bx)
            np.divide(bx, third, out=bx)
            np.add(bx[:-2], bx[1:-1], out=out)
            np.add(out, bx[2:], out=out)
            np.divide(out, third, out=out)
        return blur
    raise KeyError(kernel)


def main() -> None:
    """The NumPy worker: the all-cores rows with OpenBLAS on the threads its environment gives."""
    config = json.loads(sys.argv[1])
    runners, ready = {}, {}
    for row in config["rows"]:
        if row_threads(row) != "all":
            continue
        kernel = row_kernel(row)
        try:
            args = arrays(kernel, config["quick"])
            run = numpy_fn(kernel, args)
            try:
                run_and_check(kernel, args, run)
            except AssertionError as err:
                ready[row] = {"error": f"WRONG RESULT: {error_text(err)}"}
                continue
        except Exception as err:  # noqa: BLE001 (report it, run the others)
            ready[row] = {"error": error_text(err)}
            continue
        runners[row], ready[row] = run, {"ok": True}
    serve(runners, ready, {"version": np.__version__})


if __name__ == "__main__":
    main()
