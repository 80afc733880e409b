"""``VectorOptions``: the config of the vector passes, read from the ``PassContext`` once.

Every vector pass used to open with the same lines: read ``tir.disable_vectorize`` and
its own keys from ``PassContext.current()``, look the target up
(``func.attrs.get("target", current_target())``), ask whether it has SVE. They now read
one frozen ``VectorOptions`` and ask ``function_target`` / ``function_has_sve``. The key
names and defaults stay in transform/config.py, the one table of keys.
"""

from __future__ import annotations

from typing import Any

import attrs

from target import current_target, has_sve
from tir.function import PrimFunc

from ..pass_context import PassContext

#: Config keys read here (all registered in transform/config.py).
DISABLE_VECTORIZE = "tir.disable_vectorize"
IF_CONVERSION = "tir.vectorize.if_conversion"
VERSION_STRIDES = "tir.vectorize.version_strides"
INTERCHANGE = "tir.vectorize.interchange"
NARROW_INTEGERS = "tir.vectorize.narrow_integers"
ORDERED = "tir.vectorize.ordered_reductions"
WHILE_SEARCH = "tir.vectorize.while_search"
ANY_DIM_ACCESS = "tir.vectorize.any_dim_access"
BUFFER_PREDICATION = "tir.enable_buffer_level_predication"
PRINT_REMARKS = "tir.vectorize_remarks"


@attrs.frozen
class VectorOptions:
    """The config values the vector passes read, as one value."""

    #: Vectorized loops become serial ones; the other vector passes do nothing.
    disable_vectorize: bool = False
    #: ``if`` on the vectorized var becomes predicated code (IfConvertVectorLoops).
    if_conversion: bool = True
    #: Loops with runtime strides get a contiguous fast path (VersionSymbolicStrides).
    version_strides: bool = True
    #: A vectorized loop striding across rows moves inside its inner loop (InterchangeVectorLoops).
    interchange: bool = True
    #: Vectorized integer arithmetic in the narrowest exact type (NarrowIntegerArithmetic).
    narrow_integers: bool = True
    #: Float sums and products of reductions and scans keep the serial order.
    ordered_reductions: bool = False
    #: A while loop searching a first index becomes a vectorized loop (VectorizeWhileSearch).
    while_search: bool = True
    #: Tail guards become lane masks; None: unset, on for SVE targets (TVM's rule).
    buffer_predication: bool | None = None
    #: Any index may widen; None: unset, the pass's own default decides.
    any_dim_access: bool | None = None
    #: ``VectorizeLoop`` prints its remarks.
    print_remarks: bool = False

    @classmethod
    def from_context(cls, ctx: PassContext) -> VectorOptions:
        """The options ``ctx``'s config sets (defaults from transform/config.py)."""
        config = ctx.config
        return cls(
            disable_vectorize=bool(config.get(DISABLE_VECTORIZE)),
            if_conversion=bool(config.get(IF_CONVERSION)),
            version_strides=bool(config.get(VERSION_STRIDES)),
            interchange=bool(config.get(INTERCHANGE)),
            narrow_integers=bool(config.get(NARROW_INTEGERS)),
            ordered_reductions=bool(config.get(ORDERED)),
            while_search=bool(config.get(WHILE_SEARCH)),
            # These two mean something else when unset than when set to their default.
            buffer_predication=_explicit(config, BUFFER_PREDICATION),
            any_dim_access=_explicit(config, ANY_DIM_ACCESS),
            print_remarks=bool(config.get(PRINT_REMARKS)),
        )

    @classmethod
    def current(cls) -> VectorOptions:
        """The options of ``PassContext.current()``."""
        return cls.from_context(PassContext.current())

    def predicates(self, func: PrimFunc) -> bool:
        """Whether tail guards of ``func`` become lane masks: the config, else SVE."""
        if self.buffer_predication is not None:
            return self.buffer_predication
        return function_has_sve(func)


def _explicit(config: Any, key: str) -> bool | None:
    return bool(config[key]) if key in config else None


def function_target(func: PrimFunc) -> Any:
    """The target ``func`` is compiled for: its ``"target"`` attribute, else the entered
    ``codegen.Target`` (None: the host)."""
    return func.attrs.get("target", current_target())


def function_has_sve(func: PrimFunc) -> bool:
    """Whether ``func``'s target has scalable (SVE) vectors."""
    return has_sve(function_target(func))


__all__ = ["VectorOptions", "function_has_sve", "function_target"]
