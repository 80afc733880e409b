"""``NarrowIntegerArithmetic``: integer arithmetic of vectorized loops in a narrow type.

The decision (analysis/narrowing.py) on expressions at the edges of each type,
and kernels built vectorized (narrowed), serial and in the interpreter on every
value of their 8-bit inputs, with tails: the bits must be the same.
"""

import numpy as np
import pytest

import codegen
import tir
import transform
from tir import ir_builder
from tir.arith import Analyzer
from transform.vector.analysis.narrowing import narrowing

U8 = tir.decl_buffer((4,), "uint8", "U")
I8 = tir.decl_buffer((4,), "int8", "S")
I16 = tir.decl_buffer((4,), "int16", "W")


def _wide(buf, k=0):
    return tir.Cast("int32", tir.BufferLoad(buf, [tir.const(k, "int32")]))


def _gray(r, g, b):
    return (r * 77 + g * 150 + b * 29 + 128) >> 8


@pytest.mark.parametrize("expr, out, want", [
    (_gray(_wide(U8, 0), _wide(U8, 1), _wide(U8, 2)), "uint8", "uint16"),
    (_wide(U8, 0) + _wide(U8, 1), "uint8", "uint16"),              # 510: past uint8
    (tir.min(_wide(U8, 0), _wide(U8, 1)), "uint8", "uint8"),       # stays in uint8
    (_wide(U8, 0) - _wide(U8, 1), "int16", "int16"),               # negative: signed
    (_wide(I8, 0) * _wide(I8, 1), "int16", "int16"),               # -16256 .. 16384
    (_wide(I8, 0) * _wide(U8, 1), "int16", "int16"),
    (_wide(U8, 0) * 300 + _wide(U8, 1) * 300, "uint16", None),     # 153000: no 16-bit type
    (_wide(I16, 0) + _wide(I16, 1), "int16", None),                # 65534: past int16
    (tir.truncdiv(_wide(U8, 0), 3) + 1, "uint8", None),            # division: kept wide
    (_wide(U8, 0) >> _wide(U8, 1), "uint8", None),                 # shift by a variable
    (_wide(U8, 0), "uint8", None),                                 # nothing computed
])
def test_the_narrowest_exact_type(expr, out, want):
    assert narrowing(tir.Cast(out, expr), Analyzer()) == want


def _kernel(n, body, dtypes, out_dtype, kind="vectorize"):
    bufs = [tir.decl_buffer((n,), dt_, f"A{k}") for k, dt_ in enumerate(dtypes)]
    out = tir.decl_buffer((n,), out_dtype, "O")
    ib = ir_builder.create()
    views = [ib.buffer_ptr(b) for b in bufs]
    po = ib.buffer_ptr(out)
    with ib.for_range(0, n, name="i", kind=kind) as i:
        po[i] = tir.Cast(out_dtype, body(*[tir.Cast("int32", v[i]) for v in views]))
    return tir.PrimFunc([*bufs, out], ib.get())


KERNELS = {
    "gray": (lambda r, g, b: (r * 77 + g * 150 + b * 29 + 128) >> 8, ["uint8"] * 3, "uint8"),
    "diff": (lambda a, b: a - b, ["uint8", "uint8"], "int16"),
    "blend": (lambda a, b: (a * 3 + b * 5) >> 3, ["uint8", "uint8"], "uint8"),
    "signed": (lambda a, b: tir.max(a * b, -300) + 7, ["int8", "int8"], "int16"),
}


def _inputs(rng, n, dtypes):
    out = []
    for dtype in dtypes:
        info = np.iinfo(dtype)
        x = rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
        x[:min(n, 2)] = [info.min, info.max][:min(n, 2)]  # both extremes, every run
        out.append(x)
    return out


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_narrowed_kernels_give_the_same_bits(name):
    body, dtypes, out_dtype = KERNELS[name]
    rng = np.random.default_rng(len(name))
    for n in (1, 7, 64, 65, 1000):
        func = _kernel(n, body, dtypes, out_dtype)
        narrowed = codegen.build(func)
        with transform.PassContext(config={"tir.vectorize.narrow_integers": False}):
            wide = codegen.build(func)
        with transform.PassContext(config={"tir.disable_vectorize": True}):
            serial = codegen.build(func)
        ins = _inputs(rng, n, dtypes)
        results = []
        for mod in (narrowed, wide, serial, codegen.build(func, "interp")):
            o = np.zeros(n, out_dtype)
            mod(*ins, o)
            results.append(o)
        for r in results[1:]:
            np.testing.assert_array_equal(results[0], r)


def test_every_pixel_value_through_the_gray_kernel():
    values = np.arange(256, dtype=np.uint8)
    r, g, b = (x.ravel() for x in np.meshgrid(values, values[::17], values[::5]))
    func = _kernel(r.size, KERNELS["gray"][0], ["uint8"] * 3, "uint8")
    out = np.zeros(r.size, np.uint8)
    codegen.build(func)(r, g, b, out)
    want = ((r.astype(np.int32) * 77 + g.astype(np.int32) * 150 + b.astype(np.int32) * 29
             + 128) >> 8).astype(np.uint8)
    np.testing.assert_array_equal(out, want)


def _lowered_text(func, config=None):
    with transform.PassContext(config=config or {}):
        return codegen.lower(func)["main"].script()


def test_only_vectorized_loops_and_only_when_on():
    body, dtypes, out_dtype = KERNELS["gray"]
    assert "uint16" in _lowered_text(_kernel(256, body, dtypes, out_dtype))
    assert "uint16" not in _lowered_text(_kernel(256, body, dtypes, out_dtype, kind="serial"))
    off = {"tir.vectorize.narrow_integers": False}
    assert "uint16" not in _lowered_text(_kernel(256, body, dtypes, out_dtype), off)
