"""Time the vectorizer's reach: reductions, a self-strip-mining loop, a guarded conv.

Run from the repository root::

    .venv/bin/python benchmarks/bench_reach.py            # 2^24 elements (about a minute)
    .venv/bin/python benchmarks/bench_reach.py --quick    # small sizes, a smoke run
    TVM_PYTHON=/work/tvm-venv/bin/python .venv/bin/python benchmarks/bench_reach.py

Every tirlite kernel here is written the short way, as a user would: ONE
``ib.for_range(0, n, kind="vectorize")`` loop, no hand-made split, tail or
partial sums; ``codegen.build``'s pipeline does the rest (VectorizeReductions,
StripMineVectorLoops, IfConvertVectorLoops, VectorizeLoop).

Three tables:

1. sum, dot, max, argmax of 2^24 float32 against NumPy (``a.sum()``,
   ``np.dot``, ``a.max()``, ``a.argmax()``), numba (``@njit(fastmath=True)``
   loops, so numba may reassociate as tirlite does) and TVM (hand-written
   TVMScript with a 64-lane accumulator: TVM does not vectorize a reduction by
   itself, see bench_reach_tvm.py). Ratio: best peer time / tirlite time.
2. saxpy over n = 2^24 + 3 written as one vectorized loop, against the same at
   n = 2^24 (the tail costs one masked vector).
3. A 3x3 convolution of a 1024 x 1024 image written with an ``if x < w - 2``
   guard, against the same kernel with a hand-written split and scalar tail.

Medians of interleaved runs (each round runs every peer once); one thread.
Writes the numbers as JSON to benchmarks/reach_results.json.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_kernels import (  # noqa: E402 (sets one thread before NumPy/numba start)
    ROOT,
    _cell,
    _host_cpu,
    interleaved_median_ms,
    numba,
)

import codegen  # noqa: E402
import tir  # noqa: E402
import transform  # noqa: E402
from tir import ir_builder  # noqa: E402

F32 = "float32"
CONV_W = 1024  # the conv's image is CONV_W x CONV_W; its output (CONV_W - 2) squared


# ---------------------------------------------------------------- tirlite kernels


def _reduction(n: int, n_inputs: int, init, update, outs=(("S", F32),)) -> tir.PrimFunc:
    """One vectorized loop over ``n`` inputs updating one-element output buffers."""
    ins = [tir.decl_buffer((n,), F32, name) for name in "AB"[:n_inputs]]
    out_bufs = [tir.decl_buffer((1,), dtype, name) for name, dtype in outs]
    ib = ir_builder.create()
    views = [ib.buffer_ptr(b) for b in ins + out_bufs]
    for view, value in zip(views[n_inputs:], init):
        view[0] = value
    with ib.for_range(0, n, name="i", kind="vectorize") as i:
        update(ib, i, *views)
    return tir.PrimFunc(ins + out_bufs, ib.get())


def tir_sum(n: int) -> tir.PrimFunc:
    """``s += a[i]``."""
    def update(ib, i, a, s):
        s[0] = s[0] + a[i]
    return _reduction(n, 1, [tir.const(0.0, F32)], update)


def tir_dot(n: int) -> tir.PrimFunc:
    """``s += a[i] * b[i]``."""
    def update(ib, i, a, b, s):
        s[0] = s[0] + a[i] * b[i]
    return _reduction(n, 2, [tir.const(0.0, F32)], update)


def tir_max(n: int) -> tir.PrimFunc:
    """``s = max(s, a[i])``."""
    def update(ib, i, a, s):
        s[0] = tir.max(s[0], a[i])
    return _reduction(n, 1, [tir.const(-np.inf, F32)], update)


def tir_argmax(n: int) -> tir.PrimFunc:
    """``if a[i] > m: m = a[i]; k = i`` (the first index of the maximum)."""
    def update(ib, i, a, m, k):
        with ib.if_scope(a[i] > m[0]):
            m[0] = a[i]
            k[0] = i
    return _reduction(n, 1, [tir.const(-np.inf, F32), tir.const(0, "int32")], update,
                      outs=(("M", F32), ("K", "int32")))


def tir_saxpy(n: int) -> tir.PrimFunc:
    """``z[i] = a * x[i] + y[i]`` as one vectorized loop of extent n."""
    X, Y, Z = (tir.decl_buffer((n,), F32, name) for name in "XYZ")
    alpha = tir.var("alpha", F32)
    ib = ir_builder.create()
    x, y, z = (ib.buffer_ptr(b) for b in (X, Y, Z))
    with ib.for_range(0, n, name="i", kind="vectorize") as i:
        z[i] = alpha * x[i] + y[i]
    return tir.PrimFunc([alpha, X, Y, Z], ib.get())


def _conv_taps(inp, k, y, x):
    acc = tir.const(0.0, F32)
    for ky in range(3):
        for kx in range(3):
            acc = acc + inp[y + ky, x + kx] * k[ky * 3 + kx]
    return acc


def _conv_buffers(w: int):
    return (tir.decl_buffer((w, w), F32, "I"), tir.decl_buffer((9,), F32, "K"),
            tir.decl_buffer((w - 2, w - 2), F32, "O"))


def tir_conv_guarded(w: int) -> tir.PrimFunc:
    """The x loop runs over the whole image width; ``if x < w - 2`` keeps it in the output."""
    I, K, O = _conv_buffers(w)
    ib = ir_builder.create()
    inp, k, out = (ib.buffer_ptr(b) for b in (I, K, O))
    with ib.for_range(0, w - 2, name="y") as y, \
            ib.for_range(0, w, name="x", kind="vectorize") as x:
        with ib.if_scope(x < w - 2):
            out[y, x] = _conv_taps(inp, k, y, x)
    return tir.PrimFunc([I, K, O], ib.get())


def tir_conv_tail_loop(w: int, lanes: int) -> tir.PrimFunc:
    """The same conv split by hand: full vectors of ``lanes``, then a serial tail loop."""
    I, K, O = _conv_buffers(w)
    width = w - 2
    full = width // lanes
    ib = ir_builder.create()
    inp, k, out = (ib.buffer_ptr(b) for b in (I, K, O))
    with ib.for_range(0, width, name="y") as y:
        with ib.for_range(0, full, name="xo") as xo, \
                ib.for_range(0, lanes, name="xi", kind="vectorize") as xi:
            out[y, xo * lanes + xi] = _conv_taps(inp, k, y, xo * lanes + xi)
        with ib.for_range(full * lanes, width, name="x") as x:
            out[y, x] = _conv_taps(inp, k, y, x)
    return tir.PrimFunc([I, K, O], ib.get())


def numpy_conv(inp: np.ndarray, k: np.ndarray, out: np.ndarray) -> None:
    """The conv as nine shifted multiply-adds over whole rows (NumPy's fastest plain form)."""
    w = inp.shape[0]
    out[...] = 0
    for ky in range(3):
        for kx in range(3):
            out += inp[ky:ky + w - 2, kx:kx + w - 2] * k[ky * 3 + kx]


# ---------------------------------------------------------------- peers


def _numba_reductions() -> dict:
    if numba is None:
        return {}
    fast = numba.njit(fastmath=True)

    @fast
    def nb_sum(a):
        s = np.float32(0)
        for i in range(a.shape[0]):
            s += a[i]
        return s

    @fast
    def nb_dot(a, b):
        s = np.float32(0)
        for i in range(a.shape[0]):
            s += a[i] * b[i]
        return s

    @fast
    def nb_max(a):
        s = np.float32(-np.inf)
        for i in range(a.shape[0]):
            s = max(s, a[i])
        return s

    @numba.njit
    def nb_argmax(a):
        m, k = np.float32(-np.inf), 0
        for i in range(a.shape[0]):
            if a[i] > m:
                m, k = a[i], i
        return k

    return {"sum": nb_sum, "dot": nb_dot, "max": nb_max, "argmax": nb_argmax}


def run_tvm(n: int, runs: int) -> dict:
    """Timings from bench_reach_tvm.py under ``$TVM_PYTHON``, or {} without TVM."""
    import subprocess

    python = os.environ.get("TVM_PYTHON")
    if not python:
        return {}
    import llvmlite.binding as llvm

    sizes = {"n": n, "runs": runs, "mcpu": llvm.get_host_cpu_name(),
             "triple": llvm.get_process_triple()}
    proc = subprocess.run([python, str(ROOT / "benchmarks" / "bench_reach_tvm.py"),
                           json.dumps(sizes)], capture_output=True, text=True, timeout=900,
                          check=False)
    if proc.returncode != 0:
        print(f"TVM run failed: {proc.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
        return {}
    return json.loads(proc.stdout.strip().splitlines()[-1])


# ---------------------------------------------------------------- the three tables


def _build(func: tir.PrimFunc):
    with transform.PassContext():
        module = codegen.build(func, target="llvm")
    return module["main"], [str(r) for r in module.remarks]


def reductions(n: int, runs: int, tvm: dict) -> list:
    """Table 1: each reduction against NumPy, numba and TVM."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal(n).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)
    s, m, k = np.zeros(1, np.float32), np.zeros(1, np.float32), np.zeros(1, np.int32)
    nb = _numba_reductions()
    cases = {
        "sum": (tir_sum, (a, s), lambda: a.sum(), lambda: nb["sum"](a),
                lambda: abs(s[0] - a.sum(dtype=np.float64)) <= 1e-4 * np.abs(a).sum()),
        "dot": (tir_dot, (a, b, s), lambda: np.dot(a, b), lambda: nb["dot"](a, b),
                lambda: abs(s[0] - np.dot(a.astype(np.float64), b)) <= 1e-4 * np.abs(a * b).sum()),
        "max": (tir_max, (a, s), lambda: a.max(), lambda: nb["max"](a),
                lambda: s[0] == a.max()),
        "argmax": (tir_argmax, (a, m, k), lambda: a.argmax(), lambda: nb["argmax"](a),
                   lambda: k[0] == a.argmax() and m[0] == a.max()),
    }
    rows = []
    for name, (make, args, np_fn, nb_fn, ok) in cases.items():
        entry, remarks = _build(make(n))
        entry(*args)
        if not ok():
            raise AssertionError(f"{name}: tirlite result differs from NumPy")
        fns = {"tirlite": lambda e=entry, x=args: e(*x), "numpy": np_fn}
        if nb:
            nb_fn()
            fns["numba"] = nb_fn
        times = interleaved_median_ms(fns, runs)
        times["tvm"] = tvm.get(name, {}).get("ms")
        peers = [t for key, t in times.items() if key != "tirlite" and t is not None]
        rows.append({"kernel": name, **{f"{key}_ms": t for key, t in times.items()},
                     "best_peer_over_tirlite": min(peers) / times["tirlite"],
                     "tvm_error": tvm.get(name, {}).get("error"), "remarks": remarks})
    return rows


def saxpy_tail(n: int, runs: int) -> dict:
    """Table 2: one vectorized loop over n + 3 elements against n elements."""
    rng = np.random.default_rng(1)
    fns, checks = {}, []
    for size in (n, n + 3):
        x, y = rng.random(size, dtype=np.float32), rng.random(size, dtype=np.float32)
        z = np.zeros(size, np.float32)
        entry, remarks = _build(tir_saxpy(size))
        entry(np.float32(2.0), x, y, z)
        np.testing.assert_allclose(z, 2 * x + y, rtol=1e-6)
        fns[size] = lambda e=entry, a=(np.float32(2.0), x, y, z): e(*a)
        checks.append(remarks)
    times = interleaved_median_ms(fns, runs)
    return {"n_ms": times[n], "n_plus_3_ms": times[n + 3],
            "ratio": times[n + 3] / times[n], "remarks": checks[1]}


def guarded_conv(w: int, runs: int) -> dict:
    """Table 3: the guarded conv against the hand-split one (and NumPy)."""
    rng = np.random.default_rng(2)
    inp, k = rng.standard_normal((w, w)).astype(np.float32), rng.standard_normal(9).astype(F32)
    want = np.zeros((w - 2, w - 2), np.float32)
    numpy_conv(inp, k, want)
    lanes = codegen.Target("llvm").vector_width_bits // 32
    fns, remarks = {}, {}
    for name, func in (("guarded", tir_conv_guarded(w)),
                       ("tail_loop", tir_conv_tail_loop(w, lanes))):
        out = np.zeros((w - 2, w - 2), np.float32)
        entry, remarks[name] = _build(func)
        entry(inp, k, out)
        np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-4)
        fns[name] = lambda e=entry, a=(inp, k, out): e(*a)
    scratch = np.zeros_like(want)
    fns["numpy"] = lambda: numpy_conv(inp, k, scratch)
    times = interleaved_median_ms(fns, runs)
    return {**{f"{key}_ms": t for key, t in times.items()},
            "guarded_over_tail_loop": times["guarded"] / times["tail_loop"],
            "remarks": remarks["guarded"]}


def print_tables(rows: list, saxpy: dict, conv: dict, meta: dict) -> None:
    head = (f"{'kernel':<8}{'tirlite ms':>12}{'numpy ms':>11}{'numba ms':>11}{'tvm ms':>10}"
            f"{'peer/tirlite':>14}")
    print(head)
    print("-" * len(head))
    for r in rows:
        print(f"{r['kernel']:<8}{_cell(r['tirlite_ms']):>12}{_cell(r['numpy_ms']):>11}"
              f"{_cell(r.get('numba_ms')):>11}{_cell(r['tvm_ms']):>10}"
              f"{_cell(r['best_peer_over_tirlite'], 2):>14}")
    for r in rows:
        if r["tvm_error"]:
            print(f"  {r['kernel']}: tvm failed: {r['tvm_error']}")
    print(f"\nsaxpy as one vectorized loop: n = {meta['n']}: {saxpy['n_ms']:.3f} ms, "
          f"n + 3: {saxpy['n_plus_3_ms']:.3f} ms (ratio {saxpy['ratio']:.3f})")
    print(f"3x3 conv {meta['w']}x{meta['w']}: guarded {conv['guarded_ms']:.3f} ms, "
          f"hand-written tail loop {conv['tail_loop_ms']:.3f} ms (ratio "
          f"{conv['guarded_over_tail_loop']:.3f}), numpy {conv['numpy_ms']:.3f} ms")
    print(f"median of {meta['runs']} interleaved runs after 2 warm-up runs; 1 thread; "
          f"host: {meta['cpu']}, numba {meta['numba']}, tvm {meta['tvm']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes and 3 runs")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "reach_results.json"))
    opts = parser.parse_args()
    n, w, runs = (2**16, 130, 3) if opts.quick else (2**24, CONV_W, 9)
    tvm = run_tvm(n, runs)
    meta = {"n": n, "w": w, "runs": runs, "cpu": _host_cpu(), "tvm": tvm.pop("version", None),
            "numba": getattr(numba, "__version__", None)}
    rows = reductions(n, runs, tvm)
    saxpy = saxpy_tail(n, runs)
    conv = guarded_conv(w, runs)
    print_tables(rows, saxpy, conv, meta)
    Path(opts.out).write_text(json.dumps(
        {"meta": meta, "reductions": rows, "saxpy": saxpy, "conv": conv}, indent=2))


if __name__ == "__main__":
    main()
