"""Statements of a generated loop body, each emitted through ``tir.ir_builder`` with its model.

``Body`` emits stores (to the iteration's own element, to a shifted element that another
iteration reads, through an index array), reductions and recurrences into loop-invariant
cells, ifs on the loop var (guards) and on data, lets, per-iteration ``allocate``
temporaries and small inner loops. Nothing here promises independent iterations: that is
the point, the vectorizer must keep what the serial reading computes. A body inside a
parallel loop is the exception: it writes only its own element of private buffers that
nothing in the loop reads, so its iterations are truly independent.

Every index stays inside the buffers for every input: 1-D buffers hold ``PAD`` spare
elements on each side of the ``limit`` elements a loop may touch, times the widest
stride of the strided loads and interleaved stores (``STRIDES``).
"""

from __future__ import annotations

import dataclasses
import random

import numpy as np

import tir

from . import semantics as sem
from .exprs import ExprGen, X, const
from .inputs import SMALL_INT, BufSpec

PAD = 4  # spare elements each side: shifted indices i + d with |d| <= PAD stay inside
#: Strides of strided loads and interleaved stores; 1-D buffers hold STRIDES[-1] * limit
#: elements (plus the padding) so that ``s * i + d`` stays inside.
STRIDES = (2, 3)


@dataclasses.dataclass
class Ctx:
    """Where a statement is: the element index ``i`` (None outside loops), the row var of
    2-D buffers, the loop's extent, and what it may read and write."""

    i: X | None = None
    row: X | None = None
    extent: X | None = None
    independent: bool = False  # iterations write only their own element of `private`
    private: frozenset = frozenset()  # buffers written here and read nowhere in the loop
    extra: X | None = None  # an inner loop var added to shifted reads
    lets: list = dataclasses.field(default_factory=list)  # X of let vars in scope
    temps: list = dataclasses.field(default_factory=list)  # (name, view, dtype) in scope
    cells: list = dataclasses.field(default_factory=list)  # (spec or name, view, index, dtype)

    def nested(self, **changes) -> Ctx:
        """A copy for a nested scope (lets and temps of the scope end with it)."""
        return dataclasses.replace(self, lets=list(self.lets), temps=list(self.temps),
                                   **changes)


class Body:
    """Emits statements for ``prog`` (a ``Program``: the builder, buffers and model stack)."""

    def __init__(self, prog, rng: random.Random):
        self.p = prog
        self.rng = rng

    # ------------------------------------------------------------ statements

    def emit(self, ctx: Ctx, count: int, depth: int = 0) -> None:
        """``count`` statements in the current scope."""
        for _ in range(count):
            self.statement(ctx, depth)

    def statement(self, ctx: Ctx, depth: int) -> None:
        """One random statement (nested ones below depth 2)."""
        kinds = {"store": 30}
        if not ctx.independent:
            kinds.update(shift=12, cell=8 if ctx.cells else 0, scatter=4,
                         interleave=4 if ctx.i is not None else 0)
        if depth < 2 and ctx.i is not None:
            kinds.update(guard=8, inner=4)
        if depth < 2:
            kinds.update(if_data=6, let=6, temp=5)
        kind = self.rng.choices(list(kinds), list(kinds.values()))[0]
        getattr(self, "_" + kind)(ctx, depth)

    def _store(self, ctx: Ctx, depth: int) -> None:
        spec = self.p.writable(ctx, rng=self.rng)
        self.store(ctx, spec, self.own_index(ctx, spec), self.value(ctx, spec.dtype))

    def _shift(self, ctx: Ctx, depth: int) -> None:
        """``b[i + d] = f(b[i], ...)``: a dependence of distance d between iterations."""
        spec = self.p.writable(ctx, one_d=True, rng=self.rng)
        d = self.rng.randint(-3, 3)
        self.store(ctx, spec, [self._affine(ctx, d)], self.value(ctx, spec.dtype))

    def _interleave(self, ctx: Ctx, depth: int) -> None:
        """``b[s*i + c] = ...`` for each ``c < s`` in random order: an interleave group."""
        spec = self.p.writable(ctx, one_d=True, rng=self.rng)
        stride = self.rng.choice(STRIDES)
        for c in self.rng.sample(range(stride), stride):
            self.store(ctx, spec, [self._strided(ctx, stride, c)], self.value(ctx, spec.dtype))

    def _scatter(self, ctx: Ctx, depth: int) -> None:
        spec = self.p.writable(ctx, one_d=True, rng=self.rng)
        self.store(ctx, spec, [self._gather_index(ctx)], self.value(ctx, spec.dtype))

    def _cell(self, ctx: Ctx, depth: int) -> None:
        """A reduction or a recurrence into a loop-invariant cell: carried by every iteration."""
        target, view, index, dtype = self.rng.choice(ctx.cells)
        old = self._load(target, view, [index], dtype)
        value = self.value(ctx, dtype)
        gen = self.gen(ctx)
        op = self.rng.choice(["+", "min", "max"] + (["*"] if sem.kind(dtype) != "float" else
                                                     ["recur"]))
        if op == "recur":  # s = s * c + v: a float recurrence (the FMA candidate)
            new = gen.binary("+", gen.binary("*", old, const(self.rng.choice([0.5, -1.0, 0.9]),
                                                                 dtype)), value)
        else:
            new = gen.binary(op, old, value)
        self.store(ctx, target, [index], new, view=view)
        self.p.tags.add("carried")

    def _guard(self, ctx: Ctx, depth: int) -> None:
        """An if on the loop var: a tail guard, every other element, or one element."""
        i, n, rng = ctx.i, ctx.extent, self.rng
        c, m = rng.randint(0, 5), rng.choice([2, 3])
        guards = [
            (i.expr < n.expr - c, lambda st: i.fn(st)[0] < n.fn(st)[0] - c),
            (i.expr >= c, lambda st: i.fn(st)[0] >= c),
            (tir.floormod(i.expr, m) == 0, lambda st: i.fn(st)[0] % m == 0),
            (i.expr != c, lambda st: i.fn(st)[0] != c),
        ]
        cond, model = rng.choice(guards)
        self.p.tags.add("guard")
        self.p.if_(X(cond, lambda st: (model(st), 0.0), "bool"),
                   lambda: self.emit(ctx.nested(), rng.randint(1, 2), depth + 1),
                   (lambda: self.emit(ctx.nested(), 1, depth + 1)) if rng.random() < 0.3
                   else None)

    def _if_data(self, ctx: Ctx, depth: int) -> None:
        cond = self.gen(ctx).condition(1)
        rng = self.rng
        self.p.if_(cond, lambda: self.emit(ctx.nested(), rng.randint(1, 2), depth + 1),
                   (lambda: self.emit(ctx.nested(), 1, depth + 1)) if rng.random() < 0.3
                   else None)

    def _let(self, ctx: Ctx, depth: int) -> None:
        dtype = self.rng.choice(self.p.dtypes)
        ctx.lets.append(self.p.let(self.value(ctx, dtype)))
        self.statement(ctx, depth + 1)  # in scope for the rest of the block: give it one

    def _temp(self, ctx: Ctx, depth: int) -> None:
        """A per-iteration ``allocate`` of two elements, written before it is read."""
        dtype = self.rng.choice(self.p.dtypes)
        name, view = self.p.allocate(dtype, 2, "tmp")
        for k in range(2):
            self.store(ctx, name, [const(k, "int32")], self.value(ctx, dtype), view=view)
        ctx.temps.append((name, view, dtype))
        self.statement(ctx, depth + 1)

    def _inner(self, ctx: Ctx, depth: int) -> None:
        """A small serial or unrolled loop inside the body; its var shifts the reads."""
        kind = self.rng.choice(["serial", "unroll"])
        extent = self.rng.randint(1, 3)
        self.p.loop(const(extent, "int32"), kind, "k",
                    lambda k: self.emit(ctx.nested(extra=k), self.rng.randint(1, 2), depth + 1))

    # ------------------------------------------------------------ stores and loads

    def store(self, ctx: Ctx, target, indices: list, value: X, view=None) -> None:
        """``target[indices] = value``, value converted and (small ints) clamped to fit."""
        spec = target if isinstance(target, BufSpec) else None
        name = spec.name if spec else target
        dtype = spec.dtype if spec else view.dtype
        value = self.gen(ctx).cast(dtype, value)
        if spec is not None and spec.small and (value.lo < -SMALL_INT or value.hi > SMALL_INT):
            gen = self.gen(ctx)
            value = gen.binary("min", gen.binary("max", value, const(-SMALL_INT, dtype)),
                               const(SMALL_INT, dtype))
        self.p.store(name, view, indices, value)

    def own_index(self, ctx: Ctx, spec: BufSpec) -> list:
        """This iteration's element of ``spec`` (and its row for a 2-D buffer)."""
        col = self._affine(ctx, 0, extra=False) if ctx.i is not None else \
            const(PAD + self.rng.randint(0, self.p.limit - 1), "int32")
        if len(spec.shape) == 1:
            return [col]
        return [self._row(ctx), col]

    def _row(self, ctx: Ctx) -> X:
        if ctx.row is not None and (ctx.independent or self.rng.random() < 0.7):
            return ctx.row
        return const(self.rng.randrange(self.p.rows), "int32")

    def _affine(self, ctx: Ctx, d: int, extra: bool = True) -> X:
        """``i + PAD + d`` (plus the inner loop var, at most 2)."""
        i = ctx.i
        if i is None:
            return const(PAD + self.rng.randint(0, self.p.limit - 1) + d, "int32")
        k = ctx.extra if extra else None
        if k is not None:  # i + k + d - 2 with k <= 2 stays within the left padding
            d = max(d, 2 - PAD)
        expr = i.expr + (PAD + d) if k is None else i.expr + k.expr + (PAD + d - 2)
        if k is None:
            return X(expr, lambda st: (i.fn(st)[0] + PAD + d, 0.0), "int32")
        return X(expr, lambda st: (i.fn(st)[0] + k.fn(st)[0] + PAD + d - 2, 0.0), "int32")

    def _strided(self, ctx: Ctx, stride: int, d: int) -> X:
        """``stride * i + PAD + d`` (0 <= d < stride): inside buffers of STRIDES[-1] * limit."""
        i = ctx.i
        return X(i.expr * stride + (PAD + d),
                 lambda st: (i.fn(st)[0] * stride + PAD + d, 0.0), "int32")

    def _reversed(self, ctx: Ctx) -> X:
        """``extent - 1 - i + PAD``: the loop's range read backwards."""
        i, n = ctx.i, ctx.extent
        return X(n.expr - 1 - i.expr + PAD,
                 lambda st: (n.fn(st)[0] - 1 - i.fn(st)[0] + PAD, 0.0), "int32")

    def _gather_index(self, ctx: Ctx) -> X:
        index = self.p.index_buffer
        at = self._affine(ctx, self.rng.randint(-PAD, PAD)) if ctx.i is not None else \
            const(self.rng.randrange(self.p.size), "int32")
        return self._load(index, self.p.views[index.name], [at], "int32")

    def _load(self, target, view, indices: list, dtype: str) -> X:
        name = target.name if isinstance(target, BufSpec) else target
        fns = [x.fn for x in indices]
        if isinstance(target, BufSpec) and target.role == "index":
            lo, hi = 0, self.p.size - 1
        elif isinstance(target, BufSpec) and target.small:
            lo, hi = -SMALL_INT, SMALL_INT
        else:
            lo, hi = (sem.int_range(dtype) if sem.kind(dtype) in ("int", "uint") else
                      (None, None))

        def fn(st):
            at = tuple(f(st)[0] for f in fns)
            return _item(st.bufs[name][at]), float(st.errs[name][at])

        return X(view[tuple(x.expr for x in indices)], fn, dtype, lo, hi)

    # ------------------------------------------------------------ values

    def gen(self, ctx: Ctx) -> ExprGen:
        """An expression generator whose leaves are this context's loads and vars."""
        gen = ExprGen(self.rng, lambda dtype: self.leaves(ctx, dtype), self.p.dtypes)
        gen.tags = self.p.tags
        gen.fresh = self.p.fresh
        return gen

    def value(self, ctx: Ctx, dtype: str) -> X:
        """A random expression of ``dtype`` to store."""
        return self.gen(ctx).gen(dtype, self.rng.randint(0, 3))

    def leaves(self, ctx: Ctx, dtype: str) -> list:
        """Factories of the leaves of ``dtype`` visible in ``ctx`` (``"int32:divisor"``:
        loads of divisor buffers)."""
        if dtype.endswith(":divisor"):
            dtype = dtype.split(":")[0]
            return [self._loader(ctx, s) for s in self.p.specs
                    if s.role == "divisor" and s.dtype == dtype]
        out = [self._loader(ctx, s) for s in self.p.readable(ctx, dtype)]
        out += [lambda x=x: x for x in ctx.lets if x.dtype == dtype]
        out += [lambda x=x: x for x in self.p.scalars if x.dtype == dtype]
        out += [self._temp_loader(name, view) for name, view, t in ctx.temps if t == dtype]
        if not ctx.independent:
            out += [self._cell_loader(c) for c in ctx.cells if c[3] == dtype]
        if dtype == "int32" and ctx.i is not None:
            out.append(lambda: ctx.i)
        return out

    def _loader(self, ctx: Ctx, spec: BufSpec):
        def make() -> X:
            rng = self.rng
            if len(spec.shape) == 2:
                col = self._affine(ctx, rng.randint(-PAD, PAD)) if ctx.i is not None else \
                    const(rng.randrange(self.p.size), "int32")
                return self._load(spec, self.p.views[spec.name], [self._row(ctx), col],
                                  spec.dtype)
            roll = rng.random()
            if ctx.i is None or roll < 0.1:
                at = const(rng.randrange(self.p.size), "int32")
            elif roll < 0.55:
                at = self._affine(ctx, 0)
            elif roll < 0.7:
                at = self._affine(ctx, rng.randint(-PAD, PAD))
            elif roll < 0.8:
                stride = rng.choice(STRIDES)
                at = self._strided(ctx, stride, rng.randrange(stride))
            elif roll < 0.9:
                at = self._reversed(ctx)
            else:
                at = self._gather_index(ctx)
            return self._load(spec, self.p.views[spec.name], [at], spec.dtype)

        return make

    def _temp_loader(self, name: str, view):
        return lambda: self._load(name, view, [const(self.rng.randint(0, 1), "int32")],
                                  view.dtype)

    def _cell_loader(self, cell):
        target, view, index, dtype = cell
        return lambda: self._load(target, view, [index], dtype)


def _item(value):
    """A model value from an array element: Python int/bool, or the NumPy float scalar."""
    if isinstance(value, np.floating):
        return value
    return bool(value) if isinstance(value, np.bool_) else int(value)
