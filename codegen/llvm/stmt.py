"""Statement emitters of ``CodeGenLLVM``: sequences, lets, branches, loops, asserts.

A loop is emitted in rotated form, which LLVM's loop passes expect:

    pre:    br (begin < end), body, exit
    body:   %i = phi [begin, pre], [%next, latch]
            ...
    latch:  %next = add nsw %i, 1 ; br (%next < end), body, exit   !llvm.loop
    exit:
"""

from __future__ import annotations

from llvmlite import ir

from tir.expr import IntImm
from tir.stmt import ForKind

from ..ir_types import I1, I32, int_constant
from .planned_access import keep_rolled

#: Loop metadata for loops the TIR passes left to LLVM.
_LOOP_HINTS = {
    ForKind.UNROLLED: ("llvm.loop.unroll.full", None),
    ForKind.VECTORIZED: ("llvm.loop.vectorize.enable", True),
}

#: The loop annotation that, when false, keeps LLVM from unrolling the loop.
UNROLL_ANNOTATION = "codegen.llvm.unroll"
_NO_UNROLL = ("llvm.loop.unroll.disable", None)


class StmtCodegen:
    """Mixin of ``CodeGenLLVM``: one ``visit_*`` per statement node."""

    builder: ir.IRBuilder
    in_parallel: bool

    def visit_seq_stmt(self, op):
        for stmt in op.seq:
            self.visit_stmt(stmt)

    def visit_evaluate(self, op):
        if not isinstance(op.value, IntImm):
            self.visit_expr(op.value)

    def visit_let_stmt(self, op):
        with self.bound(op.var, self.visit_expr(op.value)):
            self.visit_stmt(op.body)

    def visit_attr_stmt(self, op):
        self.visit_stmt(op.body)

    def visit_assert_stmt(self, op):
        cond = self.visit_expr(op.condition)
        code = self.error_code(getattr(op.message, "value", str(op.message)))
        with self.builder.if_then(self.builder.not_(cond), likely=False):
            self.builder.ret(int_constant(I32, code))
        self.visit_stmt(op.body)

    def visit_if_then_else(self, op):
        cond = self.visit_expr(op.condition)
        if op.else_case is None:
            with self.builder.if_then(cond):
                self.visit_stmt(op.then_case)
            return
        with self.builder.if_else(cond) as (then, otherwise):
            with then:
                self.visit_stmt(op.then_case)
            with otherwise:
                self.visit_stmt(op.else_case)

    def visit_while(self, op):
        func = self.builder.function
        head, body, done = (func.append_basic_block(n) for n in ("while", "while_body", "done"))
        self.builder.branch(head)
        self.builder.position_at_end(head)
        self.builder.cbranch(self.visit_expr(op.condition), body, done)
        self.builder.position_at_end(body)
        self.visit_stmt(op.body)
        self.builder.branch(head)
        self.builder.position_at_end(done)

    def visit_for(self, op):
        if op.kind == ForKind.PARALLEL and not self.in_parallel:
            self.parallel_for(op)
            return
        begin = self.visit_expr(op.min)
        end = self.builder.add(begin, self.visit_expr(op.extent))
        rolled = op.kind == ForKind.SERIAL and not op.annotations.get(UNROLL_ANNOTATION, True)
        self.emit_loop(op.loop_var, begin, end, lambda: self.visit_stmt(op.body), op.kind,
                       rolled)

    def emit_loop(self, var, begin, end, emit_body, kind=ForKind.SERIAL,
                  rolled: bool = False) -> None:
        """``for var in [begin, end): emit_body()`` in rotated form (``rolled``: LLVM may
        not unroll it)."""
        func = self.builder.function
        body, exit_ = func.append_basic_block("for_body"), func.append_basic_block("for_end")
        pre = self.builder.block
        self.builder.cbranch(self.builder.icmp_signed("<", begin, end), body, exit_)
        self.builder.position_at_end(body)
        index = self.builder.phi(begin.type, name=var.name)
        index.add_incoming(begin, pre)
        loops, shuffled = self.loops_emitted, self.shuffled_loads
        with self.bound(var, index):
            emit_body()
        innermost = self.loops_emitted == loops
        self.loops_emitted += 1
        nsw = ("nsw",) if begin.type.width >= 32 else ()  # int8 loops may end at 127
        step = self.builder.add(index, int_constant(begin.type, 1), flags=nsw)
        index.add_incoming(step, self.builder.block)
        back = self.builder.cbranch(self.builder.icmp_signed("<", step, end), body, exit_)
        hint = _NO_UNROLL if rolled else _LOOP_HINTS.get(kind)
        if hint is None and innermost and self.shuffled_loads > shuffled \
                and keep_rolled(self.target):
            hint = _NO_UNROLL
        if hint is not None:
            back.set_metadata("llvm.loop", self.loop_metadata(*hint))
        self.builder.position_at_end(exit_)

    def loop_metadata(self, key: str, value):
        """A self-referencing ``llvm.loop`` node carrying ``!{key[, value]}``."""
        operands = [ir.MetaDataString(self.module, key)]
        if value is not None:
            operands.append(ir.Constant(I1, int(value)))
        hint = self.module.add_metadata(operands)
        # A fresh node per loop (add_metadata would share equal ones), naming itself first.
        loop_id = ir.values.MDValue(self.module, [], name=str(len(self.module.metadata)))
        loop_id.operands = (loop_id, hint)
        return loop_id
