"""The JSON database: round trip, merge, target lookup, what a killed run or a bad line leaves."""

from __future__ import annotations

import json
import warnings

import pytest

from tirlite import meta_schedule as ms
from tirlite.meta_schedule.database import RECORD_FILE, target_to_json
from tirlite.meta_schedule.testing import te_workload as W

AVX2 = {"kind": "llvm", "triple": "x86_64-unknown-linux-gnu", "arch": "x86_64",
        "mcpu": "znver3", "features": ["avx", "avx2", "fma"]}
AVX512 = {**AVX2, "mcpu": "znver4", "features": ["avx", "avx2", "avx512f", "fma"]}
SKX = {**AVX512, "mcpu": "skylake-avx512"}
ARM = {"kind": "llvm", "triple": "aarch64-linux-gnu", "arch": "aarch64", "mcpu": "generic",
       "features": ["neon"]}


def _record(workload, target, secs, tag=0):
    return ms.TuningRecord(trace={"insts": [], "tag": tag}, workload=workload, target=target,
                           run_secs=[secs], build_secs=0.1, args_info=[["float32", [8, 8]]],
                           meta={"decisions": [tag]})


@pytest.fixture
def func():
    return W.matmul(16, 16, 16)


def test_round_trip_and_resume(tmp_path, func):
    db = ms.JSONDatabase(str(tmp_path))
    w = db.commit_workload(func)
    assert db.commit_workload(func) == w and db.has_workload(func)
    rec = _record(w.key, AVX2, 2e-3)
    db.commit_tuning_record(rec)
    again = ms.JSONDatabase(str(tmp_path))
    assert again.get_all_tuning_records() == [rec]
    assert list(again.workloads) == [w.key]
    again.commit_tuning_record(_record(w.key, AVX2, 1e-3, tag=1))
    assert len(ms.JSONDatabase(str(tmp_path))) == 2


def test_merge_skips_duplicates(tmp_path, func):
    a, b = ms.JSONDatabase(str(tmp_path / "a")), ms.JSONDatabase(str(tmp_path / "b"))
    key = a.commit_workload(func).key
    b.commit_workload(func)
    shared = _record(key, AVX2, 1e-3)
    a.commit_tuning_record(shared)
    b.commit_tuning_record(shared)
    b.commit_tuning_record(_record(key, AVX512, 5e-4, tag=2))
    a.merge(b)
    assert len(a) == 2
    assert len(ms.JSONDatabase(str(tmp_path / "a"))) == 2


def test_lookup_exact_then_nearest_compatible_never_incompatible(func):
    db = ms.MemoryDatabase()
    key = db.commit_workload(func).key
    db.commit_tuning_record(_record(key, AVX2, 3e-3, tag=1))
    db.commit_tuning_record(_record(key, SKX, 1e-3, tag=2))
    db.commit_tuning_record(_record(key, ARM, 1e-4, tag=3))
    pick = db.query_tuning_record(func, AVX512_TARGET)
    assert pick.meta["decisions"] == [2]  # AVX-512 code runs on znver4: most features shared
    avx2_only = db.query_tuning_record(func, ZEN3_TARGET)
    assert avx2_only.meta["decisions"] == [1]  # never the AVX-512 record, though faster
    assert db.query_tuning_record(W.matmul(8, 8, 8), ZEN3_TARGET) is None


ZEN3_TARGET = "llvm -mcpu=znver3"
AVX512_TARGET = "llvm -mcpu=skylake-avx512"


@pytest.fixture(autouse=True)
def _real_target_features(monkeypatch):
    """Targets by name resolve to the feature lists above (host-independent)."""
    table = {ZEN3_TARGET: AVX2, AVX512_TARGET: SKX}
    monkeypatch.setattr(ms.database, "target_to_json",
                        lambda t: table.get(str(t), None) or target_to_json(t))


def test_corrupt_truncated_and_foreign_lines_are_skipped_with_warnings(tmp_path, func):
    db = ms.JSONDatabase(str(tmp_path))
    key = db.commit_workload(func).key
    db.commit_tuning_record(_record(key, AVX2, 1e-3))
    path = tmp_path / RECORD_FILE
    good = path.read_text()
    path.write_text(good + "{not json\n" + json.dumps({"version": 99}) + "\n"
                    + json.dumps({"version": 1, "workload": key}) + "\n" + good[:40])
    with pytest.warns(UserWarning) as caught:
        again = ms.JSONDatabase(str(tmp_path))
    messages = [str(w.message) for w in caught]
    assert len(again) == 1
    for lineno in (2, 3, 4, 5):
        assert any(f"{path}:{lineno}: skipped" in m for m in messages), messages
    # a torn last line (a killed run): the next record starts on a line of its own
    again.commit_tuning_record(_record(key, AVX2, 5e-4, tag=9))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert len(ms.JSONDatabase(str(tmp_path))) == 2


def test_missing_database_is_an_error_when_asked(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        ms.JSONDatabase(str(tmp_path / "nope"), allow_missing=False)
