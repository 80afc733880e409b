"""A guarded tail built with buffer-level predication: masked LLVM accesses, no access past
the end, and the same bits as the serial build and the interpreter."""

import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import codegen
import tir
import transform
from codegen.interp.backend import build_interpreter
from tir import ir_builder

PREDICATE = {"tir.enable_buffer_level_predication": True}
LANES = sorted({4, codegen.Target("llvm").vector_width_bits // 32})


def guarded_tail(lanes: int) -> tir.PrimFunc:
    """``B[k] = A[k] + 1`` for ``k < n``, as a split loop whose tail is guarded by ``k < n``."""
    n = tir.size_var("n")
    A = tir.decl_buffer((n,), "float32", name="A")
    B = tir.decl_buffer((n,), "float32", name="B")
    ib = ir_builder.create()
    a, b = ib.buffer_ptr(A), ib.buffer_ptr(B)
    with ib.for_range(0, tir.floordiv(n + (lanes - 1), lanes), name="i") as i, \
            ib.for_range(0, lanes, kind="vectorize", name="j") as j:
        k = i * lanes + j
        with ib.if_scope(k < n):
            b[k] = a[k] + tir.const(1.0, "float32")
    return tir.PrimFunc([A, B], ib.get())


def _build(func, config):
    with transform.PassContext(config=config) as ctx:
        return codegen.build(func, target="llvm"), ctx


@pytest.mark.parametrize("lanes", LANES)
def test_llvm_ir_has_masked_accesses_and_no_scalar_tail(lanes):
    lib, ctx = _build(guarded_tail(lanes), PREDICATE)
    ir = lib.get_source("ll")
    assert f"@llvm.get.active.lane.mask.v{lanes}i1.i32" in ir
    assert f"@llvm.masked.load.v{lanes}f32" in ir and f"@llvm.masked.store.v{lanes}f32" in ir
    assert [r.outcome for r in ctx.remarks] == ["predicated"]


@pytest.mark.parametrize("lanes", LANES)
def test_matches_serial_build_and_interpreter_bit_for_bit(lanes):
    func = guarded_tail(lanes)
    predicated, _ = _build(func, PREDICATE)
    serial, _ = _build(func, {"tir.disable_vectorize": True})
    with transform.PassContext(config=PREDICATE):
        interpreted = build_interpreter(codegen.lower(func))
    rng = np.random.default_rng(lanes)
    for n in range(41):
        a = rng.standard_normal(n).astype(np.float32)  # exactly n elements: no slack to hide in
        outs = []
        for run in (predicated, serial, interpreted):
            b = np.full(n, np.nan, np.float32)
            run(a.copy(), b)
            outs.append(b)
        np.testing.assert_array_equal(outs[0], a + np.float32(1))
        for other in outs[1:]:
            assert outs[0].tobytes() == other.tobytes(), n


# The arrays end where an inaccessible page begins, so one lane read or written past n
# kills the process (SIGSEGV): run in a subprocess, whose exit status the test checks.
_GUARD_PAGE_SCRIPT = textwrap.dedent("""
    import sys
    import numpy as np
    import codegen, transform
    sys.path.insert(0, {test_dir!r})
    from test_predicated_tail import PREDICATE, guarded_tail
    from guard_page import at_page_end

    with transform.PassContext(config=PREDICATE):
        lib = codegen.build(guarded_tail({lanes}), target="llvm")
    for n in range(41):
        ra, a = at_page_end(n)
        rb, b = at_page_end(n)
        a[:] = np.arange(n, dtype=np.float32)
        lib(a, b)
        assert (b == a + 1).all(), n
    print("ok")
""")


@pytest.mark.parametrize("lanes", LANES)
def test_no_lane_touches_memory_past_n(lanes):
    script = _GUARD_PAGE_SCRIPT.format(test_dir=str(Path(__file__).parent), lanes=lanes)
    root = Path(__file__).parents[2]
    done = subprocess.run([sys.executable, "-c", script], cwd=root, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]


def test_unmasked_access_past_n_is_caught_by_the_guard_page():
    """The guard page works: the same kernel without its guard crashes the subprocess."""
    script = _GUARD_PAGE_SCRIPT.format(test_dir=str(Path(__file__).parent), lanes=4)
    script = script.replace("guarded_tail(4)", "unguarded_tail()").replace(
        "from test_predicated_tail import PREDICATE, guarded_tail",
        "from test_predicated_tail import PREDICATE, unguarded_tail")
    script = script.replace("config=PREDICATE", "config={'tir.instrument_bound_checkers': False}")
    done = subprocess.run([sys.executable, "-c", script], cwd=Path(__file__).parents[2],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == -signal.SIGSEGV, done.stderr[-2000:]


def unguarded_tail() -> tir.PrimFunc:
    """``guarded_tail(4)`` without its guard: the last iteration runs past n."""
    n = tir.size_var("n")
    A = tir.decl_buffer((n,), "float32", name="A")
    B = tir.decl_buffer((n,), "float32", name="B")
    ib = ir_builder.create()
    a, b = ib.buffer_ptr(A), ib.buffer_ptr(B)
    with ib.for_range(0, tir.floordiv(n + 3, 4), name="i") as i, \
            ib.for_range(0, 4, kind="vectorize", name="j") as j:
        b[i * 4 + j] = a[i * 4 + j] + tir.const(1.0, "float32")
    return tir.PrimFunc([A, B], ib.get())


@pytest.mark.parametrize("base, limit", [(0, 0), (0, 3), (5, 7), (5, 100), (8, 5), (0, -1),
                                         (-2, 1), (-6, -3), (2**31 - 3, 2**31 - 1)])
def test_active_lane_mask_is_base_plus_lane_below_limit(base, limit):
    """Signed, exact: a negative limit turns every lane off (LLVM's own compare is unsigned)."""
    out = tir.decl_buffer((8,), "int32", name="out")
    b, lim = tir.var("base"), tir.var("limit")
    mask = tir.get_active_lane_mask("uint1x8", b, lim)
    body = tir.BufferStore(out, tir.Cast("int32x8", mask), [tir.Ramp(0, 1, 8)])
    func = tir.PrimFunc([out, b, lim], body)
    expected = (base + np.arange(8) < limit).astype(np.int32)
    for run in (codegen.build(func, target="llvm"), build_interpreter(func)):
        got = np.full(8, 7, np.int32)
        run(got, base, limit)
        np.testing.assert_array_equal(got, expected)
