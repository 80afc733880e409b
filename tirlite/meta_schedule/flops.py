"""Floating-point operations of an unscheduled function, for the GFLOP/s the tuner reports.

Each block counts its float arithmetic (add, subtract, multiply, divide,
min/max, calls such as exp as one each) times its iterations, as TVM's
``estimate_tir_flops`` does; integer index arithmetic is not counted.
"""

from __future__ import annotations

from typing import Any

from tir.block import BlockRealize
from tir.dtype import DataType
from tir.expr import Add, Call, Div, Max, Min, Mul, Sub
from tir.function import PrimFunc
from tir.functor import post_order_visit
from tir.schedule import tree

_ARITH = (Add, Sub, Mul, Div, Min, Max, Call)


def estimate_flops(func: PrimFunc) -> float:
    """Float operations of one call of ``func`` (0 for a function without blocks)."""
    if not isinstance(func.body, BlockRealize):
        return 0.0
    total = 0.0
    for realize in tree.blocks(func):
        iters = 1
        for iv in realize.block.iter_vars:
            iters *= getattr(iv.extent, "value", 1)
        total += iters * _float_ops(realize.block.body)
    return total


def _float_ops(stmt: Any) -> int:
    count = [0]

    def visit(n: Any) -> None:
        if isinstance(n, _ARITH) and DataType(n.dtype).is_float:
            count[0] += 1

    post_order_visit(stmt, visit)
    return count[0]
