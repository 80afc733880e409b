"""Parallel loops: ``ForKind.PARALLEL`` outlined into a task function.

The loop body becomes ``i32 @<symbol>_parallel<k>(i32 task, i32 num_tasks,
ptr closure)``, which runs the ``task``-th contiguous chunk of the
iterations; the values the body uses from outside travel in a closure
struct on the caller's stack. The caller then runs::

    %launch = load ptr, ptr @tirlite_parallel_launch
    if %launch == null:  %rc = call @task(0, 1, %closure)      ; no runtime: serial
    else:                %rc = call %launch(@task, %closure, i64 extent)
    if %rc != 0: ret %rc

``@tirlite_parallel_launch`` is a global the runtime (codegen/runtime/parallel.py)
fills with its thread-pool launcher after loading the code. A parallel loop
inside another is run serially by its task.

Schedules (the loop annotation ``"parallel_schedule"``): ``"static"``, the
default, gives task ``t`` the ``t``-th of ``num_tasks`` contiguous chunks;
``"dynamic"`` adds a counter to the closure and every task takes chunks of
``ceil(extent / (num_tasks * DYNAMIC_CHUNKS_PER_TASK))`` iterations from it with
an atomic fetch-add until none is left, for iterations of uneven cost. When
iterations of several chunks fail an assert, static scheduling reports the
first one's message (the lowest failing task's); dynamic reports one of them.
"""

from __future__ import annotations

from llvmlite import ir

from tir.buffer import Buffer
from tir.expr import Var
from tir.functor import post_order_visit

from ..abi import LAUNCHER_SYMBOL
from ..ir_types import I32, I64, PTR, Builder, int_constant

TASK_TYPE = ir.FunctionType(I32, [I32, I32, PTR])
LAUNCHER_TYPE = ir.FunctionType(I32, [PTR, PTR, I64])
#: The loop annotation choosing how iterations are shared out, and its values.
SCHEDULE_KEY, SCHEDULES = "parallel_schedule", ("static", "dynamic")
#: Chunks per task of a dynamic schedule: small enough to even out uneven
#: iterations, large enough that the shared counter is touched rarely.
DYNAMIC_CHUNKS_PER_TASK = 8


class ParallelCodegen:
    """Mixin of ``CodeGenLLVM``: outlining and launching parallel loops."""

    builder: ir.IRBuilder
    module: ir.Module

    def parallel_for(self, op) -> None:
        dynamic = _schedule(op) == "dynamic"
        captured = self._captured(op)
        values = [self.lookup(v) for v in captured]
        if dynamic:  # the shared chunk counter, last in the closure
            values.append(int_constant(I64, 0))
        struct_ty = ir.LiteralStructType([v.type for v in values])
        closure = self.entry_alloca(struct_ty, 1, align=8)
        for k, value in enumerate(values):
            self.builder.store(value, _field(self.builder, closure, struct_ty, k))
        task = self._outline(op, captured, struct_ty, dynamic)
        code = self._launch(task, closure, self._resize_int(self.visit_expr(op.extent), I64))
        failed = self.builder.icmp_signed("!=", code, int_constant(I32, 0))
        with self.builder.if_then(failed, likely=False):
            self.builder.ret(code)

    def _launch(self, task, closure, extent):
        # A pointer typed as pointing to the launcher's type, so llvmlite can call through
        # it; it prints as plain `ptr` (the IR layer uses opaque pointers).
        launch = self.builder.load(self._launcher_global(), typ=LAUNCHER_TYPE.as_pointer())
        is_null = self.builder.icmp_unsigned("==", launch, ir.Constant(launch.type, None))
        with self.builder.if_else(is_null) as (serial, threaded):
            with serial:
                one = int_constant(I32, 1)
                serial_code = self.builder.call(task, [int_constant(I32, 0), one, closure])
                serial_block = self.builder.block
            with threaded:
                threaded_code = self.builder.call(launch, [task, closure, extent])
                threaded_block = self.builder.block
        code = self.builder.phi(I32)
        code.add_incoming(serial_code, serial_block)
        code.add_incoming(threaded_code, threaded_block)
        return code

    def _launcher_global(self) -> ir.GlobalVariable:
        glob = self.module.globals.get(LAUNCHER_SYMBOL)
        if glob is None:
            glob = ir.GlobalVariable(self.module, PTR, LAUNCHER_SYMBOL)
            glob.initializer = ir.Constant(PTR, None)
        return glob


    def _captured(self, op) -> list:
        """The outer variables ``op`` uses (including its buffers' data and shape vars)."""
        found: dict[int, Var] = {}
        buffers: set[int] = set()  # a buffer's vars are noted at its first access only

        def note(node) -> None:
            if isinstance(node, Var) and id(node) in self.vars:
                found.setdefault(id(node), node)
            buffer = getattr(node, "buffer", None)
            if isinstance(buffer, Buffer) and id(buffer) not in buffers:
                buffers.add(id(buffer))
                for e in (buffer.data, *buffer.shape, *buffer.strides, buffer.elem_offset):
                    post_order_visit(e, note)

        post_order_visit(op, note)
        return list(found.values())

    # ------------------------------------------------------------ the task function

    def _outline(self, op, captured: list, struct_ty, dynamic: bool) -> ir.Function:
        count = sum(1 for g in self.module.globals if g.startswith(self.symbol + "_parallel"))
        name = f"{self.symbol}_parallel{count}"
        body = self._outline_body(op, captured, name + "_body", dynamic)
        task = ir.Function(self.module, TASK_TYPE, name)
        task.linkage = "internal"
        task.attributes.add("nounwind")
        task.attributes.add("noinline")  # the serial fallback call need not copy the loop
        self.add_target_attributes(task)
        builder = Builder(task.append_basic_block("entry"))
        task_id, num_tasks, closure = task.args
        values = [builder.load(_field(builder, closure, struct_ty, k), typ=ty)
                  for k, ty in enumerate(struct_ty.elements[:len(captured)])]
        if dynamic:
            values.append(_field(builder, closure, struct_ty, len(captured)))
        builder.ret(builder.call(body, [task_id, num_tasks, *values]))
        return task

    # The loop chunk is a function of its own, taking the captured values as
    # arguments, so buffer pointers can be `noalias` again (values loaded from
    # the closure would not be); LLVM inlines it into the task function.
    def _outline_body(self, op, captured: list, name: str, dynamic: bool) -> ir.Function:
        arg_types = [I32, I32] + [self.lookup(v).type for v in captured]
        arg_types += [I64.as_pointer()] if dynamic else []
        fn = ir.Function(self.module, ir.FunctionType(I32, arg_types), name)
        fn.linkage = "internal"
        fn.attributes.add("nounwind")
        fn.attributes.add("alwaysinline")
        self.add_target_attributes(fn)
        saved = (self.entry, self.builder, self.vars, self.aligns, self.noalias_vars,
                 self.in_parallel)
        self.vars, self.aligns, self.noalias_vars = {}, {}, set()
        self.in_parallel = True
        self.begin_function(fn)
        for var, arg in zip(captured, fn.args[2:]):
            arg.name = var.name
            self.vars[id(var)] = arg
            if id(var) in saved[3]:
                self.aligns[id(var)] = saved[3][id(var)]
            if id(var) in saved[4]:
                arg.add_attribute("noalias")
                self.noalias_vars.add(id(var))
        if dynamic:
            self._run_dynamic(op, fn.args[-1], fn.args[1])
        else:
            self._run_chunk(op, fn.args[0], fn.args[1])
        self.builder.ret(int_constant(I32, 0))
        self.end_function()
        (self.entry, self.builder, self.vars, self.aligns, self.noalias_vars,
         self.in_parallel) = saved
        return fn

    def _resize_int(self, value, ty):
        """A signed integer ``value`` sign-extended or truncated to ``ty``."""
        if value.type.width == ty.width:
            return value
        if value.type.width < ty.width:
            return self.builder.sext(value, ty)
        return self.builder.trunc(value, ty)

    # chunk = ceil(extent / num_tasks); this task runs
    # [min + task * chunk, min(min + extent, min + (task + 1) * chunk))
    def _run_chunk(self, op, task_id, num_tasks) -> None:
        b = self.builder
        begin, extent = self.visit_expr(op.min), self.visit_expr(op.extent)
        ty = extent.type
        tasks, task = self._resize_int(num_tasks, ty), self._resize_int(task_id, ty)
        chunk = b.sdiv(b.sub(b.add(extent, tasks), int_constant(ty, 1)), tasks)
        lo = b.add(begin, b.mul(task, chunk))
        end = b.add(begin, extent)
        hi_raw = b.add(lo, chunk)
        hi = b.select(b.icmp_signed("<", hi_raw, end), hi_raw, end)
        self.emit_loop(op.loop_var, lo, hi, lambda: self.visit_stmt(op.body))


    # chunk = max(1, ceil(extent / (num_tasks * DYNAMIC_CHUNKS_PER_TASK))); a task
    # repeats: start = fetch_add(counter, chunk); stop when start >= extent; else run
    # [min + start, min(min + start + chunk, min + extent))
    def _run_dynamic(self, op, counter, num_tasks) -> None:
        b = self.builder
        begin, extent = self.visit_expr(op.min), self.visit_expr(op.extent)
        ty, one = extent.type, int_constant(extent.type, 1)
        parts = b.mul(self._resize_int(num_tasks, ty), int_constant(ty, DYNAMIC_CHUNKS_PER_TASK))
        chunk = b.sdiv(b.sub(b.add(extent, parts), one), parts)
        chunk = b.select(b.icmp_signed("<", chunk, one), one, chunk)
        head, grab, done = (b.function.append_basic_block(n)
                            for n in ("dyn_head", "dyn_chunk", "dyn_done"))
        b.branch(head)
        b.position_at_end(head)
        start = b.atomic_rmw("add", counter, self._resize_int(chunk, I64), "monotonic")
        # compared in 64 bits: the counter passes the extent by up to num_tasks chunks
        b.cbranch(b.icmp_signed("<", start, self._resize_int(extent, I64)), grab, done)
        b.position_at_end(grab)
        lo = b.add(begin, self._resize_int(start, ty))
        end = b.add(begin, extent)
        hi_raw = b.add(lo, chunk)
        hi = b.select(b.icmp_signed("<", hi_raw, end), hi_raw, end)
        self.emit_loop(op.loop_var, lo, hi, lambda: self.visit_stmt(op.body))
        b.branch(head)
        b.position_at_end(done)


def _schedule(op) -> str:
    """The loop's ``parallel_schedule`` annotation ("static" when absent)."""
    value = (op.annotations or {}).get(SCHEDULE_KEY, "static")
    if value not in SCHEDULES:
        raise ValueError(f"parallel loop {op.loop_var.name}: annotation {SCHEDULE_KEY!r} must "
                         f"be one of {SCHEDULES}, got {value!r}")
    return value


def _field(builder, closure, struct_ty, k: int):
    """The address of field ``k`` of the closure struct."""
    zero = int_constant(I32, 0)
    return builder.gep(closure, [zero, int_constant(I32, k)], inbounds=True,
                       source_etype=struct_ty)
