"""Passes: ``Pass``, ``ModulePass``, ``PrimFuncPass``, ``Sequential`` and their decorators.

A pass maps an ``IRModule`` to an ``IRModule``. Calling a pass runs it under
``PassContext.current()`` with the context's instruments around it; a
``Sequential`` also applies the opt-level / required / disabled gating to
each pass it holds, as TVM does.

>>> @prim_func_pass(opt_level=0, name="Identity")
... def identity(func, mod, ctx):
...     return func
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable
from typing import Any

import attrs

from tir.function import IRModule, PrimFunc

from .pass_context import PassContext
from .remarks import remark_batch


@attrs.frozen
class PassInfo:
    """What gating needs to know about a pass: its name, opt level and prerequisites.

    ``required`` lists the names of passes this one expects to have run; it
    is recorded for users and tools, not acted on.
    """

    opt_level: int
    name: str
    required: tuple[str, ...] = attrs.field(default=(), converter=tuple)


def _check_module(mod: Any, pass_name: str) -> IRModule:
    if isinstance(mod, IRModule):
        return mod
    hint = ""
    if isinstance(mod, PrimFunc):
        hint = "; wrap a PrimFunc with tir.IRModule.from_expr(func) (or IRModule({'main': func}))"
    raise TypeError(f"pass {pass_name!r} expects an IRModule, got {type(mod).__name__}{hint}")


def run_pass(p: Pass, mod: IRModule, ctx: PassContext) -> IRModule:
    """Run ``p`` on ``mod`` with the instruments of ``ctx`` around it (no gating)."""
    info = p.info
    if not all(inst.should_run(mod, info) for inst in ctx.instruments):
        return mod
    for inst in ctx.instruments:
        inst.run_before_pass(mod, info)
    mod = p.transform(mod, ctx)
    for inst in ctx.instruments:
        inst.run_after_pass(mod, info)
    return mod


class Pass:
    """Base of all passes: ``pass_(mod) -> mod``; subclasses implement ``transform``."""

    info: PassInfo

    def __call__(self, mod: IRModule) -> IRModule:
        mod = _check_module(mod, self.info.name)
        # The remarks of the whole run, folded per source loop when it ends (remarks.py).
        with remark_batch():
            return run_pass(self, mod, PassContext.current())

    def transform(self, mod: IRModule, ctx: PassContext) -> IRModule:
        """The transformation itself, without instruments or gating."""
        raise NotImplementedError(f"{type(self).__name__} must implement transform(mod, ctx)")

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.info.name!r}, opt_level={self.info.opt_level})"


class _FunctionPass(Pass):
    """A pass made from a function, with its ``PassInfo``."""

    def __init__(self, pass_func: Callable, opt_level: int = 0, name: str | None = None,
                 required: Iterable[str] | None = None):
        self.pass_func = pass_func
        self.info = PassInfo(opt_level, name or _name_of(pass_func), tuple(required or ()))


class ModulePass(_FunctionPass):
    """A pass from a function ``pass_func(mod, ctx) -> mod``."""

    def transform(self, mod: IRModule, ctx: PassContext) -> IRModule:
        """``pass_func(mod, ctx)``, checked to be an IRModule."""
        out = self.pass_func(mod, ctx)
        if not isinstance(out, IRModule):
            raise TypeError(
                f"module pass {self.info.name!r} must return an IRModule, got {type(out).__name__}"
            )
        return out


class PrimFuncPass(_FunctionPass):
    """A pass from ``pass_func(func, mod, ctx) -> func`` applied to every PrimFunc.

    The module comes back as the same object when no function changed;
    returning ``None`` removes the function from the module.
    """

    def transform(self, mod: IRModule, ctx: PassContext) -> IRModule:
        """``pass_func`` on each function; a new module only if one changed."""
        changed = False
        functions = {}
        for name, func in mod.functions.items():
            new = self.pass_func(func, mod, ctx)
            changed = changed or new is not func
            if new is None:
                continue
            if not isinstance(new, PrimFunc):
                raise TypeError(
                    f"prim_func pass {self.info.name!r} must return a PrimFunc or None for "
                    f"{name!r}, got {type(new).__name__}"
                )
            functions[name] = new
        return mod.with_functions(functions) if changed else mod


class Sequential(Pass):
    """Run passes in order; each is skipped if the context's gating says so.

    Calling a ``Sequential`` does not wrap it in instruments itself (its
    passes are), so print-after-each shows every step once.
    """

    def __init__(self, passes: Iterable[Pass] | None = None, opt_level: int = 0,
                 name: str = "sequential", required: Iterable[str] | None = None):
        self.passes = list(passes or ())
        for p in self.passes:
            if not isinstance(p, Pass):
                raise TypeError(f"Sequential {name!r}: expected Pass objects, got {p!r}")
        self.info = PassInfo(opt_level, name, tuple(required or ()))

    def __call__(self, mod: IRModule) -> IRModule:
        mod = _check_module(mod, self.info.name)
        with remark_batch():
            return self.transform(mod, PassContext.current())

    def transform(self, mod: IRModule, ctx: PassContext) -> IRModule:
        """The passes in order, each gated by ``ctx`` and wrapped in its instruments."""
        for p in self.passes:
            if not ctx.pass_enabled(p.info):  # disabled, or opt_level above the context's
                continue
            mod = run_pass(p, mod, ctx)  # should_run, run_before_pass, transform, run_after_pass
        return mod


# ------------------------------------------------------------------ decorators


def function_name(mod: IRModule, func: PrimFunc) -> str:
    """The name ``func`` has in ``mod`` (what remarks and errors call it), else its
    ``global_symbol``, else ``"main"``."""
    for name, f in mod.functions.items():
        if f is func:
            return name
    return str(func.attrs.get("global_symbol", "main"))


def _name_of(obj: Any) -> str:
    return getattr(obj, "__name__", type(obj).__name__)


def _class_pass(cls: type, base: type, method: str, opt_level: int, name: str | None,
                required: Iterable[str] | None) -> type:
    """A ``base`` subclass whose constructor builds ``cls(...)`` and wraps its ``method``."""
    if not callable(getattr(cls, method, None)):
        raise TypeError(f"{cls.__name__}: a {base.__name__} class needs a {method}() method")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.instance = cls(*args, **kwargs)
        base.__init__(self, getattr(self.instance, method), opt_level, name or cls.__name__,
                      required)

    return type(cls.__name__, (base,), {
        "__init__": __init__, "__doc__": cls.__doc__, "__module__": cls.__module__,
        "__qualname__": cls.__qualname__,
    })


def _decorate(base: type, method: str, pass_func: Any, opt_level: int, name: str | None,
              required: Iterable[str] | None) -> Any:
    def wrap(target: Any) -> Any:
        if inspect.isclass(target):
            return _class_pass(target, base, method, opt_level, name, required)
        if not callable(target):
            raise TypeError(f"{base.__name__}: expected a function or class, got {target!r}")
        return base(target, opt_level, name, required)

    return wrap if pass_func is None else wrap(pass_func)


def module_pass(pass_func: Any = None, opt_level: int = 0, name: str | None = None,
                required: Iterable[str] | None = None) -> Any:
    """A ``ModulePass`` from ``f(mod, ctx) -> mod`` or a class with ``transform_module``.

    Usable as ``@module_pass``, ``@module_pass(opt_level=2)`` or a plain call.
    On a class it returns a pass class: its arguments go to the class.
    """
    return _decorate(ModulePass, "transform_module", pass_func, opt_level, name, required)


def prim_func_pass(pass_func: Any = None, opt_level: int = 0, name: str | None = None,
                   required: Iterable[str] | None = None) -> Any:
    """A ``PrimFuncPass`` from ``f(func, mod, ctx) -> func`` or a class with ``transform_function``.

    Usable as ``@prim_func_pass``, ``@prim_func_pass(opt_level=2)`` or a plain call.
    """
    return _decorate(PrimFuncPass, "transform_function", pass_func, opt_level, name, required)
