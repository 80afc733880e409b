"""Arrays that end where an inaccessible page begins, for tests run in a subprocess.

One lane read or written past the end kills the process (SIGSEGV), so a test runs
its kernel in a child process and checks the exit status.
"""

import ctypes
import mmap

import numpy as np

PAGE = mmap.PAGESIZE
_libc = ctypes.CDLL(None, use_errno=True)
_libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]


def at_page_end(n: int, dtype=np.float32) -> tuple:
    """``(region, array)``: ``n`` elements ending at a PROT_NONE page; keep ``region``
    alive as long as the array is used."""
    region = mmap.mmap(-1, 2 * PAGE)
    start = ctypes.addressof(ctypes.c_char.from_buffer(region))
    assert _libc.mprotect(start + PAGE, PAGE, 0) == 0  # PROT_NONE after the array
    itemsize = np.dtype(dtype).itemsize
    return region, np.frombuffer(region, dtype, count=n, offset=PAGE - itemsize * n)


def at_page_start(n: int, dtype=np.float32) -> tuple:
    """``(region, array)``: ``n`` elements starting right after a PROT_NONE page (a lane
    read or written *before* the array faults)."""
    region = mmap.mmap(-1, 2 * PAGE + n * np.dtype(dtype).itemsize)
    start = ctypes.addressof(ctypes.c_char.from_buffer(region))
    assert _libc.mprotect(start, PAGE, 0) == 0  # PROT_NONE before the array
    return region, np.frombuffer(region, dtype, count=n, offset=PAGE)
