"""Passes about how vector code touches memory (beyond TVM's passes).

- ``interleave``: neighbouring strided accesses that together cover a run of
  memory become one contiguous access plus shuffles (``MergeInterleavedAccesses``);
- ``version_strides`` (decided by ``stride_analysis``): ``A[i * s]`` with ``s`` a
  runtime value gets a contiguous copy of the loop under ``s == 1``
  (``VersionSymbolicStrides``).
"""

from .interleave import MergeInterleavedAccesses
from .version_strides import VersionSymbolicStrides

__all__ = ["MergeInterleavedAccesses", "VersionSymbolicStrides"]
