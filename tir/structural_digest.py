"""The walk behind ``structural_digest``: IR as canonical text, hashed with sha256.

It visits nodes in ``structural_hash``'s order and by its rules (bound
variables by the order of definition, buffers one to one), but writes
every token as text that does not depend on the process, so the digest of a
program is the same in every run and can key what is stored on disk.
"""

from __future__ import annotations

import enum
import hashlib
from collections.abc import Mapping
from typing import Any

from .buffer import Buffer
from .expr import Var
from .function import IRModule, PrimFunc
from .functor import deep_recursion
from .node import BUFFER, BUFFERS, EXPR, EXPRS, NODES, STMT, STMTS, Node
from .structural import _PLANS, _plan, _sorted_keys


class _Digester:
    """One digest walk: the node as a canonical token stream, one token per line.

    The same walk as ``_Hasher``, but every token is text that does not depend on
    the process (no ``hash()``, whose str hashing is randomized per process), so
    the digest can key what is stored on disk.
    """

    def __init__(self, with_names: bool):
        self.with_names = with_names
        self.vars: dict[int, int] = {}
        self.bufs: dict[int, int] = {}
        self.out: list[str] = []

    def node(self, node: Any, by_fields: bool = False) -> None:
        cls = type(node)
        _, plan, role = _PLANS.get(cls) or _plan(cls)
        if role is not None and not by_fields:
            return _DIGEST_ROLES[role](self, node)
        self.out.append(_qualname(cls))
        for name, kind, binds in plan:
            v = getattr(node, name)
            if v is None and (kind is EXPR or kind is STMT):
                self.out.append("~")
            elif kind is EXPR or kind is STMT:
                self.var_def(v) if binds else self.node(v)
            elif kind is EXPRS or kind is STMTS or kind is NODES:
                self.out.append(f"#{len(v)}")
                for item in v:
                    self.node(item)
            elif kind is BUFFER:
                self.buffer(v)
            elif kind is BUFFERS:
                self.out.append(f"#{len(v)}")
                for item in v:
                    self.buffer_def(item) if binds else self.buffer(item)
            else:
                self.data(v)
        return None

    def data(self, value: Any) -> None:
        out = self.out
        if value is None or isinstance(value, bool):
            out.append(repr(value))
        elif isinstance(value, enum.Enum):  # before int: IntEnum kinds print by name
            out.append(f"e:{_qualname(type(value))}.{value.name}")
        elif isinstance(value, (int, str)):
            out.append(f"{type(value).__name__[0]}:{value!r}")
        elif isinstance(value, float):
            out.append(f"f:{value.hex()}")  # exact, and -0.0 differs from 0.0
        elif isinstance(value, Node):
            self.buffer(value) if isinstance(value, Buffer) else self.node(value)
        elif isinstance(value, Mapping):
            out.append(f"{{{len(value)}")
            for key in _sorted_keys(value):
                self.data(key)
                self.data(value[key])
        elif isinstance(value, (list, tuple)):
            out.append(f"[{len(value)}")
            for item in value:
                self.data(item)
        else:  # a repr naming an address only makes the digest miss, never collide
            out.append(f"o:{_qualname(type(value))}:{value!r}")

    def var_def(self, var: Var) -> None:
        self.vars[id(var)] = len(self.vars)
        self.out.append(f"def {_qualname(type(var))} {var.dtype} {var.type_annotation}")
        if self.with_names:
            self.out.append(repr(var.name))

    def var_use(self, var: Var) -> None:
        order = self.vars.get(id(var))
        if order is None:  # a free variable: numbered where first met
            self.out.append("free")
            return self.var_def(var)
        self.out.append(f"v{order}")
        return None

    def buffer(self, buf: Buffer) -> None:
        order = self.bufs.get(id(buf))
        if order is not None:
            self.out.append(f"b{order}")
            return
        self.node(buf, by_fields=True)
        if self.with_names:
            self.out.append(repr(buf.name))
        self.bufs[id(buf)] = len(self.bufs)

    def buffer_def(self, buf: Buffer) -> None:
        self.var_def(buf.data)
        for e in buf.shape + buf.strides + (buf.elem_offset,):
            if isinstance(e, Var) and id(e) not in self.vars:
                self.var_def(e)
        self.buffer(buf)

    def prim_func(self, func: PrimFunc) -> None:
        self.out.append(f"PrimFunc #{len(func.params)}")
        for p in func.params:
            self.var_def(p)
        for p in func.params:
            buf = func.buffer_map.get(p)
            self.out.append("~") if buf is None else self.buffer_def(buf)
        self.node(func.body)
        self.data(func.ret_type)
        self.data(func.attrs)

    def module(self, mod: IRModule) -> None:
        self.out.append(f"IRModule #{len(mod.functions)}")
        for name in sorted(mod.functions):
            self.out.append(repr(name))
            self.prim_func(mod.functions[name])
        self.data(mod.attrs)

    def opaque(self, node: Any) -> None:
        self.out.append(f"opaque {_qualname(type(node))}:{node!r}")


def _qualname(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


_DIGEST_ROLES = {"var": _Digester.var_use, "buffer": _Digester.buffer,
                 "func": _Digester.prim_func, "module": _Digester.module,
                 "opaque": _Digester.opaque}


def digest(node: Any, with_names: bool = False) -> str:
    """The sha256 hex digest of ``node`` (see ``tir.structural.structural_digest``)."""
    walker = _Digester(with_names)
    with deep_recursion():
        walker.data(node)
    return hashlib.sha256("\n".join(walker.out).encode("utf-8")).hexdigest()
