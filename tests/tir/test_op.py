"""tir.op: operator promotion, logical/bitwise operators, constants, folding and helpers."""

from fractions import Fraction

import numpy as np
import pytest

import tir

x = tir.var("x")
y = tir.var("y")
f = tir.var("f", "float32")
d64 = tir.var("d64", "float64")
i64 = tir.var("i64", "int64")
i8 = tir.var("i8", "int8")
u32 = tir.var("u32", "uint32")
v4 = tir.var("v4", "float32x4")
iv4 = tir.var("iv4", "int32x4")
c = tir.var("c", "bool")
d = tir.var("d", "bool")
h = tir.Var("h", "handle")


# ---------------------------------------------------------------- promotion table


@pytest.mark.parametrize(
    "make, dtype, cast_side",
    [
        (lambda: x + f, "float32", "a"),  # int with float: the int side is cast
        (lambda: f * x, "float32", "b"),
        (lambda: x + i64, "int64", "a"),  # narrower int widens
        (lambda: i64 - x, "int64", "b"),
        (lambda: i8 + x, "int32", "a"),
        (lambda: u32 + x, "int32", "a"),  # signed meets unsigned: signed of the wider width
        (lambda: f + d64, "float64", "a"),
        (lambda: c + x, "int32", "a"),
    ],
)
def test_promotion_casts_one_side(make, dtype, cast_side):
    e = make()
    assert e.dtype == dtype
    cast = getattr(e, cast_side)
    assert isinstance(cast, tir.Cast) and cast.dtype == dtype
    other = e.b if cast_side == "a" else e.a
    assert isinstance(other, tir.Var)


def test_python_numbers_take_the_other_dtype():
    e = i8 + 1
    assert isinstance(e.b, tir.IntImm) and e.b.dtype == "int8"
    e = 2 * d64
    assert isinstance(e.a, tir.FloatImm) and e.a.dtype == "float64"
    e = f + 1
    assert e.b.dtype == "float32" and e.b.value == 1.0
    e = x + 1.5  # a float number does not become an int: the int side is cast
    assert e.dtype == "float32" and isinstance(e.a, tir.Cast)
    e = x < np.int64(3)
    assert e.b.dtype == "int32" and e.b.value == 3


def test_scalar_with_vector_broadcasts():
    e = v4 + f
    assert e.dtype == "float32x4" and isinstance(e.b, tir.Broadcast) and e.b.value is f
    e = 1.0 + v4
    assert isinstance(e.a, tir.Broadcast) and e.a.lanes == 4
    e = v4 * x
    assert isinstance(e.b, tir.Broadcast) and isinstance(e.b.value, tir.Cast)
    s = tir.var("s", "float32xvscalex4")
    e = s + f
    assert e.dtype == "float32xvscalex4" and isinstance(e.b, tir.Broadcast)


def test_vector_with_vector_of_other_element_type_casts():
    e = iv4 + v4
    assert e.dtype == "float32x4" and isinstance(e.a, tir.Cast)


def test_vectors_of_different_lanes_raise():
    with pytest.raises(TypeError, match="Add: cannot combine vectors of different lanes: "
                                        "float32x4 and float32x8"):
        v4 + tir.var("w", "float32x8")
    with pytest.raises(TypeError, match="float32x4 and float32xvscalex4"):
        v4 * tir.var("s", "float32xvscalex4")


def test_handle_arithmetic_raises():
    with pytest.raises(TypeError, match=r"Add: cannot use a handle in arithmetic \(handle and "
                                        r"int32\)"):
        h + 1
    with pytest.raises(TypeError, match="Mul: cannot use a handle in arithmetic"):
        x * h


def test_non_number_operand_raises():
    with pytest.raises(TypeError, match="cannot use str 'a' in a TIR expression"):
        x + "a"
    with pytest.raises(TypeError, match="cannot use list"):
        x * [1]


# ---------------------------------------------------------------- operators


@pytest.mark.parametrize(
    "make, cls",
    [
        (lambda: x - y, tir.Sub),
        (lambda: x * y, tir.Mul),
        (lambda: x // y, tir.FloorDiv),
        (lambda: x % y, tir.FloorMod),
        (lambda: f / f, tir.Div),
        (lambda: x < y, tir.LT),
        (lambda: x <= y, tir.LE),
        (lambda: x > y, tir.GT),
        (lambda: x >= y, tir.GE),
        (lambda: x == y, tir.EQ),
        (lambda: x != y, tir.NE),
    ],
)
def test_operators_build_nodes(make, cls):
    e = make()
    assert type(e) is cls and (e.a is x or e.a is f)


def test_reflected_operators():
    assert isinstance(3 - x, tir.Sub) and (3 - x).a.value == 3 and (3 - x).b is x
    assert isinstance(10 // x, tir.FloorDiv) and isinstance(10 % x, tir.FloorMod)
    assert isinstance(2.0 / f, tir.Div)


def test_integer_true_division_raises_with_hint():
    with pytest.raises(TypeError, match=r"'/' on integers \(int32\) is ambiguous: use "
                                        "tir.floordiv"):
        x / 2


def test_negation():
    e = -x
    assert isinstance(e, tir.Mul) and e.a is x and e.b.value == -1
    assert (-tir.const(3)).value == -3
    assert (-tir.const(2.5)).value == -2.5
    neg_u = -u32  # -1 is no uint32: unsigned negation is 0 - u, wrapping
    assert isinstance(neg_u, tir.Sub) and neg_u.a.value == 0 and neg_u.b is u32
    assert (-tir.const(3, "uint8")).value == 253


def test_number_that_does_not_fit_the_other_dtype_raises():
    with pytest.raises(ValueError, match=r"value 300 does not fit in int8"):
        i8 + 300
    with pytest.raises(ValueError, match="value -1 does not fit in uint32"):
        u32 * -1


def test_bool_operators_are_logical():
    e = c & d
    assert isinstance(e, tir.And) and e.a is c and e.b is d
    assert isinstance(c | d, tir.Or)
    n = ~c
    assert isinstance(n, tir.Not) and n.a is c
    assert (c & True) is c and (c & False).value == 0
    assert (True | c).value == 1 and (False | c) is c
    assert (~tir.const(True)).value == 0


def test_int_operators_are_bitwise_calls():
    for e, op in ((x & y, "tir.bitwise_and"), (x | y, "tir.bitwise_or"),
                  (x ^ y, "tir.bitwise_xor"), (~x, "tir.bitwise_not"),
                  (x << y, "tir.shift_left"), (x >> y, "tir.shift_right")):
        assert isinstance(e, tir.Call) and e.op == op and e.dtype == "int32"
    assert (tir.const(6) & 3).value == 2 and (~tir.const(0)).value == -1
    with pytest.raises(TypeError, match="tir.bitwise_and needs integer operands, got float32"):
        f & f


def test_eq_truth_value_is_identity():
    assert bool(x == x) and not bool(x == y)  # noqa: PLR0124
    assert bool(x != y) and not bool(x != x)  # noqa: PLR0124
    assert (x == 1).b.value == 1  # the == operator does not fold
    assert isinstance(tir.const(1) == x, tir.EQ)
    # an IntImm's == folds against a constant, as TVM's IntImm.__eq__ does
    assert (tir.const(1) == tir.const(1)).dtype == "bool" and bool(tir.const(1) == 1)


def test_bool_of_other_expressions_raises_with_hint():
    for e in (x < y, x + 1, c & d):
        with pytest.raises(TypeError, match="use tir.all / tir.any"):
            bool(e)


def test_comparison_with_unrelated_object_is_not_an_expr():
    assert (x == "a") is False
    assert (x != None) is True  # noqa: E711 (the operator itself is under test)


# ---------------------------------------------------------------- constants


def test_const_defaults():
    assert tir.const(3).dtype == "int32" and tir.const(3).value == 3
    assert tir.const(2.5).dtype == "float32"
    t = tir.const(True)
    assert t.dtype == "bool" and t.value == 1 and isinstance(t, tir.IntImm)
    assert tir.const(3, "int64").dtype == "int64"
    assert tir.const(3, "float64").value == 3.0
    assert tir.const(np.float64(1.5)).dtype == "float64"
    assert tir.const(np.int8(4)).dtype == "int8"


def test_const_vector_dtype_gives_broadcast():
    b = tir.const(1.0, "float32x4")
    assert isinstance(b, tir.Broadcast) and b.lanes == 4 and b.value.value == 1.0
    s = tir.const(2, "int32xvscalex4")
    assert isinstance(s, tir.Broadcast) and s.dtype == "int32xvscalex4"


def test_const_errors():
    with pytest.raises(TypeError, match=r"const: 1.5 is not an integer, cannot make int32"):
        tir.const(1.5, "int32")
    with pytest.raises(TypeError, match="const: cannot make a constant of str"):
        tir.const("a")
    with pytest.raises(TypeError, match="cannot make a constant of dtype handle"):
        tir.const(0, "handle")


def test_min_and_max_value():
    assert tir.max_value("int8").value == 127 and tir.min_value("uint8").value == 0
    assert tir.max_value("float32").value == float("inf")


# ---------------------------------------------------------------- folding


@pytest.mark.parametrize(
    "make, expected",
    [
        (lambda: tir.const(2) * 3, 6),
        (lambda: tir.const(2) + 3, 5),
        (lambda: tir.const(2) - 5, -3),
        (lambda: tir.const(7) // 2, 3),
        (lambda: tir.const(-7) // 2, -4),
        (lambda: tir.const(-7) % 2, 1),
        (lambda: tir.truncdiv(-7, 2), -3),
        (lambda: tir.truncmod(-7, 2), -1),
        (lambda: tir.const(127, "int8") + 1, -128),  # wraps like the machine
        (lambda: tir.const(1.5) * 2, 3.0),
        (lambda: tir.const(3) < 4, 1),
        (lambda: tir.min(3, 4), 3),
        (lambda: tir.max(3, 4), 4),
        (lambda: tir.const(3.7).astype("int32"), 3),
        (lambda: tir.const(300).astype("uint8"), 44),
    ],
)
def test_constant_folding(make, expected):
    e = make()
    assert isinstance(e, (tir.IntImm, tir.FloatImm)) and e.value == expected


def test_identities():
    assert (x + 0) is x and (0 + x) is x and (x - 0) is x
    assert (x * 1) is x and (1 * x) is x
    assert (x * 0).value == 0
    assert (x // 1) is x and (x % 1).value == 0
    assert tir.truncdiv(x, 1) is x
    assert tir.min(x, x) is x and tir.max(x, x) is x
    assert isinstance(f + 0.0, tir.Add)  # float x + 0.0 is kept (-0.0 + 0.0 is 0.0)


def test_constant_zero_division_raises():
    with pytest.raises(ZeroDivisionError, match="floordiv: division by the constant zero"):
        x // 0
    with pytest.raises(ZeroDivisionError, match="truncmod"):
        tir.truncmod(x, 0)


# ---------------------------------------------------------------- folding at the edges


def _wrap(v, dtype):
    t = tir.DataType(dtype)
    v &= (1 << t.bits) - 1
    return v - (1 << t.bits) if t.is_int and v >= 1 << (t.bits - 1) else v


@pytest.mark.parametrize(
    "dtype, a, b",
    [
        ("int32", -2**31, 2), ("int32", -2**31, -3), ("int32", -2**31, -1), ("int32", 7, -2),
        ("int32", -7, -2), ("int32", 2**31 - 1, -2**31), ("uint32", 3_000_000_000, 5),
        ("uint32", 2**32 - 1, 2**31), ("int64", 2**40, 3), ("int64", -2**63, 7),
        ("uint64", 2**64 - 1, 10), ("int8", -128, -3), ("int8", -128, -1),
    ],
)
def test_truncdiv_truncmod_fold_like_c_over_the_whole_range(dtype, a, b):
    q = tir.truncdiv(tir.const(a, dtype), tir.const(b, dtype))
    r = tir.truncmod(tir.const(a, dtype), tir.const(b, dtype))
    want_q = int(Fraction(a, b))  # int() of a Fraction rounds towards zero, as C does
    assert q.dtype == r.dtype == dtype
    assert (q.value, r.value) == (_wrap(want_q, dtype), _wrap(a - want_q * b, dtype))


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_float_floordiv_folds_in_the_operands_precision(dtype):
    ftype = getattr(np, dtype)
    rng = np.random.default_rng(8)
    pairs = [(1.0, 0.1), (-1.0, 0.1), (0.3, 0.1), (7.0, 0.7)]
    pairs += [tuple(v) for v in rng.uniform(-100, 100, size=(200, 2))]
    for a, b in pairs:
        a, b = ftype(a), ftype(b)
        got = tir.floordiv(tir.const(float(a), dtype), tir.const(float(b), dtype))
        assert isinstance(got, tir.FloatImm) and got.dtype == dtype
        assert got.value == float(np.floor(a / b)), (a, b)  # what the kernel computes
    one_tenth = tir.floordiv(tir.const(1.0, "float32"), tir.const(0.1, "float32"))
    assert one_tenth.value == 10.0  # floor(1f / 0.1f) = floor(10.0f), not float64's 9.99...


@pytest.mark.parametrize(
    "a, b, want",
    [(float("nan"), 2.0, "nan"), (float("inf"), 2.0, "inf"), (-float("inf"), 2.0, "-inf"),
     (3.0e38, 1.0e-3, "inf"), (1.0, float("inf"), "0.0"), (-1.0, float("inf"), "-0.0"),
     (-0.0, 2.0, "-0.0")],
)
def test_float_floordiv_folds_nan_inf_and_signed_zero_without_raising(a, b, want):
    got = tir.floordiv(tir.const(a, "float32"), tir.const(b, "float32"))
    assert isinstance(got, tir.FloatImm) and repr(got.value) == want


def test_float_floordiv_and_floormod_by_zero_are_left_to_the_machine():
    one, zero = tir.const(1.0, "float32"), tir.const(0.0, "float32")
    assert isinstance(tir.floordiv(one, zero), tir.FloorDiv)
    assert isinstance(tir.floormod(one, tir.const(0.1, "float32")), tir.FloorMod)


@pytest.mark.parametrize(
    "value, src, dst",
    [
        (2**60 + 2**36 + 1, "int64", "float32"),    # above a float32 tie that float64 rounds onto
        (-(2**60 + 2**36 + 1), "int64", "float32"),
        (2**53 + 1, "int64", "float64"),
        (2**63 + 2**39 + 1, "uint64", "float32"),
        (2**24 + 1, "int32", "float32"),
        (2**24 + 3, "uint32", "float32"),
        (2049, "int32", "float16"), (2051, "int16", "float16"), (65519, "int32", "float16"),
        (65520, "int32", "float16"),                 # rounds to infinity
    ],
)
def test_int_to_float_constant_casts_round_once(value, src, dst):
    with np.errstate(over="ignore"):
        want = getattr(np, dst)(getattr(np, src)(value))  # NumPy converts an integer directly
        assert tir.const(value, src).astype(dst).value == float(want)
        assert tir.const(value, dst).value == float(want)


def test_random_int64_to_float32_casts_match_the_machine():
    rng = np.random.default_rng(4)
    for v in rng.integers(-2**63, 2**63 - 1, size=300, dtype=np.int64):
        bits = int(rng.integers(1, 63))
        v = int(v) >> bits << bits | 1  # many low zero bits, then one: near a tie
        assert tir.const(v, "int64").astype("float32").value == float(np.float32(np.int64(v)))


def test_float_to_narrower_float_constant_casts_round_once():
    v = 1 + 2**-11 + 2**-30  # above a float16 tie; float32 would round it onto the tie
    assert tir.const(v, "float64").astype("float16").value == float(np.float16(1 + 2**-10))


# ---------------------------------------------------------------- helpers


def test_division_helpers_build_nodes():
    assert isinstance(tir.floordiv(x, y), tir.FloorDiv)
    assert isinstance(tir.floormod(x, y), tir.FloorMod)
    assert isinstance(tir.truncdiv(x, y), tir.Div)
    assert isinstance(tir.truncmod(x, y), tir.Mod)
    assert tir.floordiv(x, i64).dtype == "int64"


def test_min_max_helpers():
    e = tir.min(x, 3)
    assert isinstance(e, tir.Min) and e.b.value == 3
    assert isinstance(tir.max(f, x), tir.Max) and tir.max(f, x).dtype == "float32"


def test_if_then_else():
    e = tir.if_then_else(c, x, 1)
    assert e.op == "tir.if_then_else" and e.args[0] is c and e.args[2].value == 1
    assert e.dtype == "int32"
    assert tir.if_then_else(True, x, 1) is x
    assert tir.if_then_else(x < 3, f, 1).dtype == "float32"
    with pytest.raises(TypeError, match="if_then_else: operands must be bool, got int32"):
        tir.if_then_else(x, 1, 2)


def test_reinterpret():
    e = tir.reinterpret("int32", f)
    assert e.op == "tir.reinterpret" and e.dtype == "int32" and e.args[0] is f
    assert tir.reinterpret("float32", f) is f
    assert tir.reinterpret("int64", tir.var("v", "int32x2")).dtype == "int64"
    with pytest.raises(TypeError, match="reinterpret: float32 and int64 differ in width"):
        tir.reinterpret("int64", f)


def test_call_intrin_and_extern():
    e = tir.call_intrin("float32", "tir.exp", f)
    assert e.op == "tir.exp" and e.args == (f,)
    e = tir.call_extern("int32", "puts", 1)
    assert e.op == "tir.call_extern" and e.args[0].value == "puts" and e.args[1].value == 1
    assert tir.call_pure_extern("float32", "sinf", f).op == "tir.call_pure_extern"


@pytest.mark.parametrize("fn, op", [(tir.exp, "tir.exp"), (tir.log, "tir.log"),
                                    (tir.sqrt, "tir.sqrt"), (tir.tanh, "tir.tanh")])
def test_float_math(fn, op):
    e = fn(v4)
    assert e.op == op and e.dtype == "float32x4" and e.args[0] is v4
    with pytest.raises(TypeError, match=f"{op} needs a float argument, got int32"):
        fn(x)


def test_abs():
    e = tir.abs(f)
    assert e.op == "tir.fabs" and e.dtype == "float32"
    s = tir.abs(x)
    assert isinstance(s, tir.Select) and isinstance(s.condition, tir.GE)
    assert tir.abs(u32) is u32
    assert tir.abs(tir.const(-3)).value == 3


def test_fma():
    e = tir.fma(f, f, 1.0)
    assert e.op == "tir.fma" and e.dtype == "float32" and e.args[2].value == 1.0
    assert tir.fma(v4, f, f).dtype == "float32x4"


def test_likely_vscale_all_any():
    cond = x < y
    e = tir.likely(cond)
    assert e.op == "tir.likely" and e.args[0] is cond and e.dtype == "bool"
    assert tir.likely(True).value == 1
    vs = tir.vscale()
    assert vs.op == "tir.vscale" and vs.dtype == "int32" and vs.args == ()
    a = tir.all(c, d, x < y)
    assert isinstance(a, tir.And) and isinstance(a.a, tir.And)
    assert isinstance(tir.any(c, d), tir.Or)
    assert tir.all([c]) is c and tir.any(c) is c
    assert tir.all(c, True) is c and tir.any(c, True).value == 1
    with pytest.raises(ValueError, match="tir.all needs at least one condition"):
        tir.all()
    with pytest.raises(TypeError, match="tir.any: operands must be bool, got int32"):
        tir.any(x)


def test_cast_helper():
    assert tir.cast("float32", x).dtype == "float32"
    b = tir.cast("float32x4", f)
    assert isinstance(b, tir.Broadcast) and b.value is f
    assert tir.cast("int32", x) is x


@pytest.mark.parametrize("make", [tir.cast, tir.Cast], ids=["cast", "Cast"])
def test_cast_in_numpys_argument_order_names_the_fix(make):
    x = tir.var("x")
    fix = r"takes \(dtype, value\).*write tir\.[cC]ast\('int32', x\)"
    with pytest.raises(TypeError, match=fix):
        make(x, "int32")
    with pytest.raises(TypeError, match="or x.astype"):
        make(3, "float32")
    assert make("int64", x).dtype == "int64"
