"""Data types: scalar, fixed-width vector and scalable vector dtype strings.

A dtype is written as a string, as in TVM: ``"int32"``, ``"float32x4"`` (four
lanes), ``"float32xvscalex4"`` (``4 * vscale`` lanes, for SVE-style scalable
vectors). ``"bfloat16"`` is the 16-bit float with float32's exponent; it
counts as a float (``is_float``). Expressions carry their dtype as such a
string; ``DataType`` parses one into its parts. ``"uint1"`` is TVM's other
name for ``"bool"`` (TVM's bool is a 1-bit unsigned integer), so ``"uint1x4"``
reads as ``"boolx4"``.

>>> DataType("float32x4").lanes
4
>>> str(DataType("int8").with_lanes(16))
'int8x16'
"""

from __future__ import annotations

import functools
import re
from typing import Any

#: Type codes, in the order TVM numbers them (``bfloat`` is TVM's kBFloat).
INT, UINT, FLOAT, HANDLE, BOOL, BFLOAT = "int", "uint", "float", "handle", "bool", "bfloat"

_SCALAR_RE = re.compile(r"^(int|uint|float|bfloat|bool|handle)(\d*)$")
_VALID_BITS = {
    INT: (8, 16, 32, 64),
    UINT: (8, 16, 32, 64),
    FLOAT: (16, 32, 64),
    BFLOAT: (16,),
    BOOL: (1,),
    HANDLE: (64,),
}


class DataType:
    """A parsed dtype: type code, bits per lane, lanes, and whether scalable.

    ``DataType("float32x4")`` parses a string; ``DataType("float", 32, 4)``
    builds one from parts. For a scalable dtype, ``lanes`` is the vscale
    multiplier (4 in ``float32xvscalex4``). Instances are immutable.
    """

    __slots__ = ("type_code", "bits", "lanes", "is_scalable")

    def __new__(cls, type_code: "str | DataType", bits: int | None = None, lanes: int = 1,
                is_scalable: bool = False):
        if bits is None:
            return _parse(str(type_code))
        if type_code == UINT and int(bits) == 1:  # TVM's bool is uint1: one type, one spelling
            type_code = BOOL
        self = super().__new__(cls)
        for name, value in (("type_code", type_code), ("bits", int(bits)), ("lanes", int(lanes)),
                            ("is_scalable", bool(is_scalable))):
            object.__setattr__(self, name, value)
        return self

    def __setattr__(self, name, value):
        raise AttributeError("DataType is immutable")

    def __repr__(self) -> str:
        return f"DataType({str(self)!r})"

    def __reduce__(self):
        return (DataType, (str(self),))

    def __str__(self) -> str:
        plain = self.type_code in (BOOL, HANDLE)
        base = self.type_code if plain else f"{self.type_code}{self.bits}"
        if self.is_scalable:
            return f"{base}xvscalex{self.lanes}"
        return base if self.lanes == 1 else f"{base}x{self.lanes}"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (str, DataType)):
            return str(self) == str(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(str(self))

    @property
    def element_of(self) -> "DataType":
        """The scalar dtype of one lane."""
        return DataType(self.type_code, self.bits)

    def with_lanes(self, lanes: int) -> "DataType":
        """The same element type with ``lanes`` fixed lanes."""
        return DataType(self.type_code, self.bits, int(lanes))

    def with_scalable_lanes(self, factor: int) -> "DataType":
        """The same element type with ``factor * vscale`` lanes."""
        return DataType(self.type_code, self.bits, int(factor), True)

    def with_bits(self, bits: int) -> "DataType":
        return DataType(self.type_code, bits, self.lanes, self.is_scalable)

    @property
    def is_scalar(self) -> bool:
        return self.lanes == 1 and not self.is_scalable

    @property
    def is_vector(self) -> bool:
        return not self.is_scalar

    @property
    def is_int(self) -> bool:
        return self.type_code == INT

    @property
    def is_uint(self) -> bool:
        return self.type_code == UINT

    @property
    def is_float(self) -> bool:
        """True for every float type, bfloat16 included (it computes as a float)."""
        return self.type_code in (FLOAT, BFLOAT)

    @property
    def is_bfloat16(self) -> bool:
        return self.type_code == BFLOAT

    @property
    def is_bool(self) -> bool:
        return self.type_code == BOOL

    @property
    def is_handle(self) -> bool:
        return self.type_code == HANDLE

    @property
    def is_integer(self) -> bool:
        """True for signed and unsigned integers (not bool)."""
        return self.type_code in (INT, UINT)

    def min_value(self) -> int | float:
        """The smallest value of one lane."""
        if self.is_int:
            return -(1 << (self.bits - 1))
        if self.is_uint or self.is_bool:
            return 0
        return float("-inf")

    def max_value(self) -> int | float:
        """The largest value of one lane."""
        if self.is_int:
            return (1 << (self.bits - 1)) - 1
        if self.is_uint:
            return (1 << self.bits) - 1
        if self.is_bool:
            return 1
        return float("inf")


@functools.lru_cache(maxsize=None)
def _parse(text: str) -> DataType:
    if not isinstance(text, str) or not text:
        raise ValueError(f"invalid dtype {text!r}")
    head, scalable, lanes = text, False, 1
    if "xvscalex" in text:
        head, _, count = text.partition("xvscalex")
        scalable, lanes = True, _parse_lanes(text, count)
    elif "x" in text:
        head, _, count = text.partition("x")
        lanes = _parse_lanes(text, count)
    match = _SCALAR_RE.match(head)
    if not match:
        raise ValueError(
            f"invalid dtype {text!r}: unknown type; expected int, uint, float, bfloat, bool or "
            "handle with optional lanes such as 'float32x4'"
        )
    code, bits_text = match.groups()
    default_bits = {BOOL: 1, HANDLE: 64}.get(code)
    bits = int(bits_text) if bits_text else default_bits
    if code == UINT and bits == 1:  # TVM spells bool masks "uint1xN"
        code = BOOL
    elif code == BOOL and bits_text:
        raise ValueError(f"invalid dtype {text!r}: write 'bool'")
    if bits is None or bits not in _VALID_BITS[code]:
        raise ValueError(f"invalid dtype {text!r}: {code} does not come in {bits_text or 0} bits")
    return DataType(code, bits, lanes, scalable)


def _parse_lanes(text: str, count: str) -> int:
    if not count.isdigit() or int(count) < 1:
        raise ValueError(f"invalid dtype {text!r}: lane count must be a positive integer")
    return int(count)


@functools.lru_cache(maxsize=None)
def canonical(dtype: "str | DataType") -> str:
    """Validate a dtype and return its canonical string form."""
    return str(_parse(str(dtype)))


@functools.lru_cache(maxsize=None)
def lanes_of(dtype: str) -> int:
    """Fixed lane count of a dtype string (the multiplier for a scalable one)."""
    return _parse(dtype).lanes


@functools.lru_cache(maxsize=None)
def element_of(dtype: str) -> str:
    """The scalar dtype string of one lane of ``dtype``."""
    return str(_parse(dtype).element_of)


@functools.lru_cache(maxsize=None)
def with_lanes(dtype: str, lanes: int) -> str:
    """``dtype``'s element type with ``lanes`` fixed lanes, as a string."""
    return str(_parse(dtype).with_lanes(lanes))


@functools.lru_cache(maxsize=None)
def with_scalable_lanes(dtype: str, factor: int) -> str:
    """``dtype``'s element type with ``factor * vscale`` lanes, as a string."""
    return str(_parse(dtype).with_scalable_lanes(factor))


def check_cast_order(who: str, dtype: Any, value: Any) -> None:
    """TypeError when a cast's arguments come in NumPy's order, ``(value, dtype)``.

    TVM's ``cast``/``Cast`` take the dtype first; ``x.astype(dtype)`` reads as
    NumPy does.
    """
    if isinstance(value, (str, DataType)) and not isinstance(dtype, (str, DataType)):
        raise TypeError(
            f"{who} takes (dtype, value), the dtype first as in TVM; got the dtype "
            f"{str(value)!r} second: write {who}({str(value)!r}, x) or x.astype({str(value)!r})"
        )
