"""The calling convention between the code the LLVM emitter writes and the runtime that calls it.

Both sides import it, neither imports the other (``llvm/`` emits, ``runtime/`` calls):

- an entry function ``symbol_name(name)`` returns ``i32`` (0, or an error code) and takes
  the PrimFunc's params in order -- buffers as pointers, scalars as
  ``native_param_type(dtype)`` -- then ``hidden_vars_of(func)``: the symbolic vars of
  buffer shapes, strides and offsets that are not params themselves;
- a module with parallel loops holds a global ``LAUNCHER_SYMBOL`` that the runtime sets
  to its thread pool's launcher before the first call.
"""

from __future__ import annotations

import re

from llvmlite import ir

from tir.analysis.var_use import used_vars
from tir.buffer import Buffer
from tir.function import PrimFunc

from .ir_types import I8, ir_type

#: Symbol prefix of generated entry functions.
SYMBOL_PREFIX = "tirlite_"

#: The global holding the runtime's launcher (``int launch(task_fn, closure, int64 extent)``).
LAUNCHER_SYMBOL = "tirlite_parallel_launch"


def symbol_name(name: str) -> str:
    """The native symbol of the function ``name`` (a C identifier)."""
    return SYMBOL_PREFIX + re.sub(r"\W", "_", name)


def native_param_type(dtype: str) -> ir.Type:
    """How a scalar param of ``dtype`` is passed: bool as i8, float16/bfloat16 as i16 bits."""
    if dtype == "bool":
        return I8
    if dtype in ("float16", "bfloat16"):
        return ir.IntType(16)
    return ir_type(dtype)


def hidden_vars_of(func: PrimFunc) -> tuple:
    """Symbolic vars of the buffer shapes/strides/offsets that are not params, in order."""
    exprs: list = []
    for param in func.params:
        buf = func.buffer_map.get(param)
        if buf is not None:
            exprs.extend(_buffer_exprs(buf))
    return tuple(v for v in used_vars(exprs) if not any(v is p for p in func.params))


def _buffer_exprs(buf: Buffer) -> list:
    return list(buf.shape) + list(buf.strides) + [buf.elem_offset]


__all__ = ["LAUNCHER_SYMBOL", "SYMBOL_PREFIX", "hidden_vars_of", "native_param_type",
           "symbol_name"]
