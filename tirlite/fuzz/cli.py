"""The command line: ``python -m tirlite.fuzz --seed S --count N --time-budget SECONDS``.

Prints a summary (programs run, how many vectorized, agreements, mismatches, errors by
kind, time) and, for each finding, a reproducer: the seed, the program's text and a
command that runs just that case again. The exit status is 1 if anything failed.
"""

from __future__ import annotations

import argparse
import collections
import os
import sys
import time

import numpy as np

from .check import BUILDS, Outcome
from .program import generate
from .runner import run_in_process, run_in_workers, seeds_from

#: Features a summary counts: tag -> what it means.
FEATURES = {
    "vectorized": "vectorized something",
    "kept_serial": "kept a loop serial for a dependence (legality)",
    "scalarized": "scalarized a statement or loop",
    "tail": "had a tail or a guarded last vector step",
    "symbolic": "had a symbolic extent n",
    "n_zero": "ran with n = 0",
    "parallel": "had a parallel loop",
    "carried": "carried a value across iterations",
    "reduce": "reduced into an allocated accumulator",
    "math": "called a math function",
    "nan_input": "had a NaN among the inputs",
}


DESCRIPTION = ("Differential fuzzer: random TIR programs built vectorized and serial, strict "
               "and with FMA contraction, and interpreted, compared with a NumPy model.")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The fuzzer's options (``python -m tirlite.fuzz`` and ``tirlite fuzz`` share them)."""
    parser.add_argument("--seed", type=int, default=0, help="seed of the first program")
    parser.add_argument("--count", type=int, default=None,
                        help="how many programs (default: 100, or unlimited with a budget)")
    parser.add_argument("--time-budget", type=float, default=None, metavar="SECONDS",
                        help="stop starting programs after this many seconds")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                        help="worker processes (0: run in this process, without crash "
                             "isolation)")
    parser.add_argument("--timeout", type=float, default=120.0, metavar="SECONDS",
                        help="a program still running after this long is a hang")
    parser.add_argument("--show", type=int, default=5, help="print this many reproducers")
    parser.add_argument("--verbose", action="store_true", help="one line per program")


def parse(argv: list | None) -> argparse.Namespace:
    """The command line's options."""
    parser = argparse.ArgumentParser(prog="python -m tirlite.fuzz", description=DESCRIPTION)
    add_arguments(parser)
    return parser.parse_args(argv)


def main(argv: list | None = None) -> int:
    """Run the fuzzer; print the summary and reproducers; 1 if anything failed."""
    return run(parse(argv))


def run(args: argparse.Namespace) -> int:
    """Run the fuzzer with parsed options (see ``add_arguments``); 1 if anything failed."""
    if args.count is None and args.time_budget is None:
        args.count = 100
    start = time.monotonic()
    deadline = start + (args.time_budget if args.time_budget is not None else float("inf"))
    seeds = seeds_from(args.seed, args.count)
    if args.jobs <= 0:
        outcomes_iter = run_in_process(seeds, deadline)
    else:
        outcomes_iter = run_in_workers(seeds, args.jobs, deadline, args.timeout)
    outcomes = []
    for outcome in outcomes_iter:
        outcomes.append(outcome)
        if args.verbose:
            print(line(outcome), flush=True)
    outcomes.sort(key=lambda o: o.seed)
    print(summary(outcomes, time.monotonic() - start, max(args.jobs, 1)))
    failed = [o for o in outcomes if o.failed]
    for o in failed[:args.show]:
        print()
        print(reproducer(o))
    if len(failed) > args.show:
        print(f"\n({len(failed) - args.show} more findings: seeds "
              f"{' '.join(str(o.seed) for o in failed[args.show:])})")
    return 1 if failed else 0


def line(o: Outcome) -> str:
    """One line per program for --verbose."""
    tags = ",".join(sorted(t for t in o.tags if t in FEATURES))
    text = f"seed {o.seed}: {o.kind} ({o.seconds:.2f} s) [{tags}]"
    return f"{text} {o.detail}" if o.detail else text


def summary(outcomes: list[Outcome], seconds: float, jobs: int) -> str:
    """Counts of outcomes, features exercised and elements compared."""
    count = len(outcomes)
    kinds = collections.Counter(o.kind for o in outcomes)
    lines = [f"programs run: {count} in {seconds:.1f} s on {jobs} job(s) "
             f"({1000 * seconds * jobs / max(count, 1):.0f} ms each); builds per program: "
             f"{', '.join(BUILDS)}; 2 argument sets each",
             f"  agreements: {kinds['agree']}",
             f"  mismatches: {kinds['mismatch']}"]
    for kind, what in (("exception", "other exceptions, or builds disagreeing on raising"),
                       ("crash", "crashes"), ("hang", "hangs"),
                       ("generator", "fuzzer errors (its generator or model)")):
        lines.append(f"  {what}: {kinds[kind]}")
    errors = collections.Counter(o.detail.split(":")[0] for o in outcomes if o.kind == "error")
    lines.append(f"  clear errors raised alike by every build (accepted): {kinds['error']} "
                 f"{dict(errors) if errors else ''}".rstrip())
    if errors:
        seeds = [str(o.seed) for o in outcomes if o.kind == "error"]
        lines.append(f"    seeds: {' '.join(seeds[:20])}{' ...' if len(seeds) > 20 else ''}")
    for tag, what in FEATURES.items():
        lines.append(f"  {what}: {sum(tag in o.tags for o in outcomes)}")
    exact, bounded, unchecked = np.sum([o.counts for o in outcomes], axis=0) if outcomes \
        else (0, 0, 0)
    lines.append(f"  elements compared (model runs x buffer elements): {exact} bit for bit, "
                 f"{bounded} within a bound (math calls, FMA), {unchecked} unchecked")
    return "\n".join(lines)


def reproducer(o: Outcome) -> str:
    """The seed, what went wrong, the program's text and the command that runs it again."""
    head = f"== {o.kind}: seed {o.seed}: {o.detail}"
    try:
        case = generate(o.seed)
        text = f"{case.summary}\n{case.func.script()}"
    except Exception as err:  # the generator itself failed on this seed
        text = f"(the generator raised {type(err).__name__}: {err})"
    command = f"python -m tirlite.fuzz --seed {o.seed} --count 1 --jobs 1 --verbose"
    return f"{head}\n{text}\nre-run: {command}"


if __name__ == "__main__":
    sys.exit(main())
