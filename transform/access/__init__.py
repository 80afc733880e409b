"""Passes about how vector code touches memory (beyond TVM's passes).

- ``interleave``: neighbouring strided accesses that together cover a run of
  memory become one contiguous access plus shuffles (``MergeInterleavedAccesses``).
"""

from .interleave import MergeInterleavedAccesses

__all__ = ["MergeInterleavedAccesses"]
