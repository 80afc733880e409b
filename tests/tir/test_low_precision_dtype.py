"""bfloat16 and float16 in the IR: constants round once, folding, printing and parsing.

A bfloat16 constant holds the value rounded once, to nearest even, from the
Python float (``ml_dtypes`` alone would round through float32, twice); folding
computes as a kernel does; the printer writes the shortest decimal that reads
back as the same bfloat16, and the TVMScript parser reads ``T.bfloat16``.
"""

import math
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest

import tir
from tir import script
from tir.low_precision import numpy_dtype, round_array, round_float

#: (significand bits, smallest normal exponent, largest finite) of each type.
FORMATS = {"bfloat16": (8, -126, float(ml_dtypes.finfo(ml_dtypes.bfloat16).max)),
           "float16": (11, -14, 65504.0)}


def _exact_round(value: float, dtype: str) -> float:
    """Round to nearest even with exact rationals: the reference for round_float."""
    bits, emin, largest = FORMATS[dtype]
    x = Fraction(value)
    if x == 0:
        return value
    exp = max(math.frexp(abs(value))[1] - 1, emin)  # 2**exp <= |x|, or the subnormal scale
    ulp = Fraction(2) ** (exp - bits + 1)
    q, r = divmod(abs(x), ulp)
    if r > ulp / 2 or (r == ulp / 2 and q % 2 == 1):
        q += 1
    out = float(q * ulp)
    out = float("inf") if out > largest else out
    return out if x > 0 else -out


TRICKY = [1 + 2 ** -8 + 2 ** -30, 1 + 2 ** -8, 1 + 3 * 2 ** -8, 1 + 2 ** -11 + 2 ** -40, 0.1,
          3.14159, 65519.99, 65520.0, 3.3961e38, 3.4e38, 2.0 ** -133, 1.5 * 2.0 ** -133,
          2.5 * 2.0 ** -133, 2.0 ** -134, 2.0 ** -24 * 1.5, 2.0 ** -25, 1e-45, 259.0, 257.0]


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("value", TRICKY + [-v for v in TRICKY])
def test_round_float_is_one_correct_rounding(dtype, value):
    got = round_float(value, dtype)
    assert got == _exact_round(value, dtype)
    assert tir.FloatImm(dtype, value).value == got
    assert round_array(np.array([value]), dtype)[0] == numpy_dtype(dtype).type(got)


def test_ml_dtypes_alone_would_round_twice():
    """Why tir.low_precision exists: ml_dtypes goes float64 -> float32 -> bfloat16."""
    value = 1 + 2 ** -8 + 2 ** -30
    assert float(ml_dtypes.bfloat16(value)) == 1.0
    assert round_float(value, "bfloat16") == 1 + 2 ** -7


def test_special_values_keep_their_meaning():
    for value in (float("inf"), float("-inf"), -0.0):
        got = tir.const(value, "bfloat16").value
        assert got == value and np.signbit(got) == np.signbit(value)
    assert np.isnan(tir.const(float("nan"), "bfloat16").value)
    assert tir.const(1e39, "bfloat16").value == float("inf")


def test_int_constants_round_once():
    # 2**24 + 2**16 + 1 is just above a bfloat16 tie; through float32 it would land on it
    assert tir.const(2 ** 24 + 2 ** 16 + 1, "int32").astype("bfloat16").value == 2 ** 24 + 2 ** 17
    assert tir.const(259, "bfloat16").value == 260.0 and tir.const(257, "bfloat16").value == 256


def test_folding_computes_in_float32_and_rounds_once():
    one, tiny = tir.const(1.0, "bfloat16"), tir.const(2.0 ** -8, "bfloat16")
    assert (one + tiny).value == 1.0  # a tie: to even
    three = tir.const(3.0, "bfloat16")
    assert tir.floordiv(one, three).value == 0.0
    assert (one / three).value == round_float(1 / 3, "bfloat16")


def test_python_numbers_take_the_bfloat16_type():
    x = tir.Var("x", "bfloat16")
    assert (x + 0.5).dtype == "bfloat16" and (x * 2).dtype == "bfloat16"
    assert (x + tir.Var("y", "float32")).dtype == "float32"
    with pytest.raises(TypeError, match="cannot combine bfloat16 and float16"):
        x + tir.Var("h", "float16")


def _func(dtype):
    A = tir.decl_buffer((16,), dtype, "A")
    ib = tir.ir_builder.create()
    a = ib.buffer_ptr(A)
    with ib.for_range(0, 16, name="i") as i:
        a[i] = a[i] / 3.0 + tir.const(0.1, dtype)
    return tir.PrimFunc([A], ib.get())


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_script_round_trip(dtype):
    func = _func(dtype)
    text = func.script()
    assert f"T.{dtype}(0.1)" in text and " / " in text  # a float division, not truncdiv
    back = script.from_source(text)
    tir.assert_structural_equal(back, func)
    assert back.script() == text


def test_structural_equality_tells_the_float_types_apart():
    assert not tir.structural_equal(_func("bfloat16"), _func("float16"))
    assert tir.structural_equal(_func("bfloat16"), _func("bfloat16"))


def test_parser_reads_bfloat16_vectors_and_constants():
    text = '''
@T.prim_func
def main(A: T.Buffer((8,), "bfloat16")):
    A[T.Ramp(0, 1, 8)] = T.Broadcast(T.bfloat16(1.00390625), 8) + A[T.Ramp(0, 1, 8)]
'''
    func = script.from_source(text)
    store = func.body
    assert store.value.dtype == "bfloat16x8"
    assert store.value.a.value.value == 1.0  # the tie 1 + 2**-8 rounds to even
