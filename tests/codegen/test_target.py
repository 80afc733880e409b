"""Target strings: parsing, host resolution, round trips and errors."""

import llvmlite.binding as llvm
import pytest

from codegen import Target


def test_llvm_means_the_host_cpu_with_its_features():
    t = Target("llvm")
    assert t.is_host and t.mcpu == llvm.get_host_cpu_name()
    assert t.triple == llvm.get_process_triple()
    assert "+avx2" in t.features.split(",")  # this machine has AVX2
    assert t.vector_width_bits == 256
    assert Target("llvm -mcpu=native").mcpu == t.mcpu


def test_explicit_cpu_and_features():
    t = Target("llvm -mcpu=skylake -mattr=+avx2,+fma")
    assert t.mcpu == "skylake" and t.mattr == ("+avx2", "+fma")
    assert t.features == "+avx2,+fma"  # no host features for an explicit CPU
    assert t.vector_width_bits == 256
    assert Target("llvm -mcpu=x86-64").vector_width_bits == 128


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
    import codegen
    import tir

    A = tir.decl_buffer((4,), "float32", name="A")
    func = tir.PrimFunc([A], tir.BufferStore(A, tir.const(1.0), [0]))
    with pytest.raises(ValueError, match="does not know triple 'nosuch-linux-gnu'"):
        codegen.build(func, target="llvm -mtriple=nosuch-linux-gnu")


def test_features_the_host_lacks_are_reported():
    assert Target("llvm -mattr=+avx2").missing_host_features == ()  # this machine has AVX2
    host = Target("llvm").features.split(",")
    absent = next(f for f in ("avx512f", "amx-tile", "avx10.2") if f"+{f}" not in host)
    assert Target(f"llvm -mattr=+{absent},-avx2").missing_host_features == (f"+{absent}",)
    assert Target("llvm -mtriple=aarch64-linux-gnu -mattr=+sve").missing_host_features == ()


def test_resolved_target_spells_out_the_host():
    t = Target("llvm").resolved()
    assert t.options["mcpu"] == Target("llvm").mcpu and t.is_host
    assert t.features == Target("llvm").features and t.missing_host_features == ()
    assert Target(str(t)) == t
