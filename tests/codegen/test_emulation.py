"""aarch64 and SVE modules run under QEMU user emulation (codegen/emulation.py), against NumPy.

The scalable kernels are TVM's runtime checks (tests/python/target/test_arm_target.py)
written in TIR by hand, since the vectorizer does not make scalable vectors yet;
each runs at every length of ``emulation.SVE_VECTOR_LENGTHS`` and checks that
the emulator really used it (``em.vscale()``). The tools come from Debian's
packages; as root (CI) the fixture installs them, elsewhere the tests skip
with the command that would.
"""

import os
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from kernels import KERNELS

import codegen
import tir
from codegen import cross_tools, emulation
from tir import ir_builder

ROOT = Path(__file__).resolve().parents[2]

AARCH64 = "llvm -mtriple=aarch64-linux-gnu"
SVE = AARCH64 + " -mattr=+sve"
LENGTHS = emulation.SVE_VECTOR_LENGTHS
MAX_LANES = max(LENGTHS) // 4  # float32 lanes of the longest vector: buffers hold that many


def _vl():
    return 4 * tir.vscale()  # float32 lanes of one SVE vector


def _emulate(func, length):
    em = codegen.emulate(codegen.build(func, target=SVE), length)
    assert em.vscale() == length // 16  # the run really used length-byte vectors
    return em


# ---------------------------------------------------------------- TVM's scalable checks


def scalable_div():
    A = tir.decl_buffer((1,), "int32", name="A")
    return tir.PrimFunc([A], tir.BufferStore(A, tir.Div(tir.const(10000), _vl()), [0]))


def scalable_copy():
    A, B = (tir.decl_buffer((MAX_LANES,), "float32", name=n) for n in "AB")
    ramp = tir.Ramp(0, 1, _vl())
    return tir.PrimFunc([A, B], tir.BufferStore(B, tir.BufferLoad(A, [ramp]), [ramp]))


def scalable_loop_bound():
    A, B = (tir.decl_buffer((MAX_LANES,), "float32", name=n) for n in "AB")
    i = tir.Var("i", "int32")
    body = tir.BufferStore(B, tir.BufferLoad(A, [i]), [i])
    return tir.PrimFunc([A, B], tir.For(i, 0, _vl(), tir.ForKind.SERIAL, body))


def scalable_broadcast():
    A = tir.decl_buffer((MAX_LANES,), "float32", name="A")
    store = tir.BufferStore(A, tir.Broadcast(tir.const(1.0, "float32"), _vl()),
                            [tir.Ramp(0, 1, _vl())])
    return tir.PrimFunc([A], store)


@pytest.mark.parametrize("length", LENGTHS)
def test_scalable_div(tools, length):
    a = np.zeros(1, "int32")
    _emulate(scalable_div(), length)(a)
    assert a[0] == 10000 // (length // 4)


@pytest.mark.parametrize("make", [scalable_copy, scalable_loop_bound])
@pytest.mark.parametrize("length", LENGTHS)
def test_scalable_copy(tools, make, length):
    a = np.random.default_rng(0).uniform(size=MAX_LANES).astype("float32")
    b = np.zeros(MAX_LANES, "float32")
    _emulate(make(), length)(a, b)
    lanes = length // 4  # exactly one vector of float32 is copied, the rest untouched
    np.testing.assert_array_equal(b, np.where(np.arange(MAX_LANES) < lanes, a, 0))


@pytest.mark.parametrize("length", LENGTHS)
def test_scalable_broadcast(tools, length):
    a = np.zeros(MAX_LANES, "float32")
    _emulate(scalable_broadcast(), length)(a)
    np.testing.assert_array_equal(a, np.arange(MAX_LANES) < length // 4)


# ---------------------------------------------------------------- a predicated scalable tail


def predicated_axpy():
    """C[i] = A[i] * x + B[i] for any n, one SVE vector at a time, the tail masked."""
    n = tir.size_var("n")
    A, B, C = (tir.decl_buffer((n,), "float32", name=name) for name in "ABC")
    x = tir.Var("x", "float32")
    i = tir.Var("i", "int32")
    ramp = tir.Ramp(i * _vl(), 1, _vl())
    mask = tir.op.get_active_lane_mask("uint1xvscalex4", i * _vl(), n)
    value = (tir.BufferLoad(A, [ramp], predicate=mask) * tir.Broadcast(x, _vl())
             + tir.BufferLoad(B, [ramp], predicate=mask))
    body = tir.BufferStore(C, value, [ramp], predicate=mask)
    loop = tir.For(i, 0, tir.floordiv(n + _vl() - 1, _vl()), tir.ForKind.SERIAL, body)
    return tir.PrimFunc([A, B, C, x], loop)


@pytest.fixture(scope="module")
def axpy_module():
    return codegen.build(predicated_axpy(), target=SVE)


@pytest.mark.parametrize("length", LENGTHS)
def test_predicated_scalable_tail(tools, axpy_module, length):
    em = codegen.emulate(axpy_module, length)
    assert em.vscale() == length // 16 and em.sve_vector_length == length
    rng = np.random.default_rng(length)
    for n in (37, 1, 0):  # 37 is no multiple of any vector length; 0: an empty call
        a, b = rng.uniform(size=(2, n)).astype("float32")
        c = np.full(n, -1.0, "float32")
        em["main"](a, b, c, 1.5)
        np.testing.assert_allclose(c, a * np.float32(1.5) + b, rtol=1e-6)
    assert "whilelo" in axpy_module.get_source("asm")  # the mask is SVE's, not a loop


# ---------------------------------------------------------------- fixed-width aarch64 (NEON)


def test_neon_vector_add(tools):
    n = 64
    A, B, C = (tir.decl_buffer((n,), "float32", name=name) for name in "ABC")
    i = tir.Var("i", "int32")
    ramp = tir.Ramp(i * 4, 1, 4)
    body = tir.BufferStore(C, tir.BufferLoad(A, [ramp]) + tir.BufferLoad(B, [ramp]), [ramp])
    mod = codegen.build(tir.PrimFunc([A, B, C], tir.For(i, 0, n // 4, tir.ForKind.SERIAL, body)),
                        target=AARCH64)
    assert "fadd\tv" in mod.get_source("asm")
    em = codegen.emulate(mod)  # SVE off: the code must not need it
    assert em.cpu == "max,sve=off"
    a, b = np.random.default_rng(1).uniform(size=(2, n)).astype("float32")
    c = np.zeros(n, "float32")
    em(a, b, c)
    np.testing.assert_array_equal(c, a + b)


@pytest.mark.parametrize("name", list(KERNELS))
def test_differential_kernels_on_neon(tools, name):
    """The differential kernel set (extern libm calls, parallel loops, strided, float16, bool)."""
    kernel = KERNELS[name]()
    em = codegen.emulate(codegen.build(kernel.func, target=AARCH64))
    inputs = kernel.make_inputs(np.random.default_rng(0))
    expected = kernel.reference(inputs)
    em(*inputs)
    for index, want in expected.items():
        np.testing.assert_allclose(inputs[index], want, rtol=2e-5, atol=1e-5)


def scalar_kinds():
    """out[i] = a[i] * h + s8 (flag) or s64 - d (not flag), over a strided output view."""
    n, s = tir.size_var("n"), tir.size_var("s")
    A = tir.decl_buffer((n,), "float32", name="A")
    out = tir.decl_buffer((n,), "float32", name="out", strides=[s])
    s8, s64 = tir.Var("s8", "int8"), tir.Var("s64", "int64")
    h, d, flag = tir.Var("h", "float16"), tir.Var("d", "float64"), tir.Var("flag", "bool")
    i = tir.Var("i", "int32")
    f32 = lambda e: tir.Cast("float32", e)  # noqa: E731
    value = tir.Select(flag, tir.BufferLoad(A, [i]) * f32(h) + f32(s8), f32(s64) - f32(d))
    loop = tir.For(i, 0, n, tir.ForKind.SERIAL, tir.BufferStore(out, value, [i]))
    return tir.PrimFunc([A, out, s8, s64, h, d, flag], loop)


def test_scalar_kinds_and_strided_output_match_a_native_call(tools):
    func = scalar_kinds()
    native, em = codegen.build(func), codegen.emulate(codegen.build(func, target=AARCH64))
    a = np.arange(10, dtype="float32")
    for flag in (True, False):
        wide = [np.full(30, 7.0, "float32") for _ in range(2)]
        native(a, wide[0][::3], -5, 2**40, 0.5, 0.25, flag)
        em(a, wide[1][::3], -5, 2**40, 0.5, 0.25, flag)
        np.testing.assert_array_equal(wide[1], wide[0])  # the gaps between elements kept too
    assert wide[1][1] == 7.0 and wide[1][3] == np.float32(2**40 - 0.25)


# ---------------------------------------------------------------- errors


def asserting_kernel():
    m = tir.size_var("m")
    A = tir.decl_buffer((m,), "float32", name="A")
    ib = ir_builder.create()
    a = ib.buffer_ptr(A)
    ib.emit(lambda body: tir.AssertStmt(m > 2, "A needs more than two elements", body))
    with ib.for_range(0, m, name="i") as i:
        a[i] = a[i] + 1.0
    return tir.PrimFunc([A], ib.get())


def _error(call, *args):
    with pytest.raises(Exception) as info:
        call(*args)
    return type(info.value), str(info.value)


def test_errors_are_those_of_a_native_call(tools):
    func = asserting_kernel()
    native, em = codegen.build(func), codegen.emulate(codegen.build(func, target=AARCH64))
    for args in [(np.zeros(2, "float32"),),  # the assert fails
                 (np.zeros(4, "float64"),),  # wrong dtype
                 (np.zeros((2, 2), "float32"),),  # wrong rank
                 (np.zeros(4, "float32")[::2],),  # not contiguous
                 (np.zeros(4, "float32"), 1)]:  # too many arguments
        kind, message = _error(native, *args)
        assert _error(em, *args) == (kind, message)
    assert "assertion failed: A needs more than two elements" in _error(em, np.zeros(1, "f4"))[1]
    a = np.zeros(3, "float32")
    em(a)
    np.testing.assert_array_equal(a, 1.0)


@pytest.mark.parametrize("length", [8, 48, 96, 512, 0, "32", True])
def test_bad_vector_lengths(axpy_module, length):
    with pytest.raises(ValueError, match=f"sve_vector_length={length!r}"):
        codegen.emulate(axpy_module, length)


def test_vector_length_must_fit_the_module(tools, axpy_module):
    with pytest.raises(ValueError, match="an SVE module needs sve_vector_length"):
        codegen.emulate(axpy_module)
    neon = codegen.build(asserting_kernel(), target=AARCH64)
    with pytest.raises(ValueError, match="sve_vector_length=32 given.*has no SVE"):
        codegen.emulate(neon, 32)
    with pytest.raises(ValueError, match="without SVE"):
        codegen.emulate(neon).vscale()


def test_a_host_module_cannot_be_emulated():
    mod = codegen.build(asserting_kernel())
    with pytest.raises(ValueError, match=f"compiled for {mod.target.triple}, not aarch64"):
        codegen.emulate(mod)


def test_export_library_writes_an_aarch64_shared_object(tools, axpy_module, tmp_path):
    path = tmp_path / "axpy.so"
    axpy_module.export_library(str(path))
    header = path.read_bytes()[:20]
    assert header[:4] == b"\x7fELF" and header[4] == 2  # 64-bit
    e_type, e_machine = struct.unpack_from("<HH", header, 16)
    assert (e_type, e_machine) == (3, 183)  # ET_DYN, EM_AARCH64


def test_missing_tools_name_the_package(monkeypatch, axpy_module, tmp_path):
    monkeypatch.setattr(cross_tools, "_which", lambda name: None)
    with pytest.raises(emulation.EmulationUnavailable,
                       match="qemu-aarch64 .Debian package qemu-user.*apt-get install -y "
                             "--no-install-recommends qemu-user gcc-aarch64-linux-gnu "
                             "libc6-dev-arm64-cross"):
        emulation.find_tools()
    monkeypatch.setattr(cross_tools, "_can_install", lambda: False)  # as if not root
    with pytest.raises(emulation.EmulationUnavailable, match="gcc-aarch64-linux-gnu.*only as root"):
        emulation.find_tools(install=True)
    with pytest.raises(emulation.EmulationUnavailable, match="gcc-aarch64-linux-gnu.*lld"):
        axpy_module.export_library(str(tmp_path / "axpy.so"))
    axpy_module.export_library(str(tmp_path / "axpy.o"))  # an object needs no tools
    assert (tmp_path / "axpy.o").read_bytes()[:4] == b"\x7fELF"


def test_a_compiler_without_its_c_library_is_not_tools_present(monkeypatch, tmp_path):
    """gcc-aarch64-linux-gnu alone (no recommends) cannot link: crti.o and libm.so are missing."""
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "ld-linux-aarch64.so.1").write_bytes(b"")  # libc6-arm64-cross only
    monkeypatch.setattr(cross_tools, "SYSROOT", str(tmp_path))
    monkeypatch.setattr(cross_tools, "_which", lambda name: f"/usr/bin/{name}")
    monkeypatch.setattr(cross_tools, "_can_install", lambda: False)
    with pytest.raises(emulation.EmulationUnavailable,
                       match=r"lib/crti.o \(Debian package libc6-dev-arm64-cross\), "
                             r".*lib/libm.so \(Debian package libc6-dev-arm64-cross\)"):
        emulation.find_tools(install=True)


def test_the_install_script_and_the_module_use_one_package_list():
    script = (ROOT / "scripts" / "install_cross_tools.sh").read_text()
    assert "codegen/cross_packages.py" in script and "qemu-user" not in script.split("set -e")[1]
    printed = subprocess.run([sys.executable, str(ROOT / "codegen" / "cross_packages.py")],
                             capture_output=True, text=True, check=True).stdout.split()
    assert tuple(printed) == cross_tools.PACKAGES
    # every package a sysroot file comes from is on the list, or pulled in by one on it
    sources = {package for _, package in cross_tools.SYSROOT_FILES}
    assert sources - set(cross_tools.PACKAGES) <= {"libc6-arm64-cross"}


def test_tools_present_means_a_link_works(tools, tmp_path):
    """What the fixture found links a shared library against the C and math libraries."""
    for path, _ in cross_tools.SYSROOT_FILES:
        assert os.path.exists(os.path.join(tools.sysroot, path)), path
    src = tmp_path / "m.c"
    src.write_text("#include <math.h>\ndouble f(double x) { return sqrt(x) + sin(x); }\n")
    subprocess.run([tools.cc, "-shared", "-fPIC", "-o", str(tmp_path / "m.so"), str(src), "-lm"],
                   check=True, capture_output=True)


def test_install_runs_apt_get_update_when_the_install_fails(monkeypatch):
    installed, calls = [], []

    def apt(*args):
        calls.append(args[0])
        ok = args[0] == "update" or "update" in calls
        if args[0] == "install" and ok:
            installed.append(True)
        return cross_tools.subprocess.CompletedProcess(args, 0 if ok else 100, "", "")

    monkeypatch.setattr(cross_tools, "_which", lambda name: f"/usr/bin/{name}" if installed
                        else "/usr/bin/apt-get" if name == "apt-get" else None)
    monkeypatch.setattr(cross_tools, "_missing_sysroot_files",
                        lambda: [] if installed else ["crti.o (libc6-dev-arm64-cross)"])
    monkeypatch.setattr(cross_tools, "_can_install", lambda: True)
    monkeypatch.setattr(cross_tools, "_apt", apt)
    tools = emulation.find_tools(install=True)
    assert calls == ["install", "update", "install"]
    assert tools.qemu == "/usr/bin/qemu-aarch64" and tools.cc == "/usr/bin/aarch64-linux-gnu-gcc"


def test_a_call_that_never_ends_times_out(tools):
    A = tir.decl_buffer((1,), "int32", name="A")
    spin = tir.While(tir.BufferLoad(A, [0]) >= 0,
                     tir.BufferStore(A, tir.BufferLoad(A, [0]) % 7, [0]))  # A[0] stays >= 0
    em = codegen.emulate(codegen.build(tir.PrimFunc([A], spin), target=AARCH64), timeout=1.0)
    with pytest.raises(TimeoutError, match="did not finish in 1.0 s under QEMU"):
        em(np.ones(1, "int32"))
