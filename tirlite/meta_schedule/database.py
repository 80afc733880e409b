"""The tuning database: workloads and measured records, in JSON-lines files (TVM's names).

``JSONDatabase(work_dir)`` keeps two files:

- ``database_workload.json``: one line per workload, its key (the function's
  ``tir.structural_digest``, the same in every process) and its printed text
  (for people; it is not parsed back);
- ``database_tuning_record.json``: one line per measured candidate: the
  workload key, the target (kind, triple, CPU, features), the schedule trace
  (JSON that replays it), the run times, the build time and free ``meta``.

Both are append-only: a record is one ``os.write`` of one line on a file
opened with ``O_APPEND``, so a run killed midway leaves at most one truncated
last line. Loading skips a line that is not JSON, lacks a field or has
another format version, with a warning naming the file and line, and goes on.

**Targets.** A record is returned for a target when the targets are equal;
otherwise for the nearest *compatible* one: same kind, triple and
architecture, and every feature the record was built with enabled on the
target asked for (code built for fewer features runs on a CPU with more).
Among those, the same CPU name first, then the most features in common. A
record built with a feature the asked target lacks is never returned.
"""

from __future__ import annotations

import json
import os
import warnings
from typing import Any, Iterable

import attrs
import numpy as np

from codegen import Target
from tir.function import IRModule, PrimFunc
from tir.structural import structural_digest

FORMAT_VERSION = 1
WORKLOAD_FILE = "database_workload.json"
RECORD_FILE = "database_tuning_record.json"


def target_to_json(target: Target | str) -> dict:
    """A target as the database stores it: kind, triple, arch, CPU, sorted enabled features."""
    t = Target(target)
    features = sorted(f[1:] for f in t.features.split(",") if f.startswith("+"))
    return {"kind": t.kind, "triple": t.triple, "arch": t.arch, "mcpu": t.mcpu,
            "features": features}


@attrs.frozen
class Workload:
    """A function tuned: its structural key and printed text."""

    key: str
    text: str

    def as_json(self) -> dict:
        return {"version": FORMAT_VERSION, "key": self.key, "text": self.text}

    @classmethod
    def from_json(cls, obj: dict) -> Workload:
        """The workload of a line written by ``as_json``; ValueError for anything else."""
        if obj.get("version") != FORMAT_VERSION or not isinstance(obj.get("key"), str):
            raise ValueError("not a tirlite workload")
        return cls(obj["key"], str(obj.get("text", "")))


@attrs.frozen
class TuningRecord:
    """One measured candidate."""

    trace: Any
    workload: str
    target: dict
    run_secs: list | None
    build_secs: float | None = None
    args_info: list | None = None
    meta: dict = attrs.field(factory=dict)

    def as_json(self) -> dict:
        return {"version": FORMAT_VERSION, "workload": self.workload, "target": self.target,
                "trace": self.trace, "run_secs": self.run_secs, "build_secs": self.build_secs,
                "args_info": self.args_info, "meta": self.meta}

    @staticmethod
    def from_json(obj: Any) -> TuningRecord:
        """A record from its JSON object; ``ValueError`` naming what is wrong."""
        if not isinstance(obj, dict) or obj.get("version") != FORMAT_VERSION:
            raise ValueError("not a tirlite tuning record of format version "
                             f"{FORMAT_VERSION}")
        missing = [k for k in ("workload", "target", "trace", "run_secs") if k not in obj]
        if missing:
            raise ValueError(f"missing {', '.join(missing)}")
        if not isinstance(obj["target"], dict) or not isinstance(obj["workload"], str):
            raise ValueError("malformed workload or target")
        return TuningRecord(trace=obj["trace"], workload=obj["workload"], target=obj["target"],
                            run_secs=obj["run_secs"], build_secs=obj.get("build_secs"),
                            args_info=obj.get("args_info"), meta=obj.get("meta") or {})

    @property
    def median_secs(self) -> float:
        """The median run time (inf when the record has none)."""
        return float(np.median(self.run_secs)) if self.run_secs else float("inf")


def workload_key(mod: IRModule | PrimFunc) -> str:
    """The key of a function (or of a module's one function)."""
    return structural_digest(_function(mod))


def _function(mod: IRModule | PrimFunc) -> PrimFunc:
    if isinstance(mod, PrimFunc):
        return mod
    funcs = list(mod.functions.values())
    if len(funcs) != 1:
        raise ValueError(f"database: a workload is one function, the module has {len(funcs)}")
    return funcs[0]


def compatible(record_target: dict, asked: dict) -> bool:
    """Whether code built for ``record_target`` runs on ``asked`` (see the module doc)."""
    same = all(record_target.get(k) == asked.get(k) for k in ("kind", "triple", "arch"))
    return same and set(record_target.get("features", ())) <= set(asked.get("features", ()))


def _nearness(record_target: dict, asked: dict) -> tuple:
    shared = len(set(record_target.get("features", ())) & set(asked.get("features", ())))
    return (record_target == asked, record_target.get("mcpu") == asked.get("mcpu"), shared)


class MemoryDatabase:
    """Workloads and records in memory (same interface as ``JSONDatabase``)."""

    def __init__(self):
        self.workloads: dict[str, Workload] = {}
        self.records: list[TuningRecord] = []

    def __len__(self) -> int:
        return len(self.records)

    def has_workload(self, mod: IRModule | PrimFunc) -> bool:
        """Whether ``mod``'s function has been committed."""
        return workload_key(mod) in self.workloads

    def commit_workload(self, mod: IRModule | PrimFunc) -> Workload:
        """Add ``mod``'s function (once) and return its ``Workload``."""
        key = workload_key(mod)
        if key not in self.workloads:
            self._add_workload(Workload(key, str(_function(mod))))
        return self.workloads[key]

    def _add_workload(self, w: Workload) -> None:
        self.workloads[w.key] = w

    def commit_tuning_record(self, record: TuningRecord) -> None:
        """Append a measured record."""
        self.records.append(record)

    def get_all_tuning_records(self) -> list[TuningRecord]:
        """Every record, in the order committed."""
        return list(self.records)

    def get_top_k(self, workload: Workload | str, k: int, target: Any = None
                  ) -> list[TuningRecord]:
        """The ``k`` fastest valid records of ``workload`` (for ``target`` if given)."""
        key = workload.key if isinstance(workload, Workload) else workload
        want = target_to_json(target) if target is not None else None
        found = [r for r in self.records if r.workload == key and r.run_secs
                 and (want is None or compatible(r.target, want))]
        return sorted(found, key=lambda r: r.median_secs)[:k]

    def query_tuning_record(self, mod: IRModule | PrimFunc, target: Any,
                            workload_name: str = "main") -> TuningRecord | None:
        """The fastest record of ``mod`` on ``target``, or on the nearest compatible target."""
        key = workload_key(mod)
        want = target_to_json(target)
        found = [r for r in self.records
                 if r.workload == key and r.run_secs and compatible(r.target, want)]
        if not found:
            return None
        best_fit = max(_nearness(r.target, want) for r in found)
        found = [r for r in found if _nearness(r.target, want) == best_fit]
        # A tuning run ends by timing its fastest few again side by side ("confirmed"):
        # those times are the ones to compare, a single early one may have been lucky.
        confirmed = [r for r in found if r.meta.get("confirmed")]
        return min(confirmed or found, key=lambda r: r.median_secs)

    def merge(self, other: Any) -> None:
        """Copy ``other``'s workloads and records in, skipping exact duplicates."""
        for w in other.workloads.values():
            if w.key not in self.workloads:
                self._add_workload(w)
        have = {json.dumps(r.as_json(), sort_keys=True) for r in self.records}
        for r in other.get_all_tuning_records():
            if json.dumps(r.as_json(), sort_keys=True) not in have:
                self.commit_tuning_record(r)


class JSONDatabase(MemoryDatabase):
    """A ``MemoryDatabase`` kept in two JSON-lines files in ``work_dir`` (see the module doc)."""

    def __init__(self, work_dir: str | None = None, *, path_workload: str | None = None,
                 path_tuning_record: str | None = None, allow_missing: bool = True):
        super().__init__()
        path_workload, path_tuning_record = _paths(work_dir, path_workload, path_tuning_record,
                                                   allow_missing)
        self.path_workload, self.path_tuning_record = path_workload, path_tuning_record
        for obj in _lines(path_workload):
            try:
                w = Workload.from_json(obj)
            except (ValueError, AttributeError) as err:
                _skip(path_workload, obj, err)
            else:
                self.workloads[w.key] = w
        for obj in _lines(path_tuning_record):
            try:
                self.records.append(TuningRecord.from_json(obj))
            except ValueError as err:
                _skip(path_tuning_record, obj, err)

    def _add_workload(self, w: Workload) -> None:
        super()._add_workload(w)
        _append(self.path_workload, w.as_json())

    def commit_tuning_record(self, record: TuningRecord) -> None:
        super().commit_tuning_record(record)
        _append(self.path_tuning_record, record.as_json())


def _paths(work_dir: str | None, path_workload: str | None, path_tuning_record: str | None,
           allow_missing: bool) -> tuple[str, str]:
    """The two files of a ``JSONDatabase``: given, or the default names in ``work_dir``."""
    if work_dir is None and (path_workload is None or path_tuning_record is None):
        raise ValueError("JSONDatabase: give work_dir, or both path_workload and "
                         "path_tuning_record")
    if work_dir is not None:
        if allow_missing:
            os.makedirs(work_dir, exist_ok=True)
        path_workload = path_workload or os.path.join(work_dir, WORKLOAD_FILE)
        path_tuning_record = path_tuning_record or os.path.join(work_dir, RECORD_FILE)
    for path in (path_workload, path_tuning_record):
        if not os.path.exists(path) and not allow_missing:
            raise FileNotFoundError(f"JSONDatabase: {path} does not exist")
    return path_workload, path_tuning_record


class _Line(dict):
    """A parsed line with where it came from (for warnings)."""

    lineno = 0


def _lines(path: str) -> Iterable[dict]:
    if not os.path.exists(path):
        return
    with open(path, "rb") as f:
        for lineno, raw in enumerate(f, start=1):
            if not raw.strip():
                continue
            try:
                obj = json.loads(raw)
            except (json.JSONDecodeError, UnicodeDecodeError):
                warnings.warn(f"{path}:{lineno}: skipped: not a JSON line (a truncated write "
                              f"of a killed run?)", stacklevel=4)
                continue
            if not isinstance(obj, dict):
                warnings.warn(f"{path}:{lineno}: skipped: not a JSON object", stacklevel=4)
                continue
            line = _Line(obj)
            line.lineno = lineno
            yield line


def _skip(path: str, obj: Any, err: Exception) -> None:
    warnings.warn(f"{path}:{getattr(obj, 'lineno', '?')}: skipped: {err}", stacklevel=3)


def _append(path: str, obj: dict) -> None:
    """One line, one write, on an O_APPEND file: a killed run leaves whole lines or one torn one.

    No fsync: a record lost to a power cut costs one re-measured candidate.
    """
    data = (json.dumps(obj, sort_keys=True) + "\n").encode()
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        if os.fstat(fd).st_size and not _ends_with_newline(fd):
            data = b"\n" + data  # a torn last line stays alone on its line
        os.write(fd, data)
    finally:
        os.close(fd)


def _ends_with_newline(fd: int) -> bool:
    size = os.fstat(fd).st_size
    return os.pread(fd, 1, size - 1) == b"\n"
