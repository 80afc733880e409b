"""tir.ir_builder: each builder method, the views' loads and stores, and their errors."""

import pytest

import tir
from tir import ir_builder
from tir.stmt import ForKind


def _for_chain(stmt):
    out = []
    while isinstance(stmt, tir.For):
        out.append(stmt)
        stmt = stmt.body
    return out, stmt


def test_seed_example_builds_nested_loops():
    n = tir.var("n")
    ib = ir_builder.create()
    A = ib.pointer("float32", name="A")
    with ib.for_range(0, n, name="i") as i, ib.for_range(0, 4, kind="vectorize", name="j") as j:
        A[i * 4 + j] += tir.const(1, "float32")
    loops, store = _for_chain(ib.get())
    outer, inner = loops
    assert outer.loop_var is i and i.name == "i" and i.dtype == "int32"
    assert outer.min.value == 0 and outer.extent is n
    assert outer.kind == ForKind.SERIAL
    assert inner.loop_var is j and inner.extent.value == 4
    assert inner.kind == ForKind.VECTORIZED
    assert isinstance(store, tir.BufferStore)
    assert store.buffer is A.asbuffer()
    index = store.indices[0]
    assert isinstance(index, tir.Add) and index.b is j
    assert isinstance(index.a, tir.Mul) and index.a.a is i and index.a.b.value == 4
    assert isinstance(store.value, tir.Add)
    load = store.value.a
    assert isinstance(load, tir.BufferLoad) and load.buffer is store.buffer
    assert load.indices[0] is index
    assert store.value.b.value == 1.0 and store.value.b.dtype == "float32"


def test_pointer_buffer_fields():
    ib = ir_builder.create()
    A = ib.pointer("float32", name="A")
    buf = A.asbuffer()
    assert isinstance(buf, tir.Buffer)
    assert buf.name == "A" and buf.dtype == "float32" and len(buf.shape) == 1
    assert isinstance(buf.shape[0], tir.SizeVar) and buf.shape[0].name == "A_len"
    assert buf.data.dtype == "handle" and buf.data.name == "A"
    assert buf.data.type_annotation == "float32"
    assert A.dtype == "float32" and A.name == "A" and A.data is buf.data
    assert ib.pointer("int8").name == "ptr"


def test_two_pointers_have_distinct_length_vars():
    ib = ir_builder.create()
    a, b = ib.pointer("float32", name="a"), ib.pointer("float32", name="b")
    assert a.shape[0] is not b.shape[0]
    assert a.data is not b.data


def test_vector_content_type_pointer():
    ib = ir_builder.create()
    A = ib.pointer("float32x4", name="A")
    assert A.dtype == "float32x4"
    assert A[0].dtype == "float32x4"
    A[1] = 2.0
    store = ib.get()
    assert isinstance(store.value, tir.Broadcast) and store.value.lanes == 4
    assert store.value.value.value == 2.0


def test_pointer_as_primfunc_param():
    n = tir.var("n")
    ib = ir_builder.create()
    A = ib.pointer("float32", name="A")
    with ib.for_range(0, n) as i:
        A[i] = 0.0
    func = tir.PrimFunc([A, n], ib.get())
    handle, scalar = func.params
    assert handle.dtype == "handle" and handle.name == "A" and scalar is n
    assert func.buffer_map[handle] is A.asbuffer()
    assert tir.verify_well_formed(func)


def test_number_store_takes_element_type():
    ib = ir_builder.create()
    A = ib.pointer("int8", name="A")
    A[0] = 3
    store = ib.get()
    assert isinstance(store.value, tir.IntImm) and store.value.dtype == "int8"
    assert store.value.value == 3
    assert store.indices[0].dtype == "int32" and store.indices[0].value == 0


def test_int_number_stored_into_float_buffer():
    ib = ir_builder.create()
    A = ib.pointer("float64", name="A")
    A[0] = 1
    assert ib.get().value.dtype == "float64"


def test_fractional_number_into_int_buffer_raises():
    ib = ir_builder.create()
    A = ib.pointer("int32", name="A")
    with pytest.raises(TypeError, match="buffer A"):
        A[0] = 1.5


def test_store_dtype_mismatch_names_buffer_and_dtypes():
    ib = ir_builder.create()
    A = ib.pointer("float32", name="A")
    x = tir.var("x", "int32")
    with pytest.raises(ValueError, match=r"buffer A.*float32.*int32"):
        A[0] = x
    with pytest.raises(ValueError, match=r"buffer A.*float64"):
        A[0] = tir.const(1.0, "float64")


def test_store_lane_mismatch_raises():
    ib = ir_builder.create()
    A = ib.pointer("float32", name="A")
    with pytest.raises(ValueError, match=r"float32x4"):
        A[0] = tir.const(1.0, "float32x4")


def test_store_of_non_expression_raises():
    ib = ir_builder.create()
    A = ib.pointer("float32", name="A")
    with pytest.raises(TypeError, match="PrimExpr or a number"):
        A[0] = "one"


def test_vector_store_through_ramp_index():
    ib = ir_builder.create()
    A = ib.pointer("float32", name="A")
    B = ib.pointer("float32", name="B")
    ramp = tir.Ramp(0, 1, 4)
    A[ramp] = B[ramp] + 1.0
    store = ib.get()
    assert store.value.dtype == "float32x4"
    assert isinstance(store.value.b, tir.Broadcast)


def test_wrong_number_of_indices_raises():
    ib = ir_builder.create()
    A = ib.pointer("float32", name="A")
    with pytest.raises(ValueError, match=r"buffer A has 1 dimension\(s\), got 2"):
        A[0, 1]
    B = ib.allocate("float32", (4, 4), name="B")
    with pytest.raises(ValueError, match=r"buffer B has 2 dimension\(s\), got 1"):
        B[3] = 1.0


def test_bad_index_type_raises():
    ib = ir_builder.create()
    A = ib.pointer("float32", name="A")
    with pytest.raises(TypeError, match="index into buffer A"):
        A["x"]
    with pytest.raises(TypeError, match="integer"):
        A[tir.const(1.0)]


def test_buffer_ptr_multi_dim_access():
    buf = tir.decl_buffer((3, 5), "float32", "M")
    ib = ir_builder.create()
    M = ib.buffer_ptr(buf)
    assert M.asbuffer() is buf
    M[1, 2] = M[2, 4] * 2.0
    store = ib.get()
    assert store.buffer is buf
    assert [i.value for i in store.indices] == [1, 2]
    assert [i.value for i in store.value.a.indices] == [2, 4]


def test_buffer_ptr_rejects_non_buffer():
    ib = ir_builder.create()
    with pytest.raises(TypeError, match="expected a tir.Buffer, got int"):
        ib.buffer_ptr(3)


def test_allocate_wraps_rest_of_scope():
    ib = ir_builder.create()
    A = ib.pointer("float32", name="A")
    A[0] = 0.0
    B = ib.allocate("float32", (2, 8), name="B", scope="local")
    B[1, 7] = 1.0
    A[1] = B[1, 7]
    seq = ib.get()
    assert isinstance(seq, tir.SeqStmt) and len(seq) == 2
    alloc = seq[1]
    assert isinstance(alloc, tir.Allocate)
    assert alloc.buffer_var is B.asbuffer().data and alloc.buffer_var.dtype == "handle"
    assert alloc.dtype == "float32"
    assert [e.value for e in alloc.extents] == [2, 8]
    assert alloc.condition.dtype == "bool" and alloc.condition.value == 1
    assert isinstance(alloc.body, tir.SeqStmt) and len(alloc.body) == 2
    assert B.asbuffer().scope == "local" and B.asbuffer().name == "B"


def test_allocate_scalar_shape_and_symbolic_extent():
    n = tir.var("n")
    ib = ir_builder.create()
    B = ib.allocate("int32", n, name="B")
    B[0] = 1
    alloc = ib.get()
    assert alloc.extents[0] is n and B.shape[0] is n


def test_allocate_empty_shape_raises():
    ib = ir_builder.create()
    with pytest.raises(ValueError, match="allocate B"):
        ib.allocate("float32", (), name="B")


def test_get_of_empty_builder_is_evaluate_zero():
    s = ir_builder.create().get()
    assert isinstance(s, tir.Evaluate) and s.value.value == 0


def test_consecutive_statements_give_flat_seq():
    ib = ir_builder.create()
    A = ib.pointer("float32", name="A")
    A[0] = 1.0
    with ib.new_scope():
        A[1] = 2.0
        A[2] = 3.0
    A[3] = 4.0
    ib.emit(tir.SeqStmt([tir.Evaluate(1), tir.Evaluate(2)]))
    seq = ib.get()
    assert isinstance(seq, tir.SeqStmt) and len(seq) == 6
    assert not any(isinstance(s, tir.SeqStmt) for s in seq.seq)


def test_get_is_repeatable_and_keeps_building():
    ib = ir_builder.create()
    A = ib.pointer("float32", name="A")
    A[0] = 1.0
    first = ib.get()
    A[1] = 2.0
    assert isinstance(first, tir.BufferStore)
    assert len(ib.get()) == 2


def test_get_inside_scope_raises():
    ib = ir_builder.create()
    with pytest.raises(RuntimeError, match="inside a construction scope"), ib.for_range(0, 4):
        ib.get()


def test_for_range_kinds():
    ib = ir_builder.create()
    for kind in ("serial", "parallel", "vectorize", "unroll"):
        with ib.for_range(0, 4, kind=kind):
            ib.emit(tir.Evaluate(0))
    kinds = [s.kind for s in ib.get().seq]
    assert kinds == [ForKind.SERIAL, ForKind.PARALLEL, ForKind.VECTORIZED, ForKind.UNROLLED]


def test_for_range_unknown_kind_raises():
    ib = ir_builder.create()
    with pytest.raises(ValueError, match=r"unknown kind 'vectorized'.*serial, parallel"):
        ib.for_range(0, 4, kind="vectorized")


def test_for_range_begin_and_extent():
    n = tir.var("n")
    ib = ir_builder.create()
    with ib.for_range(2, n, name="k") as k:
        ib.emit(tir.Evaluate(k))
    loop = ib.get()
    assert loop.min.value == 2 and loop.loop_var.name == "k"
    assert isinstance(loop.extent, tir.Sub) and loop.extent.a is n and loop.extent.b.value == 2
    assert loop.body.value is k


def test_for_range_empty_body_is_evaluate_zero():
    ib = ir_builder.create()
    with ib.for_range(0, 4):
        pass
    assert isinstance(ib.get().body, tir.Evaluate)


def test_for_range_dtype_from_bounds():
    m = tir.var("m", "int64")
    ib = ir_builder.create()
    with ib.for_range(0, m) as i:
        assert i.dtype == "int64"
    loop = ib.get()
    assert loop.min.dtype == "int64" and loop.extent is m


def test_for_range_explicit_dtype_casts_bounds():
    n = tir.var("n")
    ib = ir_builder.create()
    with ib.for_range(0, n, dtype="int64") as i:
        assert i.dtype == "int64"
    loop = ib.get()
    assert isinstance(loop.extent, tir.Cast) and loop.extent.value is n
    assert loop.min.dtype == "int64"


def test_for_range_rejects_float_bounds():
    ib = ir_builder.create()
    with pytest.raises(TypeError, match=r"for_range i: bounds must be scalar integers.*float32"):
        ib.for_range(0, tir.var("x", "float32"))
    with pytest.raises(TypeError, match="begin must be"):
        ib.for_range("a", 3)


def test_for_range_with_constant_step():
    ib = ir_builder.create()
    A = ib.pointer("float32", name="A")
    with ib.for_range(2, 11, name="i", step=3) as value:
        A[value] = 0.0
    loop = ib.get()
    # ceildiv(11 - 2, 3) = 3 trips of i = 0, 1, 2 giving 2, 5, 8
    assert loop.min.value == 0 and loop.extent.value == 3
    assert isinstance(value, tir.Add) and value.a.value == 2
    assert isinstance(value.b, tir.Mul) and value.b.a is loop.loop_var and value.b.b.value == 3
    assert loop.body.indices[0] is value


def test_for_range_with_symbolic_step():
    n, s = tir.var("n"), tir.var("s")
    ib = ir_builder.create()
    with ib.for_range(0, n, step=s) as value:
        ib.emit(tir.Evaluate(value))
    check = ib.get()
    # a zero step would divide by zero counting the trips: asserted positive first
    assert isinstance(check, tir.AssertStmt) and isinstance(check.condition, tir.GT)
    assert check.condition.a is s
    assert check.message.value == "for_range i: the step s must be positive"
    loop = check.body
    assert isinstance(value, tir.Mul) and value.a is loop.loop_var and value.b is s


def test_symbolic_step_trip_count_does_not_overflow():
    """(n - 1) // s + 1 trips: (n + s - 1) // s overflows int32 for s near 2**31."""
    n, s = tir.var("n"), tir.var("s")
    ib = ir_builder.create()
    with ib.for_range(0, n, step=s) as value:
        ib.emit(tir.Evaluate(value))
    extent = ib.get().body.extent
    expected = tir.floordiv(n - 1, s) + 1
    tir.assert_structural_equal(extent, expected)


def test_for_range_step_one_is_plain_loop():
    ib = ir_builder.create()
    with ib.for_range(0, 8, step=1) as i:
        ib.emit(tir.Evaluate(i))
    assert ib.get().loop_var is i


def test_for_range_nonpositive_step_raises():
    ib = ir_builder.create()
    with pytest.raises(ValueError, match="step must be positive, got 0"):
        ib.for_range(0, 8, step=0)


@pytest.mark.parametrize(
    ("begin", "end", "dtype", "message"),
    [
        # cast to int8, 136 would wrap to -120 and the loop become [120, -120)
        (120, 136, "int8", r"for_range i: the loop over \[120, 136\) does not fit its int8 loop "
                           r"var i, which holds \[-128, 127\] \(both ends must fit\); use a "
                           r"wider loop var dtype such as int16"),
        (0, 300, "int8", r"\[0, 300\) does not fit its int8"),  # would wrap to [0, 44)
        (-5, 10, "uint8", r"\[-5, 10\) does not fit its uint8"),
        (tir.const(0, "int64"), tir.const(2**40, "int64"), "int32", r"\[0, 1099511627776\)"),
    ],
)
def test_for_range_bounds_must_fit_the_dtype(begin, end, dtype, message):
    ib = ir_builder.create()
    with pytest.raises(ValueError, match=message):
        ib.for_range(begin, end, name="i", dtype=dtype)


def test_for_range_constant_step_counts_trips_without_wrapping():
    # ceildiv(127 - 0, 100) = 2, though 127 + 100 - 1 does not fit int8
    ib = ir_builder.create()
    with ib.for_range(0, 127, name="i", dtype="int8", step=100) as value:
        ib.emit(tir.Evaluate(value))
    assert ib.get().extent.value == 2 and ib.get().extent.dtype == "int8"
    with pytest.raises(ValueError, match=r"for_range i: counting the steps, the loop over "
                                         r"\[0, 128\) does not fit its int8 loop var"):
        ib.for_range(-128, 127, name="i", dtype="int8", step=2)


def test_while_loop():
    ib = ir_builder.create()
    it = ib.allocate("int32", (1,), name="it")
    with ib.while_loop(it[0] < 10):
        it[0] += 1
    alloc = ib.get()
    loop = alloc.body
    assert isinstance(loop, tir.While) and isinstance(loop.condition, tir.LT)
    assert isinstance(loop.body, tir.BufferStore) and loop.body.buffer is it.asbuffer()


def test_if_and_else_scope():
    i = tir.var("i")
    ib = ir_builder.create()
    x = ib.pointer("float32", name="x")
    with ib.if_scope(i % 2 == 0):
        x[i] = 1.0
    with ib.else_scope():
        x[i] = 2.0
    s = ib.get()
    assert isinstance(s, tir.IfThenElse) and isinstance(s.condition, tir.EQ)
    assert s.then_case.value.value == 1.0 and s.else_case.value.value == 2.0


def test_if_scope_without_else():
    ib = ir_builder.create()
    with ib.if_scope(tir.var("c", "bool")):
        ib.emit(tir.Evaluate(1))
    assert ib.get().else_case is None


def test_else_scope_without_if_raises():
    ib = ir_builder.create()
    with pytest.raises(RuntimeError, match="else_scope must directly follow an if_scope"):
        ib.else_scope()
    ib.emit(tir.Evaluate(0))
    with pytest.raises(RuntimeError, match="last statement emitted is Evaluate"):
        ib.else_scope()


def test_second_else_scope_raises():
    ib = ir_builder.create()
    with ib.if_scope(tir.var("c", "bool")):
        ib.emit(tir.Evaluate(1))
    with ib.else_scope():
        ib.emit(tir.Evaluate(2))
    with pytest.raises(RuntimeError, match="already has an else branch"):
        ib.else_scope()


def test_condition_must_be_bool():
    ib = ir_builder.create()
    with pytest.raises(TypeError, match="if_scope: condition must be a scalar bool.*int32"):
        ib.if_scope(tir.var("i"))
    with pytest.raises(TypeError, match="while_loop: condition"):
        ib.while_loop(3)


def test_new_scope_bounds_let():
    ib = ir_builder.create()
    with ib.new_scope():
        x = ib.let("x", tir.const(5))
        ib.emit(tir.Evaluate(x))
    ib.emit(tir.Evaluate(7))
    seq = ib.get()
    assert isinstance(seq, tir.SeqStmt) and len(seq) == 2
    let = seq[0]
    assert isinstance(let, tir.LetStmt) and let.var is x and let.body.value is x
    assert seq[1].value.value == 7


def test_let_wraps_rest_and_takes_value_dtype():
    ib = ir_builder.create()
    y = ib.let("y", tir.var("m", "int64") + 1)
    assert y.name == "y" and y.dtype == "int64"
    ib.emit(tir.Evaluate(y))
    ib.emit(tir.Evaluate(y))
    let = ib.get()
    assert isinstance(let, tir.LetStmt) and len(let.body) == 2


def test_let_with_nothing_after_has_evaluate_body():
    ib = ir_builder.create()
    ib.let("z", 3)
    let = ib.get()
    assert let.value.value == 3 and isinstance(let.body, tir.Evaluate)


def test_emit_forms():
    ib = ir_builder.create()
    ib.emit(tir.Evaluate(1))
    ib.emit(tir.call_extern("int32", "puts"))
    ib.emit(lambda body: tir.AttrStmt(None, "pragma", 1, body))
    ib.emit(tir.Evaluate(2))
    seq = ib.get()
    assert isinstance(seq[1], tir.Evaluate) and isinstance(seq[1].value, tir.Call)
    assert isinstance(seq[2], tir.AttrStmt) and seq[2].body.value.value == 2
    with pytest.raises(TypeError, match="emit: expected a Stmt.*got str"):
        ib.emit("x")


def test_scope_attr():
    ib = ir_builder.create()
    A = ib.pointer("float32", name="A")
    ib.scope_attr(A, "storage_scope", "global")
    A[0] = 1.0
    attr = ib.get()
    assert isinstance(attr, tir.AttrStmt) and attr.node is A.asbuffer()
    assert attr.attr_key == "storage_scope" and attr.value.value == "global"
    assert isinstance(attr.body, tir.BufferStore)


def test_likely():
    c = tir.var("i") < 4
    e = ir_builder.create().likely(c)
    assert isinstance(e, tir.Call) and e.op == "tir.likely" and e.args[0] is c


def test_exception_inside_scope_leaves_builder_usable():
    ib = ir_builder.create()
    with pytest.raises(ZeroDivisionError, match="boom"), ib.for_range(0, 4):
        raise ZeroDivisionError("boom")
    ib.emit(tir.Evaluate(3))
    assert ib.get().value.value == 3


def test_nested_scopes_build_proper_bodies():
    n = tir.var("n")
    ib = ir_builder.create()
    A = ib.pointer("float32", name="A")
    with ib.for_range(0, n, name="i", kind="parallel") as i:
        tmp = ib.allocate("float32", (1,), name="tmp")
        tmp[0] = 0.0
        with ib.for_range(0, 8, name="k") as k, ib.if_scope(k < i):
            tmp[0] += A[k]
        A[i] = tmp[0]
    loop = ib.get()
    alloc = loop.body
    assert loop.kind == ForKind.PARALLEL and isinstance(alloc, tir.Allocate)
    init, inner, final = alloc.body.seq
    assert isinstance(init, tir.BufferStore) and isinstance(inner, tir.For)
    assert isinstance(inner.body, tir.IfThenElse)
    assert final.buffer is A.asbuffer()
    assert tir.verify_well_formed(tir.PrimFunc([A, n], loop))


def test_scope_attr_string_node_and_asobject():
    ib = ir_builder.create()
    A = ib.pointer("float32", name="A")
    assert A.asobject() is A.asbuffer()
    ib.scope_attr("device", "pragma", 1)
    ib.emit(tir.Evaluate(0))
    attr = ib.get()
    assert isinstance(attr.node, tir.StringImm) and attr.node.value == "device"


def test_wrong_index_count_message_suggests_the_form():
    ib = ir_builder.create()
    B = ib.allocate("float32", (4, 4), name="B")
    with pytest.raises(ValueError, match=r"write B\[i0, i1\]"):
        B[0]
