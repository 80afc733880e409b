"""The native thread pool of parallel loops, written as LLVM IR through llvmlite.

Generated code launches a parallel loop with ``int32 launch(task, closure,
int64 extent)`` (codegen/llvm/parallel.py); each task is ``int32 task(task_id,
num_tasks, closure)`` and runs the ``task_id``-th contiguous chunk. This module
emits that launcher and the pool behind it; codegen/runtime/parallel.py compiles it
once per process and installs it into every loaded module.

Why a pool of our own, and why in LLVM IR:

- The previous pool was Python's ``concurrent.futures``: every launch went
  through ctypes and the GIL and cost 70-100 µs, more than a 512³ matmul
  gains from a second core. Here a launch never leaves native code.
- A system OpenMP runtime is not on a bare machine (``pip install`` must be
  enough), and libgomp and libomp differ in ABI and in how they behave after
  ``fork``; we would need the fallback anyway.
- C would need a compiler at install time; llvmlite is already there, and the
  pool is ~400 lines of IR built once (a few ms) on first use.

The protocol (one 64-byte cache line per shared structure, so the caller and
the workers do not invalidate each other's lines):

- *Ownership*: a launch takes the pool with a try-lock (``conf.lock``). When
  it is taken -- a launch from inside a task, or another Python thread's
  launch in flight -- the loop runs serially on the calling thread,
  ``task(0, 1, closure)``. Never waiting means never deadlocking, and a nested
  parallel loop running serially is what the tasks would do anyway.
- *Publish*: the owner writes the job (task, closure, task count), sets the
  join counter, then bumps the generation word of each worker it needs (worker
  ``i`` runs task ``i``: static chunking, the caller runs task 0). A worker's
  own generation word counts only its own launches, so it never wraps onto a
  value the worker is waiting to leave.
- *Wait*: a worker spins on its generation word (a few rounds with the CPU's
  pause hint, then yielding the core, as TVM's pool does, so a busy machine
  still runs the thread it waits for), then sleeps on it with a futex;
  ``sleeping`` tells the owner to wake it.
  The store/load pairs are sequentially consistent, so either the owner sees
  ``sleeping`` or the worker sees the new generation before it sleeps.
- *Join*: each worker decrements ``join.remaining``; the owner spins about as
  long as its own task took, then sleeps on it; the last worker wakes a
  sleeping owner.
- *Errors*: a task's non-zero code goes into its slot and the lowest failing
  task id into ``join.failed`` (an atomic min), so the launch returns the code
  of the lowest failing task: deterministic, as the old pool was.

Workers are created lazily by the first launch that needs them (a launch uses
``min(threads, extent)`` tasks; the pool keeps every worker created so far and
a launch of ``n`` tasks uses workers ``1..n-1``), with all signals blocked so
Python's signal handling stays on the threads it knows. ``shutdown`` joins
them; ``after_fork`` forgets them in a child, where they do not exist.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from llvmlite import ir

I32, I64 = ir.IntType(32), ir.IntType(64)
PTR = ir.PointerType()
VOID = ir.VoidType()

#: Tasks a launch can use (the caller and at most MAX_TASKS - 1 workers).
MAX_TASKS = 256
#: The return code of a launch when the thread count is invalid (see codegen/runtime/module.py).
RUNTIME_ERROR = -2
#: Rounds an idle worker spins before it sleeps (~0.5-1 ms when the machine is idle):
#: longer than the gap between back-to-back launches, short enough not to hog a core
#: the program needs for something else.
WORKER_SPIN = 2048
#: Spin rounds with the pause hint (~25-50 ns each) before the rounds yield the core
#: (see ``relax``). On a busy 2-core machine a long pause-only spin made a launch
#: cost 2-5x more (15 µs instead of 3-4 µs): the thread waited for was preempted.
PAUSE_ROUNDS = 8
#: Bounds of the rounds the owner spins at the join (see ``_join_rounds``).
JOIN_SPIN_MIN, JOIN_SPIN_MAX = 128, 4096
NO_TASK = 0xFFFFFFFF  # join.failed when no task failed (the identity of unsigned min)
FUTEX_WAIT_PRIVATE, FUTEX_WAKE_PRIVATE = 128, 129
SIG_SETMASK = 2  # Linux
SIGSET_BYTES = 128  # glibc's sigset_t
#: The futex system call number by architecture (Linux).
SYS_FUTEX = {"x86_64": 202, "aarch64": 98}

#: The libc functions the pool calls (called at their addresses in this process).
LIBC = {
    "pthread_create": ir.FunctionType(I32, [PTR, PTR, PTR, PTR]),
    "pthread_join": ir.FunctionType(I32, [I64, PTR]),
    "pthread_key_create": ir.FunctionType(I32, [PTR, PTR]),
    "pthread_getspecific": ir.FunctionType(PTR, [I32]),
    "pthread_setspecific": ir.FunctionType(I32, [I32, PTR]),
    "pthread_sigmask": ir.FunctionType(I32, [I32, PTR, PTR]),
    "sigfillset": ir.FunctionType(I32, [PTR]),
    "sched_yield": ir.FunctionType(I32, []),
    "syscall": ir.FunctionType(I64, [I64], var_arg=True),
}
TASK = ir.FunctionType(I32, [I32, I32, PTR])
TASK_PTR = TASK.as_pointer()  # prints as `ptr`; typed so llvmlite can call through it
WORKER = ir.FunctionType(PTR, [PTR])

# Per-worker slot, one cache line: GEN (written by the owner), SLEEPING and RC
# (by the worker), SEEN_INIT (the generation the worker starts from), RUNS
# (tasks it ran, for tests and diagnostics).
SLOT = ir.LiteralStructType([I32] * 5 + [ir.ArrayType(I32, 11)])
GEN, SLEEPING, RC, SEEN_INIT, RUNS = range(5)
# The job the owner publishes: task, closure, task count.
JOB = ir.LiteralStructType([PTR, PTR, I32])
# The join: tasks still running, whether the owner sleeps, the lowest failing task.
JOIN = ir.LiteralStructType([I32, I32, I32])
REMAINING, CALLER_SLEEPING, FAILED = range(3)
# Owner-side state: the try-lock, the default thread count, the pthread key of
# the per-thread count, the workers created, the stop flag.
CONF = ir.LiteralStructType([I32, I32, I32, I32, I32])
LOCK, DEFAULT, KEY, WORKERS, STOP = range(5)


def c32(value: int) -> ir.Constant:
    return ir.Constant(I32, value)


def c64(value: int) -> ir.Constant:
    return ir.Constant(I64, value)


class PoolModule:
    """Emits the pool: ``PoolModule(arch, libc_addresses).emit()`` -> ``ir.Module``."""

    def __init__(self, arch: str, libc: dict[str, int]):
        if arch not in SYS_FUTEX:
            raise ValueError(f"the native pool supports {sorted(SYS_FUTEX)}, not {arch!r}")
        self.arch, self.libc = arch, libc
        self.module = ir.Module("tirlite_pool")
        self.slots = self._global("tirlite_pool_slots", ir.ArrayType(SLOT, MAX_TASKS))
        self.threads = self._global("tirlite_pool_threads", ir.ArrayType(I64, MAX_TASKS))
        self.job = self._global("tirlite_pool_job", JOB)
        self.join = self._global("tirlite_pool_join", JOIN)
        self.conf = self._global("tirlite_pool_conf", CONF)
        self.b: ir.IRBuilder = None  # the builder of the function being emitted

    def _global(self, name: str, ty: ir.Type) -> ir.GlobalVariable:
        glob = ir.GlobalVariable(self.module, ty, name)
        glob.initializer = ir.Constant(ty, None)
        glob.linkage = "internal"
        glob.align = 64  # its own cache line(s)
        return glob

    def emit(self) -> ir.Module:
        self.futex_wait = self._futex_wait()
        self.futex_wake = self._futex_wake()
        self.wait_change = self._wait_change()
        self.worker = self._worker()
        self.ensure_workers = self._ensure_workers()
        self.run_pool = self._run_pool()
        self._launch()
        self._init()
        self._set_thread_count()
        self._workers()
        self._worker_runs()
        self._shutdown()
        self._after_fork()
        return self.module

    # ------------------------------------------------------------ helpers

    def _function(self, name: str, fnty: ir.FunctionType, export: bool = False) -> ir.Function:
        fn = ir.Function(self.module, fnty, name)
        fn.linkage = "external" if export else "internal"
        fn.attributes.add("nounwind")
        self.b = ir.IRBuilder(fn.append_basic_block("entry"))
        return fn

    def field(self, glob: ir.Value, k: int) -> ir.Value:
        """The address of field ``k`` of a struct global."""
        return self.b.gep(glob, [c32(0), c32(k)], inbounds=True)

    def slot(self, index: ir.Value, k: int) -> ir.Value:
        """The address of field ``k`` of worker ``index``'s slot."""
        return self.b.gep(self.slots, [c32(0), index, c32(k)], inbounds=True)

    def load(self, ptr: ir.Value, ty: ir.Type = I32, order: str = "seq_cst") -> ir.Value:
        return self.b.load_atomic(ptr, order, 4 if ty == I32 else 8, typ=ty)

    def store(self, value: ir.Value, ptr: ir.Value, order: str = "seq_cst") -> None:
        self.b.store_atomic(value, ptr, order, value.type.width // 8)

    def libc_call(self, name: str, args: list) -> ir.Value:
        fnty = LIBC[name]
        callee = self.b.inttoptr(c64(self.libc[name]), fnty.as_pointer())
        return self.b.call(callee, args)

    def pause(self) -> None:
        """The spin-wait hint: lets the sibling hyperthread run, saves power."""
        if self.arch == "x86_64":
            fn = self.module.globals.get("llvm.x86.sse2.pause") or ir.Function(
                self.module, ir.FunctionType(VOID, []), "llvm.x86.sse2.pause")
            self.b.call(fn, [])
        else:  # aarch64: `yield`
            fn = self.module.globals.get("llvm.aarch64.hint") or ir.Function(
                self.module, ir.FunctionType(VOID, [I32]), "llvm.aarch64.hint")
            self.b.call(fn, [c32(1)])

    def relax(self, k: ir.Value) -> None:
        """Round ``k`` of a spin-wait: the pause hint for the first PAUSE_ROUNDS rounds
        (a launch that follows at once is seen within ~100 ns), then ``sched_yield``:
        on a busy machine the thread we wait for may be queued behind us on this core."""
        b = self.b
        with b.if_else(b.icmp_unsigned("<", k, c32(PAUSE_ROUNDS))) as (early, late):
            with early:
                self.pause()
            with late:
                self.libc_call("sched_yield", [])

    def local(self, value: ir.Value) -> ir.Value:
        """A stack variable holding ``value`` (LLVM's mem2reg makes it a register)."""
        with self.b.goto_entry_block():
            var = self.b.alloca(value.type)
        self.b.store(value, var)
        return var

    @contextmanager
    def count(self, start: ir.Value, stop: ir.Value) -> Iterator[ir.Value]:
        """``for i in range(start, stop)``: the body is emitted inside the ``with``."""
        var = self.local(start)
        fn = self.b.function
        head, body, done = (fn.append_basic_block(n) for n in ("head", "body", "done"))
        self.b.branch(head)
        self.b.position_at_end(head)
        i = self.b.load(var)
        self.b.cbranch(self.b.icmp_signed("<", i, stop), body, done)
        self.b.position_at_end(body)
        yield i
        self.b.store(self.b.add(i, ir.Constant(i.type, 1)), var)
        self.b.branch(head)
        self.b.position_at_end(done)

    def try_lock(self) -> ir.Value:
        """Whether this thread took the pool (``conf.lock`` 0 -> 1)."""
        pair = self.b.cmpxchg(self.field(self.conf, LOCK), c32(0), c32(1), "acquire",
                              "monotonic")
        return self.b.extract_value(pair, 1)

    def unlock(self) -> None:
        self.store(c32(0), self.field(self.conf, LOCK), "release")

    # ------------------------------------------------------------ futex

    def _futex(self, name: str, op: int) -> ir.Function:
        fn = self._function(name, ir.FunctionType(VOID, [PTR, I32]))
        address, value = fn.args
        nr = c64(SYS_FUTEX[self.arch])
        # syscall(SYS_futex, addr, op, value, timeout = NULL): an interrupted or
        # spurious return is fine, every caller re-checks its condition.
        self.libc_call("syscall", [nr, address, c64(op), self.b.zext(value, I64),
                                   ir.Constant(PTR, None)])
        self.b.ret_void()
        return fn

    def _futex_wait(self) -> ir.Function:
        """``futex_wait(addr, value)``: sleep while ``*addr == value``."""
        return self._futex("tirlite_pool_futex_wait", FUTEX_WAIT_PRIVATE)

    def _futex_wake(self) -> ir.Function:
        """``futex_wake(addr, n)``: wake up to ``n`` threads sleeping on ``addr``."""
        return self._futex("tirlite_pool_futex_wake", FUTEX_WAKE_PRIVATE)

    # ------------------------------------------------------------ waiting

    def _spin_until_not(self, ptr: ir.Value, value: ir.Value) -> None:
        """Spin up to WORKER_SPIN rounds while ``*ptr == value`` (may return early)."""
        fn = self.b.function
        done = fn.append_basic_block("spun")
        with self.count(c32(0), c32(WORKER_SPIN)) as k:
            now = self.load(ptr, order="acquire")
            still = self.b.icmp_unsigned("==", now, value)
            go_on = fn.append_basic_block("spin")
            self.b.cbranch(still, go_on, done)
            self.b.position_at_end(go_on)
            self.relax(k)
        self.b.branch(done)
        self.b.position_at_end(done)

    def _sleep_until_not(self, ptr: ir.Value, flag: ir.Value,
                         value: ir.Value | None = None) -> ir.Value:
        """Sleep on ``ptr`` until it differs from ``value`` (or from 0 if None: until
        it is 0); ``flag`` is 1 while sleeping. Returns the value seen."""
        fn = self.b.function
        head, sleep, done = (fn.append_basic_block(n) for n in ("check", "sleep", "awake"))
        self.b.branch(head)
        self.b.position_at_end(head)
        self.store(c32(1), flag)
        now = self.load(ptr)
        if value is None:
            self.b.cbranch(self.b.icmp_unsigned("==", now, c32(0)), done, sleep)
        else:
            self.b.cbranch(self.b.icmp_unsigned("!=", now, value), done, sleep)
        self.b.position_at_end(sleep)
        self.b.call(self.futex_wait, [ptr, now])
        self.b.branch(head)
        self.b.position_at_end(done)
        self.store(c32(0), flag)
        return now

    def _wait_change(self) -> ir.Function:
        """``wait_change(i, seen)``: the generation of worker ``i`` once it is not ``seen``."""
        fn = self._function("tirlite_pool_wait_change", ir.FunctionType(I32, [I32, I32]))
        index, seen = fn.args
        gen = self.slot(index, GEN)
        self._spin_until_not(gen, seen)
        self.b.ret(self._sleep_until_not(gen, self.slot(index, SLEEPING), seen))
        return fn

    def _wait_join(self, rounds: ir.Value) -> None:
        """The owner waits until every worker task of the launch has finished: spins
        ``rounds`` rounds, then sleeps."""
        remaining = self.field(self.join, REMAINING)
        fn = self.b.function
        done = fn.append_basic_block("joined")
        with self.count(c32(0), rounds) as k:
            zero = self.b.icmp_unsigned("==", self.load(remaining, order="acquire"), c32(0))
            go_on = fn.append_basic_block("spin")
            self.b.cbranch(zero, done, go_on)
            self.b.position_at_end(go_on)
            self.relax(k)
        self._sleep_until_not(remaining, self.field(self.join, CALLER_SLEEPING))
        self.b.branch(done)
        self.b.position_at_end(done)

    def clock(self) -> ir.Value:
        """A cycle counter (x86's TSC); 0 where reading one may trap (aarch64 user mode)."""
        if self.arch != "x86_64":
            return c64(0)
        fn = self.module.globals.get("llvm.readcyclecounter") or ir.Function(
            self.module, ir.FunctionType(I64, []), "llvm.readcyclecounter")
        return self.b.call(fn, [])

    def _join_rounds(self, ticks: ir.Value) -> ir.Value:
        """How long the owner spins for the workers: about as long as its own task took
        (the workers' tasks are as long, static chunks), within [JOIN_SPIN_MIN,
        JOIN_SPIN_MAX]. A worker still running after that is likely preempted (a busy
        machine): sleeping hands it this core sooner than spinning would."""
        b = self.b
        rounds = b.lshr(ticks, c64(6))  # a pause is ~40-140 cycles
        rounds = b.select(b.icmp_unsigned("<", rounds, c64(JOIN_SPIN_MIN)), c64(JOIN_SPIN_MIN),
                          rounds)
        rounds = b.select(b.icmp_unsigned(">", rounds, c64(JOIN_SPIN_MAX)), c64(JOIN_SPIN_MAX),
                          rounds)
        return b.trunc(rounds, I32)

    # ------------------------------------------------------------ the worker

    def _worker(self) -> ir.Function:
        """A worker thread: wait for a launch, run task ``i``, report, repeat."""
        fn = self._function("tirlite_pool_worker", WORKER)
        index = self.b.trunc(self.b.ptrtoint(fn.args[0], I64), I32)
        seen = self.local(self.load(self.slot(index, SEEN_INIT)))
        loop, run, stop = (fn.append_basic_block(n) for n in ("loop", "run", "stop"))
        self.b.branch(loop)
        self.b.position_at_end(loop)
        gen = self.b.call(self.wait_change, [index, self.b.load(seen)])
        self.b.store(gen, seen)
        stopping = self.load(self.field(self.conf, STOP), order="acquire")
        self.b.cbranch(self.b.icmp_unsigned("!=", stopping, c32(0)), stop, run)
        self.b.position_at_end(run)
        self._run_task(index)
        self.b.branch(loop)
        self.b.position_at_end(stop)
        self.b.ret(ir.Constant(PTR, None))
        return fn

    def _run_task(self, index: ir.Value) -> None:
        b = self.b
        task = b.load(self.field(self.job, 0), typ=TASK.as_pointer())
        closure = b.load(self.field(self.job, 1), typ=PTR)
        tasks = b.load(self.field(self.job, 2), typ=I32)
        code = b.call(task, [index, tasks, closure])
        with self.b.if_then(b.icmp_signed("!=", code, c32(0))):
            self.store(code, self.slot(index, RC), "monotonic")
            b.atomic_rmw("umin", self.field(self.join, FAILED), index, "monotonic")
        runs = self.slot(index, RUNS)
        self.store(b.add(self.load(runs, order="monotonic"), c32(1)), runs, "monotonic")
        # The release half publishes RC, FAILED and the task's stores to the owner.
        old = b.atomic_rmw("sub", self.field(self.join, REMAINING), c32(1), "seq_cst")
        with self.b.if_then(b.icmp_unsigned("==", old, c32(1))):
            sleeping = self.load(self.field(self.join, CALLER_SLEEPING))
            with self.b.if_then(b.icmp_unsigned("!=", sleeping, c32(0))):
                b.call(self.futex_wake, [self.field(self.join, REMAINING), c32(1)])

    def _ensure_workers(self) -> ir.Function:
        """``ensure_workers(n)``: create workers up to ``n`` (task ids 1..n); returns
        how many exist (fewer if the system refuses a thread)."""
        fn = self._function("tirlite_pool_ensure_workers", ir.FunctionType(I32, [I32]))
        b, want = self.b, fn.args[0]
        count = self.field(self.conf, WORKERS)
        have = self.local(b.load(count))
        enough = b.icmp_signed(">=", b.load(have), want)
        with b.if_then(enough):
            b.ret(b.load(have))
        # Workers inherit the creator's signal mask: block everything in them.
        all_signals = self.local(ir.Constant(ir.ArrayType(ir.IntType(8), SIGSET_BYTES), None))
        old = self.local(ir.Constant(ir.ArrayType(ir.IntType(8), SIGSET_BYTES), None))
        self.libc_call("sigfillset", [all_signals])
        self.libc_call("pthread_sigmask", [c32(SIG_SETMASK), all_signals, old])
        failed = fn.append_basic_block("failed")
        after = fn.append_basic_block("created")
        with self.count(b.add(b.load(have), c32(1)), b.add(want, c32(1))) as i:
            self.store(self.load(self.slot(i, GEN)), self.slot(i, SEEN_INIT))
            thread = b.gep(self.threads, [c32(0), i], inbounds=True)
            arg = b.inttoptr(b.zext(i, I64), PTR)
            rc = self.libc_call("pthread_create", [thread, ir.Constant(PTR, None),
                                                   self.worker, arg])
            ok = fn.append_basic_block("ok")
            b.cbranch(b.icmp_signed("!=", rc, c32(0)), failed, ok)
            b.position_at_end(ok)
            b.store(i, have)
        b.branch(after)
        b.position_at_end(failed)
        b.branch(after)
        b.position_at_end(after)
        self.libc_call("pthread_sigmask", [c32(SIG_SETMASK), old, ir.Constant(PTR, None)])
        b.store(b.load(have), count)
        b.ret(b.load(have))
        return fn

    # ------------------------------------------------------------ the launch

    def _run_pool(self) -> ir.Function:
        """``run_pool(task, closure, n)``: tasks 1..n-1 on workers, 0 here, then join."""
        fn = self._function("tirlite_pool_run", ir.FunctionType(I32, [TASK_PTR, PTR, I32]))
        b = self.b
        task, closure, n = fn.args
        b.store(task, self.field(self.job, 0))
        b.store(closure, self.field(self.job, 1))
        b.store(n, self.field(self.job, 2))
        self.store(c32(NO_TASK), self.field(self.join, FAILED), "monotonic")
        self.store(b.sub(n, c32(1)), self.field(self.join, REMAINING), "monotonic")
        with self.count(c32(1), n) as i:
            gen = self.slot(i, GEN)
            self.store(b.add(self.load(gen, order="monotonic"), c32(1)), gen)
            with self.b.if_then(b.icmp_unsigned("!=", self.load(self.slot(i, SLEEPING)), c32(0))):
                b.call(self.futex_wake, [gen, c32(1)])
        start = self.clock()
        code = b.call(task, [c32(0), n, closure])
        self._wait_join(self._join_rounds(b.sub(self.clock(), start)))
        with self.b.if_then(b.icmp_signed("!=", code, c32(0))):
            b.ret(code)  # task 0 is the lowest failing task
        failed = self.load(self.field(self.join, FAILED), order="monotonic")
        with self.b.if_then(b.icmp_unsigned("==", failed, c32(NO_TASK))):
            b.ret(c32(0))
        b.ret(self.load(self.slot(failed, RC), order="monotonic"))
        return fn

    def _requested(self) -> ir.Value:
        """This thread's count (``codegen.num_threads``), else the default; <= MAX_TASKS."""
        b = self.b
        key = b.load(self.field(self.conf, KEY), typ=I32)
        mine = b.trunc(b.ptrtoint(self.libc_call("pthread_getspecific", [key]), I64), I32)
        default = self.load(self.field(self.conf, DEFAULT), order="monotonic")
        n = b.select(b.icmp_signed("!=", mine, c32(0)), mine, default)
        return b.select(b.icmp_signed(">", n, c32(MAX_TASKS)), c32(MAX_TASKS), n)

    def _launch(self) -> None:
        fn = self._function("tirlite_pool_launch", ir.FunctionType(I32, [TASK_PTR, PTR, I64]),
                            export=True)
        b = self.b
        task, closure, extent = fn.args
        serial = fn.append_basic_block("serial")
        n = self._requested()
        with self.b.if_then(b.icmp_signed("<", n, c32(1))):
            b.ret(c32(RUNTIME_ERROR))  # TIRLITE_NUM_THREADS was invalid (see parallel.py)
        n = b.select(b.icmp_signed("<", extent, b.sext(n, I64)), b.trunc(extent, I32), n)
        pool = fn.append_basic_block("pool")
        b.cbranch(b.icmp_signed(">", n, c32(1)), pool, serial)
        b.position_at_end(pool)
        owner = fn.append_basic_block("owner")
        b.cbranch(self.try_lock(), owner, serial)
        b.position_at_end(owner)
        have = b.call(self.ensure_workers, [b.sub(n, c32(1))])
        n = b.select(b.icmp_signed(">", n, b.add(have, c32(1))), b.add(have, c32(1)), n)
        with self.b.if_then(b.icmp_signed("<=", n, c32(1))):
            self.unlock()
            b.branch(serial)
        code = b.call(self.run_pool, [task, closure, n])
        self.unlock()
        b.ret(code)
        b.position_at_end(serial)
        b.ret(b.call(task, [c32(0), c32(1), closure]))

    # ------------------------------------------------------------ control from Python

    def _init(self) -> None:
        """``init(default)``: create the per-thread key, set the default; 0 on success."""
        fn = self._function("tirlite_pool_init", ir.FunctionType(I32, [I32]), export=True)
        b = self.b
        self.store(fn.args[0], self.field(self.conf, DEFAULT))
        key = self.field(self.conf, KEY)
        b.ret(self.libc_call("pthread_key_create", [key, ir.Constant(PTR, None)]))

    def _set_thread_count(self) -> None:
        """``set_thread_count(n)``: this thread's count (0: the default); returns the old."""
        fn = self._function("tirlite_pool_set_thread_count", ir.FunctionType(I32, [I32]),
                            export=True)
        b = self.b
        key = b.load(self.field(self.conf, KEY), typ=I32)
        old = b.trunc(b.ptrtoint(self.libc_call("pthread_getspecific", [key]), I64), I32)
        self.libc_call("pthread_setspecific", [key, b.inttoptr(b.zext(fn.args[0], I64), PTR)])
        b.ret(old)

    def _workers(self) -> None:
        self._function("tirlite_pool_workers", ir.FunctionType(I32, []), export=True)
        self.b.ret(self.load(self.field(self.conf, WORKERS), order="monotonic"))

    def _worker_runs(self) -> None:
        """``worker_runs(i)``: how many tasks worker ``i`` has run (for tests)."""
        fn = self._function("tirlite_pool_worker_runs", ir.FunctionType(I32, [I32]),
                            export=True)
        self.b.ret(self.load(self.slot(fn.args[0], RUNS), order="monotonic"))

    def _shutdown(self) -> None:
        """``shutdown()``: stop and join the workers; 1 (and nothing done) if a launch
        owns the pool. The pool stays locked: later launches run serially."""
        self._function("tirlite_pool_shutdown", ir.FunctionType(I32, []), export=True)
        b = self.b
        with self.b.if_then(b.not_(self.try_lock())):
            b.ret(c32(1))
        self.store(c32(1), self.field(self.conf, STOP))
        workers = b.load(self.field(self.conf, WORKERS))
        with self.count(c32(1), b.add(workers, c32(1))) as i:
            gen = self.slot(i, GEN)
            self.store(b.add(self.load(gen), c32(1)), gen)
            b.call(self.futex_wake, [gen, c32(1)])
        with self.count(c32(1), b.add(workers, c32(1))) as i:
            thread = b.gep(self.threads, [c32(0), i], inbounds=True)
            self.libc_call("pthread_join", [b.load(thread, typ=I64), ir.Constant(PTR, None)])
        b.store(c32(0), self.field(self.conf, WORKERS))
        b.ret(c32(0))

    def _after_fork(self) -> None:
        """``after_fork()`` in a child: no workers exist, no launch is running."""
        self._function("tirlite_pool_after_fork", ir.FunctionType(VOID, []), export=True)
        b = self.b
        for k in (LOCK, WORKERS, STOP):
            self.store(c32(0), self.field(self.conf, k))
        for k in (REMAINING, CALLER_SLEEPING):
            self.store(c32(0), self.field(self.join, k))
        with self.count(c32(0), c32(MAX_TASKS)) as i:
            self.store(c32(0), self.slot(i, SLEEPING))
        b.ret_void()
