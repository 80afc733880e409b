"""Buffer-level predication (config ``tir.enable_buffer_level_predication``).

TVM's seven cases (test_tir_transform_vectorize.py: ``test_vectorize_and_predicate_*``,
the explicitly disabled one and the two SVE-target ones, where predication is on by
default): Before written with the ir_builder, compared whole with the expected IR.
"""

import pytest

import codegen
import tir
import transform
from tir import ir_builder
from tir.expr import Broadcast, BufferLoad, Ramp
from tir.stmt import AttrStmt, BufferStore, For, ForKind, IfThenElse, SeqStmt
from transform.vector import PREDICATED, SCALARIZED

F32 = "float32"
PREDICATE = {"tir.enable_buffer_level_predication": True}


def vectorize(func: tir.PrimFunc, config: dict | None = None) -> tuple[tir.PrimFunc, list]:
    """The pass's output under ``config`` (predication on by default), and its remarks."""
    with transform.collect_remarks() as remarks, transform.PassContext(
            config=PREDICATE if config is None else config):
        after = transform.VectorizeLoop()(tir.IRModule.from_expr(func))["main"]
    return after, remarks


def buffers():
    return tir.decl_buffer((16,), F32, name="A"), tir.decl_buffer((16,), F32, name="B")


def guarded(then, cond=None, extent=4):
    """``for i_0: for i_1 in vectorized(4): if cond(k): then(A, B, k, i_0)``, k = i_0 * 4 + i_1."""
    A, B = buffers()
    ib = ir_builder.create()
    a, b = ib.buffer_ptr(A), ib.buffer_ptr(B)
    with ib.for_range(0, extent, name="i_0") as i_0, \
            ib.for_range(0, 4, kind="vectorize", name="i_1") as i_1:
        k = i_0 * 4 + i_1
        with ib.if_scope(k < 14 if cond is None else cond(k)):
            then(a, b, k, i_0)
    return tir.PrimFunc([A, B], ib.get()), A, B


def add_one(a, b, k, i_0):
    b[k] = a[k] + tir.const(1.0, F32)


def outer(func):
    return func.body.loop_var


def mask(i_0, limit=14):
    return tir.get_active_lane_mask("uint1x4", i_0 * 4, limit)


def _predicated(before, A, B):
    """TVM's expected IR for ``guarded(add_one)``: both accesses masked, the if gone."""
    i_0 = outer(before)
    ramp = Ramp(i_0 * 4, 1, 4)
    load = BufferLoad(A, [ramp], predicate=mask(i_0))
    return For(i_0, 0, 4, ForKind.SERIAL,
               BufferStore(B, load + Broadcast(tir.const(1.0, F32), 4), [ramp],
                           predicate=mask(i_0)))


def test_vectorize_and_predicate_all_buffer_loads_stores():
    before, A, B = guarded(add_one)
    after, remarks = vectorize(before)
    tir.assert_structural_equal(after, before.with_body(_predicated(before, A, B)))
    assert [r.outcome for r in remarks] == [PREDICATED]
    assert str(remarks[0]) == ("main: loop i_1 (4 lanes): predicated: "
                               "if i_0 * 4 + i_1 < 14 became a lane mask")


def _scalarized(before, i_0, make_body):
    """``for i_0: for i_1_s in range(4): make_body(i_0 * 4 + i_1_s)`` over ``before``'s params."""
    i_1_s = tir.var("i_1_s")
    return before.with_body(For(i_0, 0, 4, ForKind.SERIAL,
                                For(i_1_s, 0, 4, ForKind.SERIAL, make_body(i_0, i_1_s))))


def test_vectorize_and_predicate_some_buffer_loads_stores():
    """A[i_0] is the same element in every lane: the guard must stay, so the if scalarizes."""
    def then(a, b, k, i_0):
        b[k] = a[i_0] + tir.const(1.0, F32)

    before, A, B = guarded(then)
    after, remarks = vectorize(before)
    expected = _scalarized(before, outer(before), lambda i_0, s: IfThenElse(
        i_0 * 4 + s < 14, BufferStore(B, BufferLoad(A, [i_0]) + tir.const(1.0, F32),
                                      [i_0 * 4 + s])))
    tir.assert_structural_equal(after, expected)
    assert remarks[0].outcome == SCALARIZED
    assert "not predicated: the load from A is not at the guarded elements" in remarks[0].reason


def test_vectorize_and_predicate_multiple_access_statements():
    def then(a, b, k, i_0):
        a[k] = tir.const(2.0, F32)
        b[k] = tir.const(1.0, F32)

    before, A, B = guarded(then)
    after, _ = vectorize(before)
    i_0 = outer(before)
    ramp = Ramp(i_0 * 4, 1, 4)
    body = For(i_0, 0, 4, ForKind.SERIAL, SeqStmt([
        BufferStore(A, Broadcast(tir.const(2.0, F32), 4), [ramp], predicate=mask(i_0)),
        BufferStore(B, Broadcast(tir.const(1.0, F32), 4), [ramp], predicate=mask(i_0)),
    ]))
    tir.assert_structural_equal(after, before.with_body(body))


def test_vectorize_and_predicate_invalid_conditions():
    """Only ``ramp < broadcast`` is a tail guard: ``>``, the mirrored ``<`` and
    ``ramp < ramp`` keep their if, scalarized."""
    conds = [lambda k: k > 14, lambda k: 14 < k, lambda k: k < k]
    A, B = buffers()
    ib = ir_builder.create()
    a = ib.buffer_ptr(A)
    with ib.for_range(0, 4, name="i_0") as i_0, \
            ib.for_range(0, 4, kind="vectorize", name="i_1") as i_1:
        for cond in conds:
            with ib.if_scope(cond(i_0 * 4 + i_1)):
                a[i_0 * 4 + i_1] = tir.const(2.0, F32)
    before = tir.PrimFunc([A, B], ib.get())
    after, remarks = vectorize(before)

    i_0 = outer(before)
    loops = []
    for cond in conds:
        s = tir.var("i_1_s")
        k = i_0 * 4 + s
        loops.append(For(s, 0, 4, ForKind.SERIAL,
                         IfThenElse(cond(k), BufferStore(A, tir.const(2.0, F32), [k]))))
    expected = before.with_body(For(i_0, 0, 4, ForKind.SERIAL, SeqStmt(loops)))
    tir.assert_structural_equal(after, expected)
    assert remarks[0].outcome == SCALARIZED


@pytest.mark.parametrize("config", [{"tir.enable_buffer_level_predication": False}, {}],
                         ids=["explicitly-false", "default"])
def test_vectorize_with_explicitly_disabled_buffer_level_predication(config):
    before, A, B = guarded(add_one)
    after, remarks = vectorize(before, config)
    expected = _scalarized(before, outer(before), lambda i_0, s: IfThenElse(
        i_0 * 4 + s < 14, BufferStore(B, BufferLoad(A, [i_0 * 4 + s]) + tir.const(1.0, F32),
                                      [i_0 * 4 + s])))
    tir.assert_structural_equal(after, expected)
    assert str(remarks[0]) == "main: loop i_1 (4 lanes): scalarized: if condition depends on i_1"


SVE_TARGET = "llvm -mtriple=aarch64-linux-gnu -mattr=+sve"


def test_vectorize_with_explicitly_disabled_buffer_level_predication_in_sve_scope():
    """TVM's case as written: an SVE target scope would predicate, the explicit False wins."""
    before, A, B = guarded(add_one)
    with codegen.Target(SVE_TARGET):
        after, remarks = vectorize(before, {"tir.enable_buffer_level_predication": False})
        default, _ = vectorize(before, {})
    assert remarks[0].outcome == SCALARIZED
    assert isinstance(after.body.body, For) and after.body.body.kind == ForKind.SERIAL
    tir.assert_structural_equal(default, before.with_body(_predicated(before, A, B)))


def test_vectorize_and_predicate_buffer_load_stores_with_sve_func_attr_target():
    before, A, B = guarded(add_one)
    before = before.with_attr("target", SVE_TARGET)
    after, remarks = vectorize(before, {})
    tir.assert_structural_equal(after, before.with_body(_predicated(before, A, B)))
    assert remarks[0].outcome == PREDICATED


def test_vectorize_and_predicate_buffer_load_stores_with_sve_attr_scope_target():
    plain, A, B = guarded(add_one)
    before = plain.with_body(AttrStmt(SVE_TARGET, "target", 0, plain.body))
    after, remarks = vectorize(before, {})
    expected = AttrStmt(SVE_TARGET, "target", 0, _predicated(plain, A, B))
    tir.assert_structural_equal(after, before.with_body(expected))
    assert remarks[0].outcome == PREDICATED


@pytest.mark.parametrize("target", [None, "llvm -mtriple=x86_64-linux-gnu -mattr=+avx2",
                                    "llvm -mtriple=aarch64-linux-gnu -mattr=+neon"])
def test_non_sve_targets_do_not_predicate_by_default(target):
    before, _, _ = guarded(add_one)
    if target is not None:
        before = before.with_attr("target", target)
    _, remarks = vectorize(before, {})
    assert remarks[0].outcome == SCALARIZED


def test_target_scope_is_left_on_exit():
    with codegen.Target(SVE_TARGET) as t:
        assert codegen.Target.current() == t
    assert codegen.Target.current() is None


# ------------------------------------------------------------------ beyond TVM's cases


def test_guard_with_else_is_not_predicated():
    A, B = buffers()
    ib = ir_builder.create()
    b = ib.buffer_ptr(B)
    with ib.for_range(0, 4, name="i_0") as i_0, \
            ib.for_range(0, 4, kind="vectorize", name="i_1") as i_1:
        with ib.if_scope(i_0 * 4 + i_1 < 14):
            b[i_0 * 4 + i_1] = tir.const(1.0, F32)
        with ib.else_scope():
            b[i_0 * 4 + i_1] = tir.const(0.0, F32)
    after, remarks = vectorize(tir.PrimFunc([A, B], ib.get()))
    assert remarks[0].outcome == SCALARIZED
    assert "get_active_lane_mask" not in after.script()


@pytest.mark.parametrize("then, why", [
    (lambda a, b, k, i_0: b.__setitem__(k + 1, a[k]), "the store to B is not at the guarded"),
    (lambda a, b, k, i_0: b.__setitem__(k, a[k * 2]), "the load from A is not at the guarded"),
    (lambda a, b, k, i_0: b.__setitem__(k, tir.const(1.0, F32) + tir.call_extern(F32, "f", k)),
     "extern function 'f'"),
], ids=["shifted-store", "strided-load", "scalarized-part"])
def test_branch_that_does_not_fit_the_guard_keeps_it(then, why):
    before, _, _ = guarded(then)
    after, remarks = vectorize(before)
    assert remarks[0].outcome == SCALARIZED and why in remarks[0].reason
    assert "get_active_lane_mask" not in after.script()
    inner = after.body.body
    assert isinstance(inner, For) and isinstance(inner.body, IfThenElse)


def test_branch_scalarized_for_a_reason_already_met_keeps_the_guard():
    """The call before the if scalarizes for the same reason as the one inside it (reasons
    are listed once): the branch still counts as scalarized, and keeps its guard."""
    A, B = buffers()
    ib = ir_builder.create()
    a, b = ib.buffer_ptr(A), ib.buffer_ptr(B)
    with ib.for_range(0, 4, name="i_0") as i_0, \
            ib.for_range(0, 4, kind="vectorize", name="i_1") as i_1:
        k = i_0 * 4 + i_1
        a[k] = tir.call_pure_extern(F32, "g", k)
        with ib.if_scope(k < 14):
            b[k] = tir.call_pure_extern(F32, "g", k)
    after, remarks = vectorize(tir.PrimFunc([A, B], ib.get()))
    assert "get_active_lane_mask" not in after.script()
    second = after.body.body.seq[1]
    assert isinstance(second, For) and isinstance(second.body, IfThenElse)
    assert "not predicated: part of the branch is scalarized" in remarks[0].reason


def test_integer_division_by_a_loaded_value_keeps_the_guard():
    """Masked-off lanes load zeros; dividing by them would trap where the guard did not run."""
    A = tir.decl_buffer((16,), "int32", name="A")
    B = tir.decl_buffer((16,), "int32", name="B")
    ib = ir_builder.create()
    a, b = ib.buffer_ptr(A), ib.buffer_ptr(B)
    with ib.for_range(0, 4, name="i_0") as i_0, \
            ib.for_range(0, 4, kind="vectorize", name="i_1") as i_1:
        k = i_0 * 4 + i_1
        with ib.if_scope(k < 14):
            b[k] = tir.floordiv(tir.const(100, "int32"), a[k])
    after, remarks = vectorize(tir.PrimFunc([A, B], ib.get()))
    assert remarks[0].outcome == SCALARIZED
    assert "integer division" in remarks[0].reason


def test_loop_carried_dependence_inside_the_guard_stays_serial():
    """Legality runs first: B[k + 1] = B[k] + 1 carries a value to the next iteration."""
    A, B = buffers()
    ib = ir_builder.create()
    b = ib.buffer_ptr(B)
    with ib.for_range(0, 4, name="i_0") as i_0, \
            ib.for_range(0, 4, kind="vectorize", name="i_1") as i_1:
        k = i_0 * 4 + i_1
        with ib.if_scope(k < 14):
            b[k + 1] = b[k] + tir.const(1.0, F32)
    before = tir.PrimFunc([A, B], ib.get())
    after, remarks = vectorize(before)
    assert remarks[0].outcome == "not vectorized"
    inner = after.body.body
    assert isinstance(inner, For) and inner.kind == ForKind.SERIAL
    assert "get_active_lane_mask" not in after.script()


def test_mixed_body_reports_the_mask_and_the_scalarized_part():
    A, B = buffers()
    ib = ir_builder.create()
    a, b = ib.buffer_ptr(A), ib.buffer_ptr(B)
    with ib.for_range(0, 4, name="i_0") as i_0, \
            ib.for_range(0, 4, kind="vectorize", name="i_1") as i_1:
        k = i_0 * 4 + i_1
        with ib.if_scope(k < 14):
            b[k] = a[k]
        with ib.if_scope(k > 2):
            a[k] = tir.const(0.0, F32)
    _, remarks = vectorize(tir.PrimFunc([A, B], ib.get()))
    assert remarks[0].outcome == "partially vectorized"
    assert remarks[0].reason == ("if i_0 * 4 + i_1 < 14 became a lane mask; "
                                 "if condition depends on i_1")
