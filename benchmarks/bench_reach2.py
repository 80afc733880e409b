"""Time the vectorizer's second-round forms: guarded max, last and first match (a flag; it
leaves after the first block holding a match), the while search (``while i < n and a[i] <=
2: i += 1``, made a first match by VectorizeWhileSearch), several accumulators,
a hand-unrolled sum, prefix sums (scans).

Run from the repository root::

    .venv/bin/python benchmarks/bench_reach2.py            # 2^24 elements
    .venv/bin/python benchmarks/bench_reach2.py --quick    # small sizes, a smoke run

Each tirlite kernel is one ``kind="vectorize"`` loop written as a user writes it
(bench_reach.py's convention), built by ``codegen.build``; beside it the same
loop built serial (``tir.disable_vectorize``: what these forms got before this
round), NumPy's closest call and numba's ``@njit`` loop (``fastmath=True`` where
tirlite may reassociate: float sums; run by bench_reach2_peer.py in the venv
``NUMBA_PYTHON`` names, numba pinning its own llvmlite). TVM is not in this table: its
``VectorizeLoop`` keeps every one of these loops serial (the serial column is
that code, up to LLVM). Medians of interleaved runs; one thread. Every result is
checked against NumPy before timing. Writes benchmarks/reach2_results.json.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_reach2_peer as peer  # noqa: E402 (inputs and checks: NumPy only)
from bench_kernels import (  # noqa: E402 (sets one thread before NumPy starts)
    ROOT,
    _cell,
    _host_cpu,
    interleaved_median_ms,
)

import codegen  # noqa: E402
import tir  # noqa: E402
import transform  # noqa: E402
from tir import ir_builder  # noqa: E402

F32, I32 = "float32", "int32"


def _loop(n: int, ins: list, outs: list, body) -> tir.PrimFunc:
    """``for i in vectorized(n): body(ib, i, *views)`` over buffers (name, shape, dtype)."""
    bufs = [tir.decl_buffer(shape, dtype, name) for name, shape, dtype in ins + outs]
    ib = ir_builder.create()
    views = [ib.buffer_ptr(b) for b in bufs]
    with ib.for_range(0, n, name="i", kind="vectorize") as i:
        body(ib, i, *views)
    return tir.PrimFunc(bufs, ib.get())


def guarded_max(n):
    def body(ib, i, a, m):
        with ib.if_scope(a[i] > m[0]):
            m[0] = a[i]
    return _loop(n, [("A", (n,), F32)], [("M", (1,), F32)], body)


def last_match(n):
    def body(ib, i, a, k):
        with ib.if_scope(a[i] > tir.const(2.0, F32)):
            k[0] = i
    return _loop(n, [("A", (n,), F32)], [("K", (1,), I32)], body)


def first_match(n):
    def body(ib, i, a, k, f):
        with ib.if_scope(tir.all(f[0] == 0, a[i] > tir.const(2.0, F32))):
            k[0] = i
            f[0] = 1
    return _loop(n, [("A", (n,), F32)], [("K", (1,), I32), ("F", (1,), I32)], body)


def while_search(n):
    """``while I[0] < n and A[I[0]] <= 2: I[0] += 1`` (if_then_else: A[n] is not read);
    no loop kind to mark: the serial column is the while loop as written."""
    A = tir.decl_buffer((n,), F32, "A")
    I = tir.decl_buffer((1,), I32, "I")  # noqa: E741 (the index buffer)
    ib = ir_builder.create()
    a, i = ib.buffer_ptr(A), ib.buffer_ptr(I)
    with ib.while_loop(tir.if_then_else(i[0] < n, a[i[0]] <= tir.const(2.0, F32),
                                        tir.const(False, "bool"))):
        i[0] = i[0] + 1
    return tir.PrimFunc([A, I], ib.get())


def moments(n):
    def body(ib, i, a, s):
        s[0] = s[0] + a[i]
        s[1] = s[1] + a[i] * a[i]
    return _loop(n, [("A", (n,), F32)], [("S", (2,), F32)], body)


def unrolled_sum(n):
    def body(ib, i, a, s):
        s[0] = s[0] + a[i, 0] + a[i, 1] + a[i, 2] + a[i, 3] + a[i, 4]
    return _loop(n // 5, [("A", (n // 5, 5), F32)], [("S", (1,), F32)], body)


def cumsum(dtype):
    def make(n):
        def body(ib, i, a, b):
            b[i + 1] = b[i] + a[i]
        return _loop(n, [("A", (n,), dtype)], [("B", (n + 1,), dtype)], body)
    return make


MAKERS = {"guarded max": guarded_max, "last match": last_match, "first match": first_match,
          "while search": while_search, "moments": moments,
          "unrolled sum": unrolled_sum, "cumsum int32": cumsum(I32),
          "cumsum float32": cumsum(F32)}


FLOAT_SUMS = ("moments", "unrolled sum", "cumsum float32")


def run_numba(n: int, runs: int) -> dict:
    """numba's row from bench_reach2_peer.py under ``$NUMBA_PYTHON``, or {} without it."""
    python = os.environ.get("NUMBA_PYTHON")
    if not python:
        return {}
    proc = subprocess.run([python, str(ROOT / "benchmarks" / "bench_reach2_peer.py"),
                           json.dumps({"n": n, "runs": runs})], capture_output=True, text=True,
                          timeout=900, check=False)
    if proc.returncode != 0:
        print(f"numba run failed: {proc.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
        return {}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _build(func, serial: bool):
    config = {"tir.disable_vectorize": True} if serial else {}
    with transform.PassContext(config=config):
        module = codegen.build(func, target="llvm")
    return module["main"], [str(r) for r in module.remarks]


def _restart(name: str, outs: list) -> list:
    """``outs``, the first match's flag lowered again (the while search's index back at
    0): every timed call searches."""
    if name == "first match":
        outs[0][0], outs[1][0] = -1, 0
    if name == "while search":
        outs[0][0] = 0
    return outs


def measure(n: int, runs: int, nb: dict) -> list:
    rows = []
    for name, (ins, outs, np_fn, ok) in peer.cases(n).items():
        fns, remarks = {}, None
        for label, serial in (("tirlite", False), ("serial", True)):
            entry, notes = _build(MAKERS[name](n), serial)
            remarks = remarks or notes
            fresh = [o.copy() for o in outs]
            entry(*ins, *fresh)
            # a float32 sum of 2^24 terms in serial order drifts far (the running total
            # outgrows its terms): the serial build is timed, not held to NumPy's result
            if not ok(fresh) and not (serial and name in FLOAT_SUMS):
                raise AssertionError(f"{name} ({label}): result differs from NumPy")
            fns[label] = lambda e=entry, x=ins, o=fresh, c=name: e(*x, *_restart(c, o))
        fns["numpy"] = np_fn
        times = interleaved_median_ms(fns, runs)
        times["numba"] = nb.get("ms", {}).get(name)
        peers = [t for key, t in times.items() if key in ("numpy", "numba") and t is not None]
        rows.append({"kernel": name, **{f"{key}_ms": t for key, t in times.items()},
                     "best_peer_over_tirlite": min(peers) / times["tirlite"],
                     "remark": next((r for r in remarks if ": vectorized" in r), remarks[:1])})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2^16 elements, 3 runs")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "reach2_results.json"))
    opts = parser.parse_args()
    n, runs = (2**16, 3) if opts.quick else (2**24, 9)
    nb = run_numba(n, runs)
    rows = measure(n, runs, nb)
    head = (f"{'kernel':<16}{'tirlite ms':>12}{'serial ms':>11}{'numpy ms':>10}{'numba ms':>10}"
            f"{'peer/tirlite':>14}")
    print(head + "\n" + "-" * len(head))
    for r in rows:
        print(f"{r['kernel']:<16}{_cell(r['tirlite_ms']):>12}{_cell(r['serial_ms']):>11}"
              f"{_cell(r['numpy_ms']):>10}{_cell(r.get('numba_ms')):>10}"
              f"{_cell(r['best_peer_over_tirlite'], 2):>14}")
    meta = {"n": n, "runs": runs, "cpu": _host_cpu(),
            "numba": nb.get("version")}
    print(f"n = {n}, median of {runs} interleaved runs; 1 thread; host {meta['cpu']}, "
          f"numba {meta['numba']}")
    Path(opts.out).write_text(json.dumps({"meta": meta, "rows": rows}, indent=2) + "\n")


if __name__ == "__main__":
    main()
