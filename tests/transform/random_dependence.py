"""Random small programs whose vectorized loops carry dependences, for differential tests.

Each program has a loop marked vectorize -- strip-mined with a serial tail, alone, inside a
serial loop, or two nested vectorized loops -- whose body reads and writes the same buffers at
affine indices ``c*i + d``, at loop-invariant addresses (carried scalars), and through index
arrays (gathers, scatters, histograms), under ifs, lets, selects and local allocations. Nothing
promises that the iterations are independent: the vectorized build must compute what the
serial build computes (or keep the loop serial). A third of the programs are *clean*: they
write only element i of some buffers and read the others, so they are legal to vectorize and
keep vector code under test once loops with dependences stay serial.

Every access is in bounds for every input: 1-D buffers hold ``2*N + 2*PAD`` elements and index
arrays hold values in ``[0, N)``. Signed int overflow is undefined in TIR, so every int
expression carries a bound on its magnitude and stored ints are clamped to ``INT_LIMIT``.

Run many programs through ``differential.check`` (two worker processes)::

    python tests/transform/random_dependence.py --count 10000 --seed 0
"""

from __future__ import annotations

import argparse
import dataclasses
import random
import sys
import time

import numpy as np
from differential import Outcome, check, check_many, summary

import tir
from tir import ir_builder

PAD = 8  # |d| <= 4 plus an inner loop var <= 2 stays inside the padding
ROWS = 4  # rows of the 2-D buffers: an outer serial loop var or the outer vectorized var
INT_LIMIT = 1 << 24  # stored ints are clamped to [-INT_LIMIT, INT_LIMIT]
INT_SAFE = 1 << 30  # no int expression may reach this magnitude
F32, I32 = "float32", "int32"
FLOAT_EDGES = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e30, -1e30, 3.0e38, 1e-40, -1.0]
INT_EDGES = [INT_LIMIT, -INT_LIMIT, INT_LIMIT - 1, 0, -1, 1]


@dataclasses.dataclass(frozen=True)
class Param:
    """How to fill one argument: ``role`` is data, index, flag, K or n."""

    name: str
    role: str
    dtype: str
    shape: tuple = ()


@dataclasses.dataclass(frozen=True)
class Case:
    """One random program: its PrimFunc, how to make its arguments, and a summary line."""

    seed: int
    func: tir.PrimFunc
    summary: str
    params: tuple
    n: int  # the largest loop index is below n
    lo: int  # the first loop index
    clean: bool  # written only at element i: legal to vectorize (see Program)

    def make_inputs(self, seed: int = 0) -> list:
        """The arguments in parameter order (arrays and ints), drawn from ``seed``."""
        rng = np.random.default_rng([self.seed, seed])
        return [_make_arg(p, rng, self.n, self.lo) for p in self.params]

    def description(self) -> str:
        """The seed, the summary and the printed TIR."""
        return f"seed {self.seed}: {self.summary}\n{self.func}"


def _make_arg(p: Param, rng: np.random.Generator, n: int, lo: int):
    if p.role == "K":  # a loop-invariant address inside the range the loop touches
        return int(rng.integers(PAD, PAD + n))
    if p.role == "n":  # often the whole range, sometimes a shorter (or empty) one
        return n if rng.random() < 0.5 else int(rng.integers(lo, n + 1))
    if p.role == "index":  # few distinct values: duplicates in scatters and histograms
        distinct = int(rng.choice([1, 2, max(1, n // 4), max(1, n)]))
        return rng.integers(0, distinct, p.shape).astype(np.int32)
    if p.role == "flag":
        return np.full(p.shape, rng.choice([0, 0, 0, 1]), np.int32)
    if p.dtype == I32:
        return _edges(rng, rng.integers(-1000, 1000, p.shape), INT_EDGES).astype(np.int32)
    scale = 10.0 ** rng.integers(-3, 4, p.shape)  # mixed magnitudes: rounding depends on order
    return _edges(rng, rng.standard_normal(p.shape) * scale, FLOAT_EDGES).astype(np.float32)


def _edges(rng: np.random.Generator, values: np.ndarray, edges: list) -> np.ndarray:
    """``values`` with a sixth of its elements set to edge values, in a third of the arrays."""
    if rng.random() < 1 / 3:
        where = rng.random(values.shape) < 1 / 6
        values = np.where(where, rng.choice(edges, values.shape), values)
    return values


# ---------------------------------------------------------------- program shape


@dataclasses.dataclass(frozen=True)
class Shape:
    """The loop nest: ``structure``, lane counts, first index, trip count of the whole range."""

    structure: str  # strip, single, outer, nested, nested_strip
    lanes: tuple  # (L,) or (L1, L2) for two nested vectorized loops
    lo: int
    count: int
    symbolic: bool  # the range ends at a scalar param n instead of lo + count
    rows: int  # trips of the outer serial loop (structure "outer")

    @property
    def total(self) -> int:
        """Lanes of one vector step (L1 * L2 when nested)."""
        return int(np.prod(self.lanes))

    @property
    def n(self) -> int:
        """One past the largest loop index."""
        return self.lo + self.count

    def __str__(self) -> str:
        end = "n" if self.symbolic else self.n
        lanes = "x".join(map(str, self.lanes))
        extra = f", {self.rows} outer rows" if self.structure == "outer" else ""
        return f"{self.structure}, {lanes} lanes, i in [{self.lo}, {end}){extra}"


def draw_shape(rng: random.Random) -> Shape:
    """A random loop nest shape."""
    structure = rng.choices(["strip", "single", "outer", "nested", "nested_strip"],
                            [45, 15, 20, 8, 12])[0]
    if structure.startswith("nested"):
        lanes = rng.choice([(2, 2), (2, 4), (4, 2), (2, 8), (4, 4)])
    else:
        lanes = (rng.choice([2, 4, 8, 16]),)
    total = int(np.prod(lanes))
    lo = rng.choice([0, 0, 1, 3])
    single = structure in ("single", "nested")
    if single:
        count = total
    elif rng.random() < 0.05:
        count = 0  # an empty loop
    else:
        count = rng.randint(1, min(3 * total, 40))
    symbolic = not single and rng.random() < 0.2
    return Shape(structure, lanes, lo, count, symbolic, rng.randint(1, ROWS))


# ---------------------------------------------------------------- the program


class Program:
    """Draws the buffers of one program and emits its loops."""

    def __init__(self, rng: random.Random, shape: Shape):
        self.rng = rng
        self.shape = shape
        self.n = max(shape.n, 1)
        self.size = 2 * self.n + 2 * PAD
        self.params: list[Param] = []
        self.args: list = []
        self.ib = ir_builder.create()
        self.data = {F32: [], I32: []}  # BufferViews of 1-D data buffers, by dtype
        self.data2 = {F32: [], I32: []}  # 2-D data buffers
        self.cells = {F32: [], I32: []}  # (view, index): loop-invariant addresses
        self.readable = {F32: [], I32: []}  # 1-D buffers the body may read at any index
        self.flag = self.index = self.k = self.end = self.acc = None
        # A clean program writes only element i of its first buffers, reads the others, and
        # reduces into a cell nothing reads: legal to vectorize, so vector code gets tested.
        self.clean = rng.random() < 0.35
        # One reduction op for all of acc: mixing min and max on one cell depends on order.
        self.acc_op = rng.choice(["add", "min", "max"]) if self.clean else None
        self._declare()

    def _buffer(self, name: str, dtype: str, shape: tuple, role: str = "data"):
        buf = tir.decl_buffer(shape, dtype, name=name)
        self.params.append(Param(name, role, dtype, shape))
        self.args.append(buf)
        return self.ib.buffer_ptr(buf)

    def _scalar(self, name: str, role: str) -> tir.Var:
        v = tir.Var(name, I32)
        self.params.append(Param(name, role, I32))
        self.args.append(v)
        return v

    def _declare(self) -> None:
        rng = self.rng
        for name in ["fa", "fb", "fc"][:rng.randint(1, 3)]:
            self.data[F32].append(self._buffer(name, F32, (self.size,)))
        for name in ["ia", "ib"][:rng.randint(1, 2)]:
            self.data[I32].append(self._buffer(name, I32, (self.size,)))
        if rng.random() < 0.4:
            dtype = rng.choice([F32, I32])
            self.data2[dtype].append(self._buffer(f"{dtype[0]}2", dtype, (ROWS, self.size)))
        self.index = self._buffer("x", I32, (self.size,), "index")
        self.cells[F32].append((self._buffer("fs", F32, (1,)), 0))
        self.cells[I32].append((self._buffer("is", I32, (1,)), 0))
        self.flag = self._buffer("flag", I32, (1,), "flag")
        if rng.random() < 0.3:
            self.k = self._scalar("K", "K")
        if self.shape.symbolic:
            self.end = self._scalar("n", "n")
        if self.clean:
            self.acc = self._buffer("acc", I32, (1,))

    def build(self) -> tir.PrimFunc:
        """The PrimFunc: maybe a local copy of one buffer around the loops."""
        kind = self.rng.choice(["none", "none", "none", "array", "cell"])
        if kind == "none":
            self._prepare_body()
            self._emit_loops()
        else:
            self._with_local_copy(kind)
        return tir.PrimFunc(self.args, self.ib.get())

    def _prepare_body(self) -> None:
        """Which buffers the body reads freely; loop-invariant addresses (constant, K) in them."""
        for dtype in (F32, I32):
            self.readable[dtype] = self.data[dtype][1 if self.clean else 0:]
            if not self.readable[dtype]:
                continue
            view = self.rng.choice(self.readable[dtype])
            self.cells[dtype].append((view, PAD + self.rng.randint(0, self.n - 1)))
            if self.k is not None:
                self.cells[dtype].append((view, self.k + self.rng.randint(-2, 2)))

    def _with_local_copy(self, kind: str) -> None:
        """Copy a param into a local allocation, run the loops on it, copy it back."""
        ib, dtype = self.ib, self.rng.choice([F32, I32])
        if kind == "cell":
            param, _ = self.cells[dtype][0]
        else:
            param = self.data[dtype][0]
        extent = param.shape[0].value
        local = ib.allocate(dtype, (extent,), name=f"{param.name}_local")
        with ib.for_range(0, extent, name="j") as j:
            local[j] = param[j]
        if kind == "cell":
            self.cells[dtype][0] = (local, 0)
        else:
            self.data[dtype][0] = local
        self._prepare_body()
        self._emit_loops()
        with ib.for_range(0, extent, name="j") as j:
            param[j] = local[j]

    def _emit_loops(self) -> None:
        body_seed = self.rng.getrandbits(32)

        def body(i, row):
            Body(self, random.Random(body_seed), i, row).emit()

        if self.shape.structure == "outer":
            with self.ib.for_range(0, self.shape.rows, name="r") as r:
                self._strip(body, r)
        else:
            self._strip(body, None)

    def _strip(self, body, row) -> None:
        """The vector steps over [lo, end), then a serial tail."""
        ib, shape = self.ib, self.shape
        lo, total = shape.lo, shape.total
        if shape.structure in ("single", "nested"):
            self._vector_step(body, tir.const(lo), row)
            return
        end = self.end if self.end is not None else tir.const(shape.n)
        steps = tir.floordiv(end - lo, total)
        with ib.for_range(0, steps, name="io") as io:
            self._vector_step(body, lo + io * total, row)
        with ib.for_range(0, end - lo - steps * total, name="t") as t:
            tail_row = row
            if row is None and len(shape.lanes) == 2:  # the outer vectorized var's stand-in
                tail_row = tir.floordiv(t, shape.lanes[1])
            body(lo + steps * total + t, tail_row)

    def _vector_step(self, body, base, row) -> None:
        ib, lanes = self.ib, self.shape.lanes
        if len(lanes) == 1:
            with ib.for_range(0, lanes[0], kind="vectorize", name="v") as v:
                body(base + v, row)
            return
        with ib.for_range(0, lanes[0], kind="vectorize", name="u") as u:
            with ib.for_range(0, lanes[1], kind="vectorize", name="v") as v:
                body(base + u * lanes[1] + v, u if row is None else row)


# ---------------------------------------------------------------- the loop body


class Body:
    """Emits one loop body at index ``i``; the same rng seed emits the same body again."""

    def __init__(self, prog: Program, rng: random.Random, i, row):
        self.p = prog
        self.rng = rng
        self.ib = prog.ib
        self.i = i
        self.row = row
        self.extra = tir.const(0)  # the inner serial loop var, added to affine indices
        self.lets = {F32: [], I32: []}  # (var, bound) of lets in scope
        self.temps = {F32: [], I32: []}  # per-iteration allocations in scope

    def emit(self) -> None:
        """One to four items."""
        for _ in range(self.rng.randint(1, 4)):
            self.item(depth=0)

    def item(self, depth: int) -> None:
        if self.p.clean:
            kinds, weights = ["store", "reduce"], [40, 10]
        else:
            kinds, weights = ["store", "cell", "scatter", "histogram", "counter"], [35, 16, 6, 7, 4]
        if depth < 2:
            kinds += ["if", "let", "loop", "alloc"] + ["flag"] * (not self.p.clean)
            weights += [11, 8, 5, 5, 5]
        getattr(self, "_" + self.rng.choices(kinds, weights[:len(kinds)])[0])(depth)

    def _nested(self, depth: int, count: int) -> None:
        """``count`` items in a scope of their own: lets and temps end with it."""
        lets = {t: list(v) for t, v in self.lets.items()}
        temps = {t: list(v) for t, v in self.temps.items()}
        for _ in range(count):
            self.item(depth + 1)
        self.lets, self.temps = lets, temps

    # ------------------------------------------------------------ statements

    def _dtype(self) -> str:
        return self.rng.choice([F32, F32, I32])

    def _store(self, depth: int) -> None:
        dtype = self._dtype()
        view, index = self._own_element(dtype) if self.p.clean else self._affine_target(dtype)
        view[index] = self.stored(dtype)

    def _reduce(self, depth: int) -> None:
        """acc = acc + (v & 1023), min or max: an int reduction, exact in any order."""
        acc, value, op = self.p.acc, self.value(I32, 1)[0], self.p.acc_op
        if op == "add":  # at most 4 rows * 48 iterations * 3 k: no overflow
            acc[0] = acc[0] + (value & 1023)
        else:
            acc[0] = tir.min(acc[0], value) if op == "min" else tir.max(acc[0], value)

    def _cell(self, depth: int) -> None:
        """A carried scalar: plain, or a reduction ``s = s op value``."""
        dtype = self._dtype()
        view, index = self.rng.choice(self.p.cells[dtype])
        if self.rng.random() < 0.6:
            view[index] = _clamp(*self._combine(dtype, (view[index], _limit(dtype)),
                                                self.value(dtype, 1)))
        else:
            view[index] = self.stored(dtype)

    def _scatter(self, depth: int) -> None:
        dtype = self._dtype()
        view = self.rng.choice(self.p.data[dtype])
        view[self._gather_index()] = self.stored(dtype)

    def _histogram(self, depth: int) -> None:
        dtype = self._dtype()
        view, index = self.rng.choice(self.p.data[dtype]), self._gather_index()
        if dtype == I32 and self.rng.random() < 0.5:
            view[index] = _clamp(view[index] + 1, INT_LIMIT + 1)
            return
        view[index] = _clamp(*_add((view[index], _limit(dtype)), self.value(dtype, 1)))

    def _counter(self, depth: int) -> None:
        """``j += 1; a[j mod n] = value``: the store address depends on the previous lane."""
        view, index = self.p.cells[I32][0]
        view[index] = _clamp(view[index] + 1, INT_LIMIT + 1)
        dtype = self._dtype()
        target = self.rng.choice(self.p.data[dtype])
        target[tir.floormod(view[index], self.p.n) + PAD] = self.stored(dtype)

    def _if(self, depth: int) -> None:
        cond = self.condition(uniform=self.rng.random() < 0.4)
        with self.ib.if_scope(cond):
            self._nested(depth, self.rng.randint(1, 2))
        if self.rng.random() < 0.3:
            with self.ib.else_scope():
                self._nested(depth, 1)

    def _flag(self, depth: int) -> None:
        """An early exit without break: work while flag == 0; some lane sets it."""
        flag = self.p.flag
        with self.ib.if_scope(flag[0] == 0):
            self._nested(depth, self.rng.randint(1, 2))
        with self.ib.if_scope(self.condition(uniform=False)):
            flag[0] = self.rng.choice([1, -1])

    def _let(self, depth: int) -> None:
        dtype = self._dtype()
        value, bound = self.value(dtype, 2)
        self.lets[dtype].append((self.ib.let("t", value), bound))
        self.item(depth + 1)  # a let is in scope for the rest of its block: give it one

    def _loop(self, depth: int) -> None:
        outer = self.extra
        with self.ib.for_range(0, self.rng.randint(1, 3), name="k") as k:
            self.extra = k
            self._nested(depth, self.rng.randint(1, 2))
        self.extra = outer

    def _alloc(self, depth: int) -> None:
        """A per-iteration scratch of two elements, written before any read."""
        dtype = self._dtype()
        temp = self.ib.allocate(dtype, (2,), name="tmp")
        temp[0] = self.stored(dtype)
        temp[1] = self.stored(dtype)
        self.temps[dtype].append(temp)
        self.item(depth + 1)

    # ------------------------------------------------------------ indices

    def affine(self) -> tir.PrimExpr:
        """``c*i + d`` (c in 1, 2, -1, 0) shifted into the padded buffer, plus the inner k."""
        c, d, n = self.rng.choice([1, 1, 1, 2, -1, 0]), self.rng.randint(-4, 4), self.p.n
        if c == 0:
            if self.p.k is not None and self.rng.random() < 0.5:
                return self.p.k + self.rng.randint(-2, 2)
            return tir.const(PAD + self.rng.randint(0, n - 1) + d)
        base = n - 1 + PAD if c == -1 else PAD
        return self.i * c + (base + d) + self.extra

    def _gather_index(self) -> tir.PrimExpr:
        return self.p.index[self.affine()] + (PAD + self.rng.randint(-4, 4))

    def _row(self) -> tir.PrimExpr:
        if self.row is not None and self.rng.random() < 0.7:
            return self.row
        return tir.const(self.rng.randint(0, ROWS - 1))

    def _own_element(self, dtype: str) -> tuple:
        """Element i of a buffer a clean program writes (1-D, or 2-D with any row)."""
        if self.p.data2[dtype] and self.rng.random() < 0.4:
            return self.rng.choice(self.p.data2[dtype]), (self._row(), self.i + PAD)
        return self.p.data[dtype][0], self.i + PAD

    def _read_target(self, dtype: str) -> tuple:
        """Where a load reads: anywhere, or in a clean program element i of what it writes."""
        if not self.p.clean:
            return self._affine_target(dtype)
        if self.p.readable[dtype] and self.rng.random() < 0.6:
            return self.rng.choice(self.p.readable[dtype]), self.affine()
        return self._own_element(dtype)

    def _affine_target(self, dtype: str) -> tuple:
        """A data buffer of ``dtype`` and an affine index into it (2-D: a row too)."""
        if self.p.data2[dtype] and self.rng.random() < 0.4:
            return self.rng.choice(self.p.data2[dtype]), (self._row(), self.affine())
        return self.rng.choice(self.p.data[dtype]), self.affine()

    # ------------------------------------------------------------ values

    def stored(self, dtype: str) -> tir.PrimExpr:
        """A value to store: ints clamped to INT_LIMIT when they may exceed it."""
        return _clamp(*self.value(dtype, self.rng.randint(0, 2)))

    def value(self, dtype: str, depth: int) -> tuple:
        """(expression, bound on its magnitude); the bound is None for floats."""
        if depth == 0 or self.rng.random() < 0.25:
            return self.leaf(dtype)
        a, b = self.value(dtype, depth - 1), self.value(dtype, depth - 1)
        kind = self.rng.choice(["combine", "combine", "select", "let", "scale"])
        if kind == "select":
            cond = self.condition(uniform=self.rng.random() < 0.3)
            return tir.Select(cond, a[0], b[0]), _max_bound(a[1], b[1])
        if kind == "let":  # let w = a in w op b
            var = tir.Var("w", dtype)
            body, bound = self._combine(dtype, (var, a[1]), b)
            return tir.Let(var, a[0], body), bound
        if kind == "scale" and dtype == I32:
            if self.rng.random() < 0.3:
                return a[0] & 1023, 1023
            return _mul(a, self.rng.choice([-3, -1, 2, 3]))
        return self._combine(dtype, a, b)

    def _combine(self, dtype: str, a: tuple, b: tuple) -> tuple:
        """a + b, a - b, min, max, or (floats) a * b; falls back to ``a`` on a too large bound."""
        op = self.rng.choice(["add", "sub", "min", "max"] + (["mul"] if dtype == F32 else []))
        if op == "min":
            return tir.min(a[0], b[0]), _max_bound(a[1], b[1])
        if op == "max":
            return tir.max(a[0], b[0]), _max_bound(a[1], b[1])
        if op == "mul":
            return a[0] * b[0], None
        result = _add(a, b) if op == "add" else _add(a, b, sign=-1)
        return result if result[1] is None or result[1] < INT_SAFE else a

    def leaf(self, dtype: str) -> tuple:
        """A load (affine, cell, gather, temp), a constant, a loop var or a let var."""
        rng = self.rng
        kinds = ["load", "load", "load", "cell", "gather", "const", "index_var"]
        kinds += ["let"] * bool(self.lets[dtype]) + ["temp"] * bool(self.temps[dtype])
        kind = rng.choice(kinds + (["cast"] if dtype == F32 else []))
        if kind == "load" or kind == "gather" and not self.p.readable[dtype]:
            view, index = self._read_target(dtype)
            return view[index], _limit(dtype)
        if kind == "cell":
            view, index = rng.choice(self.p.cells[dtype])
            return view[index], _limit(dtype)
        if kind == "gather":
            return rng.choice(self.p.readable[dtype])[self._gather_index()], _limit(dtype)
        if kind == "let":
            return rng.choice(self.lets[dtype])
        if kind == "temp":
            return rng.choice(self.temps[dtype])[rng.randint(0, 1)], _limit(dtype)
        if kind == "cast":
            return tir.Cast(F32, self.leaf(I32)[0]), None
        if kind == "index_var":
            index = self.i + self.extra if rng.random() < 0.7 else self.p.index[self.affine()]
            return (index, 2 * self.p.size) if dtype == I32 else (tir.Cast(F32, index), None)
        if dtype == F32:
            return tir.const(rng.choice([0.0, 1.0, -2.5, 0.1, 3.0, 1e20]), F32), None
        value = rng.randint(-5, 5)
        return tir.const(value), abs(value)

    def condition(self, uniform: bool) -> tir.PrimExpr:
        """A bool: uniform ones read cells, the flag or K; others depend on the lane."""
        rng = self.rng
        compare = rng.choice([tir.LT, tir.LE, tir.EQ, tir.NE, tir.GT])
        if uniform:
            options = [(self.p.flag[0], tir.const(0))]
            dtype = self._dtype()
            view, index = rng.choice(self.p.cells[dtype])
            options.append((view[index], self.leaf(dtype)[0] if rng.random() < 0.3
                            else tir.const(0, dtype)))
            if self.p.k is not None:
                options.append((self.p.k, tir.const(PAD + self.p.n // 2)))
            return compare(*rng.choice(options))
        if rng.random() < 0.25:
            return tir.floormod(self.i, rng.choice([2, 3])) == 0
        dtype = self._dtype()
        return compare(self.leaf(dtype)[0], self.leaf(dtype)[0])


def _limit(dtype: str):
    """The bound on a value loaded from memory: stored ints never exceed INT_LIMIT."""
    return INT_LIMIT if dtype == I32 else None


def _max_bound(a, b):
    return None if a is None else max(a, b)


def _add(a: tuple, b: tuple, sign: int = 1) -> tuple:
    expr = a[0] + b[0] if sign > 0 else a[0] - b[0]
    return expr, None if a[1] is None else a[1] + b[1]


def _mul(a: tuple, c: int) -> tuple:
    if a[1] * abs(c) >= INT_SAFE:
        return a
    return a[0] * c, a[1] * abs(c)


def _clamp(expr: tir.PrimExpr, bound) -> tir.PrimExpr:
    """An int expression clamped to [-INT_LIMIT, INT_LIMIT] when its bound exceeds that."""
    if bound is None or bound <= INT_LIMIT:
        return expr
    return tir.max(tir.min(expr, INT_LIMIT), -INT_LIMIT)


def generate(seed: int) -> Case:
    """The random program number ``seed``."""
    rng = random.Random(seed)
    shape = draw_shape(rng)
    prog = Program(rng, shape)
    func = prog.build()
    summary = f"{'clean' if prog.clean else 'dependent'} {shape}"
    return Case(seed, func, summary, tuple(prog.params), prog.n, shape.lo, prog.clean)


# ---------------------------------------------------------------- many programs


def check_seeds(seeds: range, interp_every: int = 1) -> list[Outcome]:
    """The outcomes of programs ``seeds``; the interpreter runs on every ``interp_every``-th."""
    return [check(generate(s), interp=s % interp_every == 0) for s in seeds]


def report(outcomes: list[Outcome], elapsed: float, show: int = 3) -> str:
    """A summary, then the TIR of the first ``show`` failures."""
    count = len(outcomes)
    lines = [f"ran {count} programs in {elapsed:.1f} s ({1000 * elapsed / max(count, 1):.0f} ms "
             "each)"] + summary(outcomes)
    for o in [o for o in outcomes if o.kind != "agree"][:show]:
        lines += ["", f"== {o.kind}: {o.detail}", generate(o.seed).description()]
    return "\n".join(lines)


def main(argv: list | None = None) -> int:
    """Command line: check many programs, print the report; exit status 1 on any failure."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=1000, help="how many programs")
    parser.add_argument("--seed", type=int, default=0, help="seed of the first program")
    parser.add_argument("--workers", type=int, default=2, help="processes (1: in this one)")
    parser.add_argument("--interp-every", type=int, default=1, metavar="K",
                        help="run the interpreter on every K-th program only (it is slow)")
    parser.add_argument("--show", type=int, default=3, help="print the TIR of this many failures")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    seeds = range(args.seed, args.seed + args.count)
    outcomes = check_many(check_seeds, seeds, args.workers, args.interp_every)
    print(report(outcomes, time.perf_counter() - start, args.show))
    return 1 if any(o.kind != "agree" for o in outcomes) else 0


if __name__ == "__main__":
    sys.exit(main())
