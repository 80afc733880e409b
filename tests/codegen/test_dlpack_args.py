"""Kernel arguments through DLPack: any object with ``__dlpack__`` on the CPU is viewed as
an ndarray without a copy and checked like one (codegen/runtime/dlpack.py).

The objects here export NumPy's own DLPack capsules through a wrapper that is not an
ndarray (what a PyTorch tensor or a JAX array looks like to tirlite); a PyTorch test
runs where torch is installed.
"""

import numpy as np
import pytest

import codegen
import tir
from codegen.interp.backend import build_interpreter
from tir import ir_builder


class Exported:
    """An array library's tensor: speaks DLPack, is not an ndarray."""

    def __init__(self, array, device=(1, 0)):
        self.array, self.device = array, device

    def __dlpack__(self, **kwargs):
        return self.array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.device


class Refusing(Exported):
    def __dlpack__(self, **kwargs):
        raise BufferError("this tensor requires grad")


def double():
    """B[i] = A[i] * 2 over float32 (n,)."""
    n = tir.size_var("n")
    A, B = tir.decl_buffer((n,), "float32", "A"), tir.decl_buffer((n,), "float32", "B")
    ib = ir_builder.create()
    a, b = ib.buffer_ptr(A), ib.buffer_ptr(B)
    with ib.for_range(0, n, kind="vectorize", name="i") as i:
        b[i] = a[i] * 2.0
    return tir.PrimFunc([A, B], ib.get())


@pytest.fixture(scope="module")
def kernel():
    return codegen.build(double())


@pytest.mark.parametrize("n", [0, 1, 17, 1000])
def test_results_land_in_the_exported_memory(kernel, n):
    a = np.random.default_rng(n).standard_normal(n).astype("float32")
    b = np.full(n, np.nan, "float32")
    kernel(Exported(a), Exported(b))
    np.testing.assert_array_equal(b, a * 2)  # written through the view: no copy
    c = np.zeros(n, "float32")
    build_interpreter(double())(Exported(a), Exported(c))
    np.testing.assert_array_equal(c, a * 2)


def test_a_mix_of_ndarrays_and_exported_arrays(kernel):
    a, b = np.arange(9, dtype="float32"), np.zeros(9, "float32")
    kernel(a, Exported(b))
    kernel(Exported(a), b)
    np.testing.assert_array_equal(b, a * 2)


BAD = [
    ("another device", lambda a, b: (Exported(a), Exported(b, device=(2, 0))), ValueError,
     "argument 'B' (Exported) lives on CUDA (device 0)"),
    ("read-only", lambda a, b: (Exported(a), Exported(_read_only(b))), ValueError,
     "argument 'B' is read-only"),
    ("dtype", lambda a, b: (Exported(a.astype("float64")), Exported(b)), TypeError,
     "expects a float32 array"),
    ("rank", lambda a, b: (Exported(a.reshape(2, -1)), b), ValueError,
     "(1-d), got float32 of shape (2, 4)"),
    ("strided", lambda a, b: (Exported(np.zeros(16, "float32")[::2]), b), ValueError,
     "C-contiguous"),
    ("overlap", lambda a, b: (Exported(b), b), ValueError, "overlap"),
    ("refuses", lambda a, b: (Refusing(a), b), TypeError,
     "cannot be viewed as a NumPy array through DLPack without a copy: this tensor requires"),
]


def _read_only(b):
    b = b.copy()
    b.flags.writeable = False
    return b


@pytest.mark.parametrize("case,make,error,words", BAD, ids=[b[0] for b in BAD])
def test_bad_exported_arrays_get_the_ndarray_errors(kernel, case, make, error, words):
    a, b = np.arange(8, dtype="float32"), np.zeros(8, "float32")
    with pytest.raises(error) as info:
        kernel(*make(a, b))
    assert words in str(info.value), str(info.value)


def test_pytorch_tensors_where_torch_is_installed(kernel):
    torch = pytest.importorskip("torch")  # optional: the protocol is tested above
    a = torch.arange(10, dtype=torch.float32)
    b = torch.zeros(10, dtype=torch.float32)
    ptr = b.data_ptr()
    kernel(a, b)
    assert torch.equal(b, a * 2) and b.data_ptr() == ptr  # written in place
    with pytest.raises(TypeError, match="through DLPack"):
        kernel(a.requires_grad_(), b)


def test_jax_arrays_where_jax_is_installed(kernel):
    """A JAX array is read in place; as an output it is refused: JAX arrays are immutable
    (XLA may share their buffers), and DLPack exports them read-only."""
    jnp = pytest.importorskip("jax.numpy")
    from codegen.runtime.dlpack import as_ndarray

    a = jnp.arange(10, dtype=jnp.float32)
    assert as_ndarray("f", "a", a).ctypes.data == a.unsafe_buffer_pointer()  # no copy
    b = np.zeros(10, "float32")
    kernel(a, b)
    np.testing.assert_array_equal(b, np.arange(10, dtype="float32") * 2)
    with pytest.raises(ValueError, match="argument 'B' is read-only"):
        kernel(a, jnp.zeros(10, dtype=jnp.float32))
