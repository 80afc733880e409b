"""The vectorizer's expression rules: one ``visit_<node>`` method per expression kind.

``ExprVectorizer(var, lanes)`` rewrites an expression of the body of
``for var in vectorized(min, min + lanes)`` so that it computes all
iterations at once. The loop var becomes ``Ramp(min, 1, lanes)``; a value
that depends on it is *widened* from ``n`` lanes to ``lanes * n`` lanes
(lane ``l * n + k`` is lane ``k`` of iteration ``l``); a value that does not
is left as it is (the very same object) and is replicated only where it meets
a widened one. The rules keep ramps as ramps where the algebra allows
(``scalar + ramp``, ``ramp * positive scalar``, ``ramp // c`` ...), because a
ramp index is one contiguous vector load.

What cannot be vectorized raises ``NeedScalarize(reason)``; the statement
rules (stmt_rules.py) catch it and keep that statement in a serial loop.

As in TVM, only the last index of an access may depend on the var. With
``any_dim`` (config ``tir.vectorize.any_dim_access``, which ``codegen.build``
turns on) any index may (``A[i, c]`` over ``i``: a column; two nested
vectorized loops over ``B[i, j] = A[j, i]``: a transpose), and
``tir.if_then_else(cond, x, pad)`` whose ``cond`` depends on the var becomes
``Select(cond, x', pad)`` where every load of ``x'`` is masked by ``cond``
(a padded read: lanes outside the buffer are not read and give ``pad``).
"""

from __future__ import annotations

from collections.abc import Callable

from tir import dtype as dt
from tir import op
from tir.analysis.var_use import uses_var
from tir.arith import Analyzer
from tir.expr import (
    EQ,
    GE,
    GT,
    LE,
    LT,
    NE,
    Add,
    And,
    BinaryOpNode,
    Broadcast,
    BufferLoad,
    Call,
    Cast,
    Div,
    FloatImm,
    FloorDiv,
    FloorMod,
    IntImm,
    Let,
    Max,
    Min,
    Mod,
    Mul,
    Not,
    Or,
    PrimExpr,
    Ramp,
    Select,
    Shuffle,
    StringImm,
    Sub,
    Var,
)
from tir.functor import StmtExprMutator
from tir.intrin import is_elementwise, is_pure

from ..analysis.branch_safety import divisor_needs_guard, is_in_bounds
from ..remarks import VectorizeError
from .lanes import (
    SCALABLE_FROM_VECTORS,
    VECTORS_OF_SCALABLE,
    MixedLanesError,
    ScalableLanes,
    concat,
    lane_of,
    lanes,
    lanes_arg,
    repeat_each,
    replicate,
    with_lanes,
)

#: TVM's message for an access to a buffer of scalable vector elements that would widen.
SCALABLE_BUFFER = "Vectorizing over scalable buffer elements is not supported in vectorizer."


#: A Shuffle picks lanes by constant index: none can be written for a scalable vector.
SHUFFLE_SCALABLE = "a Shuffle of scalable vectors (lanes of unknown count) is not supported."


class NeedScalarize(Exception):
    """Raised by a rule that cannot vectorize; the enclosing statement stays serial."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


class ExprVectorizer(StmtExprMutator):
    """Rewrites expressions over the loop var ``var`` into ``lanes``-wide vector expressions."""

    def __init__(self, var: Var, lanes_: int | ScalableLanes, min_: PrimExpr | None = None,
                 analyzer: Analyzer | None = None, any_dim: bool = False):
        self.var = var
        #: Whether any index of an access may widen, and if_then_else may mask its loads.
        self.any_dim = any_dim
        #: Inside a branch of a masked if_then_else: the bool vector, one lane per
        #: iteration, of the iterations that evaluate it (None: all of them).
        self.mask: PrimExpr | None = None
        #: One note per if_then_else whose branches became masked (padded reads).
        self.masked_reads: list[str] = []
        self.lanes = lanes_
        #: A loop of extent ``k * vscale()``: only scalars widen (see lanes.py).
        self.scalable = isinstance(lanes_, ScalableLanes)
        self.min = op.const(0, var.dtype) if min_ is None else min_
        self.ramp = Ramp(self.min, op.const(1, var.dtype), lanes_arg(lanes_))
        self.analyzer = analyzer or Analyzer()
        #: id(var) -> the vector var that replaces a let-bound var whose value was widened.
        self.let_map: dict[int, Var] = {}
        self._buffers_checked: set[int] = set()

    # ------------------------------------------------------------ widening helpers

    def widened(self, new: PrimExpr, old: PrimExpr) -> bool:
        """Whether ``new`` (the rewrite of ``old``) depends on the loop var."""
        return lanes(new) != lanes(old)

    def times(self, n: int | ScalableLanes) -> int | ScalableLanes:
        """The lanes of a widened value that had ``n`` lanes per iteration (``L * n``).

        Fixed and scalable vectors do not mix: a scalable loop widens scalars only,
        a fixed loop does not widen scalable vectors (``MixedLanesError``, TVM's errors).
        """
        if isinstance(n, ScalableLanes) or self.scalable and n != 1:
            raise MixedLanesError(SCALABLE_FROM_VECTORS if self.scalable else VECTORS_OF_SCALABLE)
        return self.lanes if n == 1 else self.lanes * n

    def wide(self, new: PrimExpr, old_lanes: int | ScalableLanes) -> PrimExpr:
        """``new`` with ``lanes * old_lanes`` lanes: replicated if it was not widened."""
        total = self.times(old_lanes)
        if lanes(new) == total:
            return new
        return replicate(new, self.lanes)

    def spread(self, new: PrimExpr, old: PrimExpr, n: int) -> PrimExpr:
        """A one-lane-per-iteration value used where each iteration has ``n`` lanes."""
        total = self.times(n)
        if self.widened(new, old):
            return repeat_each(new, n)
        return replicate(new, total)

    def fixed_lanes(self, node: Ramp | Broadcast) -> int:
        """The lane count of a ramp or broadcast that must widen (never a scalable one)."""
        if self.scalable or not isinstance(node.lanes, int):
            raise MixedLanesError(SCALABLE_FROM_VECTORS if self.scalable else VECTORS_OF_SCALABLE)
        return node.lanes

    # ------------------------------------------------------------ leaves

    def visit_var(self, node: Var) -> PrimExpr:
        """The loop var is Ramp(min, 1, lanes); a let var with a vector value is its vector var."""
        if node is self.var:
            return self.ramp
        return self.let_map.get(id(node), node)

    def visit_int_imm(self, node: IntImm) -> PrimExpr:
        """Constants do not depend on the loop var (broadcast where they meet vectors)."""
        return node

    def visit_float_imm(self, node: FloatImm) -> PrimExpr:
        """Constants do not depend on the loop var (broadcast where they meet vectors)."""
        return node

    def visit_string_imm(self, node: StringImm) -> PrimExpr:
        """Strings (extern names) are kept."""
        return node

    # ------------------------------------------------------------ arithmetic

    def binary(self, node: BinaryOpNode, build: Callable,
               merge: Callable | None = None) -> PrimExpr:
        """The rule shared by two-operand nodes: widen both sides, then ``merge`` or ``build``."""
        a, b = self.visit_expr(node.a), self.visit_expr(node.b)
        if a is node.a and b is node.b:
            return node
        if not (self.widened(a, node.a) or self.widened(b, node.b)):
            return build(a, b)
        n = lanes(node.a)
        a, b = self.wide(a, n), self.wide(b, n)
        if isinstance(a, Broadcast) and isinstance(b, Broadcast):  # the same in every lane
            return Broadcast(build(a.value, b.value), a.lanes)
        merged = merge(a, b) if merge is not None else None
        return build(a, b) if merged is None else merged

    def visit_add(self, node: Add) -> PrimExpr:
        """Lane-wise add; scalar + Ramp(b, s) = Ramp(scalar + b, s), ramp + ramp is a ramp."""
        return self.binary(node, op.add, lambda a, b: _add_sub_ramps(a, b, op.add))

    def visit_sub(self, node: Sub) -> PrimExpr:
        """Lane-wise subtract; Ramp(b, s) - x = Ramp(b - x, s), x - Ramp(b, s) = Ramp(x - b, -s)."""
        return self.binary(node, op.sub, lambda a, b: _add_sub_ramps(a, b, op.sub))

    def visit_mul(self, node: Mul) -> PrimExpr:
        """Lane-wise multiply; Ramp(b, s) * x = Ramp(b * x, s * x) when x is provably positive."""
        return self.binary(node, Mul, self._mul_ramp)

    def _mul_ramp(self, a: PrimExpr, b: PrimExpr) -> PrimExpr | None:
        """ramp * x stays a ramp when x is provably positive: Ramp(base * x, stride * x)."""
        if isinstance(b, Ramp):
            a, b = b, a
        if not (isinstance(a, Ramp) and isinstance(b, Broadcast)):
            return None
        x = b.value
        if not self.analyzer.can_prove(op.greater(x, op.const(0, x.dtype))):
            return None
        return Ramp(op.mul(a.base, x), op.mul(a.stride, x), a.lanes)

    def visit_div(self, node: Div) -> PrimExpr:
        """Truncated division; ramp patterns as in ``_div_ramp`` when the ramp is non-negative."""
        guarded = self._masked_division(node, Div)
        return guarded if guarded is not None else self.binary(
            node, Div, lambda a, b: self._div_ramp(a, b, floor=False, mod=False))

    def visit_mod(self, node: Mod) -> PrimExpr:
        """Truncated remainder; ramp patterns as in ``_div_ramp`` when the ramp is non-negative."""
        guarded = self._masked_division(node, Mod)
        return guarded if guarded is not None else self.binary(
            node, Mod, lambda a, b: self._div_ramp(a, b, floor=False, mod=True))

    def visit_floor_div(self, node: FloorDiv) -> PrimExpr:
        """Floor division; Ramp(b, s) // c is a ramp or a broadcast when provable."""
        guarded = self._masked_division(node, FloorDiv)
        return guarded if guarded is not None else self.binary(
            node, FloorDiv, lambda a, b: self._div_ramp(a, b, floor=True, mod=False))

    def visit_floor_mod(self, node: FloorMod) -> PrimExpr:
        """Floor remainder; Ramp(b, s) % c is a ramp or a broadcast when provable."""
        guarded = self._masked_division(node, FloorMod)
        return guarded if guarded is not None else self.binary(
            node, FloorMod, lambda a, b: self._div_ramp(a, b, floor=True, mod=True))

    def _masked_division(self, node: BinaryOpNode, build: Callable) -> PrimExpr | None:
        """In a masked branch, an integer division that may trap (by 0, or INT_MIN by -1)
        divides by 1 in the iterations that do not evaluate it; None when none may trap."""
        if self.mask is None or not divisor_needs_guard(node, self.analyzer):
            return None
        n = lanes(node)
        a = self.wide(self.visit_expr(node.a), n)
        b = self.wide(self.visit_expr(node.b), n)
        one = replicate(op.const(1, dt.element_of(node.dtype)), lanes(b))
        return build(a, Select(repeat_each(self.mask, n), b, one))

    def _div_ramp(self, a: PrimExpr, b: PrimExpr, floor: bool, mod: bool) -> PrimExpr | None:
        """Ramp(base, s, n) divided by a positive constant c, when the pattern is provable.

        If c divides s, every lane has base's remainder and the quotient steps
        by s // c. If base is known to be r modulo c and r + s * (n - 1) < c,
        no lane crosses a multiple of c: the quotient is the same in every
        lane and the remainder is Ramp(r, s, n). Truncated division agrees
        with floor division when base is provably non-negative.
        """
        if not (isinstance(a, Ramp) and isinstance(b, Broadcast)):
            return None
        c, s = b.value, a.stride
        if not (isinstance(c, IntImm) and c.value > 0 and isinstance(s, IntImm) and s.value >= 0):
            return None
        if not floor and self.analyzer.const_int_bound(a.base).min_value < 0:
            return None
        quot = op.floordiv if floor else op.truncdiv
        rem = op.floormod if floor else op.truncmod
        if s.value % c.value == 0:
            if mod:
                return Broadcast(self.analyzer.simplify(rem(a.base, c)), a.lanes)
            return Ramp(self.analyzer.simplify(quot(a.base, c)), s.value // c.value, a.lanes)
        if not isinstance(a.lanes, int):
            return None  # how far the lanes reach is only known at run time
        residue = self.analyzer.modular_set(a.base)
        if residue.coeff % c.value != 0:
            return None
        r = residue.base % c.value
        if r + s.value * (a.lanes - 1) >= c.value:
            return None
        if mod:
            return Ramp(op.const(r, a.base.dtype), s, a.lanes)
        return Broadcast(self.analyzer.simplify(quot(a.base, c)), a.lanes)

    def visit_min(self, node: Min) -> PrimExpr:
        """Lane-wise minimum."""
        return self.binary(node, Min)

    def visit_max(self, node: Max) -> PrimExpr:
        """Lane-wise maximum."""
        return self.binary(node, Max)

    # ------------------------------------------------------------ comparisons and logic

    def visit_eq(self, node: EQ) -> PrimExpr:
        """Lane-wise comparison (a bool vector)."""
        return self.binary(node, EQ)

    def visit_ne(self, node: NE) -> PrimExpr:
        """Lane-wise comparison (a bool vector)."""
        return self.binary(node, NE)

    def visit_lt(self, node: LT) -> PrimExpr:
        """Lane-wise comparison (a bool vector)."""
        return self.binary(node, LT)

    def visit_le(self, node: LE) -> PrimExpr:
        """Lane-wise comparison (a bool vector)."""
        return self.binary(node, LE)

    def visit_gt(self, node: GT) -> PrimExpr:
        """Lane-wise comparison (a bool vector)."""
        return self.binary(node, GT)

    def visit_ge(self, node: GE) -> PrimExpr:
        """Lane-wise comparison (a bool vector)."""
        return self.binary(node, GE)

    def visit_and(self, node: And) -> PrimExpr:
        """Lane-wise logical and."""
        return self.binary(node, And)

    def visit_or(self, node: Or) -> PrimExpr:
        """Lane-wise logical or."""
        return self.binary(node, Or)

    def visit_not(self, node: Not) -> PrimExpr:
        """Lane-wise logical not."""
        a = self.visit_expr(node.a)
        return node if a is node.a else Not(a)

    # ------------------------------------------------------------ other expressions

    def visit_select(self, node: Select) -> PrimExpr:
        """Lane-wise select; a scalar condition is broadcast (or repeated per lane group)."""
        cond = self.visit_expr(node.condition)
        t, f = self.visit_expr(node.true_value), self.visit_expr(node.false_value)
        if cond is node.condition and t is node.true_value and f is node.false_value:
            return node
        widened = [self.widened(new, old) for new, old in
                   ((cond, node.condition), (t, node.true_value), (f, node.false_value))]
        if not any(widened):
            return Select(cond, t, f)
        n = lanes(node.true_value)
        if lanes(node.condition) == n:
            cond = self.wide(cond, n)
        else:  # a scalar condition choosing between n-lane values
            cond = self.spread(cond, node.condition, n)
        return Select(cond, self.wide(t, n), self.wide(f, n))

    def visit_cast(self, node: Cast) -> PrimExpr:
        """Lane-wise cast to the same element type with the new lane count."""
        value = self.visit_expr(node.value)
        if value is node.value:
            return node
        return Cast(with_lanes(node.dtype, lanes(value)), value)

    def visit_ramp(self, node: Ramp) -> PrimExpr:
        """A ramp inside the loop (from an inner vectorized loop): one ramp per iteration.

        Iteration l holds Ramp(base_l, stride_l, n). If base is itself a ramp
        stepping by stride * n, the iterations are contiguous and merge into
        Ramp(base_0, stride, L * n); otherwise the per-iteration ramps are
        concatenated with a Shuffle.
        """
        base, stride = self.visit_expr(node.base), self.visit_expr(node.stride)
        if base is node.base and stride is node.stride:
            return node
        if not (self.widened(base, node.base) or self.widened(stride, node.stride)):
            return Ramp(base, stride, node.lanes)
        n = self.fixed_lanes(node)
        if isinstance(base, Ramp) and not self.widened(stride, node.stride):
            step = op.mul(stride, op.const(n, stride.dtype))
            if self.analyzer.can_prove_equal(base.stride, step):
                return Ramp(base.base, stride, self.lanes * n)
        base, stride = self.wide(base, 1), self.wide(stride, 1)
        return concat([Ramp(lane_of(base, k), lane_of(stride, k), n) for k in range(self.lanes)])

    def visit_broadcast(self, node: Broadcast) -> PrimExpr:
        """Broadcast(v, n) of a per-iteration v: each of v's lanes repeated n times."""
        value = self.visit_expr(node.value)
        if value is node.value:
            return node
        if self.widened(value, node.value):  # one value per iteration, n lanes each
            return repeat_each(value, self.fixed_lanes(node))
        return Broadcast(value, node.lanes)

    def visit_shuffle(self, node: Shuffle) -> PrimExpr:
        """Shuffle lanes per iteration: iteration l picks from its own slice of each vector."""
        vectors = [self.visit_expr(v) for v in node.vectors]
        if all(new is old for new, old in zip(vectors, node.vectors)):
            return node
        if not any(self.widened(new, old) for new, old in zip(vectors, node.vectors)):
            return Shuffle(vectors, node.indices)
        sizes = [lanes(v) for v in node.vectors]
        if self.scalable or any(isinstance(size, ScalableLanes) for size in sizes):
            # lane indices of a vscale-long vector are not known when compiling
            raise MixedLanesError(SHUFFLE_SCALABLE)
        starts = [sum(sizes[:i]) for i in range(len(sizes))]
        owner = []  # for each old concatenated lane: (vector start, vector size)
        for start, size in zip(starts, sizes):
            owner.extend([(start, size)] * size)
        indices = []
        for it in range(self.lanes):
            for index in node.indices:
                start, size = owner[index.value]
                indices.append(self.lanes * start + it * size + (index.value - start))
        wide = [self.wide(new, size) for new, size in zip(vectors, sizes)]
        return Shuffle(wide, indices)

    def visit_let(self, node: Let) -> PrimExpr:
        """A let whose value became a vector binds a new vector var of that dtype."""
        return self.rebind_let(node, self.visit_expr, Let)

    def rebind_let(self, node, visit_body, make):
        """Vectorize a ``Let``/``LetStmt``: a widened value gets a new var of its dtype."""
        value = self.visit_expr(node.value)
        var = node.var
        if self.widened(value, node.value):
            var = Var(node.var.name, value.dtype)
        saved = self.let_map.get(id(node.var))
        if var is not node.var:
            self.let_map[id(node.var)] = var
        try:
            body = visit_body(node.body)
        finally:
            _restore(self.let_map, id(node.var), saved)
        if var is node.var and value is node.value and body is node.body:
            return node
        return make(var, value, body)

    # ------------------------------------------------------------ calls and loads

    def visit_call(self, node: Call) -> PrimExpr:
        """Element-wise intrinsics widen; if_then_else needs a uniform condition; else scalarize."""
        if not is_pure(node.op):  # vector code would run it once instead of once per lane
            raise NeedScalarize(f"{_call_name(node)} has side effects")
        if node.op == "tir.if_then_else":
            return self._if_then_else(node)
        if is_elementwise(node.op):
            return self._elementwise_call(node)
        args = [self.visit_expr(a) for a in node.args]
        if any(self.widened(new, old) for new, old in zip(args, node.args)):
            raise NeedScalarize(f"{_call_name(node)} is not element-wise")
        if all(new is old for new, old in zip(args, node.args)):
            return node
        return Call(node.dtype, node.op, args)

    def _if_then_else(self, node: Call) -> PrimExpr:
        cond = self.visit_expr(node.args[0])
        if self.widened(cond, node.args[0]):
            if self.any_dim and lanes(node.args[0]) == 1:
                return self._masked_if_then_else(node, cond)
            raise NeedScalarize(f"if_then_else condition depends on {self.var.name}")
        t, f = self.visit_expr(node.args[1]), self.visit_expr(node.args[2])
        if cond is node.args[0] and t is node.args[1] and f is node.args[2]:
            return node
        if not (self.widened(t, node.args[1]) or self.widened(f, node.args[2])):
            return Call(node.dtype, node.op, [cond, t, f])
        n = lanes(node)
        dtype = with_lanes(node.dtype, self.times(n))
        return Call(dtype, node.op, [cond, self.wide(t, n), self.wide(f, n)])

    def _masked_if_then_else(self, node: Call, cond: PrimExpr) -> PrimExpr:
        """``if_then_else(c, t, f)`` with ``c`` one lane per iteration: ``Select(c, t', f')``.

        Each branch is evaluated by the iterations that choose it only: its loads
        are masked (a masked-off lane reads nothing, see ``_mask_load``) and its
        integer divisions divide by 1 elsewhere. This is how a padded read
        ``if_then_else(0 <= i + d and i + d < n, A[i + d], pad)`` reads the
        buffer's lanes only, with ``pad`` in the others.
        """
        note = f"if_then_else on {node.args[0]} reads under a lane mask"
        if note not in self.masked_reads:
            self.masked_reads.append(note)
        n = lanes(node)
        outer = self.mask
        on = cond if outer is None else op.logical_and(outer, cond)
        off = Not(cond) if outer is None else op.logical_and(outer, Not(cond))
        try:
            self.mask = on
            t = self.wide(self.visit_expr(node.args[1]), n)
            self.mask = off
            f = self.wide(self.visit_expr(node.args[2]), n)
        finally:
            self.mask = outer
        return Select(repeat_each(cond, n), t, f)

    def _elementwise_call(self, node: Call) -> PrimExpr:
        """A lane-by-lane intrinsic (exp, reinterpret, ...) on widened arguments."""
        args = [self.visit_expr(a) for a in node.args]
        if all(new is old for new, old in zip(args, node.args)):
            return node
        if not any(self.widened(new, old) for new, old in zip(args, node.args)):
            return Call(node.dtype, node.op, args)
        args = [self.wide(new, lanes(old)) for new, old in zip(args, node.args)]
        return Call(with_lanes(node.dtype, self.times(lanes(node))), node.op, args)

    def visit_buffer_load(self, node: BufferLoad) -> PrimExpr:
        """A load whose indices became vectors loads that many lanes (the last index only,
        unless ``any_dim``); in a masked branch, the mask predicates it."""
        indices = [self.visit_expr(i) for i in node.indices]
        pred = None if node.predicate is None else self.visit_expr(node.predicate)
        if self.mask is not None and not is_in_bounds(node, self.analyzer):
            return self._masked_load(node, indices, pred)
        if pred is node.predicate and all(new is old for new, old in zip(indices, node.indices)):
            return node
        widened = self.check_access(node.buffer, indices, node.indices)
        if not any(widened):
            if pred is not None and self.widened(pred, node.predicate):
                raise NeedScalarize(
                    f"the predicate of a load from {node.buffer.name} depends on {self.var.name}"
                )
            return BufferLoad(node.buffer, indices, pred)
        one = self.one_element(indices, node.indices, widened)
        if one is not None and pred is None:
            # every iteration reads the same element: load it once and replicate it
            return replicate(BufferLoad(node.buffer, one), self.lanes)
        if pred is not None:
            pred = self.wide(pred, lanes(node))
        return BufferLoad(node.buffer, self.same_lanes(indices, node.indices, widened), pred)

    def _masked_load(self, node: BufferLoad, indices: list, pred: PrimExpr | None) -> PrimExpr:
        """A load in a masked branch, read only in the iterations that evaluate the branch.

        (One provably inside its buffer in every iteration needs no mask: reading
        more is harmless.) It becomes a full vector load whose predicate is the
        mask, AND its own, even when it does not depend on the var.
        """
        widened = self.check_access(node.buffer, indices, node.indices)
        if not any(widened) and dt.lanes_of(node.buffer.dtype) > 1:
            # widened, it would be a gather of vector elements, which codegen does not do
            raise NeedScalarize(f"a load of {node.buffer.name} in a branch of if_then_else "
                                f"does not depend on {self.var.name} and may be out of bounds")
        if not any(widened):  # the same elements in every iteration: widen one index anyway
            k = next((k for k, i in enumerate(indices) if lanes(i) > 1), len(indices) - 1)
            widened[k] = True
            indices[k] = self.wide(indices[k], lanes(indices[k]))
        n = lanes(node)
        on = repeat_each(self.mask, n)
        if pred is not None:
            on = op.logical_and(on, self.wide(pred, n))
        return BufferLoad(node.buffer, self.same_lanes(indices, node.indices, widened), on)

    def check_access(self, buffer, new: list, old: tuple) -> list[bool]:
        """Which indices of an access the var widened; the buffer must not vary, and
        without ``any_dim`` only the last index may widen (TVM's rule)."""
        if id(buffer) not in self._buffers_checked:
            if uses_var((*buffer.shape, *buffer.strides, buffer.elem_offset), self.var):
                raise VectorizeError(self.var.name, f"the shape, strides or offset of buffer "
                                     f"{buffer.name} depend on the loop var")
            self._buffers_checked.add(id(buffer))
        widened = [self.widened(n_, o_) for n_, o_ in zip(new, old)]
        if any(widened) and dt.DataType(buffer.dtype).is_scalable:
            raise MixedLanesError(SCALABLE_BUFFER)
        if any(widened):
            for o_ in old:
                self.times(lanes(o_))  # a scalable index does not widen further
        if any(widened[:-1]) and (not self.any_dim or dt.lanes_of(buffer.dtype) > 1):
            # (vector elements in several rows would be a gather of vectors: codegen has none)
            raise NeedScalarize(
                f"buffer {buffer.name} is indexed by {self.var.name} in a dimension "
                "other than the last"
            )
        return widened

    def same_lanes(self, new: list, old: tuple, widened: list[bool]) -> list:
        """The indices of a widened access, each vector one with ``lanes * m`` lanes.

        ``m`` is the lanes of the access before (the vector indices' count). A
        widened index of one lane per iteration has each lane repeated ``m``
        times; a vector index the var did not widen is replicated; a scalar one
        stays scalar (the same in every lane: a broadcast dimension).
        """
        m = max(lanes(o) for o in old)
        out = []
        for n_, o_, w in zip(new, old, widened):
            if w and lanes(o_) == 1:
                out.append(repeat_each(n_, m))
            elif w or lanes(o_) == 1:
                out.append(n_)
            else:
                out.append(self.wide(n_, m))
        return out

    def one_element(self, new: list, old: tuple, widened: list[bool]) -> list | None:
        """The indices of one iteration when every iteration accesses the same elements
        (each widened index is a broadcast of one value per iteration), else None."""
        if not all(not w or isinstance(n_, Broadcast) and lanes(o_) == 1
                   for n_, o_, w in zip(new, old, widened)):
            return None
        return [n_.value if w else n_ for n_, w in zip(new, widened)]


def _add_sub_ramps(a: PrimExpr, b: PrimExpr, fn: Callable) -> PrimExpr | None:
    """ramp +/- scalar and ramp +/- ramp stay ramps (the scalar arrives as a Broadcast)."""
    if isinstance(a, Ramp) and isinstance(b, Broadcast):
        return Ramp(fn(a.base, b.value), a.stride, a.lanes)
    if isinstance(a, Broadcast) and isinstance(b, Ramp):
        zero = op.const(0, b.stride.dtype)
        return Ramp(fn(a.value, b.base), fn(zero, b.stride), b.lanes)
    if isinstance(a, Ramp) and isinstance(b, Ramp):
        return Ramp(fn(a.base, b.base), fn(a.stride, b.stride), a.lanes)
    return None


def _call_name(node: Call) -> str:
    if node.op in ("tir.call_extern", "tir.call_pure_extern") and node.args:
        name = getattr(node.args[0], "value", "?")
        return f"the call of extern function {name!r}"
    return f"the call of {node.op}"


def _restore(table: dict, key: int, saved) -> None:
    if saved is None:
        table.pop(key, None)
    else:
        table[key] = saved
