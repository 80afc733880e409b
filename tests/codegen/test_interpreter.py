"""Tests for the reference interpreter backend (codegen.interp.backend)."""

import numpy as np
import pytest

import codegen
import tir
from codegen.interp.backend import build_interpreter
from tir import dtype as dt
from tir import ir_builder


def run_expr(expr, *params_and_args):
    """Evaluate ``expr`` by storing it into an output buffer; returns the stored value(s)."""
    element, lanes = dt.element_of(expr.dtype), dt.lanes_of(expr.dtype)
    out = tir.decl_buffer((lanes,), element, "out")
    index = tir.Ramp(0, 1, lanes) if lanes > 1 else 0
    params = [p for p, _ in params_and_args]
    func = tir.PrimFunc([out] + params, tir.BufferStore(out, expr, [index]))
    result = np.zeros(lanes, element)
    build_interpreter(func)(result, *[a for _, a in params_and_args])
    return result if lanes > 1 else result[0]


def i32(v):
    return tir.const(v, "int32")


# ---------------------------------------------------------------- expressions


@pytest.mark.parametrize(
    "make, expected",
    [
        (lambda: tir.truncdiv(i32(-7), tir.var("x")), -3),
        (lambda: tir.truncmod(i32(-7), tir.var("x")), -1),
        (lambda: tir.floordiv(i32(-7), tir.var("x")), -4),
        (lambda: tir.floormod(i32(-7), tir.var("x")), 1),
        (lambda: tir.min(tir.var("x"), i32(-1)), -1),
        (lambda: tir.max(tir.var("x"), i32(-1)), 2),
        (lambda: tir.var("x") * i32(2**30), -2**31),  # int32 wraps around
    ],
)
def test_integer_arithmetic(make, expected):
    expr = make()
    x = next(v for v in _vars(expr) if v.name == "x")
    assert run_expr(expr, (x, 2)) == expected


def _vars(expr):
    found = []
    tir.stmt_functor.post_order_visit(
        expr, lambda n: found.append(n) if isinstance(n, tir.Var) else None
    )
    return found


def test_casts_follow_llvm():
    x = tir.var("x", "float32")
    assert run_expr(tir.Cast("int32", x), (x, -2.75)) == -2  # truncation towards zero
    k = tir.var("k", "int32")
    assert run_expr(tir.Cast("int8", k), (k, 300)) == 44  # wrap-around
    assert run_expr(tir.Cast("uint8", k), (k, -1)) == 255
    assert run_expr(tir.Cast("bool", k), (k, 7))


def test_vectors_ramp_broadcast_shuffle():
    x = tir.var("x")
    ramp = tir.Ramp(x, 3, 4)
    np.testing.assert_array_equal(run_expr(ramp, (x, 1)), [1, 4, 7, 10])
    both = tir.Shuffle([ramp, tir.Broadcast(x * 0 - 1, 4)], [7, 0, 5, 3])
    np.testing.assert_array_equal(run_expr(both, (x, 1)), [-1, 1, -1, 10])
    cond = tir.Ramp(x, 1, 4) < tir.Broadcast(i32(3), 4)
    picked = tir.Select(cond, tir.Broadcast(i32(1), 4), tir.Broadcast(i32(0), 4))
    np.testing.assert_array_equal(run_expr(picked, (x, 1)), [1, 1, 0, 0])


def test_intrinsics_and_reinterpret():
    x = tir.var("x", "float32")
    assert run_expr(tir.exp(x), (x, 1.0)) == pytest.approx(np.e, rel=1e-6)
    assert run_expr(tir.sqrt(x), (x, 2.0)) == pytest.approx(2**0.5, rel=1e-6)
    assert run_expr(tir.floor(x), (x, -1.5)) == -2.0
    assert run_expr(tir.round(x), (x, 2.5)) == 2.0  # halves to even, as np.round
    assert run_expr(tir.round(x), (x, -3.5)) == -4.0
    assert run_expr(tir.nearbyint(x), (x, 2.5)) == 2.0
    assert run_expr(tir.fma(x, x, x), (x, 3.0)) == 12.0
    assert run_expr(tir.pow(x, tir.const(2.0, "float32")), (x, 3.0)) == 9.0
    assert run_expr(tir.abs(x), (x, -3.0)) == 3.0
    assert run_expr(tir.reinterpret("int32", x), (x, 1.0)) == 0x3F800000
    k = tir.var("k", "uint32")
    assert run_expr(tir.popcount(k), (k, 0xF0F0)) == 8
    s = tir.var("s")
    assert run_expr(tir.shift_right(s, i32(1)), (s, -8)) == -4  # arithmetic shift


def test_let_and_if_then_else_evaluates_one_branch():
    x = tir.var("x")
    buf = tir.decl_buffer((2,), "int32", "buf")
    v = tir.Var("v", "int32")
    expr = tir.Let(v, x + 1, tir.if_then_else(x < 2, buf[x], v))
    out = tir.decl_buffer((1,), "int32", "out")
    func = tir.PrimFunc([out, buf, x], tir.BufferStore(out, expr, [0]))
    result, data = np.zeros(1, "int32"), np.array([10, 20], "int32")
    build_interpreter(func)(result, data, 1)
    assert result[0] == 20
    build_interpreter(func)(result, data, 100)  # buf[100] would be out of bounds
    assert result[0] == 101


# ---------------------------------------------------------------- statements


def test_predicated_load_and_store():
    A = tir.decl_buffer((4,), "float32", "A")
    B = tir.decl_buffer((4,), "float32", "B")
    mask = tir.Ramp(i32(0), 1, 8) < tir.Broadcast(i32(4), 8)
    load = tir.BufferLoad(A, [tir.Ramp(i32(0), 1, 8)], predicate=mask)
    store = tir.BufferStore(B, load + tir.Broadcast(tir.const(1.0), 8),
                            [tir.Ramp(i32(0), 1, 8)], predicate=mask)
    a, b = np.arange(4, dtype="float32"), np.zeros(4, "float32")
    build_interpreter(tir.PrimFunc([A, B], store))(a, b)
    np.testing.assert_array_equal(b, a + 1)


@pytest.mark.parametrize("on", [0, 1])
def test_one_lane_predicate_reads_and_writes_nothing_when_off(on):
    """A scalar predicated access (IfConvertVectorLoops makes them) is skipped when off,
    out of bounds or not: a masked-off load reads 0, as the LLVM build's does."""
    A = tir.decl_buffer((4,), "float32", name="A")
    B = tir.decl_buffer((4,), "float32", name="B")
    p = tir.var("p", "int32")
    index = 7 - 6 * on  # out of bounds exactly when the predicate is off
    load = tir.BufferLoad(A, [tir.const(index, "int32")], predicate=p > 0)
    body = tir.SeqStmt([
        tir.BufferStore(B, load + tir.const(1.0, "float32"), [tir.const(0, "int32")]),
        tir.BufferStore(B, tir.const(2.0, "float32"), [tir.const(index + 1, "int32")],
                        predicate=p > 0)])
    func = tir.PrimFunc([p, A, B], body)
    outs = []
    for target in ("interp", "llvm"):
        a, b = np.arange(4, dtype="float32"), np.zeros(4, "float32")
        codegen.build(func, target=target)["main"](on, a, b)
        outs.append(b)
    np.testing.assert_array_equal(outs[0], outs[1])
    assert outs[0][0] == (2.0 if on else 1.0)


def test_allocate_while_if_and_assert():
    ib = tir.ir_builder.create()
    out = ib.pointer("int32", name="out")
    n = tir.var("n")
    tmp = ib.allocate("int32", (1,), name="tmp")
    tmp[0] = 0
    with ib.while_loop(tmp[0] < n):
        with ib.if_scope(tir.floormod(tmp[0], 2) == 0):
            out[tmp[0]] = tmp[0]
        with ib.else_scope():
            out[tmp[0]] = -tmp[0]
        tmp[0] = tmp[0] + 1
    ib.emit(tir.AssertStmt(tmp[0] == n, "loop did not finish", tir.Evaluate(0)))
    func = tir.PrimFunc([out, n], ib.get())
    result = np.full(5, 99, "int32")
    build_interpreter(func)(result, 4)
    np.testing.assert_array_equal(result, [0, -1, 2, -3, 99])


def test_assert_raises_runtime_error_with_message():
    n = tir.var("n")
    body = tir.AssertStmt(n > 0, "n must be positive", tir.Evaluate(0))
    with pytest.raises(RuntimeError, match="main: assertion failed: n must be positive"):
        build_interpreter(tir.PrimFunc([n], body))(0)


def test_strided_buffer_with_elem_offset_views_memory():
    A = tir.decl_buffer((16,), "float32", "A")
    view = tir.decl_buffer((2, 3), "float32", "V", data=A.data, strides=[5, 1], elem_offset=2)
    ib = tir.ir_builder.create()
    V = ib.buffer_ptr(view)
    with ib.for_range(0, 2, name="i") as i, ib.for_range(0, 3, name="j") as j:
        V[i, j] = tir.Cast("float32", i * 10 + j)
    a = np.zeros(16, "float32")
    build_interpreter(tir.PrimFunc([A], ib.get()))(a)
    assert a[2:5].tolist() == [0, 1, 2] and a[7:10].tolist() == [10, 11, 12]
    assert a.sum() == 36


def test_out_of_bounds_raises_index_error_naming_buffer():
    ib = tir.ir_builder.create()
    A = ib.pointer("float32", name="A")
    with ib.for_range(0, 5, name="i") as i:
        A[i] = tir.const(0.0)
    func = tir.PrimFunc([A], ib.get())
    with pytest.raises(IndexError, match=r"buffer 'A': index 4 is out of bounds for extent 4"):
        build_interpreter(func)(np.zeros(4, "float32"))


def test_vector_out_of_bounds_and_2d():
    M = tir.decl_buffer((2, 3), "int32", "M")
    store = tir.BufferStore(M, tir.Broadcast(i32(1), 4), [1, tir.Ramp(i32(0), 1, 4)])
    with pytest.raises(IndexError, match=r"'M': index 3 in dimension 1 .* \[1, \[0, 1, 2, 3\]\]"):
        build_interpreter(tir.PrimFunc([M], store))(np.zeros((2, 3), "int32"))


def test_return_value_and_bad_arguments():
    x = tir.var("x")
    func = tir.PrimFunc([x], tir.Evaluate(tir.op.ret(x * 2)))
    assert build_interpreter(func)(21) == 42
    with pytest.raises(TypeError, match=r"main: expects 1 arguments \(x\), got 0"):
        build_interpreter(func)()


def test_module_interface():
    x = tir.var("x")
    mod = tir.IRModule({"main": tir.PrimFunc([x], tir.Evaluate(0))})
    built = build_interpreter(mod)
    assert built["main"].module is built and built.function_names == ["main"]
    assert "def main" in built.get_source("tir")
    with pytest.raises(ValueError, match="no 'll' source"):
        built.get_source("ll")
    with pytest.raises(KeyError, match="no function 'other'"):
        built["other"]
    with pytest.raises(TypeError, match="expected a PrimFunc or an IRModule"):
        build_interpreter("main")


def test_vector_element_buffer_takes_a_lanes_dimension():
    ib = tir.ir_builder.create()
    A, B = ib.pointer("float32x4", name="A"), ib.pointer("float32x4", name="B")
    with ib.for_range(0, 3, name="i") as i:
        B[i] = A[i] * tir.Broadcast(tir.const(2.0), 4)
    a, b = np.arange(12, dtype="float32").reshape(3, 4), np.zeros((3, 4), "float32")
    build_interpreter(tir.PrimFunc([A, B], ib.get()))(a, b)
    np.testing.assert_array_equal(b, a * 2)


def test_scalable_vectors_use_the_chosen_vscale():
    A = tir.decl_buffer((64,), "float32", "A")
    lanes = 4 * tir.vscale()
    store = tir.BufferStore(A, tir.Broadcast(tir.const(1.0), lanes), [tir.Ramp(i32(0), 1, lanes)])
    a = np.zeros(64, "float32")
    build_interpreter(tir.PrimFunc([A], store), vscale=2)(a)
    assert a.sum() == 8


def test_float16_and_bool_buffers():
    H = tir.decl_buffer((2,), "float16", "H")
    M = tir.decl_buffer((2,), "bool", "M")
    body = tir.SeqStmt([
        tir.BufferStore(H, H[1] * tir.const(3.0, "float16"), [0]),
        tir.BufferStore(M, tir.Not(M[1]), [0]),
    ])
    h, m = np.array([0, 1.5], "float16"), np.array([False, False])
    build_interpreter(tir.PrimFunc([H, M], body))(h, m)
    assert h[0] == np.float16(4.5) and m.tolist() == [True, False]


def test_poisoned_allocation_exposes_uninitialised_reads():
    ib = tir.ir_builder.create()
    out = ib.pointer("float32", name="out")
    tmp = ib.allocate("float32", (2,), name="tmp")
    out[0] = tmp[1]
    func = tir.PrimFunc([out], ib.get())
    result = np.ones(1, "float32")
    build_interpreter(func)(result)
    assert result[0] == 0
    build_interpreter(func, poison_allocations=True)(result)
    assert np.isnan(result[0])


def test_extern_math_functions():
    x = tir.var("x", "float32")
    assert run_expr(tir.call_pure_extern("float32", "sqrtf", x), (x, 4.0)) == 2.0
    assert run_expr(tir.call_extern("float32", "exp", x), (x, 0.0)) == 1.0


def test_unknown_call_and_integer_division_by_zero():
    x = tir.var("x")
    with pytest.raises(ValueError, match="cannot call the extern function 'foo'"):
        run_expr(tir.call_extern("int32", "foo", x), (x, 1))
    with pytest.raises(ValueError, match="cannot evaluate a call of 'tir.address_of'"):
        run_expr(tir.call_intrin("int32", "tir.address_of", x), (x, 1))
    y = tir.var("y")
    with pytest.raises(ZeroDivisionError, match="integer division by zero"):
        run_expr(tir.floordiv(x, y), (x, 1), (y, 0))


def test_deep_expression_does_not_hit_the_recursion_limit():
    x = tir.var("x")
    expr = x
    for _ in range(5000):
        expr = tir.Add(expr, x)
    assert run_expr(expr, (x, 2)) == 10002


def test_externs_given_in_python_are_called_per_call_in_order():
    x = tir.decl_buffer((4,), "int32", name="x")
    i = tir.var("i")
    seen = []

    def clamp(v):
        seen.append(int(v))
        return min(int(v), 2)

    body = tir.For(i, 0, 4, tir.ForKind.SERIAL,
                   tir.BufferStore(x, tir.call_extern("int32", "clamp", x[i]), [i]))
    mod = build_interpreter(tir.PrimFunc([x], body), externs={"clamp": clamp})
    data = np.array([5, 1, 3, 0], dtype="int32")
    mod["main"](data)
    assert seen == [5, 1, 3, 0]
    np.testing.assert_array_equal(data, [2, 1, 2, 0])
    # The same through the public name README gives, codegen.build_interpreter.
    data = np.array([7, -1, 2, 9], dtype="int32")
    codegen.build_interpreter(tir.PrimFunc([x], body), externs={"clamp": clamp})["main"](data)
    np.testing.assert_array_equal(data, [2, -1, 2, 2])


@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")  # np.matrix itself
@pytest.mark.parametrize("target", ["llvm", "interp"])
def test_np_matrix_arguments_run_alike_on_both_backends(target):
    # np.matrix is an ndarray subclass that stays 2-D when reshaped; both backends
    # take it as the plain array it wraps (reads and writes go to its memory).
    n = tir.size_var("n")
    A = tir.decl_buffer((n, 8), "float32", name="A")
    B = tir.decl_buffer((n, 8), "float32", name="B")
    ib = tir.ir_builder.create()
    a, b = ib.buffer_ptr(A), ib.buffer_ptr(B)
    with ib.for_range(0, n, name="i") as i:
        with ib.for_range(0, 8, kind="vectorize", name="j") as j:
            b[i, j] = a[i, j] * tir.const(2.0, "float32") + tir.Cast("float32", i)
    x = np.asmatrix(np.arange(24, dtype="float32").reshape(3, 8))
    y = np.asmatrix(np.zeros((3, 8), "float32"))
    codegen.build(tir.PrimFunc([A, B], ib.get()), target=target)["main"](x, y)
    np.testing.assert_array_equal(np.asarray(y), np.asarray(x) * 2 + np.arange(3)[:, None])


def test_fma_of_an_overflowing_product_and_an_infinite_addend_is_the_addend():
    # The exact a * b is finite, so a * b - inf is -inf; rounding the product
    # first (to +inf) would give NaN. Found by the fuzzer (tirlite.fuzz seed 16316).
    ib = ir_builder.create()
    A = ib.pointer("float64", name="A")
    A[3] = tir.fma(A[0], A[1], A[2])
    func = tir.PrimFunc([A], ib.get())
    for target in ("interp", "llvm"):
        a = np.array([1e200, 1e200, -np.inf, 0.0])
        codegen.build(func, target=target)["main"](a)
        assert a[3] == -np.inf, target
