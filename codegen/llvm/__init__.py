"""The LLVM backend: TIR to ``llvmlite.ir``, target machines and optimization."""

from .codegen_llvm import CodeGenLLVM, symbol_name

__all__ = ["CodeGenLLVM", "symbol_name"]
