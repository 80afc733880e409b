"""Pass rates of the ported TVM arith rows, per TVM class or test function.

    python -m tests.tir.arith.tvm_port.report [--failures] [--known]

``--failures`` prints each failing row and why; ``--known`` prints the
rewrite failures in the form of ``known_failures.py``.
"""

from __future__ import annotations

import importlib
import sys
from collections import Counter

from . import run_rewrite

#: (table name, runner module in tests/tir/arith) for the hand-ported tables.
TABLES = [
    ("canonical_simplify", "test_tvm_canonical_simplify"),
    ("const_int_bound", "test_tvm_const_int_bound"),
    ("modular_set", "test_tvm_modular_set"),
    ("int_set", "test_tvm_intset"),
]


def _rows():
    yield "rewrite_simplify", [(ident, lambda m=make, e=ext: run_rewrite.outcome(m, e))
                               for ident, make, ext in run_rewrite.ROWS]
    for table, module in TABLES:
        runner = importlib.import_module(f"tests.tir.arith.{module}")
        yield table, [(ident, lambda m=make, r=runner: r.outcome(m)) for ident, make in runner.ROWS]


def main(argv: list[str]) -> None:
    failures = []
    for table, rows in _rows():
        total, passed = Counter(), Counter()
        for ident, run in rows:
            group = ident.rsplit("-", 1)[0]
            total[group] += 1
            problem = run()
            if problem is None:
                passed[group] += 1
            else:
                failures.append((table, ident, problem))
        for group in total:
            print(f"  {group:40s} {passed[group]:4d} / {total[group]:4d}")
        n, p = sum(total.values()), sum(passed.values())
        print(f"{table:42s} {p:4d} / {n:4d}  ({100 * p / n:.1f}%)")
    if "--failures" in argv:
        for table, ident, problem in failures:
            print(f"{table} {ident}: {problem}")
    if "--known" in argv:
        for table, ident, problem in failures:
            if table == "rewrite_simplify":
                print(f"    {ident!r}: {problem[:150]!r},")


if __name__ == "__main__":
    main(sys.argv[1:])
