"""``call_llvm_pure_intrin``: a named LLVM intrinsic called from TIR, checked before LLVM
sees it (LLVM would abort the process on a wrong declaration or a CPU without it)."""

from __future__ import annotations

import numpy as np
import pytest

import codegen
import tir
from codegen import Target
from tir.script import from_source
from tir.script import tir as T

HOST = Target("llvm")


def pair_dot(name: str = "llvm.x86.avx2.pmadd.wd"):
    """``C[i] = A[2i] * B[2i] + A[2i+1] * B[2i+1]`` on int16, through ``vpmaddwd``."""
    @T.prim_func
    def f(A: T.Buffer((16,), "int16"), B: T.Buffer((16,), "int16"),
          C: T.Buffer((8,), "int32")):
        C[T.ramp(0, 1, 8)] = T.call_llvm_pure_intrin(
            "int32x8", name, T.uint32(2), A.vload([0], "int16x16"), B.vload([0], "int16x16"))
    return f


@pytest.mark.skipif(not HOST.has_feature("avx2"), reason="vpmaddwd on ymm needs AVX2")
def test_a_named_intrinsic_computes_what_it_says():
    rng = np.random.default_rng(0)
    a = rng.integers(-32767, 32768, 16).astype(np.int16)
    b = rng.integers(-32767, 32768, 16).astype(np.int16)
    c = np.zeros(8, np.int32)
    codegen.build(pair_dot())(a, b, c)
    p = a.astype(np.int64) * b.astype(np.int64)
    np.testing.assert_array_equal(c, (p[0::2] + p[1::2]).astype(np.int32))


def test_an_unknown_intrinsic_is_named():
    with pytest.raises(ValueError, match=r"LLVM knows no intrinsic 'llvm.x86.avx2.pmadd.wdd'"):
        codegen.build(pair_dot("llvm.x86.avx2.pmadd.wdd"), "llvm -mcpu=haswell")


def test_types_that_do_not_fit_the_intrinsic_are_an_error_not_an_abort():
    @T.prim_func
    def f(A: T.Buffer((16,), "int16"), C: T.Buffer((8,), "int32")):
        C[T.ramp(0, 1, 8)] = T.call_llvm_pure_intrin(
            "int32x8", "llvm.x86.avx2.pmadd.wd", T.uint32(2), A.vload([0], "int16x16"))
    with pytest.raises(ValueError, match=r"<8 x i32> llvm.x86.avx2.pmadd.wd\(<16 x i16>\)"
                                         r".*types do not match"):
        codegen.build(f, "llvm -mcpu=haswell")


def test_an_intrinsic_the_cpu_lacks_is_an_error_not_an_abort():
    with pytest.raises(ValueError, match=r"cannot be compiled for target 'llvm -mcpu=x86-64'"
                                         r".*cannot run it"):
        codegen.build(pair_dot(), "llvm -mcpu=x86-64")  # SSE2 only: no 256-bit vpmaddwd


def test_the_interpreter_says_it_cannot_run_an_llvm_intrinsic():
    from codegen.interp.backend import build_interpreter

    args = np.zeros(16, np.int16), np.zeros(16, np.int16), np.zeros(8, np.int32)
    with pytest.raises(ValueError, match=r"cannot evaluate the LLVM intrinsic "
                                         r"llvm.x86.avx2.pmadd.wd"):
        build_interpreter(pair_dot())(*args)


def test_the_name_must_be_an_llvm_intrinsic():
    with pytest.raises(ValueError, match=r"expected an LLVM intrinsic name.*'pmadd'"):
        tir.call_llvm_pure_intrin("int32", "pmadd", 2, 1, 2)


def test_two_signatures_of_one_intrinsic_in_a_module_are_refused():
    @T.prim_func
    def f(A: T.Buffer((16,), "float32")):
        A[0] = T.call_llvm_pure_intrin("float32", "llvm.sqrt", T.uint32(1), A[0])
        A[T.ramp(8, 1, 8)] = T.call_llvm_pure_intrin("float32x8", "llvm.sqrt", T.uint32(1),
                                                     A.vload([8], "float32x8"))
    with pytest.raises(ValueError, match="called with two signatures"):
        codegen.build(f)


def test_the_call_prints_as_tvm_writes_it_and_parses_back():
    f = pair_dot()
    text = str(f)
    assert 'T.call_llvm_pure_intrin("int32x8", "llvm.x86.avx2.pmadd.wd", T.uint32(2),' in text
    tir.assert_structural_equal(from_source(text), f)
    call = tir.call_llvm_pure_intrin("int32", tir.llvm_lookup_intrinsic_id("llvm.ctpop"), 1,
                                     tir.const(5, "int32"))
    assert call.op == "tir.call_llvm_pure_intrin" and call.args[0].value == "llvm.ctpop"
