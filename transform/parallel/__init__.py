"""Parallel loops that compute their serial result: the conflict analysis and its rewrites.

``conflicts.py`` decides (may two iterations touch one element?), ``partials.py``
rewrites a parallel reduction, ``legalize.py`` is the pass that chooses.
"""
# ruff: noqa: F401  (this file is the package's list of exports)

from .conflicts import Conflict, ParallelAnalysis, analyze_parallel_loop
from .legalize import (
    ASSUME_INDEPENDENT,
    PARALLEL_REDUCTION,
    SERIAL,
    LegalizeParallelLoops,
    ParallelRemark,
    legalize_parallel_loops,
)
