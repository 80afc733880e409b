"""A differential fuzzer: random programs, built every way, against an independent model.

``python -m tirlite.fuzz --seed 0 --count 1000`` generates programs through the public
API (``tir.ir_builder``), builds each with LLVM vectorized and not, strict and with FMA
contraction, and with the interpreter, and compares every result with a NumPy model
written beside the program as it was generated. See ``cli`` for the command line.
"""

from .program import Case, generate

__all__ = ["Case", "generate"]
