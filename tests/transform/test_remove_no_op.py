"""RemoveNoOp: Before/After pairs and the same-object rule."""

import tir
import transform
from tir import Evaluate, For, ForKind, IfThenElse, SeqStmt

A = tir.decl_buffer((16,), "float32", name="A")
B = tir.decl_buffer((16,), "float32", name="B")
i = tir.Var("i", "int32")
n = tir.Var("n", "int32")


def _store(buf=A, idx=None, value=1.0):
    return tir.BufferStore(buf, tir.const(value), [i if idx is None else idx])


def _run(body):
    func = tir.PrimFunc([A, B, n], body)
    return transform.RemoveNoOp()(tir.IRModule.from_expr(func))["main"].body


def _printf():
    return tir.call_extern("int32", "printf", tir.StringImm("x"))


def test_seq_drops_constant_evaluates():
    body = SeqStmt([Evaluate(0), _store(), Evaluate(7), _store(B)])
    tir.assert_structural_equal(_run(body), SeqStmt([body.seq[1], body.seq[3]]))


def test_seq_with_one_survivor_becomes_that_statement():
    body = SeqStmt([Evaluate(0), _store()])
    assert _run(body) is body.seq[1]


def test_seq_of_no_ops_becomes_evaluate_zero():
    out = _run(SeqStmt([Evaluate(0), Evaluate(i + 1)]))
    assert isinstance(out, Evaluate) and out.value.value == 0


def test_impure_evaluate_is_kept():
    body = SeqStmt([Evaluate(_printf()), Evaluate(0)])
    assert _run(body) is body.seq[0]


def test_loop_with_empty_body_is_removed():
    body = SeqStmt([For(i, 0, 16, ForKind.SERIAL, SeqStmt([Evaluate(0), Evaluate(1)])), _store()])
    assert _run(body) is body.seq[1]


def test_loop_with_zero_extent_is_removed():
    body = SeqStmt([For(i, 0, 0, ForKind.SERIAL, _store()), _store(B)])
    assert _run(body) is body.seq[1]


def test_loop_with_work_keeps_its_object_but_loses_no_ops():
    loop = For(i, 0, 16, ForKind.SERIAL, SeqStmt([_store(), Evaluate(0)]))
    out = _run(loop)
    tir.assert_structural_equal(out, For(i, 0, 16, ForKind.SERIAL, _store()))


def test_if_with_empty_else_drops_else():
    stmt = IfThenElse(i < n, _store(), Evaluate(0))
    tir.assert_structural_equal(_run(stmt), IfThenElse(i < n, _store()))


def test_if_with_empty_then_negates_condition():
    stmt = IfThenElse(i < n, Evaluate(0), _store())
    out = _run(stmt)
    assert isinstance(out, IfThenElse) and out.else_case is None
    assert out.then_case is stmt.else_case
    tir.assert_structural_equal(out.condition, tir.Not(i < n))


def test_if_with_both_branches_empty_is_removed():
    body = SeqStmt([IfThenElse(i < n, Evaluate(0), Evaluate(0)), _store()])
    assert _run(body) is body.seq[1]


def test_let_attr_allocate_around_no_op_are_removed():
    x = tir.Var("x", "int32")
    buf = tir.Var("buf", "handle")
    body = SeqStmt([
        tir.LetStmt(x, n + 1, Evaluate(0)),
        tir.AttrStmt(A, "pragma", 1, Evaluate(0)),
        tir.Allocate(buf, "float32", [16], tir.const(True), Evaluate(0)),
        _store(),
    ])
    assert _run(body) is body.seq[3]


def test_self_copy_store_is_removed():
    copy = tir.BufferStore(A, tir.BufferLoad(A, [i + 1]), [i + 1])
    other = tir.BufferStore(A, tir.BufferLoad(A, [i]), [i + 1])
    body = SeqStmt([copy, other])
    assert _run(body) is other


def test_nothing_to_remove_keeps_module_and_function():
    body = For(i, 0, 16, ForKind.SERIAL, SeqStmt([_store(), _store(B)]))
    mod = tir.IRModule.from_expr(tir.PrimFunc([A, B, n], body))
    assert transform.RemoveNoOp()(mod) is mod


def test_while_with_empty_body_is_kept():
    loop = tir.While(n > 0, Evaluate(0))
    assert _run(loop) is loop


def test_pass_info():
    p = transform.RemoveNoOp()
    assert p.info.name == "tir.RemoveNoOp" and p.info.opt_level == 0
