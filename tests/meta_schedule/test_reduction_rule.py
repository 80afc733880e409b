"""The default schedule of a reduction outside any row group (rules/reduction.py).

Its innermost reduction becomes vector partials; with more than one thread and
too few rows for the cores, a long reduction is split into parallel chunks.
The results equal the unscheduled function's (integers exactly, float sums
within reassociation's rounding) at any thread count, on lengths no tile divides.
"""

from __future__ import annotations

import numpy as np
import pytest

import codegen
import tir
from codegen.runtime import parallel
from tir import te
from tir.stmt import ForKind
from tirlite import meta_schedule as ms


def total(rows: int, cols: int, dtype: str) -> tir.PrimFunc:
    """B[i] = sum over k of A[i, k]."""
    A = te.placeholder((rows, cols), dtype, name="A")
    k = te.reduce_axis((0, cols), name="k")
    B = te.compute((rows,), lambda i: te.sum(A[i, k], axis=k), name="B")
    return te.create_prim_func([A, B])


def kinds(func) -> set:
    found = set()
    tir.functor.post_order_visit(func.body, lambda n: found.add(n.kind)
                                 if isinstance(n, tir.For) else None)
    return found


@pytest.fixture(params=[1, 2], ids=["1 thread", "2 threads"])
def threads(request, monkeypatch):
    monkeypatch.setattr(parallel, "num_threads", lambda: request.param)
    return request.param


@pytest.mark.parametrize("rows,cols", [(1, 1 << 20), (1, 1000), (3, 4096), (64, 512), (1, 16)])
@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_reductions_match_the_unscheduled_function(rows, cols, dtype, threads):
    func = total(rows, cols, dtype)
    scheduled = ms.apply_default_schedule(func)["main"]
    rng = np.random.default_rng(cols)
    if dtype == "int32":
        a = rng.integers(-2**31, 2**31 - 1, (rows, cols), dtype=dtype)
    else:
        a = rng.standard_normal((rows, cols)).astype(dtype)
    want = np.zeros(rows, dtype)
    codegen.build(func)(a, want)
    for run_threads in (1, 2, 3):
        got = np.zeros(rows, dtype)
        with codegen.num_threads(run_threads):
            codegen.build(scheduled)(a, got)
        if dtype == "int32":
            np.testing.assert_array_equal(got, want)
        else:
            np.testing.assert_allclose(got, a.astype("float64").sum(axis=1), rtol=1e-4,
                                       atol=1e-3)


def test_a_long_reduction_is_vectorized_and_chunked_over_the_threads(threads):
    scheduled = ms.apply_default_schedule(total(1, 1 << 20, "float32"))["main"]
    found = kinds(scheduled)
    assert ForKind.VECTORIZED in found
    assert (ForKind.PARALLEL in found) == (threads > 1)


def test_many_rows_run_in_parallel_without_chunks(threads):
    scheduled = ms.apply_default_schedule(total(1024, 512, "float32"))["main"]
    assert "_rf_rf" not in str(scheduled)  # the lanes' rfactor only
    assert (ForKind.PARALLEL in kinds(scheduled)) == (threads > 1)


def test_default_parallel_loops_are_not_serialized(threads):
    """The conv's fused row loop (indexed by its quotient and remainder) and the matmul's
    outer loop keep running in parallel: LegalizeParallelLoops finds them independent."""
    import transform
    from tirlite.meta_schedule.testing import te_workload as W

    for func in (W.conv2d_nhwc_bias_relu(2, 6, 80, 16, 32), W.matmul(256)):
        scheduled = ms.apply_default_schedule(func)
        with transform.collect_remarks() as remarks:
            lowered = str(codegen.lower(scheduled))
        assert not [r for r in remarks if "parallel loop" in str(r)], remarks
        assert ("T.parallel" in lowered) == (threads > 1)
