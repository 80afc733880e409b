"""``VectorizeSkipper``: vectorized loops become serial loops; nothing else changes."""

from __future__ import annotations

from tir.functor import StmtMutator
from tir.node import replace
from tir.stmt import For, ForKind, Stmt


class VectorizeSkipper(StmtMutator):
    """Turns every ``ForKind.VECTORIZED`` loop into a ``SERIAL`` one (vectorization disabled)."""

    def visit_for(self, loop: For) -> Stmt:
        loop = self.generic_visit(loop)
        if loop.kind != ForKind.VECTORIZED:
            return loop
        return replace(loop, kind=ForKind.SERIAL)
