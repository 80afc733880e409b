"""Differential tests: every kernel of kernels.py, run three ways, must match NumPy.

The ways: ``codegen.build`` (vectorized, default PassContext),
``codegen.build`` with ``tir.disable_vectorize``, the reference interpreter
on the TIR as written, and the interpreter on the output of the build
pipeline (``codegen.lower``), by default and with buffer-level predication.
The last two tell a pass bug from a code generator bug. Each run gets fresh
inputs from the same seed.
"""

import numpy as np
import pytest

import codegen
import transform
from codegen.interpreter import build_interpreter

from kernels import KERNELS

#: (rtol, atol) by output dtype; integers and bools must match exactly.
TOLERANCES = {"float16": (1e-3, 1e-3), "float32": (1e-5, 1e-6), "float64": (1e-12, 1e-12)}
#: Kernels whose float results may differ more (reassociated sums, libm vs NumPy).
LOOSER = {"serial_sum": (1e-9, 1e-9), "math_intrinsics": (2e-5, 1e-5)}


def _build_llvm(func):
    return codegen.build(func, target="llvm")


def _build_llvm_scalar(func):
    with transform.PassContext(config={"tir.disable_vectorize": True}):
        return codegen.build(func, target="llvm")


def _interpret_lowered(func):
    return build_interpreter(codegen.lower(func))


def _interpret_predicated(func):
    with transform.PassContext(config={"tir.enable_buffer_level_predication": True}):
        return build_interpreter(codegen.lower(func))


WAYS = {
    "vectorized": _build_llvm,
    "scalar": _build_llvm_scalar,
    "interpreter": build_interpreter,
    "lowered_tir": _interpret_lowered,
    "predicated_tir": _interpret_predicated,
}


def _check(name, outputs, expected):
    for index, want in expected.items():
        got = outputs[index]
        assert got.dtype == want.dtype and got.shape == want.shape
        if got.dtype.kind == "f":
            rtol, atol = LOOSER.get(name, TOLERANCES[str(got.dtype)])
            np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=name)
        else:
            np.testing.assert_array_equal(got, want, err_msg=name)


@pytest.mark.parametrize("way", list(WAYS))
@pytest.mark.parametrize("name", list(KERNELS))
def test_kernel_matches_numpy(name, way):
    func, make_inputs, reference = KERNELS[name]()
    inputs = make_inputs(np.random.default_rng(7))
    expected = reference(inputs)
    module = WAYS[way](func)
    module["main"](*inputs)
    _check(name, inputs, expected)


def test_ways_agree_with_each_other_on_the_tail():
    """The guarded tail must leave the elements past n untouched in every backend."""
    func, make_inputs, _ = KERNELS["guarded_tail"]()
    results = []
    for build in WAYS.values():
        a, b, c, n = make_inputs(np.random.default_rng(3))
        c[:] = -7.0
        build(func)["main"](a, b, c, n - 5)
        results.append(c)
    for other in results[1:]:
        np.testing.assert_array_equal(results[0], other)
    assert (results[0][-5:] == -7.0).all()
