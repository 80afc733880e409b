"""aarch64 (SVE) modules run on this machine under QEMU user emulation, for tests.

- ``emulate``: ``EmulatedModule`` / ``EmulatedFunction``, the call through QEMU;
- ``driver``: the C program each call runs in the emulated process.

Finding (or installing) qemu-user and the aarch64 cross compiler is
``codegen/cross_tools.py``'s (exporting an aarch64 library needs the linker too).
"""

from ..cross_tools import CrossTools, EmulationUnavailable, find_tools
from .emulate import (
    SVE_VECTOR_LENGTHS,
    VALID_SVE_VECTOR_LENGTHS,
    EmulatedFunction,
    EmulatedModule,
    emulate,
)

__all__ = ["SVE_VECTOR_LENGTHS", "VALID_SVE_VECTOR_LENGTHS", "CrossTools", "EmulatedFunction",
           "EmulatedModule", "EmulationUnavailable", "emulate", "find_tools"]
