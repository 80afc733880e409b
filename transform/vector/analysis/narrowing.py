"""In which narrow integer type can an expression be computed exactly? (the decision)

``uint8`` pixels are usually computed in ``int32``, as C's promotion rules make
one write them::

    g[i] = uint8((77 * int32(r[i]) + 150 * int32(g[i]) + 29 * int32(b[i]) + 128) >> 8)

Every intermediate value lies in ``[0, 65408]``: ``uint16`` holds them all, so
the same arithmetic in ``uint16`` gives the same bits, and a vector of it
takes half the registers (numba's loop vectorizer narrows so; LLVM calls it
minimal bit widths). ``narrowing`` finds, for a *root* ``Cast`` to an 8- or
16-bit integer of a wider integer expression, the narrowest of ``int8``,
``uint8``, ``int16``, ``uint16`` that is at least as wide as the root's type
and holds:

- every leaf exactly: a constant, or a ``Cast`` widening an integer of at most
  that many bits (a load of ``uint8``, say), of matching signedness or narrower;
- every intermediate value, by the analyzer's ``const_int_bound``.

The expression may use ``+ - *``, ``min``, ``max``, ``&``, ``|`` and ``>>`` by
a constant; anything else (a division, a call, a wider load) keeps it wide.
Signed 32-bit arithmetic cannot overflow in TIR (TVM's ``nsw``), and in the
narrow type no value leaves its range either: the results are the same.
"""

from __future__ import annotations

from tir import dtype as dt
from tir.arith import Analyzer
from tir.expr import Add, Call, Cast, IntImm, Max, Min, Mul, PrimExpr, Sub

#: Binary nodes computed the same way in any integer type wide enough.
BINARY = (Add, Sub, Mul, Min, Max)
#: Calls computed the same way in any integer type wide enough (shifts by a constant).
CALLS = ("tir.shift_right", "tir.bitwise_and", "tir.bitwise_or")

#: Candidate types, narrowest first, with their ranges.
_TYPES = (("uint8", 0, 255), ("int8", -128, 127), ("uint16", 0, 65535),
          ("int16", -32768, 32767))


def _call_name(e: Call) -> str:
    return getattr(e.op, "name", e.op)


def _nodes(e: PrimExpr, leaves: list, inner: list) -> bool:
    """Collect ``e``'s leaves and inner nodes; False if some node cannot be narrowed."""
    if isinstance(e, IntImm):
        leaves.append(e)
        return True
    if isinstance(e, Cast):
        src = dt.DataType(e.value.dtype)
        ok = src.is_integer and src.bits <= 16 and src.bits < dt.DataType(e.dtype).bits
        leaves.append(e)
        return ok
    if isinstance(e, BINARY):
        inner.append(e)
        return _nodes(e.a, leaves, inner) and _nodes(e.b, leaves, inner)
    if isinstance(e, Call) and _call_name(e) in CALLS and len(e.args) == 2:
        if _call_name(e) == "tir.shift_right" and not isinstance(e.args[1], IntImm):
            return False
        inner.append(e)
        return _nodes(e.args[0], leaves, inner) and _nodes(e.args[1], leaves, inner)
    return False


def _leaf_fits(leaf: PrimExpr, name: str, lo: int, hi: int) -> bool:
    if isinstance(leaf, IntImm):
        return lo <= leaf.value <= hi
    src = dt.DataType(leaf.value.dtype)
    target = dt.DataType(name)
    if src.type_code == dt.UINT:
        return src.bits < target.bits or (src.bits == target.bits and name.startswith("u"))
    return target.type_code == dt.INT and src.bits <= target.bits


def narrowing(root: Cast, analyzer: Analyzer) -> str | None:
    """The narrow scalar type ``root.value`` can be computed in exactly, or None."""
    out = dt.DataType(root.dtype)
    value = root.value
    wide = dt.DataType(value.dtype)
    if not (out.is_integer and wide.is_integer and out.bits <= 16 and wide.bits > 16):
        return None
    if not isinstance(value, (*BINARY, Call)):
        return None  # a plain narrowing cast: nothing to compute
    leaves: list = []
    inner: list = []
    if not _nodes(value, leaves, inner):
        return None
    bounds = [analyzer.const_int_bound(e) for e in inner]
    for name, lo, hi in _TYPES:
        if dt.DataType(name).bits < out.bits:
            continue
        if all(b.min_value >= lo and b.max_value <= hi for b in bounds) and all(
                _leaf_fits(leaf, name, lo, hi) for leaf in leaves):
            return name
    return None
