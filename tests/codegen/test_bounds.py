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
        "A[i * 4:i * 4 + 4] with extent A_len"
    )


def test_the_correct_call_still_works_and_smaller_n_is_fine():
    result = _run(2)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "no error"
