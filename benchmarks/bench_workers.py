"""Benchmark plumbing shared by the peer benchmarks: workers and the version measured.

A worker runs a peer (TVM, Halide, NumPy on all cores) in a process of its own.

The worker script speaks bench_access_common.serve's protocol: it prints a
JSON hello (with ``ready``: which rows it built and checked), then answers each
row name on stdin with its own measured time in ms.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


class WorkerDied(RuntimeError):
    """A worker process stopped answering (crashed or exited)."""

    def __init__(self, label: str, message: str):
        super().__init__(message)
        self.label = label


class Worker:
    """A worker process (bench_access_common.serve protocol): builds, checks, then times rows."""

    def __init__(self, label: str, python: str, script: str, config: dict,
                 env: dict | None = None):
        self.label = label
        self._stderr = tempfile.TemporaryFile(mode="w+")
        self.proc = subprocess.Popen([python, str(ROOT / "benchmarks" / script),
                                      json.dumps(config)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self._stderr, text=True,
                                     cwd=ROOT / "benchmarks", env={**os.environ, **(env or {})})
        hello = self._read()
        self.ready: dict = hello.pop("ready")
        self.meta = hello

    def _read(self):
        line = self.proc.stdout.readline()
        if not line:
            self._stderr.seek(0)
            tail = self._stderr.read().strip().splitlines()[-3:]
            raise WorkerDied(self.label, f"{self.label} worker stopped: {' | '.join(tail)}")
        return json.loads(line)

    def run_ms(self, row: str) -> float:
        """Run ``row`` once in the worker; its own measured time in ms."""
        try:
            self.proc.stdin.write(row + "\n")
            self.proc.stdin.flush()
        except BrokenPipeError:
            self.proc.wait(timeout=60)
            raise WorkerDied(self.label, f"{self.label} worker exited with status "
                                         f"{self.proc.returncode}") from None
        return float(self._read())

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.stdin.close()
            self.proc.wait(timeout=60)


def source_version() -> str:
    """``git describe --always --dirty`` of the tirlite being measured, or its path."""
    proc = subprocess.run(["git", "-C", str(ROOT), "describe", "--always", "--dirty"],
                          capture_output=True, text=True, check=False)
    return proc.stdout.strip() if proc.returncode == 0 else str(ROOT)
