"""Tests for codegen.runtime.args: argument checks and symbolic shape binding."""

import numpy as np
import pytest

import tir
from codegen.abi import hidden_vars_of
from codegen.runtime.args import ArgBinder, bind_arguments


def _store_one(buf):
    return tir.BufferStore(buf, tir.const(1, buf.dtype), [0] * len(buf.shape))


def _func(params, body_buf):
    return tir.PrimFunc(params, _store_one(body_buf))


@pytest.fixture
def add_n():
    """main(A: float32[n], B: float32[16], n): stores into B."""
    n = tir.size_var("n")
    A = tir.decl_buffer((n,), "float32", "A")
    B = tir.decl_buffer((16,), "float32", "B")
    return _func([A, B, n], B)


def f32(*shape):
    return np.zeros(shape, "float32")


def test_binds_values_and_vars(add_n):
    bound = bind_arguments(add_n, (f32(8), f32(16), np.int64(8)))
    assert bound.values[2] == 8 and type(bound.values[2]) is int
    assert [v.name for v in bound.var_values] == ["n"]
    assert bound.hidden_vars == () and bound.hidden_values == ()


def test_wrong_count(add_n):
    with pytest.raises(TypeError, match=r"main: expects 3 arguments \(A, B, n\), got 2"):
        bind_arguments(add_n, (f32(8), f32(16)))


def test_wrong_dtype_message(add_n):
    msg = r"main: argument 'B' expects a float32 array of shape \(16,\), got float64 of shape"
    with pytest.raises(TypeError, match=msg):
        bind_arguments(add_n, (f32(8), np.zeros(16), 8))


def test_not_an_array(add_n):
    with pytest.raises(TypeError, match="argument 'A' expects a float32 array .* got None"):
        bind_arguments(add_n, (None, f32(16), 8))
    with pytest.raises(TypeError, match="argument 'A' .* got list"):
        bind_arguments(add_n, ([0.0] * 8, f32(16), 8))


def test_scalar_disagrees_with_shape(add_n):
    msg = r"main: argument 'n' = 5 disagrees with the length 8 of 'A' \(n\)"
    with pytest.raises(ValueError, match=msg):
        bind_arguments(add_n, (f32(8), f32(16), 5))


def test_static_shape_and_rank(add_n):
    with pytest.raises(ValueError, match="dimension 0 is 15, expected 16"):
        bind_arguments(add_n, (f32(8), f32(15), 8))
    with pytest.raises(ValueError, match=r"argument 'B' .*\(1-d\), got float32 of shape \(4, 4\)"):
        bind_arguments(add_n, (f32(8), f32(4, 4), 8))


def test_scalar_kinds(add_n):
    with pytest.raises(ValueError, match="'n' = 1099511627776 is out of range for int32"):
        bind_arguments(add_n, (f32(8), f32(16), 2**40))
    with pytest.raises(TypeError, match=r"'n' expects an integer \(int32\), got float 8.0"):
        bind_arguments(add_n, (f32(8), f32(16), 8.0))
    with pytest.raises(TypeError, match="'n' expects an integer"):
        bind_arguments(add_n, (f32(8), f32(16), True))


def test_float_and_bool_scalars():
    x, flag = tir.var("x", "float32"), tir.var("flag", "bool")
    B = tir.decl_buffer((1,), "float32", "B")
    func = _func([B, x, flag], B)
    bound = bind_arguments(func, (f32(1), 3, np.bool_(True)))
    assert bound.values[1:] == (3.0, True) and type(bound.values[2]) is bool
    with pytest.raises(ValueError, match="'x' = 1e\\+40 is out of range for float32"):
        bind_arguments(func, (f32(1), 1e40, True))
    with pytest.raises(TypeError, match="'flag' expects a bool, got int 1"):
        bind_arguments(func, (f32(1), 1.0, 1))
    with pytest.raises(TypeError, match="'x' expects a number"):
        bind_arguments(func, (f32(1), "1.0", True))


def test_non_contiguous_and_read_only(add_n):
    with pytest.raises(ValueError, match="'A' must be a C-contiguous array"):
        bind_arguments(add_n, (f32(16)[::2], f32(16), 8))
    frozen = f32(16)
    frozen.flags.writeable = False
    with pytest.raises(ValueError, match="'B' is read-only, but the function writes to it"):
        bind_arguments(add_n, (f32(8), frozen, 8))
    readonly_input = f32(8)
    readonly_input.flags.writeable = False
    bind_arguments(add_n, (readonly_input, f32(16), 8))


def test_shape_vars_consistent_across_buffers():
    n = tir.size_var("n")
    A = tir.decl_buffer((n,), "float32", "A")
    B = tir.decl_buffer((n, 2), "float32", "B")
    func = _func([A, B], B)
    bound = bind_arguments(func, (f32(5), f32(5, 2)))
    assert bound.hidden_vars == (n,) and bound.hidden_values == (5,)
    msg = r"the length 5 of 'A' disagrees with dimension 0 = 6 of 'B' \(n\)"
    with pytest.raises(ValueError, match=msg):
        bind_arguments(func, (f32(5), f32(6, 2)))


def test_composite_dim_checked():
    n = tir.size_var("n")
    A = tir.decl_buffer((n,), "float32", "A")
    B = tir.decl_buffer((n * 2,), "float32", "B")
    func = _func([A, B], B)
    bind_arguments(func, (f32(3), f32(6)))
    with pytest.raises(ValueError, match=r"the length 7 of 'B' does not match n \* 2 = 6"):
        bind_arguments(func, (f32(3), f32(7)))


def test_hidden_var_order():
    m, n, k = tir.size_var("m"), tir.size_var("n"), tir.size_var("k")
    A = tir.decl_buffer((m, n), "float32", "A")
    B = tir.decl_buffer((n, k), "float32", "B")
    func = _func([A, B, n], B)
    assert hidden_vars_of(func) == (m, k)
    bound = ArgBinder(func).bind((f32(2, 3), f32(3, 4), 3))
    assert bound.hidden_values == (2, 4)


def test_pointer_takes_any_1d_array():
    ib = tir.ir_builder.create()
    A = ib.pointer("int8", name="A")
    A[0] = tir.const(1, "int8")
    func = tir.PrimFunc([A], ib.get())
    bound = bind_arguments(func, (np.zeros(37, "int8"),))
    assert bound.hidden_values == (37,)
    with pytest.raises(ValueError, match="1-d"):
        bind_arguments(func, (np.zeros((2, 2), "int8"),))


def test_bool_and_vector_element_buffers():
    M = tir.decl_buffer((8,), "bool", "M")
    V = tir.decl_buffer((2,), "float32x4", "V")
    func = _func([M, V], M)
    bind_arguments(func, (np.zeros(8, bool), f32(2, 4)))
    with pytest.raises(TypeError, match="'M' expects a bool array"):
        bind_arguments(func, (np.zeros(8, "uint8"), f32(2, 4)))
    with pytest.raises(ValueError, match=r"'V' expects a float32 array of shape \(2, 4\)"):
        bind_arguments(func, (np.zeros(8, bool), f32(8)))


def test_declared_strides_bound_from_array():
    s = tir.size_var("s")
    A = tir.decl_buffer((4,), "float32", "A", strides=[s])
    func = _func([A], A)
    bound = bind_arguments(func, (f32(12)[::3],))
    assert bound.var_values[s] == 3
    with pytest.raises(ValueError, match="needs non-negative multiples of the element size 4"):
        bind_arguments(func, (f32(4)[::-1],))


def test_constant_elem_offset_rejected():
    A = tir.decl_buffer((4,), "float32", "A", elem_offset=2)
    with pytest.raises(ValueError, match="elem_offset 2"):
        bind_arguments(_func([A], A), (f32(4),))
