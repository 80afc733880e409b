"""The compiled Module: entry points, lifetime, cache, export/load, argument checks."""

import gc
import os
import subprocess
import sys

import numpy as np
import pytest

import codegen
import tir
import transform
from tir import ir_builder


def scale_kernel(parallel=False):
    """B[i, j] = A[i, j] * k for symbolic (m, 8) buffers, asserting m > 0."""
    m = tir.size_var("m")
    A = tir.decl_buffer((m, 8), "float32", name="A")
    B = tir.decl_buffer((m, 8), "float32", name="B")
    k = tir.Var("k", "float32")
    ib = ir_builder.create()
    a, b = ib.buffer_ptr(A), ib.buffer_ptr(B)
    ib.emit(lambda body: tir.AssertStmt(m > 0, "A must have at least one row", body))
    with ib.for_range(0, m, name="i", kind="parallel" if parallel else "serial") as i:
        with ib.for_range(0, 8, name="j", kind="vectorize") as j:
            b[i, j] = a[i, j] * k
    return tir.PrimFunc([A, B, k], ib.get())


def test_entry_point_and_function_lookup():
    mod = codegen.build(scale_kernel())
    a = np.arange(16, dtype="float32").reshape(2, 8)
    b = np.zeros_like(a)
    mod(a, b, 2.0)
    np.testing.assert_array_equal(b, a * 2)
    assert mod.entry_name == "main" and mod.function_names == ["main"]
    with pytest.raises(KeyError, match="no function 'other'"):
        mod["other"]


def test_function_keeps_its_module_alive():
    f = codegen.build(scale_kernel(), target="llvm -opt-level=2")["main"]
    codegen.clear_cache()
    gc.collect()
    a = np.ones((3, 8), "float32")
    b = np.zeros_like(a)
    f(a, b, 4.0)
    assert (b == 4).all()


def test_module_with_several_functions_and_a_non_main_entry():
    def fill(value):
        A = tir.decl_buffer((4,), "int32", name="A")
        return tir.PrimFunc([A], tir.BufferStore(A, tir.Broadcast(tir.const(value), 4),
                                                 [tir.Ramp(0, 1, 4)]))

    mod = codegen.build(tir.IRModule({"one": fill(1), "two": fill(2)}))
    a = np.zeros(4, "int32")
    mod["two"](a)
    assert (a == 2).all()
    single = codegen.build(tir.IRModule({"only": fill(7)}))
    single(a)
    assert single.entry_name == "only" and (a == 7).all()


def test_cache_reuses_a_module_for_the_same_ir_target_and_config():
    first = codegen.build(scale_kernel())
    assert codegen.build(scale_kernel()) is first  # a structurally equal, new PrimFunc
    assert codegen.build(scale_kernel(), target="llvm -mcpu=x86-64") is not first
    with transform.PassContext(config={"tir.disable_vectorize": True}):
        assert codegen.build(scale_kernel()) is not first


def test_build_rejects_non_functions():
    with pytest.raises(TypeError, match="expected an IRModule or a PrimFunc, got str"):
        codegen.build("main")


@pytest.mark.parametrize("parallel", [False, True])
def test_export_library_and_load_module_round_trip(tmp_path, parallel):
    mod = codegen.build(scale_kernel(parallel))
    path = tmp_path / "scale.so"
    mod.export_library(str(path))
    loaded = codegen.load_module(str(path))
    a = np.random.default_rng(1).standard_normal((300, 8)).astype("float32")
    b = np.zeros_like(a)
    loaded["main"](a, b, 1.5)
    np.testing.assert_array_equal(b, a * np.float32(1.5))
    # the same checks and messages as the JIT module
    with pytest.raises(ValueError, match="argument 'B' expects a float32 array of shape"):
        loaded(a, np.zeros((300, 7), "float32"), 1.0)
    with pytest.raises(RuntimeError, match="A must have at least one row"):
        loaded(np.zeros((0, 8), "float32"), np.zeros((0, 8), "float32"), 1.0)
    with pytest.raises(ValueError, match="loaded from a library"):
        loaded.get_source("ll")


def test_a_loaded_library_keeps_the_overlap_checks_and_the_may_alias_declaration(tmp_path):
    a = np.arange(16, dtype="float32").reshape(2, 8)
    for func, name in ((scale_kernel(), "strict"), (scale_kernel().with_attr("tir.noalias", False),
                                                    "aliasing")):
        path = tmp_path / f"{name}.so"
        codegen.build(func).export_library(str(path))
        loaded = codegen.load_module(str(path))
        if name == "strict":
            with pytest.raises(ValueError, match="arguments 'A' and 'B' share memory"):
                loaded["main"](a, a, 2.0)
        else:
            loaded["main"](a, a, 2.0)  # in place: B[i, j] = A[i, j] * 2 reads each A first
            np.testing.assert_array_equal(a, np.arange(16, dtype="float32").reshape(2, 8) * 2)


def test_export_object_file_for_a_cross_target(tmp_path):
    mod = codegen.build(scale_kernel(), target="llvm -mtriple=aarch64-linux-gnu")
    obj = tmp_path / "scale.o"
    mod.export_library(str(obj))
    assert obj.read_bytes()[:4] == b"\x7fELF"
    # aarch64 Linux links with the cross toolchain (tests/codegen/test_emulation.py); others not
    riscv = codegen.build(scale_kernel(), target="llvm -mtriple=riscv64-linux-gnu")
    with pytest.raises(ValueError, match="cannot link a shared library for riscv64"):
        riscv.export_library(str(tmp_path / "scale.so"))


def test_load_module_rejects_other_libraries():
    import ctypes.util

    libm = ctypes.util.find_library("m")
    with pytest.raises((ValueError, OSError), match="not a tirlite library|libm"):
        codegen.load_module(libm)


BAD_INPUTS = r'''
import numpy as np, codegen, tir
from tir import ir_builder

m = tir.size_var("m")
A = tir.decl_buffer((m, 8), "float32", name="A")
B = tir.decl_buffer((m, 8), "float32", name="B")
I = tir.decl_buffer((4,), "int64", name="I")
k, flag = tir.Var("k", "int8"), tir.Var("flag", "bool")
ib = ir_builder.create()
a, b, idx = ib.buffer_ptr(A), ib.buffer_ptr(B), ib.buffer_ptr(I)
with ib.for_range(0, m, name="i", kind="parallel") as i:
    with ib.for_range(0, 8, name="j", kind="vectorize") as j:
        b[i, j] = a[i, j] * tir.Cast("float32", k)
idx[0] = idx[1]
mod = codegen.build(tir.PrimFunc([A, B, I, k, flag], ib.get()))
good = [np.ones((4, 8), "float32"), np.zeros((4, 8), "float32"), np.zeros(4, "int64"), 3, True]
mod(*good)
assert (good[1] == 3).all()
ro = np.zeros(4, "int64"); ro.flags.writeable = False
misaligned = np.frombuffer(bytes(4 * 8 * 4 + 1), dtype=np.uint8)[1:].view("float32").reshape(4, 8)
cases = [
    ("count", good[:4]),
    ("dtype", [good[0].astype("float64")] + good[1:]),
    ("rank", [good[0].reshape(32)] + good[1:]),
    ("static shape", good[:2] + [np.zeros(5, "int64")] + good[3:]),
    ("symbolic shape", [good[0], np.zeros((5, 8), "float32")] + good[2:]),
    ("contiguity", [np.ones((8, 8), "float32")[::2]] + good[1:]),
    ("not an array", [[1.0] * 32] + good[1:]),
    ("scalar range", good[:3] + [300, True]),
    ("scalar kind", good[:3] + [1.5, True]),
    ("bool kind", good[:4] + [1]),
    ("read-only", good[:2] + [ro] + good[3:]),
    ("alignment", [misaligned] + good[1:]),
    ("None", [None] + good[1:]),
]
for name, args in cases:
    try:
        mod(*args)
    except (TypeError, ValueError) as err:
        print(f"{name}: {type(err).__name__}: {err}")
    else:
        raise SystemExit(f"{name}: no error")
print("done")
'''


def test_bad_inputs_raise_and_never_crash():
    """Every kind of bad argument, in a subprocess: a crash would fail the exit code."""
    env = dict(os.environ, PYTHONPATH=os.getcwd())
    out = subprocess.run([sys.executable, "-c", BAD_INPUTS], check=False, env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr + out.stdout
    lines = dict(line.split(": ", 1) for line in out.stdout.splitlines() if ": " in line)
    expected = {
        "count": "TypeError: main: expects 5 arguments (A, B, I, k, flag), got 4",
        "dtype": "TypeError: main: argument 'A' expects a float32 array of shape (m, 8), "
                 "got float64 of shape (4, 8)",
        "rank": "ValueError: main: argument 'A' expects a float32 array of shape (m, 8)",
        "static shape": "ValueError: main: argument 'I' expects a int64 array of shape (4,)",
        "symbolic shape": "ValueError: main: ",
        "contiguity": "ValueError: main: argument 'A' must be a C-contiguous array",
        "not an array": "TypeError: main: argument 'A' expects a float32 array",
        "scalar range": "ValueError: main: argument 'k' = 300 is out of range for int8",
        "scalar kind": "TypeError: main: argument 'k' expects an integer (int8), got float",
        "bool kind": "TypeError: main: argument 'flag' expects a bool, got int",
        "read-only": "ValueError: main: argument 'I' is read-only",
        "alignment": "ValueError: main: argument 'A' is not aligned",
        "None": "TypeError: main: argument 'A' expects a float32 array",
    }
    for name, start in expected.items():
        assert lines.get(name, "").startswith(start), (name, lines.get(name))
    assert "m" in lines["symbolic shape"] and "B" in lines["symbolic shape"]
    assert out.stdout.strip().endswith("done")


def test_code_using_features_the_cpu_lacks_is_not_run():
    host = codegen.Target("llvm").features.split(",")
    absent = next(f[1:] for f in host if f.startswith("-"))  # a feature LLVM says it lacks
    mod = codegen.build(scale_kernel(), target=f"llvm -mattr=+{absent}")
    with pytest.raises(RuntimeError, match=rf"uses \+{absent}, which this CPU lacks"):
        mod["main"]


def test_library_records_the_cpu_and_features_it_was_built_for(tmp_path):
    """So that loading it on a CPU without those features fails cleanly (see Module)."""
    path = tmp_path / "scale.so"
    codegen.build(scale_kernel()).export_library(str(path))
    loaded = codegen.load_module(str(path))
    host = codegen.Target("llvm")
    assert loaded.target.options["mcpu"] == host.mcpu
    assert set(loaded.target.mattr) == set(host.features.split(","))
    assert loaded.target.missing_host_features == ()


def test_build_interp_target_runs_the_pipeline_then_the_interpreter():
    import numpy as np

    import codegen
    import tir
    from tir import ir_builder

    n = tir.size_var("n")
    A = tir.decl_buffer((n, 4), "float32", name="A")
    ib = ir_builder.create()
    a = ib.buffer_ptr(A)
    with ib.for_range(0, n, name="i") as i:
        with ib.for_range(0, 4, kind="vectorize", name="j") as j:
            a[i, j] = a[i, j] * 2.0
    mod = codegen.build(tir.PrimFunc([A], ib.get()), target="interp")
    assert "A_1[i, 0:4]" in mod.get_source("tir")  # vectorized before interpreting
    x = np.arange(12, dtype="float32").reshape(3, 4)
    mod["main"](x)
    np.testing.assert_array_equal(x, np.arange(12, dtype="float32").reshape(3, 4) * 2)


def test_cached_module_reports_its_own_names():
    import numpy as np
    import pytest

    import codegen
    import tir
    from tir import ir_builder

    def kernel(name):
        buf = tir.decl_buffer((4,), "float32", name=name)
        ib = ir_builder.create()
        b = ib.buffer_ptr(buf)
        with ib.for_range(0, 4, name="i") as i:
            b[i] = b[i] + 1.0
        return tir.PrimFunc([buf], ib.get())

    codegen.build(kernel("X"))
    second = codegen.build(kernel("Y"))
    with pytest.raises(TypeError, match="'Y'"):
        second["main"](np.zeros(4, dtype="float64"))


def test_cached_module_quotes_its_own_loop_names():
    def kernel(loop):
        X = tir.decl_buffer((16,), "float32", name="X")
        m = tir.Var("m", "int32")
        ib = ir_builder.create()
        x = ib.buffer_ptr(X)
        with ib.for_range(0, m, name=loop) as i:
            x[i] = 0.0
        return tir.PrimFunc([X, m], ib.get())

    codegen.build(kernel("k"))
    second = codegen.build(kernel("row"))
    assert "row" in second.get_source("tir")
    with pytest.raises(RuntimeError, match=r"X\[row\]"):
        second(np.ones(16, "float32"), 17)


def test_a_build_under_instruments_runs_its_passes_even_when_cached():
    import io

    ib = ir_builder.create()
    A = ib.pointer("float32", name="A")
    A[0] = 1.0
    func = tir.PrimFunc([A], ib.get())
    codegen.build(func)
    out = io.StringIO()
    with transform.PassContext(instruments=[transform.PrintIRAfterEach(out)]):
        codegen.build(func)
    assert "A" in out.getvalue()
