"""float16 and bfloat16 end to end: every operation computed in float32 and rounded once.

The meaning (tir.low_precision, codegen/llvm/expr.py): an operation on float16 or
bfloat16 values computes in float32, where they are exact, and rounds the result
once to its type, to nearest even. A cast from float64 or a wide integer rounds
once too. So the LLVM build (vector and scalar), the interpreter and NumPy
computing in float32 and rounding the same way agree bit for bit (any NaN equals
any NaN); the math functions, whose float32 results may differ by an ulp between
libm and NumPy, within one ulp of the type. The vector lanes come from the host
target (``TIRLITE_HOST_TARGET`` changes it).
"""

import math
import re

import ml_dtypes
import numpy as np
import pytest
from strict_builds import llvm_scalar_strict, llvm_strict

import codegen
import tir
from codegen.interp.backend import build_interpreter
from tir import op_fold
from tir.low_precision import numpy_dtype, round_array

DTYPES = ["float16", "bfloat16"]
#: 16-bit lanes filling one vector register of the host target.
LANES = codegen.Target("llvm").vector_width_bits // 16
#: Sizes around the vector length: empty, one lane, a tail, whole vectors, a long tail.
SIZES = [0, 1, LANES - 1, LANES, 2 * LANES + 3, 1003]
NAN, INF = float("nan"), float("inf")


def _edges(dtype: str) -> list[float]:
    """NaN, infinities, signed zeros, subnormals, the largest finite value and ties."""
    info = ml_dtypes.finfo(numpy_dtype(dtype))
    tiny, big, eps = float(info.smallest_subnormal), float(info.max), float(info.eps)
    return [NAN, INF, -INF, 0.0, -0.0, tiny, -tiny, 3 * tiny, float(info.tiny), big, -big,
            1.0, -1.0, 1.0 + eps, 1.0 + 3 * eps, 2.5, -0.375, 3.0, 0.1, 1e4]


def _values(dtype: str, n: int, seed: int = 0) -> np.ndarray:
    """``n`` values of ``dtype``: the edges first, then random ones over a wide range."""
    rng = np.random.default_rng(seed)
    edges = _edges(dtype)
    rand = rng.uniform(-4, 4, n) * 2.0 ** rng.integers(-6, 6, n)
    mixed = np.concatenate([rng.permutation(edges), rand])[:n]
    return round_array(mixed, dtype)


def _bits(x: np.ndarray) -> np.ndarray:
    """The bits of 16-bit floats, every NaN as one pattern."""
    x = np.ascontiguousarray(x)
    return np.where(np.isnan(x.astype(np.float32)), 0x7FFF, x.view(np.uint16))


def assert_same_bits(got, want, what=""):
    """Equal bit for bit, except that any NaN equals any NaN."""
    assert got.dtype == want.dtype, what
    np.testing.assert_array_equal(_bits(got), _bits(want), err_msg=what)


def _ulps(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """Distance in units of the last place, on the monotone integer line of the bits."""
    def line(x):
        b = _bits(x).astype(np.int32)
        return np.where(b & 0x8000, 0x8000 - b, b)
    return np.abs(line(got) - line(want))


def _in_f32(fn):
    """NumPy's reference of a TIR op: the operands in float32, the result rounded once."""
    def apply(dtype, *xs):
        with np.errstate(all="ignore"):
            out = fn(*(x.astype(np.float32) for x in xs))
        return round_array(out, dtype) if out.dtype == np.float32 else out
    return apply


def _ieee_min(a, b):
    out = np.where(a == b, np.where(np.signbit(a), a, b), np.minimum(a, b))
    return np.where(np.isnan(a) | np.isnan(b), np.float32(NAN), out).astype(np.float32)


def _ieee_max(a, b):
    out = np.where(a == b, np.where(np.signbit(a), b, a), np.maximum(a, b))
    return np.where(np.isnan(a) | np.isnan(b), np.float32(NAN), out).astype(np.float32)


# ---------------------------------------------------------------- kernels


def _map(dtype: str, out_dtype: str, arity: int, make):
    """``C[i] = make(A[i], ...)`` over a symbolic n, the loop vectorized."""
    n = tir.size_var("n")
    ins = [tir.decl_buffer((n,), dtype, name=name) for name in "AB"[:arity]]
    out = tir.decl_buffer((n,), out_dtype, name="C")
    ib = tir.ir_builder.create()
    ptrs = [ib.buffer_ptr(b) for b in ins]
    c = ib.buffer_ptr(out)
    with ib.for_range(0, n, name="i", kind="vectorize") as i:
        c[i] = make(*(p[i] for p in ptrs))
    return tir.PrimFunc([*ins, out], ib.get())


_llvm, _llvm_scalar = llvm_strict, llvm_scalar_strict


def _interp_lowered(func):
    return codegen.build(func, target="interp")  # the interpreter on the lowered IR


WAYS = {"llvm": _llvm, "llvm_scalar": _llvm_scalar, "interp": build_interpreter,
        "interp_lowered": _interp_lowered}


def _run(way, func, inputs, n, out_dtype):
    out = np.zeros(n, numpy_dtype(out_dtype))
    WAYS[way](func)(*inputs, out)
    return out


#: name -> (TIR expression, NumPy in float32, arity, result is bool)
BINARY = {
    "add": (lambda a, b: a + b, np.add),
    "sub": (lambda a, b: a - b, np.subtract),
    "mul": (lambda a, b: a * b, np.multiply),
    "div": (lambda a, b: a / b, np.divide),
    "min": (tir.min, _ieee_min),
    "max": (tir.max, _ieee_max),
    "select": (lambda a, b: tir.Select(a < b, b, a), lambda a, b: np.where(a < b, b, a)),
    "mul_add": (lambda a, b: a * b + a, None),  # two roundings, never fused into an FMA
}
UNARY = {
    "neg": (lambda a: -a, np.negative),
    "abs": (tir.abs, np.abs),
    "sqrt": (tir.sqrt, np.sqrt),
    "floor": (tir.floor, np.floor),
    "round": (tir.round, np.rint),
    "twice": (lambda a: a * 2.0 + 0.5, None),
}
COMPARE = {
    "lt": (lambda a, b: a < b, np.less), "le": (lambda a, b: a <= b, np.less_equal),
    "eq": (lambda a, b: tir.EQ(a, b), np.equal), "ne": (lambda a, b: tir.NE(a, b), np.not_equal),
    "gt": (lambda a, b: a > b, np.greater), "ge": (lambda a, b: a >= b, np.greater_equal),
}


def _mul_add(dtype, a, b):
    prod = _in_f32(np.multiply)(dtype, a, b)
    return _in_f32(np.add)(dtype, prod, a)


def _twice(dtype, a):
    return _in_f32(np.add)(dtype, _in_f32(lambda x: x * np.float32(2))(dtype, a),
                           round_array(np.float32(0.5), dtype))


SPECIAL_REFS = {"mul_add": _mul_add, "twice": _twice}


@pytest.mark.parametrize("way", WAYS)
@pytest.mark.parametrize("name", BINARY)
@pytest.mark.parametrize("dtype", DTYPES)
def test_binary_ops_round_once(dtype, name, way):
    make, ref = BINARY[name]
    func = _map(dtype, dtype, 2, make)
    for n in SIZES:
        a, b = _values(dtype, n, seed=1), _values(dtype, n, seed=2)[::-1].copy()
        want = SPECIAL_REFS[name](dtype, a, b) if ref is None else _in_f32(ref)(dtype, a, b)
        assert_same_bits(_run(way, func, (a, b), n, dtype), want, f"{name} n={n}")


@pytest.mark.parametrize("way", WAYS)
@pytest.mark.parametrize("name", UNARY)
@pytest.mark.parametrize("dtype", DTYPES)
def test_unary_ops_round_once(dtype, name, way):
    make, ref = UNARY[name]
    func = _map(dtype, dtype, 1, make)
    for n in SIZES:
        a = _values(dtype, n, seed=3)
        want = SPECIAL_REFS[name](dtype, a) if ref is None else _in_f32(ref)(dtype, a)
        assert_same_bits(_run(way, func, (a,), n, dtype), want, f"{name} n={n}")


@pytest.mark.parametrize("way", WAYS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_comparisons(dtype, way):
    for name, (make, ref) in COMPARE.items():
        func = _map(dtype, "bool", 2, make)
        n = 2 * LANES + 3
        a, b = _values(dtype, n, seed=4), _values(dtype, n, seed=4)[::-1].copy()
        got = _run(way, func, (a, b), n, "bool")
        with np.errstate(all="ignore"):
            want = ref(a.astype(np.float32), b.astype(np.float32))
        np.testing.assert_array_equal(got, want, err_msg=name)


def test_halfway_values_round_to_even():
    """1 + ulp/2 is a tie: even stays 1.0; 1 + 3 ulp/2 goes up to 1 + 2 ulp."""
    for dtype, ulp in (("float16", 2.0 ** -10), ("bfloat16", 2.0 ** -7)):
        a = round_array(np.array([1.0, 1.0 + ulp, 1.0, -1.0]), dtype)
        b = round_array(np.array([ulp / 2, ulp / 2, 0.0, -ulp / 2]), dtype)
        c = _run("llvm", _map(dtype, dtype, 2, lambda x, y: x + y), (a, b), 4, dtype)
        np.testing.assert_array_equal(c.astype(np.float64),
                                      [1.0, 1.0 + 2 * ulp, 1.0, -1.0])


@pytest.mark.parametrize("dtype", DTYPES)
def test_overflow_to_inf_and_underflow_to_subnormal(dtype):
    info = ml_dtypes.finfo(numpy_dtype(dtype))
    big, tiny = float(info.max), float(info.smallest_subnormal)
    a = round_array(np.array([big, -big, tiny, -tiny, 3 * tiny]), dtype)
    b = round_array(np.array([2.0, 2.0, 0.5, 0.5, 0.5]), dtype)
    got = _run("llvm", _map(dtype, dtype, 2, lambda x, y: x * y), (a, b), 5, dtype)
    # 1.5 tiny is a tie between tiny and 2 tiny: even is 2 tiny
    want = [INF, -INF, 0.0, -0.0, 2 * tiny]
    np.testing.assert_array_equal(got.astype(np.float64), want)
    assert np.signbit(got[3].astype(np.float32))


# ---------------------------------------------------------------- math functions


def _sigmoid(x):
    e = np.exp(-np.abs(x))  # never overflows: sigmoid(-90) is a subnormal, not 0
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e)).astype(x.dtype)


MATH = {
    "exp": (tir.exp, np.exp), "log": (tir.log, np.log), "tanh": (tir.tanh, np.tanh),
    "sin": (tir.sin, np.sin), "cos": (tir.cos, np.cos), "exp2": (tir.exp2, np.exp2),
    "log2": (tir.log2, np.log2), "sigmoid": (tir.sigmoid, lambda x: _sigmoid(x)),
    "erf": (tir.erf, np.vectorize(math.erf, otypes=[np.float64])),
    "log1p": (tir.log1p, np.log1p),
}


@pytest.mark.parametrize("way", ["llvm", "interp"])
@pytest.mark.parametrize("name", MATH)
@pytest.mark.parametrize("dtype", DTYPES)
def test_math_functions_within_one_ulp(dtype, name, way):
    make, ref = MATH[name]
    n = 4 * LANES + 5
    a = _values(dtype, n, seed=5)
    got = _run(way, _map(dtype, dtype, 1, make), (a,), n, dtype)
    with np.errstate(all="ignore"):
        # in float32, as the kernel computes (exp(90) overflows there)
        want = round_array(np.asarray(ref(a.astype(np.float32)), np.float32), dtype)
    finite = np.isfinite(want.astype(np.float32))
    assert (_ulps(got, want)[finite] <= 1).all(), (a[finite], got[finite], want[finite])
    assert_same_bits(got[~finite], want[~finite], name)  # NaN, inf: exactly


# ---------------------------------------------------------------- casts


SOURCES = ["float64", "float32", "float16", "bfloat16", "int8", "int16", "int32", "int64",
           "uint8", "uint16", "uint32", "uint64", "bool"]


def _source_values(src: str, n: int) -> np.ndarray:
    rng = np.random.default_rng(7)
    if src == "bool":
        return rng.random(n) < 0.5
    if src in ("float16", "bfloat16"):
        return _values(src, n, seed=8)
    if src.startswith("float"):  # ties of bfloat16 and float16 just off by a little
        ties = [1 + 2 ** -8 + 2 ** -30, 1 + 2 ** -11 + 2 ** -40, 65520.0, 3.4e38, 1e-45]
        vals = np.concatenate([ties, [-t for t in ties], _edges("bfloat16"),
                               rng.normal(0, 1e3, n)])
        return vals[:n].astype(src)
    info = np.iinfo(src)
    ties = [info.max, info.min, 2 ** 24 + 2 ** 16 + 1, 257, 259, 2049, 2051]
    vals = np.array([t for t in ties if info.min <= t <= info.max], dtype=src)
    rand = rng.integers(info.min, info.max, n, dtype=src, endpoint=True)
    return np.concatenate([vals, rand])[:n]


def _cast_reference(values: np.ndarray, dst: str) -> np.ndarray:
    """One rounding from the exact source value; ints through op_fold's integer rounding."""
    if values.dtype.kind in "iu":
        t = tir.DataType(dst)
        exact = [op_fold.to_float(int(v), t) for v in values]
        return round_array(np.array(exact, np.float64), dst)
    if values.dtype == bool:
        return round_array(values.astype(np.float64), dst)
    wide = values.astype(np.float64) if values.dtype != np.float64 else values
    return round_array(wide, dst)


@pytest.mark.parametrize("way", ["llvm", "llvm_scalar", "interp"])
@pytest.mark.parametrize("dtype, src", [(d, s) for d in DTYPES for s in SOURCES if s != d])
def test_casts_to_low_precision_round_once(dtype, src, way):
    n = 3 * LANES + 1
    x = _source_values(src, n)
    got = _run(way, _map(src, dtype, 1, lambda a: a.astype(dtype)), (x,), n, dtype)
    assert_same_bits(got, _cast_reference(x, dtype), f"{src} -> {dtype}")


@pytest.mark.parametrize("way", ["llvm", "llvm_scalar", "interp"])
@pytest.mark.parametrize("dtype, dst", [(d, s) for d in DTYPES for s in SOURCES if s != d])
def test_casts_from_low_precision(dtype, dst, way):
    n = 3 * LANES + 1
    x = _values(dtype, n, seed=9)
    wide = x.astype(np.float32)
    if tir.DataType(dst).is_integer:  # out of range is undefined: in range, truncated
        lo, hi = (0, 200) if dst.startswith("u") else (-100, 100)
        wide = np.clip(np.nan_to_num(wide), lo, hi)
        x = round_array(wide, dtype)
        wide = x.astype(np.float32)
    got = _run(way, _map(dtype, dst, 1, lambda a: a.astype(dst)), (x,), n, dst)
    if dst == "bool":
        np.testing.assert_array_equal(got, wide != 0)
    elif tir.DataType(dst).is_integer:
        np.testing.assert_array_equal(got, np.trunc(wide).astype(dst))
    elif got.itemsize == 2:
        assert_same_bits(got, _cast_reference(wide, dst))
    else:  # float32/float64 hold every value exactly
        np.testing.assert_array_equal(got, wide.astype(dst))
        np.testing.assert_array_equal(np.signbit(got), np.signbit(wide))


# ---------------------------------------------------------------- reductions


def _sum(dtype: str, acc_dtype: str, kind: str):
    """S[0] = sum(A) in an accumulator of ``acc_dtype``, cast by the user where it differs."""
    n = tir.size_var("n")
    A, S = tir.decl_buffer((n,), dtype, "A"), tir.decl_buffer((1,), dtype, "S")
    ib = tir.ir_builder.create()
    a, s = ib.buffer_ptr(A), ib.buffer_ptr(S)
    acc = ib.allocate(acc_dtype, (1,), name="acc")
    acc[0] = tir.const(0.0, acc_dtype)
    with ib.for_range(0, n, name="i", kind=kind) as i:
        acc[0] = acc[0] + a[i].astype(acc_dtype)
    s[0] = acc[0].astype(dtype)
    return tir.PrimFunc([A, S], ib.get())


def _sequential_sum(values: np.ndarray, acc_dtype: str, dtype: str) -> np.ndarray:
    acc = numpy_dtype(acc_dtype).type(0)
    for v in values.astype(np.float32):  # each step in float32, rounded to the accumulator
        with np.errstate(invalid="ignore"):
            acc = round_array(np.float32(acc) + v, acc_dtype)
    return round_array(np.float32(acc), dtype).reshape(1)


@pytest.mark.parametrize("kind", ["serial", "vectorize"])
@pytest.mark.parametrize("acc_dtype", ["float32", "same"])
@pytest.mark.parametrize("way", WAYS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_sums(dtype, way, acc_dtype, kind):
    acc_dtype = dtype if acc_dtype == "same" else acc_dtype
    func = _sum(dtype, acc_dtype, kind)
    for n in (0, 1, LANES + 3, 300):
        a = _values(dtype, n + 20, seed=11)[20:]  # finite values; -0.0 sums tested below
        got = np.zeros(1, numpy_dtype(dtype))
        WAYS[way](func)(a, got)
        # A vectorized float32 sum may reassociate (VectorizeReductions): then within a
        # float32 rounding of each partial sum, which rounding to the type hides mostly.
        want = _sequential_sum(a, acc_dtype, dtype)
        if kind == "vectorize" and acc_dtype == "float32":
            assert _ulps(got, want)[0] <= 1, (n, got, want)
        else:
            assert_same_bits(got, want, f"n={n}")


@pytest.mark.parametrize("dtype", DTYPES)
def test_bfloat16_sum_special_values(dtype):
    func = _sum(dtype, dtype, "serial")
    for vals, want in (([-0.0, -0.0], -0.0), ([1.0, INF], INF), ([INF, -INF], NAN),
                       ([NAN, 1.0], NAN)):
        got = np.zeros(1, numpy_dtype(dtype))
        _llvm(func)(round_array(np.array(vals), dtype), got)
        # acc starts at +0.0: +0.0 + -0.0 is +0.0, as NumPy computes it
        want_arr = _sequential_sum(round_array(np.array(vals), dtype), dtype, dtype)
        assert_same_bits(got, want_arr, str(vals))
        assert np.isnan(want) == np.isnan(got[0].astype(np.float32))


def test_bfloat16_vector_sum_intrinsic_is_refused():
    """A bfloat16 vector_reduce_add would have to round after every lane: a clear error."""
    A = tir.decl_buffer((8,), "bfloat16", "A")
    S = tir.decl_buffer((1,), "bfloat16", "S")
    ib = tir.ir_builder.create()
    s = ib.buffer_ptr(S)
    vec = tir.BufferLoad(A, [tir.Ramp(0, 1, 8)])
    s[0] = tir.Call("bfloat16", "tir.vector_reduce_add", [vec])
    func = tir.PrimFunc([A, S], ib.get())
    with pytest.raises(ValueError, match="vector_reduce_add on bfloat16x8 is not supported"):
        codegen.build(func, target="llvm")


# ---------------------------------------------------------------- arguments


@pytest.mark.parametrize("dtype", DTYPES)
def test_scalar_params_round_once(dtype):
    n = tir.size_var("n")
    A, C = tir.decl_buffer((n,), dtype, "A"), tir.decl_buffer((n,), dtype, "C")
    x = tir.Var("x", dtype)
    ib = tir.ir_builder.create()
    a, c = ib.buffer_ptr(A), ib.buffer_ptr(C)
    with ib.for_range(0, n, name="i", kind="vectorize") as i:
        c[i] = a[i] * x
    func = tir.PrimFunc([A, x, C], ib.get())
    a = _values(dtype, 2 * LANES + 1, seed=12)
    scalar = 1 + 2 ** -8 + 2 ** -30  # a bfloat16 tie and a bit: rounds up, once
    want = _in_f32(np.multiply)(dtype, a, round_array(np.array([scalar]), dtype))
    for way in WAYS:
        got = np.zeros_like(a)
        WAYS[way](func)(a, scalar, got)
        assert_same_bits(got, want, way)
    with pytest.raises(ValueError, match="out of range for"):
        _llvm(func)(a, 1e300, np.zeros_like(a))


def test_buffer_takes_only_ml_dtypes_bfloat16():
    func = _map("bfloat16", "bfloat16", 1, lambda v: v)
    mod = _llvm(func)
    ok = np.zeros(4, ml_dtypes.bfloat16)
    mod(ok, ok.copy())
    for wrong in (np.zeros(4, np.uint16), np.zeros(4, np.float16), np.zeros(4, np.float32)):
        with pytest.raises(TypeError, match=r"'A' expects a bfloat16 \(ml_dtypes.bfloat16\) "
                                            rf"array of shape \(n,\), got {wrong.dtype}"):
            mod(wrong, ok)
    with pytest.raises(TypeError, match=r"'A' expects a float16 array .* got bfloat16"):
        _llvm(_map("float16", "float16", 1, lambda v: v))(ok, np.zeros(4, np.float16))


class _BFloat16Tensor:
    """An object whose DLPack export NumPy cannot read, as a bfloat16 torch tensor."""

    def __dlpack_device__(self):
        return (1, 0)

    def __dlpack__(self, **kwargs):
        raise BufferError("unsupported dtype: DLPack type code 4 (bfloat), 16 bits")


def test_dlpack_bfloat16_says_what_to_pass_instead():
    mod = _llvm(_map("bfloat16", "bfloat16", 1, lambda v: v))
    with pytest.raises(TypeError, match="ml_dtypes.bfloat16"):
        mod(_BFloat16Tensor(), np.zeros(4, ml_dtypes.bfloat16))


# ---------------------------------------------------------------- the code


def test_bfloat16_reaches_llvm_as_bits_only():
    """No LLVM `bfloat` value, so no vcvtneps2bf16 (it flushes subnormals to zero) and no
    call of libgcc's __truncsfbf2 (AVX2): the conversions are integer arithmetic."""
    mod = _llvm(_map("bfloat16", "bfloat16", 2, lambda a, b: tir.min(a * b, a)))
    asm = mod.get_source("asm")
    assert re.search(r"\bbfloat\b", mod.get_source("ll")) is None
    assert "vcvtneps2bf16" not in asm and "truncsfbf2" not in asm
