"""Masked accesses under the bound checker: a vectorized loop of symbolic extent ``n`` over
buffers of 64 elements, called with every ``n`` from 0 to a few vectors past the end.

For ``n <= 64`` the vectorized build computes what the serial build and the interpreter
compute; past it, every backend raises ``RuntimeError`` and no lane touches memory past
the array (the arrays end at an inaccessible page: a stray lane kills the subprocess).
Each kernel takes one strip-mining path: the predicated tail, an if-converted branch
(a mask beyond the tail's), a scalarized tail; ``test_sve_*`` runs the
vector-length-agnostic SVE loop under QEMU. Vector lengths come from the host target.
"""

import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import codegen
import tir
import transform

VL = codegen.Target("llvm").vector_width_bits // 32
SIZE = 64
#: n from 0 to three vectors (and a bit) past the buffers' end.
COUNTS = range(SIZE + 3 * VL + 2)
SERIAL = {"tir.disable_vectorize": True}
SVE = "llvm -mtriple=aarch64-linux-gnu -mattr=+sve"


def kernel(name: str) -> tir.PrimFunc:
    """``for j in vectorized(n): <name's body>`` over A and B of 64 float32."""
    A = tir.decl_buffer((SIZE,), "float32", name="A")
    B = tir.decl_buffer((SIZE,), "float32", name="B")
    n = tir.Var("n", "int32")
    ib = tir.ir_builder.create()
    a, b = ib.buffer_ptr(A), ib.buffer_ptr(B)
    one = tir.const(1.0, "float32")
    with ib.for_range(0, n, kind="vectorize", name="j") as j:
        if name == "tail":  # full vectors + a predicated tail
            a[j] = b[j] + one
        elif name == "reversed":  # stride -1: past the end runs below index 0
            a[j] = b[SIZE - 1 - j] * one
        elif name == "if_converted":  # the store's mask: the tail's AND the condition
            # b[k] > 0 iff k > 20: j = 64 .. 84 store nothing, j >= 85 stores past the end
            with ib.if_scope(b[j % SIZE] > tir.const(0.0, "float32")):
                a[j] = b[j % SIZE] - one
        elif name == "guarded":  # a valid program for every n: never stores past 63
            with ib.if_scope(j < SIZE):
                a[j] = one
        elif name == "scalar_tail":  # a[0]: one element for every lane, the tail is scalarized
            a[j] = b[j] + one
            a[0] = b[j]
    return tir.PrimFunc([A, B, n], ib.get())


KERNELS = ("tail", "reversed", "if_converted", "guarded", "scalar_tail")


def first_raising(name: str) -> int:
    """The smallest n for which the serial program touches memory past the buffers."""
    return {"guarded": sys.maxsize, "if_converted": SIZE + 22}.get(name, SIZE + 1)


def test_tails_take_the_paths_the_tests_name():
    outcomes = {}
    for name in KERNELS:
        with transform.PassContext() as ctx:
            codegen.build(kernel(name))
        # One remark per kernel (one loop each): what its tail became is a detail.
        [remark] = [r for r in ctx.remarks if isinstance(r, transform.VectorizeRemark)]
        outcomes[name] = remark.outcome, remark.reason.split("; ")[-1]
    vector_and_masked_tail = ("vectorized", "predicated tail")
    assert outcomes["tail"] == outcomes["reversed"] == vector_and_masked_tail
    assert outcomes["if_converted"] == outcomes["guarded"] == vector_and_masked_tail
    assert outcomes["scalar_tail"][0] == "partially vectorized"
    assert outcomes["scalar_tail"][1].startswith("tail scalarized: ")


_SCRIPT = textwrap.dedent("""
    import sys
    import numpy as np
    import codegen, transform
    sys.path.insert(0, {test_dir!r})
    from test_masked_bounds import COUNTS, SERIAL, SIZE, kernel
    from guard_page import at_page_end, at_page_start

    func = kernel({name!r})
    vectorized = codegen.build(func)
    with transform.PassContext(config=SERIAL):
        serial = codegen.build(func)
    interpreted = codegen.build(func, target="interp")
    place = at_page_start if {name!r} == "reversed" else at_page_end
    for n in COUNTS:
        results = []
        for run in (vectorized, serial, interpreted):
            (ra, a), (rb, b) = place(SIZE), place(SIZE)
            a[:] = -7.0
            b[:] = np.arange(SIZE, dtype=np.float32) - 20  # b[k] > 0 iff k > 20
            try:
                run(a, b, n)
                results.append(a.tobytes())
            except RuntimeError as err:
                assert "index out of bounds" in str(err), err
                results.append("raised")
        assert results[0] == results[1] == results[2], (n, results)
        print(n, "raised" if results[0] == "raised" else "ok")
""")


@pytest.mark.parametrize("name", KERNELS)
def test_in_bounds_n_matches_serial_and_interpreter_and_past_the_end_raises(name):
    script = _SCRIPT.format(test_dir=str(Path(__file__).parent), name=name)
    done = subprocess.run([sys.executable, "-c", script], cwd=Path(__file__).parents[2],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    outcome = dict(line.split() for line in done.stdout.splitlines())
    raising = [int(n) for n, what in outcome.items() if what == "raised"]
    assert raising == list(range(first_raising(name), COUNTS.stop))


def test_run_time_error_of_the_tail_names_the_masked_access():
    lib = codegen.build(kernel("tail"))
    with pytest.raises(RuntimeError, match=r"index out of bounds: .*A\[.*\] with extent 64"):
        lib(np.zeros(SIZE, "float32"), np.zeros(SIZE, "float32"), SIZE + 1)


# ------------------------------------------------------------------ SVE: every vector masked

SVE_COUNTS = (0, 1, 37, SIZE, SIZE + 1, SIZE + 5, SIZE + 21, SIZE + 22, SIZE + 64)


@pytest.mark.parametrize("name", ["tail", "if_converted", "guarded"])
def test_sve_loop_checks_its_active_lanes_at_every_vector_length(tools, name):
    func = kernel(name)
    mod = codegen.build(func, target=SVE)
    assert "llvm.get.active.lane.mask" in mod.get_source("ll")
    with transform.PassContext(config=SERIAL):
        serial = codegen.build(func)
    for length in codegen.emulation.SVE_VECTOR_LENGTHS:
        em = codegen.emulate(mod, length)
        for n in SVE_COUNTS:
            outs = []
            for run in (em, serial):
                a = np.full(SIZE, -7.0, np.float32)
                b = np.arange(SIZE, dtype=np.float32) - 20
                try:
                    run(a, b, n)
                    outs.append(a.tobytes())
                except RuntimeError as err:
                    assert "index out of bounds" in str(err)
                    outs.append("raised")
            assert outs[0] == outs[1], (length, n)
            assert (outs[0] == "raised") == (n >= first_raising(name)), (length, n)


@pytest.mark.parametrize("vscale", [1, 2, 4, 16])
def test_sve_lowering_checks_in_the_interpreter_at_any_vscale(vscale):
    from codegen.interp.backend import build_interpreter

    lowered = codegen.lower(kernel("tail"), SVE)
    run = build_interpreter(lowered, vscale=vscale)
    for n in SVE_COUNTS:
        a = np.zeros(SIZE, np.float32)
        if n > SIZE:
            with pytest.raises(RuntimeError, match="index out of bounds"):
                run(a, np.zeros(SIZE, np.float32), n)
        else:
            run(a, np.zeros(SIZE, np.float32), n)
            assert a.tolist() == [1.0] * n + [0.0] * (SIZE - n)
