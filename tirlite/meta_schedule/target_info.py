"""The CPU facts the schedule rules size their tiles by, read off a ``codegen.Target``.

A rule never asks which machine it runs on: it asks the target. Vector lanes
come from the target's widest register; the register count from its ISA (16
on x86 without AVX-512, 32 with it, 32 on AArch64); FMA from its features (or,
for a CPU named with ``-mcpu``, from what LLVM emits for it). Cache sizes are
read from the host (``/sys/devices/system/cpu``) when the target is the host
(``TIRLITE_HOST_TARGET`` included: the override changes the ISA, not the
caches), and are typical sizes otherwise; ``TargetInfo.source`` says which.

>>> info = TargetInfo.from_target("llvm -mcpu=znver3")
>>> info.lanes(4), info.vector_registers
(8, 16)
"""

from __future__ import annotations

from functools import lru_cache

import attrs

from codegen import Target
from target.caches import TYPICAL_CACHES, host_caches


@attrs.frozen
class TargetInfo:
    """What schedule rules need to know about a CPU target."""

    target: str
    vector_bits: int
    vector_registers: int
    has_fma: bool
    l1_bytes: int
    l2_bytes: int
    l3_bytes: int
    cores: int
    source: str  # where the cache sizes come from: "host" or "typical"

    def lanes(self, bytes_per_element: int = 4) -> int:
        """Elements of ``bytes_per_element`` bytes in one vector register."""
        return max(1, self.vector_bits // (8 * bytes_per_element))

    @staticmethod
    def from_target(target: Target | str = "llvm") -> TargetInfo:
        """The facts of ``target`` (a target string or ``codegen.Target``)."""
        return _from_target_text(str(Target(target)), host_threads())


@lru_cache(maxsize=32)
def _from_target_text(text: str, threads: int) -> TargetInfo:
    target = Target(text)
    caches, source = (host_caches(), "host") if target.is_host else (TYPICAL_CACHES, "typical")
    return TargetInfo(
        target=text, vector_bits=target.vector_width_bits,
        vector_registers=target.vector_registers, has_fma=target.has_fma,
        l1_bytes=caches[0], l2_bytes=caches[1], l3_bytes=caches[2],
        cores=threads if target.is_host else 1, source=source)


def host_threads() -> int:
    """Threads a parallel loop gets here: ``TIRLITE_NUM_THREADS``, else the cores.

    Rules parallelize only when this is above 1, so a schedule made (or tuned)
    with ``TIRLITE_NUM_THREADS=1`` has no parallel loop to pay a launch for.
    """
    from codegen.runtime import parallel

    return parallel.num_threads()
