"""Differential tests: every kernel of kernels.py, run three ways, must match NumPy.

The ways: ``codegen.build`` (vectorized, default PassContext),
``codegen.build`` with ``tir.disable_vectorize``, ``codegen.build`` with
``tir.enable_buffer_level_predication``, the reference interpreter
on the TIR as written, and the interpreter on the output of the build
pipeline (``codegen.lower``), by default and with buffer-level predication.
The last two tell a pass bug from a code generator bug. Each run gets fresh
inputs from the same seed. Comparisons with NumPy allow a tolerance; the ways are
compared with each other bit for bit in strict floating point (no FMA contraction).
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kernels import KERNELS

import codegen
import tir
import transform
from codegen.interp.backend import build_interpreter
from tir import ir_builder

#: (rtol, atol) by output dtype; integers and bools must match exactly.
TOLERANCES = {"float16": (1e-3, 1e-3), "float32": (1e-5, 1e-6), "float64": (1e-12, 1e-12)}
#: Kernels whose float results may differ more (reassociated sums, libm vs NumPy).
LOOSER = {"serial_sum": (1e-9, 1e-9), "math_intrinsics": (2e-5, 1e-5)}


#: Strict floating point: by default LLVM may fuse a * b + c into one FMA, rounding once
#: where the interpreter rounds twice; the bit-for-bit comparisons below need it off.
STRICT_FP = {"codegen.llvm.fp_contract": False}


def _config(strict, **config):
    return transform.PassContext(config={**config, **(STRICT_FP if strict else {})})


def _build_llvm(func, strict=False):
    with _config(strict):
        return codegen.build(func, target="llvm")


def _build_llvm_scalar(func, strict=False):
    with _config(strict, **{"tir.disable_vectorize": True}):
        return codegen.build(func, target="llvm")


def _build_llvm_predicated(func, strict=False):
    with _config(strict, **{"tir.enable_buffer_level_predication": True}):
        return codegen.build(func, target="llvm")


def _interpret(func, strict=False):
    return build_interpreter(func)  # rounds every operation: strict by nature


def _interpret_lowered(func, strict=False):
    with _config(strict):
        return build_interpreter(codegen.lower(func))


def _interpret_predicated(func, strict=False):
    with _config(strict, **{"tir.enable_buffer_level_predication": True}):
        return build_interpreter(codegen.lower(func))


WAYS = {
    "vectorized": _build_llvm,
    "scalar": _build_llvm_scalar,
    "predicated": _build_llvm_predicated,
    "interpreter": _interpret,
    "lowered_tir": _interpret_lowered,
    "predicated_tir": _interpret_predicated,
}


def _check(name, outputs, expected):
    for index, want in expected.items():
        got = outputs[index]
        assert got.dtype == want.dtype and got.shape == want.shape
        if got.dtype.kind == "f":
            rtol, atol = LOOSER.get(name, TOLERANCES[str(got.dtype)])
            np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=name)
        else:
            np.testing.assert_array_equal(got, want, err_msg=name)


@pytest.mark.parametrize("way", list(WAYS))
@pytest.mark.parametrize("name", list(KERNELS))
def test_kernel_matches_numpy(name, way):
    func, make_inputs, reference = KERNELS[name]()
    inputs = make_inputs(np.random.default_rng(7))
    expected = reference(inputs)
    module = WAYS[way](func)
    module["main"](*inputs)
    _check(name, inputs, expected)


def test_ways_agree_with_each_other_on_the_tail():
    """The guarded tail must leave the elements past n untouched in every backend."""
    func, make_inputs, _ = KERNELS["guarded_tail"]()
    results = []
    for build in WAYS.values():
        a, b, c, n = make_inputs(np.random.default_rng(3))
        c[:] = -7.0
        build(func, strict=True)["main"](a, b, c, n - 5)
        results.append(c)
    for other in results[1:]:
        np.testing.assert_array_equal(results[0], other)
    assert (results[0][-5:] == -7.0).all()


@pytest.mark.parametrize("way", list(WAYS))
def test_assertion_fails_alike(way):
    n = tir.var("n")
    ib = ir_builder.create()
    A = ib.pointer("float32", name="A")
    ib.emit(tir.AssertStmt(n > 0, "n must be positive", tir.Evaluate(0)))
    A[0] = 1.0
    module = WAYS[way](tir.PrimFunc([A, n], ib.get()))
    with pytest.raises(RuntimeError, match="main: assertion failed: n must be positive"):
        module["main"](np.zeros(1, "float32"), 0)


@pytest.mark.parametrize("way", list(WAYS))
def test_bad_arguments_fail_alike(way):
    func, make_inputs, _ = KERNELS["vector_add"]()
    module = WAYS[way](func)
    a, b, c = make_inputs(np.random.default_rng(0))
    msg = r"main: argument 'A' expects a float32 array of shape \(n,\), got float64 of shape"
    with pytest.raises(TypeError, match=msg):
        module["main"](a.astype("float64"), b, c)
    with pytest.raises(ValueError, match=r"the length 1000 of 'A' disagrees with the length 999"):
        module["main"](a, b[:999], c)


# ---------------------------------------------------------------- random programs
#
# Hypothesis draws an expression over A[k], B[k] (or B at a permuted index) and
# constants, stored to C[k] (or a permuted index) in a vectorized loop, guarded
# by k < n when drawn; the interpreter (on the TIR as written) and the LLVM
# ways must agree bit for bit. Integer types are
# those whose overflow wraps in TIR (8/16-bit signed, unsigned); divisors are
# constants other than 0 and -1; float operations are the IEEE-exact ones.


RANDOM_N = 64
RANDOM_DTYPES = ["int8", "int16", "uint8", "uint16", "uint32", "float16", "float32"]
_DIVISORS = [2, 3, 5, 7, -2, -3, -7]


def _leaf(data, dtype, loads):
    kind = data.draw(st.sampled_from(["A", "B", "const"]))
    if kind != "const":
        return loads[kind]
    if dtype.startswith("float"):
        return tir.const(data.draw(st.floats(-4, 4, width=np.dtype(dtype).itemsize * 8)), dtype)
    info = np.iinfo(dtype)
    return tir.const(data.draw(st.integers(int(info.min), int(info.max))), dtype)


def _int_op(data, a, b, dtype):
    op = data.draw(st.sampled_from(["floordiv", "floormod", "truncdiv", "truncmod", "and", "xor",
                                    "shr"]))
    divisor = data.draw(st.sampled_from([d for d in _DIVISORS if d > 0 or dtype[0] == "i"]))
    bits = np.iinfo(dtype).bits
    table = {
        "floordiv": lambda: tir.floordiv(a, tir.const(divisor, dtype)),
        "floormod": lambda: tir.floormod(a, tir.const(divisor, dtype)),
        "truncdiv": lambda: tir.truncdiv(a, tir.const(divisor, dtype)),
        "truncmod": lambda: tir.truncmod(a, tir.const(divisor, dtype)),
        "and": lambda: tir.bitwise_and(a, b),
        "xor": lambda: tir.bitwise_xor(a, b),
        "shr": lambda: tir.shift_right(a, tir.const(data.draw(st.integers(0, bits - 1)), dtype)),
    }
    return table[op]()


def _expr(data, dtype, loads, depth):
    if depth == 0 or data.draw(st.integers(0, 3)) == 0:
        return _leaf(data, dtype, loads)
    a = _expr(data, dtype, loads, depth - 1)
    b = _expr(data, dtype, loads, depth - 1)
    ops = ["add", "sub", "mul", "min", "max", "select"]
    ops += ["float"] if dtype.startswith("float") else ["int"]
    ops += ["cast"] if dtype != "uint32" else []
    op = data.draw(st.sampled_from(ops))
    if op == "select":
        cmp = data.draw(st.sampled_from([tir.LT, tir.LE, tir.EQ, tir.NE, tir.GE]))
        return tir.Select(cmp(a, b), b, a)
    if op == "int":
        return _int_op(data, a, b, dtype)
    if op == "float":
        return _float_op(data, a, b, dtype)
    if op == "cast":  # through a wider type and back, staying in range (else it is undefined)
        if dtype.startswith("float"):
            return tir.Cast(dtype, tir.Cast("float64", a) + tir.Cast("float64", b))
        return tir.Cast(dtype, tir.Max(tir.Cast("float32", a), tir.Cast("float32", b)))
    binary = {"add": tir.Add, "sub": tir.Sub, "mul": tir.Mul, "min": tir.Min, "max": tir.Max}
    return binary[op](a, b)


def _float_op(data, a, b, dtype):
    """Float operations that are exact in IEEE arithmetic, so every backend agrees bit for bit."""
    op = data.draw(st.sampled_from(["div", "floor", "ceil", "trunc", "fabs", "sqrt", "nearbyint"]))
    if op == "div":  # a denominator of at least 1 keeps NaN and inf out
        return a / (tir.abs(b) + 1.0)
    if op == "sqrt":
        return tir.sqrt(tir.abs(a))
    return tir.call_intrin(dtype, f"tir.{op}", a)


def _permuted(data, k):
    """``k``, or ``(k * odd + shift) mod N``: a permutation (a gather/scatter when vectorized)."""
    if data.draw(st.booleans()):
        return k
    odd, shift = data.draw(st.sampled_from([1, 3, 5, 7, 63])), data.draw(st.integers(0, 63))
    return tir.floormod(k * odd + shift, RANDOM_N)


def _random_kernel(data):
    """C[p(k)] = expr(A[k], B[q(k)]) for k < n (when guarded), in blocks of 8 vector lanes."""
    dtype = data.draw(st.sampled_from(RANDOM_DTYPES))
    guarded = data.draw(st.booleans())
    n = tir.var("n")
    ib = ir_builder.create()
    A, B, C = (ib.pointer(dtype, name=name) for name in "ABC")
    with (
        ib.for_range(0, RANDOM_N // 8, name="i") as i,
        ib.for_range(0, 8, name="j", kind="vectorize") as j,
    ):
        k = i * 8 + j
        value = _expr(data, dtype, {"A": A[k], "B": B[_permuted(data, k)]}, depth=3)
        out = _permuted(data, k)
        if guarded:
            with ib.if_scope(k < n):
                C[out] = value
        else:
            C[out] = value
    return tir.PrimFunc([A, B, C, n], ib.get()), dtype


def _random_inputs(dtype, seed):
    rng = np.random.default_rng(seed)
    if dtype.startswith("float"):
        make = lambda: rng.uniform(-4, 4, RANDOM_N).astype(dtype)
    else:
        info = np.iinfo(dtype)
        make = lambda: rng.integers(info.min, info.max, RANDOM_N, dtype=dtype,
                                    endpoint=True)
    return make(), make()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_random_programs_agree_across_backends(data):
    func, dtype = _random_kernel(data)
    a, b = _random_inputs(dtype, data.draw(st.integers(0, 2**16)))
    n = data.draw(st.integers(0, RANDOM_N))
    results = {}
    for way in ("interpreter", "vectorized", "scalar", "predicated"):
        c = np.zeros(RANDOM_N, dtype)
        WAYS[way](func, strict=True)["main"](a.copy(), b.copy(), c, n)
        results[way] = c
    for way in ("vectorized", "scalar", "predicated"):
        np.testing.assert_array_equal(results[way], results["interpreter"],
                                      err_msg=f"{way}\n{func}")
