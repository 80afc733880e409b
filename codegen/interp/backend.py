"""The reference interpreter backend: runs TIR on NumPy arrays, no LLVM involved.

It has the interface of the compiled ``Module``: ``mod["main"](*args)``,
``mod(*args)``, ``get_source("tir")``. Arguments are checked by
``codegen.runtime.args`` exactly as for native code. Every node is evaluated with
TIR's meaning (see ``codegen/interp/machine.py``); out-of-bounds accesses
raise ``IndexError`` instead of reading garbage. It is slow (a Python step
per node) and meant as the oracle for differential tests and for stepping
through a program.

>>> mod = build_interpreter(func)          # doctest: +SKIP
>>> mod["main"](a, b, c)                   # doctest: +SKIP
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tir.buffer import Buffer
from tir.function import IRModule, PrimFunc
from tir.functor import deep_recursion
from transform import Sequential
from transform.lower_blocks import has_blocks, lower_blocks_passes

from ..runtime import args as argcheck
from . import values
from .machine import Machine, ReturnValue


class InterpreterFunction:
    """One PrimFunc of an ``InterpreterModule``, callable on NumPy arrays and numbers."""

    def __init__(self, func: PrimFunc, name: str, module: InterpreterModule):
        self.func = func
        self.name = name
        self.module = module  # keeps the module alive, as a compiled function does
        self._binder = argcheck.ArgBinder(func, name)

    def __call__(self, *args: Any) -> Any:
        bound = self._binder.bind(args)
        env = self._environment(bound)
        machine = Machine(env, self.module.vscale, self.module.poison_allocations, self.name,
                          self.module.externs)
        with deep_recursion(), np.errstate(all="ignore"):
            try:
                machine.run(self.func.body)
            except ReturnValue as ret:
                return ret.value
        return None

    def _environment(self, bound: argcheck.BoundArgs) -> dict:
        """Vars to values: scalars as NumPy scalars, buffers' data vars to flat memory."""
        env: dict = {}
        for var, value in bound.var_values.items():
            env[var] = values.make(value, var.dtype)
        for param, value in zip(self.func.params, bound.values):
            buf = self.func.buffer_map.get(param)
            if buf is not None:
                env[buf.data] = env[param] = flat_memory(value, buf)
            elif isinstance(value, np.ndarray):
                env[param] = flat_memory(value, None)
            else:
                env[param] = values.make(value, param.dtype)
        return env


def flat_memory(arr: np.ndarray, buf: Buffer | None) -> np.ndarray:
    """A flat 1-D view of the memory spanned by ``arr``, from its first element."""
    # A subclass such as np.matrix keeps its own shape rules (a matrix stays 2-D
    # when reshaped); its memory, which the native module reads, is a plain array.
    arr = arr.view(np.ndarray)
    if arr.flags.c_contiguous:
        return arr.reshape(-1)
    itemsize = arr.itemsize
    span = sum((n - 1) * s for n, s in zip(arr.shape, arr.strides)) + itemsize
    count = span // itemsize if arr.size else 0
    return np.lib.stride_tricks.as_strided(
        arr, shape=(count,), strides=(itemsize,), writeable=arr.flags.writeable
    )


class InterpreterModule:
    """The interpreter's stand-in for a compiled ``Module``."""

    def __init__(self, mod: IRModule, vscale: int = 1, poison_allocations: bool = False,
                 externs: dict | None = None):
        self.ir_module = mod
        self.vscale = vscale
        self.poison_allocations = poison_allocations
        self.externs = dict(externs or {})
        self.entry_name = "main" if "main" in mod else next(iter(mod.functions), None)
        #: The remarks of the passes that built it (set by ``codegen.build``).
        self.remarks: tuple = ()
        self._functions = {
            name: InterpreterFunction(func, name, self) for name, func in mod.functions.items()
        }

    @property
    def function_names(self) -> list[str]:
        """Names of the functions, as ``codegen.Module.function_names``."""
        return list(self._functions)

    def __getitem__(self, name: str) -> InterpreterFunction:
        return self.get_function(name)

    def get_function(self, name: str) -> InterpreterFunction:
        """The function ``name``; KeyError naming the available ones if absent."""
        try:
            return self._functions[name]
        except KeyError:
            raise KeyError(
                f"interpreter module has no function {name!r}; it has {sorted(self._functions)}"
            ) from None

    def __call__(self, *args: Any) -> Any:
        if self.entry_name is None:
            raise ValueError("interpreter module has no functions to call")
        return self._functions[self.entry_name](*args)

    def get_source(self, fmt: str = "tir") -> str:
        """The module's TIR as text; the interpreter has no "ll" or "asm" source."""
        if fmt != "tir":
            raise ValueError(
                f"interpreter module has no {fmt!r} source (it runs TIR directly); "
                "use get_source('tir'), or build with target='llvm' for 'll' and 'asm'"
            )
        return "\n\n".join(f"# {name}\n{func.script()}" for name, func in self.ir_module.items())


def build_interpreter(mod_or_func: IRModule | PrimFunc, vscale: int = 1,
                      poison_allocations: bool = False,
                      externs: dict | None = None) -> InterpreterModule:
    """Wrap a PrimFunc or IRModule for execution by the reference interpreter.

    Args:
        mod_or_func: the program; a lone PrimFunc becomes the module's "main".
        vscale: the value of ``tir.vscale()`` for scalable vectors (1 = 128-bit).
        poison_allocations: fill ``Allocate``d memory with 0xFF bytes (NaN for
            floats) instead of zeros, to expose reads of uninitialised memory.
        externs: Python versions of extern functions, by name: a
            ``call_extern("int32", "f", x)`` calls ``externs["f"](x)``.
            Without an entry, C math functions (``expf``, ``sqrt``) still work.

    Returns:
        An ``InterpreterModule``: ``mod["main"](*args)``, ``mod(*args)``.

    Raises:
        TypeError: if ``mod_or_func`` is neither a PrimFunc nor an IRModule.
    """
    if isinstance(mod_or_func, PrimFunc):
        mod_or_func = IRModule.from_expr(mod_or_func)
    if not isinstance(mod_or_func, IRModule):
        raise TypeError(
            f"build_interpreter: expected a PrimFunc or an IRModule, "
            f"got {type(mod_or_func).__name__}"
        )
    return InterpreterModule(_without_blocks(mod_or_func), int(vscale), bool(poison_allocations),
                             externs)


def _without_blocks(mod: IRModule) -> IRModule:
    """``mod`` with scheduled stages (``tir.Block``) lowered to plain loops, as ``build`` does."""
    if not any(has_blocks(f) for f in mod.functions.values()):
        return mod
    return Sequential(lower_blocks_passes(), name="lower_blocks")(mod)


__all__ = ["InterpreterFunction", "InterpreterModule", "build_interpreter"]
