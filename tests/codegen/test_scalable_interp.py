"""The reference interpreter on scalable vectors: every construct at vscale 1, 2, 4, 16.

Kernels and NumPy references come from scalable_kernels.py; a vector of
``k * vscale()`` lanes has ``k * v`` lanes when the interpreter runs at
``vscale=v``, and the references compute with that many lanes per vector.
"""

from __future__ import annotations

import numpy as np
import pytest
import scalable_kernels as K

import tir
from codegen.interp.backend import build_interpreter

VSCALES = (1, 2, 4, 16)


def _copy(values):
    return [v.copy() if isinstance(v, np.ndarray) else v for v in values]


@pytest.mark.parametrize("dtype", K.ALL)
@pytest.mark.parametrize("name", list(K.KERNELS))
def test_every_scalable_construct_matches_numpy(name, dtype):
    kernel = K.KERNELS[name]
    func = kernel.make(dtype)
    for vscale in VSCALES:
        args = kernel.inputs(dtype, np.random.default_rng(vscale))
        expected = kernel.reference(_copy(args), vscale, dtype)
        build_interpreter(func, vscale=vscale)(*args)
        for position, want in zip(K.OUTPUTS[name], expected):
            np.testing.assert_array_equal(args[position], want,
                                          err_msg=f"{name} {dtype} vscale={vscale}")


def test_vector_if_then_else_blends_lanes():
    vl = 4 * tir.vscale()
    A = tir.decl_buffer((64,), "int32", name="A")
    r = tir.Ramp(0, 1, vl)
    a = tir.BufferLoad(A, [r])
    choice = tir.Call("int32xvscalex4", "tir.if_then_else",
                      [tir.GT(a, tir.Broadcast(2, vl)), a, tir.Broadcast(-1, vl)])
    func = tir.PrimFunc([A], tir.BufferStore(A, choice, [r]))
    a = np.arange(64, dtype=np.int32)
    build_interpreter(func, vscale=2)(a)
    np.testing.assert_array_equal(a[:8], [-1, -1, -1, 3, 4, 5, 6, 7])
    assert a[8] == 8  # only 4 * 2 lanes


def test_scalable_dtype_buffer_holds_vscale_lanes_per_element():
    """An Allocate of dtype float32xvscalex4: element 1 starts 4 * vscale lanes in."""
    vl = 4 * tir.vscale()
    A = tir.decl_buffer((64,), "float32", name="A")
    v = tir.decl_buffer((2,), "float32xvscalex4", name="v")
    body = tir.SeqStmt([
        tir.BufferStore(v, tir.BufferLoad(A, [tir.Ramp(0, 1, vl)]), [1]),
        tir.BufferStore(A, tir.BufferLoad(v, [1]), [tir.Ramp(vl, 1, vl)]),
    ])
    func = tir.PrimFunc([A], tir.Allocate(v.data, v.dtype, [2], tir.const(True), body))
    a = np.arange(64, dtype=np.float32)
    build_interpreter(func, vscale=4)(a)
    np.testing.assert_array_equal(a[16:32], np.arange(16))
    with pytest.raises(IndexError, match="buffer 'v'"):
        bad = tir.BufferStore(A, tir.BufferLoad(v, [2]), [tir.Ramp(0, 1, vl)])
        func = tir.PrimFunc([A], tir.Allocate(v.data, v.dtype, [2], tir.const(True), bad))
        build_interpreter(func, vscale=1)(a)


def test_undef_of_a_scalable_dtype_has_vscale_lanes():
    vl = 4 * tir.vscale()
    A = tir.decl_buffer((16,), "int32", name="A")
    undef = tir.Call("int32xvscalex4", "tir.undef", [])
    func = tir.PrimFunc([A], tir.BufferStore(A, undef * tir.Broadcast(0, vl),
                                             [tir.Ramp(0, 1, vl)]))
    a = np.ones(16, np.int32)
    build_interpreter(func, vscale=2)(a)
    np.testing.assert_array_equal(a, [0] * 8 + [1] * 8)
