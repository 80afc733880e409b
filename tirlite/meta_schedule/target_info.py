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

import os
from functools import lru_cache

import attrs

from codegen import Target

#: Typical data-cache sizes (bytes) for targets that are not this machine.
TYPICAL_CACHES = (32 * 1024, 1024 * 1024, 16 * 1024 * 1024)


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
    bits = target.vector_width_bits
    caches, source = (host_caches(), "host") if target.is_host else (TYPICAL_CACHES, "typical")
    return TargetInfo(
        target=text, vector_bits=bits, vector_registers=_vector_registers(target, bits),
        has_fma=_has_fma(target), l1_bytes=caches[0], l2_bytes=caches[1], l3_bytes=caches[2],
        cores=threads if target.is_host else 1, source=source)


def host_threads() -> int:
    """Threads a parallel loop gets here: ``TIRLITE_NUM_THREADS``, else the cores.

    Rules parallelize only when this is above 1, so a schedule made (or tuned)
    with ``TIRLITE_NUM_THREADS=1`` has no parallel loop to pay a launch for.
    """
    from codegen import parallel

    return parallel.num_threads()


def _vector_registers(target: Target, bits: int) -> int:
    if target.arch in ("x86_64", "i386", "i686"):
        return 32 if bits >= 512 else 16
    return 32  # AArch64 NEON and SVE both have 32


def _has_fma(target: Target) -> bool:
    features = target.features.split(",")
    if "+fma" in features or "+neon" in features or target.arch == "aarch64":
        return True
    if target.options.get("mcpu", "native") != "native" and target.arch == "x86_64":
        from codegen.llvm.cpu_features import cpu_features

        return bool(cpu_features(target.triple, target.mcpu, ",".join(target.mattr)).get("fma"))
    return False


def host_caches() -> tuple[int, int, int]:
    """The host's L1 data, L2 and L3 sizes in bytes (typical sizes where sysfs says nothing)."""
    found = dict(enumerate(TYPICAL_CACHES, start=1))
    root = "/sys/devices/system/cpu/cpu0/cache"
    try:
        entries = sorted(os.listdir(root))
    except OSError:
        return TYPICAL_CACHES
    for entry in entries:
        if not entry.startswith("index"):
            continue
        kind = _read(os.path.join(root, entry, "type"))
        level = _read(os.path.join(root, entry, "level"))
        size = _parse_size(_read(os.path.join(root, entry, "size")))
        if kind in ("Data", "Unified") and level.isdigit() and size and int(level) in found:
            found[int(level)] = size
    return found[1], found[2], found[3]


def _read(path: str) -> str:
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return ""


def _parse_size(text: str) -> int | None:
    units = {"K": 1024, "M": 1024 * 1024, "G": 1024 ** 3}
    if text[-1:] in units and text[:-1].isdigit():
        return int(text[:-1]) * units[text[-1]]
    return int(text) if text.isdigit() else None
