"""``IndexMap``: a layout map as data (parameters and result expressions), not a closure.

``transform_layout`` takes any callable from old indices to new ones. The
schedule turns it into an ``IndexMap`` by calling it once on fresh variables,
so the trace keeps what was applied (a lambda may close over state that
changes later) and can write it as JSON. An ``IndexMap`` is itself callable:
it substitutes its arguments for its parameters.

>>> from tir import Var
>>> k, n = Var("k"), Var("n")
>>> m = IndexMap([k, n], [n // 16, k, n % 16])
>>> print(m)  # doctest: +SKIP
lambda k, n: (n // 16, k, n % 16)
"""

from __future__ import annotations

import inspect
from typing import Any, Sequence

from ..expr import PrimExpr, Var
from ..functor import substitute


class IndexMap:
    """``lambda *params: results``, with ``params`` variables and ``results`` expressions."""

    __slots__ = ("params", "results")

    def __init__(self, params: Sequence[Var], results: Sequence[PrimExpr]):
        self.params, self.results = tuple(params), tuple(results)

    def __call__(self, *indices: Any) -> tuple:
        if len(indices) != len(self.params):
            raise TypeError(f"IndexMap: takes {len(self.params)} indices, got {len(indices)}")
        vmap = dict(zip(self.params, indices))
        return tuple(substitute(e, vmap) for e in self.results)

    @property
    def __signature__(self) -> inspect.Signature:
        # transform_layout names its placeholder indices after the callable's parameters:
        # keeping the names keeps a replayed trace identical to the recorded one.
        kind = inspect.Parameter.POSITIONAL_ONLY
        return inspect.Signature([inspect.Parameter(p.name, kind) for p in self.params])

    def __str__(self) -> str:
        results = ", ".join(str(e) for e in self.results)
        comma = "," if len(self.results) == 1 else ""
        return f"lambda {', '.join(p.name for p in self.params)}: ({results}{comma})"

    __repr__ = __str__
