"""Random programs: buffers, loop nests and bodies, built through ``tir.ir_builder``.

``generate(seed)`` returns a ``Case``: the ``PrimFunc``, its parameters, how to make
arguments, and the model -- a list of Python functions written beside each emitted
statement that compute, with ``semantics``, what the program's serial reading computes.

Each program has one to three blocks. A block is a loop nest of one family:

- ``flat``: one loop of kind vectorize, serial, unroll or parallel over a constant
  extent (serial and parallel also over the scalar param ``n``, which may be 0);
- ``strip``: ``io`` over ``n // L`` with an inner loop of ``L`` vectorized lanes, then a
  serial tail, or ``io`` over ``ceil(n / L)`` with a guard ``i < n`` inside the lanes;
- ``rows``: a loop over the rows of 2-D buffers (serial, unrolled or parallel) around a
  vectorized or strip-mined loop over the columns;
- ``nested``: two vectorized loops ``u``, ``v`` with ``i = u * L2 + v``;
- ``reduce``: an ``allocate``d accumulator, initialized, reduced into by a vectorized or
  strip-mined loop, then stored.
"""

from __future__ import annotations

import dataclasses
import functools
import random

import numpy as np

import codegen
import tir
from tir import ir_builder

from . import semantics as sem
from .body import PAD, STRIDES, Body, Ctx
from .exprs import INTS, State, X, const
from .inputs import BufSpec, ScalarSpec, make_arg

DTYPES = ("float32", "float64", "bool") + INTS
_DTYPE_WEIGHTS = (30, 12, 4, 5, 5, 12, 8, 4, 4, 6, 4)
FAMILIES = {"flat": 30, "strip": 30, "rows": 14, "nested": 8, "reduce": 18}


@functools.cache
def natural_lanes() -> int:
    """float32 lanes in the host's widest vector register (16 with AVX-512, 8 with AVX2)."""
    return codegen.Target("llvm").vector_width_bits // 32


@dataclasses.dataclass
class Case:
    """One generated program: the ``PrimFunc``, its parameters and its model."""

    seed: int
    func: tir.PrimFunc
    params: tuple  # BufSpec / ScalarSpec in parameter order
    model: list  # functions of a State, run in order
    tags: frozenset  # what the program contains (tail, guard, parallel, math, ...)
    summary: str

    def make_inputs(self, input_seed: int = 0) -> list:
        """The arguments in parameter order, drawn from (case seed, input seed)."""
        rng = np.random.default_rng([self.seed, input_seed])
        return [make_arg(p, rng) for p in self.params]

    def run_model(self, args: list, contract: bool = False) -> tuple[list, list]:
        """The buffers after the model runs on ``args``, and each element's error bound."""
        bufs = {p.name: a.copy() for p, a in zip(self.params, args) if isinstance(p, BufSpec)}
        env = {p.name: (_scalar_value(p, a), 0.0) for p, a in zip(self.params, args)
               if isinstance(p, ScalarSpec)}
        st = State(bufs, {k: np.zeros(v.shape) for k, v in bufs.items()}, env,
                   sem.Mode(contract))
        with np.errstate(all="ignore"):
            for fn in self.model:
                fn(st)
        names = [p.name for p in self.params if isinstance(p, BufSpec)]
        return [st.bufs[k] for k in names], [st.errs[k] for k in names]


def _scalar_value(spec: ScalarSpec, value):
    return sem.np_type(spec.dtype)(value) if sem.kind(spec.dtype) == "float" else int(value)


class Program:
    """The builder, the buffers and the model of one program while it is generated."""

    def __init__(self, seed: int):
        self.seed = seed
        self.rng = rng = random.Random(seed)
        self.ib = ir_builder.create()
        self.tags: set = set()
        self.dtypes = tuple(sorted(set(rng.choices(DTYPES, _DTYPE_WEIGHTS,
                                                   k=rng.choice([1, 2, 2, 3])))))
        self.limit = rng.choice([rng.randint(1, 12), rng.randint(8, 48), 64])
        self.size = STRIDES[-1] * self.limit + 2 * PAD
        self.rows = rng.randint(1, 3)
        self.specs: list = []
        self.views: dict = {}
        self.args: list = []
        self.scalars: list[X] = []
        self._names = 0
        self._stack: list[list] = [[]]  # model functions of the scopes being emitted
        self._writes: list[set] = [set()]  # buffers written in the scopes being emitted
        self._declare()

    # ------------------------------------------------------------ parameters

    def _declare(self) -> None:
        rng = self.rng
        for dtype in self.dtypes:
            for k in range(rng.randint(1, 2)):
                self._buffer(f"{_short(dtype)}{k}", dtype, (self.size,))
            if sem.kind(dtype) == "int" and rng.random() < 0.5:
                self._buffer(f"{_short(dtype)}_div", dtype, (self.size,), "divisor")
        if rng.random() < 0.5:
            dtype = rng.choice(self.dtypes)
            self._buffer(f"{_short(dtype)}_2d", dtype, (self.rows, self.size))
        self.index_buffer = self._buffer("idx", "int32", (self.size,), "index")
        self.n = self._scalar("n", "int32", "n", self.limit) if rng.random() < 0.4 else None
        self.k = self._scalar("K", "int32", "k", self.size) if rng.random() < 0.25 else None
        if rng.random() < 0.25:
            dtype = rng.choice([t for t in self.dtypes if t != "bool"] or ["float32"])
            self._scalar("s", dtype, "value")

    def _buffer(self, name: str, dtype: str, shape: tuple, role: str = "data") -> BufSpec:
        small = dtype in ("int32", "int64") and role == "data" and self.rng.random() < 0.5
        spec = BufSpec(name, dtype, shape, role, small)
        buf = tir.decl_buffer(shape, dtype, name=name)
        self.specs.append(spec)
        self.args.append(buf)
        self.views[name] = self.ib.buffer_ptr(buf)
        return spec

    def _scalar(self, name: str, dtype: str, role: str, limit: int = 0) -> X:
        var = tir.Var(name, dtype)
        self.specs.append(ScalarSpec(name, dtype, role, limit))
        self.args.append(var)
        lo, hi = {"n": (0, limit), "k": (0, limit - 1)}.get(role, sem.int_range(dtype) if
                                                               sem.kind(dtype) != "float" else
                                                               (None, None))
        x = X(var, lambda st: st.env[name], dtype, lo, hi)
        self.scalars.append(x)
        if role == "n":
            self.tags.add("symbolic")
        return x

    def writable(self, ctx: Ctx, one_d: bool = False, rng: random.Random | None = None) -> BufSpec:
        """A data buffer the statement may write (in a parallel loop: a private one)."""
        specs = [s for s in self.specs if s.role == "data" and (not one_d or len(s.shape) == 1)]
        if ctx.independent:
            specs = [s for s in specs if s.name in ctx.private]
        return (rng or self.rng).choice(specs)

    def readable(self, ctx: Ctx, dtype: str) -> list:
        """The buffers of ``dtype`` a load may read (in a parallel loop: not the private)."""
        return [s for s in self.specs if isinstance(s, BufSpec) and s.dtype == dtype
                and s.role == "data" and s.name not in ctx.private]

    def fresh(self, prefix: str) -> str:
        """A name no other var or buffer of the program has."""
        self._names += 1
        return f"{prefix}{self._names}"

    # ------------------------------------------------------------ emitting with the model

    def _model(self, fn) -> None:
        self._stack[-1].append(fn)

    def _collect(self, emit) -> tuple[list, set]:
        """Run ``emit``; return the model functions and the buffers written inside it."""
        self._stack.append([])
        self._writes.append(set())
        emit()
        writes = self._writes.pop()
        self._writes[-1] |= writes
        return self._stack.pop(), writes

    def store(self, name: str, view, indices: list, value: X) -> None:
        """``view[indices] = value`` and its model."""
        view = view if view is not None else self.views[name]
        view[tuple(x.expr for x in indices)] = value.expr
        fns, vfn = [x.fn for x in indices], value.fn
        self._writes[-1].add(name)

        def fn(st):
            v, e = vfn(st)
            at = tuple(f(st)[0] for f in fns)
            st.bufs[name][at] = v
            st.errs[name][at] = e

        self._model(fn)

    def if_(self, cond: X, then, otherwise=None) -> None:
        """An ``if`` (and ``else``); an uncertain condition leaves what both sides write
        uncertain, since a build may take the other side."""
        with self.ib.if_scope(cond.expr):
            then_fns, writes = self._collect(then)
        else_fns: list = []
        if otherwise is not None:
            with self.ib.else_scope():
                else_fns, more = self._collect(otherwise)
            writes = writes | more
        cfn = cond.fn

        def fn(st):
            c, e = cfn(st)
            for f in then_fns if c else else_fns:
                f(st)
            if e:
                for name in writes:
                    if name in st.errs:
                        st.errs[name][...] = sem.INF

        self._model(fn)

    def let(self, value: X) -> X:
        """``ib.let``: a var bound for the rest of the scope."""
        name = self.fresh("t")
        var = self.ib.let(name, value.expr)
        vfn = value.fn

        def fn(st):
            st.env[name] = vfn(st)

        self._model(fn)
        return X(var, lambda st: st.env[name], value.dtype, value.lo, value.hi)

    def allocate(self, dtype: str, extent: int, prefix: str) -> tuple:
        """``ib.allocate`` of ``extent`` elements for the rest of the scope."""
        name = self.fresh(prefix)
        view = self.ib.allocate(dtype, (extent,), name=name)
        npdt = "bool" if dtype == "bool" else dtype

        def fn(st):
            st.bufs[name] = np.zeros(extent, npdt)
            st.errs[name] = np.zeros(extent)

        self._model(fn)
        self.tags.add("allocate")
        return name, view

    def loop(self, extent: X, kind: str, prefix: str, body, annotations=None) -> X:
        """``for v in range(extent)`` of ``kind``; ``body(v)`` emits its statements."""
        name = self.fresh(prefix)
        with self.ib.for_range(0, extent.expr, name=name, kind=kind,
                               annotations=annotations) as v:
            var = X(v, lambda st: st.env[name], "int32", 0, max((extent.hi or 1) - 1, 0))
            fns, _ = self._collect(lambda: body(var))
        efn = extent.fn

        def fn(st):
            for value in range(efn(st)[0]):
                st.env[name] = (value, 0.0)
                for f in fns:
                    f(st)

        self._model(fn)
        self.tags.add(kind)
        return var

    # ------------------------------------------------------------ blocks

    def build(self) -> Case:
        """Emit the blocks; the ``Case``."""
        families = []
        for _ in range(self.rng.choice([1, 1, 2, 3])):
            family = self.rng.choices(list(FAMILIES), list(FAMILIES.values()))[0]
            families.append(family)
            getattr(self, "_" + family)(Body(self, self.rng))
        func = tir.PrimFunc(self.args, self.ib.get())
        summary = f"{'+'.join(families)} over {', '.join(self.dtypes)}, limit {self.limit}"
        return Case(self.seed, func, tuple(self.specs), self._stack[0], frozenset(self.tags),
                    summary)

    def _count(self) -> int:
        return self.rng.randint(1, 4)

    def _cells(self) -> list:
        """Loop-invariant elements of 1-D data buffers (at a constant or at K)."""
        cells = []
        candidates = [s for s in self.specs if s.role == "data" and len(s.shape) == 1
                      and s.dtype != "bool"]
        for spec in self.rng.sample(candidates, k=min(1, len(candidates))):
            at = self.k if self.k is not None and self.rng.random() < 0.4 else \
                const(PAD + self.rng.randrange(self.limit), "int32")
            cells.append((spec, self.views[spec.name], at, spec.dtype))
        return cells

    def _extent(self, allow_symbolic: bool) -> X:
        if allow_symbolic and self.n is not None and self.rng.random() < 0.6:
            return self.n
        return const(self.rng.randint(1, self.limit), "int32")

    def _clean(self) -> bool:
        """Whether a block keeps its iterations independent, so that it may vectorize."""
        clean = self.rng.random() < 0.4
        if clean:
            self.tags.add("clean")
        return clean

    def _private(self, ctx_rows: bool) -> frozenset:
        """Buffers a parallel loop alone writes: 2-D ones when rows run in parallel."""
        data = [s for s in self.specs if s.role == "data" and (not ctx_rows or len(s.shape) == 2)]
        return frozenset(s.name for s in self.rng.sample(data, k=min(len(data), 2)))

    def _flat(self, body: Body) -> None:
        kind = self.rng.choices(["vectorize", "serial", "unroll", "parallel"], [55, 15, 15, 15])[0]
        extent = self._extent(kind in ("serial", "parallel"))
        if kind == "unroll" and extent.hi > 16:
            extent = const(self.rng.randint(1, 16), "int32")
        independent = kind == "parallel" or self._clean()
        ctx = Ctx(extent=extent, independent=independent,
                  private=self._private(False) if independent else frozenset(),
                  cells=[] if independent else self._cells())
        annotations = None
        if independent and kind == "vectorize" and self.rng.random() < 0.3:
            # the user's word that iterations are independent: true here, so vectorize unchecked
            annotations = {"tir.vectorize.assume_independent": True}
            self.tags.add("assume_independent")
        self.loop(extent, kind, "i", lambda i: body.emit(ctx.nested(i=i), self._count()),
                  annotations)

    def _lanes(self) -> int:
        return self.rng.choice([2, 3, 4, 8, natural_lanes(), 2 * natural_lanes(), 5])

    def _strip(self, body: Body, row: X | None = None, parallel: bool = False,
               private: frozenset = frozenset(), cells: list | None = None,
               reduce: bool = False) -> None:
        """Vector steps of L lanes over [0, extent), then a serial tail (or a guard)."""
        rng = self.rng
        lanes, extent = self._lanes(), self._extent(True)
        parallel = parallel or (row is None and not reduce and rng.random() < 0.15)
        independent = parallel or bool(private) or (not reduce and self._clean())
        if independent and not private:
            private = self._private(row is not None and parallel)
        cells = ([] if independent else self._cells()) if cells is None else cells
        ctx = Ctx(row=row, extent=extent, independent=independent, private=private, cells=cells)
        body_seed = rng.getrandbits(32)
        self.tags.add("tail")
        outer = "parallel" if parallel and row is None else "serial"

        def emit(i: X) -> None:  # the same statements in the vector steps and in the tail
            again = Body(self, random.Random(body_seed))
            if reduce:
                again._cell(ctx.nested(i=i), 0)
            again.emit(ctx.nested(i=i), again.rng.randint(1, 3))

        if rng.random() < 0.3:  # a guard inside the lanes instead of a tail loop
            steps = X(tir.floordiv(extent.expr + (lanes - 1), lanes),
                      lambda st: (-(-extent.fn(st)[0] // lanes), 0.0), "int32", 0,
                      -(-extent.hi // lanes))
            self.tags.add("guard")
            self.loop(steps, outer, "io", lambda io: self.loop(
                const(lanes, "int32"), "vectorize", "v",
                lambda v: self._guarded(io, v, lanes, extent, emit)))
            return
        steps = X(tir.floordiv(extent.expr, lanes), lambda st: (extent.fn(st)[0] // lanes, 0.0),
                  "int32", 0, extent.hi // lanes)
        self.loop(steps, outer, "io", lambda io: self.loop(
            const(lanes, "int32"), "vectorize", "v",
            lambda v: emit(_lane(io, v, lanes, self.limit - 1))))
        start = X(steps.expr * lanes, lambda st: (steps.fn(st)[0] * lanes, 0.0), "int32")
        tail = X(extent.expr - steps.expr * lanes,
                 lambda st: (extent.fn(st)[0] - steps.fn(st)[0] * lanes, 0.0), "int32", 0,
                 lanes)
        self.loop(tail, "serial", "t", lambda t: emit(X(
            start.expr + t.expr, lambda st: (start.fn(st)[0] + t.fn(st)[0], 0.0), "int32",
            0, self.limit - 1)))

    def _guarded(self, io: X, v: X, lanes: int, extent: X, emit) -> None:
        i = _lane(io, v, lanes, self.limit - 1)
        self.if_(X(i.expr < extent.expr, lambda st: (i.fn(st)[0] < extent.fn(st)[0], 0.0),
                   "bool"), lambda: emit(i))

    def _rows(self, body: Body) -> None:
        two_d = [s for s in self.specs if s.role == "data" and len(s.shape) == 2]
        kind = self.rng.choice(["serial", "unroll", "parallel"] if two_d else ["serial"])
        independent = kind == "parallel" or self._clean()
        private = self._private(kind == "parallel") if independent else frozenset()

        def inner(r: X) -> None:
            if self.rng.random() < 0.5:
                self._strip(body, row=r, parallel=kind == "parallel", private=private,
                            cells=[] if private else None)
                return
            extent = const(self.rng.randint(1, self.limit), "int32")
            ctx = Ctx(row=r, extent=extent, independent=bool(private), private=private)
            self.loop(extent, "vectorize", "j",
                      lambda j: body.emit(ctx.nested(i=j), self._count()))

        self.loop(const(self.rows, "int32"), kind, "r", inner)

    def _nested(self, body: Body) -> None:
        rng = self.rng
        l1, l2 = rng.choice([(2, 2), (2, 4), (4, 2), (2, 8), (4, 4), (3, 2)])
        if l1 * l2 > self.limit:
            return self._flat(body)
        independent = self._clean()
        ctx = Ctx(extent=const(l1 * l2, "int32"), independent=independent,
                  private=self._private(False) if independent else frozenset(),
                  cells=[] if independent else self._cells())
        self.tags.add("nested")
        self.loop(const(l1, "int32"), "vectorize", "u", lambda u: self.loop(
            const(l2, "int32"), "vectorize", "v",
            lambda v: body.emit(dataclasses.replace(ctx, i=_lane(u, v, l2, l1 * l2 - 1)),
                                self._count())))

    def _reduce(self, body: Body) -> None:
        """An allocated accumulator: init, reduce over a loop, store the result."""
        dtype = self.rng.choice([t for t in self.dtypes if t != "bool"] or ["int32"])
        name, view = self.allocate(dtype, 1, "acc")
        zero = const(0, "int32")
        body.store(Ctx(), name, [zero], body.value(Ctx(), dtype), view=view)
        cell = (name, view, zero, dtype)
        self.tags.add("reduce")
        if self.rng.random() < 0.5:
            self._strip(body, cells=[cell], reduce=True)
        else:
            extent = const(self.rng.randint(1, self.limit), "int32")
            ctx = Ctx(extent=extent, cells=[cell])

            def emit(i: X) -> None:
                c = ctx.nested(i=i)
                body._cell(c, 0)
                body.emit(c, self.rng.randint(0, 2))

            self.loop(extent, "vectorize", "i", emit)
        spec = self.writable(Ctx())
        body.store(Ctx(), spec, body.own_index(Ctx(), spec), body._load(name, view, [zero], dtype))


def _lane(outer: X, inner: X, lanes: int, top: int) -> X:
    """``outer * lanes + inner``: the element a vector lane works on."""
    return X(outer.expr * lanes + inner.expr,
             lambda st: (outer.fn(st)[0] * lanes + inner.fn(st)[0], 0.0), "int32", 0, top)


def _short(dtype: str) -> str:
    return {"float32": "f", "float64": "d", "bool": "b"}.get(dtype, dtype.replace("int", "i"))


def generate(seed: int) -> Case:
    """The random program number ``seed`` (the same program for the same seed)."""
    return Program(seed).build()
