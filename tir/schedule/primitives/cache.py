"""``cache_read`` and ``cache_write``."""

from __future__ import annotations

from ...function import PrimFunc


def cache_read(func: PrimFunc, block: str, read_buffer_index: int, storage_scope: str,
               consumer_blocks: list[str] | None = None) -> tuple[PrimFunc, str]:
    """Returns ``(new_func, name of the new cache block)``."""
    raise NotImplementedError("cache_read")


def cache_write(func: PrimFunc, block: str, write_buffer_index: int, storage_scope: str,
                consumer_blocks: list[str] | None = None) -> tuple[PrimFunc, str]:
    """Returns ``(new_func, name of the new write-back block)``."""
    raise NotImplementedError("cache_write")
