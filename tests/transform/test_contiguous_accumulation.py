"""``ContiguousAccumulation``: strided loads summed into a lane-free accumulator.

Differential: each kernel vectorized (the pass on), serial
(``tir.disable_vectorize``) and in the interpreter, on extents at the edges
(empty, one, a vector and one either side, long odd) with integers (exact in
any order) and floats (close; NaN and infinities as the serial sum has them).
Structural: the pass fires where the accumulator is only summed, and leaves
everything else alone (ordered reductions, a lane-wise read, terms that are
not one contiguous run, a predicated update).
"""

import numpy as np
import pytest

import codegen
import tir
import transform
from tir import ir_builder
from tir.expr import BufferLoad, Ramp, Shuffle
from tir.functor import post_order_visit
from transform.vector.contiguous_accumulation import contiguous_accumulation

LANES = codegen.Target("llvm").vector_width_bits // 32
EXTENTS = [0, 1, LANES - 1, LANES, LANES + 1, 4 * LANES + 3, 1001]


def row_sum(rows, width: int, dtype: str) -> tir.PrimFunc:
    """``s += A[i, 0] + ... + A[i, width - 1]`` (a sum unrolled by hand over each row)."""
    a = tir.decl_buffer((rows, width), dtype, "A")
    s = tir.decl_buffer((1,), dtype, "S")
    ib = ir_builder.create()
    pa, ps = ib.buffer_ptr(a), ib.buffer_ptr(s)
    with ib.for_range(0, rows, name="i", kind="vectorize") as i:
        total = ps[0]
        for k in range(width):
            total = total + pa[i, k]
        ps[0] = total
    return tir.PrimFunc([a, s], ib.get())


def group_sum(n, width: int, dtype: str, order=None) -> tir.PrimFunc:
    """``s += a[w i + order[0]] + ...`` on a flat buffer: groups of ``width`` elements."""
    order = list(range(width)) if order is None else order
    a = tir.decl_buffer((n * width,), dtype, "A")
    s = tir.decl_buffer((1,), dtype, "S")
    ib = ir_builder.create()
    pa, ps = ib.buffer_ptr(a), ib.buffer_ptr(s)
    with ib.for_range(0, n, name="i", kind="vectorize") as i:
        total = ps[0]
        for k in order:
            total = total + pa[width * i + k]
        ps[0] = total
    return tir.PrimFunc([a, s], ib.get())


def _builds(func):
    vec = codegen.build(func)
    with transform.PassContext(config={"tir.disable_vectorize": True}):
        serial = codegen.build(func)
    return vec, serial, codegen.build(func, "interp")


def _data(rng, size: int, dtype: str, special: bool) -> np.ndarray:
    if np.dtype(dtype).kind == "i":
        return rng.integers(-1000, 1000, size, dtype=dtype)
    x = rng.uniform(-1, 1, size).astype(dtype)
    if special and size > 3:
        picks = rng.choice(size, 3, replace=False)
        x[picks] = rng.choice([np.nan, np.inf, -np.inf, -0.0], 3)
    return x


def _run(mod, a: np.ndarray, dtype: str) -> np.ndarray:
    s = np.array([3], dtype)
    mod(a, s)
    return s


def _assert_same_sum(got, want, dtype: str, terms: int):
    if np.dtype(dtype).kind == "i":
        np.testing.assert_array_equal(got, want)
        return
    assert np.isnan(got[0]) == np.isnan(want[0])
    if not np.isnan(want[0]):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * max(terms, 1))


CASES = [(dtype, special) for dtype in ("int32", "float32", "float64")
         for special in (False, True) if not (special and dtype == "int32")]


@pytest.mark.parametrize("dtype, special", CASES)
@pytest.mark.parametrize("width", [2, 3, 5])
def test_row_sums_agree_with_serial_and_interpreter(width, dtype, special):
    rng = np.random.default_rng(width * 10 + len(dtype))
    for rows in EXTENTS:
        vec, serial, interp = _builds(row_sum(rows, width, dtype))
        a = _data(rng, rows * width, dtype, special).reshape(rows, width)
        want = _run(serial, a, dtype)
        for mod in (vec, interp):
            _assert_same_sum(_run(mod, a.copy(), dtype), want, dtype, rows * width)


@pytest.mark.parametrize("order", [[0, 1, 2, 3, 4], [4, 2, 0, 3, 1]])
@pytest.mark.parametrize("dtype", ["int32", "float32"])
def test_flat_groups_in_any_order_agree(order, dtype):
    rng = np.random.default_rng(len(dtype))
    for n in EXTENTS:
        vec, serial, interp = _builds(group_sum(n, 5, dtype, order))
        a = _data(rng, 5 * n, dtype, False)
        want = _run(serial, a, dtype)
        for mod in (vec, interp):
            _assert_same_sum(_run(mod, a.copy(), dtype), want, dtype, 5 * n)


def _lowered(func, config=None):
    with transform.PassContext(config=config or {}):
        return codegen.lower(func)["main"]


def _accesses(func):
    found = {"shuffles": 0, "strided": 0}

    def visit(node):
        if isinstance(node, Shuffle):
            found["shuffles"] += 1
        elif isinstance(node, BufferLoad) and node.buffer.name.startswith("A"):
            if any(isinstance(i, Ramp) and (len(node.indices) > 1 or i.stride.value != 1)
                   for i in node.indices):
                found["strided"] += 1
    post_order_visit(func.body, visit)
    return found


def test_row_sum_reads_contiguous_vectors():
    found = _accesses(_lowered(row_sum(64 * LANES, 5, "float32")))
    assert found == {"shuffles": 0, "strided": 0}


def test_without_the_pass_the_same_loads_are_strided():
    func = row_sum(64 * LANES, 5, "float32")
    with transform.PassContext(disabled_pass=["tir.ContiguousAccumulation"]):
        lowered = codegen.lower(func)["main"]
    found = _accesses(lowered)
    assert found["strided"] > 0 or found["shuffles"] > 0


def _flat_loads(func) -> int:
    found = []
    post_order_visit(func.body, lambda n: found.append(n) if isinstance(n, BufferLoad)
                     and n.buffer.name == "A_flat" else None)
    return len(found)


def test_ordered_reductions_are_left_alone():
    func = row_sum(64 * LANES, 5, "float32")
    assert _flat_loads(_lowered(func)) > 0
    assert _flat_loads(_lowered(func, {"tir.vectorize.ordered_reductions": True})) == 0
    int_func = row_sum(64 * LANES, 5, "int32")  # exact in any order: ordered or not
    assert _flat_loads(_lowered(int_func, {"tir.vectorize.ordered_reductions": True})) > 0


def test_terms_that_are_not_one_run_are_left_alone():
    # a[5i] + a[5i+1] + a[5i+1] + a[5i+3] + a[5i+4]: element 5i+2 never read, 5i+1 twice
    func = group_sum(64 * LANES, 5, "float32", [0, 1, 1, 3, 4])
    assert _accesses(_lowered(func))["strided"] + _accesses(_lowered(func))["shuffles"] > 0


def _hand_written(lane_wise_read: bool, predicated: bool):
    """acc[0:L] = acc[0:L] + (A[Ramp(2b, 2, L)] + A[Ramp(2b + 1, 2, L)]), then either the
    horizontal sum of acc or (lane_wise_read) acc copied to an output lane by lane."""
    a = tir.decl_buffer((4 * LANES,), "float32", "A")
    out = tir.decl_buffer((LANES,), "float32", "O")
    acc_var = tir.Var("acc", "handle")
    acc = tir.decl_buffer((LANES,), "float32", "acc", data=acc_var)
    whole = [Ramp(tir.const(0, "int32"), tir.const(1, "int32"), LANES)]
    b = tir.Var("b", "int32")
    addend = (BufferLoad(a, [Ramp(2 * b, tir.const(2, "int32"), LANES)])
              + BufferLoad(a, [Ramp(2 * b + 1, tir.const(2, "int32"), LANES)]))
    pred = tir.Broadcast(tir.const(True, "bool"), LANES) if predicated else None
    update = tir.BufferStore(acc, BufferLoad(acc, whole) + addend, whole, pred)
    if lane_wise_read:
        use = tir.BufferStore(out, BufferLoad(acc, whole), whole)
    else:
        total = tir.Call("float32", "tir.vector_reduce_add_reassoc", [BufferLoad(acc, whole)])
        use = tir.BufferStore(out, total, [tir.const(0, "int32")])
    loop = tir.For(b, 0, 2, tir.ForKind.SERIAL, update)
    return tir.Allocate(acc_var, "float32", [LANES], tir.const(True, "bool"),
                        tir.SeqStmt([loop, use]))


def test_only_a_summed_unpredicated_accumulator_is_rewritten():
    summed = _hand_written(lane_wise_read=False, predicated=False)
    assert contiguous_accumulation(summed) is not summed
    for stmt in (_hand_written(True, False), _hand_written(False, True)):
        assert contiguous_accumulation(stmt) is stmt


def _add_depth(e) -> int:
    """How many ``+`` deep ``e`` is (a chain of k terms: k - 1; a balanced tree: log2 k)."""
    if isinstance(e, tir.Add):
        return 1 + max(_add_depth(e.a), _add_depth(e.b))
    return 0


# A chain of dependent 512-bit adds between the loads held back the memory stream on the
# Zen 4 host (analysis/reductions.py, _reduction): the terms are summed as a balanced tree,
# as VectorizeReductions regroups them and as ContiguousAccumulation makes them contiguous.
@pytest.mark.parametrize("width", [4, 5, 8])
def test_the_terms_of_an_unrolled_sum_are_a_balanced_tree(width):
    lowered = codegen.lower(row_sum(64 * LANES, width, "float32"))["main"]
    updates = []
    post_order_visit(lowered.body, lambda n: updates.append(n)
                     if isinstance(n, tir.BufferStore) and "x" in n.value.dtype
                     and isinstance(n.value, tir.Add) else None)
    assert updates
    for store in updates:
        own = store.value.a
        addend = store.value.b if isinstance(own, BufferLoad) and \
            own.buffer.data is store.buffer.data else own
        assert _add_depth(addend) == int(np.ceil(np.log2(width))), store
