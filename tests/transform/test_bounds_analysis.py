"""RejectOutOfBoundsAccesses: an access out of bounds whenever the function runs is a build
error naming it; one that may be skipped (a guard, a loop of extent 0) builds."""

import numpy as np
import pytest

import codegen
import tir
import transform
from tir import ir_builder, te
from transform.bounds_analysis import provably_out_of_bounds

A = tir.decl_buffer((16,), "float32", name="A")
B = tir.decl_buffer((16,), "float32", name="B")
M = tir.decl_buffer((4, 8), "float32", name="M")
n = tir.Var("n", "int32")


def kernel(write) -> tir.PrimFunc:
    """``write(ib, a, b, m)`` over A, B of 16 and M of 4 x 8 float32, with an int ``n``."""
    ib = ir_builder.create()
    write(ib, ib.buffer_ptr(A), ib.buffer_ptr(B), ib.buffer_ptr(M))
    return tir.PrimFunc([A, B, M, n], ib.get())


def build_error(write) -> str | None:
    try:
        codegen.build(kernel(write))
    except ValueError as err:
        return str(err)
    return None


def test_a_loop_that_always_runs_past_the_end_is_a_build_error():
    def write(ib, a, b, m):
        with ib.for_range(0, 16, name="i") as i:
            b[i + 10] = a[i]

    assert build_error(write) == (
        "main: B[i + 10] is out of bounds on every execution: index in [10, 25], "
        "buffer B has shape (16,)")


def test_below_zero_in_a_load_and_two_dimensions_name_the_dimension():
    def below(ib, a, b, m):
        with ib.for_range(0, 16, name="i") as i:
            b[i] = a[i - 20]

    def column(ib, a, b, m):
        with ib.for_range(0, 4, name="i") as i, ib.for_range(0, 8, name="j") as j:
            m[i, j + 1] = tir.const(0.0, "float32")

    assert build_error(below) == (
        "main: A[i - 20] is out of bounds on every execution: index in [-20, -5], "
        "buffer A has shape (16,)")
    assert build_error(column) == (
        "main: M[i, j + 1] is out of bounds on every execution: index j + 1 (dimension 1) "
        "in [1, 8], buffer M has shape (4, 8)")


def test_a_vectorized_loop_and_a_triangular_nest_reach_their_last_iteration():
    def vectorized(ib, a, b, m):
        with ib.for_range(0, 4, kind="vectorize", name="i") as i:
            b[i + 13] = a[i]

    def triangle(ib, a, b, m):
        with ib.for_range(1, 4, name="i") as i, ib.for_range(0, i * 4, name="j") as j:
            b[j + i] = a[0]  # i = 3, j = 11: 14 is in bounds ...
            b[j + i * 2] = a[0]  # ... 17 is not

    assert "B[i + 13] is out of bounds" in build_error(vectorized)
    assert "B[j + i * 2] is out of bounds" in build_error(triangle)


# Kernel bodies whose one suspicious access may not run, or may stay in bounds.


def _symbolic_extent(ib, a, b, m):  # n may be 0
    with ib.for_range(0, n, name="i") as i:
        b[i + 16] = a[0]


def _zero_extent(ib, a, b, m):
    with ib.for_range(0, 0, name="i") as i:
        b[i + 16] = a[0]


def _guard_maybe(ib, a, b, m):
    with ib.if_scope(n > 100):
        b[20] = a[0]


def _guard_never(ib, a, b, m):
    with ib.for_range(0, 16, name="i") as i, ib.if_scope(i > 20):
        b[i] = a[i + 16]


def _if_then_else(ib, a, b, m):
    with ib.for_range(0, 16, name="i") as i:
        b[i] = tir.if_then_else(i < 16 - 4, a[i + 4], tir.const(0.0, "float32"))


def _select(ib, a, b, m):
    b[0] = tir.Select(n > 0, a[n + 16], a[0])


def _after_while(ib, a, b, m):
    with ib.while_loop(a[0] > tir.const(0.0, "float32")):
        a[0] = a[0] - tir.const(1.0, "float32")
    b[16] = a[0]


def _in_bounds_corner(ib, a, b, m):  # i - j spans [-3, 3]; only [0, 3] is reached
    with ib.for_range(0, 4, name="i") as i, ib.for_range(0, i + 1, name="j") as j:
        b[i - j] = a[0]


def _let_unknown(ib, a, b, m):
    k = ib.let("k", tir.Cast("int32", a[0]))
    b[k + 16] = a[0]


def _data_dependent(ib, a, b, m):
    with ib.for_range(0, 16, name="i") as i:
        b[tir.Cast("int32", a[i])] = a[i]


_MAY_NOT_RUN_OR_MAY_BE_IN_BOUNDS = {
    "symbolic_extent": _symbolic_extent,
    "zero_extent": _zero_extent,
    "guard_maybe": _guard_maybe,
    "guard_never": _guard_never,
    "if_then_else": _if_then_else,
    "select": _select,
    "after_while": _after_while,
    "in_bounds_corner": _in_bounds_corner,
    "let_unknown": _let_unknown,
    "data_dependent": _data_dependent,
}


@pytest.mark.parametrize("case", list(_MAY_NOT_RUN_OR_MAY_BE_IN_BOUNDS))
def test_an_access_that_may_not_run_or_may_be_in_bounds_builds(case):
    func = kernel(_MAY_NOT_RUN_OR_MAY_BE_IN_BOUNDS[case])
    assert provably_out_of_bounds(func) == []
    codegen.build(func)


def test_config_off_builds_it_and_te_programs_are_checked_too():
    def write(ib, a, b, m):
        b[16] = a[0]

    with transform.PassContext(config={"tir.instrument_bound_checkers": False}):
        codegen.build(kernel(write))
    X = te.placeholder((16,), name="X")
    Y = te.compute((16,), lambda i: X[i + 1], name="Y")
    with pytest.raises(ValueError, match=r"X\[.*\+ 1\] is out of bounds on every execution: "
                                         r"index in \[1, 16\], buffer X has shape \(16,\)"):
        codegen.build(te.create_prim_func([X, Y]))


def test_a_valid_program_still_runs():
    def write(ib, a, b, m):
        with ib.for_range(0, 8, name="i") as i:
            b[i + 8] = a[i * 2 + 1]

    lib = codegen.build(kernel(write))
    a, b = np.arange(16, dtype="float32"), np.zeros(16, "float32")
    lib(a, b, np.zeros((4, 8), "float32"), 0)
    assert b[8:].tolist() == a[1::2].tolist()
