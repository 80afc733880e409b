"""Compute declarations (TVM's ``te``): write the algorithm once, schedule it separately.

``placeholder`` declares inputs, ``compute`` declares a stage element by
element, ``reduce_axis`` plus ``sum``/``max``/``min`` (or a ``comm_reducer``)
declare reductions, and ``create_prim_func`` builds the ``PrimFunc`` that
``tir.Schedule`` rewrites and ``codegen.build`` compiles.

How stages are represented: TVM's form, one ``tir.Block`` per stage inside a
``BlockRealize`` under its loop nest, iter vars spatial (``DataPar``) or
reduction (``CommReduce``), a reduction's initial value in ``Block.init``,
intermediates allocated by a ``"root"`` block. Lighter than TVM in one way:
blocks do not store read/write regions; ``tir.schedule.analysis`` derives them
from the body when a primitive needs them, so they can never be stale.

>>> from tir import te
>>> n = 128
>>> A = te.placeholder((n, n), name="A")
>>> B = te.placeholder((n, n), name="B")
>>> k = te.reduce_axis((0, n), name="k")
>>> C = te.compute((n, n), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
>>> func = te.create_prim_func([A, B, C])
"""

from ..op import (  # noqa: F401  (TVM's te re-exports these tir ops)
    abs, all, any, ceil, cos, div, exp, floor, floordiv, floormod, if_then_else, indexdiv,
    indexmod, isnan, log, max_value, min_value, pow, round, rsqrt, sigmoid,
    sin, sqrt, tanh, trunc, truncdiv, truncmod,
)
from .create import create_prim_func
from .reduce import CommReducer, Reduce, comm_reducer, max, min, sum  # noqa: A004
from .tensor import (
    ComputeOp, Operation, PlaceholderOp, Tensor, compute, placeholder, reduce_axis, size_var, var,
)

__all__ = [
    "CommReducer", "ComputeOp", "Operation", "PlaceholderOp", "Reduce", "Tensor", "comm_reducer",
    "compute", "create_prim_func", "max", "min", "placeholder", "reduce_axis", "size_var", "sum",
    "var",
]
