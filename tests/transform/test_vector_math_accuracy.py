"""LowerVectorMath: accuracy over the whole float32 range, special values, and agreement of
the vectorized build, the serial build and the interpreter.

Each function is built as a kernel vectorized as wide as the host's vector
registers (benchmarks/vector_math_accuracy.py holds the kernel, the float64
reference and the ulp measure) and run on a sample spread over every float32
bit pattern plus the special values and thresholds.
"""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import numpy as np
import pytest

import codegen
import tir
import transform
from transform.lower_vector_math import VectorMathLowerer

_PATH = Path(__file__).resolve().parents[2] / "benchmarks" / "vector_math_accuracy.py"
_SPEC = importlib.util.spec_from_file_location("vector_math_accuracy", _PATH)
acc = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(acc)

#: The documented bound of each function (README.md, transform/vector_math), in ulps.
BOUNDS = {"exp": 1.5, "exp2": 1.5, "log": 1.5, "log2": 1.5, "sin": 2.0, "cos": 2.0,
          "tanh": 2.0, "sigmoid": 2.5, "erf": 2.5, "sqrt": 0.5, "rsqrt": 1.5, "pow": 1.0}
STRICT = {"codegen.llvm.fp_contract": False}


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    """Bit for bit, except that any NaN equals any NaN (payloads are not specified)."""
    return bool(np.all((a.view(np.uint32) == b.view(np.uint32)) | (np.isnan(a) & np.isnan(b))))


@pytest.fixture(scope="module")
def sample() -> np.ndarray:
    return acc.sample_inputs(1 << 17, seed=12)


@pytest.mark.parametrize("name", acc.UNARY)
def test_max_ulp_over_the_float32_range(name, sample):
    got = acc.run(acc.build(name), sample)
    err = acc.ulp_error(got, acc.reference(name, sample))
    worst = int(np.argmax(err))
    assert err[worst] <= BOUNDS[name], f"{name}({sample[worst]!r}) = {got[worst]!r}"


def test_pow_max_ulp():
    x, y = acc.pow_inputs(1 << 17, seed=12)
    got = acc.run(acc.build("pow"), x, y)
    err = acc.ulp_error(got, acc.reference("pow", x, y))
    worst = int(np.argmax(err))
    assert err[worst] <= BOUNDS["pow"], f"pow({x[worst]!r}, {y[worst]!r}) = {got[worst]!r}"


@pytest.mark.parametrize("name", acc.FUNCTIONS)
def test_serial_vectorized_and_interpreter_agree(name, sample):
    if name == "pow":  # every 13th pair of specials: the interpreter's float64 fma is slow
        x, y = acc.pow_inputs(256, seed=5)
        keep = np.r_[0:x.size - 256:13, x.size - 256:x.size]
        args = (x[keep], y[keep])
    else:
        args = (np.concatenate([acc.special_inputs(), sample[:1024]]),)
    vectorized = acc.run(acc.build(name, config=STRICT), *args)
    serial = acc.run(acc.build(name, config={**STRICT, "tir.disable_vectorize": True}), *args)
    contracted = acc.run(acc.build(name), *args)  # explicit fma: contraction changes nothing
    interp = acc.run(acc.build(name, target="interp", config=STRICT), *args)
    assert _same(vectorized, serial) and _same(vectorized, contracted)
    assert _same(vectorized, interp)


SPECIALS = [  # (function, input, C's result)
    ("exp", math.inf, math.inf), ("exp", -math.inf, 0.0), ("exp", 89.0, math.inf),
    ("exp", -104.0, 0.0), ("exp", -100.0, float(np.float32(math.exp(-100.0)))),
    ("exp", -0.0, 1.0), ("exp2", -149.0, 2.0**-149), ("exp2", 128.0, math.inf),
    ("exp2", -150.0, 0.0), ("log", 0.0, -math.inf), ("log", -0.0, -math.inf),
    ("log", -1.0, math.nan), ("log", math.inf, math.inf), ("log", 1.0, 0.0),
    ("log", 2.0**-149, float(np.float32(-149 * math.log(2)))), ("log2", 2.0**-140, -140.0),
    ("log2", -math.inf, math.nan), ("sin", -0.0, -0.0), ("sin", math.inf, math.nan),
    ("cos", -math.inf, math.nan), ("cos", 0.0, 1.0), ("tanh", -math.inf, -1.0),
    ("tanh", -0.0, -0.0), ("tanh", 20.0, 1.0), ("sigmoid", -math.inf, 0.0),
    ("sigmoid", math.inf, 1.0), ("sigmoid", -100.0, float(np.float32(math.exp(-100.0)))),
    ("erf", -math.inf, -1.0), ("erf", -0.0, -0.0), ("erf", 5.0, 1.0), ("rsqrt", 0.0, math.inf),
    ("rsqrt", -1.0, math.nan), ("sqrt", -0.0, -0.0),
]


@pytest.mark.parametrize("name, x, want", SPECIALS)
def test_special_values(name, x, want):
    got = acc.run(acc.build(name), np.array([x, math.nan], np.float32))
    assert np.isnan(got[1])
    if math.isnan(want):
        assert np.isnan(got[0])
    else:  # the sign of a zero counts
        assert got[0] == want and math.copysign(1, got[0]) == math.copysign(1, want)


POW_SPECIALS = [  # C11 F.10.4.4
    (math.nan, 0.0, 1.0), (1.0, math.nan, 1.0), (-1.0, math.inf, 1.0), (-1.0, -math.inf, 1.0),
    (-0.0, -3.0, -math.inf), (0.0, -3.0, math.inf), (-0.0, -2.0, math.inf),
    (-0.0, 3.0, -0.0), (-0.0, 2.0, 0.0), (-0.0, 0.5, 0.0), (-2.0, 0.5, math.nan),
    (-2.0, 3.0, -8.0), (-2.0, 2.0, 4.0), (0.5, math.inf, 0.0), (2.0, math.inf, math.inf),
    (0.5, -math.inf, math.inf), (2.0, -math.inf, 0.0), (-math.inf, -3.0, -0.0),
    (-math.inf, -2.0, 0.0), (-math.inf, 3.0, -math.inf), (-math.inf, 0.5, math.inf),
    (math.inf, -1.0, 0.0), (math.inf, 0.5, math.inf), (2.0, 128.0, math.inf),
    (2.0, -149.0, 2.0**-149), (2.0, -150.0, 0.0), (-2.0, 2.0**25, math.inf),
    (math.nan, 1.0, math.nan), (2.0, math.nan, math.nan),
]


@pytest.mark.parametrize("x, y, want", POW_SPECIALS)
def test_pow_special_cases_as_powf(x, y, want):
    got = acc.run(acc.build("pow"), np.array([x], np.float32), np.array([y], np.float32))[0]
    if math.isnan(want):
        assert np.isnan(got)
    else:
        assert got == want and math.copysign(1, got) == math.copysign(1, want)


def test_libm_mode_keeps_the_calls_and_bad_modes_are_rejected():
    x = tir.Var("x", "float32x8")
    func = tir.PrimFunc([x], tir.Evaluate(tir.exp(x)))
    mod = tir.IRModule.from_expr(func)
    with transform.PassContext(config={"tir.vector_math": "libm"}):
        assert transform.LowerVectorMath()(mod)["main"].body.value.op == "tir.exp"
    lowered = transform.LowerVectorMath()(mod)["main"].body.value
    assert not isinstance(lowered, tir.Call)
    with pytest.raises(ValueError, match="'polynomial', 'libm'"):
        transform.PassContext(config={"tir.vector_math": "fast"})


def test_float64_is_left_to_libm_and_float16_goes_through_float32():
    lowerer = VectorMathLowerer()
    wide = tir.exp(tir.Var("d", "float64x4"))
    assert lowerer(wide) is wide
    half = lowerer(tir.exp(tir.Var("h", "float16x8")))
    assert isinstance(half, tir.Cast) and half.dtype == "float16x8"


def test_the_vector_kernel_calls_no_libm():
    lowered = acc.build("exp")
    assert "expf" not in lowered.get_source("asm") and "llvm.exp" not in lowered.get_source("ll")
    kept = acc.build("exp", config={"tir.vector_math": "libm"})
    assert "expf" in kept.get_source("asm")


def test_float16_result_is_the_float32_result_rounded():
    x = acc.sample_inputs(1 << 10, seed=7)
    x = x[np.isfinite(x) & (np.abs(x) < 60000)].astype(np.float16)
    h = tir.decl_buffer((x.size,), "float16", name="h")
    out = tir.decl_buffer((x.size,), "float16", name="out")
    ib = tir.ir_builder.create()
    hp, op_ = ib.buffer_ptr(h), ib.buffer_ptr(out)
    with ib.for_range(0, x.size, name="i") as i:
        op_[i] = tir.exp(hp[i])
    got = np.empty_like(x)
    codegen.build(tir.PrimFunc([h, out], ib.get()))["main"](x, got)
    with np.errstate(over="ignore"):  # exp beyond 11.09 is inf in float16
        want = acc.run(acc.build("exp"), x.astype(np.float32)).astype(np.float16)
    assert _same(got.astype(np.float32), want.astype(np.float32))
