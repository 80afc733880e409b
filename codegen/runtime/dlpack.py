"""Arrays from other libraries: any object with ``__dlpack__`` as a zero-copy NumPy view.

A kernel call takes NumPy arrays; a PyTorch tensor, a JAX array, a CuPy array
or anything else that exports DLPack (the array interchange protocol, which
NumPy reads with ``np.from_dlpack``) is viewed as an ndarray over the same
memory first, and that view goes through the same checks as an ndarray
(dtype, shape, strides, alignment, read-only, overlap: codegen/runtime/args.py). A
kernel's stores land in the object's own memory. An object on another device
than the CPU is a ``ValueError`` naming the device; one NumPy cannot view (a
dtype it lacks, or a tensor that refuses to export) a ``TypeError``. A bfloat16
tensor, which NumPy's import lacks, is read from its DLPack capsule as an
``ml_dtypes.bfloat16`` array over the same memory (``dlpack_capsule``). Such
calls take the Python argument path (a few microseconds more than a call with
ndarrays, which the native path checks).
"""

from __future__ import annotations

from typing import Any

import numpy as np

#: DLPack's device types (``DLDeviceType``), for the error message.
DEVICES = {1: "CPU", 2: "CUDA", 3: "CUDA host memory", 4: "OpenCL", 7: "Vulkan", 8: "Metal",
           9: "VPI", 10: "ROCm", 11: "ROCm host memory", 13: "CUDA managed memory",
           14: "oneAPI", 15: "WebGPU", 16: "Hexagon"}
_CPU = 1


def speaks_dlpack(value: Any) -> bool:
    """Whether ``value`` is not an ndarray but exports DLPack."""
    return not isinstance(value, np.ndarray) and hasattr(type(value), "__dlpack__")


def as_ndarray(func_name: str, param_name: str, value: Any) -> np.ndarray:
    """``value`` (see ``speaks_dlpack``) as an ndarray over its memory, or a clear error."""
    device = getattr(value, "__dlpack_device__", None)
    if device is not None:
        kind, index = device()
        if kind != _CPU:
            raise ValueError(
                f"{func_name}: argument '{param_name}' ({type(value).__name__}) lives on "
                f"{DEVICES.get(int(kind), f'DLPack device type {kind}')} (device {index}); "
                "kernels run on the CPU: move it there first (for a PyTorch tensor, .cpu())")
    try:
        return np.from_dlpack(value, copy=False)
    except (BufferError, TypeError, ValueError, RuntimeError) as err:
        view = _bfloat16_view(err, value)
        if view is not None:
            return view
        raise TypeError(
            f"{func_name}: argument '{param_name}' ({type(value).__name__}) cannot be viewed "
            f"as a NumPy array through DLPack without a copy: {err}{_dtype_hint(err)}") from None


def _bfloat16_view(err: Exception, value: Any) -> np.ndarray | None:
    """A bfloat16 tensor, which NumPy's import refuses, read from its capsule instead."""
    if "dtype" not in str(err).lower() and "type" not in str(err).lower():
        return None
    from .dlpack_capsule import bfloat16_view

    try:
        return bfloat16_view(value)
    except (BufferError, TypeError, ValueError, RuntimeError):
        return None


def _dtype_hint(err: Exception) -> str:
    """How to pass a tensor of a dtype NumPy's DLPack import lacks (bfloat16 above all)."""
    if "dtype" not in str(err).lower():
        return ""
    return ("; NumPy's DLPack import has no bfloat16: pass a NumPy array of "
            "ml_dtypes.bfloat16 over the same memory instead (for a PyTorch tensor t: "
            "t.view(torch.int16).numpy().view(ml_dtypes.bfloat16))")


__all__ = ["DEVICES", "as_ndarray", "speaks_dlpack"]
