"""bfloat16 tensors through DLPack: NumPy's import refuses the dtype, so tirlite reads the
capsule itself (codegen/runtime/dlpack_capsule.py) and views the same memory as
``ml_dtypes.bfloat16``.

``Bf16Tensor`` exports a capsule built here with ctypes, as PyTorch and JAX build theirs
(NumPy cannot export bfloat16 either); PyTorch and JAX run where installed.
"""

from __future__ import annotations

import ctypes
import gc

import ml_dtypes
import numpy as np
import pytest

import codegen
import tir
from codegen.runtime.dlpack_capsule import (
    DELETER,
    KDL_BFLOAT,
    VERSIONED_DELETER,
    ManagedTensor,
    ManagedTensorVersioned,
)
from tir import ir_builder

BF16 = ml_dtypes.bfloat16
_new_capsule = ctypes.pythonapi.PyCapsule_New
_new_capsule.restype = ctypes.py_object
_new_capsule.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]


_EXPORTED: set = set()  # tensors with an export the consumer has not released yet


class Bf16Tensor:
    """A bfloat16 tensor of some library: memory of its own, exported through DLPack 1.0
    (``read_only`` sets the flag), or through the older unversioned capsule (``legacy``)."""

    def __init__(self, array: np.ndarray, device: tuple[int, int] = (1, 0), *,
                 read_only: bool = False, legacy: bool = False):
        self.array, self.device = array, device
        self.read_only, self.legacy = read_only, legacy
        self.released = self.exports = 0
        self._keep: list = []

    def __dlpack_device__(self):
        return self.device

    def __dlpack__(self, max_version=None, **kwargs):
        versioned = max_version is not None and not self.legacy
        managed = ManagedTensorVersioned() if versioned else ManagedTensor()
        self._describe(managed.dl_tensor)
        if versioned:
            managed.major, managed.minor, managed.flags = 1, 0, int(self.read_only)
            managed.deleter = VERSIONED_DELETER(self._release)
        else:
            managed.deleter = DELETER(self._release)
        self._keep += [managed, managed.deleter]
        # As a real exporter's manager_ctx does: the tensor, its shape and the callback live
        # until the consumer calls the deleter, whatever happens to the Python object.
        self.exports += 1
        _EXPORTED.add(self)
        name = b"dltensor_versioned" if versioned else b"dltensor"
        return _new_capsule(ctypes.addressof(managed), name, None)

    def _describe(self, t):
        a = self.array
        shape = (ctypes.c_int64 * a.ndim)(*a.shape)
        strides = (ctypes.c_int64 * a.ndim)(*(s // 2 for s in a.strides))
        self._keep += [shape, strides]
        t.data, t.ndim, t.shape, t.strides, t.byte_offset = a.ctypes.data, a.ndim, shape, \
            strides, 0
        t.device.device_type, t.device.device_id = self.device
        t.dtype.code, t.dtype.bits, t.dtype.lanes = KDL_BFLOAT, 16, 1

    def _release(self, _ptr):
        self.released += 1
        if self.released == self.exports:
            _EXPORTED.discard(self)


def scale():
    """B[i, j] = A[i, j] * 2 on bfloat16 (n, m)."""
    n, m = tir.size_var("n"), tir.size_var("m")
    A = tir.decl_buffer((n, m), "bfloat16", "A")
    B = tir.decl_buffer((n, m), "bfloat16", "B")
    ib = ir_builder.create()
    a, b = ib.buffer_ptr(A), ib.buffer_ptr(B)
    with ib.for_range(0, n, name="i") as i:
        with ib.for_range(0, m, name="j", kind="vectorize") as j:
            b[i, j] = a[i, j] * tir.const(2.0, "bfloat16")
    pa, pb = tir.Var("A", "handle"), tir.Var("B", "handle")
    return codegen.build(tir.PrimFunc([pa, pb], ib.get(), buffer_map={pa: A, pb: B}))


@pytest.fixture(scope="module")
def kernel():
    return scale()


def test_a_bfloat16_tensor_is_written_in_place(kernel):
    a = np.arange(-10, 14, dtype=np.float32).reshape(4, 6).astype(BF16)
    out = Bf16Tensor(np.zeros((4, 6), BF16))
    before = out.array.ctypes.data
    src = Bf16Tensor(a)
    kernel(src, out)
    assert out.array.ctypes.data == before
    np.testing.assert_array_equal(out.array.astype(np.float32), a.astype(np.float32) * 2)
    gc.collect()
    assert (src.released, out.released) == (1, 1)  # each capsule's deleter, once


def test_a_strided_bfloat16_view_keeps_its_strides(kernel):
    from codegen.runtime.dlpack_capsule import bfloat16_view

    base = np.arange(48, dtype=np.float32).reshape(6, 8).astype(BF16)
    view = bfloat16_view(Bf16Tensor(base[::2, ::2]))  # rows and columns skipped
    assert view.strides == (32, 4) and view.ctypes.data == base.ctypes.data
    np.testing.assert_array_equal(view, base[::2, ::2])
    # ... and is checked as that ndarray would be: this kernel takes dense buffers
    with pytest.raises(ValueError, match=r"C-contiguous array; got one with strides \(32, 4\)"):
        kernel(Bf16Tensor(base[::2, ::2]), np.zeros((3, 4), BF16))


@pytest.mark.parametrize("how", ["read_only", "legacy"])
def test_memory_that_may_not_be_written_is_refused_as_an_output(kernel, how):
    """The read-only flag of DLPack 1.0, or no flag at all (an unversioned capsule, which
    NumPy's from_dlpack imports read-only too)."""
    a = np.ones((2, 3), BF16)
    out = Bf16Tensor(np.zeros((2, 3), BF16), **{how: True})
    with pytest.raises(ValueError, match="argument 'B' is read-only"):
        kernel(a, out)
    b = np.zeros((2, 3), BF16)
    kernel(Bf16Tensor(a, **{how: True}), b)  # an input may be read-only
    np.testing.assert_array_equal(b.astype(np.float32), 2 * np.ones((2, 3), np.float32))


def test_a_bfloat16_tensor_on_another_device_is_named(kernel):
    with pytest.raises(ValueError, match="lives on CUDA"):
        kernel(Bf16Tensor(np.zeros((2, 2), BF16), device=(2, 0)), np.zeros((2, 2), BF16))


def test_a_bfloat16_tensor_for_a_float32_parameter_is_a_dtype_error():
    n = tir.size_var("n")
    A = tir.decl_buffer((n,), "float32", "A")
    ib = ir_builder.create()
    a = ib.buffer_ptr(A)
    with ib.for_range(0, n, name="i") as i:
        a[i] = a[i] + tir.const(1.0, "float32")
    pa = tir.Var("A", "handle")
    mod = codegen.build(tir.PrimFunc([pa], ib.get(), buffer_map={pa: A}))
    with pytest.raises(TypeError, match="float32"):
        mod(Bf16Tensor(np.zeros(4, BF16)))


def test_pytorch_bfloat16_where_installed(kernel):
    torch = pytest.importorskip("torch")
    a = torch.arange(-6, 6, dtype=torch.float32).reshape(3, 4).to(torch.bfloat16)
    out = torch.zeros((3, 4), dtype=torch.bfloat16)
    ptr = out.data_ptr()
    kernel(a, out)
    assert out.data_ptr() == ptr and torch.equal(out, a * 2)


def test_jax_bfloat16_where_installed(kernel):
    jnp = pytest.importorskip("jax.numpy")
    a = jnp.arange(-6, 6, dtype=jnp.float32).reshape(3, 4).astype(jnp.bfloat16)
    out = np.zeros((3, 4), BF16)
    kernel(a, out)
    np.testing.assert_array_equal(out.astype(np.float32), np.asarray(a, np.float32) * 2)
    with pytest.raises(ValueError, match="argument 'B' is read-only"):  # JAX's are immutable
        kernel(a, jnp.zeros((3, 4), dtype=jnp.bfloat16))
