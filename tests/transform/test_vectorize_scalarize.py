"""Scalarization (one test per reason, with its remark), remarks, and VectorizeSkipper."""

import numpy as np
import pytest
from vectorize_eval import assert_same_result

import tir
import transform
from tir.expr import BufferLoad, Ramp
from tir.stmt import (
    Allocate,
    AssertStmt,
    AttrStmt,
    BufferStore,
    Evaluate,
    For,
    ForKind,
    IfThenElse,
    LetStmt,
    SeqStmt,
)
from transform.vector import VectorizeRemark

F32 = "float32"
A = tir.decl_buffer((64,), F32, name="A")
I = tir.decl_buffer((64,), "int32", name="I")
G = tir.decl_buffer((4, 8), "int32", name="G")
j, n = tir.var("j"), tir.var("n")
PARAMS = [A, I, G, n]


def vloop(body, lanes=4, lo=0):
    return For(j, lo, lanes, ForKind.VECTORIZED, body)


def arrays():
    return {"A": np.arange(64, dtype=np.float32), "I": np.arange(64) % 7 - 3,
            "G": np.zeros((4, 8), np.int32)}


def vectorize(body):
    return vectorize_with_remarks(body)[0]


def vectorize_with_remarks(body):
    """The vectorized function (checked to compute what ``body`` does) and the pass's remarks."""
    before = tir.PrimFunc(PARAMS, body)
    with transform.collect_remarks() as remarks:
        after = transform.VectorizeLoop()(tir.IRModule.from_expr(before))["main"]
    assert_same_result(before, after, arrays(), {"n": 2})
    return after, remarks


def _extern(*args):
    return tir.call_extern("int32", "log_value", *args)


def _pure_extern(*args):
    return tir.call_pure_extern("int32", "lookup", *args)


k = tir.var("k")
data = tir.Var("S", "handle")
S = tir.decl_buffer((1,), "int32", name="S", data=data)

# (statement builder, the reason in the remark)
REASONS = {
    "if": (lambda: IfThenElse(j < n, BufferStore(I, 1, [j])), "if condition depends on j"),
    "if_then_else": (lambda: BufferStore(I, tir.if_then_else(j < n, 1, 2), [j]),
                     "if_then_else condition depends on j"),
    "not-elementwise": (lambda: BufferStore(I, _pure_extern(j), [j]),
                        "the call of extern function 'lookup' is not element-wise"),
    "side-effects": (lambda: Evaluate(_extern(n)),
                     "the call of extern function 'log_value' has side effects"),
    "inner-extent": (lambda: For(k, 0, j + 1, ForKind.SERIAL, BufferStore(I, k, [j * 4 + k])),
                     "the range of inner loop k depends on j"),
    "uniform-index": (lambda: BufferStore(I, j * 3, [0]),
                      ("the index of the store to I does not depend on j but the stored value "
                       "does")),
    "non-last-dim": (lambda: BufferStore(G, 1, [j, 0]),
                     "buffer G is indexed by j in a dimension other than the last"),
    "alloc-size": (lambda: Allocate(data, "int32", [j + 1], True, BufferStore(S, j, [0])),
                   "the size of allocation S depends on j"),
    "attr-value": (lambda: AttrStmt(None, "pragma", j, BufferStore(I, j, [j])),
                   "the value of attribute 'pragma' depends on j"),
    "assert": (lambda: AssertStmt(j < 10, "j too big", BufferStore(I, j, [j])),
               "assert condition depends on j"),
}


@pytest.mark.parametrize("case", sorted(REASONS))
def test_scalarize_reason(case):
    build, reason = REASONS[case]
    after, [remark] = vectorize_with_remarks(vloop(build()))
    assert isinstance(after.body, For) and after.body.kind == ForKind.SERIAL
    assert after.body.loop_var.name == "j_s"
    assert (remark.outcome, remark.reason) == ("scalarized", reason)
    assert remark.line == f"main: loop j (4 lanes): scalarized: {reason}"


# Stores that read what other lanes write: the legality analysis keeps the loop serial; with
# the user's promise of independence the vectorizer still keeps each such store serial.
SELF_READS = {
    "reads-itself": (lambda: BufferStore(I, I[0] + 1, [0]),
                     ("the store to I does not depend on j and reads I, so it must run once "
                      "per iteration")),
    "same-element": (lambda: BufferStore(I, I[0] + j, [tir.floordiv(j, 8)]),
                     "every iteration stores to the same element of I and reads I"),
}


@pytest.mark.parametrize("case", sorted(SELF_READS))
def test_store_reading_its_own_element_is_a_dependence(case):
    build, _ = SELF_READS[case]
    after, [remark] = vectorize_with_remarks(vloop(build()))
    assert after.body.kind == ForKind.SERIAL and after.body.loop_var is j
    assert remark.outcome == "not vectorized"
    assert remark.reason == ("I[0] is read and written by every iteration "
                             "(a value carried from one iteration to the next)")


@pytest.mark.parametrize("case", sorted(SELF_READS))
def test_store_reading_its_own_element_stays_serial_when_assumed_independent(case):
    build, reason = SELF_READS[case]
    loop = For(j, 0, 4, ForKind.VECTORIZED, build(),
               annotations={"tir.vectorize.assume_independent": True})
    after, [remark] = vectorize_with_remarks(loop)
    assert after.body.loop_var.name == "j_s"
    note = "dependences not checked (tir.vectorize.assume_independent)"
    assert (remark.outcome, remark.reason) == ("scalarized", f"{reason}; {note}")


def test_scalarized_loop_keeps_the_range():
    after = vectorize(vloop(BufferStore(I, j * 3, [0]), lo=5))
    loop = after.body
    assert (loop.min.value, loop.extent.value) == (5, 4)


def test_side_effects_run_once_per_lane():
    after, [remark] = vectorize_with_remarks(
        vloop(SeqStmt([BufferStore(I, j, [j]), Evaluate(_extern(j * 2))])))
    first, second = after.body.seq
    assert isinstance(first, BufferStore) and isinstance(second, For)
    assert remark.outcome == "partially vectorized"
    assert remark.reason == "the call of extern function 'log_value' has side effects"


def test_only_the_failing_statement_is_scalarized():
    body = vloop(SeqStmt([
        BufferStore(A, A[j] * tir.const(2, F32), [j]),
        IfThenElse(j < n, BufferStore(I, 0, [j])),
        BufferStore(I, I[j] + 1, [j]),
    ]))
    after = vectorize(body)
    first, second, third = after.body.seq
    assert isinstance(first.indices[0], Ramp) and isinstance(third.indices[0], Ramp)
    assert isinstance(second, For) and isinstance(second.body, IfThenElse)


def test_scalarizing_under_a_vector_let_scalarizes_the_let():
    """A statement using a let var whose value became a vector cannot be scalarized alone."""
    v = tir.var("v")
    body = vloop(LetStmt(v, I[j] + 1, SeqStmt([
        BufferStore(I, v, [j]),
        IfThenElse(v > 2, BufferStore(I, 0, [j])),
    ])))
    after, [remark] = vectorize_with_remarks(body)
    assert isinstance(after.body, For) and isinstance(after.body.body, LetStmt)
    assert (remark.outcome, remark.reason) == ("scalarized", "if condition depends on j")


def test_scalarizing_under_a_scalar_let_stays_inside():
    v = tir.var("v")
    body = vloop(LetStmt(v, n + 1, SeqStmt([
        BufferStore(I, v + j, [j]),
        IfThenElse(j < v, BufferStore(I, 0, [j])),
    ])))
    after = vectorize(body)
    assert isinstance(after.body, LetStmt)
    assert isinstance(after.body.body.seq[1], For)


def test_uniform_store_runs_once():
    after = vectorize(vloop(BufferStore(I, n * 2, [1])))
    tir.assert_structural_equal(after.body, BufferStore(I, n * 2, [1]))


def test_store_to_one_element_keeps_the_last_lane():
    after = vectorize(vloop(BufferStore(I, j * 3 + n, [tir.floordiv(j, 8)])))
    tir.assert_structural_equal(after.body, BufferStore(I, n + 9, [0]))


# ---------------------------------------------------------------- remarks


def test_remark_text():
    remark = VectorizeRemark("f", "j", 8, "scalarized", "if condition depends on j")
    assert str(remark) == "f: loop j (8 lanes): scalarized: if condition depends on j"
    assert str(VectorizeRemark("f", "j", 8, "vectorized")) == "f: loop j (8 lanes): vectorized"


def test_remark_is_frozen():
    remark = VectorizeRemark("f", "j", 8, "vectorized")
    with pytest.raises(AttributeError):
        remark.lanes = 4


def test_remarks_only_for_vectorized_loops_and_never_in_the_ir():
    vec = tir.PrimFunc(PARAMS, vloop(BufferStore(I, j, [j])))
    plain = tir.PrimFunc(PARAMS, For(j, 0, 4, ForKind.SERIAL, BufferStore(I, j, [j])))
    with transform.collect_remarks() as remarks:
        mod = transform.VectorizeLoop()(tir.IRModule({"vec": vec, "plain": plain}))
    assert mod["plain"] is plain
    assert dict(mod["vec"].attrs) == dict(vec.attrs)
    assert [str(r) for r in remarks] == ["vec: loop j (4 lanes): vectorized"]


def test_remarks_reach_every_open_scope_and_the_entered_pass_context():
    mod = tir.IRModule.from_expr(tir.PrimFunc(PARAMS, vloop(BufferStore(I, j, [j]))))
    with transform.PassContext() as ctx, transform.collect_remarks() as outer:
        with transform.collect_remarks() as inner:
            transform.VectorizeLoop()(mod)
        transform.VectorizeLoop()(mod)
    assert [str(r) for r in inner] == ["main: loop j (4 lanes): vectorized"]
    assert len(outer) == len(ctx.remarks) == 2


def test_no_remarks_kept_outside_a_scope():
    mod = tir.IRModule.from_expr(tir.PrimFunc(PARAMS, vloop(BufferStore(I, j, [j]))))
    transform.VectorizeLoop()(mod)
    assert transform.PassContext.current().remarks == []


def test_remarks_one_per_loop_in_source_order():
    j2 = tir.var("k")
    body = SeqStmt([vloop(BufferStore(I, j, [j])),
                    For(j2, 0, 8, ForKind.VECTORIZED, IfThenElse(j2 < n, BufferStore(I, 0, [j2])))])
    _, remarks = vectorize_with_remarks(body)
    assert [(r.loop_var, r.lanes, r.outcome) for r in remarks] == [
        ("j", 4, "vectorized"), ("k", 8, "scalarized")]


def test_remarks_printed_with_config(capsys):
    mod = tir.IRModule.from_expr(tir.PrimFunc(PARAMS, vloop(IfThenElse(j < n, Evaluate(0)))))
    with transform.PassContext(config={"tir.vectorize_remarks": True}):
        transform.VectorizeLoop()(mod)
    assert capsys.readouterr().out == (
        "remark: main: loop j (4 lanes): scalarized: if condition depends on j\n")


def test_remarks_not_printed_by_default(capsys):
    transform.VectorizeLoop()(tir.IRModule.from_expr(tir.PrimFunc(PARAMS, vloop(Evaluate(0)))))
    assert capsys.readouterr().out == ""


# ---------------------------------------------------------------- VectorizeSkipper


def _mixed_func():
    i = tir.var("i")
    inner = BufferStore(A, BufferLoad(A, [i * 4 + j]), [i * 4 + j])
    return tir.PrimFunc(PARAMS, For(i, 0, n, ForKind.PARALLEL, vloop(inner)))


def test_disable_vectorize_makes_vectorized_loops_serial():
    func = _mixed_func()
    out = transform.VectorizeLoop(enable_vectorize=False)(tir.IRModule.from_expr(func))["main"]
    outer, inner = out.body, out.body.body
    assert outer.kind == ForKind.PARALLEL and inner.kind == ForKind.SERIAL
    assert inner.body is func.body.body.body  # nothing else changes
    assert dict(out.attrs) == dict(func.attrs)


def test_disable_vectorize_config():
    func = _mixed_func()
    with transform.PassContext(config={"tir.disable_vectorize": True}):
        out = transform.VectorizeLoop()(tir.IRModule.from_expr(func))["main"]
    assert out.body.body.kind == ForKind.SERIAL


def test_skipper_returns_same_object_without_vectorized_loops():
    mod = tir.IRModule.from_expr(tir.PrimFunc(PARAMS, For(j, 0, 4, ForKind.SERIAL,
                                                          Evaluate(0))))
    assert transform.VectorizeLoop(enable_vectorize=False)(mod) is mod


def test_skipper_class_directly():
    loop = vloop(BufferStore(I, j, [j]))
    out = transform.VectorizeSkipper()(loop)
    assert out.kind == ForKind.SERIAL and out.body is loop.body and out.loop_var is j


def test_every_statement_scalarized_is_a_scalarized_loop():
    body = vloop(SeqStmt([IfThenElse(j < n, BufferStore(I, 0, [j])),
                          BufferStore(I, _pure_extern(j), [j])]))
    _, [remark] = vectorize_with_remarks(body)
    assert remark.outcome == "scalarized"
    assert remark.reason == ("if condition depends on j; "
                             "the call of extern function 'lookup' is not element-wise")


def test_scalable_vector_depending_on_the_var_is_an_error():
    """A fixed loop cannot widen a scalable vector (TVM's error, naming the loop)."""
    lanes = 4 * tir.vscale()
    body = vloop(BufferStore(I, tir.Broadcast(j, lanes), [tir.Ramp(0, 1, lanes)]))
    with pytest.raises(transform.VectorizeError, match="cannot vectorize loop j: Vectorizing "
                       "over existing scalable vectors is not supported"):
        transform.VectorizeLoop()(tir.IRModule.from_expr(tir.PrimFunc(PARAMS, body)))
