"""End-to-end tests of intrinsic calls: math (scalar, vector, float16), bits, control."""

import math

import numpy as np
import pytest
from llvm_util import multi, run_multi, sample

import codegen
import tir
import transform

_erf = np.vectorize(math.erf)

MATH = {
    "exp": (tir.exp, np.exp), "exp2": (tir.exp2, np.exp2),
    "exp10": (tir.exp10, lambda x: np.power(10.0, x)), "log": (tir.log, np.log),
    "log2": (tir.log2, np.log2), "log10": (tir.log10, np.log10), "log1p": (tir.log1p, np.log1p),
    "sqrt": (tir.sqrt, np.sqrt), "rsqrt": (tir.rsqrt, lambda x: 1 / np.sqrt(x)),
    "sin": (tir.sin, np.sin), "cos": (tir.cos, np.cos), "tan": (tir.tan, np.tan),
    "tanh": (tir.tanh, np.tanh), "sigmoid": (tir.sigmoid, lambda x: 1 / (1 + np.exp(-x))),
    "erf": (tir.erf, _erf), "floor": (tir.floor, np.floor), "ceil": (tir.ceil, np.ceil),
    "trunc": (tir.trunc, np.trunc), "round": (tir.round, np.round),
    "nearbyint": (tir.nearbyint, np.rint), "abs": (tir.abs, np.abs),
    "pow": (lambda x: tir.pow(x, x * 0.5), lambda x: np.power(x, x * 0.5)),
    "fma": (lambda x: tir.fma(x, x, x), lambda x: x * x + x),
}
TOL = {"float16": 2e-3, "float32": 2e-6, "float64": 1e-13}


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("lanes", [1, 8])
def test_math(dtype, lanes):
    """Every math intrinsic on positive inputs (so log/sqrt/pow are defined)."""
    a = np.linspace(0.1, 2.4, 16).astype(dtype)
    a[3], a[4] = 0.5, 1.5  # round-half-to-even cases
    fns = [f for f, _ in MATH.values()]
    outs = run_multi(multi(fns, [dtype], [dtype] * len(fns), lanes=lanes), [a], [dtype] * len(fns))
    for (name, (_, ref)), out in zip(MATH.items(), outs):
        expected = ref(a.astype("float64")).astype(dtype)
        np.testing.assert_allclose(out, expected, rtol=TOL[dtype], atol=TOL[dtype], err_msg=name)


def test_vector_tanh_matches_numpy_on_wide_range():
    a = np.linspace(-20, 20, 64).astype("float32")
    outs = run_multi(multi([tir.tanh], ["float32"], ["float32"], n=64, lanes=8), [a], ["float32"])
    np.testing.assert_allclose(outs[0], np.tanh(a), rtol=2e-6, atol=1e-7)


@pytest.mark.parametrize("lanes", [1, 4])
def test_isnan_isinf(lanes):
    a = np.array([0.0, np.nan, np.inf, -np.inf] * 4, dtype="float32")
    outs = run_multi(multi([tir.isnan, tir.isinf], ["float32"], ["bool", "bool"], lanes=lanes),
                     [a], ["bool", "bool"])
    np.testing.assert_array_equal(outs[0], np.isnan(a))
    np.testing.assert_array_equal(outs[1], np.isinf(a))


@pytest.mark.parametrize("dtype", ["int8", "int32", "int64", "uint8", "uint16", "uint64"])
@pytest.mark.parametrize("lanes", [1, 8])
def test_bitwise(dtype, lanes):
    a, b = sample(dtype, seed=1), sample(dtype, seed=2, lo=0, hi=5)
    fns = [tir.bitwise_and, tir.bitwise_or, tir.bitwise_xor, lambda x, y: tir.bitwise_not(x),
           tir.shift_left, tir.shift_right, lambda x, y: tir.popcount(x)]
    outs = run_multi(multi(fns, [dtype, dtype], [dtype] * len(fns), lanes=lanes), [a, b],
                     [dtype] * len(fns))
    popcount = np.array([bin(int(v) & ((1 << a.itemsize * 8) - 1)).count("1") for v in a])
    expected = [a & b, a | b, a ^ b, ~a, a << b, a >> b, popcount.astype(dtype)]
    for k, (out, want) in enumerate(zip(outs, expected)):
        np.testing.assert_array_equal(out, want, err_msg=f"op {k}")


@pytest.mark.parametrize("lanes", [1, 4])
def test_reinterpret(lanes):
    a = sample("float32")
    suffix = "" if lanes == 1 else f"x{lanes}"
    fns = [lambda x: tir.reinterpret("int32" + suffix, x)]
    outs = run_multi(multi(fns, ["float32"], ["int32"], lanes=lanes), [a], ["int32"])
    np.testing.assert_array_equal(outs[0], a.view("int32"))


def test_scalar_if_then_else_evaluates_only_the_taken_side():
    """B[i] = i < 4 ? A[i] : 0 over 16 elements of a 4-element A: no out-of-bounds load."""
    n = tir.size_var("n")
    A = tir.decl_buffer((n,), "float32", name="A")
    B = tir.decl_buffer((16,), "float32", name="B")
    i = tir.Var("i", "int32")
    value = tir.if_then_else(i < n, A[i] * 2.0, tir.const(-1.0))
    loop = tir.For(i, 0, 16, tir.ForKind.SERIAL, tir.BufferStore(B, value, [i]))
    func = tir.PrimFunc([A, B], loop)
    a, b = np.arange(4, dtype="float32"), np.zeros(16, "float32")
    codegen.build(func)(a, b)
    np.testing.assert_array_equal(b, [0, 2, 4, 6] + [-1] * 12)


def test_vector_if_then_else_is_a_blend():
    a = sample("int32")
    fns = [lambda x: tir.Call("int32x8", "tir.if_then_else", [x > 0, x * 3, x - 7])]
    func = multi(fns, ["int32"], ["int32"], lanes=8)
    np.testing.assert_array_equal(run_multi(func, [a], ["int32"])[0], np.where(a > 0, 3 * a, a - 7))
    ll = codegen.build(func).get_source("ll")
    assert "select <8 x i1>" in ll and "br " not in ll


def test_call_extern_to_libm():
    a = np.linspace(0, 3, 16).astype("float64")
    func = multi([lambda x: tir.call_pure_extern("float64", "cbrt", x)], ["float64"], ["float64"])
    np.testing.assert_allclose(run_multi(func, [a], ["float64"])[0], np.cbrt(a), rtol=1e-15)


def test_unknown_extern_is_a_build_error():
    func = multi([lambda x: tir.call_extern("float32", "tirlite_no_such_fn", x)], ["float32"],
                 ["float32"])
    with pytest.raises(ValueError, match="tirlite_no_such_fn.*not defined"):
        codegen.build(func)


@pytest.mark.parametrize("dtype", ["int32", "uint8", "int64", "float32", "float64"])
def test_vector_reductions(dtype):
    """S[k] = reduce_k(A[0:8]) through llvm.vector.reduce.*."""
    kinds = ["add", "mul", "min", "max"] + (["and", "or", "xor"] if "int" in dtype else [])
    A = tir.decl_buffer((8,), dtype, name="A")
    S = tir.decl_buffer((len(kinds),), dtype, name="S")
    vec = tir.BufferLoad(A, [tir.Ramp(0, 1, 8)])
    body = tir.SeqStmt([tir.BufferStore(S, tir.Call(dtype, f"tir.vector_reduce_{k}", [vec]), [i])
                        for i, k in enumerate(kinds)])
    a = sample(dtype, n=8, seed=3, lo=1, hi=9)
    s = np.zeros(len(kinds), dtype)
    mod = codegen.build(tir.PrimFunc([A, S], body))
    mod(a, s)
    refs = {"add": np.sum, "mul": np.prod, "min": np.min, "max": np.max,
            "and": np.bitwise_and.reduce, "or": np.bitwise_or.reduce,
            "xor": np.bitwise_xor.reduce}
    with np.errstate(over="ignore"):
        expected = [refs[k](a).astype(dtype) for k in kinds]
    np.testing.assert_allclose(s, expected, rtol=1e-6)
    with transform.PassContext(config={"codegen.llvm.opt_level": 0}):
        ll = codegen.build(tir.PrimFunc([A, S], body)).get_source("ll")
    assert ll.count("call ") >= len(kinds) and "llvm.vector.reduce." in ll


def test_unsupported_intrinsic_is_a_value_error():
    func = multi([lambda x: tir.Call("float32", "tir.no_such_op", [x])], ["float32"], ["float32"])
    with pytest.raises(ValueError, match="intrinsic 'tir.no_such_op' is not supported"):
        codegen.build(func)
