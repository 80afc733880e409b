"""End to end: an out-of-bounds index is a Python RuntimeError, never a crashed process."""

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# The seed's canonical example: n blocks of 4 over a pointer bound from the array.
PROGRAM = textwrap.dedent("""
    import sys
    import numpy as np
    import codegen, tir
    from tir import ir_builder

    n = tir.var("n"); ib = ir_builder.create(); A = ib.pointer("float32", name="A")
    with ib.for_range(0, n, name="i") as i:
        with ib.for_range(0, 4, kind="vectorize", name="j") as j:
            A[i * 4 + j] += tir.const(1, "float32")
    lib = codegen.build(tir.PrimFunc([A, n], ib.get()))
    a = np.zeros(16, "float32")
    lib(a, 4)
    assert (a == 1).all(), a
    try:
        lib(np.zeros(16, "float32"), int(sys.argv[1]))
    except RuntimeError as e:
        print("RuntimeError:", e)
    else:
        print("no error")
""")


def _run(n: int) -> subprocess.CompletedProcess:
    # a subprocess: heap corruption would kill it, not the test session
    return subprocess.run([sys.executable, "-c", PROGRAM, str(n)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)


def test_writing_past_the_array_raises_runtime_error_naming_the_buffer():
    result = _run(5)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == (
        "RuntimeError: main: assertion failed: index out of bounds: "
        "A[i * 4 + j] with extent A_len"  # as written, not the vector A[i * 4:i * 4 + 4]
    )


def test_the_correct_call_still_works_and_smaller_n_is_fine():
    result = _run(2)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "no error"


GATHER = textwrap.dedent("""
    import sys
    import numpy as np
    import codegen, tir
    from tir import ir_builder

    m = tir.size_var("m")
    A = tir.decl_buffer((64,), "float32", name="A")
    idx = tir.decl_buffer((m, 8), "int32", name="idx")
    C = tir.decl_buffer((m, 8), "float32", name="C")
    ib = ir_builder.create()
    a, ix, c = ib.buffer_ptr(A), ib.buffer_ptr(idx), ib.buffer_ptr(C)
    with ib.for_range(0, m, name="i") as i:
        with ib.for_range(0, 8, kind="vectorize", name="j") as j:
            c[i, j] = a[ix[i, j]]
    lib = codegen.build(tir.PrimFunc([A, idx, C], ib.get()), target=sys.argv[1])
    src = np.arange(64, dtype="float32")
    good = np.arange(16, dtype="int32").reshape(2, 8) * 3
    out = np.zeros((2, 8), "float32")
    lib(src, good, out)
    assert (out == src[good]).all()
    for bad in (-1, 64, -2**31, 2**31 - 1):
        wrong = good.copy(); wrong[1, 5] = bad
        try:
            lib(src, wrong, out)
        except RuntimeError as e:
            print(bad, "RuntimeError:", e)
""")


def test_gather_with_a_negative_or_too_large_index_raises():
    for target in ("llvm", "interp"):
        result = subprocess.run([sys.executable, "-c", GATHER, target], cwd=ROOT,
                                capture_output=True, text=True, timeout=120)
        assert result.returncode == 0, result.stderr
        lines = result.stdout.strip().splitlines()
        assert [line.split()[0] for line in lines] == ["-1", "64", "-2147483648", "2147483647"]
        assert all("index out of bounds: A[idx[i, 0:8]] with extent 64" in ln for ln in lines)
