"""VectorizeLoop on TVM's vectorizer test cases: Before (ir_builder) against the expected IR.

Each case compares the whole function the pass returns with the expected one:
the pass adds nothing but the rewritten body (remarks travel beside the IR).
"""

import pytest

import tir
import transform
from tir import ir_builder
from tir.expr import Broadcast, BufferLoad, Call, Ramp
from tir.stmt import BufferStore, For, ForKind, IfThenElse, LetStmt

F32 = "float32"


def vectorize(func: tir.PrimFunc) -> tir.PrimFunc:
    return transform.VectorizeLoop()(tir.IRModule.from_expr(func))["main"]


def vectorize_with_remarks(func: tir.PrimFunc) -> tuple[tir.PrimFunc, list]:
    with transform.collect_remarks() as remarks:
        after = vectorize(func)
    return after, remarks


def assert_vectorized(after: tir.PrimFunc, before: tir.PrimFunc, body) -> None:
    """``after`` is ``before`` with ``body``: same params, buffers and attributes."""
    tir.assert_structural_equal(after, before.with_body(body))


def ramp(base, lanes=4, stride=1):
    return Ramp(base, stride, lanes)


def f32(value, lanes=None):
    c = tir.const(value, F32)
    return c if lanes is None else Broadcast(c, lanes)


def test_vectorize_loop():
    n = tir.var("n")
    ib = ir_builder.create()
    A = ib.pointer(F32, name="A")
    with ib.for_range(0, n, name="i"), ib.for_range(0, 4, kind="vectorize", name="j") as j:
        A[j] = tir.const(1, F32)
    before = tir.PrimFunc([A, n], ib.get())
    assert isinstance(before.body.body, For)

    a = A.asbuffer()
    i = tir.var("i")
    expected = For(i, 0, n, ForKind.SERIAL, BufferStore(a, f32(1, 4), [ramp(0)]))
    assert_vectorized(vectorize(before), before, expected)


def test_vector_add_walkthrough():
    """Seed 004's example: A[i*4 + j] += 1 becomes one 4-lane load, add and store."""
    n = tir.var("n")
    ib = ir_builder.create()
    A = ib.pointer(F32, name="A")
    with ib.for_range(0, n, name="i") as i, ib.for_range(0, 4, kind="vectorize", name="j") as j:
        A[i * 4 + j] += tir.const(1, F32)
    before = tir.PrimFunc([A, n], ib.get())
    after = vectorize(before)

    a, i = A.asbuffer(), tir.var("i")
    index = ramp(i * 4)
    expected = For(i, 0, n, ForKind.SERIAL,
                   BufferStore(a, BufferLoad(a, [index]) + f32(1, 4), [index]))
    assert_vectorized(after, before, expected)


def test_vectorize_vector_buffer():
    """A float32x4 buffer in a 4-lane loop: 16 lanes stored."""
    n = tir.var("n")
    ib = ir_builder.create()
    A = ib.pointer("float32x4", name="A")
    with ib.for_range(0, n, name="i"), ib.for_range(0, 4, kind="vectorize", name="j") as j:
        A[j] = tir.const(1, "float32x4")
    before = tir.PrimFunc([A, n], ib.get())
    after = vectorize(before)

    i = tir.var("i")
    expected = For(i, 0, n, ForKind.SERIAL, BufferStore(A.asbuffer(), f32(1, 16), [ramp(0)]))
    assert_vectorized(after, before, expected)
    assert after.body.body.value.dtype == "float32x16"


def test_vectorize_with_if():
    n, x = tir.var("n"), tir.var("x")
    ib = ir_builder.create()
    A = ib.pointer(F32, name="A")
    with ib.for_range(0, 4, kind="vectorize", name="i") as i:
        with ib.if_scope(x < n):
            A[i] = A[i] + tir.const(1, F32)
        with ib.else_scope(), ib.if_scope(i < n):
            A[i] = tir.const(2, F32)
    before = tir.PrimFunc([A, n, x], ib.get())
    after = vectorize(before)

    a, i_s = A.asbuffer(), tir.var("i_s")
    expected = IfThenElse(
        x < n,
        BufferStore(a, BufferLoad(a, [ramp(0)]) + f32(1, 4), [ramp(0)]),
        For(i_s, 0, 4, ForKind.SERIAL,
            IfThenElse(i_s < n, BufferStore(a, f32(2), [i_s]))),
    )
    assert_vectorized(after, before, expected)


def test_vectorize_with_if_cond_int64():
    """An int64 loop split by 4 with a guard on the index: the if_then_else is scalarized."""
    m = tir.size_var("m", "int64")
    A = tir.decl_buffer((m,), F32, name="A")
    B = tir.decl_buffer((m,), F32, name="B")
    ib = ir_builder.create()
    a, b = ib.buffer_ptr(A), ib.buffer_ptr(B)
    with ib.for_range(0, (m + 3) // 4, name="x", dtype="int64") as x:
        with ib.for_range(0, 4, kind="vectorize", name="y", dtype="int64") as y:
            k = x * 4 + y
            b[k] = tir.if_then_else(k < 2, a[k], a[k] * tir.const(2, F32))
    before = tir.PrimFunc([A, B], ib.get())
    after, remarks = vectorize_with_remarks(before)

    inner = after.body.body
    assert isinstance(inner, For) and inner.kind == ForKind.SERIAL
    assert inner.loop_var.dtype == "int64" and inner.extent.dtype == "int64"
    assert "if_then_else condition depends on y" in str(remarks[0])


def test_vectorize_let():
    v = tir.Var("v", F32)
    ib = ir_builder.create()
    A = ib.pointer(F32, name="A")
    with ib.for_range(0, 4, kind="vectorize", name="i") as i:
        ib.emit(lambda body: LetStmt(v, A[i] + tir.const(1, F32), body))
        A[i] = v + tir.const(2, F32)
    before = tir.PrimFunc([A], ib.get())
    after = vectorize(before)

    a, v4 = A.asbuffer(), tir.Var("v", "float32x4")
    expected = LetStmt(v4, BufferLoad(a, [ramp(0)]) + f32(1, 4),
                       BufferStore(a, v4 + f32(2, 4), [ramp(0)]))
    assert_vectorized(after, before, expected)
    assert after.body.value.dtype == "float32x4"


@pytest.mark.parametrize("compare", [lambda i, n: i <= n, lambda i, n: i >= n],
                         ids=["le", "ge"])
def test_vectorize_with_le_ge_cond(compare):
    n = tir.var("n")
    ib = ir_builder.create()
    A = ib.pointer(F32, name="A")
    with ib.for_range(0, 4, kind="vectorize", name="i") as i, ib.if_scope(compare(i, n)):
        A[i] = A[i] + tir.const(1, F32)
    before = tir.PrimFunc([A, n], ib.get())
    after, [remark] = vectorize_with_remarks(before)

    assert isinstance(after.body, For) and after.body.kind == ForKind.SERIAL
    assert (remark.outcome, remark.reason) == ("scalarized", "if condition depends on i")


def test_vectorize_if_then_else_scalarize():
    ib = ir_builder.create()
    A = ib.pointer(F32, name="A")
    with ib.for_range(0, 4, kind="vectorize", name="i") as i:
        A[i] = tir.if_then_else(i > 0, A[i] + tir.const(1, F32), A[i])
    before = tir.PrimFunc([A], ib.get())
    after = vectorize(before)

    a, i_s = A.asbuffer(), tir.var("i_s")
    expected = For(i_s, 0, 4, ForKind.SERIAL, BufferStore(
        a, tir.if_then_else(i_s > 0, BufferLoad(a, [i_s]) + f32(1), BufferLoad(a, [i_s])), [i_s]))
    assert_vectorized(after, before, expected)


def test_vectorize_if_then_else_vector():
    n = tir.var("n")
    ib = ir_builder.create()
    A = ib.pointer(F32, name="A")
    with ib.for_range(0, n, name="i") as i, ib.for_range(0, 4, kind="vectorize", name="j") as j:
        A[i * 4 + j] = tir.if_then_else(i > 0, A[i * 4 + j], tir.const(0, F32))
    before = tir.PrimFunc([A, n], ib.get())
    after = vectorize(before)

    a, i = A.asbuffer(), tir.var("i")
    value = Call("float32x4", "tir.if_then_else", [i > 0, BufferLoad(a, [ramp(i * 4)]), f32(0, 4)])
    expected = For(i, 0, n, ForKind.SERIAL, BufferStore(a, value, [ramp(i * 4)]))
    assert_vectorized(after, before, expected)
    assert isinstance(after.body.body.value.args[2], Broadcast)


def test_vectorize_let_if_then_else():
    result = tir.var("result")
    ib = ir_builder.create()
    with ib.for_range(0, 4, kind="vectorize", name="i") as i, ib.if_scope(i < 2):
        ib.emit(LetStmt(result, tir.if_then_else(i < 1, 1, 2), tir.Evaluate(0)))
    before = tir.PrimFunc([], ib.get())
    after = vectorize(before)

    i_s = tir.var("i_s")
    expected = For(i_s, 0, 4, ForKind.SERIAL, IfThenElse(
        i_s < 2, LetStmt(result, tir.if_then_else(i_s < 1, 1, 2), tir.Evaluate(0))))
    assert_vectorized(after, before, expected)


def test_vectorize_while_fail():
    n, num_iter = 64, 10
    A = tir.decl_buffer((n,), F32, name="A")
    B = tir.decl_buffer((n,), F32, name="B")
    C = tir.decl_buffer((n,), F32, name="C")
    ib = ir_builder.create()
    a, b, c = ib.buffer_ptr(A), ib.buffer_ptr(B), ib.buffer_ptr(C)
    i = ib.allocate("int32", (1,), name="i", scope="local")
    i[0] = 0
    with ib.for_range(0, n, name="j") as j:
        c[j] = tir.const(0, F32)
    with ib.for_range(0, n, kind="vectorize", name="j") as j, ib.while_loop(i[0] < num_iter):
        c[j] += a[j] + b[j]
        i[0] += 1
    func = tir.PrimFunc([A, B, C], ib.get())
    with pytest.raises(transform.VectorizeError,
                       match="loop j: while loop inside a vectorized loop is not supported"):
        vectorize(func)


def test_vectorize_dtype_mismatch():
    """An int64 loop var with an int64 constant: the ramp is int64 throughout."""
    A = tir.decl_buffer((4,), "int64", name="A")
    i = tir.var("i", "int64")
    big = tir.IntImm("int64", 2**31 - 1)
    before = tir.PrimFunc([A], For(i, tir.IntImm("int64", 0), tir.IntImm("int64", 4),
                                   ForKind.VECTORIZED, BufferStore(A, big + i, [i])))
    after = vectorize(before)
    index = Ramp(tir.IntImm("int64", 0), tir.IntImm("int64", 1), 4)
    assert_vectorized(after, before, BufferStore(A, Ramp(big, tir.IntImm("int64", 1), 4),
                                                 [index]))


def test_vectorize_with_reinterpret():
    A = tir.decl_buffer((16,), "int32", name="A")
    B = tir.decl_buffer((16,), F32, name="B")
    i = tir.var("i")
    before = tir.PrimFunc([A, B], For(i, 0, 16, ForKind.VECTORIZED,
                                      BufferStore(B, tir.reinterpret(F32, A[i]), [i])))
    expected = BufferStore(B, Call("float32x16", "tir.reinterpret", [BufferLoad(A, [ramp(0, 16)])]),
                           [ramp(0, 16)])
    assert_vectorized(vectorize(before), before, expected)


ARITH = [tir.Mul, tir.Add, tir.Sub, tir.Div, tir.Mod, tir.FloorDiv, tir.FloorMod, tir.Min, tir.Max]
COMPARE = [tir.EQ, tir.LT, tir.LE, tir.GE, tir.GT, tir.NE]


@pytest.mark.parametrize("node", ARITH + COMPARE, ids=lambda n: n.__name__)
def test_vectorize_binary(node):
    out_dtype = "bool" if node in COMPARE else F32
    A = tir.decl_buffer((25,), out_dtype, name="A")
    B = tir.decl_buffer((25,), F32, name="B")
    j = tir.var("j")
    before = tir.PrimFunc([A, B], For(j, 0, 4, ForKind.VECTORIZED,
                                      BufferStore(A, node(f32(3), B[j]), [j])))
    expected = BufferStore(A, node(f32(3, 4), BufferLoad(B, [ramp(0)])), [ramp(0)])
    assert_vectorized(vectorize(before), before, expected)


@pytest.mark.parametrize("node", [tir.And, tir.Or], ids=lambda n: n.__name__)
def test_vectorize_logical(node):
    A = tir.decl_buffer((25,), "bool", name="A")
    B = tir.decl_buffer((25,), "bool", name="B")
    j = tir.var("j")
    true = tir.const(True)
    before = tir.PrimFunc([A, B], For(j, 0, 4, ForKind.VECTORIZED,
                                      BufferStore(A, node(true, B[j]), [j])))
    expected = BufferStore(A, node(Broadcast(true, 4), BufferLoad(B, [ramp(0)])), [ramp(0)])
    assert_vectorized(vectorize(before), before, expected)


def test_vectorize_select():
    A = tir.decl_buffer((25,), F32, name="A")
    B = tir.decl_buffer((25,), F32, name="B")
    j = tir.var("j")
    true = tir.const(True)
    before = tir.PrimFunc([A, B], For(j, 0, 4, ForKind.VECTORIZED,
                                      BufferStore(A, tir.Select(true, A[j], B[j]), [j])))
    expected = BufferStore(A, tir.Select(Broadcast(true, 4), BufferLoad(A, [ramp(0)]),
                                         BufferLoad(B, [ramp(0)])), [ramp(0)])
    assert_vectorized(vectorize(before), before, expected)


def test_vectorize_cast():
    A = tir.decl_buffer((25,), "int32", name="A")
    B = tir.decl_buffer((25,), F32, name="B")
    j = tir.var("j")
    before = tir.PrimFunc([A, B], For(j, 0, 4, ForKind.VECTORIZED,
                                      BufferStore(A, tir.Cast("int32", B[j]), [j])))
    expected = BufferStore(A, tir.Cast("int32x4", BufferLoad(B, [ramp(0)])), [ramp(0)])
    assert_vectorized(vectorize(before), before, expected)


def _loop_with_extent(extent):
    A = tir.decl_buffer((25,), "int32", name="A")
    j = tir.var("j")
    return tir.PrimFunc([A], For(j, 0, extent, ForKind.VECTORIZED, BufferStore(A, 3, [j])))


def test_illegal_extent():
    n = tir.var("n")
    with pytest.raises(transform.VectorizeError,
                       match="main: cannot vectorize loop j: extent n is not a constant"):
        vectorize(_loop_with_extent(n))


@pytest.mark.parametrize("extent", [0, -2])
def test_extent_below_one(extent):
    with pytest.raises(ValueError, match=f"loop j: extent {extent} is below 1"):
        vectorize(_loop_with_extent(extent))


def test_scalable_extent_needs_sve():
    func = _loop_with_extent(4 * tir.vscale())
    with pytest.raises(transform.VectorizeError, match="scalable vectors need an SVE target"):
        vectorize(func)


def test_vectorize_error_names_loop_and_reason():
    err = transform.VectorizeError("k", "extent 0 is below 1", "f")
    assert isinstance(err, ValueError)
    assert (err.func_name, err.loop_var, err.reason) == ("f", "k", "extent 0 is below 1")
    assert str(err) == "f: cannot vectorize loop k: extent 0 is below 1"
