"""Reference meanings of the LLVM intrinsics that tirlite's own passes emit.

``ByteDotAccumulation`` (transform/vector/byte_dot_accumulation.py) turns reduction
updates into ``call_llvm_pure_intrin(..., "llvm.x86.avx512.vpdpbusd.512", ...)``, and
``codegen.build(func, "interp")`` interprets the lowered function, so the interpreter
needs that intrinsic's meaning: written here from Intel's description, on NumPy lanes,
wrapping as the instruction does (``vpdpbusd`` does not saturate; ``vpdpbusds`` would).
Intrinsics a user writes stay unknown to the interpreter (a ValueError names them).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np


def _vpdpbusd(acc: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Lane i of ``acc`` plus the 4 products of lane i's bytes: ``a``'s unsigned, ``b``'s
    signed."""
    lanes = acc.shape[0]
    ua = np.ascontiguousarray(a).view(np.uint8).astype(np.int64).reshape(lanes, 4)
    sb = np.ascontiguousarray(b).view(np.int8).astype(np.int64).reshape(lanes, 4)
    total = acc.astype(np.int64) + (ua * sb).sum(axis=1)
    return (total & 0xFFFFFFFF).astype(np.uint32).view(np.int32)


#: LLVM intrinsic name -> its meaning on the evaluated arguments (after the signature count).
LLVM_INTRINSICS: dict[str, Callable[..., np.ndarray]] = {
    "llvm.x86.avx512.vpdpbusd.512": _vpdpbusd,
    "llvm.x86.avx512.vpdpbusd.256": _vpdpbusd,
}
