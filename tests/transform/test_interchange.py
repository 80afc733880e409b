"""``InterchangeVectorLoops``: a vectorized column loop moves inside its row loop.

Differential (vectorized vs serial vs interpreter, exact: the swap keeps each
column's order) over extents with tails, plus the cases left alone: a
dependence across columns, a nest that walks rows as written, inner bounds
using the column, a nest that is not perfect, the config off.
"""

import numpy as np
import pytest

import codegen
import tir
import transform
from tir import ir_builder
from tir.functor import post_order_visit
from tir.stmt import For, ForKind

LANES = codegen.Target("llvm").vector_width_bits // 32


def column_scan(rows, cols, shift=0, row_walk=False, triangular=False, extra=False):
    """``A[j, i] = A[j - 1, i + shift] + B[j, i]`` for j >= 1, columns i vectorized outside."""
    a_shape, b_shape = _shapes(rows, cols, shift, row_walk)
    a = tir.decl_buffer(a_shape, "float32", "A")
    b = tir.decl_buffer(b_shape, "float32", "B")
    ib = ir_builder.create()
    pa, pb = ib.buffer_ptr(a), ib.buffer_ptr(b)
    with ib.for_range(0, cols, name="i", kind="vectorize") as i:
        if extra:
            pa[0, i] = pa[0, i] * tir.const(2.0, "float32")
        hi = tir.min(i + 1, rows) if triangular else rows
        with ib.for_range(1, hi, name="j") as j:
            if row_walk:
                pa[i, j] = pa[i, j - 1] + pb[i, j]
            else:
                pa[j, i] = pa[j - 1, i + shift] + pb[j, i]
    return tir.PrimFunc([a, b], ib.get())


def _shapes(rows, cols, shift=0, row_walk=False):
    """Shapes of A and B (the row walk indexes them [column, row])."""
    if row_walk:
        return (cols, rows), (cols, rows)
    return (rows, cols + shift), (rows, cols)


def _outer_loop(func) -> For:
    loops = []
    post_order_visit(func.body, lambda n: loops.append(n) if isinstance(n, For) else None)
    return loops[-1]  # post order: the outermost comes last


def _interchanged(func, config=None) -> bool:
    with transform.PassContext(config=config or {}), transform.collect_remarks() as remarks:
        codegen.lower(func)
    return any("interchanged with loop j" in str(r) for r in remarks)


def _lowered(func, config=None):
    with transform.PassContext(config=config or {}):
        return codegen.lower(func)["main"]


def _check_all_builds(func, shape_a, shape_b, seed):
    rng = np.random.default_rng(seed)
    a = rng.uniform(-1, 1, shape_a).astype("float32")
    b = rng.uniform(-1, 1, shape_b).astype("float32")
    with transform.PassContext(config={"tir.disable_vectorize": True}):
        serial = codegen.build(func)
    want = a.copy()
    serial(want, b)
    for mod in (codegen.build(func), codegen.build(func, "interp")):
        got = a.copy()
        mod(got, b)
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("cols", [1, LANES - 1, LANES, LANES + 1, 3 * LANES + 5])
@pytest.mark.parametrize("rows", [1, 2, 37])
def test_column_scan_agrees_with_serial_and_interpreter(rows, cols):
    _check_all_builds(column_scan(rows, cols), *_shapes(rows, cols), rows * 100 + cols)


def test_the_row_loop_moves_outside_and_says_so():
    func = column_scan(64, 32 * LANES)  # wider than one vector group: i stays a loop
    outer = _outer_loop(_lowered(func))
    assert outer.loop_var.name == "j" and outer.kind == ForKind.SERIAL
    assert _interchanged(func)


@pytest.mark.parametrize("kwargs, why", [
    (dict(shift=1), "column i reads column i + 1 another iteration writes"),
    (dict(row_walk=True), "the inner loop already walks a row"),
    (dict(triangular=True), "the inner loop's bounds use the column"),
    (dict(extra=True), "not a perfect nest"),
])
def test_left_alone(kwargs, why):
    func = column_scan(40, 3 * LANES, **kwargs)
    assert not _interchanged(func), why
    shapes = _shapes(40, 3 * LANES, kwargs.get("shift", 0), kwargs.get("row_walk", False))
    _check_all_builds(func, *shapes, len(why))


def test_config_turns_it_off():
    func = column_scan(64, 32 * LANES)  # wider than one vector group: i stays a loop
    assert _interchanged(func)
    assert not _interchanged(func, {"tir.vectorize.interchange": False})
    assert _outer_loop(_lowered(func, {"tir.vectorize.interchange": False})).loop_var.name != "j"
