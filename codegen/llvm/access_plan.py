"""Which memory operations a vector access whose lane offsets follow a known pattern becomes.

A vector access that is not one contiguous ramp used to be a hardware gather
or scatter. Most of them are not random at all: ``A[2 * i]`` reads every
other element, ``A[n - 1 - i]`` reads a run backwards, a transposed tile
reads eight short rows. When the offset of every lane is known up to one
symbolic part shared by a group of lanes, the access can use wide contiguous
loads (or stores) plus a shuffle that puts the lanes in place:

- stride 2, 8 lanes of float32: two 8-lane loads and one two-source shuffle;
- stride -1: one load and a reverse;
- an 8 x 8 transposed tile: eight row loads and a shuffle network.

This module only *decides*; ``memory.py`` emits. The decision has two steps.

1. **Lane offsets.** ``lane_forms`` reads the offset vector of the access as
   one linear form per lane, ``sum(coeff * atom) + const``, where the atoms
   are scalar expressions (loop vars, parameters, products of them). Lanes
   whose forms differ only in the constant are a *group*: their elements lie
   at known distances from each other.
2. **Chunks.** Each group's offsets are covered by chunks, runs of at most
   one register of elements (``native`` lanes). A load chunk never reaches
   outside ``[min, max]`` of the offsets the lanes read: the serial program
   reads both ends, so everything between lies in the same allocation. A
   chunk that would run past ``max`` is slid back to end at ``max``, so it
   overlaps the previous one instead (a stride-2 access of 8 lanes spans 15
   elements: chunks ``[0, 8)`` and ``[7, 15)``). A store chunk writes only
   elements that some lane writes, or is a masked store.

The plan is used when it needs at most half as many memory operations as
there are lanes; otherwise the access stays a gather/scatter (``gather.py``
decides how to emit those). Predicated accesses use masked chunk loads and
stores whose masks are shuffled from the predicate; when two lanes touch the
same element under a predicate, no shuffle can combine their mask bits (or,
for stores, choose the last *active* lane), and the access stays a gather
or scatter. Groups of a store may alias at run time (rows ``r * w`` with a
small ``w``): the store is planned only when its groups take the lanes in
order, one block after another (storing group by group then keeps the later
lane's value, as a scatter does), or when the analyzer proves them disjoint.
"""

from __future__ import annotations

from tir import dtype as dt
from tir import op as tir_op
from tir.analysis.linear_form import is_widening_int_cast
from tir.expr import (
    Add,
    Broadcast,
    Cast,
    IntImm,
    Mul,
    PrimExpr,
    Ramp,
    Shuffle,
    Sub,
)
from tir.structural import structural_equal, structural_hash

#: Lanes beyond which an access is not analysed (the forms cost a little per lane).
MAX_LANES = 256


class _Atom:
    """A scalar expression used as a dictionary key (structural equality)."""

    __slots__ = ("expr", "_hash")

    def __init__(self, expr: PrimExpr):
        self.expr = expr
        self._hash = structural_hash(expr)

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other) -> bool:
        return isinstance(other, _Atom) and structural_equal(self.expr, other.expr)


class Form:
    """``sum(coeff * atom) + const``: the offset of one lane."""

    __slots__ = ("terms", "const")

    def __init__(self, terms: dict | None = None, const: int = 0):
        self.terms = terms or {}  # _Atom -> nonzero int coefficient
        self.const = const

    @property
    def key(self) -> frozenset:
        """The symbolic part: lanes with equal keys are a known distance apart."""
        return frozenset(self.terms.items())

    def plus(self, other: Form, sign: int = 1) -> Form:
        terms = dict(self.terms)
        for atom, coeff in other.terms.items():
            value = terms.get(atom, 0) + sign * coeff
            if value:
                terms[atom] = value
            else:
                terms.pop(atom, None)
        return Form(terms, self.const + sign * other.const)

    def scaled(self, factor: int) -> Form:
        if factor == 0:
            return Form()
        return Form({a: c * factor for a, c in self.terms.items()}, self.const * factor)

    def times(self, other: Form) -> Form:
        """The product; a product of two atoms is an atom of its own (``row * n``)."""
        out = self.scaled(other.const).plus(Form(dict(other.terms)).scaled(self.const))
        for atom_a, coeff_a in self.terms.items():
            for atom_b, coeff_b in other.terms.items():
                out = out.plus(Form({_product(atom_a, atom_b): coeff_a * coeff_b}))
        return out

    def symbolic_expr(self, dtype: str) -> PrimExpr:
        """The symbolic part as a TIR expression of ``dtype``."""
        total = IntImm(dtype, 0)
        for atom, coeff in sorted(self.terms.items(), key=lambda t: str(t[0].expr)):
            term = _cast(atom.expr, dtype)
            if coeff != 1:
                term = tir_op.mul(term, IntImm(dtype, coeff))
            total = tir_op.add(total, term)
        return total


def _product(a: _Atom, b: _Atom) -> _Atom:
    """``a * b`` as one atom, the factors in a fixed order so that ``b * a`` is the same."""
    if (hash(b), str(b.expr)) < (hash(a), str(a.expr)):
        a, b = b, a
    x, y = a.expr, b.expr
    if x.dtype != y.dtype:
        x, y = _cast(x, "int64"), _cast(y, "int64")
    return _Atom(Mul(x, y))


def _cast(e: PrimExpr, dtype: str) -> PrimExpr:
    return e if e.dtype == dtype else tir_op.cast(dtype, e)


def _scalar_form(e: PrimExpr) -> Form:
    if isinstance(e, IntImm):
        return Form(const=e.value)
    if isinstance(e, Add):
        return _scalar_form(e.a).plus(_scalar_form(e.b))
    if isinstance(e, Sub):
        return _scalar_form(e.a).plus(_scalar_form(e.b), -1)
    if isinstance(e, Mul):
        if isinstance(e.b, IntImm):
            return _scalar_form(e.a).scaled(e.b.value)
        if isinstance(e.a, IntImm):
            return _scalar_form(e.b).scaled(e.a.value)
    if isinstance(e, Cast) and is_widening_int_cast(e):
        return _scalar_form(e.value)
    return Form({_Atom(e): 1})


def lane_forms(e: PrimExpr) -> list[Form] | None:
    """One ``Form`` per lane of the integer offset vector ``e``, or None if not linear."""
    n = dt.lanes_of(e.dtype)
    if n > MAX_LANES or dt.DataType(e.dtype).is_scalable:
        return None
    if n == 1:
        return [_scalar_form(e)]
    rule = _VECTOR_FORMS.get(type(e))
    return None if rule is None else rule(e, n)


def _broadcast_forms(e: Broadcast, n: int) -> list[Form]:
    return [_scalar_form(e.value)] * n


def _ramp_forms(e: Ramp, n: int) -> list[Form]:
    base = _scalar_form(e.base)
    step = _scalar_form(e.stride)
    return [base.plus(step.scaled(k)) for k in range(n)]


def _add_sub_forms(e: Add | Sub, n: int) -> list[Form] | None:
    a, b = lane_forms(e.a), lane_forms(e.b)
    if a is None or b is None:
        return None
    sign = 1 if isinstance(e, Add) else -1
    return [x.plus(y, sign) for x, y in zip(a, b)]


def _mul_forms(e: Mul, n: int) -> list[Form] | None:
    a, b = lane_forms(e.a), lane_forms(e.b)
    if a is None or b is None:
        return None
    return [x.times(y) for x, y in zip(a, b)]


def _cast_forms(e: Cast, n: int) -> list[Form] | None:
    return lane_forms(e.value) if is_widening_int_cast(e) else None


def _shuffle_forms(e: Shuffle, n: int) -> list[Form] | None:
    parts = [lane_forms(v) for v in e.vectors]
    if any(p is None for p in parts):
        return None
    flat = [f for p in parts for f in p]
    return [flat[i.value] for i in e.indices]


#: Node class -> the per-lane forms of a vector of that kind (others are not linear).
_VECTOR_FORMS = {Broadcast: _broadcast_forms, Ramp: _ramp_forms, Add: _add_sub_forms,
                 Sub: _add_sub_forms, Mul: _mul_forms, Cast: _cast_forms,
                 Shuffle: _shuffle_forms}


class Chunk:
    """A contiguous run of ``width`` elements at ``start`` within a lane group.

    ``last``: the last element the access may touch (the group's ``max``); a chunk
    reaching past it touches only the elements up to it (a masked access).
    """

    __slots__ = ("start", "width", "last")

    def __init__(self, start: int, width: int, last: int | None = None):
        self.start, self.width = start, width
        self.last = start + width - 1 if last is None else last

    @property
    def masked(self) -> bool:
        return self.start + self.width - 1 > self.last

    def __repr__(self) -> str:
        return f"Chunk({self.start}, {self.width})"


class Group:
    """Lanes whose offsets share one symbolic part, and the chunks covering them."""

    __slots__ = ("form", "lanes", "chunks")

    def __init__(self, form: Form, lanes: list[int]):
        self.form = form                 # the symbolic part (const 0)
        self.lanes = lanes               # (lane, const offset) pairs are in Plan.offsets
        self.chunks: list[Chunk] = []


class Plan:
    """How a vector access becomes chunked contiguous accesses and shuffles."""

    __slots__ = ("groups", "offsets", "group_of", "lanes")

    def __init__(self, groups: list[Group], offsets: list[int], group_of: list[int]):
        self.groups = groups
        self.offsets = offsets        # per lane: constant offset within its group
        self.group_of = group_of      # per lane: index into groups
        self.lanes = len(offsets)

    @property
    def chunk_count(self) -> int:
        return sum(len(g.chunks) for g in self.groups)

    def load_picks(self) -> list[int]:
        """Per lane: its element's index in the concatenation of all chunks."""
        starts, running = [], 0
        for g in self.groups:
            starts.append([])
            for c in g.chunks:
                starts[-1].append(running)
                running += c.width
        picks = []
        for lane in range(self.lanes):
            g = self.group_of[lane]
            off = self.offsets[lane]
            for k, c in enumerate(self.groups[g].chunks):
                if c.start <= off < c.start + c.width:
                    picks.append(starts[g][k] + off - c.start)
                    break
        return picks

    def element_lanes(self, group: int, chunk: Chunk) -> list[int]:
        """Per element of ``chunk``: the last lane touching it (for a store, the one
        serial order keeps), or -1."""
        picks = [-1] * chunk.width
        for lane in range(self.lanes):
            if self.group_of[lane] == group:
                pos = self.offsets[lane] - chunk.start
                if 0 <= pos < chunk.width:
                    picks[pos] = lane
        return picks

    def groups_in_lane_order(self) -> bool:
        """Whether each group's lanes all come after the previous group's: then storing
        group by group keeps serial order (the later lane wins) even if groups alias."""
        last = -1
        for group in self.groups:
            if min(group.lanes) <= last:
                return False
            last = max(group.lanes)
        return True

    def has_duplicates(self) -> bool:
        seen = set()
        for g, off in zip(self.group_of, self.offsets):
            if (g, off) in seen:
                return True
            seen.add((g, off))
        return False


def group_lanes(forms: list[Form]) -> Plan:
    """Lanes grouped by symbolic part (first-seen order); chunks not yet chosen."""
    index: dict = {}
    groups: list[Group] = []
    group_of, offsets = [], []
    for lane, f in enumerate(forms):
        key = f.key
        if key not in index:
            index[key] = len(groups)
            groups.append(Group(Form(dict(f.terms)), []))
        g = index[key]
        groups[g].lanes.append(lane)
        group_of.append(g)
        offsets.append(f.const)
    return Plan(groups, offsets, group_of)


def _pow2_floor(x: int) -> int:
    return 1 << (x.bit_length() - 1)


def _pow2_ceil(x: int) -> int:
    return 1 << (x - 1).bit_length()


def cover_for_load(plan: Plan, native: int, masked_end: bool = False) -> None:
    """Chunks of at most ``native`` elements, inside each group's ``[min, max]``.

    A chunk that would pass ``max`` slides back to end on it, or, with
    ``masked_end`` (cheap masked loads), stays on the grid from ``min`` and
    masks off what lies past ``max``: an aligned masked load beats an unaligned
    overlapping one.
    """
    for group in plan.groups:
        offs = sorted({plan.offsets[lane] for lane in group.lanes})
        hi = offs[-1]
        span = hi - offs[0] + 1
        width = min(native, _pow2_ceil(span) if masked_end else _pow2_floor(span))
        chunks, covered_to = [], None  # covered_to: one past the last covered element
        for off in offs:
            if covered_to is not None and off < covered_to:
                continue
            if masked_end:  # on the grid from the first element, aligned like it
                start = offs[0] + (off - offs[0]) // width * width
            else:
                start = min(off, hi - width + 1)
            size = width
            if start == off or masked_end:  # a short run (a tile's row) loads only itself
                size = min(width, _pow2_ceil(_last_within(offs, start, width) - start + 1))
            chunks.append(Chunk(start, size, hi))
            covered_to = start + size
        group.chunks = chunks


def _last_within(offs: list[int], start: int, width: int) -> int:
    """The last of the sorted ``offs`` in ``[start, start + width)``."""
    return max(o for o in offs if start <= o < start + width)


def cover_for_store(plan: Plan, native: int) -> None:
    """Chunks of at most ``native`` elements from each written run; never past ``max``."""
    for group in plan.groups:
        offs = sorted({plan.offsets[lane] for lane in group.lanes})
        hi = offs[-1]
        chunks, covered_to = [], None
        for off in offs:
            if covered_to is not None and off < covered_to:
                continue
            width = _last_within(offs, off, min(native, hi - off + 1)) - off + 1
            chunks.append(Chunk(off, width))
            covered_to = off + width
        group.chunks = chunks


def plan_access(offsets: PrimExpr, native: int, store: bool,
                masked_end: bool = False) -> Plan | None:
    """The chunk plan for the offset vector ``offsets``, or None (stay a gather/scatter).

    ``native``: elements per register for the accessed dtype; ``masked_end``:
    whether a load chunk may end in a masked-off part (see ``cover_for_load``).
    A plan is returned when it needs at most half as many memory operations
    as lanes.
    """
    forms = lane_forms(offsets)
    if forms is None:
        return None
    plan = group_lanes(forms)
    if store:
        cover_for_store(plan, native)
    else:
        cover_for_load(plan, native, masked_end)
    if plan.chunk_count * 2 > plan.lanes:
        return None
    return plan
