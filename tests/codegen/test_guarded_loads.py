"""Guards stay guards: a load that a condition protects is read only where the condition holds.

A ``Select`` evaluates both values, ``if_then_else`` only the chosen one. A load guarded
by an ``if`` (if-converted into a Select), by an ``if_then_else`` in a Select's value, or
by an ``if_then_else`` nested in Selects must keep its guard through IfConvertVectorLoops,
Simplify and VectorizeLoop: the vectorized, serial and interpreted builds of a valid
program agree with NumPy (no false bounds assert, no IndexError), and with the bounds
checker off no lane reads past either end of a buffer that borders an inaccessible page.
The programs of repros 23-25 come first, then a differential over loads at index -1 and
index == extent.
"""

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
from tir import ir_builder

F32 = "float32"
#: Lanes of a 32-bit vector register on this host (never hard-coded).
VL = codegen.Target("llvm").vector_width_bits // 32
MODES = {
    "vectorized": ({}, "llvm"),
    "serial": ({"tir.disable_vectorize": True}, "llvm"),
    "interp": ({}, "interp"),
}


def _build(func: tir.PrimFunc, mode: str, **config):
    cfg, target = MODES[mode]
    with transform.PassContext(config={**cfg, **config}):
        return codegen.build(func, target=target)


# ------------------------------------------------------------------ the reproducers


def uniform_load_in_if_converted_branch(width: int) -> tir.PrimFunc:
    """Repro 23: ``if i*W + j < 3: B[i, j] = P[3 - 2*i] else: B[i, j] = j`` (P[3 - 2*i]
    is out of bounds for i >= 2, where no lane takes the branch)."""
    B = tir.decl_buffer((4, width), "int32", name="B")
    P = tir.decl_buffer((4,), "int32", name="P")
    ib = ir_builder.create()
    b, p = ib.buffer_ptr(B), ib.buffer_ptr(P)
    with ib.for_range(0, 4, name="i") as i:
        with ib.for_range(0, width, name="j", kind="vectorize") as j:
            with ib.if_scope(i * width + j < 3):
                b[i, j] = p[3 - 2 * i]
            with ib.else_scope():
                b[i, j] = j
    return tir.PrimFunc([B, P], ib.get())


@pytest.mark.parametrize("mode", MODES)
def test_repro23_uniform_load_of_an_if_converted_branch(mode):
    out = np.zeros((4, VL), "int32")
    _build(uniform_load_in_if_converted_branch(VL), mode)(out, np.array([10, 20, 30, 40],
                                                                        "int32"))
    want = np.tile(np.arange(VL, dtype="int32"), (4, 1))
    want[0, :3] = 40
    np.testing.assert_array_equal(out, want)


def guarded_load_in_nested_select() -> tir.PrimFunc:
    """Repro 24: ``B[0] = Select(j != 1, 1, Select(if_then_else(j < 7, A[j], False), 1, 2))``
    for j < 12, A of 7 elements (serial loop)."""
    A = tir.decl_buffer((7,), "bool", name="A")
    B = tir.decl_buffer((1,), "int8", name="B")
    ib = ir_builder.create()
    a, b = ib.buffer_ptr(A), ib.buffer_ptr(B)
    one, two = tir.const(1, "int8"), tir.const(2, "int8")
    with ib.for_range(0, 12, name="j") as j:
        inner = tir.Select(tir.if_then_else(j < 7, a[j], tir.const(False, "bool")), one, two)
        b[0] = tir.Select(j != 1, one, inner)
    return tir.PrimFunc([A, B], ib.get())


@pytest.mark.parametrize("mode", MODES)
def test_repro24_guarded_load_in_a_nested_select(mode):
    out = np.array([42], "int8")
    _build(guarded_load_in_nested_select(), mode)(np.ones(7, bool), out)
    assert out.tolist() == [1]


def padded_read_in_select_value() -> tir.PrimFunc:
    """Repro 25: ``D[i] = 1 if A[i] < 0 else Select(i > 4, if_then_else(0 <= i - 2 < n,
    E[i - 2], -3), E[i])`` (i > 4 must not stand in for the guard's ``i - 2 >= 0``)."""
    n = tir.size_var("n")
    E = tir.decl_buffer((n,), F32, name="E")
    A = tir.decl_buffer((64,), F32, name="A")
    D = tir.decl_buffer((64,), F32, name="D")
    ib = ir_builder.create()
    e, a, d = ib.buffer_ptr(E), ib.buffer_ptr(A), ib.buffer_ptr(D)
    with ib.for_range(0, n, name="i", kind="vectorize") as i:
        pad = tir.if_then_else(tir.all(i - 2 >= 0, i - 2 < n), e[i - 2], tir.const(-3.0, F32))
        with ib.if_scope(a[i] < 0):
            d[i] = tir.const(1.0, F32)
        with ib.else_scope():
            d[i] = tir.Select(i > 4, pad, e[i])
    return tir.PrimFunc([E, A, D], ib.get())


@pytest.mark.parametrize("mode", MODES)
def test_repro25_padded_read_in_a_select_value(mode):
    lib = _build(padded_read_in_select_value(), mode)
    av = np.where(np.arange(64) % 3 == 0, -1, 1).astype(F32)
    for n in (1, 2, 3, 9, VL + 3, 2 * VL + 1):
        ev = np.arange(n, dtype=F32)
        out = np.zeros(64, F32)
        lib(ev, av, out)
        want = np.zeros(64, F32)
        for k in range(n):
            want[k] = 1.0 if av[k] < 0 else (ev[k - 2] if k > 4 else ev[k])
        np.testing.assert_array_equal(out, want, err_msg=f"n={n}")


# ------------------------------------------------------------------ loads at the edges
#
# Each kernel reads E[j + d] (d = -1 or +1, so index -1 or n at one end of the loop) under
# a guard that keeps it inside E, written so that a Select's condition proves the guard
# in the value holding it (the unsound simplification drops it there). ``ref`` is the
# kernel in NumPy; A (n elements) holds NaNs and negatives.


def _in_e(j, d, n):
    return tir.all(j + d >= 0, j + d < n)


def _select_cond(j, d, n):
    """A condition under which the guard of E[j + d] holds (with 0 <= j < n)."""
    return j >= 1 if d < 0 else j < n - 1


def if_converted(d: int) -> tir.PrimFunc:
    """``if 0 <= j + d < n: C[j] = E[j + d] * 2 else: C[j] = A[j]`` (one store: a Select)."""
    def body(ib, j, n, a, e, c):
        with ib.if_scope(_in_e(j, d, n)):
            c[j] = e[j + d] * 2.0
        with ib.else_scope():
            c[j] = a[j]
    return _kernel(d, body)


def if_converted_ref(d, a, e):
    n = len(a)
    return np.array([e[j + d] * 2 if 0 <= j + d < n else a[j] for j in range(n)], F32)


def padded_in_select(d: int) -> tir.PrimFunc:
    """``C[j] = Select(cond, if_then_else(0 <= j + d < n, E[j + d], -3), A[j])``, cond
    implying the guard."""
    def body(ib, j, n, a, e, c):
        pad = tir.if_then_else(_in_e(j, d, n), e[j + d], tir.const(-3.0, F32))
        c[j] = tir.Select(_select_cond(j, d, n), pad, a[j])
    return _kernel(d, body)


def padded_in_select_ref(d, a, e):
    n = len(a)
    cond = [j >= 1 if d < 0 else j < n - 1 for j in range(n)]
    return np.array([(e[j + d] if 0 <= j + d < n else -3) if cond[j] else a[j]
                     for j in range(n)], F32)


def padded_in_select_in_branch(d: int) -> tir.PrimFunc:
    """``if A[j] < 0: C[j] = 1 else: C[j] = Select(cond, if_then_else(.., E[j + d], -3), A[j])``
    (the if is converted: the Select sits in a masked value)."""
    def body(ib, j, n, a, e, c):
        pad = tir.if_then_else(_in_e(j, d, n), e[j + d], tir.const(-3.0, F32))
        with ib.if_scope(a[j] < 0):
            c[j] = tir.const(1.0, F32)
        with ib.else_scope():
            c[j] = tir.Select(_select_cond(j, d, n), pad, a[j])
    return _kernel(d, body)


def padded_in_select_in_branch_ref(d, a, e):
    inner = padded_in_select_ref(d, a, e)
    return np.where(a < 0, np.float32(1), inner).astype(F32)


def nested_selects(d: int) -> tir.PrimFunc:
    """``C[j] = Select(!cond, A[j], Select(if_then_else(.., E[j + d] > 0, False), A[j] + 1,
    A[j] - 1))``: the outer Select's false value knows cond, which implies the guard."""
    def body(ib, j, n, a, e, c):
        test = tir.if_then_else(_in_e(j, d, n), e[j + d] > 0, tir.const(False, "bool"))
        inner = tir.Select(test, a[j] + 1.0, a[j] - 1.0)
        c[j] = tir.Select(tir.Not(_select_cond(j, d, n)), a[j], inner)
    return _kernel(d, body)


def nested_selects_ref(d, a, e):
    n = len(a)
    out = []
    for j in range(n):
        cond = j >= 1 if d < 0 else j < n - 1
        test = 0 <= j + d < n and e[j + d] > 0
        out.append((a[j] + 1 if test else a[j] - 1) if cond else a[j])
    return np.array(out, F32)


def uniform_in_branch(d: int) -> tir.PrimFunc:
    """Repro 23 at the edges: ``for i: for j in vectorized(VL): if cond: C[i, j] = E[i + d]
    else: C[i, j] = A[i] + j``, cond (on i * VL + j) true only where i + d is inside E:
    the load is the same in every lane, and out of bounds where no lane takes the branch."""
    n = tir.size_var("n")
    A, E = (tir.decl_buffer((n,), F32, name=name) for name in "AE")
    C = tir.decl_buffer((n, VL), F32, name="C")
    ib = ir_builder.create()
    a, e, c = (ib.buffer_ptr(b) for b in (A, E, C))
    with ib.for_range(0, n, name="i") as i:
        with ib.for_range(0, VL, name="j", kind="vectorize") as j:
            flat = i * VL + j
            with ib.if_scope(_uniform_cond(flat, n, d)):
                c[i, j] = e[i + d]
            with ib.else_scope():
                c[i, j] = a[i] + tir.Cast(F32, j)
    return tir.PrimFunc([A, E, C], ib.get())


def _uniform_cond(flat, n, d):
    """True on some lanes of a row (not a condition on i alone), only where E[i + d] is in."""
    return flat > VL if d < 0 else flat < (n - 1) * VL - 1


def uniform_in_branch_ref(d, a, e):
    n = len(a)
    out = a[:, None] + np.arange(VL, dtype=F32)[None, :]
    for i in range(n):
        for j in range(VL):
            if _uniform_cond(i * VL + j, n, d):
                out[i, j] = e[i + d]
    return out.astype(F32)


#: name: (kernel of d, NumPy reference of (d, A, E), shape of C for n).
EDGE_KERNELS = {
    "if_converted": (if_converted, if_converted_ref, lambda n: (n,)),
    "uniform_in_branch": (uniform_in_branch, uniform_in_branch_ref, lambda n: (n, VL)),
    "padded_in_select": (padded_in_select, padded_in_select_ref, lambda n: (n,)),
    "padded_in_select_in_branch": (padded_in_select_in_branch, padded_in_select_in_branch_ref,
                                   lambda n: (n,)),
    "nested_selects": (nested_selects, nested_selects_ref, lambda n: (n,)),
}


def _kernel(d: int, body) -> tir.PrimFunc:
    n = tir.size_var("n")
    bufs = [tir.decl_buffer((n,), F32, name=name) for name in "AEC"]
    ib = ir_builder.create()
    a, e, c = (ib.buffer_ptr(b) for b in bufs)
    with ib.for_range(0, n, name="j", kind="vectorize") as j:
        body(ib, j, n, a, e, c)
    return tir.PrimFunc(bufs, ib.get())


def edge_inputs(rng, n: int) -> tuple:
    """A and E of ``n`` float32s: normal values, a few NaNs, negatives and zeros."""
    out = []
    for _ in range(2):
        v = rng.standard_normal(n).astype(F32) * 4
        v[rng.random(n) < 0.15] = np.nan
        v[rng.random(n) < 0.1] = 0.0
        out.append(v)
    return tuple(out)


SIZES = sorted({1, 2, 3, VL - 1, VL, VL + 1, 2 * VL + 3})


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("d", [-1, 1])
@pytest.mark.parametrize("name", EDGE_KERNELS)
def test_guarded_edge_loads_agree_with_numpy(name, d, mode):
    """Bounds checker on (the default): a valid program raises no assert in any build."""
    make, ref, shape = EDGE_KERNELS[name]
    lib = _build(make(d), mode)
    rng = np.random.default_rng([list(EDGE_KERNELS).index(name), d + 1])
    for n in SIZES:
        a, e = edge_inputs(rng, n)
        c = np.full(shape(n), 123.0, F32)
        lib(a, e, c)
        np.testing.assert_array_equal(c, ref(d, a, e), err_msg=f"{name} d={d} n={n}")


# E begins right after (ends right before) an inaccessible page: E[-1] (E[n]) faults. The
# bounds checker is off, so nothing but the guard keeps the read away (run in a subprocess).
_GUARD_PAGE_SCRIPT = textwrap.dedent("""
    import sys
    import numpy as np
    import codegen, transform
    sys.path.insert(0, {test_dir!r})
    {patch}
    from test_guarded_loads import EDGE_KERNELS, MODES, SIZES, edge_inputs
    from guard_page import at_page_end, at_page_start

    rng = np.random.default_rng(7)
    for name, (make, ref, shape) in EDGE_KERNELS.items():
        for d in (-1, 1):
            place = at_page_start if d < 0 else at_page_end
            for mode in ("vectorized", "serial"):
                cfg, target = MODES[mode]
                cfg = {{**cfg, "tir.instrument_bound_checkers": False}}
                with transform.PassContext(config=cfg):
                    lib = codegen.build(make(d), target=target)
                for n in SIZES:
                    a, e0 = edge_inputs(rng, n)
                    keep, e = place(n)
                    e[:] = e0
                    c = np.full(shape(n), 123.0, np.float32)
                    lib(a, e, c)
                    np.testing.assert_array_equal(c, ref(d, a, e0), err_msg=(name, d, mode, n))
    print("ok")
""")


def _run_script(patch: str = "") -> subprocess.CompletedProcess:
    script = _GUARD_PAGE_SCRIPT.format(test_dir=str(Path(__file__).parent), patch=patch)
    return subprocess.run([sys.executable, "-c", script], cwd=Path(__file__).parents[2],
                          capture_output=True, text=True, timeout=600)


def test_guarded_edge_loads_never_touch_the_guard_page():
    done = _run_script()
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]


def test_the_guard_page_catches_a_dropped_guard():
    """The control: with a Select's condition assumed in its values unconditionally
    (the old, unsound simplification), a guard is dropped and the script crashes."""
    done = _run_script("import tir.arith.speculation as sp; "
                       "sp.Speculation.hazard = lambda *args, **kwargs: False")
    assert done.returncode == -signal.SIGSEGV, done.stderr[-2000:]
