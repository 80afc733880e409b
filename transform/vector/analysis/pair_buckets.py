"""Which pairs of accesses need a dependence test? Buckets by memory and by index form.

Testing every pair of a body's accesses is quadratic: an unrolled body of
400 stores to one buffer is 80,000 pairs, 1.6 s of tests. Most of those pairs
are apart for a reason visible on each access alone. In one dimension, two
indices with the same loop-var coefficients (and the same symbolic terms)
differ by ``sum(c_k * (x_k - y_k)) + (k_a - k_b)``, a multiple of ``g =
gcd(c_k)`` plus the difference of their constants: they can only meet when
``k_a == k_b (mod g)`` (exactly equal when no loop var occurs). So accesses
are bucketed by memory, then by *form* (the coefficients and symbolic terms of
every dimension), then by *residue* (each dimension's constant modulo its
``g``): a pair of one form in different residue buckets is never tested, and
``B[16 * i + k]`` for 400 values of ``k`` is 400 buckets of one store each.
Pairs of two different forms, or with an access whose form is unknown, are
all tested as before. The result is exactly the set of pairs the full loop
would report: only pairs that cannot touch one element are skipped.
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from collections.abc import Callable, Iterator

from .accesses import Access

#: An access's (form, residue), or None when its indices are not all linear forms.
Key = tuple | None


def candidate_pairs(accesses: list[Access], shared: frozenset,
                    key_of: Callable[[Access], Key]) -> Iterator[tuple[Access, Access]]:
    """The pairs ``(a, b)`` (``a`` first in program order, ``a is b`` included) that share
    memory, include a write and are not apart by their residues, in the order the full
    loop over all pairs meets them (so the first dependence found stays the first)."""
    found = []
    for group in _by_memory(accesses, shared):
        if not any(a.is_write for a in group):
            continue
        keyed, unknown = defaultdict(lambda: defaultdict(list)), []
        for a in group:
            key = key_of(a)
            (unknown.append(a) if key is None else keyed[key[0]][key[1]].append(a))
        found += _pairs(group, keyed, unknown)
    order = {id(a): k for k, a in enumerate(accesses)}
    found.sort(key=lambda pair: (order[id(pair[0])], order[id(pair[1])]))
    yield from found


def _pairs(group: list[Access], keyed: dict, unknown: list) -> Iterator[tuple]:
    """The pairs of one memory group with a write: one form within a residue bucket, two
    forms every pair, an unknown form against everything."""
    order = {id(a): k for k, a in enumerate(group)}
    forms = [[a for bucket in residues.values() for a in bucket] for residues in keyed.values()]
    yield from _within_buckets(keyed)
    yield from _across_forms(forms, order)
    yield from _with_unknown(unknown, [a for form in forms for a in form], order)


def _wanted(a: Access, b: Access) -> bool:
    """Two reads never conflict."""
    return a.is_write or b.is_write


def _ordered(order: dict, a: Access, b: Access) -> tuple:
    """``(a, b)`` in program order (``order``: id -> position)."""
    return (a, b) if order[id(a)] <= order[id(b)] else (b, a)


def _within_buckets(keyed: dict) -> Iterator[tuple]:
    """One form: pairs within a residue bucket only (the buckets are in program order)."""
    for residues in keyed.values():
        for bucket in residues.values():
            for a, b in itertools.combinations_with_replacement(bucket, 2):
                if _wanted(a, b):
                    yield a, b


def _across_forms(forms: list[list[Access]], order: dict) -> Iterator[tuple]:
    """Two forms: every pair."""
    for one, other in itertools.combinations(forms, 2):
        for a, b in itertools.product(one, other):
            if _wanted(a, b):
                yield _ordered(order, a, b)


def _with_unknown(unknown: list[Access], known: list[Access], order: dict) -> Iterator[tuple]:
    """An access of unknown form: against every access of known form and every later unknown."""
    for k, a in enumerate(unknown):
        for b in known + unknown[k:]:
            if _wanted(a, b):
                yield _ordered(order, a, b)


def _by_memory(accesses: list[Access], shared: frozenset) -> list[list[Access]]:
    """Accesses grouped so that two accesses that may share memory are in one group."""
    groups: dict = defaultdict(list)
    for a in accesses:
        data = a.data
        anchor = "shared" if data is not None and id(data) in shared else (
            None if data is None else id(data))
        groups[anchor].append(a)
    return list(groups.values())


def residue_key(memory: tuple, dims: list) -> Key:
    """The (form, residue) key of an access from its dimensions, each ``(coeffs, terms,
    const)``: loop-var coefficients (``{id(var): c}``, free terms included), the symbolic
    terms of the rest, the rest's constant; None for a dimension that is not linear.
    ``memory`` (the ids of its data and buffer) is part of the form: two buffers, or two
    layouts of one memory, are compared pair by pair."""
    form, residue = [memory], []
    for dim in dims:
        if dim is None:
            return None
        coeffs, terms, const = dim
        g = math.gcd(*coeffs.values()) if coeffs else 0
        form.append((tuple(sorted(coeffs.items())), tuple(sorted(terms.items()))))
        residue.append(const % g if g else const)
    return tuple(form), tuple(residue)


__all__ = ["Key", "candidate_pairs", "residue_key"]
