"""``CodeGenLLVM``: TIR ``PrimFunc``s to one ``llvmlite.ir`` module.

One visitor class with one ``visit_*`` per node; the methods live in mixins
by kind (expr.py, intrinsics.py, memory.py, gather.py, stmt.py, parallel.py). This file
holds the function-level machinery: the calling convention, variable
bindings, the entry block for ``alloca``s, and error codes.

Calling convention of a generated function (see codegen/runtime/args.py)::

    i32 @tirlite_<name>(params..., hidden shape vars...)

buffer params are ``noalias ptr`` (unless the function's attribute
``tir.noalias`` is False: its params may alias); bool scalars come as ``i8`` and float16
scalars as their ``i16`` bits (ctypes has neither type). It returns 0, the
number (from 1) of the failed ``AssertStmt`` message, or ``OUT_OF_MEMORY``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from llvmlite import ir

from target.target import Target
from tir.arith import Analyzer
from tir.expr import Call
from tir.function import PrimFunc
from tir.functor import StmtExprVisitor, contains, deep_recursion, post_order_visit

from .. import machine
from ..abi import hidden_vars_of, native_param_type, symbol_name
from ..ir_types import (
    I8,
    I32,
    MAX_VSCALE,
    PTR,
    Builder,
    declare,
    element_bytes,
    int_constant,
    ir_type,
)
from .expr import ExprCodegen
from .gather import GatherCodegen
from .intrinsics import IntrinsicCodegen
from .memory import MemoryCodegen
from .parallel import ParallelCodegen
from .planned_access import PlannedAccessCodegen
from .stmt import StmtCodegen


def _check_no_scalable_vectors(name: str, func: PrimFunc, target: Target) -> None:
    """Raise if ``func`` uses ``tir.vscale()`` or scalable vectors: LLVM cannot lower them
    for a target without SVE and aborts the whole process ("Cannot select: vscale")."""
    def scalable(node) -> bool:
        dtype = getattr(node, "dtype", None)
        return (isinstance(node, Call) and node.op == "tir.vscale") or (
            isinstance(dtype, str) and "xvscalex" in dtype)

    if not contains(func.body, scalable):  # the common case: one walk, no list
        return
    found = []
    post_order_visit(func.body, lambda node: found.append(node) if scalable(node) else None)
    if found:
        raise ValueError(f"codegen: {name!r} uses scalable vectors ({found[0]}), which need a "
                         f"target with SVE, e.g. 'llvm -mtriple=aarch64-linux-gnu -mattr=+sve'; "
                         f"got {target}")


def _has_scalable_registers(target: Target) -> bool:
    """Whether ``target`` is AArch64 with SVE, SVE2 or SME (streaming SVE) registers."""
    enabled: set[str] = set()
    for f in target.features.split(","):  # later entries win, as in LLVM
        if f[:1] == "+":
            enabled.add(f[1:])
        else:
            enabled.discard(f[1:])
    return target.arch == "aarch64" and any(f.startswith(("sve", "sme")) for f in enabled)


class CodeGenLLVM(
    ExprCodegen, IntrinsicCodegen, MemoryCodegen, PlannedAccessCodegen, GatherCodegen,
    StmtCodegen, ParallelCodegen, StmtExprVisitor,
):
    """Emits LLVM IR for PrimFuncs into ``self.module``.

    Args:
        target: the target whose triple and data layout the module gets.
        fast_math: put LLVM fast-math flags on float operations.
        noalias: mark buffer params ``noalias`` (in functions whose attribute
            ``tir.noalias`` is not False).
        fp_contract: let LLVM fuse a float multiply and the add or subtract
            using it into one FMA (LLVM's ``contract`` flag on ``fmul``,
            ``fadd`` and ``fsub`` only; no other fast-math freedom).
    """

    OUT_OF_MEMORY = -1

    def __init__(self, target: Target, fast_math: bool = False, noalias: bool = True,
                 fp_contract: bool = False):
        self.target = target
        self.module = ir.Module(name="tirlite")
        self.module.triple = target.triple
        self.module.data_layout = str(machine.target_machine(target).target_data)
        self.fmf = ("fast",) if fast_math else ()
        # Flags of a TIR Add/Sub/Mul on floats: an FMA rounds once where a*b + c
        # rounds twice, which is why strict mode (fp_contract=False) exists.
        self.arith_fmf = self.fmf or (("contract",) if fp_contract else ())
        self.noalias = noalias
        self.analyzer = Analyzer()
        self.messages: list[str] = []
        self.vars: dict[int, ir.Value] = {}
        self.aligns: dict[int, int] = {}
        self.noalias_vars: set[int] = set()  # data vars holding noalias pointers
        self.in_parallel = False
        # Loops emitted and loads shuffled out of wide chunks, so far: emit_loop compares
        # them around a body to find innermost loops of shuffled loads (keep_rolled).
        self.loops_emitted = 0
        self.shuffled_loads = 0
        self.symbol = ""
        self._strings: dict[str, ir.GlobalVariable] = {}

    # ------------------------------------------------------------ functions

    def add_function(self, name: str, func: PrimFunc) -> str:
        """Emit ``func`` as the native function for ``name``; returns its symbol."""
        if not isinstance(func, PrimFunc):
            raise TypeError(f"codegen: {name!r} must be a PrimFunc, got {type(func).__name__}")
        if not _has_scalable_registers(self.target):
            _check_no_scalable_vectors(name, func, self.target)
        self.symbol = symbol_name(name)
        self.vars, self.aligns, self.noalias_vars = {}, {}, set()
        hidden = hidden_vars_of(func)
        arg_types = [self._param_type(func, p) for p in func.params]
        arg_types += [ir_type(v.dtype) for v in hidden]
        fn = ir.Function(self.module, ir.FunctionType(I32, arg_types), self.symbol)
        fn.attributes.add("nounwind")
        self.add_target_attributes(fn)
        self.begin_function(fn)
        for param, arg in zip(func.params, fn.args):
            self._bind_param(func, param, arg)
        for var, arg in zip(hidden, fn.args[len(func.params):]):
            arg.name = var.name
            self.vars[id(var)] = arg
        with deep_recursion():  # a long chain of expressions recurses deeply
            self.visit_stmt(func.body)
        self.builder.ret(int_constant(I32, 0))
        self.end_function()
        return self.symbol

    def _param_type(self, func: PrimFunc, param) -> ir.Type:
        if param in func.buffer_map or param.dtype == "handle":
            return PTR
        return native_param_type(param.dtype)

    def _bind_param(self, func: PrimFunc, param, arg) -> None:
        arg.name = param.name
        buf = func.buffer_map.get(param)
        if buf is not None:
            if self.noalias and not func.params_may_alias:  # attribute tir.noalias False
                arg.add_attribute("noalias")
                self.noalias_vars.add(id(buf.data))
            self.vars[id(param)] = self.vars[id(buf.data)] = arg
            self.aligns[id(buf.data)] = element_bytes(buf.dtype)  # all NumPy guarantees
            return
        self.vars[id(param)] = self._unpack_scalar(param.dtype, arg)

    def _unpack_scalar(self, dtype: str, arg):
        if dtype == "bool":
            return self.builder.icmp_unsigned("!=", arg, int_constant(I8, 0))
        if dtype == "float16":  # bfloat16 stays i16, as it is in registers (ir_types)
            return self.builder.bitcast(arg, ir_type(dtype))
        return arg

    def add_target_attributes(self, fn: ir.Function) -> None:
        """Attributes every function of this target gets (``vscale_range`` on SVE/SME)."""
        if _has_scalable_registers(self.target):
            # As TVM does: vscale lies in [1, 16] (128- to 2048-bit registers), which lets
            # LLVM bound vscale arithmetic. llvmlite checks function attributes against a
            # list of names without parameters, hence set.add.
            set.add(fn.attributes, f"vscale_range(1,{MAX_VSCALE})")

    def begin_function(self, fn: ir.Function) -> None:
        """Start emitting ``fn``: an entry block for allocas, then the body."""
        self.entry = fn.append_basic_block("entry")
        self.builder = Builder(fn.append_basic_block("body"))

    def end_function(self) -> None:
        """Close the entry block (allocas only) with a branch to the body."""
        body = self.entry.function.blocks[1]
        ir.IRBuilder(self.entry).branch(body)

    # ------------------------------------------------------------ bindings

    def lookup(self, var) -> ir.Value:
        """The LLVM value bound to ``var``."""
        value = self.vars.get(id(var))
        if value is None:
            raise ValueError(f"codegen: variable {var.name!r} ({var.dtype}) is used but not bound")
        return value

    @contextlib.contextmanager
    def bound(self, var, value, align: int | None = None) -> Iterator[None]:
        """Bind ``var`` to ``value`` (a pointer of known ``align``) for a scope."""
        key = id(var)
        old = self.vars.get(key), self.aligns.get(key)
        self.vars[key] = value
        if align is not None:
            self.aligns[key] = align
        try:
            yield
        finally:
            for table, previous in zip((self.vars, self.aligns), old):
                if previous is None:
                    table.pop(key, None)
                else:
                    table[key] = previous

    def base_alignment(self, data_var) -> int:
        """Known alignment (bytes) of the pointer in ``data_var``; 1 if unknown."""
        return self.aligns.get(id(data_var), 1)

    # ------------------------------------------------------------ helpers

    def entry_alloca(self, ty: ir.Type, count: int = 1, align: int = 64, name: str = ""):
        """An ``alloca`` in the entry block, so loops do not grow the stack."""
        builder = ir.IRBuilder(self.entry)
        size = int_constant(ir.IntType(64), count) if count > 1 else None
        ptr = builder.alloca(ty, size=size, name=name)
        ptr.align = align
        ptr.type = PTR  # llvmlite gives allocas typed pointers; the module uses opaque ones
        return ptr

    def declare_c(self, name: str, ret: ir.Type, args: list) -> ir.Function:
        """A C library function such as ``aligned_alloc``."""
        return declare(self.module, name, ret, args)

    def error_code(self, message: str) -> int:
        """The return code reporting ``message`` (an ``AssertStmt`` failure)."""
        self.messages.append(message)
        return len(self.messages)

    def string_constant(self, text: str) -> ir.GlobalVariable:
        """A private NUL-terminated string global."""
        glob = self._strings.get(text)
        if glob is None:
            data = bytearray(text.encode("utf-8") + b"\0")
            ty = ir.ArrayType(I8, len(data))
            glob = ir.GlobalVariable(self.module, ty, f".str.{len(self._strings)}")
            glob.initializer = ir.Constant(ty, data)
            glob.global_constant = True
            glob.linkage = "private"
            self._strings[text] = glob
        return glob

    def add_exported_string(self, symbol: str, text: str) -> None:
        """An exported ``const char *symbol`` pointing at ``text`` (library metadata)."""
        glob = ir.GlobalVariable(self.module, PTR, symbol)
        glob.initializer = self.string_constant(text)
        glob.global_constant = True

    def generic_visit(self, node):
        raise ValueError(f"codegen: {type(node).__name__} is not supported by the LLVM backend")


__all__ = ["CodeGenLLVM"]
