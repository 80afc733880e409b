"""The data-cache sizes of this machine, read from sysfs (typical sizes where it says nothing).

Schedules size their tiles by them (``tirlite.meta_schedule.TargetInfo``). A
``TIRLITE_HOST_TARGET`` override changes the ISA, not the caches: they are
always this machine's.
"""

from __future__ import annotations

import os

#: Typical data-cache sizes (bytes, L1 L2 L3) for targets that are not this machine.
TYPICAL_CACHES = (32 * 1024, 1024 * 1024, 16 * 1024 * 1024)


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
