"""VectorizeLoop on scalable extents: the ``[scalable]`` cases of TVM's vectorizer tests.

TVM parametrizes its vectorizer tests over ``(4, x86 target)`` and
``(T.vscale() * 4, SVE target)``; each case here runs both, so the fixed
and scalable paths are held to the same expected IR. The target comes from
an entered ``codegen.Target`` (TVM's ``with tvm.target.Target(...)``), the
function's ``"target"`` attribute or an ``AttrStmt("target")``.
"""

import pytest

import tir
import transform
from codegen import Target
from tir.expr import Broadcast, BufferLoad, Call, Ramp
from tir.stmt import AttrStmt, BufferStore, For, ForKind, IfThenElse, LetStmt

F32 = "float32"
SIMPLE = "llvm -mtriple=x86_64-linux-gnu"
SVE = "llvm -mtriple=aarch64-linux-gnu -mattr=+v8.2a,+sve"
VL4 = tir.vscale() * 4
BOTH = pytest.mark.parametrize("extent, target", [(4, SIMPLE), (VL4, SVE)],
                               ids=["fixed", "scalable"])


def vectorize(func: tir.PrimFunc, target: str | None = None) -> tir.PrimFunc:
    mod = tir.IRModule.from_expr(func)
    if target is None:
        return transform.VectorizeLoop()(mod)["main"]
    with Target(target):
        return transform.VectorizeLoop()(mod)["main"]


def assert_vectorized(after: tir.PrimFunc, before: tir.PrimFunc, body) -> None:
    tir.assert_structural_equal(after, before.with_body(body))


def ramp(base, extent):
    return Ramp(base, 1, extent)


def f32(value, lanes=None):
    c = tir.const(value, F32)
    return c if lanes is None else Broadcast(c, lanes)


def lanes_dtype(element: str, extent) -> str:
    if isinstance(extent, int):
        return f"{element}x{extent}"
    return f"{element}xvscalex{tir.expr.scalable_factor(extent)}"


def loop(var, extent, body, kind=ForKind.VECTORIZED):
    return For(var, 0, extent, kind, body)


@BOTH
def test_vectorize_loop(extent, target):
    A = tir.decl_buffer((16,), F32, name="A")
    j = tir.var("j")
    before = tir.PrimFunc([A], loop(j, extent, BufferStore(A, f32(1), [j])))
    after = vectorize(before, target)
    assert_vectorized(after, before, BufferStore(A, f32(1, extent), [ramp(0, extent)]))


def test_scalable_loop_dtypes_are_scalable():
    A = tir.decl_buffer((16,), F32, name="A")
    j = tir.var("j")
    after = vectorize(tir.PrimFunc([A], loop(j, VL4, BufferStore(A, f32(1), [j]))), SVE)
    assert after.body.value.dtype == "float32xvscalex4"
    assert after.body.indices[0].dtype == "int32xvscalex4"


def _store_ones(index, lanes):
    A = tir.decl_buffer((25,), F32, name="A")
    j = tir.var("j")
    return A, j, lambda extent: tir.PrimFunc(
        [A], loop(j, extent, BufferStore(A, Broadcast(f32(1), lanes), [index(j)])))


def test_vectorize_vector_scalable_error():
    A = tir.decl_buffer((25,), F32, name="A")
    j = tir.var("j")
    before = tir.PrimFunc([A], loop(j, VL4, BufferStore(A, f32(1, 4), [ramp(j * 4, 4)])))
    with pytest.raises(transform.VectorizeError, match="cannot vectorize loop j: Creating "
                       "scalable vectors from existing vectors is not supported."):
        vectorize(before, SVE)


def test_vectorize_vector_scalable_error2():
    A = tir.decl_buffer((25,), "float32xvscalex4", name="A")
    j = tir.var("j")
    before = tir.PrimFunc([A], loop(j, 4, BufferStore(A, f32(1, VL4), [j])))
    with pytest.raises(transform.VectorizeError, match="Vectorizing over scalable buffer "
                       "elements is not supported in vectorizer."):
        vectorize(before)


def test_vectorize_vector_scalable_error3():
    A = tir.decl_buffer((25,), F32, name="A")
    j = tir.var("j")
    before = tir.PrimFunc([A], loop(j, 4, BufferStore(A, f32(1, VL4), [ramp(j * VL4, VL4)])))
    with pytest.raises(transform.VectorizeError, match="cannot vectorize loop j: Vectorizing "
                       "over existing scalable vectors is not supported."):
        vectorize(before, SVE)


def test_vectorize_vector_scalable_error4():
    A = tir.decl_buffer((25,), F32, name="A")
    j = tir.var("j")
    before = tir.PrimFunc([A], loop(j, VL4, BufferStore(A, f32(1, VL4), [ramp(j * VL4, VL4)])))
    with pytest.raises(transform.VectorizeError, match="Creating scalable vectors from "
                       "existing vectors is not supported."):
        vectorize(before, SVE)


def _if_program(extent):
    A = tir.decl_buffer((25,), F32, name="A")
    n, x, i = tir.var("n"), tir.var("x"), tir.var("i")
    body = IfThenElse(x < n, BufferStore(A, A[i] + f32(1), [i]),
                      IfThenElse(i < n, BufferStore(A, f32(2), [i])))
    return tir.PrimFunc([A, n, x], loop(i, extent, body)), A, n, x


def test_vectorize_with_if():
    before, A, n, x = _if_program(4)
    i_s = tir.var("i_s")
    expected = IfThenElse(
        x < n, BufferStore(A, BufferLoad(A, [ramp(0, 4)]) + f32(1, 4), [ramp(0, 4)]),
        For(i_s, 0, 4, ForKind.SERIAL, IfThenElse(i_s < n, BufferStore(A, f32(2), [i_s]))))
    assert_vectorized(vectorize(before, SIMPLE), before, expected)


def test_vectorize_if_scalable_extent():
    """On SVE, buffer-level predication is on: the tail guard becomes get_active_lane_mask."""
    before, A, n, x = _if_program(VL4)
    mask = tir.op.get_active_lane_mask("uint1xvscalex4", 0, n)
    expected = IfThenElse(
        x < n, BufferStore(A, BufferLoad(A, [ramp(0, VL4)]) + f32(1, VL4), [ramp(0, VL4)]),
        BufferStore(A, f32(2, VL4), [ramp(0, VL4)], predicate=mask))
    assert_vectorized(vectorize(before, SVE), before, expected)


@BOTH
def test_vectorize_let(extent, target):
    A = tir.decl_buffer((25,), F32, name="A")
    v, i = tir.Var("v", F32), tir.var("i")
    before = tir.PrimFunc([A], loop(i, extent, LetStmt(
        v, A[i] + f32(1), BufferStore(A, v + f32(2), [i]))))
    after = vectorize(before, target)
    vv = tir.Var("v", lanes_dtype(F32, extent))
    expected = LetStmt(vv, BufferLoad(A, [ramp(0, extent)]) + f32(1, extent),
                       BufferStore(A, vv + f32(2, extent), [ramp(0, extent)]))
    assert_vectorized(after, before, expected)


@BOTH
@pytest.mark.parametrize("compare", [lambda i, n: i <= n, lambda i, n: i >= n],
                         ids=["le", "ge"])
def test_vectorize_with_le_ge_cond(extent, target, compare):
    """Not a tail guard (``<`` only): the loop is not vectorized, it stays a loop."""
    A = tir.decl_buffer((16,), F32, name="A")
    n, i = tir.var("n"), tir.var("i")
    before = tir.PrimFunc([A, n], loop(i, extent, IfThenElse(
        compare(i, n), BufferStore(A, A[i] + f32(1), [i]))))
    after = vectorize(before, target)
    assert isinstance(after.body, For) and after.body.kind == ForKind.SERIAL
    tir.assert_structural_equal(after.body.extent, tir.const(extent) if isinstance(
        extent, int) else extent)


@BOTH
def test_vectorize_if_then_else_scalarize(extent, target):
    A = tir.decl_buffer((25,), F32, name="A")
    i, i_s = tir.var("i"), tir.var("i_s")
    before = tir.PrimFunc([A], loop(i, extent, BufferStore(
        A, tir.if_then_else(i > 0, A[i] + f32(1), A[i]), [i])))
    expected = For(i_s, 0, extent, ForKind.SERIAL, BufferStore(
        A, tir.if_then_else(i_s > 0, A[i_s] + f32(1), A[i_s]), [i_s]))
    assert_vectorized(vectorize(before, target), before, expected)


@BOTH
def test_vectorize_if_then_else_vector(extent, target):
    A = tir.decl_buffer((25,), F32, name="A")
    n, i, j = tir.var("n"), tir.var("i"), tir.var("j")
    before = tir.PrimFunc([A, n], For(i, 0, n, ForKind.SERIAL, loop(j, extent, BufferStore(
        A, tir.if_then_else(i > 0, A[i * extent + j], f32(0)), [i * extent + j]))))
    value = Call(lanes_dtype(F32, extent), "tir.if_then_else",
                 [i > 0, BufferLoad(A, [ramp(i * extent, extent)]), f32(0, extent)])
    expected = For(i, 0, n, ForKind.SERIAL, BufferStore(A, value, [ramp(i * extent, extent)]))
    assert_vectorized(vectorize(before, target), before, expected)


@pytest.mark.parametrize("extent, vec, target", [(16, "float32x16", SIMPLE),
                                                 (tir.vscale() * 8, "float32xvscalex8", SVE)],
                         ids=["fixed", "scalable"])
def test_vectorize_with_reinterpret(extent, vec, target):
    A = tir.decl_buffer((16,), "int32", name="A")
    B = tir.decl_buffer((16,), F32, name="B")
    i = tir.var("i")
    before = tir.PrimFunc([A, B], loop(i, extent, BufferStore(B, tir.reinterpret(F32, A[i]), [i])))
    expected = BufferStore(B, Call(vec, "tir.reinterpret", [BufferLoad(A, [ramp(0, extent)])]),
                           [ramp(0, extent)])
    assert_vectorized(vectorize(before, target), before, expected)


ARITH = [tir.Mul, tir.Add, tir.Sub, tir.Div, tir.Mod, tir.FloorDiv, tir.FloorMod, tir.Min, tir.Max]
COMPARE = [tir.EQ, tir.LT, tir.LE, tir.GE, tir.GT, tir.NE]


@BOTH
@pytest.mark.parametrize("node", ARITH + COMPARE, ids=lambda n: n.__name__)
def test_vectorize_binary(node, extent, target):
    A = tir.decl_buffer((25,), "bool" if node in COMPARE else F32, name="A")
    B = tir.decl_buffer((25,), F32, name="B")
    j = tir.var("j")
    before = tir.PrimFunc([A, B], loop(j, extent, BufferStore(A, node(f32(3), B[j]), [j])))
    expected = BufferStore(A, node(f32(3, extent), BufferLoad(B, [ramp(0, extent)])),
                           [ramp(0, extent)])
    assert_vectorized(vectorize(before, target), before, expected)


@BOTH
@pytest.mark.parametrize("node", [tir.And, tir.Or], ids=lambda n: n.__name__)
def test_vectorize_logical(node, extent, target):
    A = tir.decl_buffer((25,), "bool", name="A")
    B = tir.decl_buffer((25,), "bool", name="B")
    j, true = tir.var("j"), tir.const(True)
    before = tir.PrimFunc([A, B], loop(j, extent, BufferStore(A, node(true, B[j]), [j])))
    expected = BufferStore(A, node(Broadcast(true, extent), BufferLoad(B, [ramp(0, extent)])),
                           [ramp(0, extent)])
    assert_vectorized(vectorize(before, target), before, expected)


@BOTH
def test_vectorize_select(extent, target):
    A = tir.decl_buffer((25,), F32, name="A")
    B = tir.decl_buffer((25,), F32, name="B")
    j, true = tir.var("j"), tir.const(True)
    before = tir.PrimFunc([A, B], loop(j, extent, BufferStore(
        A, tir.Select(true, A[j], B[j]), [j])))
    expected = BufferStore(A, tir.Select(Broadcast(true, extent), BufferLoad(A, [ramp(0, extent)]),
                                         BufferLoad(B, [ramp(0, extent)])), [ramp(0, extent)])
    assert_vectorized(vectorize(before, target), before, expected)


@pytest.mark.parametrize("extent, vec, target", [(4, "int32x4", SIMPLE),
                                                 (VL4, "int32xvscalex4", SVE)],
                         ids=["fixed", "scalable"])
def test_vectorize_cast(extent, vec, target):
    A = tir.decl_buffer((25,), "int32", name="A")
    B = tir.decl_buffer((25,), F32, name="B")
    j = tir.var("j")
    before = tir.PrimFunc([A, B], loop(j, extent, BufferStore(A, tir.Cast("int32", B[j]), [j])))
    expected = BufferStore(A, tir.Cast(vec, BufferLoad(B, [ramp(0, extent)])), [ramp(0, extent)])
    assert_vectorized(vectorize(before, target), before, expected)


def test_illegal_vscale_in_non_sve_compilation():
    A = tir.decl_buffer((16,), F32, name="A")
    j = tir.var("j")
    before = tir.PrimFunc([A], loop(j, 4 * tir.vscale(), BufferStore(A, f32(13), [j])))
    with pytest.raises(transform.VectorizeError, match=r"Failed to vectorize loop with extent "
                       r"4 \* T.vscale\(\) for target llvm -mtriple=x86_64-linux-gnu"):
        vectorize(before, SIMPLE)
    with pytest.raises(transform.VectorizeError, match="for target None: scalable vectors "
                       "need an SVE target"):
        vectorize(before)


# ---------------------------------------------------------------- where the target comes from

def _tail_program(attr_target=None, scope_target=None):
    """TVM's predication tests: a tail guard in a fixed loop of 4 over 14 elements."""
    A = tir.decl_buffer((16,), F32, name="A")
    B = tir.decl_buffer((16,), F32, name="B")
    i0, i1 = tir.var("i_0"), tir.var("i_1")
    idx = i0 * 4 + i1
    body = For(i0, 0, 4, ForKind.SERIAL, loop(i1, 4, IfThenElse(
        idx < 14, BufferStore(B, A[idx] + f32(1), [idx]))))
    if scope_target is not None:
        body = AttrStmt(scope_target, "target", 0, body)
    func = tir.PrimFunc([A, B], body)
    return (func if attr_target is None else func.with_attr("target", attr_target)), A, B, i0


def _predicated_tail(A, B, i0, lanes=4):
    mask = tir.op.get_active_lane_mask(f"uint1x{lanes}", i0 * 4, 14)
    load = BufferLoad(A, [ramp(i0 * 4, lanes)], predicate=mask)
    return For(i0, 0, 4, ForKind.SERIAL,
               BufferStore(B, load + f32(1, lanes), [ramp(i0 * 4, lanes)], predicate=mask))


def test_predicate_with_sve_func_attr_target():
    before, A, B, i0 = _tail_program(attr_target=SVE)
    assert_vectorized(vectorize(before), before, _predicated_tail(A, B, i0))


def test_predicate_with_sve_attr_scope_target():
    before, A, B, i0 = _tail_program(scope_target=SVE)
    after = vectorize(before)
    assert_vectorized(after, before, AttrStmt(SVE, "target", 0, _predicated_tail(A, B, i0)))


def test_explicitly_disabled_predication_on_sve():
    before, A, B, i0 = _tail_program()
    with transform.PassContext(config={"tir.enable_buffer_level_predication": False}):
        after = vectorize(before, SVE)
    i1_s = tir.var("i_1_s")
    idx = i0 * 4 + i1_s
    expected = For(i0, 0, 4, ForKind.SERIAL, For(i1_s, 0, 4, ForKind.SERIAL, IfThenElse(
        idx < 14, BufferStore(B, A[idx] + f32(1), [idx]))))
    assert_vectorized(after, before, expected)


def test_scalable_loop_under_target_attr_stmt():
    A = tir.decl_buffer((16,), F32, name="A")
    j = tir.var("j")
    body = AttrStmt(SVE, "target", 0, loop(j, VL4, BufferStore(A, f32(1), [j])))
    before = tir.PrimFunc([A], body)
    after = vectorize(before)
    assert_vectorized(after, before, AttrStmt(SVE, "target", 0, BufferStore(
        A, f32(1, VL4), [ramp(0, VL4)])))


def test_scalable_loop_with_func_attr_target():
    A = tir.decl_buffer((16,), F32, name="A")
    j = tir.var("j")
    before = tir.PrimFunc([A], loop(j, VL4, BufferStore(A, f32(1), [j]))).with_attr("target", SVE)
    assert_vectorized(vectorize(before), before, BufferStore(A, f32(1, VL4), [ramp(0, VL4)]))
