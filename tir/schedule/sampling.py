"""The random choices a tuner makes on a schedule: tile sizes and categorical picks.

Pure functions of a ``random.Random`` (the schedule's), so the same RNG state
gives the same choice; ``Schedule.sample_perfect_tile`` and
``Schedule.sample_categorical`` call them and record the choice (the
*decision*) in the trace, and a replay passes the decision back, which these
functions validate instead of sampling.

``perfect_tile`` is uniform over the valid factorizations: it picks the
innermost factor with weight equal to the number of ways to split the rest,
then splits the rest prime by prime (each prime's exponent spread over the
outer factors by a uniform stars-and-bars composition). Every ordered
factorization is a tuple of such compositions, so each is equally likely.
"""

from __future__ import annotations

import math
import numbers
import random
from typing import Any, Sequence

from .error import fail


def perfect_tile(rng: random.Random, extent: int, n: int, max_innermost_factor: int,
                 where: str) -> list[int]:
    """``n`` factors of ``extent`` (outer first), the last at most ``max_innermost_factor``."""
    _check_tile_args(extent, n, max_innermost_factor, where)
    limit = extent if max_innermost_factor == -1 else max_innermost_factor
    inner = [d for d in _divisors(extent) if d <= limit]
    weights = [_count_tilings(extent // d, n - 1) for d in inner]
    pick = rng.randrange(sum(weights))  # integer weights: exact and platform independent
    for d, w in zip(inner, weights):
        if pick < w:
            break
        pick -= w
    return _split_uniformly(rng, extent // d, n - 1) + [d]


def check_tile_decision(decision: Any, extent: int, n: int, max_innermost_factor: int,
                        where: str) -> list[int]:
    """``decision`` as a list of ints, if it is a valid tiling of ``extent``; else raise."""
    _check_tile_args(extent, n, max_innermost_factor, where)
    rule = "sample_perfect_tile"
    if not isinstance(decision, (list, tuple)) or not all(_is_int(f) for f in decision):
        raise fail(rule, where, f"the decision must be a list of {n} ints, got {decision!r}")
    factors = [int(f) for f in decision]
    if len(factors) != n:
        raise fail(rule, where, f"the decision {factors} has {len(factors)} factors, not n={n}")
    if any(f < 1 for f in factors) or math.prod(factors) != extent:
        raise fail(rule, where, f"the decision {factors} does not multiply to the extent {extent}")
    if max_innermost_factor != -1 and factors[-1] > max_innermost_factor:
        raise fail(rule, where, f"the decision's innermost factor {factors[-1]} exceeds "
                   f"max_innermost_factor={max_innermost_factor}")
    return factors


def categorical(rng: random.Random, candidates: Sequence, probs: Sequence[float]) -> int:
    """The index of a candidate drawn with the (unnormalized) probabilities ``probs``."""
    check_categorical_args(candidates, probs)
    x = rng.random() * math.fsum(probs)
    for i, p in enumerate(probs):
        if x < p:
            return i
        x -= p
    return max(i for i, p in enumerate(probs) if p > 0)  # float rounding at the top end


def check_categorical_decision(decision: Any, candidates: Sequence, probs: Sequence[float]
                               ) -> int:
    """``decision`` (an index into ``candidates``) if it is valid; else raise."""
    check_categorical_args(candidates, probs)
    if not _is_int(decision) or not 0 <= decision < len(candidates):
        raise fail("sample_categorical", "decision", f"must be an index in [0, "
                   f"{len(candidates)}), got {decision!r}")
    return int(decision)


def check_categorical_args(candidates: Sequence, probs: Sequence[float]) -> None:
    """Candidates are ints, floats or strs; probabilities are as many, >= 0, not all 0."""
    rule = "sample_categorical"
    if not isinstance(candidates, (list, tuple)) or not candidates:
        raise fail(rule, "candidates", f"must be a non-empty list, got {candidates!r}")
    bad = [c for c in candidates if isinstance(c, bool) or not isinstance(c, (int, float, str))]
    if bad:
        raise fail(rule, "candidates", f"must be ints, floats or strs, got {bad[0]!r}")
    if not isinstance(probs, (list, tuple)) or len(probs) != len(candidates):
        raise fail(rule, "probs", f"must be a list of {len(candidates)} probabilities (one per "
                   f"candidate), got {probs!r}")
    if not all(_is_real(p) and 0 <= p < math.inf for p in probs) or math.fsum(probs) <= 0:
        raise fail(rule, "probs", f"must be finite, non-negative and not all zero, got {probs}")


# ---------------------------------------------------------------- helpers


def _check_tile_args(extent: int, n: int, max_innermost_factor: int, where: str) -> None:
    rule = "sample_perfect_tile"
    if not _is_int(n) or n < 1:
        raise fail(rule, where, f"n must be a positive int, got {n!r}")
    if not _is_int(max_innermost_factor) or max_innermost_factor < 1 \
            and max_innermost_factor != -1:
        raise fail(rule, where, f"max_innermost_factor must be a positive int (or -1 for no "
                   f"limit), got {max_innermost_factor!r}")
    if extent < 1:
        raise fail(rule, where, f"the extent {extent} has no tiling (it must be at least 1)")
    if n == 1 and max_innermost_factor != -1 and extent > max_innermost_factor:
        raise fail(rule, where, f"n=1 leaves the whole extent {extent} innermost, over "
                   f"max_innermost_factor={max_innermost_factor}")


def _is_int(x: Any) -> bool:
    return isinstance(x, numbers.Integral) and not isinstance(x, bool)


def _is_real(x: Any) -> bool:
    return isinstance(x, numbers.Real) and not isinstance(x, bool)


def _prime_factors(x: int) -> list[tuple[int, int]]:
    """``[(prime, exponent), ...]`` of ``x``, primes ascending."""
    # Trial division: loop extents are small.
    out, p = [], 2
    while p * p <= x:
        e = 0
        while x % p == 0:
            x, e = x // p, e + 1
        if e:
            out.append((p, e))
        p += 1
    if x > 1:
        out.append((x, 1))
    return out


def _divisors(x: int) -> list[int]:
    divs = [1]
    for p, e in _prime_factors(x):
        divs = [d * p**k for d in divs for k in range(e + 1)]
    return sorted(divs)


def _count_tilings(x: int, n: int) -> int:
    """How many ordered ``n``-tuples of positive ints multiply to ``x``."""
    if n == 0:
        return 1 if x == 1 else 0
    return math.prod(math.comb(e + n - 1, n - 1) for _, e in _prime_factors(x))


def _split_uniformly(rng: random.Random, x: int, n: int) -> list[int]:
    """A uniformly random ordered ``n``-tuple of positive ints multiplying to ``x``."""
    factors = [1] * n
    if n == 0:
        return factors
    for p, e in _prime_factors(x):
        # Stars and bars: n - 1 bars among e + n - 1 slots give a uniform composition of e.
        bars = sorted(rng.sample(range(e + n - 1), n - 1))
        edges = [-1] + bars + [e + n - 1]
        for i in range(n):
            factors[i] *= p ** (edges[i + 1] - edges[i] - 1)
    return factors
