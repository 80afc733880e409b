"""``tir.Schedule``: TVM's scheduling API over a function built from blocks.

A schedule holds the function being rewritten and hands out handles:
``BlockRV`` (a block, by name) and ``LoopRV`` (a loop, by its loop var).
Each primitive is a pure function on ``PrimFunc`` in
``tir.schedule.primitives``; this class resolves the handles, calls it,
keeps the result, and records the call in a trace that prints as the
Python that replays it (and writes as JSON that replays it: ``trace.py``).

A schedule also owns a random state (``seed=``, ``seed``, ``fork_seed``) for
a tuner's choices: ``sample_perfect_tile`` and ``sample_categorical`` draw
from it (``sampling.py``) and record what they drew as the instruction's
decision, which a replay passes back.

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

import numbers
import random
from typing import Any, Callable, Sequence

from ..block import BlockRealize
from ..expr import IntImm, PrimExpr, Var
from ..function import IRModule, PrimFunc
from . import sampling as _sampling
from . import tree
from .error import ScheduleError, fail
from .primitives import annotate as _annotate
from .primitives import cache as _cache
from .primitives import compute_location as _location
from .primitives import inline as _inline
from .primitives import layout as _layout
from .primitives import loops as _loops
from .primitives import reduction as _reduction
from .primitives import rfactor as _rfactor
from .primitives import tensorize as _tensorize
from .trace import BlockRV, ExprRV, Instruction, LoopRV, Trace


class Schedule:
    """Rewrite one function of a module by schedule primitives (TVM's ``tir.Schedule``).

    ``Schedule(mod_or_func)`` takes an ``IRModule`` (it schedules ``"main"``,
    or its only function) or a ``PrimFunc``. A primitive that cannot apply
    raises ``ScheduleError`` and leaves the schedule unchanged.
    """

    def __init__(self, mod: IRModule | PrimFunc, *, seed: int | None = None,
                 func_name: str | None = None, **_tvm_opts: Any):
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
        self._rng = random.Random()
        self.seed(seed)

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
        """An independent schedule in the same state (handles stay valid in both).

        The copy's random state is the original's: both sample the same sequence.
        """
        other = object.__new__(Schedule)
        other.__dict__.update(self.__dict__)
        other._insts = list(self._insts)
        other._rng = random.Random()
        other._rng.setstate(self._rng.getstate())
        return other

    def seed(self, seed: int | None = None) -> None:
        """Restart the random state from ``seed`` (None or -1, TVM's "any": a random seed)."""
        if seed is None or seed == -1:
            seed = random.SystemRandom().randrange(1 << 31)
        if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
            raise TypeError(f"Schedule.seed: expected an int, got {seed!r}")
        self._rng.seed(int(seed))

    def fork_seed(self) -> int:
        """A new seed drawn from this schedule's random state (for a schedule of its own)."""
        return self._rng.randrange(1 << 31)

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

    def _record(self, name: str, inputs: tuple, attrs: dict, outputs: Any = (),
                decision: Any = None) -> None:
        outs = outputs if isinstance(outputs, (list, tuple)) else (outputs,)
        kept = tuple(o for o in outs if o is not None)
        self._insts.append(Instruction(name, inputs, attrs, kept, decision))

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
        return self._block_list("get_child_blocks", parent, found)

    def get_producers(self, block: BlockRV) -> list[BlockRV]:
        """The blocks that write what ``block`` reads."""
        from .analysis import producers

        realize = tree.find_block(self.func, self._block(block))
        found = [r.block.name_hint for r in producers(self.func, realize)]
        return self._block_list("get_producers", block, found)

    def get_consumers(self, block: BlockRV) -> list[BlockRV]:
        """The blocks that read what ``block`` writes."""
        from .analysis import consumers

        realize = tree.find_block(self.func, self._block(block))
        found = [r.block.name_hint for r in consumers(self.func, realize)]
        return self._block_list("get_consumers", block, found)

    def _block_list(self, name: str, arg: BlockRV | LoopRV, found: list[str]) -> list[BlockRV]:
        rvs = [BlockRV(n, self._new_rv("b")) for n in found]
        self._record(name, (arg,), {}, tuple(rvs))
        return rvs

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
        attrs = {"factors": list(factors)}
        if not preserve_unit_iters:  # the default stays implicit: traces print as before
            attrs["preserve_unit_iters"] = False
        self._record("split", (loop,), attrs, tuple(rvs))
        return rvs

    def fuse(self, *loops: LoopRV, preserve_unit_iters: bool = True) -> LoopRV:
        """Fuse perfectly nested loops (outer first) into one loop."""
        if len(loops) == 1 and isinstance(loops[0], (list, tuple)):
            loops = tuple(loops[0])
        new = self._apply(_loops.fuse, self._loops(loops), preserve_unit_iters=preserve_unit_iters)
        rv = self._wrap_loops([new])[0]
        self._record("fuse", tuple(loops), {} if preserve_unit_iters
                     else {"preserve_unit_iters": False}, rv)
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
        attrs = {} if consumer_blocks is None else {"consumer_blocks": list(consumer_blocks)}
        self._record("cache_read", (block, read_buffer_index, storage_scope), attrs, rv)
        return rv

    def cache_write(self, block: BlockRV, write_buffer_index: int, storage_scope: str,
                    consumer_blocks: Sequence[BlockRV] | None = None) -> BlockRV:
        """``block`` writes a cache instead; a new block copies the cache to the buffer."""
        consumers = None if consumer_blocks is None else [self._block(b) for b in consumer_blocks]
        name = self._apply(_cache.cache_write, self._block(block), write_buffer_index,
                           storage_scope, consumer_blocks=consumers)
        rv = BlockRV(name, self._new_rv("b"))
        attrs = {} if consumer_blocks is None else {"consumer_blocks": list(consumer_blocks)}
        self._record("cache_write", (block, write_buffer_index, storage_scope), attrs, rv)
        return rv

    def transform_layout(self, block: BlockRV, buffer: Any, index_map: Callable,
                         pad_value: Any = None) -> None:
        """Store a buffer in a new layout: element ``idx`` moves to ``index_map(*idx)``.

        ``buffer`` is ``("read", i)`` / ``("write", i)`` (the ``i``-th buffer
        ``block`` reads or writes), or a buffer name. Only buffers the function
        allocates can change layout; to pack a parameter, ``cache_read`` it first.
        The trace keeps the map as an ``IndexMap`` (its result on fresh index
        variables), so it can be written as JSON and replayed.
        """
        name = self._block(block)
        imap = _layout.index_map_of(self.func, name, buffer, index_map)
        self._apply(_layout.transform_layout, name, buffer, imap, pad_value=pad_value)
        attrs = {} if pad_value is None else {"pad_value": pad_value}
        self._record("transform_layout", (block, buffer, imap), attrs)

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

    # ------------------------------------------------------------ tensorize

    def tensorize(self, block_or_loop: BlockRV | LoopRV, tensor_intrin: str,
                  preserve_unit_iters: bool = True, *, allow_inexact: bool = False) -> None:
        """Replace the loops under ``block_or_loop`` by the tensor intrinsic registered as
        ``tensor_intrin`` (``tir.TensorIntrin``), as TVM does.

        The loops must compute what the intrinsic's description says, on parts of the
        program's buffers laid out as the description's (pack them first with
        ``cache_read`` or ``transform_layout``); a reduction's init must have been moved
        out with ``decompose_reduction``. They become a block ``<block>_o`` holding the
        intrinsic's implementation. A mismatch is a ``ScheduleError`` naming the first
        difference. ``preserve_unit_iters`` is accepted for TVM's signature. An intrinsic
        registered as inexact (``vdpbf16ps`` adds its products in another order and
        flushes subnormals) needs ``allow_inexact=True``, tirlite's addition.

        >>> sch.tensorize(ji, "dot_16x4_vnni")                         # doctest: +SKIP
        """
        if not isinstance(tensor_intrin, str):
            raise TypeError(f"tensorize: name the intrinsic by its registered name (str), got "
                            f"{type(tensor_intrin).__name__}")
        target = self._block(block_or_loop) if isinstance(block_or_loop, BlockRV) \
            else self._loop(block_or_loop)
        self._apply(_tensorize.tensorize, target, tensor_intrin, allow_inexact)
        attrs = {"tensor_intrin": tensor_intrin, "preserve_unit_iters": preserve_unit_iters}
        if allow_inexact:
            attrs["allow_inexact"] = True
        self._record("tensorize", (block_or_loop,), attrs)

    # ------------------------------------------------------------ sampling

    def sample_perfect_tile(self, loop: LoopRV, n: int, max_innermost_factor: int = 16,
                            decision: Sequence[int] | None = None) -> list[int]:
        """``n`` factors (outer first) whose product is ``loop``'s constant extent.

        Drawn uniformly among such factorizations whose innermost factor is at
        most ``max_innermost_factor`` (-1: no limit), from this schedule's
        random state; or ``decision``, checked, when given (a replay). The
        trace records the factors as the decision; pass them to ``split``.
        """
        var = self._loop(loop)
        extent = tree.find_loop(self.func, var).extent
        where = f"loop {var.name}"
        if not isinstance(extent, IntImm):
            raise fail("sample_perfect_tile", where, f"the extent {extent} is not a constant")
        if decision is None:
            factors = _sampling.perfect_tile(self._rng, extent.value, n, max_innermost_factor,
                                             where)
        else:
            factors = _sampling.check_tile_decision(decision, extent.value, n,
                                                    max_innermost_factor, where)
        rvs = [ExprRV(f, self._new_rv("v")) for f in factors]
        self._record("sample_perfect_tile", (loop,),
                     {"n": n, "max_innermost_factor": max_innermost_factor}, tuple(rvs),
                     decision=list(factors))
        return list(factors)

    def sample_categorical(self, candidates: Sequence[int | float | str],
                           probs: Sequence[float], decision: int | None = None) -> Any:
        """One of ``candidates``, drawn with probabilities ``probs`` (normalized here).

        ``decision`` (an index into ``candidates``) picks it instead (a replay);
        the trace records the index as the decision.
        """
        if decision is None:
            index = _sampling.categorical(self._rng, candidates, probs)
        else:
            index = _sampling.check_categorical_decision(decision, candidates, probs)
        rv = ExprRV(candidates[index], self._new_rv("v"))
        self._record("sample_categorical", (),
                     {"candidates": list(candidates), "probs": list(probs)}, rv, decision=index)
        return candidates[index]


__all__ = ["BlockRV", "ExprRV", "Instruction", "LoopRV", "Schedule", "ScheduleError", "Trace"]
