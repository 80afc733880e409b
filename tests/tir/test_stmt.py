"""Statement node constructors and buffers: fields, conversions and checks."""

import pytest

import tir
from tir import ir_builder
from tir.stmt import ForKind

x = tir.var("x")
c = tir.var("c", "bool")
NOP = tir.Evaluate(0)


def test_decl_buffer_defaults_and_fields():
    A = tir.decl_buffer((16,), name="A")
    assert A.dtype == "float32" and A.name == "A" and A.shape[0].value == 16
    assert A.data.dtype == "handle" and A.data.name == "A"
    assert A.data.type_annotation == "float32"
    assert A.strides == () and A.elem_offset.value == 0 and A.scope == ""
    assert A.ndim == 1
    n = tir.var("n")
    B = tir.decl_buffer(n, "int8", "B", strides=[1], scope="local")
    assert B.shape == (n,) and B.strides[0].value == 1 and B.scope == "local"
    data = tir.Var("d", "handle")
    assert tir.decl_buffer((2, 2), data=data).data is data


def test_buffer_errors():
    with pytest.raises(TypeError, match="Buffer A: data must be a handle Var"):
        tir.Buffer(tir.var("i"), "float32", (4,), name="A")
    with pytest.raises(TypeError, match="Buffer B: shape must be integers, got float32"):
        tir.decl_buffer((4.0,), name="B")
    with pytest.raises(ValueError, match="Buffer C: 1 strides for 2 dimensions"):
        tir.decl_buffer((4, 4), name="C", strides=[1])


def test_buffer_getitem_and_vload():
    A = tir.decl_buffer((4, 8), "float32", "A")
    load = A[1, x]
    assert isinstance(load, tir.BufferLoad) and load.indices[1] is x
    v = A.vload([1, 0], "float32x4")
    assert v.dtype == "float32x4" and isinstance(v.indices[1], tir.Ramp)
    assert A.vload([1, 0]).dtype == "float32"


def test_buffer_store():
    A = tir.decl_buffer((8,), "float32", "A")
    s = tir.BufferStore(A, tir.const(1.0), [x])
    assert s.buffer is A and s.value.value == 1.0 and s.indices == (x,)
    assert s.predicate is None
    assert tir.BufferStore(A, 2, [0]).value.dtype == "float32"  # number takes the element type
    ramp = tir.Ramp(0, 1, 4)
    vs = tir.BufferStore(A, 1.5, [ramp])
    assert isinstance(vs.value, tir.Broadcast) and vs.value.dtype == "float32x4"
    mask = tir.var("m", "boolx4")
    assert tir.BufferStore(A, vs.value, [ramp], mask).predicate is mask


def test_buffer_store_errors():
    A = tir.decl_buffer((8,), "float32", "A")
    with pytest.raises(TypeError, match="value dtype does not match buffer A: expected float32, "
                                        "got int32"):
        tir.BufferStore(A, x, [0])
    with pytest.raises(TypeError, match="expected float32, got float32x4"):
        tir.BufferStore(A, tir.const(1.0, "float32x4"), [0])
    with pytest.raises(ValueError, match=r"buffer A has 1 dimension\(s\), got 2"):
        tir.BufferStore(A, 1.0, [0, 0])
    with pytest.raises(TypeError, match="predicate must be boolx4, got boolx8"):
        tir.BufferStore(A, 1.0, [tir.Ramp(0, 1, 4)], tir.var("m", "boolx8"))


def test_for():
    body = tir.Evaluate(x)
    loop = tir.For(x, 0, 10, ForKind.VECTORIZED, body, {"pragma": 1})
    assert loop.loop_var is x and loop.min.value == 0 and loop.extent.value == 10
    assert loop.min.dtype == "int32" and loop.kind is ForKind.VECTORIZED and loop.body is body
    assert loop.annotations["pragma"] == 1
    assert tir.For(x, 0, 4, 1, body).kind is ForKind.PARALLEL  # ints convert to ForKind
    assert dict(tir.For(x, 0, 4, 0, body).annotations) == {}
    k = tir.var("k", "int64")
    assert tir.For(k, 0, 4, 0, body).extent.dtype == "int64"  # numbers take the var's dtype


def test_for_kinds_have_tvm_names():
    assert [k.name for k in ForKind][:4] == ["SERIAL", "PARALLEL", "VECTORIZED", "UNROLLED"]


def test_for_errors():
    message = "For x: extent dtype differs from the loop var: loop var is int32, extent is int64"
    with pytest.raises(TypeError, match=message):
        tir.For(x, 0, tir.const(4, "int64"), 0, NOP)
    with pytest.raises(TypeError, match="For x: body must be a Stmt, got str"):
        tir.For(x, 0, 4, 0, "body")
    with pytest.raises(TypeError, match="For: loop_var must be a Var, got IntImm"):
        tir.For(tir.const(0), 0, 4, 0, NOP)
    with pytest.raises(ValueError, match="7 is not a valid ForKind"):
        tir.For(x, 0, 4, 7, NOP)


@pytest.mark.parametrize(
    ("dtype", "lo", "extent", "message"),
    [
        ("int8", 120, 16, r"For i: the loop over \[120, 136\) does not fit its int8 loop var "
                          r"i, which holds \[-128, 127\] \(both ends must fit\); use a wider "
                          r"loop var dtype such as int16"),
        ("int8", 120, 8, r"\[120, 128\) does not fit"),  # the end itself must fit: 128 wraps
        ("int8", -128, -5, r"\[-128, -133\) does not fit"),  # would wrap to [-128, 123)
        ("uint8", 200, 100, r"holds \[0, 255\] .* such as int16"),
        ("int16", 30000, 30000, r"such as int32"),
        ("int64", 2**62, 2**62, r"use smaller bounds \(no integer dtype holds these\)"),
    ],
)
def test_for_constant_bounds_must_fit_the_loop_var(dtype, lo, extent, message):
    i = tir.var("i", dtype)
    with pytest.raises(ValueError, match=message):
        tir.For(i, lo, extent, ForKind.SERIAL, NOP)


def test_for_bounds_that_fit_or_are_symbolic_are_accepted():
    i, n = tir.var("i", "int8"), tir.var("n", "int8")
    assert tir.For(i, 120, 7, ForKind.SERIAL, NOP).extent.value == 7  # ends at 127
    assert tir.For(i, -128, 0, ForKind.SERIAL, NOP).min.value == -128
    assert tir.For(i, 100, n, ForKind.SERIAL, NOP).extent is n  # the program's to keep in range


def test_while_and_if():
    w = tir.While(c, NOP)
    assert w.condition is c and w.body is NOP
    i = tir.IfThenElse(c, NOP)
    assert i.condition is c and i.then_case is NOP and i.else_case is None
    assert tir.IfThenElse(True, NOP, NOP).condition.dtype == "bool"
    with pytest.raises(TypeError, match="While: condition must be a scalar bool, got int32"):
        tir.While(x, NOP)
    with pytest.raises(TypeError, match="IfThenElse: condition must be a scalar bool, got boolx4"):
        tir.IfThenElse(tir.var("m", "boolx4"), NOP)
    with pytest.raises(TypeError, match="IfThenElse: else_case must be a Stmt, got int"):
        tir.IfThenElse(c, NOP, 3)


def test_seq_stmt():
    a, b = tir.Evaluate(1), tir.Evaluate(2)
    s = tir.SeqStmt([a, b])
    assert s.seq == (a, b) and len(s) == 2 and s[1] is b
    with pytest.raises(ValueError, match="SeqStmt: needs at least one statement"):
        tir.SeqStmt([])
    with pytest.raises(TypeError, match=r"SeqStmt: seq\[1\] must be a Stmt, got int"):
        tir.SeqStmt([a, 3])


def test_seq_stmt_flatten():
    a, b, d = tir.Evaluate(1), tir.Evaluate(2), tir.Evaluate(3)
    flat = tir.SeqStmt.flatten(a, tir.SeqStmt([b, d]), None)
    assert flat.seq == (a, b, d)
    assert tir.SeqStmt.flatten([a]) is a
    assert tir.SeqStmt.flatten(None).value.value == 0
    assert tir.SeqStmt.flatten([a, [b, tir.SeqStmt([d, a])]], []).seq == (a, b, d, a)


def test_let_stmt():
    s = tir.LetStmt(x, 5, tir.Evaluate(x))
    assert s.var is x and s.value.value == 5 and s.body.value is x
    with pytest.raises(TypeError, match="LetStmt: value dtype differs from the var: var x is int32,"
                                        " value is float32"):
        tir.LetStmt(x, 1.0, NOP)
    with pytest.raises(TypeError, match="LetStmt: body must be a Stmt"):
        tir.LetStmt(x, 1, x)


def test_allocate():
    buf = tir.Var("buf", "handle")
    a = tir.Allocate(buf, "float32", [4, x], True, NOP)
    assert a.buffer_var is buf and a.dtype == "float32"
    assert a.extents[0].value == 4 and a.extents[1] is x
    assert a.condition.dtype == "bool" and a.condition.value == 1 and a.body is NOP
    with pytest.raises(TypeError, match="Allocate: buffer_var must be a handle Var"):
        tir.Allocate(x, "float32", [4], True, NOP)
    with pytest.raises(TypeError, match="Allocate: extents must be integers, got float32"):
        tir.Allocate(buf, "float32", [4.0], True, NOP)


def test_a_negative_constant_size_is_refused_where_it_is_written():
    buf = tir.Var("buf", "handle")
    with pytest.raises(ValueError, match=r"allocate 'buf': the extent -2 of dimension 1 is "
                                         r"negative; an allocation's size must be >= 0"):
        tir.Allocate(buf, "float32", [8, -2], True, NOP)
    with pytest.raises(ValueError, match=r"Buffer A: shape\[1\] is -3, which is negative"):
        tir.decl_buffer((4, -3), "float32", "A")
    with pytest.raises(ValueError, match=r"Buffer tmp: shape\[0\] is -4, which is negative"):
        ir_builder.create().allocate("float32", (-4,), name="tmp")
    assert tir.Allocate(buf, "float32", [0, x - 9], True, NOP).extents[0].value == 0  # empty: ok
    assert tir.decl_buffer((0,), "float32", "E").shape[0].value == 0


def test_attr_evaluate_assert():
    at = tir.AttrStmt(None, "pragma_unroll", "yes", NOP)
    assert at.attr_key == "pragma_unroll" and isinstance(at.value, tir.StringImm)
    assert tir.AttrStmt(x, "k", 3, NOP).value.value == 3
    with pytest.raises(TypeError, match="AttrStmt: attr_key must be a str"):
        tir.AttrStmt(None, 3, 1, NOP)
    assert tir.Evaluate(7).value.value == 7
    a = tir.AssertStmt(x < 3, "x too big", NOP)
    assert a.message.value == "x too big" and isinstance(a.condition, tir.LT)
    with pytest.raises(TypeError, match="AssertStmt: condition must be a scalar bool"):
        tir.AssertStmt(x, "m", NOP)


def test_statements_are_immutable():
    s = tir.Evaluate(1)
    with pytest.raises(AttributeError):
        s.value = tir.const(2)
