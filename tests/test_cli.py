"""The ``tirlite`` command line, run as a user runs it: in a subprocess."""

import os
import re
import subprocess
import sys

import pytest

import codegen
import tirlite

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

KERNEL = '''
import tir
from tir import ir_builder


def build(n=64, lanes=8):
    A, B = (tir.decl_buffer((n,), "float32", name=x) for x in "AB")
    ib = ir_builder.create()
    a, b = ib.buffer_ptr(A), ib.buffer_ptr(B)
    with ib.for_range(0, n // lanes, name="i") as i:
        with ib.for_range(0, lanes, name="j", kind="vectorize") as j:
            b[i * lanes + j] = a[i * lanes + j] * 2.0
    return tir.PrimFunc([A, B], ib.get())


double = build()

if __name__ == "__main__":
    raise SystemExit("the CLI must not run the main block")
'''


@pytest.fixture
def kernel(tmp_path):
    path = tmp_path / "kernel.py"
    path.write_text(KERNEL)
    return path


def tirlite_cli(*args, cwd=None, exe=None):
    command = [exe] if exe else [sys.executable, "-m", "tirlite"]
    return subprocess.run([*command, *map(str, args)], cwd=cwd or ROOT, capture_output=True,
                          text=True, timeout=120)


def test_opt_prints_the_lowered_tir(kernel):
    run = tirlite_cli("opt", kernel)
    assert run.returncode == 0, run.stderr
    vector_store = "B_1[i * 8:i * 8 + 8] = A_1[i * 8:i * 8 + 8] * T.Broadcast(T.float32(2), 8)"
    assert vector_store in run.stdout
    assert run.stderr == ""


def test_print_after_all_shows_every_pass_on_stderr(kernel):
    run = tirlite_cli("opt", kernel, "--print-after-all", "--print-before", "VectorizeLoop")
    assert run.returncode == 0, run.stderr
    names = [p.info.name for p in codegen.default_pipeline()]
    headers = [line for line in run.stderr.splitlines() if line.startswith("===")]
    assert headers[0] == f"=== after {names[0]} ==="
    at = headers.index("=== before tir.VectorizeLoop ===")  # the passes before it may change
    previous = names[names.index("tir.VectorizeLoop") - 1]
    assert headers[at - 1:at + 2] == [f"=== after {previous} ===",
                                      "=== before tir.VectorizeLoop ===",
                                      "=== after tir.VectorizeLoop ==="]
    afters = [h for h in headers if h.startswith("=== after")]
    assert afters == [f"=== after {name} ===" for name in names]
    before_vectorize = run.stderr.split("=== after tir.VectorizeLoop ===")[0]
    assert "vectorized" in before_vectorize.split("=== before tir.VectorizeLoop ===")[1]
    assert "T.Broadcast" in run.stdout


def test_emit_llvm_ir_asm_and_an_object_file(kernel, tmp_path):
    ll = tirlite_cli("opt", kernel, "--emit", "ll", "--config", "codegen.llvm.opt_level=0")
    assert ll.returncode == 0, ll.stderr
    assert "define" in ll.stdout and "<8 x float>" in ll.stdout
    asm = tirlite_cli("opt", kernel, "--emit", "asm", "--target", "llvm -mcpu=x86-64")
    assert asm.returncode == 0 and "tirlite_main:" in asm.stdout
    assert "addps\t%xmm" in asm.stdout and "%ymm" not in asm.stdout  # SSE only: no AVX
    obj = tmp_path / "kernel.o"
    run = tirlite_cli("opt", kernel, "--emit", "obj", "-o", obj)
    assert run.returncode == 0 and run.stdout == ""
    assert obj.read_bytes().startswith(b"\x7fELF")


def test_config_remarks_and_pass_timings(kernel):
    run = tirlite_cli("opt", kernel, "--config", "tir.disable_vectorize=True", "--remarks",
                      "--time-passes", "--func", "double")
    assert run.returncode == 0, run.stderr
    assert "T.Broadcast" not in run.stdout  # the vectorized loop became a serial one
    lines = run.stderr.splitlines()
    assert lines[0].split() == ["pass", "ms"] and lines[-1].startswith("total")
    timed = {line.split()[0] for line in lines[1:-1]}
    assert {"tir.VectorizeLoop", "llvm.optimize", "llvm.codegen"} <= timed
    remarks = tirlite_cli("opt", kernel, "--remarks")
    assert "remark: main: loop j (8 lanes): vectorized" in remarks.stderr


def test_func_may_name_a_function_returning_a_kernel(kernel):
    run = tirlite_cli("opt", kernel, "--func", "build", "--interp")
    assert run.returncode == 0, run.stderr
    assert "T.Broadcast(T.float32(2), 8)" in run.stdout


@pytest.mark.parametrize(
    ("args", "source", "message"),
    [
        (["missing.py"], None, r"missing\.py: no such file"),
        (["{file}"], "import math\nx = 1 / 0\n",
         r"kernel\.py:2: ZeroDivisionError: division by zero"),
        (["{file}"], "import tir\n", r"kernel\.py defines no tir\.PrimFunc or tir\.IRModule"),
        (["{file}"], KERNEL + "again = build(128)\n",
         r"kernel\.py defines 2 kernels \(double, again\); choose one with --func NAME"),
        (["{file}", "--func", "nope"], KERNEL, r"defines no 'nope'; it defines the kernels double"),
        (["{file}", "--emit", "bc"], KERNEL, r"--emit 'bc': expected one of tir, ll, asm, obj"),
        (["{file}", "--target", "llvm -mcpu=pentium9"], KERNEL, r"LLVM knows no CPU 'pentium9'"),
        (["{file}", "--target", "cuda"], KERNEL, r"unknown target kind 'cuda'"),
        (["{file}", "--config", "tir.disable_vectorise=True"], KERNEL,
         r"unknown PassContext config key 'tir.disable_vectorise'\. Did you mean "
         r"'tir.disable_vectorize'\?"),
        (["{file}", "--config", "tir.disable_vectorize=yes"], KERNEL, r"must be a Python literal"),
        (["{file}", "--config", "tir.disable_vectorize"], KERNEL, r"expected KEY=VALUE"),
        (["{file}", "--print-after", "Vectorise"], KERNEL, r"'Vectorise': no such pass"),
        (["{file}", "--interp", "--emit", "asm"], KERNEL, r"with --interp only tir is built"),
        (["{file}", "--frobnicate"], KERNEL, r"unrecognized arguments: --frobnicate"),
    ],
)
def test_bad_input_is_one_line_and_exit_code_2(tmp_path, args, source, message):
    path = tmp_path / "kernel.py"
    if source is not None:
        path.write_text(source)
    run = tirlite_cli("opt", *[a.format(file=path) for a in args], cwd=tmp_path)
    assert run.returncode == 2
    assert run.stdout == ""
    assert len(run.stderr.splitlines()) == 1, run.stderr
    assert run.stderr.startswith("tirlite: error: ")
    assert re.search(message, run.stderr), run.stderr


def test_traceback_on_request(tmp_path):
    (tmp_path / "kernel.py").write_text("x = 1 / 0\n")
    run = tirlite_cli("opt", "kernel.py", "--traceback", cwd=tmp_path)
    assert run.returncode == 2
    assert "Traceback (most recent call last)" in run.stderr
    last = run.stderr.splitlines()[-1]
    assert last == "tirlite: error: kernel.py:1: ZeroDivisionError: division by zero"


def test_the_installed_script_and_the_version():
    script = os.path.join(os.path.dirname(sys.executable), "tirlite")
    run = tirlite_cli("--version", exe=script)
    assert run.returncode == 0 and run.stdout.strip() == f"tirlite {tirlite.__version__}"
    run = tirlite_cli()
    assert run.returncode == 2 and "expected a command: opt" in run.stderr


def test_fuzz_subcommand_runs_the_fuzzer():
    proc = tirlite_cli("fuzz", "--count", "2", "--seed", "3", "--jobs", "0")
    assert proc.returncode == 0, proc.stderr
    assert "programs run: 2 " in proc.stdout and "  mismatches: 0" in proc.stdout
    bad = tirlite_cli("fuzz", "--count", "many")
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "--count" in bad.stderr
