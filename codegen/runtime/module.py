"""The compiled ``Module``: owns the JIT (or loaded library), entry points and sources.

``build`` returns a ``Module``; ``mod["main"]`` is a ``PackedFunction`` that
checks its arguments (codegen/runtime/args.py) and then calls native code through
ctypes, which releases the GIL. ``export_library`` writes a shared library
(object file from LLVM, linked by the system C compiler) that
``load_module`` loads back with the same interface.
"""

from __future__ import annotations

import ctypes
import functools
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from typing import Any

import numpy as np

from target.target import Target
from tir.function import PrimFunc
from tir.low_precision import bfloat16_bits

from . import metadata as meta
from . import parallel
from .args import ArgBinder

#: Return codes of generated functions besides 0 and assertion numbers.
OUT_OF_MEMORY, RUNTIME_ERROR = -1, -2

_CTYPES = {
    "int8": ctypes.c_int8, "int16": ctypes.c_int16, "int32": ctypes.c_int32,
    "int64": ctypes.c_int64, "uint8": ctypes.c_uint8, "uint16": ctypes.c_uint16,
    "uint32": ctypes.c_uint32, "uint64": ctypes.c_uint64, "float32": ctypes.c_float,
    "float64": ctypes.c_double, "bool": ctypes.c_uint8, "float16": ctypes.c_uint16,
    "bfloat16": ctypes.c_uint16, "handle": ctypes.c_void_p,
}


def _address(arr: np.ndarray) -> int:
    """The address of an array's first element (the fast path avoids ``arr.ctypes``)."""
    try:
        return _addressof(_char_from_buffer(arr))
    except (TypeError, ValueError, BufferError):  # read-only, empty or strided arrays
        return arr.ctypes.data


_addressof, _char_from_buffer = ctypes.addressof, ctypes.c_char.from_buffer


def _half_bits(value: float) -> int:
    return int(np.float16(value).view(np.uint16))


#: How a checked Python value becomes a ctypes argument, by native dtype.
_CONVERT = {"handle": _address, "float16": _half_bits, "bfloat16": bfloat16_bits, "bool": int}


class PackedFunction:
    """One compiled function: call it with NumPy arrays and Python numbers.

    A call runs natively when it can (codegen/runtime/fastcall.py: the argument checks
    compiled to machine code, well under a microsecond); the arguments the
    native checks do not cover, and every bad call, go through ``ArgBinder``'s
    Python checks (codegen/runtime/args.py), which word the errors.
    """

    def __new__(cls, module: Module, name: str, func: PrimFunc, address: int):
        # __call__ is looked up on the type, so a function with a native caller
        # gets a class of its own whose __call__ is that builtin: no Python
        # frame between the caller and the checks.
        self = super().__new__(cls)
        self._init(module, name, func, address)
        native = self._native()
        if native is None:
            return self
        fast = type(cls.__name__, (cls,),
                    {"__call__": native.callable, "__module__": cls.__module__})
        self.__class__ = fast
        self._native_caller = native  # owns the method definition the builtin points to
        return self

    def __init__(self, module: Module, name: str, func: PrimFunc, address: int):
        pass  # everything happens in __new__, which may pick a subclass

    def _init(self, module: Module, name: str, func: PrimFunc, address: int) -> None:
        self.module = module  # keeps the native code alive as long as this object
        self.name = name
        self._address = address
        self._binder = ArgBinder(func, name)
        self._dtypes = ["handle" if p in func.buffer_map else p.dtype for p in func.params]
        self._dtypes += [v.dtype for v in self._binder.hidden_vars]
        argtypes = [_CTYPES[d] for d in self._dtypes]
        self._cfunc = ctypes.CFUNCTYPE(ctypes.c_int32, *argtypes)(address)
        self._arrays = [k for k, d in enumerate(self._dtypes[:len(func.params)]) if d == "handle"]
        self._convert = [(k, _CONVERT[d]) for k, d in enumerate(self._dtypes) if d in _CONVERT]
        self._native_caller = None

    def _native(self) -> Any:
        from . import fastcall

        if os.environ.get("TIRLITE_NATIVE_CALLS", "1") == "0":
            return None
        return fastcall.native_caller(self.name, self._binder, self._address,
                                      self._kernel_type(), self.call_checked, self._raise)

    def _kernel_type(self) -> Any:
        from llvmlite import ir

        from ..abi import native_param_type
        from ..ir_types import ir_type

        params = [ir.IntType(8).as_pointer() if d == "handle" else native_param_type(d)
                  for d in self._dtypes[:len(self._binder.func.params)]]
        params += [ir_type(v.dtype) for v in self._binder.hidden_vars]
        return ir.FunctionType(ir.IntType(32), params)

    def __call__(self, *args: Any) -> None:
        self.call_checked(*args)

    def call_checked(self, *args: Any) -> None:
        """The call with every check made in Python (what a native call falls back to)."""
        bound = self._binder.bind(args)
        values = list(bound.values)
        for k in self._arrays:
            self._check_aligned(k, values[k])
        values += bound.hidden_values
        for k, convert in self._convert:
            values[k] = convert(values[k])
        code = self._cfunc(*values)
        if code:
            self._raise(code)

    def _raise(self, code: int) -> None:
        raise self.module.error(self.name, code)

    @property
    def is_native(self) -> bool:
        """Whether calls check their arguments in native code (see codegen/runtime/fastcall.py)."""
        return self._native_caller is not None

    def _check_aligned(self, k: int, arr: np.ndarray) -> None:
        check_aligned(self.name, self._binder.func.params[k].name, arr)

    def __repr__(self) -> str:
        return f"<PackedFunction {self.name} of {self.module!r}>"


def check_aligned(func_name: str, param_name: str, arr: np.ndarray) -> None:
    """A ValueError unless ``arr`` is aligned to its element size (native code assumes it)."""
    if not arr.flags.aligned:
        raise ValueError(
            f"{func_name}: argument '{param_name}' is not aligned to its element size; "
            f"pass a copy (np.array({param_name}))"
        )


class Module:
    """Compiled functions for one target, with their sources.

    Args:
        target: what the code was compiled for.
        funcs: function name -> PrimFunc (its params define the interface).
        symbols: function name -> native symbol.
        messages: assertion messages, by return code - 1.
        resolve: native symbol -> address, or None when the code cannot run here.
        llvm_ir: the optimized LLVM IR text, when known.
        keepalive: objects owning the native code (JIT engine, library).
        machine_target: the target machine code is generated for, when it is not
            ``target`` (an LLVM bug's workaround, see evex_workaround.py).
    """

    def __init__(self, target: Target, funcs: dict[str, PrimFunc], symbols: dict[str, str],
                 messages: list[str], resolve: Callable[[str], int] | None,
                 llvm_ir: str | None = None, keepalive: Any = None,
                 machine_target: Target | None = None):
        self.target = target
        self.machine_target = machine_target or target
        self._funcs, self._symbols = dict(funcs), dict(symbols)
        self._messages = list(messages)
        self._resolve = resolve
        self._llvm_ir = llvm_ir
        self._keepalive = keepalive
        self._cache: dict[str, PackedFunction] = {}
        #: The remarks of the passes that built it (``VectorizeRemark`` per vectorized loop).
        self.remarks: tuple = ()

    @property
    def function_names(self) -> list[str]:
        """Names of the compiled functions."""
        return list(self._funcs)

    @property
    def entry_name(self) -> str:
        """``"main"``, or the only function."""
        if "main" in self._funcs or len(self._funcs) != 1:
            return "main"
        return next(iter(self._funcs))

    def __getitem__(self, name: str) -> PackedFunction:
        found = self._cache.get(name)
        if found is not None:
            return found
        if name not in self._funcs:
            raise KeyError(f"module has no function {name!r}; it has {self.function_names}")
        if self._resolve is None:
            raise RuntimeError(
                f"module compiled for {self.target} (triple {self.target.triple}) cannot run "
                "on this machine; use get_source() or export_library() instead"
            )
        missing = self.target.missing_host_features
        if missing:
            raise RuntimeError(
                f"module compiled for {self.target} uses {', '.join(missing)}, which this CPU "
                "lacks; it cannot run here (build without those -mattr features)"
            )
        if name not in self._cache:
            address = self._resolve(self._symbols[name])
            self._cache[name] = PackedFunction(self, name, self._funcs[name], address)
        return self._cache[name]

    def __call__(self, *args: Any) -> None:
        entry = self._cache.get(self.entry_name) or self[self.entry_name]
        entry(*args)

    def __repr__(self) -> str:
        return f"<codegen.Module {self.function_names} for {self.target}>"

    def error(self, name: str, code: int) -> Exception:
        """The exception for a non-zero return ``code`` of function ``name``."""
        if code == OUT_OF_MEMORY:
            return MemoryError(f"{name}: a heap allocation failed")
        if code == RUNTIME_ERROR:
            return RuntimeError(f"{name}: the parallel runtime failed: {parallel.last_error}")
        if 1 <= code <= len(self._messages):
            return RuntimeError(f"{name}: assertion failed: {self._messages[code - 1]}")
        return RuntimeError(f"{name}: native code returned the unknown error code {code}")

    # ------------------------------------------------------------ sources and export

    def get_source(self, fmt: str = "ll") -> str:
        """The optimized LLVM IR (``"ll"``), the assembly (``"asm"``) or the lowered TIR."""
        if fmt not in ("ll", "asm", "tir"):
            raise ValueError(f"get_source: unknown format {fmt!r}; expected 'll', 'asm' or 'tir'")
        if self._llvm_ir is None:
            raise ValueError("get_source: this module was loaded from a library; no source kept")
        if fmt == "ll":
            return self._llvm_ir
        if fmt == "tir":  # what codegen saw: the output of the build pipeline
            return "\n".join(f.script() for f in self._funcs.values())
        from .. import machine

        return machine.target_machine(self.machine_target).emit_assembly(
            machine.parse(self._llvm_ir))

    def export_library(self, path: str) -> None:
        """Write a shared library (or, for a ``.o`` path, an object file) of this module.

        A host module links with the system C compiler; an aarch64 Linux module with
        the cross toolchain (``aarch64-linux-gnu-gcc`` or ``ld.lld``, see
        codegen/cross_tools.py), so ``codegen.emulate`` can run it under QEMU.
        """
        if self._llvm_ir is None:
            raise ValueError("export_library: this module was loaded from a library")
        from .. import machine

        obj = machine.target_machine(self.machine_target).emit_object(
            machine.parse(self._llvm_ir))
        path = os.fspath(path)
        if path.endswith(".o"):
            with open(path, "wb") as f:
                f.write(obj)
            return
        _link_shared(obj, path, self.target)


def _link_shared(obj: bytes, path: str, target: Target) -> None:
    if not target.is_host:
        # aarch64 Linux links with the cross toolchain (codegen/cross_tools.py).
        if target.arch != "aarch64" or "linux" not in target.triple:
            raise ValueError(
                f"export_library: cannot link a shared library for {target.triple} here; "
                "export an object file (a path ending in .o) instead"
            )
        from .. import cross_tools

        cross_tools.link_shared(obj, path)
        return
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        raise RuntimeError("export_library: no C compiler found (set CC) to link a shared library")
    with tempfile.TemporaryDirectory() as tmp:
        obj_path = os.path.join(tmp, "module.o")
        with open(obj_path, "wb") as f:
            f.write(obj)
        result = subprocess.run([cc, "-shared", "-o", path, obj_path, "-lm"], check=False,
                                capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"export_library: {cc} failed:\n{result.stderr}")


def load_module(path: str) -> Module:
    """Load a library written by ``Module.export_library``; same calling interface."""
    lib = ctypes.CDLL(os.path.abspath(os.fspath(path)))
    try:
        text = ctypes.c_char_p.in_dll(lib, meta.METADATA_SYMBOL).value
    except ValueError:
        raise ValueError(f"load_module: {path} is not a tirlite library (no metadata)") from None
    data = meta.loads(text.decode("utf-8"))
    funcs = {name: meta.signature_func(d) for name, d in data["functions"].items()}
    symbols = {name: d["symbol"] for name, d in data["functions"].items()}
    _install_launcher_in_library(lib)

    def resolve(symbol: str) -> int:
        return ctypes.cast(getattr(lib, symbol), ctypes.c_void_p).value

    return Module(Target(data["target"]), funcs, symbols, data["messages"], resolve,
                  keepalive=lib)


def _install_launcher_in_library(lib: ctypes.CDLL) -> None:
    from ..abi import LAUNCHER_SYMBOL

    try:
        slot = ctypes.c_void_p.in_dll(lib, LAUNCHER_SYMBOL)
    except ValueError:
        return  # no parallel loops in this library
    slot.value = parallel.launcher_address()


def jit_module(target: Target, funcs: dict[str, PrimFunc], symbols: dict[str, str],
               messages: list[str], llvm_module: Any, llvm_ir: str) -> Module:
    """A ``Module`` running ``llvm_module`` (optimized) in a new MCJIT engine."""
    from .. import machine

    machine_target = machine.machine_target(target, llvm_ir)
    if not target.is_host:
        return Module(target, funcs, symbols, messages, None, llvm_ir,
                      machine_target=machine_target)
    import llvmlite.binding as llvm

    from ..abi import LAUNCHER_SYMBOL

    load_support_libraries()
    check_externals(llvm_module)
    engine = llvm.create_mcjit_compiler(llvm_module, machine.jit_target_machine(machine_target))
    engine.finalize_object()
    if _has_global(llvm_module, LAUNCHER_SYMBOL):
        parallel.install(engine.get_global_value_address(LAUNCHER_SYMBOL))
    return Module(target, funcs, symbols, messages, engine.get_function_address, llvm_ir,
                  keepalive=engine, machine_target=machine_target)


@functools.cache
def load_support_libraries() -> None:
    """Make libgcc's helpers visible to the JIT: LLVM calls them itself, e.g.

    ``__extendhfsf2`` for float16 on CPUs without F16C. An unresolved helper
    would be a call to address 0.
    """
    import ctypes.util

    import llvmlite.binding as llvm

    path = ctypes.util.find_library("gcc_s")
    if path:
        llvm.load_library_permanently(path)


@functools.cache
def process_library() -> ctypes.CDLL:
    """The symbols of this process (Python links libc and libm)."""
    return ctypes.CDLL(None)


def check_externals(llvm_module: Any) -> None:
    """Fail at build time, not with a jump to address 0, when an extern is missing."""
    import llvmlite.binding as llvm

    process = process_library()
    for fn in llvm_module.functions:
        if not fn.is_declaration or fn.name.startswith("llvm."):
            continue
        if not llvm.address_of_symbol(fn.name) and not hasattr(process, fn.name):
            raise ValueError(
                f"build: the external function {fn.name!r} is not defined in this process; "
                "load a library defining it (llvmlite.binding.load_library_permanently)"
            )


def _has_global(llvm_module: Any, name: str) -> bool:
    return any(g.name == name for g in llvm_module.global_variables)


__all__ = ["Module", "PackedFunction", "jit_module", "load_module"]
