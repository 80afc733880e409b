"""The shipped differential fuzzer (``tirlite.fuzz``): a short slice, its CLI, planted bugs.

The slice runs fixed seeds in this process and asserts both that nothing differs and that
the slice exercised what the fuzzer claims to test (vector code, loops kept serial by the
legality analysis, tails, n = 0, NaN inputs, math calls under a tolerance), so that a
generator that drifted into trivial programs fails here.
"""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import codegen
import tir
from tirlite.fuzz import cli, exprs, generate, runner, semantics
from tirlite.fuzz.check import Outcome, agrees, check

ROOT = Path(__file__).resolve().parents[1]
SLICE = range(24)


@pytest.fixture(scope="module")
def outcomes():
    with np.errstate(all="ignore"):
        return [check(seed) for seed in SLICE]


def test_slice_agrees(outcomes):
    failed = [o for o in outcomes if o.failed]
    assert not failed, "\n\n".join(cli.reproducer(o) for o in failed[:3])


def test_slice_exercises_what_it_claims(outcomes):
    def count(tag):
        return sum(tag in o.tags for o in outcomes)

    assert count("vectorized") >= 6, "too few programs reach vector code"
    assert count("kept_serial") >= 4, "too few loops kept serial by the dependence analysis"
    for tag in ("tail", "symbolic", "n_zero", "nan_input", "math", "parallel", "reduce",
                "carried", "guard"):
        assert count(tag) >= 1, f"no program of the slice has {tag}"
    exact, bounded, unchecked = np.sum([o.counts for o in outcomes], axis=0)
    assert bounded > 0, "no element was compared within a bound (math calls, FMA)"
    assert exact > 50 * (bounded + unchecked), "most elements must be compared bit for bit"


def test_generation_is_deterministic():
    a, b = generate(5), generate(5)
    assert a.func.script() == b.func.script()
    for x, y in zip(a.make_inputs(1), b.make_inputs(1)):
        assert np.array_equal(x, y, equal_nan=True)


# ---------------------------------------------------------------- planted bugs


def _flip_first_element(name, result):
    if name != "vector" or isinstance(result, Exception):
        return result
    bad = [a.copy() for a in result]
    first = bad[0].reshape(-1)
    first[0] = ~first[0] if first.dtype == bool else first[0] + 1
    return bad


def test_a_wrong_result_is_a_mismatch_with_a_reproducer():
    with np.errstate(all="ignore"):
        outcome = check(3, planted=_flip_first_element)
    assert outcome.kind == "mismatch" and outcome.failed
    assert outcome.detail.startswith("vector build, argument set 0:")
    text = cli.reproducer(outcome)
    assert "seed 3" in text and "@T.prim_func" in text
    assert "python -m tirlite.fuzz --seed 3 --count 1" in text


def test_a_wrong_model_is_a_mismatch(monkeypatch):
    # One ulp too much in the model's float add: every build must now disagree with it.
    def fadd(a, b, mode):
        v, e = semantics.fadd(a, b, mode)
        return np.nextafter(v, v.dtype.type(np.inf)), e

    monkeypatch.setitem(exprs._FLOAT_MODEL, "+", fadd)
    with np.errstate(all="ignore"):
        found = [check(seed) for seed in range(12)]
    assert any(o.kind == "mismatch" for o in found)


def test_agreement_is_bit_exact_unless_bounded():
    got = np.array([0.0, np.nan, 1.0, 1.0, 5.0], np.float32)
    want = np.array([-0.0, np.nan, np.nextafter(np.float32(1), np.float32(2)), 1.5, 1.0],
                    np.float32)
    bound = np.array([0.0, 0.0, 1e-6, 0.1, np.inf])
    assert agrees(got, want, bound).tolist() == [False, True, True, False, True]


def test_model_zero_product_of_an_uncertain_sign_is_not_bit_exact():
    """(a*b - a*b) * 0 under contraction: the difference is only known near 0, so the
    product's zero may be +0 or -0 (seed 2952177 of the fuzzer); an exact zero times 0
    stays bit exact."""
    mode = semantics.Mode(contract=True)
    near_zero = (np.float32(0.0), 1e-7)
    zero = (np.float32(0.0), 0.0)
    assert semantics.fmul(near_zero, zero, mode)[1] > 0
    assert semantics.fmul(zero, zero, mode)[1] == 0
    assert semantics.fmul((np.float32(2.0), 1e-7), zero, mode)[1] == 0


def test_model_fma_rounds_once():
    # a*b + c lies just above a float32 midpoint; rounding through float64 lands on it.
    a, b = np.float32(1 + 2.0 ** -12), np.float32(1 + 2.0 ** -12)
    c = np.float32(-(2.0 ** -24)) + np.float32(2.0 ** -49)
    exact = (1 + 2.0 ** -12) ** 2 + float(c)
    got = semantics.fused(a, b, c)
    neighbours = [np.nextafter(got, np.float32(-np.inf)), np.nextafter(got, np.float32(np.inf))]
    assert all(abs(float(got) - exact) <= abs(float(n) - exact) for n in neighbours)


def test_model_min_max_are_ieee_minimum_maximum():
    z, nz, nan = (np.float32(0.0), 0.0), (np.float32(-0.0), 0.0), (np.float32(np.nan), 0.0)
    assert np.signbit(semantics.fmin(z, nz)[0]) and not np.signbit(semantics.fmax(nz, z)[0])
    assert np.isnan(semantics.fmin(nan, z)[0]) and np.isnan(semantics.fmax(z, nan)[0])


# ---------------------------------------------------------------- bugs the fuzzer found


def test_abs_of_negative_zero_folds_to_positive_zero():
    # seeds 10104 and 11293: tir.abs(-0.0) folded to -0.0, so max(x, abs(-0.0)) kept -0.0
    assert not np.signbit(tir.abs(tir.const(-0.0, "float32")).value)
    assert tir.abs(tir.const(-2.5, "float64")).value == 2.5


def test_uint64_cast_to_int64_may_be_negative():
    # seeds 14623, 17903, 18974: the bound of int64(x) for a uint64 x was [0, 2^63 - 1], so
    # Simplify dropped the lower clamp of min(max(int64(x), -1000), 1000)
    bound = tir.arith.Analyzer().const_int_bound(tir.Cast("int64", tir.Var("x", "uint64")))
    assert bound.min_value == tir.arith.ConstIntBound.NEG_INF
    A = tir.decl_buffer((2,), "uint64", name="A")
    B = tir.decl_buffer((2,), "int64", name="B")
    ib = tir.ir_builder.create()
    a, b = ib.buffer_ptr(A), ib.buffer_ptr(B)
    with ib.for_range(0, 2, name="i") as i:
        b[i] = tir.min(tir.max(tir.Cast("int64", a[i]), tir.const(-1000, "int64")),
                       tir.const(1000, "int64"))
    out = np.zeros(2, "int64")
    codegen.build(tir.PrimFunc([A, B], ib.get()))["main"](np.array([2**63, 5], "uint64"), out)
    assert out.tolist() == [-1000, 5]


@pytest.mark.parametrize("seed", [11293, 17903])
def test_seeds_that_found_bugs_agree(seed):
    with np.errstate(all="ignore"):
        outcome = check(seed)
    assert outcome.kind == "agree", cli.reproducer(outcome)


# ---------------------------------------------------------------- command line and workers


def test_cli_runs_a_few_programs_in_workers():
    proc = subprocess.run([sys.executable, "-m", "tirlite.fuzz", "--count", "5", "--seed", "1"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "programs run: 5 " in proc.stdout
    assert "  mismatches: 0" in proc.stdout


def test_cli_exit_status_and_reproducer_on_a_finding(monkeypatch, capsys):
    monkeypatch.setattr(runner, "check", lambda seed: Outcome(seed, "mismatch", "planted"))
    assert cli.main(["--seed", "7", "--count", "2", "--jobs", "0"]) == 1
    out = capsys.readouterr().out
    assert "  mismatches: 2" in out and "== mismatch: seed 7: planted" in out
    assert "re-run: python -m tirlite.fuzz --seed 8 --count 1" in out


def test_a_worker_that_dies_is_a_crash_not_the_end():
    import multiprocessing

    worker = runner._Worker(multiprocessing.get_context("spawn"))
    try:
        worker.give(0)
        os.kill(worker.proc.pid, signal.SIGSEGV)  # what a segfault in compiled code does
        outcome = None
        for _ in range(100):
            outcome = runner._collect(worker, [worker.conn] if worker.conn.poll(0.1) else [],
                                      timeout=60)
            if outcome is not None:
                break
        assert outcome is not None and outcome.kind == "crash" and outcome.seed == 0
        assert "died" in outcome.detail
    finally:
        worker.stop()


def test_a_case_past_its_timeout_is_a_hang():
    import multiprocessing

    worker = runner._Worker(multiprocessing.get_context("spawn"))
    try:
        worker.give(0)
        worker.started = time.monotonic() - 10  # as if it had run for 10 s
        outcome = runner._collect(worker, [], timeout=5)
        assert outcome is not None and outcome.kind == "hang" and outcome.failed
        worker.proc.join(5)
        assert not worker.proc.is_alive(), "a hung worker must be killed"
    finally:
        worker.stop()
