"""Expression node constructors: fields, dtype derivation, checks and number conversion."""

import pytest

import tir

x = tir.var("x")
y = tir.var("y")
f = tir.var("f", "float32")
c = tir.var("c", "bool")
v4 = tir.var("v4", "float32x4")


# ---------------------------------------------------------------- leaves


def test_var_fields_and_defaults():
    v = tir.Var("n")
    assert v.name == "n" and v.dtype == "int32" and v.type_annotation is None
    h = tir.Var("p", "handle", type_annotation="float32")
    assert h.dtype == "handle" and h.type_annotation == "float32"
    assert tir.var("k", "int64").dtype == "int64"
    assert tir.Var("a") is not tir.Var("a")


def test_var_rejects_bad_name():
    with pytest.raises(TypeError, match="Var: name must be a str, got int"):
        tir.Var(3)


def test_size_var_is_a_var():
    s = tir.size_var("m")
    assert isinstance(s, tir.SizeVar) and isinstance(s, tir.Var)
    assert s.name == "m" and s.dtype == "int32"


def test_int_imm():
    i = tir.IntImm("int64", 7)
    assert i.value == 7 and i.dtype == "int64" and int(i) == 7
    assert [10, 20, 30][tir.IntImm("int32", 1)] == 20  # __index__
    assert tir.IntImm("int32", 3.0).value == 3
    assert tir.IntImm("bool", 1).dtype == "bool"


@pytest.mark.parametrize(
    "args, error, message",
    [
        (("int8", 300), ValueError, r"IntImm: value 300 does not fit in int8 \[-128, 127\]"),
        (("uint8", -1), ValueError, "does not fit in uint8"),
        (("float32", 1), TypeError, "IntImm: dtype must be a scalar integer or bool, got float32"),
        (("int32x4", 1), TypeError, "got int32x4"),
        (("int32", 1.5), TypeError, "IntImm: value must be an integer, got 1.5"),
        (("int32", "1"), TypeError, "value must be an integer"),
        (("int31", 1), ValueError, "IntImm: invalid dtype 'int31'"),
    ],
)
def test_int_imm_errors(args, error, message):
    with pytest.raises(error, match=message):
        tir.IntImm(*args)


def test_float_imm_rounds_to_its_width():
    assert tir.FloatImm("float64", 0.1).value == 0.1
    assert tir.FloatImm("float32", 0.1).value != 0.1
    assert tir.FloatImm("float32", 0.1).value == pytest.approx(0.1, rel=1e-7)
    assert tir.FloatImm("float16", 65504.0).value == 65504.0
    assert float(tir.FloatImm("float32", 2)) == 2.0


def test_float_imm_errors():
    with pytest.raises(TypeError, match="FloatImm: dtype must be a scalar float, got int32"):
        tir.FloatImm("int32", 1.0)
    with pytest.raises(TypeError, match="FloatImm: value must be a number"):
        tir.FloatImm("float32", "1.0")


def test_string_imm():
    s = tir.StringImm("hello")
    assert s.value == "hello" and s.dtype == "handle"
    with pytest.raises(TypeError, match="StringImm: value must be a str, got int"):
        tir.StringImm(3)


# ---------------------------------------------------------------- binary nodes

ARITH = [tir.Add, tir.Sub, tir.Mul, tir.Div, tir.Mod, tir.FloorDiv, tir.FloorMod, tir.Min, tir.Max]
CMP = [tir.EQ, tir.NE, tir.LT, tir.LE, tir.GT, tir.GE]


@pytest.mark.parametrize("cls", ARITH)
def test_arith_nodes(cls):
    e = cls(x, y)
    assert e.a is x and e.b is y and e.dtype == "int32"
    vec = cls(v4, v4)
    assert vec.dtype == "float32x4"
    assert isinstance(e, tir.BinaryOpNode)


@pytest.mark.parametrize("cls", CMP)
def test_compare_nodes_give_bool_with_lanes(cls):
    assert cls(x, y).dtype == "bool"
    assert cls(v4, v4).dtype == "boolx4"
    s = tir.var("s", "int32xvscalex4")
    assert cls(s, s).dtype == "boolxvscalex4"
    assert isinstance(cls(x, y), tir.CmpOpNode)


@pytest.mark.parametrize("cls", ARITH + CMP)
def test_binary_dtype_mismatch_names_both(cls):
    with pytest.raises(TypeError, match=f"{cls.__name__}: operand dtypes differ: a is int32, "
                                        "b is float32"):
        cls(x, f)


def test_binary_python_number_takes_other_dtype():
    e = tir.Add(tir.var("b", "int8"), 1)
    assert e.b.dtype == "int8" and e.b.value == 1
    e = tir.Mul(2.5, f)
    assert e.a.dtype == "float32" and e.a.value == 2.5
    e = tir.Add(x, 1)
    assert isinstance(e.b, tir.IntImm) and e.b.value == 1
    assert tir.Add(1, 2).dtype == "int32"  # two numbers: int32 constants, no folding
    assert isinstance(tir.Add(1, 2), tir.Add)


def test_binary_float_number_with_int_operand_is_an_error():
    with pytest.raises(TypeError, match="a is int32, b is float32"):
        tir.Add(x, 1.5)


def test_binary_bad_operands():
    with pytest.raises(TypeError, match="Add: b must be a PrimExpr or a number, got str"):
        tir.Add(x, "one")
    h = tir.Var("h", "handle")
    with pytest.raises(TypeError, match="Add: operands must not be handles"):
        tir.Add(h, h)
    with pytest.raises(TypeError, match="a is int32x4, b is int32x8"):
        tir.Add(tir.Ramp(0, 1, 4), tir.Ramp(0, 1, 8))


def test_and_or_not():
    d = tir.var("d", "bool")
    assert tir.And(c, d).dtype == "bool" and tir.Or(c, d).a is c
    assert tir.Not(c).a is c and tir.Not(c).dtype == "bool"
    assert tir.Not(True).a.value == 1
    with pytest.raises(TypeError, match="And: operands must be bool, got int32"):
        tir.And(x, y)
    with pytest.raises(TypeError, match="Not: operand must be bool, got int32"):
        tir.Not(x)


# ---------------------------------------------------------------- other nodes


def test_select():
    s = tir.Select(c, x, 3)
    assert s.condition is c and s.true_value is x and s.false_value.value == 3
    assert s.dtype == "int32"
    vs = tir.Select(tir.var("m", "boolx4"), v4, v4)
    assert vs.dtype == "float32x4"
    assert tir.Select(c, v4, v4).dtype == "float32x4"  # scalar condition on vectors


def test_select_errors():
    with pytest.raises(TypeError, match="Select: condition must be bool, got int32"):
        tir.Select(x, 1, 2)
    with pytest.raises(TypeError, match="true_value is int32, false_value is float32"):
        tir.Select(c, x, f)
    with pytest.raises(TypeError, match="condition is boolx8, values are float32x4"):
        tir.Select(tir.var("m", "boolx8"), v4, v4)


def test_cast():
    e = tir.Cast("float32", x)
    assert e.dtype == "float32" and e.value is x
    assert tir.Cast("int32x4", v4).dtype == "int32x4"
    assert tir.Cast("float64", 3).value.dtype == "int32"
    with pytest.raises(TypeError, match="Cast: lanes differ: cannot cast int32 to float32x4"):
        tir.Cast("float32x4", x)
    with pytest.raises(ValueError, match="Cast: invalid dtype"):
        tir.Cast("float31", x)


def test_ramp():
    r = tir.Ramp(x, 2, 4)
    assert r.base is x and r.stride.value == 2 and r.stride.dtype == "int32"
    assert r.lanes == 4 and r.dtype == "int32x4"
    assert tir.Ramp(tir.var("b", "int64"), 1, 8).dtype == "int64x8"
    assert tir.Ramp(0, 1, tir.IntImm("int32", 4)).lanes == 4


def test_ramp_scalable():
    lanes = 4 * tir.vscale()
    r = tir.Ramp(0, 1, lanes)
    assert r.dtype == "int32xvscalex4" and r.lanes is lanes
    assert tir.Ramp(0, 1, tir.vscale()).dtype == "int32xvscalex1"


def test_ramp_errors():
    with pytest.raises(ValueError, match="Ramp: lanes must be at least 1, got 0"):
        tir.Ramp(0, 1, 0)
    with pytest.raises(TypeError, match=r"Ramp: lanes must be a positive int or k \* tir.vscale"):
        tir.Ramp(0, 1, x)
    with pytest.raises(TypeError, match="base is int32, stride is int64"):
        tir.Ramp(x, tir.const(1, "int64"), 4)
    with pytest.raises(TypeError, match="Ramp: base must be a scalar, got int32x4"):
        tir.Ramp(tir.Ramp(0, 1, 4), tir.Ramp(0, 1, 4), 2)


def test_broadcast():
    b = tir.Broadcast(f, 8)
    assert b.value is f and b.lanes == 8 and b.dtype == "float32x8"
    assert tir.Broadcast(1.0, 4).dtype == "float32x4"
    assert tir.Broadcast(x, 2 * tir.vscale()).dtype == "int32xvscalex2"
    with pytest.raises(TypeError, match="Broadcast: value must be a scalar, got float32x4"):
        tir.Broadcast(v4, 2)
    with pytest.raises(ValueError, match="Broadcast: lanes must be at least 1"):
        tir.Broadcast(x, -1)


def test_shuffle():
    a, b = tir.var("a", "float32x4"), tir.var("b", "float32x4")
    s = tir.Shuffle([a, b], [0, 4, 1, 5])
    assert s.vectors == (a, b) and [i.value for i in s.indices] == [0, 4, 1, 5]
    assert s.dtype == "float32x4"
    assert tir.Shuffle([a], [3]).dtype == "float32"
    assert tir.Shuffle([a, b], list(range(8))).dtype == "float32x8"


def test_shuffle_errors():
    a = tir.var("a", "float32x4")
    with pytest.raises(ValueError, match="Shuffle: needs at least one vector"):
        tir.Shuffle([], [0])
    with pytest.raises(ValueError, match="Shuffle: needs at least one index"):
        tir.Shuffle([a], [])
    with pytest.raises(ValueError, match=r"Shuffle: index 8 out of range \[0, 4\)"):
        tir.Shuffle([a], [8])
    with pytest.raises(TypeError, match="float32x4 and int32x4"):
        tir.Shuffle([a, tir.Ramp(0, 1, 4)], [0])


def test_let():
    e = tir.Let(x, 3, x + 1)
    assert e.var is x and e.value.value == 3 and e.dtype == "int32"
    assert tir.Let(f, 1.0, tir.Cast("int64", f)).dtype == "int64"
    with pytest.raises(TypeError, match="Let: value dtype differs from the var: var x is int32, "
                                        "value is float32"):
        tir.Let(x, f, x)
    with pytest.raises(TypeError, match="Let: var must be a Var, got IntImm"):
        tir.Let(tir.const(1), 1, x)


def test_call():
    e = tir.Call("float32", "tir.exp", [f])
    assert e.op == "tir.exp" and e.args == (f,) and e.dtype == "float32"
    e = tir.Call("int32", "tir.bitwise_and", [x, 3])
    assert e.args[1].value == 3 and e.args[1].dtype == "int32"

    class OpLike:
        name = "tir.sqrt"

    assert tir.Call("float32", OpLike(), [f]).op == "tir.sqrt"
    with pytest.raises(TypeError, match="Call: op must be a str, got int"):
        tir.Call("float32", 3, [])


def test_buffer_load():
    A = tir.decl_buffer((4, 8), "float32", "A")
    load = tir.BufferLoad(A, [x, 2])
    assert load.buffer is A and load.indices[0] is x and load.indices[1].value == 2
    assert load.dtype == "float32" and load.predicate is None
    assert A[x, 1].dtype == "float32"
    vec = tir.BufferLoad(A, [x, tir.Ramp(0, 1, 4)])
    assert vec.dtype == "float32x4"
    pred = tir.var("m", "boolx4")
    assert tir.BufferLoad(A, [x, tir.Ramp(0, 1, 4)], pred).predicate is pred
    s = tir.BufferLoad(A, [x, tir.Ramp(0, 1, 4 * tir.vscale())])
    assert s.dtype == "float32xvscalex4"


def test_buffer_load_errors():
    A = tir.decl_buffer((4, 8), "float32", "A")
    with pytest.raises(ValueError, match=r"BufferLoad: buffer A has 2 dimension\(s\), got 1"):
        tir.BufferLoad(A, [x])
    with pytest.raises(TypeError, match="index into A must be an integer, got float32"):
        tir.BufferLoad(A, [x, f])
    with pytest.raises(ValueError, match="vector indices into A have different lane counts"):
        tir.BufferLoad(A, [tir.Ramp(0, 1, 4), tir.Ramp(0, 1, 8)])
    with pytest.raises(TypeError, match="BufferLoad: buffer must be a tir.Buffer, got Var"):
        tir.BufferLoad(x, [0])
    with pytest.raises(TypeError, match="predicate must be boolx4, got bool"):
        tir.BufferLoad(A, [x, tir.Ramp(0, 1, 4)], c)


def test_nodes_are_immutable_and_identity_hashed():
    e = tir.Add(x, y)
    with pytest.raises(AttributeError):
        e.a = y
    assert len({tir.Add(x, y), tir.Add(x, y)}) == 2
    assert hash(e) == hash(e)


def test_astype():
    assert x.astype("int32") is x
    assert x.astype("float32").dtype == "float32"
    assert tir.const(3).astype("int64").value == 3


def test_bool_of_expressions():
    assert bool(x == x) is True  # noqa: PLR0124
    assert bool(x == y) is False
    assert bool(x != y) is True and bool(x != x) is False  # noqa: PLR0124
    with pytest.raises(TypeError, match="tir.all / tir.any"):
        bool(x < y)
    with pytest.raises(TypeError, match="truth value"):
        if x:
            pass


def test_broadcast_of_a_handle_is_rejected():
    with pytest.raises(TypeError, match="handle cannot be broadcast"):
        tir.Broadcast(tir.Var("p", "handle"), 4)


def test_star_import_does_not_shadow_builtin_range():
    namespace: dict = {}
    exec("from tir import *", namespace)
    assert "range" not in namespace and "expr" not in namespace
    assert namespace["ir_builder"] is tir.ir_builder and namespace["Add"] is tir.Add
