"""``tirlite tune``: tune a kernel file's function and keep the records in a database.

    tirlite tune kernel.py --trials 64 --db tune_db
    tirlite tune kernel.py --func conv --trials 200 --db tune_db --ray auto
    tirlite tune kernel.py --db tune_db --show          # the best record, replayed

The kernel is found as ``tirlite opt`` finds it (a top-level ``tir.PrimFunc``
or ``tir.IRModule``, or ``--func NAME``). A run resumes from ``--db``; the best
record's trace and GFLOP/s go to stdout.
"""

from __future__ import annotations

import argparse


def configure(p: argparse.ArgumentParser) -> None:
    """The arguments of ``tirlite tune``."""
    p.add_argument("file", help="a Python file defining a tir.PrimFunc or tir.IRModule")
    p.add_argument("--func", metavar="NAME", help="the top-level name of the kernel")
    p.add_argument("--target", default="llvm", help='target string (default "llvm": this CPU)')
    p.add_argument("--trials", type=int, default=64, help="candidates to measure in all")
    p.add_argument("--per-iter", type=int, default=16, help="candidates per batch")
    p.add_argument("--db", required=True, metavar="DIR", help="the database directory")
    p.add_argument("--seed", type=int, default=None, help="the search's seed")
    p.add_argument("--ray", metavar="ADDRESS", default=None,
                   help="build and measure on a Ray cluster ('auto', or host:port)")
    p.add_argument("--show", action="store_true",
                   help="do not tune: print the best record's schedule")


def run(args: argparse.Namespace) -> int:
    """Tune (or ``--show``) and print the best record."""
    from codegen import Target
    from tirlite import meta_schedule as ms

    from .cli import UsageError, _find_kernel

    kernel = _find_kernel(args.file, args.func)
    if args.trials < 1 or args.per_iter < 1:
        raise UsageError("--trials and --per-iter must be positive")
    target = Target(args.target)
    if args.show:
        db = ms.JSONDatabase(args.db, allow_missing=False)
    else:
        builder = runner = None
        if args.ray is not None:
            builder = ms.RayBuilder(address=args.ray)
            runner = ms.RayRunner(address=args.ray)
        db = ms.tune_tir(kernel, target, work_dir=args.db, max_trials_global=args.trials,
                         num_trials_per_iter=args.per_iter, seed=args.seed,
                         builder=builder, runner=runner)
    record = db.query_tuning_record(ms.tune.as_module(kernel), target)
    if record is None:
        print("no record for this kernel and target in", args.db)
        return 1
    sch = ms.tir_integration.compile_tir(db, kernel, target)
    gflops = record.meta.get("gflops")
    print(f"best: {1e3 * record.median_secs:.3f} ms"
          + (f", {gflops:.1f} GFLOP/s" if gflops else "") + f" ({len(db)} records)")
    print(sch.trace)
    return 0
