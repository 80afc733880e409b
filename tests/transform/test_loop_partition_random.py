"""LoopPartition, rule zero: random non-dividing splits compute the same with the pass as without.

Each case is a matmul-like or elementwise ``te`` function scheduled with random
splits whose factors need not divide the extents (extents 0, 1, below the factor,
symbolic), random reorders, vectorized and unrolled inner loops. It is built by
``codegen.build`` with ``tir.LoopPartition`` (the default pipeline) and without it,
and run by the reference interpreter; all three must agree with NumPy, exactly
(small integers in float32: every sum is exact). Where the extents are constant,
the middle loop nest (the first one the pass leaves) must hold no ``if``.
"""

import random

import numpy as np
import pytest

import codegen
import tir
import transform
from codegen.build import lower
from tir import te
from tir.functor import post_order_visit
from tir.verify import verify_well_formed

WITHOUT = {"disabled_pass": ["tir.LoopPartition"]}
EXTENTS = [0, 1, 2, 3, 5, 7, 12, 13, 17]


def _matmul(m, n, k):
    a = te.placeholder((m, k), name="A")
    b = te.placeholder((k, n), name="B")
    r = te.reduce_axis((0, k), name="k")
    c = te.compute((m, n), lambda i, j: te.sum(a[i, r] * b[r, j], axis=r), name="C")
    return te.create_prim_func([a, b, c]), "C"


def _elementwise(m, n, k):
    a = te.placeholder((m, n), name="A")
    b = te.compute((m, n), lambda i, j: a[i, j] * 2.0 + 1.0, name="B")
    return te.create_prim_func([a, b]), "B"


def _schedule(func, block, rng):
    sch = tir.Schedule(func)
    loops = sch.get_loops(sch.get_block(block))
    spatial = loops[:2]
    outer, inner = [], []
    for loop in spatial:
        if rng.random() < 0.8:
            o, i = sch.split(loop, factors=[None, rng.choice([2, 3, 4, 5, 6, 8])])
            outer.append(o)
            inner.append(i)
        else:
            outer.append(loop)
    order = outer + loops[2:] + inner
    if rng.random() < 0.7 and len(order) > 1:
        sch.reorder(*order)
    if inner and rng.random() < 0.5:
        kind = rng.choice(["vectorize", "unroll"])
        getattr(sch, kind)(order[-1])
    return sch.mod


def _case(seed):
    rng = random.Random(seed)
    make = rng.choice([_matmul, _elementwise])
    symbolic = rng.random() < 0.3
    m, n, k = (rng.choice(EXTENTS) for _ in range(3))
    if make is _matmul:
        k = max(k, 1)
    m_arg = tir.Var("m", "int32") if symbolic else m
    return make, _schedule(make(m_arg, n, k)[0], make(1, 1, 1)[1], rng), (m, n, k)


def _inputs(make, shape, rng):
    m, n, k = shape
    if make is _matmul:
        arrays = [rng.integers(-3, 4, (m, k)), rng.integers(-3, 4, (k, n)), np.zeros((m, n))]
        expect = arrays[0] @ arrays[1]
    else:
        arrays = [rng.integers(-3, 4, (m, n)), np.zeros((m, n))]
        expect = arrays[0] * 2.0 + 1.0
    return [a.astype("float32") for a in arrays], expect.astype("float32")


def _run(lib, arrays):
    copies = [a.copy() for a in arrays]
    lib["main"](*copies)
    return copies[-1]


def _guards(stmt):
    """The conditions of the ifs in ``stmt`` other than a reduction's ``if k == 0: init``."""
    found = []
    post_order_visit(stmt, lambda x: found.append(x.condition)
                     if isinstance(x, tir.IfThenElse) and not isinstance(x.condition, tir.EQ)
                     else None)
    return found


@pytest.mark.parametrize("seed", range(32))
def test_random_splits_agree(seed):
    make, mod, shape = _case(seed)
    verify_well_formed(lower(mod))  # every peeled copy binds fresh vars
    arrays, expect = _inputs(make, shape, np.random.default_rng(seed))
    with_pass = _run(codegen.build(mod), arrays)
    with transform.PassContext(**WITHOUT):
        without = _run(codegen.build(mod), arrays)
    interp = _run(codegen.build(mod, target="interp"), arrays)
    np.testing.assert_array_equal(with_pass, expect)
    np.testing.assert_array_equal(without, expect)
    np.testing.assert_array_equal(interp, expect)


@pytest.mark.parametrize("factor", [4, 6])
def test_middle_loop_has_no_guard(factor):
    """A 6-row tile over 512 rows: the hot loop nest, and here even the tail, has no guard."""
    func, block = _matmul(512, 64, 32)
    sch = tir.Schedule(func)
    i, j, k = sch.get_loops(sch.get_block(block))
    io, ii = sch.split(i, factors=[None, factor])
    jo, ji = sch.split(j, factors=[None, 8])
    sch.reorder(io, jo, k, ii, ji)
    sch.vectorize(ji)
    body = lower(sch.mod)["main"].body
    if 512 % factor == 0:
        assert isinstance(body, tir.For) and not _guards(body)
        return
    # 85 full tiles, then the last 2 rows: both without a guard (the tail's i_1 partitioned too)
    assert isinstance(body, tir.SeqStmt) and len(body.seq) == 2
    assert body.seq[0].extent.value == 512 // factor
    assert not _guards(body)


def test_symbolic_vectorized_tail_stays_masked():
    """A vectorized split over a symbolic extent: full vectors, then one masked tail."""
    n = tir.Var("n", "int32")
    a = te.placeholder((3, n), name="A")
    b = te.compute((3, n), lambda i, j: a[i, j] * 2.0, name="B")
    sch = tir.Schedule(te.create_prim_func([a, b]))
    _, j = sch.get_loops(sch.get_block("B"))
    _, ji = sch.split(j, factors=[None, 8])
    sch.vectorize(ji)
    lib, interp = codegen.build(sch.mod), codegen.build(sch.mod, target="interp")
    for cols in (0, 1, 5, 8, 13, 16, 27):
        x = np.arange(3 * cols, dtype="float32").reshape(3, cols)
        for built in (lib, interp):
            y = np.zeros_like(x)
            built["main"](x, y)
            np.testing.assert_array_equal(y, x * 2)
