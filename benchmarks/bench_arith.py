"""Simplify the index expressions of a 10,000-statement program; print expressions per second.

The program is a loop nest ``i (0..64) / j (0..16) / k (0..4)`` holding 10,000
buffer stores whose indices look like what scheduling and lowering produce:
flattened multi-dimensional indices (``(i*16 + j)*4 + k``), fused loops split
back with ``floordiv``/``floormod``, offsets that cancel, and clamps; each
statement has its own constant offset, so whole expressions rarely repeat
(shared sub-expressions such as the fused index do, as in real code). Every
index is simplified with the loop ranges bound; the median of 3 runs is
reported. A second figure uses a fresh Analyzer per expression (on 2,000 of
them), so nothing is reused across statements: the cold per-expression cost.

A third table times the passes that lean on the analyzer, on the kernels of
``bench_kernels.py`` plus a bound-checked copy of each: ``codegen.lower``
with ``PassTimingInstrument``, median of 15, milliseconds per pass summed over
the kernels (Simplify, VectorizeLoop, InstrumentBoundCheckers, the rest).

Run: ``.venv/bin/python benchmarks/bench_arith.py``
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_kernels  # the kernels whose lowering we time

import codegen
import tir
import transform
from tir import arith, floordiv, floormod

STATEMENTS = 10_000


def _indices(s: int, i, j, k) -> list:
    c = s + 1  # a different offset per statement, as in unrolled code: few repeats
    fused = (i * 16 + j) * 4 + k
    variants = [
        (i * 16 + j) * 4 + k,
        floordiv(fused, 4) * 4 + floormod(fused, 4),
        floordiv(fused, 64) * 64 + floordiv(floormod(fused, 64), 4) * 4 + k + c,
        floormod(fused, 4) + floordiv(fused, 4) * 4 - c + c,
        (i + c) * 64 - c * 64 + j * 4 + k,
        floordiv(j * 4 + k, 4) + i * 16,
        floormod(j * 4 + k + 4 * c, 4) + (i * 16 + j) * 4,
        tir.min(fused, 4095) + tir.max(k - 4, 0),
        floordiv(i * 64 + j * 4 + k, 16) * 16 + floormod(j * 4 + k, 16),
        (fused + c) - (k + c) + k,
    ]
    return [variants[s % len(variants)]]


def build_program() -> tuple:
    """The loop nest with STATEMENTS stores; returns (stmt, loop vars)."""
    i, j, k = tir.var("i"), tir.var("j"), tir.var("k")
    buf = tir.decl_buffer((4096 + 64,), "float32", name="A")
    stores = [
        tir.BufferStore(buf, tir.const(float(s), "float32"), _indices(s, i, j, k))
        for s in range(STATEMENTS)
    ]
    body = tir.SeqStmt(stores)
    for v, extent in ((k, 4), (j, 16), (i, 64)):
        body = tir.For(v, tir.const(0), tir.const(extent), tir.ForKind.SERIAL, body)
    return body, (i, j, k)


def collect(stmt) -> tuple[list, list]:
    """The loops (var, min, extent) and every store's index expressions."""
    loops, indices = [], []

    def visit(node):
        if isinstance(node, tir.For):
            loops.append((node.loop_var, node.min, node.extent))
        elif isinstance(node, tir.BufferStore):
            indices.extend(node.indices)

    tir.stmt_functor.post_order_visit(stmt, visit)
    return loops, indices


def _bound_analyzer(loops) -> arith.Analyzer:
    a = arith.Analyzer()
    for v, lo, extent in loops:
        a.bind(v, tir.Range.from_min_extent(lo, extent))
    return a


def run_once(loops, indices) -> float:
    """Seconds to simplify every index with one Analyzer (as the Simplify pass does)."""
    start = time.perf_counter()
    a = _bound_analyzer(loops)
    for e in indices:
        a.simplify(e)
    return time.perf_counter() - start


def run_cold(loops, indices) -> float:
    """Seconds with a fresh Analyzer per expression: no result is reused across statements."""
    start = time.perf_counter()
    for e in indices:
        _bound_analyzer(loops).simplify(e)
    return time.perf_counter() - start


def _report(label: str, count: int, times: list) -> None:
    med = statistics.median(times)
    runs = ", ".join(f"{t:.3f}" for t in times)
    print(f"{label}: {count} index expressions, median {med:.3f} s "
          f"= {count / med:,.0f} expressions/s (runs {runs})")


PASS_RUNS = 15
PASSES_SHOWN = ("tir.Simplify", "tir.VectorizeLoop", "tir.InstrumentBoundCheckers")


def _kernels() -> list:
    """The benchmark kernels at small sizes (lowering time does not depend on n)."""
    return [bench_kernels.tir_vector_add(4096), bench_kernels.tir_saxpy(4099),
            bench_kernels.tir_relu(4096), bench_kernels.tir_gather(4096),
            bench_kernels.tir_sum(4096), bench_kernels.tir_matmul(64),
            bench_kernels.tir_conv(34)]


def pass_times() -> dict:
    """Each pass's seconds summed over the kernels, checked and not; median of PASS_RUNS."""
    funcs = _kernels()
    runs = []
    for _ in range(PASS_RUNS):
        total: dict = {}
        for checks in (False, True):
            timing = transform.PassTimingInstrument()
            config = {"tir.instrument_bound_checkers": checks}
            with transform.PassContext(config=config, instruments=[timing]):
                for f in funcs:
                    codegen.lower(f)
            for name, sec in timing.timings.items():
                total[name] = total.get(name, 0.0) + sec
        runs.append(total)
    names = {n for r in runs for n in r}
    return {n: statistics.median(r.get(n, 0.0) for r in runs) for n in names}


def _report_passes(times: dict) -> None:
    shown = {n: times.get(n, 0.0) for n in PASSES_SHOWN}
    rest = sum(t for n, t in times.items() if n not in PASSES_SHOWN and n.startswith("tir."))
    print(f"lowering {len(_kernels())} kernels x (unchecked, bound-checked), "
          f"median of {PASS_RUNS}, ms:")
    for name, t in shown.items():
        print(f"  {name:30s} {1000 * t:8.1f}")
    print(f"  {'other passes':30s} {1000 * rest:8.1f}")


def main() -> None:
    stmt, _ = build_program()
    loops, indices = collect(stmt)
    _report("one analyzer", len(indices), [run_once(loops, indices) for _ in range(3)])
    cold = indices[:2000]
    _report("fresh analyzer per expression", len(cold), [run_cold(loops, cold) for _ in range(3)])
    _report_passes(pass_times())


if __name__ == "__main__":
    main()
