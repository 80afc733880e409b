"""The native call path: argument checks compiled to machine code, once per function.

Checking arguments in Python (codegen/runtime/args.py) costs 5-7 µs per call, ten times
the kernel of a small vector add. This module compiles, once per function
interface and process, a small LLVM function with CPython's fast calling
convention (``METH_FASTCALL``) that does the common-case checks itself, reading
the ``PyArrayObject`` fields (type, dtype number, rank, shape, flags, data
pointer) and the Python numbers directly, binds the symbolic shape vars,
releases the GIL and calls the kernel.

The checks it makes are exactly those of ``ArgBinder`` for the arguments it
understands: an exact ``np.ndarray`` of the element dtype in native byte order,
the rank, every static dim, every symbolic dim agreeing with the other places
its var occurs, C-contiguous, aligned, writeable where the function stores,
no two arrays' byte ranges overlapping where the function stores into either;
an exact ``int`` in the param's range, an exact ``float`` (finite unless it was
infinite already, for float32), ``True``/``False``. Anything else -- a NumPy
scalar, a subclass such as ``np.matrix``, a wrong shape, a wrong argument
count -- takes the *slow path*: the Python ``ArgBinder`` checks the call again
from the start, and either raises its usual clear error or makes the call. So
the fast path never accepts what the slow path rejects, and the errors are the
same words as ever.

A function whose interface the native checks do not cover (declared strides,
composite shape expressions such as ``n * 2``, float16/bfloat16 scalars, vector params)
has no native caller; its calls take the Python path. So does every function
when the running NumPy's struct layout is not the one this module expects: the
layout is verified at import on real arrays, never assumed.
"""

from __future__ import annotations

import ctypes
import functools
import sys
import threading
from collections.abc import Callable
from typing import Any

import numpy as np
from llvmlite import ir

from tir import dtype as dt
from tir.buffer import Buffer
from tir.expr import IntImm, SizeVar, Var

from .args import ArgBinder

I8, I32, I64 = ir.IntType(8), ir.IntType(32), ir.IntType(64)
PTR = I8.as_pointer()

# NumPy's array flags (numpy/ndarraytypes.h).
_C_CONTIGUOUS, _ALIGNED, _WRITEABLE = 0x1, 0x100, 0x400
_METH_FASTCALL = 0x80


class _Layout:
    """Byte offsets of the CPython and NumPy struct fields the native checks read."""

    ob_type = 8  # PyObject_HEAD: ob_refcnt, ob_type
    data, nd, dimensions, descr, flags = 16, 24, 32, 56, 64  # PyArrayObject_fields
    byteorder, type_num = 26, 28  # PyArray_Descr


def _read(address: int, ctype: Any) -> Any:
    return ctype.from_address(address).value


def _layout_holds() -> bool:
    """Whether this Python and NumPy lay their objects out as ``_Layout`` says."""
    if sys.implementation.name != "cpython" or ctypes.sizeof(ctypes.c_void_p) != 8:
        return False
    if getattr(sys, "_is_gil_enabled", lambda: True)() is False:
        return False  # free-threaded builds have a larger object header
    L = _Layout
    samples = [np.zeros((3, 5), np.float32), np.ones(4, np.int8)[::2],
               np.zeros(2, ">f8"), np.zeros((2, 3), np.bool_).T]
    for arr in samples:
        base = id(arr)
        dims = _read(base + L.dimensions, ctypes.c_void_p)
        descr = _read(base + L.descr, ctypes.c_void_p)
        flags = _read(base + L.flags, ctypes.c_int32)
        if (_read(base + L.ob_type, ctypes.c_void_p) != id(np.ndarray)
                or _read(base + L.data, ctypes.c_void_p) != arr.ctypes.data
                or _read(base + L.nd, ctypes.c_int32) != arr.ndim
                or list((ctypes.c_int64 * arr.ndim).from_address(dims)) != list(arr.shape)
                or descr != id(arr.dtype)
                or _read(descr + L.type_num, ctypes.c_int32) != arr.dtype.num
                or chr(_read(descr + L.byteorder, ctypes.c_uint8)) != arr.dtype.byteorder
                or bool(flags & _C_CONTIGUOUS) != arr.flags.c_contiguous
                or bool(flags & _ALIGNED) != arr.flags.aligned
                or bool(flags & _WRITEABLE) != arr.flags.writeable):
            return False
    return True


@functools.cache
def available() -> bool:
    """Whether native callers can be made in this process (checked once)."""
    try:
        return _layout_holds()
    except Exception:  # an unexpected layout must disable the fast path, not crash
        return False


def _api(name: str) -> int:
    return ctypes.cast(getattr(ctypes.pythonapi, name), ctypes.c_void_p).value


# ---------------------------------------------------------------- what to check


class _ArrayParam:
    """A buffer (or handle) param: what its array must be."""

    def __init__(self, type_num: int | None, rank: int, dims: list, writeable: bool,
                 itemsize: int = 0):
        self.type_num = type_num  # None: any dtype (a handle param outside buffer_map)
        self.itemsize = itemsize  # bytes per element, for the overlap checks
        self.rank = rank  # None: any rank
        self.dims = dims  # per axis: ("static", int) or ("var", Var)
        self.flags = _C_CONTIGUOUS | _ALIGNED | (_WRITEABLE if writeable else 0)


class _ScalarParam:
    """A scalar param: its dtype and, for ints, the accepted range."""

    def __init__(self, var: Var):
        self.var = var
        t = dt.DataType(var.dtype)
        self.kind = "float" if t.is_float else "bool" if t.is_bool else "int"
        if self.kind == "int":
            self.lo = 0 if isinstance(var, SizeVar) else max(t.min_value(), -2**63)
            self.hi = min(t.max_value(), 2**63 - 1)  # larger uint64 values take the slow path


def _plan(binder: ArgBinder) -> list | None:
    """One entry per param, or None when the native checks cannot cover the interface."""
    plan: list = []
    for index, param in enumerate(binder.func.params):
        spec = binder._specs.get(index)
        if spec is not None:
            entry = _array_param(spec.buf, spec.np_dtype, spec.lanes, spec.writeable)
        else:
            entry = _scalar_param(param)
        if entry is None:
            return None
        plan.append(entry)
    return plan


def _array_param(buf: Buffer, np_dtype: np.dtype, lanes: int, writeable: bool):
    if buf.strides:
        return None
    if not isinstance(buf.elem_offset, (IntImm, Var)):
        return None
    dims = []
    for d in buf.shape:
        if isinstance(d, IntImm):
            dims.append(("static", d.value))
        elif isinstance(d, Var):
            dims.append(("var", d))
        else:
            return None
    if lanes > 1:
        dims.append(("static", lanes))
    if isinstance(buf.elem_offset, Var):
        dims.append(("zero", buf.elem_offset))  # a symbolic elem_offset is bound to 0
    return _ArrayParam(np_dtype.num, len(buf.shape) + (lanes > 1), dims, writeable,
                       np_dtype.itemsize)


def _scalar_param(param: Var):
    t = dt.DataType(param.dtype)
    if t.is_handle:
        return _ArrayParam(None, None, [], writeable=False)
    if t.is_vector or dt.element_of(param.dtype) in ("float16", "bfloat16"):
        return None
    return _ScalarParam(param)


# ---------------------------------------------------------------- the LLVM function


class _Emitter:
    """Writes the wrapper: checks, then the kernel call, with one ``slow`` exit.

    Its ``self`` (the builtin's bound object) is the tuple ``(slow_path,
    raise_error, kernel_address, static_dims_address)``. ``pairs`` are the
    param index pairs whose arrays must not overlap (``ArgBinder.overlap_pairs``).
    """

    def __init__(self, plan: list, hidden: tuple, kernel_type: ir.FunctionType,
                 pairs: tuple = ()):
        self.module = ir.Module(name="tirlite_fastcall")
        wrapper_type = ir.FunctionType(PTR, [PTR, PTR.as_pointer(), I64])
        self.fn = ir.Function(self.module, wrapper_type, "tirlite_fastcall")
        self.self_arg, self.args, self.nargs = self.fn.args
        self.builder = ir.IRBuilder(self.fn.append_basic_block("entry"))
        self.slow = self.fn.append_basic_block("slow")
        self.plan, self.hidden, self.pairs = plan, hidden, pairs
        self.ranges: dict[int, tuple] = {}  # param index -> (first byte, end) as i64
        self.ranged = {k for pair in pairs for k in pair}
        self.kernel_type = kernel_type
        self.slots: dict[int, ir.Value] = {}  # id(Var) -> its i64 value
        self.statics: ir.Value | None = None  # the int64 table of static dims
        self.static_count = 0

    # -- helpers

    def const_ptr(self, address: int, ty: ir.Type = PTR) -> ir.Value:
        return ir.Constant(I64, address).inttoptr(ty)

    def function_at(self, address: int, fnty: ir.FunctionType) -> ir.Value:
        """A callee at a fixed address (no symbol: nothing for the JIT to resolve)."""
        return self.builder.inttoptr(ir.Constant(I64, address), fnty.as_pointer())

    def api(self, name: str, ret: ir.Type, args: list) -> ir.Value:
        return self.function_at(_api(name), ir.FunctionType(ret, args))

    def field(self, obj: ir.Value, offset: int, ty: ir.Type) -> ir.Value:
        address = self.builder.gep(obj, [ir.Constant(I64, offset)])
        return self.builder.load(self.builder.bitcast(address, ty.as_pointer()))

    def require(self, cond: ir.Value) -> None:
        """Continue when ``cond`` holds; take the slow path otherwise."""
        ok = self.fn.append_basic_block("ok")
        self.builder.cbranch(cond, ok, self.slow)
        self.builder.position_at_end(ok)

    def eq(self, a: ir.Value, b: ir.Value) -> ir.Value:
        return self.builder.icmp_unsigned("==", a, b)

    def static_dim(self) -> ir.Value:
        """The next static dim, read from the table at self[3]: wrappers do not depend
        on the sizes, only on which dims are static, so kernels share them."""
        if self.statics is None:
            address = self.builder.call(self.api("PyLong_AsVoidPtr", PTR, [PTR]), [self.item(3)])
            self.statics = self.builder.bitcast(address, I64.as_pointer())
        slot = self.builder.gep(self.statics, [ir.Constant(I64, self.static_count)])
        self.static_count += 1
        return self.builder.load(slot)

    def bind(self, var: Var, value: ir.Value) -> None:
        """The first occurrence of ``var`` binds it; later ones must agree."""
        known = self.slots.get(id(var))
        if known is None:
            self.slots[id(var)] = value
        else:
            self.require(self.eq(known, value))

    # -- the function

    def emit(self) -> ir.Module:
        b = self.builder
        self.require(self.eq(self.nargs, ir.Constant(I64, len(self.plan))))
        values = []
        for index, entry in enumerate(self.plan):
            obj = b.load(b.gep(self.args, [ir.Constant(I64, index)]))
            if isinstance(entry, _ArrayParam):
                values.append(self.array(obj, entry, index))
            else:
                values.append(self.scalar(obj, entry))
        self.check_overlaps()
        for var in self.hidden:
            values.append(self.narrowed(self.slots[id(var)], var.dtype))
        self.call(values)
        self.emit_slow()
        return self.module

    def array(self, obj: ir.Value, entry: _ArrayParam, index: int) -> ir.Value:
        b, L = self.builder, _Layout
        nbytes = ir.Constant(I64, entry.itemsize)
        self.require(self.eq(b.ptrtoint(self.field(obj, L.ob_type, PTR), I64),
                             ir.Constant(I64, id(np.ndarray))))
        flags = self.field(obj, L.flags, I32)
        want = ir.Constant(I32, entry.flags)
        self.require(self.eq(b.and_(flags, want), want))
        if entry.type_num is not None:
            descr = self.field(obj, L.descr, PTR)
            self.require(self.eq(self.field(descr, L.type_num, I32),
                                 ir.Constant(I32, entry.type_num)))
            swapped = self.eq(self.field(descr, L.byteorder, I8), ir.Constant(I8, ord(">")))
            self.require(b.not_(swapped))
        if entry.rank is not None:
            self.require(self.eq(self.field(obj, L.nd, I32), ir.Constant(I32, entry.rank)))
            dims = self.field(obj, L.dimensions, I64.as_pointer())
            for axis, (kind, what) in enumerate(entry.dims):
                if kind == "zero":
                    self.bind(what, ir.Constant(I64, 0))
                    continue
                size = b.load(b.gep(dims, [ir.Constant(I64, axis)]))
                nbytes = b.mul(nbytes, size) if index in self.ranged else nbytes
                if kind == "static":
                    self.require(self.eq(size, self.static_dim()))
                else:
                    self.bind(what, size)
        data = self.field(obj, L.data, PTR)
        if index in self.ranged:  # C-contiguous (checked): the bytes [data, data + nbytes)
            start = b.ptrtoint(data, I64)
            self.ranges[index] = (start, b.add(start, nbytes))
        return data

    def check_overlaps(self) -> None:
        """Take the slow path (whose error names both params) if two ranges overlap:
        ``max(starts) < min(ends)``, which no empty range satisfies."""
        if not self.pairs:
            return
        b, overlap = self.builder, ir.Constant(ir.IntType(1), 0)
        for i, j in self.pairs:
            (start_i, end_i), (start_j, end_j) = self.ranges[i], self.ranges[j]
            lo = b.select(b.icmp_unsigned(">", start_i, start_j), start_i, start_j)
            hi = b.select(b.icmp_unsigned("<", end_i, end_j), end_i, end_j)
            overlap = b.or_(overlap, b.icmp_unsigned("<", lo, hi))
        self.require(b.not_(overlap))

    def scalar(self, obj: ir.Value, entry: _ScalarParam) -> ir.Value:
        b = self.builder
        if entry.kind == "bool":
            is_true = self.eq(b.ptrtoint(obj, I64), ir.Constant(I64, id(True)))
            is_false = self.eq(b.ptrtoint(obj, I64), ir.Constant(I64, id(False)))
            self.require(b.or_(is_true, is_false))
            return b.zext(is_true, I8)
        exact = int if entry.kind == "int" else float
        self.require(self.eq(b.ptrtoint(self.field(obj, _Layout.ob_type, PTR), I64),
                             ir.Constant(I64, id(exact))))
        if entry.kind == "float":
            value = b.call(self.api("PyFloat_AsDouble", ir.DoubleType(), [PTR]), [obj])
            if entry.var.dtype == "float64":
                return value
            narrow = b.fptrunc(value, ir.FloatType())
            # A finite double beyond float32's range is the slow path's ValueError.
            inf = ir.Constant(ir.FloatType(), float("inf"))
            fabs = self.module.declare_intrinsic("llvm.fabs", [ir.FloatType()])
            overflowed = b.fcmp_ordered("==", b.call(fabs, [narrow]), inf)
            dabs = self.module.declare_intrinsic("llvm.fabs", [ir.DoubleType()])
            was_inf = b.fcmp_ordered("==", b.call(dabs, [value]),
                                     ir.Constant(ir.DoubleType(), float("inf")))
            self.require(b.or_(b.not_(overflowed), was_inf))
            return narrow
        overflow = b.alloca(I32)
        as_long = self.api("PyLong_AsLongLongAndOverflow", I64, [PTR, I32.as_pointer()])
        value = b.call(as_long, [obj, overflow])
        self.require(self.eq(b.load(overflow), ir.Constant(I32, 0)))
        self.require(b.icmp_signed(">=", value, ir.Constant(I64, entry.lo)))
        self.require(b.icmp_signed("<=", value, ir.Constant(I64, entry.hi)))
        self.bind(entry.var, value)
        return self.narrowed(value, entry.var.dtype, checked=True)

    def narrowed(self, value: ir.Value, dtype: str, checked: bool = False) -> ir.Value:
        """``value`` (i64) in ``dtype``; out of its range takes the slow path."""
        bits = dt.DataType(dtype).bits
        if bits == 64:
            return value
        if not checked:
            t = dt.DataType(dtype)
            self.require(self.builder.icmp_signed(">=", value, ir.Constant(I64, t.min_value())))
            self.require(self.builder.icmp_signed("<=", value, ir.Constant(I64, t.max_value())))
        return self.builder.trunc(value, ir.IntType(bits))

    def call(self, values: list) -> None:
        """Release the GIL, run the kernel, take it back; raise on a non-zero code."""
        b = self.builder
        # The kernel's address is self[2]: one wrapper serves every kernel of this interface.
        address = b.call(self.api("PyLong_AsVoidPtr", PTR, [PTR]), [self.item(2)])
        kernel = b.bitcast(address, self.kernel_type.as_pointer())
        save = b.call(self.api("PyEval_SaveThread", PTR, []), [])
        code = b.call(kernel, values)
        b.call(self.api("PyEval_RestoreThread", ir.VoidType(), [PTR]), [save])
        failed = self.fn.append_basic_block("failed")
        done = self.fn.append_basic_block("done")
        b.cbranch(self.eq(code, ir.Constant(I32, 0)), done, failed)
        b.position_at_end(done)
        none = self.const_ptr(id(None))
        b.call(self.api("Py_IncRef", ir.VoidType(), [PTR]), [none])
        b.ret(none)
        b.position_at_end(failed)
        # self[1] is raise_error: raise_error(code) raises the module's error.
        raise_error = self.item(1)
        py_code = b.call(self.api("PyLong_FromLong", PTR, [I64]), [b.sext(code, I64)])
        result = b.call(self.api("PyObject_CallOneArg", PTR, [PTR, PTR]), [raise_error, py_code])
        decref = self.api("Py_DecRef", ir.VoidType(), [PTR])
        b.call(decref, [py_code])
        b.call(decref, [result])  # Py_DecRef accepts NULL; raise_error always raises
        b.ret(ir.Constant(PTR, None))

    def item(self, index: int) -> ir.Value:
        get = self.api("PyTuple_GetItem", PTR, [PTR, I64])
        return self.builder.call(get, [self.self_arg, ir.Constant(I64, index)])

    def emit_slow(self) -> None:
        b = self.builder
        b.position_at_end(self.slow)
        vectorcall = self.api("PyObject_Vectorcall", PTR, [PTR, PTR.as_pointer(), I64, PTR])
        b.ret(b.call(vectorcall, [self.item(0), self.args, self.nargs, ir.Constant(PTR, None)]))


# ---------------------------------------------------------------- making the callable


class _MethodDef(ctypes.Structure):
    _fields_ = [("ml_name", ctypes.c_char_p), ("ml_meth", ctypes.c_void_p),
                ("ml_flags", ctypes.c_int), ("ml_doc", ctypes.c_char_p)]


_new_cfunction = ctypes.pythonapi.PyCFunction_NewEx
_new_cfunction.restype = ctypes.py_object
_new_cfunction.argtypes = [ctypes.c_void_p, ctypes.py_object, ctypes.py_object]


class NativeCaller:
    """The builtin that calls one kernel through a compiled wrapper.

    ``callable`` is a CPython builtin function object: calling it runs the native
    checks and the kernel, or ``slow_path(*args)`` when the checks do not pass;
    a non-zero return code becomes ``raise_error(code)``.
    """

    def __init__(self, name: str, wrapper: int, kernel: int, statics: list,
                 slow_path: Callable, raise_error: Callable):
        # The builtin points into these three objects: they live as long as this one.
        self._name = name.encode()
        self._def = _MethodDef(self._name, wrapper, _METH_FASTCALL, None)
        self._statics = (ctypes.c_int64 * max(1, len(statics)))(*statics)
        own = (slow_path, raise_error, kernel, ctypes.addressof(self._statics))
        self.callable = _new_cfunction(ctypes.addressof(self._def), own, None)


def native_caller(name: str, binder: ArgBinder, kernel: int, kernel_type: ir.FunctionType,
                  slow_path: Callable, raise_error: Callable) -> NativeCaller | None:
    """A ``NativeCaller`` for the kernel at address ``kernel``, or None.

    None when native checks cannot cover the function's interface or this
    process's object layout (see the module doc): the caller then uses
    ``slow_path`` for every call. Wrappers are compiled once per interface
    (param kinds, dtypes, shapes, kernel signature) and process.
    """
    if not available():
        return None
    plan = _plan(binder)
    if plan is None:
        return None
    wrapper = _wrappers.get(plan, binder.hidden_vars, kernel_type, binder.overlap_pairs)
    statics = [value for entry in plan if isinstance(entry, _ArrayParam)
               for kind, value in entry.dims if kind == "static"]
    return NativeCaller(name, wrapper, kernel, statics, slow_path, raise_error)


class _Wrappers:
    """Compiled wrappers by interface, in one JIT engine for the whole process."""

    def __init__(self) -> None:
        self.engine: Any = None
        self.by_key: dict = {}
        self.lock = threading.Lock()

    def get(self, plan: list, hidden: tuple, kernel_type: ir.FunctionType,
            pairs: tuple = ()) -> int:
        key = _interface_key(plan, hidden, kernel_type), pairs
        with self.lock:
            address = self.by_key.get(key)
            if address is None:
                address = self.by_key[key] = self._compile(plan, hidden, kernel_type, pairs)
        return address

    def _compile(self, plan: list, hidden: tuple, kernel_type: ir.FunctionType,
                 pairs: tuple) -> int:
        import llvmlite.binding as llvm

        from target.target import Target

        from .. import machine

        module = _Emitter(plan, hidden, kernel_type, pairs).emit()
        symbol = f"tirlite_fastcall_{len(self.by_key)}"
        module.get_global("tirlite_fastcall").name = symbol
        parsed = machine.parse(str(module))
        if self.engine is None:
            # opt=0: the wrapper is straight-line loads and compares; fast instruction
            # selection takes a third of the time of the default level.
            tm = machine.jit_target_machine(Target("llvm"), opt=0)
            self.engine = llvm.create_mcjit_compiler(parsed, tm)
        else:
            self.engine.add_module(parsed)
        self.engine.finalize_object()
        return self.engine.get_function_address(symbol)


def _interface_key(plan: list, hidden: tuple, kernel_type: ir.FunctionType) -> tuple:
    """What a wrapper depends on: vars by order of first appearance, not identity;
    which dims are static, not their sizes (those are in each caller's table)."""
    order: dict[int, int] = {}

    def var(v: Var) -> int:
        return order.setdefault(id(v), len(order))

    parts: list = []
    for entry in plan:
        if isinstance(entry, _ArrayParam):
            dims = tuple((k, var(w) if k in ("var", "zero") else None) for k, w in entry.dims)
            parts.append(("array", entry.type_num, entry.rank, dims, entry.flags))
        else:
            bounds = (entry.lo, entry.hi) if entry.kind == "int" else None
            parts.append((entry.kind, entry.var.dtype, var(entry.var), bounds))
    parts.append(tuple((var(v), v.dtype) for v in hidden))
    return tuple(parts), str(kernel_type)


_wrappers = _Wrappers()

__all__ = ["NativeCaller", "available", "native_caller"]
