"""Float Min/Max and round mean the same in every backend, vector or scalar, and when folded.

The meaning (see ``tir.min``, ``tir.round``): ``Min``/``Max`` are IEEE 754-2019
``minimum``/``maximum`` (NaN if either operand is NaN, -0.0 < +0.0, whatever the
operand order), ``round`` rounds halves to even as ``np.round``. Results are
compared bit for bit: NaN with NaN, and the sign of a zero.
"""

import math

import numpy as np
import pytest

import codegen
import tir
import transform
from codegen.interp.backend import build_interpreter

NAN, INF = float("nan"), float("inf")
SPECIAL = [NAN, INF, -INF, 0.0, -0.0, 1.0, -2.5, 3.0]
FLOATS = ["float16", "float32", "float64"]

#: (a, b, min(a, b), max(a, b)) written out for the cases that matter.
MIN_MAX_TABLE = [
    (NAN, 1.0, NAN, NAN),
    (1.0, NAN, NAN, NAN),
    (NAN, -INF, NAN, NAN),
    (-0.0, 0.0, -0.0, 0.0),
    (0.0, -0.0, -0.0, 0.0),
    (INF, 1.0, 1.0, INF),
    (-INF, -1.0, -INF, -1.0),
    (2.0, 2.0, 2.0, 2.0),
]


def _ieee_min(x: float, y: float) -> float:
    if math.isnan(x) or math.isnan(y):
        return NAN
    if x == y:  # only zeros of different signs are equal but distinct
        return x if math.copysign(1, x) < 0 else y
    return x if x < y else y


def _ieee_max(x: float, y: float) -> float:
    if math.isnan(x) or math.isnan(y):
        return NAN
    if x == y:
        return y if math.copysign(1, x) < 0 else x
    return x if x > y else y


def _all_pairs(dtype):
    a = np.array([x for x in SPECIAL for _ in SPECIAL], dtype)
    b = np.array([y for _ in SPECIAL for y in SPECIAL], dtype)
    return a, b


def assert_same_floats(got, want, what=""):
    """Equal bit for bit, except that any NaN equals any NaN."""
    got, want = np.asarray(got), np.asarray(want, got.dtype)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=f"{what}: NaN lanes")
    uint = f"uint{got.dtype.itemsize * 8}"
    bits = [np.where(np.isnan(v), 0, v).view(uint) for v in (got, want)]
    np.testing.assert_array_equal(bits[0], bits[1], err_msg=f"{what}: {got} != {want}")


# ---------------------------------------------------------------- ways to run a kernel


def _llvm(func):
    return codegen.build(func, target="llvm")


def _llvm_scalar(func):
    with transform.PassContext(config={"tir.disable_vectorize": True}):
        return codegen.build(func, target="llvm")


def _interp(func):
    return codegen.build(func, target="interp")


WAYS = {
    "llvm": _llvm,
    "llvm_scalar": _llvm_scalar,
    "interp": _interp,
    "interp_unlowered": build_interpreter,
}


def _elementwise(dtype, n, lanes, make):
    """``C[k] = make(A[k], B[k])`` over n elements; the inner loop of ``lanes`` vectorized."""
    A, B, C = (tir.decl_buffer((n,), dtype, name=name) for name in "ABC")
    ib = tir.ir_builder.create()
    a, b, c = ib.buffer_ptr(A), ib.buffer_ptr(B), ib.buffer_ptr(C)
    with ib.for_range(0, n // lanes, name="i") as i:
        with ib.for_range(0, lanes, name="j", kind="vectorize") as j:
            c[i * lanes + j] = make(a[i * lanes + j], b[i * lanes + j])
    return tir.PrimFunc([A, B, C], ib.get())


def _has_vector(func, node_class):
    found = []
    tir.stmt_functor.post_order_visit(
        codegen.lower(func)["main"].body,
        lambda n: found.append(n) if isinstance(n, node_class) and "x" in n.dtype else None,
    )
    return bool(found)


# ---------------------------------------------------------------- min and max


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("way", WAYS)
@pytest.mark.parametrize(("node", "ref"), [(tir.Min, _ieee_min), (tir.Max, _ieee_max)])
def test_min_max_on_special_values(dtype, way, node, ref):
    a, b = _all_pairs(dtype)
    func = _elementwise(dtype, a.size, 8, node)
    c = np.zeros_like(a)
    WAYS[way](func)["main"](a, b, c)
    want = [ref(float(x), float(y)) for x, y in zip(a, b)]
    assert_same_floats(c, want, f"{node.__name__} {dtype} {way}")


def test_min_max_kernel_really_runs_vector_code():
    # The vectorized way above must exercise vector Min/Max, not a scalarized loop.
    assert _has_vector(_elementwise("float32", 64, 8, tir.Min), tir.Min)
    assert _has_vector(_elementwise("float64", 64, 8, tir.Max), tir.Max)


@pytest.mark.parametrize(("a", "b", "lo", "hi"), MIN_MAX_TABLE)
def test_min_max_table_folded_and_compiled(a, b, lo, hi):
    # Folding by tir.min / tir.max gives what compiled code computes at run time.
    ca, cb = tir.const(a, "float32"), tir.const(b, "float32")
    assert_same_floats(np.float32(tir.min(ca, cb).value), lo, "folded min")
    assert_same_floats(np.float32(tir.max(ca, cb).value), hi, "folded max")
    func = _elementwise("float32", 8, 8, tir.Min)
    c = np.zeros(8, "float32")
    _llvm(func)["main"](np.full(8, a, "float32"), np.full(8, b, "float32"), c)
    assert_same_floats(c, np.full(8, lo), "compiled min")


@pytest.mark.parametrize("way", WAYS)
def test_unfolded_constant_min_max_agree_with_folding(way):
    # Min(NaN, 1) built as a node is folded by the pipeline's Simplify, and evaluated
    # at run time by the interpreter on the unlowered IR: both give the table's values.
    out = tir.decl_buffer((len(MIN_MAX_TABLE) * 2,), "float32", name="out")
    stores = []
    for k, (a, b, _, _) in enumerate(MIN_MAX_TABLE):
        fa, fb = tir.FloatImm("float32", a), tir.FloatImm("float32", b)
        stores.append(tir.BufferStore(out, tir.Min(fa, fb), [2 * k]))
        stores.append(tir.BufferStore(out, tir.Max(fa, fb), [2 * k + 1]))
    got = np.zeros(out.shape[0].value, "float32")
    WAYS[way](tir.PrimFunc([out], tir.SeqStmt(stores)))["main"](got)
    want = [v for _, _, lo, hi in MIN_MAX_TABLE for v in (lo, hi)]
    assert_same_floats(got, want, way)


@pytest.mark.parametrize("target", ["llvm", "interp"])
@pytest.mark.parametrize("kind", ["min", "max"])
def test_vector_reduce_min_max_ignore_lane_order(target, kind):
    # A horizontal reduction gives what the serial fold gives, wherever the NaN or -0.0 is.
    A = tir.decl_buffer((8,), "float32", name="A")
    out = tir.decl_buffer((1,), "float32", name="out")
    lanes = A[tir.Ramp(tir.const(0), 1, 8)]
    store = tir.BufferStore(out, tir.call_intrin("float32", f"tir.vector_reduce_{kind}", lanes),
                            [0])
    mod = codegen.build(tir.PrimFunc([A, out], store), target=target)
    ref = _ieee_min if kind == "min" else _ieee_max
    rng = np.random.default_rng(0)
    for specials in ([NAN], [0.0, -0.0], [-0.0, 0.0], [INF, -INF], []):
        for _ in range(4):
            a = np.concatenate([specials, rng.choice([0.0, -0.0, 5.0], 8 - len(specials))])
            a = rng.permutation(a).astype("float32")
            got = np.zeros(1, "float32")
            mod["main"](a, got)
            want = 0.0
            for k, x in enumerate(a.tolist()):
                want = x if k == 0 else ref(want, x)
            assert_same_floats(got, [want], f"{kind} of {a}")


# ---------------------------------------------------------------- round


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("way", WAYS)
def test_round_halves_to_even_everywhere(dtype, way):
    values = [0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.25, 2.75, -0.0, NAN, INF, -INF, 1e4 + 0.5,
              float(np.nextafter(np.asarray(0.5, dtype), 0)), 3.0, -7.5]
    a = np.array(values, dtype)
    func = _elementwise(dtype, a.size, 8, lambda x, _: tir.round(x))
    c = np.zeros_like(a)
    WAYS[way](func)["main"](a, np.zeros_like(a), c)
    assert_same_floats(c, np.round(a), f"round {dtype} {way}")


def test_round_kernel_really_runs_vector_code():
    assert _has_vector(_elementwise("float32", 16, 8, lambda x, _: tir.round(x)), tir.Call)
