"""``TensorIntrin``: a small computation and the code that replaces it (TVM's names).

A tensor intrinsic pairs two ``PrimFunc``s over the same buffers:

- ``desc`` describes the computation as loops around one block, for example
  ``C[i] += int32(A[k]) * int32(B[i, k])`` over ``i < 16, k < 4``;
- ``impl`` computes the same with the instructions the target offers (here
  one ``vpdpbusd``), through ``T.call_llvm_pure_intrin`` and vector loads.

``Schedule.tensorize(loop, name)`` checks that the loops under ``loop`` compute
what ``desc`` describes, on parts of the program's buffers, and puts ``impl``'s
body in their place. tirlite ships intrinsics in ``tir.tensor_intrin`` (x86's
and AArch64's 8-bit dot products); ``TensorIntrin.get`` loads them on first use.

>>> from tir import TensorIntrin
>>> TensorIntrin.get("dot_16x4_vnni").desc.params[0].name            # doctest: +SKIP
'A'
"""

from __future__ import annotations

import importlib
from typing import ClassVar

import attrs

from .block import BlockRealize
from .buffer import Buffer
from .expr import BufferLoad, IntImm, Ramp
from .function import PrimFunc
from .functor import post_order_visit
from .stmt import BufferStore, For, Stmt


def pattern_of(func: PrimFunc) -> Stmt:
    """The statement a tensor intrinsic's function stands for: the body of its root block."""
    body = func.body
    if isinstance(body, BlockRealize) and not body.block.iter_vars and body.block.init is None:
        return body.block.body
    return body


@attrs.frozen
class TensorIntrin:
    """A registered tensor intrinsic: ``desc`` (what it computes) and ``impl`` (how)."""

    desc: PrimFunc
    impl: PrimFunc
    inexact: str = ""  # why impl's result may differ from desc's serial reading, if it may
    _registry: ClassVar[dict[str, "TensorIntrin"]] = {}

    @staticmethod
    def register(name: str, desc: PrimFunc, impl: PrimFunc, override: bool = False, *,
                 inexact: str = "") -> None:
        """Register ``desc`` and ``impl`` under ``name`` for ``Schedule.tensorize``.

        Both functions take the same buffers (shapes and dtypes, in order). ``desc``'s
        body is a nest of loops, starting at 0, around one block without an init, that
        reads and writes every element of its buffers; ``impl`` reads and writes inside
        them only, its buffers laid out densely (a vector load may run across rows).
        ``inexact`` (tirlite's addition) says why ``impl`` may round differently from
        ``desc`` read serially (a float sum in another order, say); ``tensorize`` then
        asks for ``allow_inexact=True``. Raises ``ValueError`` on a name registered
        before (unless ``override``) and on functions that break these rules.
        """
        if not isinstance(name, str) or not name:
            raise TypeError(f"TensorIntrin.register: the name must be a non-empty str, "
                            f"got {name!r}")
        if name in TensorIntrin._registry and not override:
            raise ValueError(f"TensorIntrin.register: {name!r} is registered already "
                             f"(pass override=True to replace it)")
        _check_pair(name, desc, impl)
        TensorIntrin._registry[name] = TensorIntrin(desc, impl, inexact)

    @staticmethod
    def get(name: str, allow_missing: bool = False) -> TensorIntrin | None:
        """The intrinsic registered as ``name`` (the shipped ones load on first use)."""
        if name not in TensorIntrin._registry:
            importlib.import_module("tir.tensor_intrin")
        found = TensorIntrin._registry.get(name)
        if found is None and not allow_missing:
            known = ", ".join(sorted(TensorIntrin._registry)) or "none"
            raise ValueError(f"TensorIntrin.get: no tensor intrinsic {name!r} is registered "
                             f"(registered: {known})")
        return found

    @staticmethod
    def names() -> list[str]:
        """The names registered so far, the shipped ones included."""
        importlib.import_module("tir.tensor_intrin")
        return sorted(TensorIntrin._registry)


def _check_pair(name: str, desc: PrimFunc, impl: PrimFunc) -> None:
    where = f"TensorIntrin.register({name!r})"
    for role, func in (("desc", desc), ("impl", impl)):
        if not isinstance(func, PrimFunc):
            raise TypeError(f"{where}: {role} must be a PrimFunc, got {type(func).__name__}")
        missing = [p.name for p in func.params if p not in func.buffer_map]
        if missing:
            raise ValueError(f"{where}: every parameter of {role} must be a buffer; "
                             f"{', '.join(missing)} is not")
    if len(desc.params) != len(impl.params):
        raise ValueError(f"{where}: desc takes {len(desc.params)} buffers, "
                         f"impl {len(impl.params)}")
    for p, q in zip(desc.params, impl.params):
        a, b = desc.buffer_map[p], impl.buffer_map[q]
        if a.dtype != b.dtype or _shape(a) != _shape(b):
            raise ValueError(f"{where}: buffer {a.name} is {a.dtype}{list(_shape(a))} in desc "
                             f"but {b.dtype}{list(_shape(b))} in impl")
        if _shape(a) is None or a.strides or b.strides:
            raise ValueError(f"{where}: buffer {a.name} must have a constant shape and no "
                             f"strides (dense), as tensorize lays the program's part over it")
    _check_desc(where, pattern_of(desc))
    _check_impl_bounds(where, impl)


def _shape(buf: Buffer) -> tuple[int, ...] | None:
    if not all(isinstance(d, IntImm) for d in buf.shape):
        return None
    return tuple(d.value for d in buf.shape)


def _check_desc(where: str, stmt: Stmt) -> None:
    while isinstance(stmt, For):
        if not (isinstance(stmt.min, IntImm) and stmt.min.value == 0
                and isinstance(stmt.extent, IntImm)):
            raise ValueError(f"{where}: desc's loop {stmt.loop_var.name} must run from 0 over a "
                             f"constant extent")
        stmt = stmt.body
    if not isinstance(stmt, BlockRealize):
        raise ValueError(f"{where}: desc's body must be loops around one block, found "
                         f"{type(stmt).__name__}")
    if stmt.block.init is not None:
        raise ValueError(f"{where}: desc's block {stmt.block.name_hint} has an init; describe "
                         f"the update only (the program decomposes its reduction first)")


def _check_impl_bounds(where: str, impl: PrimFunc) -> None:
    """Constant accesses of ``impl`` must stay inside its (dense) buffers."""
    sizes = {}
    for buf in impl.buffer_map.values():
        n = 1
        for d in _shape(buf):
            n *= d
        sizes[id(buf)] = (buf, n)

    def visit(node) -> None:
        if not isinstance(node, (BufferLoad, BufferStore)) or id(node.buffer) not in sizes:
            return
        buf, size = sizes[id(node.buffer)]
        span = _flat_span(buf, node.indices)
        if span is not None and (span[0] < 0 or span[1] > size):
            raise ValueError(f"{where}: impl accesses {buf.name} at flat elements "
                             f"[{span[0]}, {span[1]}), outside its {size}")

    post_order_visit(impl.body, visit)


def _flat_span(buf: Buffer, indices: tuple) -> tuple[int, int] | None:
    """``[first, last + 1)`` of the flat elements a constant access touches, if constant."""
    shape = _shape(buf)
    lo = hi = 0
    for dim, index in enumerate(indices):
        stride = 1
        for d in shape[dim + 1:]:
            stride *= d
        if isinstance(index, IntImm):
            first = last = index.value
        elif (isinstance(index, Ramp) and isinstance(index.base, IntImm)
              and isinstance(index.stride, IntImm) and isinstance(index.lanes, (int, IntImm))):
            lanes = index.lanes if isinstance(index.lanes, int) else index.lanes.value
            ends = (index.base.value, index.base.value + index.stride.value * (lanes - 1))
            first, last = min(ends), max(ends)
        else:
            return None
        lo, hi = lo + first * stride, hi + last * stride
    return lo, hi + 1
