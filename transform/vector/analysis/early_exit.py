"""May a first-match loop leave after the first block holding a match, and if not, why.

``VectorizeReductions`` (transform/vector/vectorize_reductions.py) runs the blocks of a first
match (``if k[d] == C and cond(i): k[d] = i``) in a ``while`` that stops once a lane matched:
the iterations after that block can only match at larger indices, so they cannot change the
result. The serial loop still evaluates ``cond(i)`` on each of them (TIR's ``and`` evaluates
both sides), so skipping them is invisible only when evaluating ``cond`` has no effect: every
load provably in bounds over the loop's whole range (else the bound checker's assert, or a
fault, would be skipped), no integer division that may trap, no call with side effects. When
this is not proven the loop is still vectorized, without the early exit.
"""

from __future__ import annotations

from tir.arith import Analyzer
from tir.expr import BufferLoad, Call, PrimExpr
from tir.functor import post_order_visit
from tir.intrin import is_pure
from tir.stmt import For

from .branch_safety import divisor_needs_guard, is_in_bounds


def early_exit_problem(cond: PrimExpr, loop: For, analyzer: Analyzer | None = None
                       ) -> str | None:
    """Why skipping ``cond(i)`` for the iterations of ``loop`` past a match could be seen,
    or None when evaluating it has no effect anywhere in the loop's range (``analyzer``:
    one that already knows facts about the loop's surroundings)."""
    analyzer = Analyzer() if analyzer is None else analyzer
    problems: list[str] = []
    with analyzer.loop_scope(loop.loop_var, loop.min, loop.extent):
        post_order_visit(cond, lambda node: problems.extend(_hazard(node, analyzer)))
    return problems[0] if problems else None


def _hazard(node, analyzer: Analyzer) -> list[str]:
    """The effect evaluating ``node`` may have, as a one-item list, or []."""
    if isinstance(node, BufferLoad) and not is_in_bounds(node, analyzer):
        return [f"{node} is not provably in bounds on every iteration"]
    if isinstance(node, Call) and not is_pure(node.op):
        return [f"{node.op} may have side effects"]
    if isinstance(node, PrimExpr) and divisor_needs_guard(node, analyzer):
        return [f"{node} may divide by 0 or -1"]
    return []


__all__ = ["early_exit_problem"]
