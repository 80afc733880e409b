"""The parallel-loop runtime: a thread pool that runs outlined loop tasks.

Generated code calls the launcher through the global
``tirlite_parallel_launch`` (see codegen/llvm/parallel.py) with a task
function, its closure and the loop extent. The launcher splits the loop into
``num_tasks`` chunks, runs chunk 0 on the calling thread and the others on a
``concurrent.futures`` pool. Each task is a ctypes call into native code,
which releases the GIL, so the chunks run truly in parallel.

The thread count is ``TIRLITE_NUM_THREADS`` (default: all cores), read when
the pool is first used. A launch from inside a task (a kernel calling a
kernel) runs serially, so the pool can never deadlock waiting on itself.
"""

from __future__ import annotations

import concurrent.futures
import ctypes
import os
import threading

TASK = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_int32, ctypes.c_int32, ctypes.c_void_p)
LAUNCHER = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64)

_pool: concurrent.futures.ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()
_local = threading.local()
#: Threads that ran the tasks of the most recent launch (for tests and diagnostics).
last_launch_threads: set[int] = set()
#: The exception of the last launch that failed (reported as RUNTIME_ERROR to the caller).
last_error: BaseException | None = None
#: The code a launch returns when the runtime itself fails (see codegen/module.py).
RUNTIME_ERROR = -2


def num_threads() -> int:
    """Threads a parallel loop uses: ``TIRLITE_NUM_THREADS`` or the number of cores."""
    text = os.environ.get("TIRLITE_NUM_THREADS", "").strip()
    if text:
        try:
            count = int(text)
        except ValueError:
            raise ValueError(f"TIRLITE_NUM_THREADS must be a positive integer, got {text!r}")
        if count < 1:
            raise ValueError(f"TIRLITE_NUM_THREADS must be a positive integer, got {count}")
        return count
    return os.cpu_count() or 1


def _get_pool() -> concurrent.futures.ThreadPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = concurrent.futures.ThreadPoolExecutor(
                max_workers=max(num_threads() - 1, 1), thread_name_prefix="tirlite"
            )
        return _pool


def _run(task: TASK, task_id: int, count: int, closure: int) -> int:
    _local.inside = True
    last_launch_threads.add(threading.get_ident())
    try:
        return task(task_id, count, closure)
    finally:
        _local.inside = False


def _launch(task_addr: int, closure: int, extent: int) -> int:
    # An exception must not escape into native code: ctypes would print it and return 0.
    global last_error
    try:
        return _launch_tasks(task_addr, closure, extent)
    except BaseException as err:  # noqa: BLE001 (reported to the caller as an error code)
        last_error = err
        return RUNTIME_ERROR


def _launch_tasks(task_addr: int, closure: int, extent: int) -> int:
    task = TASK(task_addr)
    count = max(1, min(num_threads(), extent))
    if count == 1 or getattr(_local, "inside", False):
        return task(0, 1, closure)
    last_launch_threads.clear()
    pool = _get_pool()
    futures = [pool.submit(_run, task, k, count, closure) for k in range(1, count)]
    codes = [_run(task, 0, count, closure)]
    codes += [f.result() for f in futures]  # waiting releases the GIL
    return next((c for c in codes if c != 0), 0)


_LAUNCHER = LAUNCHER(_launch)  # kept alive for the life of the process


def launcher_address() -> int:
    """The address of the native-callable launcher, to store in generated code's global."""
    return ctypes.cast(_LAUNCHER, ctypes.c_void_p).value


def install(global_address: int) -> None:
    """Store the launcher into a module's ``tirlite_parallel_launch`` global."""
    ctypes.c_void_p.from_address(global_address).value = launcher_address()
