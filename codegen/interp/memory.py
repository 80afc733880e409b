"""Buffer addressing for the interpreter: indices to flat positions, with bounds checks.

Memory behind a handle var is a flat 1-D NumPy array of scalar lanes. A
buffer maps its (possibly multi-dimensional) indices to that array through
its strides (row-major when none are declared) and ``elem_offset``; a buffer
of vector elements (``float32x4``) spans 4 lanes per element. Every access
is checked: an index outside the buffer's shape, or a position outside the
memory, is an ``IndexError`` naming the buffer and the index, where native
code would read garbage.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tir.buffer import Buffer

from .values import np_dtype


class Layout:
    """The evaluated shape, strides and offset of one buffer access."""

    __slots__ = ("lanes", "offset", "shape", "strides")

    def __init__(self, shape: tuple, strides: tuple, offset: int, lanes: int = 1):
        self.shape = shape
        self.strides = strides
        self.offset = offset
        self.lanes = lanes  # scalar lanes per element (4 * vscale for float32xvscalex4)


def row_major_strides(shape: tuple) -> tuple:
    """Element strides of a compact row-major array of ``shape``."""
    strides, step = [], 1
    for extent in reversed(shape):
        strides.append(step)
        step *= extent
    return tuple(reversed(strides))


def view_of(memory: np.ndarray, buf: Buffer) -> np.ndarray:
    """``memory`` seen with the buffer's element type (a buffer may view other memory)."""
    want = np_dtype(buf.dtype)
    if memory.dtype == want:
        return memory
    return memory.view(want)


def flat_index(buf: Buffer, layout: Layout, indices: list, mask: Any, size: int) -> Any:
    """The flat lane positions of ``buf[indices]`` (an int, or an int64 array of lanes)."""
    lanes = layout.lanes
    if mask is None and lanes == 1 and not any(type(i) is np.ndarray for i in indices):
        return _scalar_flat_index(buf, layout, indices, size)
    index_mask = mask
    if mask is not None and lanes > 1:  # the predicate covers every scalar lane
        index_mask = np.asarray(mask).reshape(-1, lanes).any(axis=1)
    for axis, (index, extent) in enumerate(zip(indices, layout.shape)):
        _check_axis(buf, axis, index, extent, index_mask, indices)
    flat: Any = layout.offset
    for index, stride in zip(indices, layout.strides):
        flat = flat + np.asarray(index, np.int64) * stride
    if lanes > 1:
        flat = (np.atleast_1d(flat)[:, None] * lanes + np.arange(lanes)).ravel()
    _check_memory(buf, flat, mask, size, indices)
    return flat if np.ndim(flat) else int(flat)


def _scalar_flat_index(buf: Buffer, layout: Layout, indices: list, size: int) -> int:
    """The common case in plain ints: one scalar element, no predicate."""
    flat = layout.offset
    for axis, (index, extent, stride) in enumerate(zip(indices, layout.shape, layout.strides)):
        index = int(index)
        if not 0 <= index < extent:
            _check_axis(buf, axis, index, extent, None, indices)
        flat += index * stride
    if not 0 <= flat < size:
        _check_memory(buf, flat, None, size, indices)
    return flat


def _active(index: Any, mask: Any) -> np.ndarray:
    arr = np.asarray(index, np.int64)
    if mask is None:
        return arr
    if arr.ndim == 0:  # a broadcast dimension: used by every lane, so by none if all are off
        return arr if np.any(mask) else np.empty(0, np.int64)
    return arr[np.asarray(mask)]


def _check_axis(buf: Buffer, axis: int, index: Any, extent: int, mask: Any,
                indices: list) -> None:
    active = _active(index, mask)
    if active.size and (active.min() < 0 or active.max() >= extent):
        bad = active[(active < 0) | (active >= extent)][0]
        where = f" in dimension {axis}" if len(indices) > 1 else ""
        raise IndexError(
            f"buffer '{buf.name}': index {int(bad)}{where} is out of bounds for extent {extent} "
            f"(indices {_text(indices)})"
        )


def _check_memory(buf: Buffer, flat: Any, mask: Any, size: int, indices: list) -> None:
    active = _active(flat, mask)
    if active.size and (active.min() < 0 or active.max() >= size):
        raise IndexError(
            f"buffer '{buf.name}': indices {_text(indices)} reach element "
            f"{int(active.max() if active.max() >= size else active.min())}, outside its "
            f"memory of {size} elements"
        )


def _text(indices: list) -> str:
    parts = [str(np.asarray(i).tolist()) for i in indices]
    return "[" + ", ".join(parts) + "]"


def load(memory: np.ndarray, flat: Any, mask: Any) -> Any:
    """Read the lanes at ``flat``; masked-off lanes are not read and come back as 0."""
    if mask is None:
        return memory[flat]
    mask = np.asarray(mask)
    out = np.zeros(np.size(flat), memory.dtype)
    out[mask] = memory[np.asarray(flat)[mask]]
    return out


def store(memory: np.ndarray, flat: Any, value: Any, mask: Any) -> None:
    """Write ``value`` at ``flat``; masked-off lanes are left untouched."""
    if mask is None:
        memory[flat] = value
        return
    mask = np.asarray(mask)
    memory[np.asarray(flat)[mask]] = np.asarray(value)[mask]
