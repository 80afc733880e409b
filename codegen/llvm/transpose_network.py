"""A square tile of 256-bit rows transposed by the classic AVX network of in-lane shuffles.

``shuffle_tree`` handles any permutation with a balanced tree of two-source shuffles;
for a transposed 8 x 8 float32 tile its first levels interleave whole rows, which
crosses the 128-bit halves of a ymm register. x86 without AVX-512 has no cheap
two-source shuffle across those halves, and LLVM 22 lowered the tree on znver3 to
about 55 shuffles and blends per tile (with reloads from memory) where the classic
network needs 24: in-lane ``vunpcklps``/``vunpckhps``, in-lane ``vshufps``, then
``vperm2f128`` to swap the halves. Each step below is a ``shufflevector`` whose mask
is exactly one of those instructions, so LLVM keeps them.

Rows ``r[0..W-1]`` of W lanes each; the result is their concatenation transposed:
lane ``i * W + j`` is ``r[j][i]`` (the picks ``j * W + i`` of ``shuffle_tree``).
"""

from __future__ import annotations

from llvmlite import ir

_I32 = ir.IntType(32)


def transpose_picks(width: int) -> list[int]:
    """The picks of a ``width`` x ``width`` transpose of ``width`` rows."""
    return [j * width + i for i in range(width) for j in range(width)]


def register_transpose(builder: ir.IRBuilder, parts: list, picks: list[int]) -> ir.Value | None:
    """The transposed tile of ``parts`` as the AVX network, or None when ``parts`` and
    ``picks`` are not a square transpose of 256-bit rows (8 x 32-bit or 4 x 64-bit)."""
    if not parts or not all(isinstance(p.type, ir.VectorType) for p in parts):
        return None
    ty = parts[0].type
    width = ty.count
    if any(p.type != ty for p in parts) or len(parts) != width:
        return None
    if _element_bits(ty.element) * width != 256 or picks != transpose_picks(width):
        return None
    columns = _transpose8(builder, parts) if width == 8 else _transpose4(builder, parts)
    return _concat(builder, columns)


def _element_bits(element: ir.Type) -> int:
    if isinstance(element, ir.IntType):
        return element.width
    return {ir.FloatType: 32, ir.DoubleType: 64}.get(type(element), 0)


def _shuffle(builder: ir.IRBuilder, a: ir.Value, b: ir.Value, mask: list[int]) -> ir.Value:
    return builder.shuffle_vector(a, b, ir.Constant(ir.VectorType(_I32, len(mask)), mask))


# Two-source masks (lanes of b count from 8 / 4), each one AVX instruction.
_UNPACK_LO_32 = [0, 8, 1, 9, 4, 12, 5, 13]
_UNPACK_HI_32 = [2, 10, 3, 11, 6, 14, 7, 15]
_SHUF_LO_32 = [0, 1, 8, 9, 4, 5, 12, 13]      # vshufps 0x44
_SHUF_HI_32 = [2, 3, 10, 11, 6, 7, 14, 15]    # vshufps 0xEE
_HALVES_LO_32 = [0, 1, 2, 3, 8, 9, 10, 11]    # vperm2f128 0x20
_HALVES_HI_32 = [4, 5, 6, 7, 12, 13, 14, 15]  # vperm2f128 0x31
_UNPACK_LO_64 = [0, 4, 2, 6]
_UNPACK_HI_64 = [1, 5, 3, 7]
_HALVES_LO_64 = [0, 1, 4, 5]
_HALVES_HI_64 = [2, 3, 6, 7]


def _transpose8(builder: ir.IRBuilder, rows: list) -> list:
    """Columns 0..7 of eight rows of eight 32-bit lanes: 8 + 8 + 8 shuffles."""
    pairs = []  # (lo, hi) of rows 2k, 2k+1: lanes 0, 1, 4, 5 / 2, 3, 6, 7 interleaved
    for k in range(0, 8, 2):
        pairs.append((_shuffle(builder, rows[k], rows[k + 1], _UNPACK_LO_32),
                      _shuffle(builder, rows[k], rows[k + 1], _UNPACK_HI_32)))
    quads = []  # per group of four rows: columns (0, 4), (1, 5), (2, 6), (3, 7)
    for first, second in (pairs[0:2], pairs[2:4]):
        quads.append([_shuffle(builder, first[h], second[h], mask)
                      for h in (0, 1) for mask in (_SHUF_LO_32, _SHUF_HI_32)])
    low = [_shuffle(builder, quads[0][c], quads[1][c], _HALVES_LO_32) for c in range(4)]
    high = [_shuffle(builder, quads[0][c], quads[1][c], _HALVES_HI_32) for c in range(4)]
    return low + high


def _transpose4(builder: ir.IRBuilder, rows: list) -> list:
    """Columns 0..3 of four rows of four 64-bit lanes: 4 + 4 shuffles."""
    pairs = [(_shuffle(builder, rows[k], rows[k + 1], _UNPACK_LO_64),
              _shuffle(builder, rows[k], rows[k + 1], _UNPACK_HI_64)) for k in (0, 2)]
    low = [_shuffle(builder, pairs[0][h], pairs[1][h], _HALVES_LO_64) for h in (0, 1)]
    high = [_shuffle(builder, pairs[0][h], pairs[1][h], _HALVES_HI_64) for h in (0, 1)]
    return low + high


def _concat(builder: ir.IRBuilder, vectors: list) -> ir.Value:
    """One vector of ``vectors`` end to end (pairwise; LLVM splits it back into registers)."""
    while len(vectors) > 1:
        width = vectors[0].type.count
        vectors = [_shuffle(builder, vectors[k], vectors[k + 1], list(range(2 * width)))
                   for k in range(0, len(vectors), 2)]
    return vectors[0]


__all__ = ["register_transpose", "transpose_picks"]
