"""HoistVectorBoundChecks: one assert before a vectorized loop, naming its accesses as the
user wrote them; exact, so a loop that runs no iteration or stays in bounds never fails."""

import numpy as np
import pytest

import codegen
import tir
from tir import AssertStmt
from tir.functor import post_order_visit

SIZE = 64


def kernel(write) -> tir.PrimFunc:
    A = tir.decl_buffer((SIZE,), "float32", name="A")
    B = tir.decl_buffer((SIZE,), "float32", name="B")
    n = tir.Var("n", "int32")
    ib = tir.ir_builder.create()
    a, b = ib.buffer_ptr(A), ib.buffer_ptr(B)
    with ib.for_range(0, n, kind="vectorize", name="j") as j:
        write(ib, j, a, b)
    return tir.PrimFunc([A, B, n], ib.get())


def asserts(func) -> list:
    found = []
    post_order_visit(codegen.lower(func)["main"].body,
                     lambda x: found.append(x) if isinstance(x, AssertStmt) else None)
    return found


def copy(ib, j, a, b):
    a[j] = b[j] + tir.const(1.0, "float32")


def shifted(ib, j, a, b):
    a[j] = b[j + 1]


def past_the_end(ib, j, a, b):
    a[j + SIZE] = tir.const(1.0, "float32")  # any iteration is out of bounds


def guarded(ib, j, a, b):
    with ib.if_scope(j < SIZE - 1):
        a[j] = b[j + 1]


def test_one_check_before_the_loop_and_none_in_the_vector_code():
    (check,) = asserts(kernel(copy))
    assert str(check.condition) == "n < 65"
    assert check.message.value == (
        "index out of bounds: one of B[j] with extent 64; A[j] with extent 64")


@pytest.mark.parametrize("target", ["llvm", "interp"])
def test_run_time_error_names_the_access_as_written(target):
    lib = codegen.build(kernel(shifted), target=target)
    a, b = np.zeros(SIZE, "float32"), np.arange(SIZE, dtype="float32")
    lib(a, b, SIZE - 1)
    assert a[:SIZE - 1].tolist() == b[1:].tolist()
    with pytest.raises(RuntimeError, match=r"^main: assertion failed: index out of bounds: "
                                           r"one of B\[j \+ 1\] with extent 64; "
                                           r"A\[j\] with extent 64$"):
        lib(a, b, SIZE)


def test_a_loop_that_runs_no_iteration_never_fails():
    lib = codegen.build(kernel(past_the_end))
    a = np.zeros(SIZE, "float32")
    for n in (-5, 0):
        lib(a, a.copy(), n)
    with pytest.raises(RuntimeError, match=r"A\[j \+ 64\] with extent 64"):
        lib(a, a.copy(), 1)
    assert not a.any()


def test_a_guarded_access_is_left_to_the_late_checker():
    checks = asserts(kernel(guarded))
    assert all("B[j + 1]" not in c.message.value for c in checks)
    lib = codegen.build(kernel(guarded))
    a, b = np.zeros(SIZE, "float32"), np.arange(SIZE, dtype="float32")
    lib(a, b, SIZE + 40)  # the guard keeps every access in bounds
    assert a[:SIZE - 1].tolist() == b[1:].tolist() and a[SIZE - 1] == 0
