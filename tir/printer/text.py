"""Pieces of printed text: literals, type names, and the table of printed names.

Used by ``tir.printer``; kept apart because naming and number formatting are
rules of their own (unique names with ``_1`` suffixes, shortest round-trip floats).
"""

from __future__ import annotations

import functools
import json
import keyword
import math
import re
import struct
from typing import Any

from ..expr import FloatImm, PrimExpr

# Names a variable may not take: Python keywords and the names the text itself uses.
_RESERVED = frozenset(keyword.kwlist) | {"T", "I", "range"}


def quote(text: str) -> str:
    """``text`` as a double-quoted string literal."""
    return json.dumps(text, ensure_ascii=False)


def sanitize(name: str) -> str:
    """``name`` as a Python identifier (``threadIdx.x`` -> ``threadIdx_x``)."""
    name = re.sub(r"\W", "_", name) or "v"
    return "v" + name if name[0].isdigit() else name


def float_text(value: float, dtype: str) -> str:
    """The shortest decimal that reads back as the same float of ``dtype``."""
    # -0.0 == 0.0 with one hash: the sign must be part of the cache key.
    return _float_text(value, dtype, math.copysign(1.0, value) < 0)


@functools.lru_cache(maxsize=4096)
def _float_text(value: float, dtype: str, negative: bool) -> str:
    if math.isnan(value) or math.isinf(value):
        return quote(str(value))
    if dtype == "float64":
        text = repr(value)
    else:
        reads_back = _reads_back_as(dtype, value)
        text = next(t for t in (f"{value:.{p}g}" for p in range(1, 18)) if reads_back(t))
    return text.removesuffix(".0")


def _reads_back_as(dtype: str, value: float):
    """A test of whether a decimal text is ``value`` once rounded to ``dtype``."""
    if dtype == "bfloat16":  # struct has no bfloat16: round as FloatImm does
        from ..low_precision import round_float

        return lambda text: round_float(float(text), dtype) == value
    fmt = "<f" if dtype == "float32" else "<e"
    want = struct.pack(fmt, value)
    return lambda text: _packs_to(fmt, text, want)


def _packs_to(fmt: str, text: str, want: bytes) -> bool:
    """Whether ``text`` reads back as the float whose bytes are ``want``; a decimal just past
    the largest float32 (-3.4028235e+38 for its lowest) does not fit at all."""
    try:
        return struct.pack(fmt, float(text)) == want
    except OverflowError:
        return False


def type_text(dtype: str, annotation: str | None = None) -> str:
    """``T.int32``, ``T.float32x4``, or ``T.handle("float32")`` for a typed handle."""
    if dtype == "handle" and annotation:
        return f'T.handle("{annotation}")'
    return f"T.{dtype}"


def const_text(e: PrimExpr) -> str:
    """The text of an ``IntImm`` or ``FloatImm``: ``4``, ``T.int64(4)``, ``T.float32(0.5)``."""
    if type(e) is FloatImm:
        return f"T.{e.dtype}({float_text(e.value, e.dtype)})"
    if e.dtype == "int32":
        return str(e.value)
    if e.dtype == "bool":
        return f"T.bool({bool(e.value)})"
    return f"T.{e.dtype}({e.value})"


class Names:
    """Printed names: unique among live objects, suffixed ``_1``, ``_2`` on clashes."""

    def __init__(self):
        self.of: dict[int, str] = {}  # id(var or buffer) -> printed name
        self.used: set[str] = set(_RESERVED)
        self.suffix: dict[str, int] = {}

    def claim(self, wanted: str) -> str:
        """A fresh name based on ``wanted``."""
        base = sanitize(wanted)
        if base not in self.used:
            self.used.add(base)
            return base
        k = self.suffix.get(base, 0)
        while True:
            k += 1
            name = f"{base}_{k}"
            if name not in self.used:
                break
        self.suffix[base] = k
        self.used.add(name)
        return name

    def define(self, obj: Any, wanted: str) -> tuple[Any, str | None]:
        """Give ``obj`` a fresh name; the token undoes it in ``release``."""
        old = self.of.get(id(obj))
        self.of[id(obj)] = self.claim(wanted)
        return obj, old

    def release(self, token: tuple[Any, str | None]) -> None:
        """End the scope of a name given by ``define``."""
        obj, old = token
        self.used.discard(self.of[id(obj)])
        if old is None:
            del self.of[id(obj)]
        else:
            self.of[id(obj)] = old
