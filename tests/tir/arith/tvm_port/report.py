"""Pass rates of the ported TVM arith rows, per TVM class.

    python -m tests.tir.arith.tvm_port.report [--failures] [--known]

``--failures`` prints each failing row and why; ``--known`` prints the
failures in the form of ``known_failures.py``.
"""

from __future__ import annotations

import sys
from collections import Counter

from . import run_rewrite


def main(argv: list[str]) -> None:
    total, passed, failures = Counter(), Counter(), []
    for ident, make, ext in run_rewrite.ROWS:
        cls = ident.rsplit("-", 1)[0]
        total[cls] += 1
        problem = run_rewrite.outcome(make, ext)
        if problem is None:
            passed[cls] += 1
        else:
            failures.append((ident, problem))
    for cls in total:
        print(f"{cls:32s} {passed[cls]:4d} / {total[cls]:4d}")
    n, p = sum(total.values()), sum(passed.values())
    print(f"{'rewrite_simplify':32s} {p:4d} / {n:4d}  ({100 * p / n:.1f}%)")
    if "--failures" in argv:
        for ident, problem in failures:
            print(f"{ident}: {problem}")
    if "--known" in argv:
        for ident, problem in failures:
            print(f"    {ident!r}: {problem[:150]!r},")


if __name__ == "__main__":
    main(sys.argv[1:])
