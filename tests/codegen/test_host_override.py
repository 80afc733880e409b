"""TIRLITE_HOST_TARGET: the host target stands for another CPU this machine can run.

The host is read once per process, so each case runs in a child process with
the variable set (or, for the can-this-machine-run-it check, calls
``host_override.apply`` with the facts of a pretended machine).
"""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import llvmlite.binding as llvm
import pytest

from target import cpu_features, host_override

ROOT = Path(__file__).resolve().parents[2]
TRIPLE = llvm.get_process_triple()
X86 = TRIPLE.startswith("x86_64")
pytestmark = pytest.mark.skipif(not X86, reason="host overrides name x86 CPUs")

REPORT = """
import json, numpy as np, codegen, tir
t = codegen.Target("llvm")
A = tir.decl_buffer((37,), "float32", name="A")
B = tir.decl_buffer((37,), "float32", name="B")
j = tir.Var("j", "int32")
body = tir.For(j, 0, 37, tir.ForKind.VECTORIZED,
               tir.BufferStore(B, tir.BufferLoad(A, [j]) * 2.0, [j]))
lib = codegen.build(tir.PrimFunc([A, B], body), target="llvm")
a = np.arange(37, dtype="float32"); b = np.zeros(37, "float32"); lib["main"](a, b)
asm = lib.get_source("asm")
print(json.dumps({"mcpu": t.mcpu, "bits": t.vector_width_bits, "features": t.features,
                  "resolved": str(t.resolved()), "ok": bool((b == 2 * a).all()),
                  "zmm": "%zmm" in asm, "ymm": "%ymm" in asm}))
"""


def _child(override: str | None, code: str = REPORT) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != host_override.ENV}
    if override is not None:
        env[host_override.ENV] = override
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=300)


def _report(override: str | None) -> dict:
    out = _child(override)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def _machine_has(feature: str) -> bool:
    return llvm.get_host_cpu_features().get(feature, False)


@pytest.mark.skipif(not _machine_has("avx2"), reason="an AVX2 override needs an AVX2 machine")
def test_an_avx2_override_gives_256_bit_code_that_runs():
    r = _report("llvm -mcpu=x86-64-v3")
    assert r["mcpu"] == "x86-64-v3" and r["bits"] == 256 and r["ok"]
    assert "+avx2" in r["features"].split(",") and "-avx512f" in r["features"].split(",")
    assert "-mcpu=x86-64-v3" in r["resolved"]
    assert r["ymm"] and not r["zmm"]  # nothing of AVX-512 in the code


def test_an_sse_override_gives_128_bit_code():
    r = _report("llvm -mcpu=x86-64")
    assert r["bits"] == 128 and r["ok"] and not r["ymm"] and not r["zmm"]


@pytest.mark.skipif(not _machine_has("avx512f"), reason="needs an AVX-512 machine")
def test_mattr_takes_features_off_the_named_cpu():
    r = _report("llvm -mcpu=x86-64-v4 -mattr=-avx512f")
    assert r["bits"] == 256 and r["ok"] and not r["zmm"]


def test_without_the_variable_the_host_is_the_machine():
    r = _report(None)
    assert r["mcpu"] == llvm.get_host_cpu_name()
    assert r["features"] == llvm.get_host_cpu_features().flatten()


@pytest.mark.parametrize("override, message", [
    ("llvm", "give a CPU"),
    ("llvm -mcpu=native", "give a CPU"),
    ("llvm -mcpu=znver3 -opt-level=2", "give a CPU"),
    ("llvm -mcpu=nosuchcpu", "cannot generate .* code for CPU 'nosuchcpu'"),
    ("llvm -mcpu=znver3 -mattr=+nosuchfeature", "knows no feature 'nosuchfeature'"),
    ("llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a72", "must be for this machine"),
    ("cuda -mcpu=x", "unknown target kind"),
])
def test_bad_overrides_are_value_errors_naming_the_variable(override, message):
    out = _child(override)
    assert out.returncode == 1 and "Traceback" in out.stderr
    last = out.stderr.strip().splitlines()[-1]
    assert last.startswith("ValueError: TIRLITE_HOST_TARGET=")
    assert re.search(message, last), last


def test_a_cpu_the_machine_cannot_run_is_refused(monkeypatch):
    """An AVX2-only machine asked to stand for an AVX-512 CPU: its code would not run."""
    avx2_machine = {"triple": TRIPLE, "cpu": "znver3",
                    "features": "+sse4.1,+popcnt,+bmi2,+avx,+avx2,+fma,+f16c,-avx512f"}
    monkeypatch.setenv(host_override.ENV, "llvm -mcpu=skylake-avx512")
    with pytest.raises(ValueError, match=r"needs avx512bw, avx512dq, avx512f, avx512vl, which "
                                         r"this machine's CPU \(znver3\) lacks"):
        host_override.apply(avx2_machine)
    monkeypatch.setenv(host_override.ENV, "llvm -mcpu=haswell")
    assert host_override.apply(avx2_machine)["cpu"] == "haswell"


@pytest.mark.parametrize("cpu, expected", [
    ("x86-64", set()),
    ("haswell", {"sse4.1", "popcnt", "bmi2", "avx", "avx2", "fma", "f16c"}),
    ("skylake-avx512", {"sse4.1", "popcnt", "bmi2", "avx", "avx2", "fma", "f16c", "avx512f",
                        "avx512bw", "avx512dq", "avx512vl"}),
    ("sapphirerapids", {"sse4.1", "popcnt", "bmi2", "avx", "avx2", "fma", "f16c", "avx512f",
                        "avx512bw", "avx512dq", "avx512vl", "avx512bf16", "avx512fp16",
                        "avx512vnni", "avxvnni"}),
    ("cascadelake", {"sse4.1", "popcnt", "bmi2", "avx", "avx2", "fma", "f16c", "avx512f",
                     "avx512bw", "avx512dq", "avx512vl", "avx512vnni"}),
    ("alderlake", {"sse4.1", "popcnt", "bmi2", "avx", "avx2", "fma", "f16c", "avxvnni"}),
])
def test_cpu_features_read_off_llvm_code(cpu, expected):
    found = cpu_features.cpu_features(TRIPLE, cpu)
    assert {f for f, on in found.items() if on} == expected


@pytest.mark.skipif(not _machine_has("avx2"), reason="an AVX2 override needs an AVX2 machine")
def test_code_for_features_the_named_cpu_lacks_is_refused_as_there():
    """As on a real Zen 3, a module built with +avx512f does not run (this machine could)."""
    code = REPORT.split("asm =")[0].replace('target="llvm"', 'target="llvm -mattr=+avx512f"')
    out = _child("llvm -mcpu=znver3", code.replace('lib["main"](a, b)', 'lib["main"]'))
    assert out.returncode == 1
    assert "uses +avx512f, which this CPU lacks" in out.stderr.strip().splitlines()[-1]
