"""Lesson 7: schedules without writing them -- the default schedule, a tuning run, its database.

Lesson 5 scheduled the conv layer by hand, with tiles chosen for one CPU: 10
pixels x 2 registers of channels is 20 accumulators, right for AVX-512's 32
registers and a spill on AVX2's 16. ``tirlite.meta_schedule`` (TVM's names)
derives the schedule from the target instead:

1. ``ms.apply_default_schedule``: rules recognize the conv as a contraction
   and tile it for the target's registers (its trace shows the choices);
2. ``ms.tune_tir``: a search over those choices, every candidate checked
   against the unscheduled function, then timed on one pinned core; the
   records go to a JSON-lines database in ``work_dir``;
3. reading the database, and replaying its best record with
   ``ms.tir_integration.compile_tir`` (or by hand from the record's trace).

Run it with ``python tutorials/07_tuning.py``; ``--full`` uses the seed's
full layer (N=5, CI=CO=128, 100x80) and 64 trials, as README's table does.
"""

import json
import sys
import tempfile
import time

import numpy as np

import codegen
import tir
from tirlite import meta_schedule as ms
from tirlite.meta_schedule.testing import te_workload

RNG = np.random.default_rng(0)


def median_seconds(fn, repeat: int = 5) -> float:
    fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def conv_arrays(n, h, w, ci, co):
    inp = RNG.random((n, h + 2, w + 2, ci), dtype=np.float32) - 0.5
    flt = RNG.random((ci, 3, 3, co), dtype=np.float32) - 0.5
    bias = RNG.random(co, dtype=np.float32) - 0.5
    return [inp, flt, bias, np.zeros((n, h, w, co), np.float32)]


def main(full: bool = False) -> None:
    n, h, w, ci, co = (5, 80, 100, 128, 128) if full else (1, 8, 20, 32, 64)
    trials = 64 if full else 6
    func = te_workload.conv2d_nhwc_bias_relu(n, h, w, ci, co)
    args = conv_arrays(n, h, w, ci, co)
    want = te_workload.reference("conv2d_nhwc_bias_relu")(*args[:3])
    flops = 2.0 * n * h * w * co * 9 * ci
    info = ms.TargetInfo.from_target("llvm")
    print(f"conv {n}x{h}x{w}, {ci} -> {co} channels; target: {info.vector_bits}-bit vectors, "
          f"{info.vector_registers} vector registers, FMA {info.has_fma}")

    print("\n1. the default schedule (no search)")
    sch = ms.default_schedule(func, "llvm")
    for inst in sch.trace:
        if inst.name == "sample_categorical":
            print(f"   a choice: {inst}")
    kernel = codegen.build(sch.mod)
    kernel(*args)
    np.testing.assert_allclose(args[-1], want, rtol=1e-4, atol=1e-4)
    secs = median_seconds(lambda: kernel(*args))
    print(f"   {flops / secs / 1e9:.1f} GFLOP/s, equal to NumPy")

    print(f"\n2. tuning: {trials} trials")
    with tempfile.TemporaryDirectory() as work_dir:
        db = ms.tune_tir(func, "llvm", work_dir=work_dir, max_trials_global=trials,
                         num_trials_per_iter=min(trials, 8), seed=0, progress=False)
        records = db.get_all_tuning_records()
        confirmed = [r for r in records if r.meta.get("confirmed")]
        print(f"   {len(records)} records in {work_dir}/database_tuning_record.json, "
              f"{len(confirmed)} of them the fastest and the default timed again side by side")

        print("\n3. the database: the confirmed records, fastest first")
        for rec in sorted(confirmed, key=lambda r: r.median_secs)[:3]:
            print(f"   {1e3 * rec.median_secs:7.3f} ms  {rec.meta['gflops']:6.1f} GFLOP/s  "
                  f"decisions {rec.meta['decisions']}  target {rec.target['mcpu']}")
        best = ms.tir_integration.compile_tir(db, func, "llvm")
        by_hand = tir.Schedule(func)
        top = db.query_tuning_record(tir.IRModule.from_expr(func), "llvm")
        tir.schedule.Trace.apply_json_to_schedule(json.loads(json.dumps(top.trace)), by_hand)
        tir.assert_structural_equal(best.mod["main"], by_hand.mod["main"])
        print("   the best record replays (compile_tir, or its trace by hand) to the same IR")
        tuned = codegen.build(best.mod)
        tuned(*args)
        np.testing.assert_allclose(args[-1], want, rtol=1e-4, atol=1e-4)
        secs = median_seconds(lambda: tuned(*args))
        print(f"   tuned: {flops / secs / 1e9:.1f} GFLOP/s, equal to NumPy")


if __name__ == "__main__":
    main(full="--full" in sys.argv)
