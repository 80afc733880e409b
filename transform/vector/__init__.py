"""The vector stage: every pass that turns ``ForKind.VECTORIZED`` loops into vector code.

The passes, in the order ``codegen.build``'s pipeline runs them, and why that order:

0. ``InterchangeVectorLoops`` (interchange_vector_loops.py): a vectorized loop whose
   inner serial loop strides across rows moves inside it; first, so the others see the
   loop that will be vectorized.
   ``NarrowIntegerArithmetic`` (narrow_integer_arithmetic.py): integer arithmetic under
   a narrowing cast computed in the narrowest exact type (uint8 pixels in uint16).
1. ``VectorizeWhileSearch`` (vectorize_while_search.py): ``while I[c] < n and keep(I[c]):
   I[c] += 1`` becomes a vectorized first match, which the next passes vectorize.
   ``VectorizeScans`` (vectorize_scans.py): ``B[i] = B[i - 1] OP f(i)`` becomes an
   in-register scan. First, because the loop's own legality would keep it serial.
2. ``VectorizeReductions`` (vectorize_reductions.py): ``acc[c] = acc[c] OP f(i)`` becomes
   vector accumulators and one horizontal reduction; for the same reason, before the
   tail is split off (it strip-mines the loop it rewrites itself).
3. ``VersionSymbolicStrides`` (version_symbolic_strides.py): ``A[i * s]`` gets a
   contiguous copy of the loop under ``s == 1``; before strip-mining, so each version
   gets its own tail.
4. ``StripMineVectorLoops`` (strip_mine_vector_loops.py): a loop of any extent becomes
   register-wide vectors plus a guarded tail (the tail policy is in tail.py).
5. ``IfConvertVectorLoops`` (if_convert_vector_loops.py): ``if`` on the vectorized var,
   including the tail's guard, becomes predicated stores and masked loads; before
   ``VectorizeLoop``, which would scalarize the ``if``.
6. ``VectorizeLoop`` (vectorize_loop.py; ``VectorizeSkipper`` when vectorization is off):
   the loop var becomes ``Ramp(min, 1, lanes)``, loads and stores become vector accesses.
7. ``ContiguousAccumulation`` (contiguous_accumulation.py): strided loads summed into a
   reduction's accumulator, which only its final horizontal sum reads, become
   contiguous loads (lane order does not matter there); before the next pass, which
   would shuffle them into row order.
   ``ByteDotAccumulation`` (byte_dot_accumulation.py): uint8 x int8 products summed into
   such an accumulator use ``vpdpbusd`` (4 products per int32 lane) on VNNI targets.
8. ``MergeInterleavedAccesses`` (merge_interleaved_accesses.py): strided vector accesses
   that together cover memory become one wide access plus shuffles; after ``Simplify``
   has folded the ramps ``VectorizeLoop`` left.

Beside the passes:

- ``analysis/``: the questions the passes ask before they rewrite, each in a module named
  after it: ``legality`` (may the iterations run as lanes? with ``accesses``,
  ``dependence``, ``aliasing``, ``pair_buckets``), ``branch_safety`` (may this ``if``
  become straight-line code?), ``reductions``, ``searches``, ``scans``, ``while_search``
  (is a ``while`` a first-index search, and is vectorizing it exact?), ``strides``,
  ``interleaving``,
  ``lane_free`` (is an accumulator read only summed over its lanes?), ``byte_dot`` (may
  ``vpdpbusd`` compute an update?), ``interchange``
  (should a vectorized loop move inside its inner loop?), ``narrowing`` (which narrow
  type computes an integer expression exactly?);
- ``vectorizer/``: ``VectorizeLoop``'s rewrite: ``expr_rules`` (one ``visit_<node>`` per
  expression kind), ``stmt_rules`` (statements, scalarization), ``loops`` (finding the
  loops, extents, remarks), ``lanes`` (replicate, repeat, concatenate);
- ``tail.py``: the tail policy (lane masks from tail guards); ``remarks.py``: the
  per-loop remarks (one ``VectorizeRemark`` type for every pass above, folded to one per
  loop the user wrote when a pass run ends); ``options.py``: ``VectorOptions``, the
  config every pass above reads, read once, and the function's target and SVE flag;
  ``reduction_ir.py``: IR pieces the reduction and scan rewrites share;
  ``reduction_plans.py`` and ``search_plans.py``: how ``VectorizeReductions`` rewrites a
  loop's reductions and its searches.
"""

from .analysis.legality import ASSUME_INDEPENDENT, Legality, analyze_loop
from .byte_dot_accumulation import ByteDotAccumulation
from .contiguous_accumulation import ContiguousAccumulation
from .if_convert_vector_loops import IfConvertVectorLoops
from .interchange_vector_loops import InterchangeVectorLoops
from .merge_interleaved_accesses import MergeInterleavedAccesses
from .narrow_integer_arithmetic import NarrowIntegerArithmetic
from .remarks import (
    NOT_VECTORIZED,
    PARTIAL,
    PREDICATED,
    SCALARIZED,
    VECTORIZED,
    VectorizeError,
    VectorizeRemark,
)
from .strip_mine_vector_loops import StripMineVectorLoops
from .vectorize_loop import VectorizeLoop
from .vectorize_reductions import VectorizeReductions
from .vectorize_scans import VectorizeScans
from .vectorize_while_search import VectorizeWhileSearch
from .vectorize_skipper import VectorizeSkipper
from .vectorizer.expr_rules import ExprVectorizer, NeedScalarize
from .vectorizer.loops import LoopVectorizer
from .vectorizer.stmt_rules import Vectorizer
from .version_symbolic_strides import VersionSymbolicStrides

__all__ = [
    "ASSUME_INDEPENDENT",
    "NOT_VECTORIZED",
    "PARTIAL",
    "PREDICATED",
    "SCALARIZED",
    "VECTORIZED",
    "ByteDotAccumulation",
    "ExprVectorizer",
    "IfConvertVectorLoops",
    "Legality",
    "LoopVectorizer",
    "ContiguousAccumulation",
    "InterchangeVectorLoops",
    "MergeInterleavedAccesses",
    "NarrowIntegerArithmetic",
    "NeedScalarize",
    "StripMineVectorLoops",
    "VectorizeError",
    "VectorizeLoop",
    "VectorizeReductions",
    "VectorizeRemark",
    "VectorizeScans",
    "VectorizeWhileSearch",
    "VectorizeSkipper",
    "Vectorizer",
    "VersionSymbolicStrides",
    "analyze_loop",
]
