"""codegen.build checks its input first: ill-formed IR and loops that cannot count are rejected.

Without the check, Simplify substituted a var bound by two nested lets
everywhere (A = [1, 1] instead of [1, 5]), and an int8 loop over [120, 136)
ran zero times in compiled code.
"""

import numpy as np
import pytest

import codegen
import tir
from codegen.interp.backend import build_interpreter
from tir.verify import WellFormedError

TARGETS = ["llvm", "interp"]


def _rebound_let():
    """let v = 1: A[0] = v; let v = 5: A[1] = v  (the same Var object bound twice)."""
    v = tir.var("v")
    A = tir.decl_buffer((2,), "int32", name="A")
    inner = tir.LetStmt(v, 5, tir.BufferStore(A, v, [1]))
    body = tir.LetStmt(v, 1, tir.SeqStmt([tir.BufferStore(A, v, [0]), inner]))
    return tir.PrimFunc([A], body)


def _renamed_let():
    """The same program with a var of its own for the inner let."""
    v, w = tir.var("v"), tir.var("v")
    A = tir.decl_buffer((2,), "int32", name="A")
    inner = tir.LetStmt(w, 5, tir.BufferStore(A, w, [1]))
    body = tir.LetStmt(v, 1, tir.SeqStmt([tir.BufferStore(A, v, [0]), inner]))
    return tir.PrimFunc([A], body)


def _nested_loops():
    i = tir.var("i")
    C = tir.decl_buffer((4,), "int32", name="C")
    inner = tir.For(i, 0, 4, tir.ForKind.SERIAL, tir.BufferStore(C, i, [i]))
    return tir.PrimFunc([C], tir.For(i, 0, 4, tir.ForKind.SERIAL, inner))


def _duplicate_param():
    m = tir.var("m")
    C = tir.decl_buffer((4,), "int32", name="C")
    return tir.PrimFunc([C, m, m], tir.BufferStore(C, m, [0]))


ILL_FORMED = {
    "rebound let": (_rebound_let, r"scale: var v is bound twice: by let v and again by let v "
                                  r"\(in let v\); give each binding its own tir.Var"),
    "nested loops": (_nested_loops, r"scale: var i is bound twice: by for i and again by for i "
                                    r"\(in for i\)"),
    "duplicate param": (_duplicate_param, r"scale: var m is bound twice: by param m and again by "
                                          r"param m \(in function signature\)"),
}


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("case", ILL_FORMED)
def test_build_rejects_ill_formed_ir_naming_function_and_statement(case, target):
    make, message = ILL_FORMED[case]
    mod = tir.IRModule({"scale": make()})
    with pytest.raises(WellFormedError, match=message):
        codegen.build(mod, target=target)
    with pytest.raises(ValueError, match=message):  # WellFormedError is a ValueError
        codegen.lower(mod)


@pytest.mark.parametrize("target", TARGETS)
def test_ill_formed_ir_is_rejected_even_when_its_twin_is_cached(target):
    # structural_equal matches bound vars by position, so the cache alone would
    # serve the module of the well-formed twin.
    good = codegen.build(_renamed_let(), target=target)
    a = np.zeros(2, "int32")
    good["main"](a)
    assert a.tolist() == [1, 5]
    with pytest.raises(WellFormedError, match="var v is bound twice"):
        codegen.build(_rebound_let(), target=target)


# ---------------------------------------------------------------- narrow loop vars


def _count_int8_loop(lo, extent):
    """A[k] += 1 for every iteration of an int8 loop over [lo, lo + extent)."""
    i = tir.var("i", "int8")
    A = tir.decl_buffer((256,), "int32", name="A")
    k = i.astype("int32") + 128
    body = tir.BufferStore(A, tir.BufferLoad(A, [k]) + 1, [k])
    return tir.PrimFunc([A], tir.For(i, lo, extent, tir.ForKind.SERIAL, body))


@pytest.mark.parametrize("target", TARGETS)
def test_int8_loop_up_to_the_largest_end_runs_every_iteration(target):
    a = np.zeros(256, "int32")
    codegen.build(_count_int8_loop(120, 7), target=target)["main"](a)  # [120, 127)
    assert a.sum() == 7 and a[120 + 128:127 + 128].tolist() == [1] * 7
    a[:] = 0
    codegen.build(_count_int8_loop(-128, 127), target=target)["main"](a)  # [-128, -1)
    assert a.sum() == 127 and a[0] == 1


def test_interpreter_rejects_a_symbolic_loop_end_that_does_not_fit():
    # Not checkable when the IR is built; the interpreter checks it when the loop starts.
    n = tir.var("n", "int8")
    i = tir.var("i", "int8")
    A = tir.decl_buffer((256,), "int32", name="A")
    k = i.astype("int32") + 128
    body = tir.For(i, n, 16, tir.ForKind.SERIAL, tir.BufferStore(A, tir.const(1), [k]))
    run = build_interpreter(tir.PrimFunc([A, n], body))["main"]
    a = np.zeros(256, "int32")
    run(a, 100)
    assert a.sum() == 16
    with pytest.raises(OverflowError, match=r"main: the loop over \[120, 136\) does not fit its "
                                            r"int8 loop var i"):
        run(a, 120)
