"""tir.DataType: parsing, printing, lanes, scalable vectors and invalid strings."""

import pickle

import pytest

import tir
from tir import dtype as dt
from tir.dtype import DataType


@pytest.mark.parametrize(
    "text, code, bits, lanes, scalable",
    [
        ("int8", "int", 8, 1, False),
        ("int64", "int", 64, 1, False),
        ("uint16", "uint", 16, 1, False),
        ("float16", "float", 16, 1, False),
        ("bfloat16", "bfloat", 16, 1, False),
        ("bfloat16x8", "bfloat", 16, 8, False),
        ("bfloat16xvscalex4", "bfloat", 16, 4, True),
        ("float64", "float", 64, 1, False),
        ("bool", "bool", 1, 1, False),
        ("handle", "handle", 64, 1, False),
        ("float32x4", "float", 32, 4, False),
        ("int8x16", "int", 8, 16, False),
        ("boolx8", "bool", 1, 8, False),
        ("float32xvscalex4", "float", 32, 4, True),
        ("int64xvscalex2", "int", 64, 2, True),
    ],
)
def test_parse_and_round_trip(text, code, bits, lanes, scalable):
    t = DataType(text)
    assert (t.type_code, t.bits, t.lanes, t.is_scalable) == (code, bits, lanes, scalable)
    assert str(t) == text
    assert DataType(str(t)) == t


@pytest.mark.parametrize(
    "text, message",
    [
        ("int7", "int does not come in 7 bits"),
        ("float8", "float does not come in 8 bits"),
        ("uint", "uint does not come in 0 bits"),
        ("bool8", "write 'bool'"),
        ("complex64", "unknown type; expected int, uint, float"),
        ("float32x0", "lane count must be a positive integer"),
        ("float32xfour", "lane count must be a positive integer"),
        ("float32xvscalex", "lane count must be a positive integer"),
        ("bfloat32", "bfloat does not come in 32 bits"),
        ("bfloat", "bfloat does not come in 0 bits"),
        ("", "invalid dtype ''"),
    ],
)
def test_invalid_strings(text, message):
    with pytest.raises(ValueError, match=message):
        DataType(text)


@pytest.mark.parametrize("text, canonical", [
    ("uint1", "bool"), ("uint1x4", "boolx4"), ("uint1x16", "boolx16"),
    ("uint1xvscalex4", "boolxvscalex4"),
])
def test_uint1_is_tvms_name_for_bool(text, canonical):
    t = DataType(text)
    assert t.is_bool and t == DataType(canonical) and str(t) == canonical
    assert DataType(str(t)) == t and dt.canonical(text) == canonical
    assert DataType("uint", 1, t.lanes, t.is_scalable) == t
    assert DataType("uint8").is_uint  # only the 1-bit uint is bool


def test_build_from_parts():
    t = DataType("float", 32, 8)
    assert str(t) == "float32x8" and t.is_vector and not t.is_scalar
    assert str(DataType("int", 8, 4, True)) == "int8xvscalex4"


def test_element_of_and_with_lanes():
    t = DataType("float32x4")
    assert t.element_of == "float32" and t.element_of.is_scalar
    assert str(t.with_lanes(8)) == "float32x8"
    assert str(DataType("int8").with_lanes(16)) == "int8x16"
    assert str(t.with_scalable_lanes(4)) == "float32xvscalex4"
    assert str(DataType("float32xvscalex4").element_of) == "float32"
    assert str(DataType("float32xvscalex4").with_lanes(1)) == "float32"
    assert str(DataType("int16").with_bits(32)) == "int32"


def test_kind_predicates():
    assert DataType("int32").is_int and DataType("int32").is_integer
    assert DataType("uint8").is_uint and DataType("uint8").is_integer
    assert not DataType("bool").is_integer and DataType("bool").is_bool
    assert DataType("float16x2").is_float and DataType("handle").is_handle
    assert DataType("float32xvscalex4").is_vector


def test_min_and_max_values():
    assert DataType("int8").min_value() == -128 and DataType("int8").max_value() == 127
    assert DataType("uint16").max_value() == 65535 and DataType("uint16").min_value() == 0
    assert DataType("bool").max_value() == 1
    assert DataType("float32").max_value() == float("inf")


def test_equality_and_hash_with_strings():
    assert DataType("float32x4") == "float32x4"
    assert DataType("float32x4") != "float32x8"
    assert hash(DataType("int32")) == hash(DataType("int32"))
    assert len({DataType("int32"), DataType("int32"), DataType("int64")}) == 2
    assert DataType("int32").__eq__(3) is NotImplemented


def test_immutable_and_picklable():
    t = DataType("float32x4")
    with pytest.raises(AttributeError, match="immutable"):
        t.lanes = 8
    assert pickle.loads(pickle.dumps(t)) == t
    assert repr(t) == "DataType('float32x4')"


def test_string_helpers():
    assert dt.canonical("float32x1") == "float32"
    assert dt.lanes_of("int8x16") == 16 and dt.lanes_of("float32xvscalex4") == 4
    assert dt.element_of("float32x4") == "float32"
    assert dt.with_lanes("float32", 4) == "float32x4"
    assert dt.with_scalable_lanes("int32", 2) == "int32xvscalex2"


def test_expression_dtype_is_a_comparable_str():
    x = tir.var("x", "float32x4")
    assert isinstance(x.dtype, str) and x.dtype == "float32x4"
    assert tir.Var("y", DataType("int64")).dtype == "int64"
    with pytest.raises(ValueError, match="Var: invalid dtype 'int33'"):
        tir.Var("z", "int33")
