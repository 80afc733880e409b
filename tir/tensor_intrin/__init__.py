"""The tensor intrinsics tirlite ships, registered on import (as ``tvm.tir.tensor_intrin``).

- ``x86``: the uint8 x int8 -> int32 dot product of 4 per lane, 16 lanes
  (``dot_16x4_vnni``, ``dot_16x4_avx512``) and 8 lanes (``dot_8x4_avxvnni``,
  ``dot_8x4_avx2``); ``target.tensor_intrinsics.dot_intrin_for(target)`` names the best one.
- ``arm``: AArch64's 8-bit dot products of 4 per lane, 4 lanes: int8 x int8 ->
  int32 (``dot_4x4_i8i8s32_sdot``, fallback ``dot_4x4_i8i8s32_neon``) and
  uint8 x uint8 -> uint32 (``dot_4x4_u8u8u32_udot``, fallback
  ``dot_4x4_u8u8u32_neon``); ``target.tensor_intrinsics.arm_dot_intrin_for(target, signed)`` names
  the one the target runs (``sdot``/``udot`` need ``-mattr=+dotprod``).

``Schedule.tensorize(loop, name)`` finds them by name; ``TensorIntrin.get``
imports this package on first use.
"""

from . import arm, x86  # noqa: F401  (register their intrinsics)
