"""Lane permutations of several vectors as a balanced tree of narrow ``shufflevector``s.

``shuffle_tree(builder, parts, picks)`` builds the vector whose lane ``k`` is
lane ``picks[k]`` of the concatenation of ``parts``. It follows MLIR's
``vector.to_elements``/``from_elements`` shuffle-tree lowering (LLVM PR 145740)
and adds the *mask compression* that PR left as future work.

The algorithm, in three steps:

1. **Leaves.** Parts no pick reads are dropped (never emitted). Each used part
   is a leaf covering a contiguous interval of the concatenation.
2. **Tree.** The leaves, in order, are split recursively in two, so the tree
   has ``used - 1`` internal nodes; each internal node is ONE
   ``shufflevector`` of its two children. The split point is the one that
   needs the fewest padding shuffles (see below) and, among those, balances
   the lanes the two halves contribute, then their numbers of parts: when
   parts contribute alike the depth is ``ceil(log2(used))``, and no lane
   waits behind a long chain of shuffles.
3. **Compressed masks.** Emission runs top-down: a node is asked for a given
   output layout (a list of source lanes, ``None`` for lanes nobody reads).
   It asks each child for only the *distinct source lanes that layout uses*,
   packed at lanes ``0..k-1`` in the order the layout first uses them; that
   is the mask compression: a node's width is the number of lanes the final
   result needs from its subtree (or its sibling leaf's width, if wider),
   never the sum of its parts' widths. The root's layout is ``picks``
   itself, so the last shuffle also realises the final order and duplicates.
   The order matters: a transposed 8 x 8 tile becomes the classic network,
   each level interleaving its children's rows, instead of concatenations
   and one 64-lane permutation at the root (15% slower as LLVM lowers it
   for AVX-512; source order was the first version).

``shufflevector`` needs both operands of one type. A child that is a shuffle
we emit can take any width for free (its own mask gets ``undef`` lanes); a
leaf is a value of fixed width, and giving it another costs one more
shuffle. A node picks the operand width that costs fewest such pads (a
leaf's own width when it is wide enough, else the widest child need), and
the split in step 2 prefers halves whose widths then agree.

Scalars: a scalar part picked by exactly one lane is not a leaf; the tree
leaves that lane ``undef`` and one ``insertelement`` puts the scalar there at
the end (no shuffle). A scalar picked by several lanes is a leaf that, like
a shuffle node, takes any width for free: one ``insertelement`` into lane 0
of a vector as wide as its sibling (a splat shuffle only if it is the root).

Cost in ``shufflevector``s (``n`` parts of equal width ``w``):

- picks equal to one whole part, in order: 0 (the part itself);
- any picks from one part (reverse, deinterleave, duplicates): 1;
- two parts (concatenation, interleave, even/odd lanes): 1;
- concatenation of ``n`` parts: ``n - 1``, plus one pad wherever a single
  part meets a wider half (``n`` a power of two: none; 3 parts: 1 pad, which
  any tree of same-type shuffles needs);
- a sparse pick of ``m`` lanes from ``m`` of 16 parts: ``m - 1``, each
  producing at most ``m`` lanes (the old lowering concatenated all 16).

A pick of ``-1`` is a don't-care lane: its mask element is ``undef``, so in
LLVM the lane is *poison*. Callers use it only for lanes that are dropped
later (a masked store, another shuffle), never where poison is undefined
behaviour (a divisor, an address, a branch condition).
"""

from __future__ import annotations

import attrs
from llvmlite import ir

from ..ir_types import ScalableVectorType, undef

_I32 = ir.IntType(32)


@attrs.frozen
class _Leaf:
    """A used part: ``value`` holds source lanes ``lo .. lo + width - 1`` (a scalar: one lane)."""

    value: ir.Value
    lo: int
    width: int
    needed: int  # distinct lanes the result reads from it
    scalar: bool = False


@attrs.frozen
class _Pair:
    """One ``shufflevector`` of two subtrees; the right one starts at source lane ``split``."""

    left: _Leaf | _Pair
    right: _Leaf | _Pair
    split: int


def shuffle_tree(builder: ir.IRBuilder, parts: list, picks: list[int]) -> ir.Value:
    """<len(picks) x T>: lane k is lane picks[k] of the concatenation of ``parts``.

    ``parts`` are fixed-width vectors or scalars (one lane) of one element
    type ``T``; a pick of ``-1`` is a don't-care (poison) lane.
    """
    element, widths = _check(parts, picks)
    starts = [sum(widths[:k]) for k in range(len(parts))]
    owner = [k for k, w in enumerate(widths) for _ in range(w)]
    uses = [0] * len(parts)
    for p in {p for p in picks if p >= 0}:
        uses[owner[p]] += 1
    late = {}  # result lane -> scalar inserted after the tree
    leaves = []
    for k, part in enumerate(parts):
        scalar = not isinstance(part.type, ir.VectorType)
        if scalar and picks.count(starts[k]) == 1:
            late[picks.index(starts[k])] = part
        elif uses[k]:
            leaves.append(_Leaf(part, starts[k], widths[k], uses[k], scalar))
    out = [None if p < 0 or k in late else p for k, p in enumerate(picks)]
    if leaves:
        value = _emit(builder, _tree(leaves), out)
    else:
        value = undef(ir.VectorType(element, len(picks)))
    for k, scalar in sorted(late.items()):
        value = builder.insert_element(value, scalar, _I32(k))
    return value


def _check(parts: list, picks: list[int]) -> tuple[ir.Type, list[int]]:
    """The element type and lane counts of ``parts``; raises on malformed input."""
    if not parts or not picks:
        raise ValueError(f"shuffle_tree: needs parts and picks, got {len(parts)} parts "
                         f"and {len(picks)} picks")
    elements, widths = [], []
    for part in parts:
        ty = part.type
        if isinstance(ty, ScalableVectorType):
            raise TypeError(f"shuffle_tree: scalable vector {ty} has no fixed lanes to pick")
        vector = isinstance(ty, ir.VectorType)
        elements.append(ty.element if vector else ty)
        widths.append(ty.count if vector else 1)
    if any(e != elements[0] for e in elements):
        raise TypeError(f"shuffle_tree: parts differ in element type: {sorted(map(str, elements))}")
    total = sum(widths)
    bad = [p for p in picks if not -1 <= p < total]
    if bad:
        raise ValueError(f"shuffle_tree: picks {bad} out of range [-1, {total})")
    return elements[0], widths


def _tree(leaves: list[_Leaf]) -> _Leaf | _Pair:
    """A binary tree over ``leaves`` in order, split where fewest pads are needed, lanes balance."""
    if len(leaves) == 1:
        return leaves[0]
    n = len(leaves)

    def key(m: int) -> tuple:
        kl = sum(leaf.needed for leaf in leaves[:m])
        kr = sum(leaf.needed for leaf in leaves[m:])
        wl = _fixed(leaves[0]) if m == 1 else None
        wr = _fixed(leaves[-1]) if m == n - 1 else None
        return _operand_width(kl, wl, kr, wr)[0], abs(kl - kr), abs(2 * m - n)

    m = min(range(1, n), key=key)
    return _Pair(_tree(leaves[:m]), _tree(leaves[m:]), leaves[m].lo)


def _operand_width(kl: int, wl: int | None, kr: int, wr: int | None) -> tuple[int, int]:
    """(pad shuffles, width) of the cheapest common operand type for two children.

    ``k`` is the lanes a child must deliver, ``w`` its fixed width if it is a
    leaf (``None``: a shuffle we emit, free at any width).
    """
    need = max(kl, kr)
    options = [need] + [w for w in (wl, wr) if w is not None and w >= need]
    return min(((wl not in (None, w)) + (wr not in (None, w)), w) for w in options)


def _emit(builder: ir.IRBuilder, node: _Leaf | _Pair, out: list) -> ir.Value:
    """A vector of ``len(out)`` lanes: lane k holds source lane ``out[k]`` (``None``: any)."""
    if isinstance(node, _Leaf) and node.scalar:
        return _insert(builder, node.value, [x is not None for x in out])
    if isinstance(node, _Leaf):
        if len(out) == node.width and all(x in (None, node.lo + k) for k, x in enumerate(out)):
            return node.value
        return _shuffle(builder, node.value, None, [x if x is None else x - node.lo for x in out])
    # Mask compression: each child delivers only the distinct lanes ``out`` reads from it.
    need_l = list(dict.fromkeys(x for x in out if x is not None and x < node.split))
    need_r = list(dict.fromkeys(x for x in out if x is not None and x >= node.split))
    _, width = _operand_width(len(need_l), _fixed(node.left), len(need_r), _fixed(node.right))
    left, right = _layout(node.left, need_l, width), _layout(node.right, need_r, width)
    where = {x: k for k, x in enumerate(left + right) if x is not None}
    a, b = _emit(builder, node.left, left), _emit(builder, node.right, right)
    return _shuffle(builder, a, b, [x if x is None else where[x] for x in out])


def _fixed(node: _Leaf | _Pair) -> int | None:
    """The width of a vector leaf; None for nodes that are free at any width."""
    return node.width if isinstance(node, _Leaf) and not node.scalar else None


def _insert(builder: ir.IRBuilder, scalar: ir.Value, lanes: list[bool]) -> ir.Value:
    """A vector with ``scalar`` in ``lanes``: one insertelement, then a splat if several."""
    if lanes.count(True) == 1:
        blank = undef(ir.VectorType(scalar.type, len(lanes)))
        return builder.insert_element(blank, scalar, _I32(lanes.index(True)))
    one = builder.insert_element(undef(ir.VectorType(scalar.type, 1)), scalar, _I32(0))
    return _shuffle(builder, one, None, [0 if used else None for used in lanes])


def _layout(node: _Leaf | _Pair, lanes: list[int], width: int) -> list:
    """What ``node`` delivers at ``width``: a leaf as it is if it fits, else ``lanes`` packed."""
    if _fixed(node) == width:
        return list(range(node.lo, node.lo + width))
    return lanes + [None] * (width - len(lanes))


def _shuffle(builder: ir.IRBuilder, a: ir.Value, b: ir.Value | None, mask: list) -> ir.Value:
    """``shufflevector a, b, mask`` (``b`` None: undef); ``None`` mask lanes are undef."""
    if b is None:
        b = undef(a.type)
    if None not in mask:
        return builder.shuffle_vector(a, b, ir.Constant(ir.VectorType(_I32, len(mask)), mask))
    assert all(0 <= m < 2 * a.type.count for m in mask if m is not None)
    lanes = [ir.Constant(_I32, ir.Undefined) if m is None else _I32(m) for m in mask]
    constant = ir.Constant(ir.VectorType(_I32, len(mask)), lanes)
    inst = _UndefMaskShuffle(builder.block, a, b, constant)
    builder._insert(inst)  # IRBuilder has no public insert
    return inst


class _UndefMaskShuffle(ir.instructions.ShuffleVector):
    """``shufflevector`` whose mask has undef lanes, which llvmlite's range check rejects."""

    def __init__(self, block, a, b, mask):
        ty = ir.VectorType(a.type.element, mask.type.count)
        ir.instructions.Instruction.__init__(self, block, ty, "shufflevector", [a, b, mask])
