"""Builders and runners: a failure costs its candidate only; the check comes before the time."""

from __future__ import annotations

import os
import time

import numpy as np
import pytest

import codegen
import tir
from tir import ir_builder
from tirlite import meta_schedule as ms
from tirlite.meta_schedule.reference import make_reference
from tirlite.meta_schedule.testing import te_workload as W


def _abort_build(mod, target):
    if "crash" in str(mod):
        os.abort()
    if "hang" in str(mod):
        time.sleep(60)
    return codegen.build(mod, target=target)


def _named(name):
    return tir.IRModule.from_expr(W.add_bias_relu(4, 8).with_attr("note", name))


def test_builder_isolates_errors_crashes_and_hangs():
    builder = ms.LocalBuilder(max_workers=2, timeout_sec=5, build_func=_abort_build)
    try:
        good = ms.BuilderInput(ms.apply_default_schedule(W.add_bias_relu(4, 8)))
        results = builder.build([good, ms.BuilderInput(_named("crash")),
                                 ms.BuilderInput("not a module"), ms.BuilderInput(_named("hang")),
                                 good])
    finally:
        builder.shutdown()
    assert results[0].artifact and results[4].artifact
    assert "crashed or hung" in results[1].error_msg
    assert results[2].artifact is None and results[2].error_msg
    assert "crashed or hung" in results[3].error_msg


def _while_forever():
    buf = tir.decl_buffer((1,), "int32", "A")
    ib = ir_builder.create()
    a = ib.buffer_ptr(buf)
    with ib.while_loop(a[0] >= 0):
        a[0] = a[0] + 0
    return tir.IRModule.from_expr(tir.PrimFunc([buf], ib.get()))


@pytest.fixture(scope="module")
def runner():
    r = ms.LocalRunner(timeout_sec=5, repeat=2, min_repeat_ms=1)
    yield r
    r.shutdown()


def _artifact(mod):
    result = ms.LocalBuilder(max_workers=1).build([ms.BuilderInput(mod)])[0]
    assert result.artifact, result.error_msg
    return result.artifact


def test_runner_ok_wrong_error_and_reference_sent_once(runner):
    mod = tir.IRModule.from_expr(W.matmul(16, 16, 16))
    ref = make_reference(mod)
    good = _artifact(ms.apply_default_schedule(mod))
    wrong_mod = tir.IRModule.from_expr(W.matmul(16, 16, 16))
    # a reference whose expected output is off by one: every candidate must be "wrong"
    off = ms.Reference(ref.inputs, ref.output_indices, [e + 1 for e in ref.expected],
                       ref.rtol, ref.atol)
    before = runner.references_sent
    results = runner.run([ms.RunnerInput(good), ms.RunnerInput(good),
                          ms.RunnerInput(b"not a shared library")], ref)
    assert [r.status for r in results] == ["ok", "ok", "error"]
    assert len(results[0].run_secs) == 2 and min(results[0].run_secs) > 0
    assert runner.references_sent == before + 1
    assert runner.run([ms.RunnerInput(_artifact(wrong_mod))], off)[0].status == "wrong"


def test_builder_bytes_with_and_without_a_build_func_both_run(runner):
    mod = ms.apply_default_schedule(tir.IRModule.from_expr(W.matmul(16, 16, 16)))
    ref = make_reference(tir.IRModule.from_expr(W.matmul(16, 16, 16)))
    builder = ms.LocalBuilder(max_workers=1, build_func=codegen.build)
    try:
        library = builder.build([ms.BuilderInput(mod)])[0].artifact
    finally:
        builder.shutdown()
    artifact = _artifact(mod)
    assert library.startswith(b"\x7fELF")  # a build_func's module: a shared library
    assert not artifact.startswith(b"\x7fELF")  # the default: object code, never linked
    assert len(artifact) < len(library)
    results = runner.run([ms.RunnerInput(library), ms.RunnerInput(artifact)], ref)
    assert [r.status for r in results] == ["ok", "ok"]


def test_runner_stops_timing_a_candidate_slower_than_the_cutoff(runner):
    mod = tir.IRModule.from_expr(W.matmul(16, 16, 16))
    ref = make_reference(mod)
    good = _artifact(ms.apply_default_schedule(mod))
    slow, timed = runner.run([ms.RunnerInput(good, cutoff_secs=0.0),
                              ms.RunnerInput(good, cutoff_secs=3600.0)], ref)
    assert slow.status == "ok" and len(slow.run_secs) == 1 and slow.run_secs[0] > 0
    assert timed.status == "ok" and len(timed.run_secs) == 2
    # the cutoff never lets a wrong candidate through: the check comes first
    off = ms.Reference(ref.inputs, ref.output_indices, [e + 1 for e in ref.expected],
                       ref.rtol, ref.atol)
    assert runner.run([ms.RunnerInput(good, cutoff_secs=0.0)], off)[0].status == "wrong"


def test_runner_time_out_and_recovers(runner):
    loop = _while_forever()
    ref = ms.Reference([np.zeros(1, np.int32)], [0], [np.zeros(1, np.int32)])
    result = runner.run([ms.RunnerInput(_artifact(loop))], ref)[0]
    assert result.status == "timeout"
    mod = tir.IRModule.from_expr(W.matmul(8, 8, 8))
    assert runner.run([ms.RunnerInput(_artifact(mod))], make_reference(mod))[0].status == "ok"


def test_runner_crash_costs_that_candidate_only(runner, monkeypatch):
    mod = tir.IRModule.from_expr(W.matmul(8, 8, 8))
    ref = make_reference(mod)
    good = _artifact(mod)
    runner._ask(("ref", ref), 60)  # make sure the child is up
    runner._sent.add(ref.key)
    pid = runner._proc.pid
    os.kill(pid, 9)  # what a segfaulting candidate does to the measuring process
    assert runner.run([ms.RunnerInput(good)], ref)[0].status == "crash"
    assert runner.run([ms.RunnerInput(good)], ref)[0].status == "ok"


def _gather():
    """``B[i] = A[idx[i]]``: no analysis proves ``idx[i]`` in bounds, so a check stays."""
    a, idx, b = (tir.decl_buffer((16,), dt, n) for dt, n in
                 (("float32", "A"), ("int32", "idx"), ("float32", "B")))
    ib = ir_builder.create()
    pa, pi, pb = ib.buffer_ptr(a), ib.buffer_ptr(idx), ib.buffer_ptr(b)
    with ib.for_range(0, 16) as i:
        pb[i] = pa[pi[i]]
    return tir.PrimFunc([a, idx, b], ib.get())


def test_tuning_build_drops_only_the_run_time_checks():
    func = _gather()
    checked = codegen.build(func)
    assert "index out of bounds" in checked.get_source("ll")
    tuning = ms.builder.tuning_build(func, "llvm")
    assert "index out of bounds" not in tuning.get_source("ll")
    a = np.arange(16, dtype=np.float32)
    idx = np.arange(16, dtype=np.int32)[::-1].copy()
    out1, out2 = np.zeros(16, np.float32), np.zeros(16, np.float32)
    checked(a, idx, out1)
    tuning(a, idx, out2)
    np.testing.assert_array_equal(out1, out2)
    with pytest.raises(RuntimeError, match="out of bounds"):
        checked(a, idx + 100, out1)  # the user's build still refuses
