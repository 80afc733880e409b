"""tune_tir end to end: records replay and compute the function's result; resume; bugs reported.

Small workloads and few trials: each trial is a build (~0.1 s) and a timed run.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import codegen
import tir
from tir.schedule import Schedule, Trace
from tirlite import meta_schedule as ms
from tirlite.meta_schedule.target_info import TargetInfo
from tirlite.meta_schedule.testing import te_workload as W


@pytest.fixture(scope="module")
def pools():
    """One builder and one runner for the module: each start costs a Python start-up."""
    builder, runner = ms.LocalBuilder(max_workers=1), ms.LocalRunner(min_repeat_ms=2)
    yield {"builder": builder, "runner": runner}
    builder.shutdown()
    runner.shutdown()


@pytest.fixture(scope="module")
def tuned(tmp_path_factory, pools):
    work_dir = tmp_path_factory.mktemp("tune")
    func = W.matmul(64, 48, 32)
    db = ms.tune_tir(func, "llvm", work_dir=str(work_dir), max_trials_global=6,
                     num_trials_per_iter=3, seed=1, progress=False, **pools)
    return func, db, work_dir


def _trials(db):
    return [r for r in db.get_all_tuning_records() if not r.meta.get("confirmed")]


def test_every_record_replays_and_computes_the_product(tuned):
    func, db, _ = tuned
    records = db.get_all_tuning_records()
    assert 1 <= len(_trials(db)) <= 6
    rng = np.random.default_rng(0)
    a = rng.random((64, 32), dtype=np.float32)
    b = rng.random((32, 48), dtype=np.float32)
    for rec in records:
        sch = Schedule(func)
        Trace.apply_json_to_schedule(json.loads(json.dumps(rec.trace)), sch)
        c = np.zeros((64, 48), np.float32)
        codegen.build(sch.mod)(a, b, c)
        np.testing.assert_allclose(c, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)
        assert rec.run_secs and min(rec.run_secs) > 0


def test_the_run_ends_by_timing_its_fastest_and_the_default_again(tuned):
    func, db, _ = tuned
    confirmed = [r for r in db.get_all_tuning_records() if r.meta.get("confirmed")]
    fastest = sorted(_trials(db), key=lambda r: r.median_secs)[:ms.tune.CONFIRM_TOP]
    assert {tuple(r.meta["decisions"]) for r in fastest} <= \
        {tuple(r.meta["decisions"]) for r in confirmed}
    space = ms.tune.SearchSpace(tir.IRModule.from_expr(func), TargetInfo.from_target("llvm"))
    assert space.generate("default").decisions in \
        {tuple(r.meta["decisions"]) for r in confirmed}
    for rec in confirmed:
        assert len(rec.run_secs) == ms.tune.CONFIRM_ROUNDS and min(rec.run_secs) > 0
        assert rec.meta["trial"] == -1


def test_compile_tir_gives_the_fastest_confirmed_record(tuned):
    func, db, _ = tuned
    confirmed = [r for r in db.get_all_tuning_records() if r.meta.get("confirmed")]
    best = min(confirmed, key=lambda r: float(np.median(r.run_secs)))
    sch = ms.tir_integration.compile_tir(db, func, "llvm")
    expected = Schedule(func)
    Trace.apply_json_to_schedule(best.trace, expected)
    tir.assert_structural_equal(sch.mod["main"], expected.mod["main"])


def test_a_run_resumes_from_its_database(tuned, pools):
    func, _, work_dir = tuned
    before = len(_trials(ms.JSONDatabase(str(work_dir))))
    db = ms.tune_tir(func, "llvm", work_dir=str(work_dir), max_trials_global=before + 2,
                     num_trials_per_iter=2, seed=1, progress=False, **pools)
    records = _trials(db)
    assert before < len(records) <= before + 2
    decisions = [tuple(r.meta["decisions"]) for r in records]
    assert len(decisions) == len(set(decisions)), "a resumed run measured a candidate again"


def test_compile_tir_without_a_record_is_the_default_schedule():
    func = W.matmul(32, 32, 32)
    sch = ms.tir_integration.compile_tir(ms.MemoryDatabase(), func, "llvm")
    tir.assert_structural_equal(sch.mod["main"], ms.apply_default_schedule(func)["main"])


def _elementwise_sum_16():
    """A function with a 16x16 matmul's signature that adds instead (a planted bug)."""
    from tir import te

    a = te.placeholder((16, 16), "float32", "A")
    b = te.placeholder((16, 16), "float32", "B")
    c = te.compute((16, 16), lambda i, j: a[i, j] + b[i, j], name="C")
    return tir.IRModule.from_expr(te.create_prim_func([a, b, c]))


class _WrongBuilder:
    """Builds every candidate from ``_elementwise_sum_16``: what a miscompiling schedule gives."""

    def __init__(self, inner):
        self.inner = inner

    def build(self, inputs):
        return self.inner.build([ms.BuilderInput(_elementwise_sum_16(), i.target)
                                 for i in inputs])


def test_a_wrong_candidate_is_reported_never_stored(tmp_path, pools):
    func = W.matmul(16, 16, 16)
    with pytest.warns(ms.WrongCandidateWarning, match="computed something else"):
        db = ms.tune_tir(func, "llvm", work_dir=str(tmp_path), max_trials_global=2,
                         num_trials_per_iter=2, seed=0, builder=_WrongBuilder(pools["builder"]),
                         runner=pools["runner"], progress=False)
    assert len(db.get_all_tuning_records()) == 0
    lines = (tmp_path / "wrong_candidates.json").read_text().splitlines()
    assert lines and "trace" in json.loads(lines[0])


def test_cli_tune_and_show(tmp_path):
    kernel = tmp_path / "kernel.py"
    kernel.write_text(textwrap.dedent("""
        from tirlite.meta_schedule.testing import te_workload
        matmul = te_workload.matmul(32, 32, 32)
    """))
    db = tmp_path / "db"
    run = [sys.executable, "-m", "tirlite", "tune", str(kernel), "--trials", "2",
           "--per-iter", "2", "--db", str(db), "--seed", "0"]
    out = subprocess.run(run, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "best:" in out.stdout and "sch.get_block" in out.stdout
    show = subprocess.run(run[:5] + ["--db", str(db), "--show"], capture_output=True, text=True,
                          timeout=120)
    assert show.returncode == 0, show.stderr
    assert show.stdout.splitlines()[1:] == out.stdout.splitlines()[1:]


def test_cli_tune_bad_input_is_one_line(tmp_path):
    kernel = tmp_path / "kernel.py"
    kernel.write_text("x = 1\n")
    out = subprocess.run([sys.executable, "-m", "tirlite", "tune", str(kernel), "--db",
                          str(tmp_path / "db")], capture_output=True, text=True, timeout=120)
    assert out.returncode == 2
    assert out.stderr.startswith("tirlite: error:") and len(out.stderr.splitlines()) == 1


def test_tune_tir_bad_input_is_a_clear_error():
    with pytest.raises(TypeError, match="IRModule or PrimFunc"):
        ms.tune_tir("not a module", "llvm", max_trials_global=1)
    two = tir.IRModule({"a": W.matmul(8, 8, 8), "b": W.matmul(4, 4, 4)})
    with pytest.raises(ValueError, match="one function, got 2"):
        ms.tune_tir(two, "llvm", max_trials_global=1)
