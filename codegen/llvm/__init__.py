"""The LLVM emitter: TIR to ``llvmlite.ir`` (target machines, optimization: codegen/machine.py)."""

from .codegen_llvm import CodeGenLLVM

__all__ = ["CodeGenLLVM"]
