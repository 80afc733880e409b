"""``tir.Schedule``: TVM's scheduling API over a function built from blocks.

A schedule holds the function being rewritten and hands out handles:
``BlockRV`` (a block, by name) and ``LoopRV`` (a loop, by its loop var).
Each primitive is a pure function on ``PrimFunc`` in
``tir.schedule.primitives``; this class resolves the handles, calls it,
keeps the result, and records the call in a trace that prints as the
Python that replays it.

>>> from tir import te
>>> A = te.placeholder((64,), name="A")
>>> B = te.compute((64,), lambda i: A[i] * 2.0, name="B")
>>> sch = Schedule(te.create_prim_func([A, B]))
>>> i, = sch.get_loops(sch.get_block("B"))
>>> io, ii = sch.split(i, factors=[None, 16])
>>> sch.vectorize(ii)
>>> print(sch.trace)  # doctest: +SKIP
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from ..block import BlockRealize
from ..buffer import Buffer
from ..expr import PrimExpr, Var
from ..function import IRModule, PrimFunc
from . import tree
from .error import ScheduleError
from .primitives import annotate as _annotate
from .primitives import cache as _cache
from .primitives import compute_location as _location
from .primitives import inline as _inline
from .primitives import layout as _layout
from .primitives import loops as _loops
from .primitives import reduction as _reduction
from .primitives import rfactor as _rfactor


class BlockRV:
    """A handle to a block of a schedule (it follows the block by name)."""

    __slots__ = ("name", "rv_name")

    def __init__(self, name: str, rv_name: str):
        self.name, self.rv_name = name, rv_name

    def __repr__(self) -> str:
        return f"BlockRV({self.name!r})"


class LoopRV:
    """A handle to a loop of a schedule (it follows the loop by its loop var)."""

    __slots__ = ("var", "rv_name")

    def __init__(self, var: Var, rv_name: str):
        self.var, self.rv_name = var, rv_name

    def __repr__(self) -> str:
        return f"LoopRV({self.var.name})"


class Instruction:
    """One traced primitive call: ``outputs = sch.name(*inputs, **attrs)``."""

    __slots__ = ("name", "inputs", "attrs", "outputs")

    def __init__(self, name: str, inputs: tuple, attrs: dict, outputs: tuple):
        self.name, self.inputs, self.attrs, self.outputs = name, inputs, attrs, outputs

    def __str__(self) -> str:
        args = [_arg_text(a) for a in self.inputs]
        args += [f"{k}={_arg_text(v)}" for k, v in self.attrs.items()]
        call = f"sch.{self.name}({', '.join(args)})"
        if not self.outputs:
            return call
        lhs = ", ".join(_arg_text(o) for o in self.outputs)
        return f"{lhs}{',' if len(self.outputs) == 1 and self.name == 'get_loops' else ''} = {call}"


def _arg_text(a: Any) -> str:
    if isinstance(a, (BlockRV, LoopRV)):
        return a.rv_name
    if isinstance(a, (list, tuple)):
        return "[" + ", ".join(_arg_text(x) for x in a) + "]"
    if isinstance(a, Buffer):
        return repr(a.name)
    if isinstance(a, PrimExpr):
        return str(a)
    if callable(a) and getattr(a, "__name__", "") == "<lambda>":
        return "<lambda>"
    return repr(a)


class Trace:
    """The primitives applied so far; ``str(trace)`` is Python that replays them."""

    def __init__(self, insts: list[Instruction]):
        self.insts = insts

    def __len__(self) -> int:
        return len(self.insts)

    def __iter__(self):
        return iter(self.insts)

    def __str__(self) -> str:
        return "\n".join(str(i) for i in self.insts)

    __repr__ = __str__

    def show(self) -> None:
        """Print the trace (TVM's ``Trace.show``)."""
        print(self)


class Schedule:
    """Rewrite one function of a module by schedule primitives (TVM's ``tir.Schedule``).

    ``Schedule(mod_or_func)`` takes an ``IRModule`` (it schedules ``"main"``,
    or its only function) or a ``PrimFunc``. A primitive that cannot apply
    raises ``ScheduleError`` and leaves the schedule unchanged.
    """

    def __init__(self, mod: IRModule | PrimFunc, *, func_name: str | None = None, **_tvm_opts: Any):
        if isinstance(mod, PrimFunc):
            mod = IRModule.from_expr(mod)
        if not isinstance(mod, IRModule):
            raise TypeError(f"Schedule: expected an IRModule or PrimFunc, got {type(mod).__name__}")
        names = list(mod.functions)
        if func_name is None:
            func_name = "main" if "main" in names else (names[0] if len(names) == 1 else None)
        if func_name not in names:
            raise ScheduleError(f"Schedule: pick the function to schedule with func_name= "
                                f"(the module has {', '.join(sorted(names))})")
        self._mod = mod
        self.func_name = func_name
        self.func: PrimFunc = mod[func_name]
        tree.root_realize(self.func)  # a clear error now for a function without blocks
        self._insts: list[Instruction] = []
        self._rv_count = 0

    # ------------------------------------------------------------ state

    @property
    def mod(self) -> IRModule:
        """The module with the scheduled function in place."""
        return IRModule({**dict(self._mod.functions), self.func_name: self.func})

    @property
    def trace(self) -> Trace:
        """The primitives applied so far, in order."""
        return Trace(list(self._insts))

    def copy(self) -> Schedule:
        """An independent schedule in the same state (handles stay valid in both)."""
        other = object.__new__(Schedule)
        other.__dict__.update(self.__dict__)
        other._insts = list(self._insts)
        return other

    def show(self) -> None:
        """Print the scheduled function."""
        print(self.func)

    def get(self, rv: BlockRV | LoopRV) -> Any:
        """The statement a handle refers to now: a ``Block`` or a ``For``."""
        if isinstance(rv, BlockRV):
            return tree.find_block(self.func, rv.name).block
        if isinstance(rv, LoopRV):
            return tree.find_loop(self.func, rv.var)
        raise TypeError(f"Schedule.get: expected a BlockRV or LoopRV, got {type(rv).__name__}")

    def _new_rv(self, kind: str) -> str:
        name = f"{kind}{self._rv_count}"
        self._rv_count += 1
        return name

    def _block(self, block: BlockRV | str) -> str:
        if isinstance(block, str):
            tree.find_block(self.func, block)
            return block
        if not isinstance(block, BlockRV):
            raise TypeError(f"expected a BlockRV (from get_block), got {type(block).__name__}")
        tree.find_block(self.func, block.name)
        return block.name

    def _loop(self, loop: LoopRV) -> Var:
        if not isinstance(loop, LoopRV):
            raise TypeError(f"expected a LoopRV (from get_loops or split), "
                            f"got {type(loop).__name__}")
        tree.find_loop(self.func, loop.var)
        return loop.var

    def _loops(self, loops: Sequence[LoopRV]) -> list[Var]:
        if isinstance(loops, LoopRV):
            loops = [loops]
        return [self._loop(x) for x in loops]

    def _wrap_loops(self, vars_: Sequence[Var]) -> list[LoopRV]:
        return [LoopRV(v, self._new_rv("l")) for v in vars_]

    def _record(self, name: str, inputs: tuple, attrs: dict, outputs: Any = ()) -> None:
        outs = outputs if isinstance(outputs, (list, tuple)) else (outputs,)
        kept = tuple(o for o in outs if o is not None)
        self._insts.append(Instruction(name, inputs, attrs, kept))

    def _apply(self, fn: Callable, *args: Any, **kwargs: Any) -> Any:
        """Run a primitive on the current function; keep its result only if it succeeds."""
        out = fn(self.func, *args, **kwargs)
        if isinstance(out, PrimFunc):
            self.func = out
            return None
        self.func, result = out
        return result

    # ------------------------------------------------------------ lookup

    def get_block(self, name: str, func_name: str | None = None) -> BlockRV:
        """The block named ``name``."""
        if func_name is not None and func_name != self.func_name:
            raise ScheduleError(f"get_block: this schedule works on {self.func_name!r}, "
                                f"not {func_name!r}")
        tree.find_block(self.func, name)
        rv = BlockRV(name, self._new_rv("b"))
        self._record("get_block", (name,), {}, rv)
        return rv

    def get_loops(self, block: BlockRV) -> list[LoopRV]:
        """The loops around ``block``, outermost first."""
        realize = tree.find_block(self.func, self._block(block))
        rvs = self._wrap_loops([f.loop_var for f in tree.loops_above(self.func, realize)])
        self._record("get_loops", (block,), {}, tuple(rvs))
        return rvs

    def get_child_blocks(self, parent: BlockRV | LoopRV) -> list[BlockRV]:
        """The blocks under a loop (or under a block), in program order."""
        stmt = self.get(parent)
        found = [s.block.name_hint for s, _ in tree.walk(stmt)
                 if isinstance(s, BlockRealize) and s.block is not stmt]
        return [BlockRV(n, self._new_rv("b")) for n in found]

    def get_producers(self, block: BlockRV) -> list[BlockRV]:
        """The blocks that write what ``block`` reads."""
        from .analysis import producers

        realize = tree.find_block(self.func, self._block(block))
        return [BlockRV(r.block.name_hint, self._new_rv("b"))
                for r in producers(self.func, realize)]

    def get_consumers(self, block: BlockRV) -> list[BlockRV]:
        """The blocks that read what ``block`` writes."""
        from .analysis import consumers

        realize = tree.find_block(self.func, self._block(block))
        return [BlockRV(r.block.name_hint, self._new_rv("b"))
                for r in consumers(self.func, realize)]

    # ------------------------------------------------------------ loops

    def split(self, loop: LoopRV, factors: Sequence[int | PrimExpr | None],
              preserve_unit_iters: bool = True) -> list[LoopRV]:
        """Split ``loop`` into nested loops of extents ``factors`` (outer first).

        One factor may be None: it is inferred as the ceiling of the extent over
        the product of the others. When the factors do not divide the extent, the
        block gets a guard (its predicate) so the extra iterations do nothing.
        """
        new = self._apply(_loops.split, self._loop(loop), list(factors),
                          preserve_unit_iters=preserve_unit_iters)
        rvs = self._wrap_loops(new)
        self._record("split", (loop,), {"factors": list(factors)}, tuple(rvs))
        return rvs

    def fuse(self, *loops: LoopRV, preserve_unit_iters: bool = True) -> LoopRV:
        """Fuse perfectly nested loops (outer first) into one loop."""
        if len(loops) == 1 and isinstance(loops[0], (list, tuple)):
            loops = tuple(loops[0])
        new = self._apply(_loops.fuse, self._loops(loops), preserve_unit_iters=preserve_unit_iters)
        rv = self._wrap_loops([new])[0]
        self._record("fuse", tuple(loops), {}, rv)
        return rv

    def reorder(self, *ordered_loops: LoopRV) -> None:
        """Put the given loops in this order (outer first); the others stay where they are."""
        if len(ordered_loops) == 1 and isinstance(ordered_loops[0], (list, tuple)):
            ordered_loops = tuple(ordered_loops[0])
        self._apply(_loops.reorder, self._loops(ordered_loops))
        self._record("reorder", tuple(ordered_loops), {})

    def tile(self, loops: Sequence[LoopRV], factors: Sequence[int]) -> list[LoopRV]:
        """Split each loop by its factor, then put every outer part above every inner part.

        ``tile([i, j], [8, 32])`` gives ``[i_o, j_o, i_i, j_i]`` (Halide's and
        TE's ``tile``), recorded in the trace as its splits and one reorder.
        """
        if len(loops) != len(factors):
            raise ScheduleError(f"tile: {len(loops)} loops but {len(factors)} factors")
        outer, inner = [], []
        for loop, f in zip(loops, factors):
            o, i = self.split(loop, [None, f])
            outer.append(o)
            inner.append(i)
        self.reorder(*outer, *inner)
        return outer + inner

    def parallel(self, loop: LoopRV) -> None:
        """Run ``loop``'s iterations on all cores (its iterations must be independent)."""
        self._apply(_annotate.set_kind, self._loop(loop), "parallel")
        self._record("parallel", (loop,), {})

    def vectorize(self, loop: LoopRV) -> None:
        """Mark ``loop`` for ``VectorizeLoop`` (it must be bound to spatial iter vars only)."""
        self._apply(_annotate.set_kind, self._loop(loop), "vectorize")
        self._record("vectorize", (loop,), {})

    def unroll(self, loop: LoopRV) -> None:
        """Unroll ``loop`` completely (its extent must be a constant when it is lowered)."""
        self._apply(_annotate.set_kind, self._loop(loop), "unroll")
        self._record("unroll", (loop,), {})

    def annotate(self, block_or_loop: BlockRV | LoopRV, ann_key: str, ann_val: Any) -> None:
        """Attach ``ann_key = ann_val`` to a block or loop."""
        target = self._target(block_or_loop)
        self._apply(_annotate.annotate, target, ann_key, ann_val)
        self._record("annotate", (block_or_loop, ann_key, ann_val), {})

    def unannotate(self, block_or_loop: BlockRV | LoopRV, ann_key: str) -> None:
        """Remove annotation ``ann_key`` from a block or loop."""
        target = self._target(block_or_loop)
        self._apply(_annotate.unannotate, target, ann_key)
        self._record("unannotate", (block_or_loop, ann_key), {})

    def _target(self, rv: BlockRV | LoopRV) -> str | Var:
        return self._block(rv) if isinstance(rv, (BlockRV, str)) else self._loop(rv)

    # ------------------------------------------------------------ compute location

    def compute_at(self, block: BlockRV, loop: LoopRV, preserve_unit_loops: bool = False) -> None:
        """Move producer ``block`` under ``loop``, computing only what the consumers there need."""
        self._apply(_location.compute_at, self._block(block), self._loop(loop),
                    preserve_unit_loops=preserve_unit_loops)
        self._record("compute_at", (block, loop), {"preserve_unit_loops": preserve_unit_loops})

    def reverse_compute_at(self, block: BlockRV, loop: LoopRV,
                           preserve_unit_loops: bool = False) -> None:
        """Move consumer ``block`` under ``loop``, right after what it reads is produced."""
        self._apply(_location.reverse_compute_at, self._block(block), self._loop(loop),
                    preserve_unit_loops=preserve_unit_loops)
        self._record("reverse_compute_at", (block, loop),
                     {"preserve_unit_loops": preserve_unit_loops})

    def compute_inline(self, block: BlockRV) -> None:
        """Substitute ``block``'s value into its consumers and remove it."""
        self._apply(_inline.compute_inline, self._block(block))
        self._record("compute_inline", (block,), {})

    def reverse_compute_inline(self, block: BlockRV) -> None:
        """Fold ``block`` (a consumer of one producer) into that producer and remove it."""
        self._apply(_inline.reverse_compute_inline, self._block(block))
        self._record("reverse_compute_inline", (block,), {})

    # ------------------------------------------------------------ caches and layout

    def cache_read(self, block: BlockRV, read_buffer_index: int, storage_scope: str,
                   consumer_blocks: Sequence[BlockRV] | None = None) -> BlockRV:
        """A new block copying the ``read_buffer_index``-th buffer ``block`` reads into a cache."""
        consumers = None if consumer_blocks is None else [self._block(b) for b in consumer_blocks]
        name = self._apply(_cache.cache_read, self._block(block), read_buffer_index,
                           storage_scope, consumer_blocks=consumers)
        rv = BlockRV(name, self._new_rv("b"))
        self._record("cache_read", (block, read_buffer_index, storage_scope), {}, rv)
        return rv

    def cache_write(self, block: BlockRV, write_buffer_index: int, storage_scope: str,
                    consumer_blocks: Sequence[BlockRV] | None = None) -> BlockRV:
        """``block`` writes a cache instead; a new block copies the cache to the buffer."""
        consumers = None if consumer_blocks is None else [self._block(b) for b in consumer_blocks]
        name = self._apply(_cache.cache_write, self._block(block), write_buffer_index,
                           storage_scope, consumer_blocks=consumers)
        rv = BlockRV(name, self._new_rv("b"))
        self._record("cache_write", (block, write_buffer_index, storage_scope), {}, rv)
        return rv

    def transform_layout(self, block: BlockRV, buffer: Any, index_map: Callable,
                         pad_value: Any = None) -> None:
        """Store a buffer in a new layout: element ``idx`` moves to ``index_map(*idx)``.

        ``buffer`` is ``("read", i)`` / ``("write", i)`` (the ``i``-th buffer
        ``block`` reads or writes), or a buffer name. Only buffers the function
        allocates can change layout; to pack a parameter, ``cache_read`` it first.
        """
        self._apply(_layout.transform_layout, self._block(block), buffer, index_map,
                    pad_value=pad_value)
        self._record("transform_layout", (block, buffer, index_map), {})

    # ------------------------------------------------------------ reductions

    def decompose_reduction(self, block: BlockRV, loop: LoopRV) -> BlockRV:
        """Split a reduction block's init into a block of its own, placed above ``loop``."""
        name = self._apply(_reduction.decompose_reduction, self._block(block), self._loop(loop))
        rv = BlockRV(name, self._new_rv("b"))
        self._record("decompose_reduction", (block, loop), {}, rv)
        return rv

    def rfactor(self, loop: LoopRV, factor_axis: int = 0) -> BlockRV:
        """Factor the reduction under ``loop`` over ``loop``; returns the rfactor block.

        The block under ``loop`` (a loop of its reduction, e.g. the inner loop of
        a split) becomes an rfactor block ``<block>_rf`` writing one partial result
        per iteration of ``loop`` into a new buffer ``<buf>_rf`` (``loop``'s extent
        inserted at dimension ``factor_axis``; negative counts from the end), in a
        copy of the loop nest placed before it, and a write-back block that keeps
        the block's name and reduces the partials into the buffer. In the rfactor
        block ``loop``'s iter var is spatial, so its loop (from ``get_loops`` of
        the returned block) can be made parallel or vectorized.
        """
        name = self._apply(_rfactor.rfactor, self._loop(loop), factor_axis)
        rv = BlockRV(name, self._new_rv("b"))
        self._record("rfactor", (loop,), {"factor_axis": factor_axis}, rv)
        return rv


__all__ = ["BlockRV", "Instruction", "LoopRV", "Schedule", "ScheduleError", "Trace"]
