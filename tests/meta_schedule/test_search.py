"""The design space and the search: reproducible, deduplicated, starting from the default.

Measurements are replaced by a deterministic cost of the decisions here, so
that what is tested is the search itself: with the same measurements, the
same seed proposes the same candidates in the same order.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import tir
from tir.schedule import Schedule, Trace
from tirlite.meta_schedule.cost_model import RandomModel, RidgeModel, default_cost_model
from tirlite.meta_schedule.search import EvolutionarySearch, SearchSpace
from tirlite.meta_schedule.target_info import TargetInfo
from tirlite.meta_schedule.testing import te_workload as W

AVX2 = "llvm -mcpu=znver3"


def _fake_secs(decisions) -> float:
    # any fixed function of the decisions: the search must not care what it is
    return 1.0 + sum((k + 1) * d for k, d in enumerate(decisions)) % 7


def _run(seed: int, batches: int = 3, size: int = 6, model=None):
    mod = tir.IRModule.from_expr(W.matmul(64, 64, 64))
    search = EvolutionarySearch(SearchSpace(mod, TargetInfo.from_target(AVX2)),
                                model or RidgeModel(), seed=seed, population=16)
    seen = []
    for _ in range(batches):
        for cand in search.next_batch(size):
            seen.append(cand.decisions)
            search.notify(cand, _fake_secs(cand.decisions))
    return seen


def test_same_seed_same_candidates():
    assert _run(seed=7) == _run(seed=7)


def test_different_seed_different_candidates():
    assert _run(seed=7) != _run(seed=8)


def test_first_candidate_is_the_default_schedule_and_none_repeats():
    seen = _run(seed=3)
    mod = tir.IRModule.from_expr(W.matmul(64, 64, 64))
    default = SearchSpace(mod, TargetInfo.from_target(AVX2)).generate("default")
    assert seen[0] == default.decisions
    assert len(seen) == len(set(seen))


def test_forced_decisions_replay_the_same_schedule():
    mod = tir.IRModule.from_expr(W.matmul(64, 64, 64))
    space = SearchSpace(mod, TargetInfo.from_target(AVX2))
    a = space.generate("random", seed=11)
    b = space.generate("default", forced=a.decisions)
    assert a.decisions == b.decisions
    tir.assert_structural_equal(a.sch.mod["main"], b.sch.mod["main"])


def test_trace_of_a_candidate_replays_from_json():
    mod = tir.IRModule.from_expr(W.conv2d_nhwc_bias_relu(1, 2, 10, 4, 32))
    cand = SearchSpace(mod, TargetInfo.from_target("llvm")).generate("random", seed=5)
    text = json.dumps(cand.sch.trace.as_json())
    replayed = Schedule(mod)
    Trace.apply_json_to_schedule(json.loads(text), replayed)
    tir.assert_structural_equal(replayed.mod["main"], cand.sch.mod["main"])


def test_space_exhaustion_ends_the_search():
    mod = tir.IRModule.from_expr(W.add_bias_relu(4, 16))
    search = EvolutionarySearch(SearchSpace(mod, TargetInfo.from_target(AVX2)), RandomModel(0),
                                seed=0, population=8)
    total = []
    for _ in range(20):
        batch = search.next_batch(8)
        if not batch:
            break
        total += [c.decisions for c in batch]
        for c in batch:
            search.notify(c, 1.0)
    assert search.exhausted
    assert len(total) == len(set(total)) >= 1


@pytest.mark.parametrize("make", [RidgeModel, default_cost_model])
def test_cost_model_learns_a_ranking(make):
    rng = np.random.default_rng(0)
    x = [rng.random(6) for _ in range(60)]
    secs = [1.0 + 3 * f[0] + f[1] for f in x]  # faster when f0 is small
    model = make()
    model.update(x[:40], secs[:40])
    scores = model.predict(x[40:])
    truth = -np.array(secs[40:])
    assert np.corrcoef(scores, truth)[0, 1] > 0.8
