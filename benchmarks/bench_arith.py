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

Run: ``.venv/bin/python benchmarks/bench_arith.py``
"""

from __future__ import annotations

import statistics
import time

import tir
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


def main() -> None:
    stmt, _ = build_program()
    loops, indices = collect(stmt)
    _report("one analyzer", len(indices), [run_once(loops, indices) for _ in range(3)])
    cold = indices[:2000]
    _report("fresh analyzer per expression", len(cold), [run_cold(loops, cold) for _ in range(3)])


if __name__ == "__main__":
    main()
