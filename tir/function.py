"""Functions and modules: ``PrimFunc`` and ``IRModule``."""

from __future__ import annotations

import types
from typing import Any, Iterator

import attrs

from .buffer import Buffer
from .expr import IntImm, Var
from .node import Node, exprs_field, node, stmt_field
from .stmt import Stmt

#: PrimFunc attribute: False declares that buffer params may share memory (see PrimFunc).
NOALIAS = "tir.noalias"


def _frozen_map(value: Any) -> types.MappingProxyType:
    return types.MappingProxyType(dict(value or {}))


def _as_param(x: Any, buffer_map: dict) -> Var:
    """A param as TVM takes it: a Buffer (or ir_builder pointer) becomes a handle var."""
    as_buffer = getattr(x, "asbuffer", None)
    if as_buffer is not None:
        x = as_buffer()
    if isinstance(x, Buffer):
        var = Var(x.name, "handle")
        buffer_map[var] = x
        return var
    if isinstance(x, Var):
        return x
    raise TypeError(f"PrimFunc: a param must be a Var or a Buffer, got {type(x).__name__}")


def _check_distinct_buffers(params: tuple, buffer_map: dict) -> None:
    """Two buffer params over one data var would be one array passed twice: codegen binds
    the data var to one of the two pointers and ignores the other argument."""
    seen: dict[int, tuple[int, Buffer]] = {}
    for index, param in enumerate(params):
        buf = buffer_map.get(param)
        if buf is None:
            continue
        first, other = seen.setdefault(id(buf.data), (index, buf))
        if first == index:
            continue
        what = (f"buffer '{buf.name}' is listed twice" if other is buf
                else f"buffers '{other.name}' and '{buf.name}' share the data var "
                     f"'{buf.data.name}'")
        raise ValueError(
            f"PrimFunc: {what} among the params (positions {first} and {index}); each "
            "buffer param needs a buffer of its own: declare another with tir.decl_buffer, "
            "or use one param"
        )


@node
class PrimFunc(Node):
    """A function over buffers and scalars, with a statement body.

    A ``Buffer`` (or an ``ir_builder`` pointer) in ``params`` becomes a handle
    var plus a ``buffer_map`` entry, as in TVM. Each buffer param needs a buffer
    (and data var) of its own.

    Aliasing: buffer params are assumed not to share memory (LLVM ``noalias``),
    and a call passing arrays whose memory ranges overlap for two of them (one
    array twice, overlapping views) is a ``ValueError`` unless both are only
    read. The attribute ``"tir.noalias": False`` (TVM's name; tirlite's default
    is ``True``) declares that they may alias: the params lose ``noalias``, the
    vectorizers keep serial what aliasing could reorder, calls are not checked
    for overlap, and an in-place call computes the serial reading of the body::

        func = func.with_attr("tir.noalias", False)   # then f(x, x) is allowed
    """

    params: tuple = exprs_field()
    body: Stmt = stmt_field()
    ret_type: Any = attrs.field(default=None)
    buffer_map: Any = attrs.field(default=None)
    attrs: Any = attrs.field(default=None, converter=_frozen_map)

    def __attrs_post_init__(self):
        buffer_map = dict(self.buffer_map or {})
        params = tuple(_as_param(p, buffer_map) for p in self.params)
        for var, buf in buffer_map.items():
            if not isinstance(var, Var) or not isinstance(buf, Buffer):
                raise TypeError("PrimFunc: buffer_map must map handle Vars to Buffers")
            if not any(var is p for p in params):  # `in` would build EQ nodes
                raise ValueError(f"PrimFunc: buffer_map key {var.name} is not a param")
        if not isinstance(self.body, Stmt):
            raise TypeError(f"PrimFunc: body must be a Stmt, got {type(self.body).__name__}")
        _check_distinct_buffers(params, buffer_map)
        object.__setattr__(self, "params", params)
        object.__setattr__(self, "buffer_map", types.MappingProxyType(buffer_map))

    @property
    def params_may_alias(self) -> bool:
        """Whether the buffer params may share memory (attribute ``"tir.noalias"`` False)."""
        value = self.attrs.get(NOALIAS, True)
        return not (value.value if isinstance(value, IntImm) else value)  # T.bool as TVM has it

    def with_attr(self, key: str | dict, value: Any = None) -> "PrimFunc":
        """A copy with attribute ``key`` set (or a dict of attributes merged)."""
        new = dict(self.attrs)
        new.update(key if isinstance(key, dict) else {key: value})
        return attrs.evolve(self, attrs=new)

    def with_body(self, body: Stmt) -> "PrimFunc":
        """A copy with another body (the same object when ``body`` is the same)."""
        return self if body is self.body else attrs.evolve(self, body=body)


class IRModule(Node):
    """A set of named functions; ``"main"`` is the entry by convention.

    >>> mod = IRModule.from_expr(func)   # doctest: +SKIP
    >>> mod["main"] is func               # doctest: +SKIP
    True
    """

    __slots__ = ("functions", "attrs")

    def __init__(self, functions: dict | None = None, attrs: dict | None = None):
        self.functions: dict[str, PrimFunc] = {}
        for name, func in (functions or {}).items():
            self.update_func(name, func)
        self.attrs = dict(attrs or {})

    @staticmethod
    def from_expr(func: PrimFunc, name: str = "main") -> "IRModule":
        """A module holding ``func`` under ``name``."""
        return IRModule({name: func})

    def __getitem__(self, name: str) -> PrimFunc:
        if isinstance(name, Var):
            name = name.name
        try:
            return self.functions[name]
        except KeyError:
            raise KeyError(
                f"IRModule has no function {name!r}; it has {sorted(self.functions)}"
            ) from None

    def __setitem__(self, name: str, func: PrimFunc) -> None:
        self.update_func(name, func)

    def __contains__(self, name: str) -> bool:
        return name in self.functions

    def __iter__(self) -> Iterator[tuple[str, PrimFunc]]:
        return iter(list(self.functions.items()))

    def __len__(self) -> int:
        return len(self.functions)

    def items(self):
        return self.functions.items()

    def update_func(self, name: str, func: PrimFunc) -> None:
        """Add or replace the function ``name``."""
        if not isinstance(func, PrimFunc):
            raise TypeError(f"IRModule: {name!r} must be a PrimFunc, got {type(func).__name__}")
        self.functions[str(name)] = func

    def with_functions(self, functions: dict) -> "IRModule":
        """A new module with these functions and this module's attributes."""
        return IRModule(functions, self.attrs)
