"""The parallel-loop runtime: the Python side of the native thread pool.

Generated code calls the launcher through the global ``tirlite_parallel_launch``
(see codegen/llvm/parallel.py). The launcher and its pool are native code,
emitted as LLVM IR by codegen/runtime/pool_ir.py (its docstring says why and
how); this module compiles them once per process, when the first module with
a parallel loop is compiled or loaded, and stores the launcher's address into
every such module. The worker threads start on the first launch that needs
them. A launch never calls back into Python.

Thread count of a launch: ``min(threads, extent, 256)`` tasks, where threads
is the innermost ``codegen.num_threads(n)`` of the calling thread, else the
process default: ``TIRLITE_NUM_THREADS`` (default: all cores), read once, when
the pool is compiled (as OpenMP reads ``OMP_NUM_THREADS``); change it later
with ``codegen.num_threads(n)``. An invalid variable makes every launch fail
with a ``RuntimeError`` naming it. The pool keeps every worker created so far;
a launch of n tasks uses workers 1..n-1 and the calling thread.

Concurrency: one launch at a time owns the pool. A launch made while another
owns it -- from another Python thread, or from inside a task -- runs its loop
serially on its own thread: never waiting means never deadlocking, and the
results are the same. After ``fork`` the child starts its own workers on its
first launch; at exit the workers are stopped and joined, unless a launch is
still running (a daemon thread's), which the exit does not wait for.

On a platform the native pool does not support (not Linux on x86-64 or
aarch64), the global stays null and parallel loops run serially.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import os
import platform
import sys
import threading
import warnings
from collections.abc import Iterator

from .pool_ir import MAX_TASKS, RUNTIME_ERROR

#: The exception behind the last launch that returned RUNTIME_ERROR (see codegen/runtime/module.py).
last_error: BaseException | None = None

_pool: _NativePool | None = None
_pool_made = False  # the pool was compiled (or found unsupported): do not try again
_pool_lock = threading.Lock()
_local = threading.local()  # .count: this thread's codegen.num_threads, if any

__all__ = ["MAX_TASKS", "RUNTIME_ERROR", "env_threads", "install", "launcher_address",
           "num_threads", "use_threads", "worker_count", "worker_runs"]


def env_threads() -> int:
    """What ``TIRLITE_NUM_THREADS`` says now (default: the number of cores)."""
    text = os.environ.get("TIRLITE_NUM_THREADS", "").strip()
    if not text:
        return os.cpu_count() or 1
    try:
        count = int(text)
    except ValueError:
        raise ValueError(f"TIRLITE_NUM_THREADS must be a positive integer, got {text!r}")
    if count < 1:
        raise ValueError(f"TIRLITE_NUM_THREADS must be a positive integer, got {count}")
    return count


def num_threads() -> int:
    """Threads a parallel loop launched now from this thread may use.

    The innermost ``codegen.num_threads(n)`` of this thread, else the pool's
    default (``TIRLITE_NUM_THREADS`` when the pool was made, or now if not yet).
    """
    count = getattr(_local, "count", None)
    if count is not None:
        return count
    if _pool is not None and _pool.default > 0:
        return _pool.default
    return env_threads()


@contextlib.contextmanager
def use_threads(n: int) -> Iterator[None]:
    """Parallel loops of calls made inside the ``with``, on this thread, use ``n`` threads.

    This is ``codegen.num_threads``. Other threads keep their own count; the
    count applies to ``min(n, extent, 256)`` tasks per launch.

    Raises:
        TypeError: ``n`` is not an integer. ValueError: ``n`` < 1.
    """
    count = _check_count(n)
    pool = _get_pool()
    previous = getattr(_local, "count", None)
    _local.count = count
    if pool is not None:
        pool.set_thread_count(count)
    try:
        yield
    finally:
        _local.count = previous
        if pool is not None:
            pool.set_thread_count(previous or 0)


def _check_count(n: object) -> int:
    if isinstance(n, bool) or not hasattr(n, "__index__"):
        raise TypeError(f"codegen.num_threads: n must be an integer, got {type(n).__name__}")
    count = n.__index__()
    if count < 1:
        raise ValueError(f"codegen.num_threads: n must be a positive integer, got {count}")
    return count


def launcher_address() -> int | None:
    """The native launcher's address, for generated code's global (None: run serially)."""
    pool = _get_pool()
    return pool.launch_address if pool is not None else None


def install(global_address: int) -> None:
    """Store the launcher into a module's ``tirlite_parallel_launch`` global."""
    ctypes.c_void_p.from_address(global_address).value = launcher_address()


def worker_count() -> int:
    """Worker threads the pool has started (0 before the first parallel launch)."""
    return _pool.workers() if _pool is not None else 0


def worker_runs(task_id: int) -> int:
    """How many tasks worker ``task_id`` (1..255) has run: for tests and diagnostics."""
    if not 1 <= task_id < MAX_TASKS:
        raise ValueError(f"worker_runs: task_id must be in 1..{MAX_TASKS - 1}, got {task_id}")
    return _pool.worker_runs(task_id) if _pool is not None else 0


# ---------------------------------------------------------------- the pool object


class _NativePool:
    """The compiled pool (codegen/runtime/pool_ir.py): its JIT and entry points."""

    def __init__(self, arch: str):
        import llvmlite.binding as llvm

        from target.target import Target

        from .. import machine
        from . import pool_ir

        libc = ctypes.CDLL(None)
        addresses = {name: ctypes.cast(getattr(libc, name), ctypes.c_void_p).value
                     for name in pool_ir.LIBC}
        module = machine.parse(str(pool_ir.PoolModule(arch, addresses).emit()))
        target = Target("llvm")
        tm = machine.jit_target_machine(target, 2)
        # O2 here, not machine.optimize: that one counts as a kernel build (tests count it).
        passes = llvm.create_pass_builder(tm, llvm.create_pipeline_tuning_options(speed_level=2))
        passes.getModulePassManager().run(module, passes)
        self.engine = llvm.create_mcjit_compiler(module, tm)
        self.engine.finalize_object()
        self.launch_address = self._address("tirlite_pool_launch")
        i32, void = ctypes.c_int32, None
        self.init = self._function("tirlite_pool_init", i32, i32)
        self.set_thread_count = self._function("tirlite_pool_set_thread_count", i32, i32)
        self.workers = self._function("tirlite_pool_workers", i32)
        self.worker_runs = self._function("tirlite_pool_worker_runs", i32, i32)
        self.shutdown = self._function("tirlite_pool_shutdown", i32)
        self.after_fork = self._function("tirlite_pool_after_fork", void)
        self.default = 0

    def _address(self, name: str) -> int:
        return self.engine.get_function_address(name)

    def _function(self, name: str, restype, *argtypes):
        return ctypes.CFUNCTYPE(restype, *argtypes)(self._address(name))

    def start(self) -> bool:
        """Set the default count from the environment; False if the pool cannot work."""
        global last_error
        try:
            self.default = min(env_threads(), MAX_TASKS)
        except ValueError as err:
            last_error, self.default = err, 0  # every launch reports it
        return self.init(self.default) == 0


def _get_pool() -> _NativePool | None:
    """The process's pool, compiled on first use; None where it is not supported."""
    global _pool, _pool_made
    if _pool_made:
        return _pool
    with _pool_lock:
        if not _pool_made:
            _pool = _make_pool()
            _pool_made = True
    return _pool


def _make_pool() -> _NativePool | None:
    arch = platform.machine().lower()
    arch = {"amd64": "x86_64", "arm64": "aarch64"}.get(arch, arch)
    from .pool_ir import SYS_FUTEX

    if not sys.platform.startswith("linux") or arch not in SYS_FUTEX:
        return None
    try:
        pool = _NativePool(arch)
    except Exception as err:  # noqa: BLE001 (a pool that cannot be built must not stop builds)
        warnings.warn(f"tirlite: the native thread pool could not be built ({err}); "
                      "parallel loops run serially", RuntimeWarning, stacklevel=3)
        return None
    if not pool.start():
        return None  # no pthread key: run serially
    atexit.register(_shutdown)
    os.register_at_fork(after_in_child=_after_fork_in_child)
    return pool


def _shutdown() -> None:
    # Returns without joining when a launch (a daemon thread's) still owns the pool.
    if _pool is not None:
        _pool.shutdown()


def _after_fork_in_child() -> None:
    # The parent's workers do not exist here; its pool memory may be mid-launch.
    if _pool is not None:
        _pool.after_fork()
