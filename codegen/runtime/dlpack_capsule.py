"""Reading a DLPack capsule NumPy refuses: bfloat16 tensors as ``ml_dtypes.bfloat16`` arrays.

``np.from_dlpack`` knows only NumPy's own dtypes, so a PyTorch or JAX tensor
of bfloat16 (DLPack type code ``kDLBfloat``) cannot become an ndarray that
way. This module reads the capsule itself, as the DLPack header lays it out
(``dlpack.h``, the unversioned ``"dltensor"`` capsule every exporter gives
when asked without ``max_version``):

    DLManagedTensor { DLTensor dl_tensor; void *manager_ctx;
                      void (*deleter)(DLManagedTensor *); }
    DLTensor { void *data; DLDevice device; int32 ndim; DLDataType dtype;
               int64 *shape; int64 *strides; uint64 byte_offset; }

and builds an ndarray of ``ml_dtypes.bfloat16`` over the same memory. The
versioned capsule of DLPack 1.0 (``"dltensor_versioned"``: version, owner,
deleter, flags, then the tensor) is asked for first, for its read-only flag.
As the protocol asks, a capsule is renamed ``"used_..."`` once consumed, and
the producer's ``deleter`` runs when the ndarray's memory is released.
"""

from __future__ import annotations

import ctypes
import weakref
from typing import Any

import numpy as np

KDL_BFLOAT = 4
_CPU = 1


class _Device(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _Tensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _Device), ("ndim", ctypes.c_int32),
                ("dtype", _DataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class ManagedTensor(ctypes.Structure):
    """``DLManagedTensor``: the tensor, its owner's context and the owner's deleter."""


DELETER = ctypes.CFUNCTYPE(None, ctypes.POINTER(ManagedTensor))
ManagedTensor._fields_ = [("dl_tensor", _Tensor), ("manager_ctx", ctypes.c_void_p),
                          ("deleter", DELETER)]


class ManagedTensorVersioned(ctypes.Structure):
    """``DLManagedTensorVersioned`` (DLPack 1.0): a version, the owner, flags, the tensor."""


VERSIONED_DELETER = ctypes.CFUNCTYPE(None, ctypes.POINTER(ManagedTensorVersioned))
ManagedTensorVersioned._fields_ = [
    ("major", ctypes.c_uint32), ("minor", ctypes.c_uint32), ("manager_ctx", ctypes.c_void_p),
    ("deleter", VERSIONED_DELETER), ("flags", ctypes.c_uint64), ("dl_tensor", _Tensor)]
READ_ONLY = 1  # DLPACK_FLAG_BITMASK_READ_ONLY

_api = ctypes.pythonapi
_api.PyCapsule_IsValid.restype = ctypes.c_int
_api.PyCapsule_IsValid.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_GetPointer.restype = ctypes.c_void_p
_api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_SetName.restype = ctypes.c_int
_api.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]


def bfloat16_view(value: Any) -> np.ndarray | None:
    """``value``'s bfloat16 memory as an ndarray of ``ml_dtypes.bfloat16``, or None when
    its DLPack export is not a CPU bfloat16 tensor (the caller's error then stands).

    The versioned capsule (DLPack 1.0) is asked for first: only it says whether the
    memory may be written. An unversioned one gives a read-only ndarray, as NumPy's
    ``from_dlpack`` does.
    """
    try:
        capsule = value.__dlpack__(max_version=(1, 0))
    except TypeError:  # a producer older than DLPack 1.0
        capsule = value.__dlpack__()
    for name, layout in ((b"dltensor_versioned", ManagedTensorVersioned),
                         (b"dltensor", ManagedTensor)):
        if _api.PyCapsule_IsValid(capsule, name):
            address = _api.PyCapsule_GetPointer(capsule, name)
            managed = layout.from_address(address)
            break
    else:
        return None
    t = managed.dl_tensor
    if (t.dtype.code, t.dtype.bits, t.dtype.lanes) != (KDL_BFLOAT, 16, 1) \
            or t.device.device_type != _CPU:
        return None  # the capsule stays unconsumed: its destructor frees it
    _api.PyCapsule_SetName(capsule, b"used_" + name)
    array = _wrap(managed, address, layout)
    if layout is ManagedTensor or managed.flags & READ_ONLY:
        # An unversioned capsule cannot say its memory may be written: NumPy (2.x) marks
        # such imports read-only, and so does this one (a JAX array exports this way).
        array.flags.writeable = False
    return array


def _wrap(managed: Any, address: int, layout: type) -> np.ndarray:
    import ml_dtypes

    t = managed.dl_tensor
    shape = tuple(t.shape[d] for d in range(t.ndim))
    if t.strides:
        strides = tuple(t.strides[d] for d in range(t.ndim))
    else:  # NULL strides: compact row-major
        strides, step = [], 1
        for n in reversed(shape):
            strides.append(step)
            step *= n
        strides = tuple(reversed(strides))
    start = t.data + t.byte_offset
    lo = sum(s * (n - 1) for s, n in zip(strides, shape) if s < 0 and n > 0)
    hi = sum(s * (n - 1) for s, n in zip(strides, shape) if s > 0 and n > 0)
    empty = any(n == 0 for n in shape)
    release = (managed.deleter, ctypes.cast(address, ctypes.POINTER(layout)))
    if empty:  # no memory to view: the producer's tensor is released at once
        if managed.deleter:
            release[0](release[1])
        return np.zeros(shape, dtype=ml_dtypes.bfloat16)
    memory = (ctypes.c_char * ((hi - lo + 1) * 2)).from_address(start + lo * 2)
    if managed.deleter:  # when the last view of the memory goes
        weakref.finalize(memory, *release)
    return np.ndarray(shape, dtype=ml_dtypes.bfloat16, buffer=memory, offset=-lo * 2,
                      strides=tuple(2 * s for s in strides))
