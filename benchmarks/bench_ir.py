"""How fast the IR core is: building, an identity mutation, structural hashing and equality.

Builds a program of about one million nodes (a loop over a ``SeqStmt`` of
stores whose values are sums of loads) and reports nodes per second for each
step, as the median of three runs. Equality compares with an independently
built copy (free variables paired, since the copy has its own).

Run: ``.venv/bin/python benchmarks/bench_ir.py [--nodes N]``
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import tir  # imported after the path fix above

TERMS = 8  # loads summed per store
RUNS = 3


def build(stores: int) -> tir.Stmt:
    """``for i in range(n): A[i*S + k] = B[i*S + k] + B[i*S + k + 1] + ...`` for each k."""
    n = tir.Var("n")
    i = tir.Var("i")
    a = tir.decl_buffer((n * stores,), "float32", "A")
    b = tir.decl_buffer((n * stores + TERMS,), "float32", "B")
    base = i * stores
    seq = []
    for k in range(stores):
        value = b[base + k]
        for t in range(1, TERMS):
            value = value + b[base + (k + t)]
        seq.append(tir.BufferStore(a, value, [base + k]))
    return tir.For(i, 0, n, tir.ForKind.SERIAL, tir.SeqStmt(seq))


class _Count(tir.stmt_functor.StmtExprVisitor):
    """Counts the expression and statement nodes (shared ones once per use)."""

    def __init__(self):
        self.count = 0

    def generic_visit(self, node: Any) -> None:
        self.count += 1
        super().generic_visit(node)


class _Identity(tir.stmt_functor.StmtExprMutator):
    """A mutator with no overrides: every node comes back as the same object."""


def count_nodes(stmt: tir.Stmt) -> int:
    """The number of nodes a full walk visits."""
    counter = _Count()
    counter(stmt)
    return counter.count


def median_seconds(fn: Callable[[], Any]) -> tuple[float, Any]:
    """The median wall time of ``RUNS`` calls of ``fn``, and the last result."""
    times, result = [], None
    for _ in range(RUNS):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=1_000_000, help="about how many nodes")
    args = parser.parse_args(argv)
    per_store = count_nodes(build(100)) / 100
    stores = max(1, round(args.nodes / per_store))

    build_s, stmt = median_seconds(lambda: build(stores))
    nodes = count_nodes(stmt)
    mutate_s, out = median_seconds(lambda: _Identity()(stmt))
    assert out is stmt, "an identity mutation must return the same object"
    hash_s, _ = median_seconds(lambda: tir.structural_hash(stmt))
    copy = build(stores)
    equal_s, same = median_seconds(lambda: tir.structural_equal(stmt, copy, map_free_vars=True))
    assert same, "an independently built copy must be structurally equal"

    print(f"program: {nodes:,} nodes ({stores:,} stores of {TERMS}-term sums), "
          f"median of {RUNS} runs")
    print(f"{'step':<28}{'seconds':>10}{'nodes/s':>14}")
    for name, seconds in (("build (operators)", build_s), ("identity StmtExprMutator", mutate_s),
                          ("structural_hash", hash_s), ("structural_equal (copy)", equal_s)):
        print(f"{name:<28}{seconds:>10.3f}{nodes / seconds:>14,.0f}")


if __name__ == "__main__":
    main()
