"""End-to-end tests of expression codegen: each node kind and dtype, scalar and vector."""

import operator

import numpy as np
import pytest
from llvm_util import FLOATS, INTS, elementwise, multi, run, run_multi, sample

import tir

LANES = [1, 4, 8]


def _np_div(a, b):  # C-style truncated division
    q = np.abs(a) // np.abs(b)
    return np.where((a < 0) != (b < 0), -q, q).astype(a.dtype)


ARITH = {
    "add": (tir.Add, operator.add),
    "sub": (tir.Sub, operator.sub),
    "mul": (tir.Mul, operator.mul),
    "min": (tir.Min, np.minimum),
    "max": (tir.Max, np.maximum),
}


@pytest.mark.parametrize("dtype", INTS + FLOATS)
@pytest.mark.parametrize("lanes", LANES)
def test_arith(dtype, lanes):
    a, b = sample(dtype, seed=1), sample(dtype, seed=2)
    nodes = [node for node, _ in ARITH.values()]
    outs = run_multi(multi(nodes, [dtype, dtype], [dtype] * len(nodes), lanes=lanes), [a, b],
                     [dtype] * len(nodes))
    for (name, (_, ref)), out in zip(ARITH.items(), outs):
        with np.errstate(over="ignore"):
            np.testing.assert_array_equal(out, ref(a, b), err_msg=name)


@pytest.mark.parametrize("dtype", INTS)
@pytest.mark.parametrize("lanes", [1, 8])
def test_integer_division_kinds(dtype, lanes):
    a, b = sample(dtype, seed=3), sample(dtype, seed=4, lo=-9, hi=9)
    cases = {
        tir.Div: _np_div(a, b),
        tir.Mod: (a - _np_div(a, b) * b).astype(dtype),
        tir.FloorDiv: a // b,
        tir.FloorMod: a % b,
    }
    outs = run_multi(multi(list(cases), [dtype, dtype], [dtype] * 4, lanes=lanes), [a, b],
                     [dtype] * 4)
    for (node, expected), out in zip(cases.items(), outs):
        np.testing.assert_array_equal(out, expected, err_msg=node.__name__)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("lanes", [1, 4])
def test_float_division_kinds(dtype, lanes):
    a, b = sample(dtype, seed=5), sample(dtype, seed=6)
    cases = {
        tir.Div: a / b,
        tir.FloorDiv: np.floor(a / b),
        tir.FloorMod: a - b * np.floor(a / b),
        tir.Mod: np.fmod(a, b),
    }
    outs = run_multi(multi(list(cases), [dtype, dtype], [dtype] * 4, lanes=lanes), [a, b],
                     [dtype] * 4)
    for (node, expected), out in zip(cases.items(), outs):
        np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5, err_msg=node.__name__)


CMPS = {tir.EQ: np.equal, tir.NE: np.not_equal, tir.LT: np.less, tir.LE: np.less_equal,
        tir.GT: np.greater, tir.GE: np.greater_equal}


@pytest.mark.parametrize("dtype", INTS + FLOATS + ["bool"])
@pytest.mark.parametrize("lanes", [1, 8])
def test_comparisons(dtype, lanes):
    a, b = sample(dtype, seed=7, lo=-3, hi=3), sample(dtype, seed=8, lo=-3, hi=3)
    b[:4] = a[:4]  # some equal pairs
    func = multi(list(CMPS), [dtype, dtype], ["bool"] * len(CMPS), lanes=lanes)
    outs = run_multi(func, [a, b], ["bool"] * len(CMPS))
    for (node, ref), out in zip(CMPS.items(), outs):
        np.testing.assert_array_equal(out, ref(a, b), err_msg=node.__name__)


def test_float_not_equal_is_true_on_nan():
    a = np.array([np.nan, 1.0, 2.0, np.nan] * 4, dtype="float32")
    b = np.array([np.nan, 1.0, 3.0, 0.0] * 4, dtype="float32")
    out = run(elementwise(tir.NE, ["float32", "float32"], "bool"), a, b, out_dtype=bool)
    np.testing.assert_array_equal(out, a != b)
    out = run(elementwise(tir.EQ, ["float32", "float32"], "bool"), a, b, out_dtype=bool)
    np.testing.assert_array_equal(out, a == b)


@pytest.mark.parametrize("lanes", [1, 8])
def test_logic(lanes):
    a, b = sample("bool", seed=1), sample("bool", seed=2)
    for node, ref in ((tir.And, np.logical_and), (tir.Or, np.logical_or)):
        out = run(elementwise(node, ["bool", "bool"], "bool", lanes=lanes), a, b)
        np.testing.assert_array_equal(out, ref(a, b))
    out = run(elementwise(tir.Not, ["bool"], "bool", lanes=lanes), a)
    np.testing.assert_array_equal(out, ~a)


@pytest.mark.parametrize("dtype", INTS + FLOATS)
@pytest.mark.parametrize("lanes", [1, 8])
def test_select(dtype, lanes):
    a, b = sample(dtype, seed=1), sample(dtype, seed=2)
    func = elementwise(lambda x, y: tir.Select(x < y, x * y, y), [dtype, dtype], dtype,
                       lanes=lanes)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(run(func, a, b), np.where(a < b, a * b, b))


CAST_DTYPES = INTS + FLOATS + ["bool", "float16"]


@pytest.mark.parametrize("src", CAST_DTYPES)
@pytest.mark.parametrize("lanes", [1, 4])
def test_cast(src, lanes):
    """``src`` cast to every dtype (values in the range of all of them)."""
    a = sample(src, seed=9, lo=0, hi=60) if lanes == 1 else sample(src, seed=9, lo=-60, hi=60)
    dsts = [d for d in CAST_DTYPES if lanes == 1 or not d.startswith("uint")]
    if src.startswith("uint") or src == "bool":
        dsts = CAST_DTYPES
    suffix = "" if lanes == 1 else f"x{lanes}"
    fns = [lambda x, d=d: tir.Cast(d + suffix, x) for d in dsts]
    outs = run_multi(multi(fns, [src], dsts, lanes=lanes), [a], dsts)
    for dst, out in zip(dsts, outs):
        expected = (a != 0) if dst == "bool" else a.astype(dst)
        np.testing.assert_array_equal(out, expected, err_msg=f"{src} -> {dst}")


def test_float64_to_float16_rounds_once():
    """Just above a half-way point between two halves: double rounding would go down."""
    a = np.full(16, 1 + 2.0**-11 + 2.0**-40, dtype="float64")
    a[1::2] = -a[1::2]
    func = elementwise(lambda x: tir.Cast("float16x4", x), ["float64"], "float16", lanes=4)
    out = run(func, a, out_dtype="float16")
    np.testing.assert_array_equal(out, a.astype("float16"))
    assert abs(float(out[0])) == 1 + 2.0**-10


def test_scalar_cast_float_to_int_truncates():
    a = np.array([-2.7, -0.5, 0.5, 2.7] * 4, dtype="float32")
    out = run(elementwise(lambda x: tir.Cast("int32", x), ["float32"], "int32"), a,
              out_dtype="int32")
    np.testing.assert_array_equal(out, [-2, 0, 0, 2] * 4)


def test_let():
    a = sample("int32")
    x = tir.Var("x", "int32x8")
    func = elementwise(lambda v: tir.Let(x, v * 3, x + x * x), ["int32"], "int32", lanes=8)
    np.testing.assert_array_equal(run(func, a), 3 * a + 9 * a * a)


def test_ramp_broadcast_values():
    """C[i*8 : i*8+8] = Ramp(i*8, 3, 8) + Broadcast(5, 8) (an index vector as a value)."""
    out = tir.decl_buffer((16,), "int32", name="C")
    i = tir.Var("i", "int32")
    value = tir.Ramp(i * 8, 3, 8) + tir.Broadcast(tir.const(5), 8)
    body = tir.For(i, 0, 2, tir.ForKind.SERIAL,
                   tir.BufferStore(out, value, [tir.Ramp(i * 8, 1, 8)]))
    c = np.zeros(16, "int32")
    import codegen

    codegen.build(tir.PrimFunc([out], body))(c)
    np.testing.assert_array_equal(c, [(k // 8) * 8 + 3 * (k % 8) + 5 for k in range(16)])


def test_ramp_with_symbolic_stride():
    out = tir.decl_buffer((8,), "int64", name="C")
    s = tir.Var("s", "int64")
    body = tir.BufferStore(out, tir.Ramp(tir.const(1, "int64"), s, 8), [tir.Ramp(0, 1, 8)])
    c = np.zeros(8, "int64")
    import codegen

    codegen.build(tir.PrimFunc([s, out], body))(7, c)
    np.testing.assert_array_equal(c, 1 + 7 * np.arange(8))


@pytest.mark.parametrize("sizes", [(8,), (4, 4), (2, 4, 2), (3, 5, 8), (1, 4)])
def test_shuffle_concat_and_pick(sizes):
    """Shuffle of several vectors of the given lane counts, picking lanes in reverse."""
    total = sum(sizes)
    bufs = [tir.decl_buffer((n,), "float32", name=f"A{k}") for k, n in enumerate(sizes)]
    out = tir.decl_buffer((total,), "float32", name="C")
    loads = [tir.BufferLoad(b, [tir.Ramp(0, 1, n) if n > 1 else tir.const(0)])
             for b, n in zip(bufs, sizes)]
    picks = list(reversed(range(total)))
    body = tir.BufferStore(out, tir.Shuffle(loads, picks), [tir.Ramp(0, 1, total)])
    arrays = [sample("float32", n=n, seed=k) for k, n in enumerate(sizes)]
    c = np.zeros(total, "float32")
    import codegen

    codegen.build(tir.PrimFunc(bufs + [out], body))(*arrays, c)
    np.testing.assert_array_equal(c, np.concatenate(arrays)[picks])


def test_shuffle_single_lane_is_extract():
    a = tir.decl_buffer((8,), "int32", name="A")
    out = tir.decl_buffer((1,), "int32", name="C")
    body = tir.BufferStore(out, tir.Shuffle([tir.BufferLoad(a, [tir.Ramp(0, 1, 8)])], [5]), [0])
    c = np.zeros(1, "int32")
    import codegen

    codegen.build(tir.PrimFunc([a, out], body))(np.arange(8, dtype="int32") * 10, c)
    assert c[0] == 50


@pytest.mark.parametrize("dtype, value", [
    ("int8", -128), ("int16", 32767), ("int32", -7), ("int64", -(2**63)), ("uint8", 255),
    ("uint16", 65535), ("uint32", 2**32 - 1), ("uint64", 2**64 - 1), ("float16", 1.5),
    ("float32", -2.25), ("float64", 1e300), ("bool", True), ("bool", False),
])
def test_scalar_params_of_every_dtype(dtype, value):
    import codegen

    x = tir.Var("x", dtype)
    B = tir.decl_buffer((1,), dtype, name="B")
    b = np.zeros(1, dtype)
    codegen.build(tir.PrimFunc([x, B], tir.BufferStore(B, x, [0])))(value, b)
    assert b[0] == value


def test_deep_expression_does_not_hit_the_recursion_limit():
    import codegen

    A = tir.decl_buffer((8,), "int32", name="A")
    B = tir.decl_buffer((1,), "int32", name="B")
    value = A[0]
    for k in range(2000):  # a left-deep chain twice as deep as Python's default limit
        value = tir.Add(value, A[k % 8])
    b = np.zeros(1, "int32")
    codegen.build(tir.PrimFunc([A, B], tir.BufferStore(B, value, [0])))(np.ones(8, "int32"), b)
    assert b[0] == 2001


def test_shuffle_skips_vectors_it_does_not_pick_from():
    """Shuffle([x, y, z], lanes of z then x): y is never evaluated (no load of B)."""
    import codegen
    import transform

    bufs = [tir.decl_buffer((4,), "int32", name=n) for n in "ABC"]
    out = tir.decl_buffer((8,), "int32", name="D")
    loads = [tir.BufferLoad(b, [tir.Ramp(0, 1, 4)]) for b in bufs]
    picks = [8, 9, 10, 11, 3, 2, 1, 0]
    body = tir.BufferStore(out, tir.Shuffle(loads, picks), [tir.Ramp(0, 1, 8)])
    func = tir.PrimFunc(bufs + [out], body)
    arrays = [np.arange(4, dtype="int32") + 10 * k for k in range(3)]
    d = np.zeros(8, "int32")
    codegen.build(func)(*arrays, d)
    np.testing.assert_array_equal(d, np.concatenate(arrays)[picks])
    with transform.PassContext(config={"codegen.llvm.opt_level": 0}):
        ll = codegen.build(func).get_source("ll")
    body = ll[ll.index("define"):]
    assert "%B" not in body[body.index("\n"):]  # the parameter B is never read
