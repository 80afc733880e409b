"""The loop vectorizer's parts; the pass itself is ``transform.VectorizeLoop``.

- vectorizer.py: the expression rules (``ExprVectorizer.visit_add``, ``visit_mul``, ...);
- vectorize_stmt.py: the statement rules and scalarization (``Vectorizer``);
- loop_vectorizer.py: finding vectorized loops, extent errors, remarks (``LoopVectorizer``);
- skipper.py: ``VectorizeSkipper`` (vectorization disabled);
- remarks.py: ``VectorizeRemark``, ``VectorizeError``, ``vectorize_remarks``;
- lanes.py: replicate / repeat / concatenate vectors.
"""

from .loop_vectorizer import LoopVectorizer
from .remarks import (
    PARTIAL,
    REMARKS_ATTR,
    SCALARIZED,
    VECTORIZED,
    VectorizeError,
    VectorizeRemark,
    vectorize_remarks,
)
from .skipper import VectorizeSkipper
from .vectorize_stmt import Vectorizer
from .vectorizer import ExprVectorizer, NeedScalarize

__all__ = [
    "PARTIAL",
    "REMARKS_ATTR",
    "SCALARIZED",
    "VECTORIZED",
    "ExprVectorizer",
    "LoopVectorizer",
    "NeedScalarize",
    "VectorizeError",
    "VectorizeRemark",
    "VectorizeSkipper",
    "Vectorizer",
    "vectorize_remarks",
]
