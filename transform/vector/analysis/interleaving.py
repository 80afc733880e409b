"""Which strided vector accesses form an *interleave group* (the decision, not the rewrite).

Vectorizing ``C[2*i] = re; C[2*i + 1] = im`` gives two stores at stride 2,
``C[Ramp(2*b, 2, n)]`` and ``C[Ramp(2*b + 1, 2, n)]``, which together write
every element of ``C[2*b : 2*b + 2*n]``. LLVM calls such a set an
interleave group; so do we. A group is

- accesses to one buffer with the same scalar indices but the last, whose
  last index is ``Ramp(base_k, s, n)`` with one constant stride ``s >= 2``
  and one lane count ``n``, the ``base_k`` a constant apart (``offset_k``);
- for **stores**: consecutive statements, with exactly one offset of each
  residue ``c, c + 1, ..., c + s - 1`` (so their union is one contiguous run
  and no element is written twice), and no later store's value, index or
  predicate reading the buffer (the merged store evaluates every value before
  writing any);
- for **loads**: loads in one statement without a predicate, outside the
  branches of ``tir.if_then_else`` (evaluated only when chosen); two or more
  distinct offsets. Their union lies between the first element the lowest
  one reads and the last element the highest one reads, both read by the
  serial program, so one contiguous load of that span stays inside the
  buffer.
"""

from __future__ import annotations

from tir import arith, structural_equal
from tir.dtype import lanes_of
from tir.expr import BufferLoad, Call, IntImm, PrimExpr, Ramp
from tir.functor import ExprVisitor, post_order_visit

#: Widest stride grouped (a group of s stores or loads of n lanes is s * n lanes wide).
MAX_STRIDE = 8


def strided_last_index(access) -> Ramp | None:
    """The last index of ``access`` if it is a ramp of constant stride 2..MAX_STRIDE."""
    last = access.indices[-1]
    if not isinstance(last, Ramp) or not isinstance(last.stride, IntImm):
        return None
    if not 2 <= last.stride.value <= MAX_STRIDE or lanes_of(access.buffer.dtype) != 1:
        return None
    if any(lanes_of(i.dtype) != 1 for i in access.indices[:-1]):
        return None
    return last


def constant_distance(a: PrimExpr, b: PrimExpr, analyzer: arith.Analyzer) -> int | None:
    """``b - a`` when the analyzer folds it to a constant."""
    diff = analyzer.simplify(b - a)
    return diff.value if isinstance(diff, IntImm) else None


def _same_row(a, b) -> bool:
    """Same buffer, same scalar indices before the last, same stride and lanes."""
    if a.buffer.data is not b.buffer.data or a.buffer.dtype != b.buffer.dtype:
        return False
    if len(a.indices) != len(b.indices):
        return False
    if not all(structural_equal(x, y) for x, y in zip(a.indices[:-1], b.indices[:-1])):
        return False
    ra, rb = a.indices[-1], b.indices[-1]
    return ra.stride.value == rb.stride.value and ra.lanes == rb.lanes


def reads_buffer(node, data) -> bool:
    """Whether ``node`` (an expression, or None) loads from the buffer with data var ``data``."""
    if node is None:
        return False
    found = []
    post_order_visit(node, lambda n: found.append(n)
                     if isinstance(n, BufferLoad) and n.buffer.data is data else None)
    return bool(found)


def store_group(stores: list, analyzer: arith.Analyzer) -> list[int] | None:
    """The offsets of ``stores`` (relative to the first) if they form a store group."""
    first = stores[0]
    ramp = strided_last_index(first)
    if ramp is None or len(stores) != ramp.stride.value:
        return None
    offsets = [0]
    for k, st in enumerate(stores[1:], start=1):
        if strided_last_index(st) is None or not _same_row(first, st):
            return None
        d = constant_distance(ramp.base, st.indices[-1].base, analyzer)
        if d is None:
            return None
        offsets.append(d)
        data = first.buffer.data
        if any(reads_buffer(x, data) for x in (st.value, st.predicate, *st.indices)):
            return None
    lo = min(offsets)
    if sorted(offsets) != list(range(lo, lo + len(stores))):
        return None
    return offsets


class _LoadCollector(ExprVisitor):
    """Strided unpredicated loads that every evaluation of the expression performs: not
    those in a branch of ``tir.if_then_else``, which runs only when chosen (a load group
    reads the span of all its loads, which the untaken branch may not stay inside)."""

    def __init__(self):
        super().__init__()
        self.loads: list[BufferLoad] = []

    def visit_call(self, node: Call) -> None:
        if node.op == "tir.if_then_else":
            self.visit_expr(node.args[0])
        else:
            self.generic_visit(node)

    def visit_buffer_load(self, node: BufferLoad) -> None:
        if node.predicate is None and strided_last_index(node) is not None:
            self.loads.append(node)
        self.generic_visit(node)


def _always_evaluated_loads(expr: PrimExpr) -> list[BufferLoad]:
    collector = _LoadCollector()
    collector.visit_expr(expr)
    return collector.loads


def load_groups(expr: PrimExpr, analyzer: arith.Analyzer) -> list[list[tuple[BufferLoad, int]]]:
    """Groups of strided, unpredicated loads in ``expr`` with their offsets (first = 0)."""
    loads = _always_evaluated_loads(expr)
    groups: list[list[tuple[BufferLoad, int]]] = []
    for load in loads:
        for group in groups:
            head = group[0][0]
            if _same_row(head, load):
                d = constant_distance(head.indices[-1].base, load.indices[-1].base, analyzer)
                if d is not None:
                    group.append((load, d))
                    break
        else:
            groups.append([(load, 0)])
    return [g for g in groups if len({d for _, d in g}) >= 2]
