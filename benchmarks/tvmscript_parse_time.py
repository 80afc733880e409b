"""How long ``tir.script.from_source`` takes on a 1,000-statement function.

Usage::

    python benchmarks/tvmscript_parse_time.py [--statements 1000] [--repeat 5]

The function mixes what printed IR holds: stores with arithmetic, vector
slices and broadcasts, lets, loops (serial, vectorized, unrolled) and ifs. The
figure is the best of ``--repeat`` runs (wall time), for the parse alone and
for print + parse of the parsed function.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tir.script import from_source  # noqa: E402


def program(statements: int) -> str:
    """A function with ``statements`` statements, cycling through six kinds."""
    lines = ['@T.prim_func',
             'def main(A: T.Buffer((1024,), "float32"), B: T.Buffer((1024,), "float32"), '
             'n: T.int32):']
    kinds = [
        "    A[{k}] = B[{k}] * T.float32(2) + A[({k} + 1) % 1024]",
        "    A[{v}:{v} + 8] = B[{v}:{v} + 8] + T.Broadcast(T.float32(1), 8)",
        "    x{k}: T.int32 = n * {k} + 1",
        "    for i{k} in T.vectorized(8):\n        A[{v} + i{k}] = B[{v} + i{k}] - T.float32(0.5)",
        "    if n > {k}:\n        A[{k}] = T.max(A[{k}], B[{k}])",
        "    for j{k} in T.unroll(4):\n        B[j{k} + {k} % 1000] = T.exp(A[j{k}])",
    ]
    for k in range(statements):
        lines.append(kinds[k % len(kinds)].format(k=k % 1000, v=(k * 8) % 1000))
    return "\n".join(lines) + "\n"


def best_of(repeat: int, fn) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--statements", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    text = program(args.statements)
    func = from_source(text)
    parse = best_of(args.repeat, lambda: from_source(text))
    printed = func.script()
    reparse = best_of(args.repeat, lambda: from_source(printed))
    n_lines = len(text.splitlines())
    print(f"{args.statements} statements ({n_lines} lines): parse {parse * 1000:.0f} ms; "
          f"its printed form ({len(printed.splitlines())} lines) parses in "
          f"{reparse * 1000:.0f} ms (best of {args.repeat})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
