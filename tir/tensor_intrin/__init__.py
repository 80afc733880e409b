"""The tensor intrinsics tirlite ships, registered on import (as ``tvm.tir.tensor_intrin``).

- ``x86``: the uint8 x int8 -> int32 dot product of 4 per lane, 16 lanes
  (``dot_16x4_vnni``, ``dot_16x4_avx512``) and 8 lanes (``dot_8x4_avxvnni``,
  ``dot_8x4_avx2``).

``Schedule.tensorize(loop, name)`` finds them by name; ``TensorIntrin.get``
imports this package on first use.
"""

from . import x86  # noqa: F401  (registers its intrinsics)
