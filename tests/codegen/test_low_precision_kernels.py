"""The float32 kernels of kernels.py re-typed to float16 and bfloat16, run three ways.

A kernel is re-typed through TVMScript: its printed text with ``float32``
replaced, parsed back (so constants such as ``T.bfloat16(0.25)`` round once to
the type). Its float32 inputs are rounded once to the type. The LLVM build
(vector and scalar, no FMA contraction) and the interpreter must agree bit for
bit; NumPy's float32 reference, computed on the same (rounded) inputs, rounds
only at the end, so it is compared within a few ulps of the type.
"""

import numpy as np
import pytest
from kernels import KERNELS
from strict_builds import llvm_scalar_strict, llvm_strict

from codegen.interp.backend import build_interpreter
from tir import script
from tir.low_precision import numpy_dtype, round_array

DTYPES = ["float16", "bfloat16"]
#: Kernels that stay float32: reinterpret_bits reads a float's bits as int32.
KEEP_FLOAT32 = {"reinterpret_bits"}
#: Relative error of the NumPy comparison, a few ulps of the type (sums of 9 products
#: in conv3x3 round 17 times).
RTOL = {"float16": 2.0 ** -7, "bfloat16": 2.0 ** -4}


def _float32_kernels() -> list[str]:
    names = []
    for name, make in KERNELS.items():
        if name not in KEEP_FLOAT32 and "float32" in make().func.script():
            names.append(name)
    return names


NAMES = _float32_kernels()


def _retyped(name: str, dtype: str):
    kernel = KERNELS[name]()
    func = script.from_source(kernel.func.script().replace("float32", dtype))
    return kernel, func


def _inputs(kernel, dtype: str, seed: int = 0) -> tuple:
    args = kernel.make_inputs(np.random.default_rng(seed))
    return tuple(round_array(a, dtype) if isinstance(a, np.ndarray) and a.dtype == np.float32
                 else a for a in args)


def _copy(args: tuple) -> tuple:
    return tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)


def _run(build, func, args: tuple) -> tuple:
    args = _copy(args)
    build(func)(*args)
    return args


_llvm, _llvm_scalar = llvm_strict, llvm_scalar_strict


def _same(got: np.ndarray, want: np.ndarray, what: str) -> None:
    if got.dtype.itemsize == 2 and got.dtype.kind != "i" and got.dtype.kind != "u":
        got, want = got.view(np.uint16), want.view(np.uint16)
    np.testing.assert_array_equal(got, want, err_msg=what)


def test_the_kernel_set_is_covered():
    assert {"vector_add", "guarded_tail", "math_intrinsics", "conv3x3_guarded",
            "elementwise_float32", "local_vector_buffer", "strided_param"} <= set(NAMES)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_retyped_kernel_llvm_equals_interpreter(dtype, name):
    kernel, func = _retyped(name, dtype)
    assert "float32" not in func.script() or name.startswith("cast_")
    args = _inputs(kernel, dtype)
    want = _run(build_interpreter, func, args)
    for build in (_llvm, _llvm_scalar):
        got = _run(build, func, args)
        for k, (g, w) in enumerate(zip(got, want)):
            if isinstance(g, np.ndarray):
                _same(g, w, f"{build.__name__} argument {k}")


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_retyped_kernel_close_to_numpy(dtype, name):
    kernel, func = _retyped(name, dtype)
    args = _inputs(kernel, dtype, seed=1)
    got = _run(_llvm, func, args)
    wide = tuple(a.astype(np.float32) if isinstance(a, np.ndarray)
                 and a.dtype == numpy_dtype(dtype) else a for a in args)
    for index, want in kernel.reference(wide).items():
        out = got[index].astype(np.float64)
        want = np.asarray(want, np.float64)
        scale = np.max(np.abs(want)) if want.size else 0.0
        if np.issubdtype(got[index].dtype, np.integer):  # trunc(A * 100): A * 100 rounded
            np.testing.assert_allclose(out, want, atol=RTOL[dtype] * scale + 1)
        else:
            np.testing.assert_allclose(out, want, rtol=RTOL[dtype], atol=RTOL[dtype] * scale)
