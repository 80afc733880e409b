"""The loop vectorizer's parts; the pass itself is ``transform.VectorizeLoop``.

- vectorizer.py: the expression rules (``ExprVectorizer.visit_add``, ``visit_mul``, ...);
- vectorize_stmt.py: the statement rules and scalarization (``Vectorizer``);
- loop_vectorizer.py: finding vectorized loops, extent errors, remarks (``LoopVectorizer``);
- skipper.py: ``VectorizeSkipper`` (vectorization disabled);
- legality.py: the dependence analysis run before each loop's rewrite (``analyze_loop``),
  with accesses.py (the accesses of a body and their positions) and dependence.py
  (affine index forms, the GCD and bounds tests);
- predicate.py: buffer-level predication, a tail guard as a lane mask on its accesses;
- remarks.py: ``VectorizeRemark``, ``VectorizeError``;
- lanes.py: replicate / repeat / concatenate vectors.
"""

from .legality import ASSUME_INDEPENDENT, Legality, analyze_loop
from .loop_vectorizer import LoopVectorizer
from .remarks import (
    NOT_VECTORIZED,
    PARTIAL,
    PREDICATED,
    SCALARIZED,
    VECTORIZED,
    VectorizeError,
    VectorizeRemark,
)
from .skipper import VectorizeSkipper
from .vectorize_stmt import Vectorizer
from .vectorizer import ExprVectorizer, NeedScalarize

__all__ = [
    "ASSUME_INDEPENDENT",
    "NOT_VECTORIZED",
    "PARTIAL",
    "PREDICATED",
    "SCALARIZED",
    "VECTORIZED",
    "ExprVectorizer",
    "Legality",
    "LoopVectorizer",
    "NeedScalarize",
    "VectorizeError",
    "VectorizeRemark",
    "VectorizeSkipper",
    "Vectorizer",
    "analyze_loop",
]
