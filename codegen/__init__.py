"""Code generation: TIR to native code through LLVM, and a reference interpreter.

>>> lib = codegen.build(func, target="llvm")   # doctest: +SKIP
>>> lib["main"](a, b, c)                       # doctest: +SKIP

- ``build(mod_or_func, target)`` runs ``default_pipeline()`` (see build.py)
  under the current ``PassContext``, generates LLVM IR (llvm/), optimizes it
  at ``O3`` and JIT-compiles it into a ``Module``; ``lower`` stops after the
  passes. Config keys: ``codegen.llvm.fast_math``, ``codegen.llvm.opt_level``,
  ``tir.noalias``. Parallel loops use ``TIRLITE_NUM_THREADS`` threads, or
  ``n`` inside ``with codegen.num_threads(n):`` (codegen/runtime/parallel.py).
- ``build_for_tuning(mod, target)``: ``build`` under ``TUNING_BUILD_CONFIG``
  (no bounds checks), for a tuner timing candidates it checks itself;
  ``build_tuning_artifact(mod, target)`` gives its code as bytes (object
  code, no JIT, no linker) that ``load_artifact(data)`` runs in another process.
- ``Module``: ``mod["main"]`` (a ``PackedFunction``), ``mod(*args)``,
  ``get_source("ll" | "asm" | "tir")``, ``export_library(path)``;
  ``load_module(path)`` loads an exported library back.
- ``emulate(mod, sve_vector_length)`` runs an aarch64 (SVE) module under QEMU
  on this machine (emulation.py), for tests.
- ``Target("llvm -mcpu=... -mattr=... -mtriple=...")`` parses target strings.

llvmlite is imported only when something is compiled, so ``import codegen``
stays cheap.
"""

from .build import (
    TUNING_BUILD_CONFIG,
    build,
    build_for_tuning,
    build_tuning_artifact,
    clear_cache,
    default_pipeline,
    load_artifact,
    lower,
)
from target import Target


def load_module(path: str):
    """Load a library written by ``Module.export_library`` (same calling interface)."""
    from .runtime.module import load_module as _load

    return _load(path)


def num_threads(n: int):
    """A context manager: parallel loops of calls made inside it, on this thread, use
    ``n`` threads (codegen/runtime/parallel.py)."""
    from .runtime.parallel import use_threads

    return use_threads(n)


def build_interpreter(mod, **options):
    """The reference interpreter's module for ``mod`` (codegen/interp/backend.py), called
    like a built one; ``externs={"f": py_fn}`` runs extern calls as Python functions."""
    from .interp.backend import build_interpreter as _build

    return _build(mod, **options)


def emulate(mod, sve_vector_length=None, **options):
    """Run an aarch64 module under QEMU (codegen/emulation/): an ``EmulatedModule``."""
    from .emulation import emulate as _emulate

    return _emulate(mod, sve_vector_length, **options)


def __getattr__(name: str):
    # Module and PackedFunction need NumPy/ctypes only; import them on first use.
    if name in ("Module", "PackedFunction"):
        from .runtime import module

        return getattr(module, name)
    raise AttributeError(f"module 'codegen' has no attribute {name!r}")


__all__ = [
    "TUNING_BUILD_CONFIG",
    "Module",
    "PackedFunction",
    "Target",
    "build",
    "build_for_tuning",
    "build_interpreter",
    "build_tuning_artifact",
    "clear_cache",
    "default_pipeline",
    "emulate",
    "load_artifact",
    "load_module",
    "lower",
    "num_threads",
]
