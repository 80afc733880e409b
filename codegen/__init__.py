"""Code generation: TIR to native code through LLVM, and a reference interpreter.

>>> lib = codegen.build(func, target="llvm")   # doctest: +SKIP
>>> lib["main"](a, b, c)                       # doctest: +SKIP

llvmlite is imported only when something is compiled, so ``import codegen``
stays cheap.
"""

from .build import build, clear_cache, default_pipeline, lower
from .target import Target


def load_module(path: str):
    """Load a library written by ``Module.export_library`` (same calling interface)."""
    from .module import load_module as _load

    return _load(path)


def __getattr__(name: str):
    # Module and PackedFunction need NumPy/ctypes only; import them on first use.
    if name in ("Module", "PackedFunction"):
        from . import module

        return getattr(module, name)
    raise AttributeError(f"module 'codegen' has no attribute {name!r}")


__all__ = [
    "Module",
    "PackedFunction",
    "Target",
    "build",
    "clear_cache",
    "default_pipeline",
    "load_module",
    "lower",
]
