"""Target strings: parsing, host resolution, round trips and errors."""

import subprocess
import sys
import textwrap
from pathlib import Path

import llvmlite.binding as llvm
import pytest

import codegen
import tir
from codegen import Target
from target import host_override

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.skipif(host_override.requested() is not None,
                    reason="the host is overridden here; test_host_override.py covers that")
def test_llvm_means_the_host_cpu_with_its_features():
    t = Target("llvm")
    assert t.is_host and t.mcpu == llvm.get_host_cpu_name()
    assert t.triple == llvm.get_process_triple()
    assert t.features == llvm.get_host_cpu_features().flatten()
    assert Target("llvm -mcpu=native").mcpu == t.mcpu


def test_host_vector_width_follows_the_host_features():
    t = Target("llvm")
    host = set(t.features.split(","))
    if t.arch != "x86_64":
        assert t.vector_width_bits == 128
    elif "+avx512f" in host:
        assert t.vector_width_bits == 512
    else:
        assert t.vector_width_bits == (256 if "+avx" in host else 128)


def test_explicit_cpu_and_features():
    t = Target("llvm -mcpu=skylake -mattr=+avx2,+fma")
    assert t.mcpu == "skylake" and t.mattr == ("+avx2", "+fma")
    assert t.features == "+avx2,+fma"  # no host features for an explicit CPU


@pytest.mark.parametrize("target, bits", [
    ("llvm -mcpu=x86-64", 128),
    ("llvm -mcpu=x86-64 -mattr=+avx2", 256),
    ("llvm -mcpu=skylake", 256),
    ("llvm -mcpu=x86-64-v3", 256),
    ("llvm -mcpu=skylake-avx512", 512),
    ("llvm -mcpu=znver4", 512),
    ("llvm -mcpu=znver4 -mattr=-avx512f", 256),
    ("llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a72", 128),
])
def test_explicit_cpu_vector_width_comes_from_llvm(target, bits):
    """The CPU's name implies its features: LLVM's widest register for a 512-bit add."""
    assert Target(target).vector_width_bits == bits


def test_cross_target():
    t = Target("llvm -mtriple=aarch64-linux-gnu -mattr=+sve")
    assert not t.is_host and t.arch == "aarch64" and t.mcpu == "generic"
    assert t.has_sve and t.vector_width_bits == 128
    assert not Target("llvm -mtriple=aarch64-linux-gnu").has_sve


@pytest.mark.parametrize("text", [
    "llvm", "llvm -mcpu=skylake", "llvm -mattr=+avx2,+fma",
    "llvm -mtriple=aarch64-linux-gnu -mattr=+sve", "llvm -mcpu=native -opt-level=2",
])
def test_string_round_trip(text):
    t = Target(text)
    assert str(t) == text and Target(str(t)) == t and Target(t) == t
    assert hash(Target(text)) == hash(t)


def test_whitespace_is_normalized_and_equality_with_strings():
    assert str(Target("  llvm   -mcpu=skylake ")) == "llvm -mcpu=skylake"
    assert Target("llvm") == "llvm"


@pytest.mark.parametrize("text, message", [
    ("", "empty target string"),
    ("cuda", "unknown target kind 'cuda'"),
    ("llvm -mcpux=skylake", "unknown option -mcpux"),
    ("llvm -mcpu", "malformed option '-mcpu'"),
    ("llvm mcpu=skylake", "malformed option 'mcpu=skylake'"),
    ("llvm -mcpu=", "option -mcpu needs a value"),
    ("llvm -mattr=avx2", "feature 'avx2' .* must start with \\+ or -"),
    ("llvm -opt-level=7", "-opt-level must be 0..3"),
])
def test_bad_target_strings(text, message):
    with pytest.raises(ValueError, match=message):
        Target(text)


def test_non_string_target():
    with pytest.raises(TypeError, match="expected a target string, got int"):
        Target(3)


def test_unknown_triple_fails_when_compiling():
    A = tir.decl_buffer((4,), "float32", name="A")
    func = tir.PrimFunc([A], tir.BufferStore(A, tir.const(1.0), [0]))
    with pytest.raises(ValueError, match="does not know triple 'nosuch-linux-gnu'"):
        codegen.build(func, target="llvm -mtriple=nosuch-linux-gnu")


def test_features_the_host_lacks_are_reported():
    host = Target("llvm").features.split(",")
    present = next(f for f in host if f.startswith("+"))
    assert Target(f"llvm -mattr={present}").missing_host_features == ()
    absent = next(f[1:] for f in host if f.startswith("-"))
    assert Target(f"llvm -mattr=+{absent},-avx2").missing_host_features == (f"+{absent}",)
    assert Target("llvm -mtriple=aarch64-linux-gnu -mattr=+sve").missing_host_features == ()


def test_resolved_target_spells_out_the_host():
    t = Target("llvm").resolved()
    assert t.options["mcpu"] == Target("llvm").mcpu and t.is_host
    assert t.features == Target("llvm").features and t.missing_host_features == ()
    assert Target(str(t)) == t


# ---------------------------------------------------------------- CPU and feature names

X86_64 = "llvm -mtriple=x86_64-unknown-linux-gnu"
AARCH64 = "llvm -mtriple=aarch64-linux-gnu"

# Each bad target is built in a child process: before the check, LLVM ended the
# process ("64-bit code requested on a subtarget that doesn't support it!").
BAD_CPUS = textwrap.dedent("""
    import sys
    import codegen, tir
    A = tir.decl_buffer((8,), "float32", name="A")
    func = tir.PrimFunc([A], tir.BufferStore(A, tir.const(1.0), [0]))
    for target in sys.argv[1:]:
        try:
            codegen.build(func, target=target)
            print("built")
        except ValueError as err:
            print("ValueError:", err)
""")


def _build_in_child(*targets: str) -> list[str]:
    out = subprocess.run([sys.executable, "-c", BAD_CPUS, *targets], cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout.splitlines()


def test_unknown_or_32_bit_cpu_is_a_value_error_not_a_dead_process():
    unknown, other_arch, old_x86, host_unknown = _build_in_child(
        f"{X86_64} -mcpu=nonexistentcpu", f"{X86_64} -mcpu=cortex-a72",
        f"{X86_64} -mcpu=i686", "llvm -mcpu=nonexistentcpu")
    triple = "x86_64-unknown-linux-gnu"
    assert unknown.startswith("ValueError:") and f"no CPU 'nonexistentcpu' for {triple}" in unknown
    assert f"codegen.Target('{X86_64}').known_cpus()" in unknown
    assert f"no CPU 'cortex-a72' for {triple}" in other_arch
    assert f"cannot generate {triple} code for CPU 'i686'" in old_x86
    assert "64-bit code requested" in old_x86  # LLVM's reason, quoted
    assert f"no CPU 'nonexistentcpu' for {Target('llvm').triple}" in host_unknown
    assert "-mcpu=native" in host_unknown


def test_cpu_of_another_architecture_is_rejected_for_a_cross_target():
    A = tir.decl_buffer((4,), "float32", name="A")
    func = tir.PrimFunc([A], tir.BufferStore(A, tir.const(1.0), [0]))
    with pytest.raises(ValueError, match="no CPU 'skylake' for aarch64-linux-gnu"):
        codegen.build(func, target=f"{AARCH64} -mcpu=skylake")
    asm = codegen.build(func, target=f"{AARCH64} -mcpu=cortex-a72").get_source("asm")
    assert "str" in asm  # an AArch64 store


@pytest.mark.parametrize("target, message", [
    ("llvm -mattr=+nonexistentfeature", "no feature 'nonexistentfeature' for "),
    ("llvm -mattr=+avx2x", r"no feature 'avx2x' .*did you mean 'avx2'"),
    (f"{X86_64} -mcpu=skylake -mattr=-fma,+avx5l2f", r"no feature 'avx5l2f' .*'avx512f'"),
    (f"{AARCH64} -mattr=+svee", r"no feature 'svee' for aarch64-linux-gnu .*did you mean 'sve'"),
    (f"{AARCH64} -mattr=+avx2", "no feature 'avx2' for aarch64-linux-gnu"),
])
def test_unknown_feature_is_a_value_error(target, message):
    A = tir.decl_buffer((4,), "float32", name="A")
    func = tir.PrimFunc([A], tir.BufferStore(A, tir.const(1.0), [0]))
    with pytest.raises(ValueError, match=message):
        codegen.build(func, target=target)


def test_known_cpus_and_features_come_from_llvm():
    host = Target("llvm")
    assert host.mcpu in host.known_cpus()
    assert {f[1:] for f in host.features.split(",")} <= set(host.known_features())
    assert "cortex-a72" in Target(AARCH64).known_cpus()
    assert {"sve", "sve2"} <= set(Target(AARCH64).known_features())
    assert "x86-64" in Target(X86_64).known_cpus() and "sve" not in Target(X86_64).known_features()


@pytest.mark.parametrize("text, feature, expected", [
    ("llvm -mcpu=znver3", "avx512vnni", False),
    ("llvm -mcpu=znver4", "avx512vnni", True),
    ("llvm -mcpu=alderlake", "avxvnni", True),
    ("llvm -mcpu=znver3 -mattr=+avxvnni", "avxvnni", True),
    ("llvm -mcpu=znver4 -mattr=-avx512vnni", "avx512vnni", False),
    ("llvm -mcpu=haswell", "fma", True),
    ("llvm -mtriple=aarch64-linux-gnu -mattr=+dotprod", "dotprod", True),
    ("llvm -mtriple=aarch64-linux-gnu", "dotprod", False),
])
def test_has_feature_for_named_cpus_and_mattr(text, feature, expected):
    assert Target(text).has_feature(feature) is expected


def test_has_feature_on_the_host_follows_the_host_features():
    t = Target("llvm")
    for name in ("avx2", "avx512f", "avx512vnni"):
        assert t.has_feature(name) == (f"+{name}" in t.features.split(","))
