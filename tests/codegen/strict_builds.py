"""Builds without FMA contraction, for tests that compare LLVM with the interpreter bit for bit.

``codegen.llvm.fp_contract`` is on by default: a multiply and an add may fuse and round
once where the TIR (and the interpreter) rounds twice.
"""

import codegen
import transform

STRICT = {"codegen.llvm.fp_contract": False}


def llvm_strict(func):
    """``codegen.build(func)`` without contraction."""
    with transform.PassContext(config=STRICT):
        return codegen.build(func, target="llvm")


def llvm_scalar_strict(func):
    """The serial build (``tir.disable_vectorize``), without contraction."""
    with transform.PassContext(config={**STRICT, "tir.disable_vectorize": True}):
        return codegen.build(func, target="llvm")
