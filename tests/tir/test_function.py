"""PrimFunc and IRModule: params conversion, buffer_map, attributes and module access."""

import pytest

import tir
from tir import ir_builder


def _body(A):
    return tir.BufferStore(A, 1.0, [0])


def test_buffer_param_becomes_handle_plus_buffer_map():
    A = tir.decl_buffer((16,), "float32", "A")
    n = tir.var("n")
    func = tir.PrimFunc([A, n], _body(A))
    handle, scalar = func.params
    assert isinstance(handle, tir.Var) and handle.dtype == "handle" and handle.name == "A"
    assert scalar is n
    assert func.buffer_map[handle] is A and len(func.buffer_map) == 1
    assert func.ret_type is None and dict(func.attrs) == {}


def test_several_buffer_params():
    A = tir.decl_buffer((4,), "float32", "A")
    B = tir.decl_buffer((4,), "float32", "B")
    func = tir.PrimFunc([A, B], _body(A))
    a, b = func.params
    assert func.buffer_map[a] is A and func.buffer_map[b] is B


def test_ir_builder_pointer_param():
    ib = ir_builder.create()
    P = ib.pointer("int32", name="P")
    P[0] = 1
    func = tir.PrimFunc([P], ib.get())
    assert func.buffer_map[func.params[0]] is P.asbuffer()


def test_explicit_buffer_map():
    A = tir.decl_buffer((4,), "float32", "A")
    handle = tir.Var("a", "handle")
    func = tir.PrimFunc([handle], _body(A), buffer_map={handle: A})
    assert func.params == (handle,) and func.buffer_map[handle] is A


def test_param_and_buffer_map_errors():
    A = tir.decl_buffer((4,), "float32", "A")
    with pytest.raises(TypeError, match="PrimFunc: a param must be a Var or a Buffer, got int"):
        tir.PrimFunc([3], _body(A))
    stray = tir.Var("stray", "handle")
    with pytest.raises(ValueError, match="PrimFunc: buffer_map key stray is not a param"):
        tir.PrimFunc([tir.Var("a", "handle")], _body(A), buffer_map={stray: A})
    with pytest.raises(TypeError, match="buffer_map must map handle Vars to Buffers"):
        tir.PrimFunc([stray], _body(A), buffer_map={stray: 3})
    with pytest.raises(TypeError, match="PrimFunc: body must be a Stmt, got IntImm"):
        tir.PrimFunc([A], tir.const(1))


def test_with_attr_and_with_body():
    A = tir.decl_buffer((4,), "float32", "A")
    func = tir.PrimFunc([A], _body(A))
    g = func.with_attr("global_symbol", "add_one")
    assert g is not func and g.attrs["global_symbol"] == "add_one"
    assert "global_symbol" not in func.attrs
    h = g.with_attr({"target": "llvm", "tir.noalias": True})
    assert dict(h.attrs) == {"global_symbol": "add_one", "target": "llvm", "tir.noalias": True}
    assert h.params == func.params and h.buffer_map[h.params[0]] is A
    assert func.with_body(func.body) is func
    new_body = tir.Evaluate(0)
    k = func.with_body(new_body)
    assert k.body is new_body and k.params == func.params
    with pytest.raises(TypeError):
        func.attrs["x"] = 1  # attributes are a read-only view


def test_module_from_expr_and_access():
    A = tir.decl_buffer((4,), "float32", "A")
    func = tir.PrimFunc([A], _body(A))
    mod = tir.IRModule.from_expr(func)
    assert mod["main"] is func and "main" in mod and len(mod) == 1
    assert mod.functions == {"main": func}
    assert list(mod) == [("main", func)]
    assert tir.IRModule.from_expr(func, "f")["f"] is func
    with pytest.raises(KeyError, match=r"IRModule has no function 'other'; it has \['main'\]"):
        mod["other"]


def test_module_update_and_setitem():
    A = tir.decl_buffer((4,), "float32", "A")
    f1 = tir.PrimFunc([A], _body(A))
    f2 = f1.with_attr("k", 1)
    mod = tir.IRModule({"a": f1})
    mod.update_func("b", f2)
    mod["a"] = f2
    assert mod["a"] is f2 and mod["b"] is f2
    assert [name for name, _ in mod] == ["a", "b"]
    with pytest.raises(TypeError, match="IRModule: 'c' must be a PrimFunc, got int"):
        mod.update_func("c", 3)


def test_module_iteration_tolerates_updates():
    A = tir.decl_buffer((4,), "float32", "A")
    f1 = tir.PrimFunc([A], _body(A))
    mod = tir.IRModule({"a": f1, "b": f1})
    for name, func in mod:
        mod[name] = func.with_attr("seen", True)
    assert all(f.attrs["seen"] for _, f in mod)


def test_with_functions_keeps_attrs():
    A = tir.decl_buffer((4,), "float32", "A")
    f1 = tir.PrimFunc([A], _body(A))
    mod = tir.IRModule({"a": f1}, attrs={"k": 1})
    other = mod.with_functions({"z": f1})
    assert other.attrs == {"k": 1} and list(other.functions) == ["z"]


def test_a_buffer_listed_twice_is_refused():
    # Codegen binds a buffer's data var to one pointer: the other argument was ignored.
    A = tir.decl_buffer((4,), "float32", "A")
    with pytest.raises(ValueError, match=r"buffer 'A' is listed twice among the params "
                                         r"\(positions 0 and 2\).*tir.decl_buffer"):
        tir.PrimFunc([A, tir.var("n"), A], _body(A))
    view = tir.decl_buffer((2, 2), "float32", "V", data=A.data)
    with pytest.raises(ValueError, match="buffers 'A' and 'V' share the data var 'A'"):
        tir.PrimFunc([A, view], _body(A))
    handle = tir.Var("a", "handle")
    with pytest.raises(ValueError, match="listed twice"):
        tir.PrimFunc([A, handle], _body(A), buffer_map={handle: A})


def test_params_may_alias_reads_the_noalias_attribute():
    A = tir.decl_buffer((4,), "float32", "A")
    func = tir.PrimFunc([A], _body(A))
    assert not func.params_may_alias  # tirlite's default: buffer params do not alias
    assert func.with_attr("tir.noalias", False).params_may_alias
    assert not func.with_attr("tir.noalias", True).params_may_alias
    assert func.with_attr("tir.noalias", tir.const(False, "bool")).params_may_alias
