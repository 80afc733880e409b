"""Random kernels of guarded reads at the edges of a buffer, nested in Selects and ifs.

Each kernel stores, for ``j in vectorized(n)``, an expression built from ``A[j]``,
constants, padded reads ``if_then_else(0 <= j + d < n, E[j + d], pad)`` (``d`` in
-2..2: index -2..-1 or n..n+1 at the edges), guarded compares, ``Select``s (often with a
condition that implies a guard inside its value, the case the unsound simplification
broke) and if-converted ``if``/``else`` branches. The vectorized, serial and interpreted
builds agree with a per-element NumPy reference on inputs with NaNs, zeros and negatives;
with the bounds checker off, no lane reads the inaccessible page before or after E.
"""

import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from test_guarded_loads import MODES, VL, edge_inputs

import codegen
import tir
import transform
from tir import ir_builder

F32 = "float32"
STRICT_FP = {"codegen.llvm.fp_contract": False}
SEEDS = range(16)
SIZES = sorted({1, 2, 3, 5, VL - 1, VL, VL + 2, 2 * VL + 3})


class _Gen:
    """A random value or condition: the TIR expression and its meaning for one element."""

    def __init__(self, seed: int, j, n, a, e):
        self.rng = np.random.default_rng(seed)
        self.j, self.n, self.a, self.e = j, n, a, e

    def _pick(self, k: int) -> int:
        return int(self.rng.integers(k))

    def _in_e(self, d: int):
        j, n = self.j, self.n
        return tir.all(j + d >= 0, j + d < n), (lambda s, d=d: 0 <= s.j + d < s.n)

    def _implies_guard(self, d: int):
        """A condition under which E[j + d] is inside E (given 0 <= j < n)."""
        if d < 0:
            return self.j >= -d, (lambda s, d=d: s.j >= -d)
        return self.j < self.n - d, (lambda s, d=d: s.j < s.n - d)

    def value(self, depth: int, select: bool = False):
        """A value; ``select``: a Select (one of the two kinds below), never a leaf."""
        choice = 3 + self._pick(2) if select else self._pick(7 if depth > 0 else 3)
        if choice == 0:
            return self.a[self.j], (lambda s: s.a[s.j])
        if choice == 1:
            c = float(self.rng.choice([-3.0, 0.0, 2.5]))
            return tir.const(c, F32), (lambda s, c=c: np.float32(c))
        if choice == 2:
            return self._padded()
        if choice == 3:  # a Select whose condition proves the guard of a read in a value
            d = int(self.rng.choice([-2, -1, 1, 2]))
            cond, cond_fn = self._implies_guard(d)
            read, read_fn = self._padded(d)
            other, other_fn = self.value(depth - 1)
            if self._pick(2):
                return tir.Select(cond, read, other), _select(cond_fn, read_fn, other_fn)
            return tir.Select(tir.Not(cond), other, read), _select(cond_fn, read_fn, other_fn)
        if choice == 4:
            cond, cond_fn = self.cond(depth - 1)
            (t, t_fn), (f, f_fn) = self.value(depth - 1), self.value(depth - 1)
            return tir.Select(cond, t, f), _select(cond_fn, t_fn, f_fn)
        v, fn = self.value(depth - 1)
        if choice == 5:
            return v * 2.0, (lambda s: fn(s) * np.float32(2))
        return v + 1.0, (lambda s: fn(s) + np.float32(1))

    def _padded(self, d: int | None = None):
        d = int(self.rng.choice([-2, -1, 1, 2])) if d is None else d
        guard, guard_fn = self._in_e(d)
        pad = float(self.rng.choice([-3.0, 0.0]))
        expr = tir.if_then_else(guard, self.e[self.j + d], tir.const(pad, F32))
        return expr, (lambda s: s.e[s.j + d] if guard_fn(s) else np.float32(pad))

    def cond(self, depth: int):
        choice = self._pick(5 if depth > 0 else 3)
        j, n = self.j, self.n
        if choice == 0:
            k = self._pick(4)
            return (j >= k, lambda s: s.j >= k) if self._pick(2) else (
                j < n - k, lambda s: s.j < s.n - k)
        if choice == 1:
            return self.a[j] > 0.0, (lambda s: s.a[s.j] > 0)
        if choice == 2:  # a guarded compare, as repro 24
            d = int(self.rng.choice([-2, -1, 1, 2]))
            guard, guard_fn = self._in_e(d)
            expr = tir.if_then_else(guard, self.e[j + d] > 0.0, tir.const(False, "bool"))
            return expr, (lambda s: guard_fn(s) and s.e[s.j + d] > 0)
        (x, x_fn), (y, y_fn) = self.cond(depth - 1), self.cond(depth - 1)
        if choice == 3:
            return tir.And(x, y), (lambda s: x_fn(s) and y_fn(s))
        return tir.Or(x, y), (lambda s: x_fn(s) or y_fn(s))


def _select(cond_fn, t_fn, f_fn):
    # A Select computes both values; the reference need not (they are pure here).
    return lambda s: t_fn(s) if cond_fn(s) else f_fn(s)


class _Point:
    """One element: what the reference functions read."""

    def __init__(self, j, n, a, e):
        self.j, self.n, self.a, self.e = j, n, a, e


def random_kernel(seed: int):
    """``(func, reference)``: a kernel over A, E, C of n float32s and its NumPy meaning."""
    n = tir.size_var("n")
    bufs = [tir.decl_buffer((n,), F32, name=name) for name in "AEC"]
    ib = ir_builder.create()
    a, e, c = (ib.buffer_ptr(b) for b in bufs)
    with ib.for_range(0, n, name="j", kind="vectorize") as j:
        gen = _Gen(seed, j, n, a, e)
        if gen._pick(2):
            value, fn = gen.value(3, select=True)
            c[j] = value
        else:  # an if/else on the var: if-converted
            cond, cond_fn = gen.cond(1)
            (t, t_fn), (f, f_fn) = gen.value(2, select=True), gen.value(2)
            with ib.if_scope(cond):
                c[j] = t
            with ib.else_scope():
                c[j] = f
            fn = _select(cond_fn, t_fn, f_fn)
    func = tir.PrimFunc(bufs, ib.get())

    def reference(av, ev):
        count = len(av)
        return np.array([fn(_Point(k, count, av, ev)) for k in range(count)], F32)

    return func, reference


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("seed", SEEDS)
def test_random_guarded_reads_agree_with_numpy(seed, mode):
    func, reference = random_kernel(seed)
    cfg, target = MODES[mode]
    with transform.PassContext(config={**cfg, **STRICT_FP}):
        lib = codegen.build(func, target=target)
    rng = np.random.default_rng(1000 + seed)
    for n in SIZES:
        a, e = edge_inputs(rng, n)
        c = np.full(n, 123.0, F32)
        lib(a, e, c)
        np.testing.assert_array_equal(c, reference(a, e), err_msg=f"seed={seed} n={n}\n{func}")


_GUARD_PAGE_SCRIPT = textwrap.dedent("""
    import sys
    import numpy as np
    import codegen, transform
    sys.path.insert(0, {test_dir!r})
    from test_guarded_loads_random import SEEDS, SIZES, STRICT_FP, random_kernel
    from test_guarded_loads import MODES, edge_inputs
    from guard_page import at_page_end, at_page_start

    for seed in SEEDS:
        func, reference = random_kernel(seed)
        for mode in ("vectorized", "serial"):
            cfg, target = MODES[mode]
            cfg = {{**cfg, **STRICT_FP, "tir.instrument_bound_checkers": False}}
            with transform.PassContext(config=cfg):
                lib = codegen.build(func, target=target)
            rng = np.random.default_rng(seed)
            for n in SIZES:
                for place in (at_page_start, at_page_end):
                    a, e0 = edge_inputs(rng, n)
                    keep, e = place(n)
                    e[:] = e0
                    c = np.full(n, 123.0, np.float32)
                    lib(a, e, c)
                    np.testing.assert_array_equal(c, reference(a, e0), err_msg=(seed, mode, n))
    print("ok")
""")


def test_random_guarded_reads_never_touch_the_guard_pages():
    script = _GUARD_PAGE_SCRIPT.format(test_dir=str(Path(__file__).parent))
    done = subprocess.run([sys.executable, "-c", script], cwd=Path(__file__).parents[2],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0 and done.stdout.strip() == "ok", (done.returncode,
                                                                 done.stderr[-2000:])
