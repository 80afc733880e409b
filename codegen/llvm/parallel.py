"""Parallel loops: ``ForKind.PARALLEL`` outlined into a task function.

The loop body becomes ``i32 @<symbol>_parallel<k>(i32 task, i32 num_tasks,
ptr closure)``, which runs the ``task``-th contiguous chunk of the
iterations; the values the body uses from outside travel in a closure
struct on the caller's stack. The caller then runs::

    %launch = load ptr, ptr @tirlite_parallel_launch
    if %launch == null:  %rc = call @task(0, 1, %closure)      ; no runtime: serial
    else:                %rc = call %launch(@task, %closure, i64 extent)
    if %rc != 0: ret %rc

``@tirlite_parallel_launch`` is a global the runtime (codegen/parallel.py)
fills with its thread-pool launcher after loading the code. A parallel loop
inside another is run serially by its task.
"""

from __future__ import annotations

from llvmlite import ir

from tir.buffer import Buffer
from tir.expr import Var
from tir.functor import post_order_visit

from .types import I32, I64, PTR, Builder, int_constant

#: The global holding the runtime's launcher (``int launch(task_fn, closure, int64 extent)``).
LAUNCHER_SYMBOL = "tirlite_parallel_launch"
TASK_TYPE = ir.FunctionType(I32, [I32, I32, PTR])
LAUNCHER_TYPE = ir.FunctionType(I32, [PTR, PTR, I64])


class ParallelCodegen:
    """Mixin of ``CodeGenLLVM``: outlining and launching parallel loops."""

    builder: ir.IRBuilder
    module: ir.Module

    def parallel_for(self, op) -> None:
        captured = self._captured(op)
        values = [self.lookup(v) for v in captured]
        struct_ty = ir.LiteralStructType([v.type for v in values])
        closure = self.entry_alloca(struct_ty, 1, align=8)
        for k, value in enumerate(values):
            self.builder.store(value, _field(self.builder, closure, struct_ty, k))
        task = self._outline(op, captured, struct_ty)
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

        def note(node) -> None:
            if isinstance(node, Var) and id(node) in self.vars:
                found.setdefault(id(node), node)
            buffer = getattr(node, "buffer", None)
            if isinstance(buffer, Buffer):
                for e in (buffer.data, *buffer.shape, *buffer.strides, buffer.elem_offset):
                    post_order_visit(e, note)

        post_order_visit(op, note)
        return list(found.values())

    # ------------------------------------------------------------ the task function

    def _outline(self, op, captured: list, struct_ty) -> ir.Function:
        count = sum(1 for g in self.module.globals if g.startswith(self.symbol + "_parallel"))
        name = f"{self.symbol}_parallel{count}"
        body = self._outline_body(op, captured, name + "_body")
        task = ir.Function(self.module, TASK_TYPE, name)
        task.linkage = "internal"
        task.attributes.add("nounwind")
        task.attributes.add("noinline")  # the serial fallback call need not copy the loop
        self.add_target_attributes(task)
        builder = Builder(task.append_basic_block("entry"))
        task_id, num_tasks, closure = task.args
        values = [builder.load(_field(builder, closure, struct_ty, k), typ=ty)
                  for k, ty in enumerate(struct_ty.elements)]
        builder.ret(builder.call(body, [task_id, num_tasks, *values]))
        return task

    # The loop chunk is a function of its own, taking the captured values as
    # arguments, so buffer pointers can be `noalias` again (values loaded from
    # the closure would not be); LLVM inlines it into the task function.
    def _outline_body(self, op, captured: list, name: str) -> ir.Function:
        arg_types = [I32, I32] + [self.lookup(v).type for v in captured]
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


def _field(builder, closure, struct_ty, k: int):
    """The address of field ``k`` of the closure struct."""
    zero = int_constant(I32, 0)
    return builder.gep(closure, [zero, int_constant(I32, k)], inbounds=True,
                       source_etype=struct_ty)
