"""tir.verify_well_formed: bound vars, double binding, undefined buffers, dtype consistency."""

import pytest

import tir
from tir import ir_builder
from tir.verify import well_formed_errors


def _vector_add():
    n = tir.var("n")
    ib = ir_builder.create()
    A = ib.pointer("float32", name="A")
    B = ib.pointer("float32", name="B")
    with ib.for_range(0, n, name="i") as i:
        B[i] = A[i] + 1.0
    return n, A, B, ib.get()


def _set(obj, **fields):
    """Overwrite fields of a frozen node, bypassing its checks (as a buggy pass might)."""
    for name, value in fields.items():
        object.__setattr__(obj, name, value)
    return obj


def test_well_formed_function_passes():
    n, A, B, body = _vector_add()
    func = tir.PrimFunc([A, B, n], body)
    assert tir.verify_well_formed(func) is True
    assert tir.verify_well_formed(tir.IRModule.from_expr(func)) is True


def test_undefined_var_is_reported():
    _, A, B, body = _vector_add()
    func = tir.PrimFunc([A, B], body)
    with pytest.raises(ValueError, match=r"main: use of undefined var n \(int32\)"):
        tir.verify_well_formed(func)
    assert tir.verify_well_formed(func, assert_mode=False) is False


def test_module_errors_name_the_function():
    _, A, B, body = _vector_add()
    mod = tir.IRModule({"vadd": tir.PrimFunc([A, B], body)})
    with pytest.raises(ValueError, match="vadd: use of undefined var n"):
        tir.verify_well_formed(mod)


def test_use_outside_binder_scope():
    ib = ir_builder.create()
    A = ib.pointer("int32", name="A")
    with ib.for_range(0, 4, name="i") as i:
        A[i] = 0
    A[0] = i  # the loop var escapes its loop
    with pytest.raises(ValueError, match=r"use of var i outside the loop for i that binds it "
                       r"\(in store A\); use i inside that scope"):
        tir.verify_well_formed(tir.PrimFunc([A], ib.get()))


def test_let_and_allocate_bind():
    ib = ir_builder.create()
    A = ib.pointer("int32", name="A")
    x = ib.let("x", tir.const(3))
    tmp = ib.allocate("int32", (x,), name="tmp")
    tmp[0] = x
    A[0] = tmp[0] + tir.Let(tir.var("y"), 1, x)
    assert tir.verify_well_formed(tir.PrimFunc([A], ib.get()))


def test_let_expression_var_does_not_escape():
    y = tir.var("y")
    A = tir.decl_buffer((4,), "int32", "A")
    body = tir.BufferStore(A, tir.Let(y, 1, y) + y, [0])
    errors = well_formed_errors(tir.PrimFunc([A], body))
    assert len(errors) == 1 and "use of var y outside the let y that binds it" in errors[0]


def test_buffer_shape_vars_are_bound():
    m = tir.size_var("m")
    A = tir.decl_buffer((m, 4), "float32", "A")
    B = tir.decl_buffer((m * 4,), "float32", "B")
    with tir.stmt_functor.deep_recursion():
        pass
    i = tir.var("i")
    body = tir.For(i, 0, m, tir.ForKind.SERIAL,
                   tir.BufferStore(B, tir.BufferLoad(A, [i, 0]), [i * 4]))
    assert tir.verify_well_formed(tir.PrimFunc([A, B], body))


def test_buffer_shape_expression_with_unbound_var():
    k = tir.var("k")
    B = tir.decl_buffer((k * 4,), "float32", "B")
    func = tir.PrimFunc([B], tir.BufferStore(B, 0.0, [0]))
    with pytest.raises(ValueError, match=r"undefined var k .*function signature"):
        tir.verify_well_formed(func)


def test_var_bound_twice_by_two_loops():
    i = tir.var("i")
    A = tir.decl_buffer((8,), "int32", "A")
    loop = tir.For(i, 0, 8, tir.ForKind.SERIAL, tir.BufferStore(A, i, [i]))
    func = tir.PrimFunc([A], tir.SeqStmt([loop, loop]))
    with pytest.raises(ValueError, match="var i is bound twice: by for i and again by for i"):
        tir.verify_well_formed(func)


def test_param_rebound_by_let():
    n = tir.var("n")
    body = tir.LetStmt(n, 1, tir.Evaluate(n))
    with pytest.raises(ValueError, match="var n is bound twice: by param n and again by let n"):
        tir.verify_well_formed(tir.PrimFunc([n], body))


def test_store_into_undefined_buffer():
    n, A, _, body = _vector_add()
    func = tir.PrimFunc([A, n], body)
    errors = well_formed_errors(func)
    assert any("store into undefined buffer B" in e and "for i > store B" in e for e in errors)
    assert not any("buffer A" in e for e in errors)


def test_buffer_over_param_handle_is_known():
    data = tir.Var("data", "handle")
    A = tir.decl_buffer((4,), "float32", "A", data=data)
    func = tir.PrimFunc([data], tir.BufferStore(A, 1.0, [0]))
    assert tir.verify_well_formed(func)


def test_allocated_buffer_used_after_its_scope():
    ib = ir_builder.create()
    A = ib.pointer("float32", name="A")
    with ib.new_scope():
        tmp = ib.allocate("float32", (4,), name="tmp")
        tmp[0] = 1.0
    A[0] = tmp[0]
    with pytest.raises(ValueError, match="load from undefined buffer tmp"):
        tir.verify_well_formed(tir.PrimFunc([A], ib.get()))


def test_binary_operand_dtype_mismatch():
    x, y = tir.var("x"), tir.var("y", "int64")
    bad = _set(x + 1, b=y)
    func = tir.PrimFunc([x, y], tir.Evaluate(bad))
    with pytest.raises(ValueError, match="Add operands differ in dtype: int32 and int64"):
        tir.verify_well_formed(func)


def test_binary_result_dtype_mismatch():
    x = tir.var("x")
    bad = _set(x < 3, dtype="int32")
    func = tir.PrimFunc([x], tir.Evaluate(bad))
    with pytest.raises(ValueError, match="LT of int32 operands has dtype int32"):
        tir.verify_well_formed(func)


def test_load_dtype_mismatch():
    A = tir.decl_buffer((4,), "float32", "A")
    load = _set(A[0], dtype="float64")
    func = tir.PrimFunc([A], tir.Evaluate(load))
    with pytest.raises(ValueError, match="load from A has dtype float64, expected float32"):
        tir.verify_well_formed(func)


def test_store_value_dtype_mismatch():
    A = tir.decl_buffer((4,), "float32", "A")
    store = _set(tir.BufferStore(A, 1.0, [0]), value=tir.const(1))
    with pytest.raises(ValueError, match="store into A: value dtype int32, expected float32"):
        tir.verify_well_formed(tir.PrimFunc([A], store))


def test_loop_bound_dtype_mismatch():
    i = tir.var("i")
    loop = _set(tir.For(i, 0, 4, tir.ForKind.SERIAL, tir.Evaluate(i)),
                extent=tir.const(4, "int64"))
    with pytest.raises(ValueError, match="for i: extent is int64, loop var is int32"):
        tir.verify_well_formed(tir.PrimFunc([], loop))


def test_let_value_dtype_mismatch():
    x = tir.var("x")
    let = _set(tir.LetStmt(x, 1, tir.Evaluate(x)), value=tir.const(1.0))
    with pytest.raises(ValueError, match="let x: value is float32, var is int32"):
        tir.verify_well_formed(tir.PrimFunc([], let))


def test_select_dtype_mismatch():
    c = tir.var("c", "bool")
    sel = _set(tir.Select(c, 1, 2), false_value=tir.const(2.0))
    with pytest.raises(ValueError, match="Select values differ in dtype: int32 and float32"):
        tir.verify_well_formed(tir.PrimFunc([c], tir.Evaluate(sel)))


def test_errors_show_path_through_if_and_while():
    c = tir.var("c", "bool")
    u = tir.var("u")
    body = tir.While(c, tir.IfThenElse(c, tir.Evaluate(0), tir.Evaluate(u)))
    errors = well_formed_errors(tir.PrimFunc([c], body))
    assert errors == ["main: use of undefined var u (int32) (in while > else); pass u in the "
                      "PrimFunc's params (a scalar argument), or use a var of the shape of a "
                      "buffer in the params"]


def test_many_errors_are_truncated():
    A = tir.decl_buffer((4,), "int32", "A")
    stmts = [tir.Evaluate(tir.var(f"v{k}")) for k in range(15)]
    with pytest.raises(ValueError, match=r"\.\.\. and 5 more"):
        tir.verify_well_formed(tir.PrimFunc([A], tir.SeqStmt(stmts)))


def test_bad_argument_type():
    with pytest.raises(TypeError, match="expected a PrimFunc or an IRModule, got int"):
        tir.verify_well_formed(3)


def test_deep_program_does_not_hit_recursion_limit():
    x = tir.var("x")
    e = x
    for k in range(3000):
        e = tir.Add(e, k)
    assert tir.verify_well_formed(tir.PrimFunc([x], tir.Evaluate(e)))


def test_shared_let_expression_is_not_a_double_binding():
    v = tir.var("v")
    shared = tir.Let(v, 1, v + 1)
    assert tir.verify_well_formed(tir.PrimFunc([], tir.Evaluate(shared * shared)))


def test_shared_let_expression_still_checks_its_body():
    v, u = tir.var("v"), tir.var("u")
    shared = tir.Let(v, 1, v + u)
    errors = well_formed_errors(tir.PrimFunc([], tir.Evaluate(shared * shared)))
    assert len(errors) == 2 and all("undefined var u" in e for e in errors)


def test_errors_are_well_formed_errors_with_a_hint():
    n = tir.var("n")
    func = tir.PrimFunc([n], tir.LetStmt(n, 1, tir.Evaluate(n)))
    with pytest.raises(tir.verify.WellFormedError) as info:
        tir.verify_well_formed(func)
    assert isinstance(info.value, ValueError)
    assert str(info.value).endswith("(in function body); give each binding its own tir.Var")


def test_loop_whose_constant_end_does_not_fit_its_var():
    # For checks this when built; a pass that rewrites the extent in place bypasses it.
    i = tir.var("i", "int8")
    A = tir.decl_buffer((8,), "int8", "A")
    loop = tir.For(i, 120, 7, tir.ForKind.SERIAL, tir.BufferStore(A, i, [0]))
    assert tir.verify_well_formed(tir.PrimFunc([A], loop))
    _set(loop, extent=tir.const(16, "int8"))
    with pytest.raises(ValueError, match=r"main: for i: the loop over \[120, 136\) does not fit "
                                         r"its int8 loop var i, which holds \[-128, 127\]"):
        tir.verify_well_formed(tir.PrimFunc([A], loop))


def test_first_contact_mistakes_name_the_fix():
    """The three IR mistakes a new user makes first, as build reports them (issue 12)."""
    n, m = tir.size_var("n"), tir.var("m")
    A = tir.decl_buffer((n,), "float32", name="A")
    B = tir.decl_buffer((n,), "float32", name="B")
    i = tir.var("i")
    copy = tir.For(i, 0, n, tir.ForKind.SERIAL, tir.BufferStore(B, A[i], [i]))
    [missing] = well_formed_errors(tir.PrimFunc([A], copy))
    assert missing.endswith("pass B in the PrimFunc's params (tir.PrimFunc([..., B], body)), "
                            "or allocate it (ib.allocate)")
    unbound = tir.For(i, 0, m, tir.ForKind.SERIAL, tir.BufferStore(A, 1.0, [i]))
    [scalar] = well_formed_errors(tir.PrimFunc([A], unbound))
    assert "use of undefined var m (int32) (in function body); pass m in the PrimFunc's params" \
        in scalar
    escaped = tir.SeqStmt([copy, tir.BufferStore(A, 2.0, [i])])
    [outside] = well_formed_errors(tir.PrimFunc([A, B], escaped))
    assert outside.startswith("main: use of var i outside the loop for i that binds it")
