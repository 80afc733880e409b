"""tirlite's tensor IR: TVM-style TIR expressions, statements, functions and tools.

>>> from tir import ir_builder
>>> ib = ir_builder.create()
"""

from . import dtype as _dtype_mod
from .block import Block, BlockRealize, BufferRegion, IterVar, IterVarType
from .buffer import Buffer, decl_buffer
from .dtype import DataType
from .expr import (
    EQ, GE, GT, LE, LT, NE, Add, And, Any, BinaryOpNode, Broadcast, BufferLoad, Call, Cast,
    CmpOpNode, Div, FloatImm, FloorDiv, FloorMod, IntImm, Let, Max, Min, Mod, Mul, Not, Or,
    PrimExpr, Ramp, Select, Shuffle, SizeVar, StringImm, Sub, Var,
)
from .function import IRModule, PrimFunc
from .node import Node, TVMError
from .range import Range
from .op import (
    abs, all, any, bitwise_and, bitwise_not, bitwise_or, bitwise_xor, call_extern, call_intrin,
    call_llvm_intrin, call_llvm_pure_intrin, call_pure_extern, llvm_lookup_intrinsic_id,
    cast, ceil, ceildiv, const, convert, cos, div, erf, exp, exp2, exp10, floor,
    floordiv, floormod, fma, get_active_lane_mask, if_then_else, indexdiv, indexmod, isinf, isnan,
    likely, log, log1p, log2, log10, logical_and, logical_not, logical_or, max, max_value, min,
    min_value, nearbyint, popcount, pow, reinterpret, round, rsqrt, select, shift_left, shift_right,
    sigmoid, sin, size_var, sqrt, tan, tanh, trunc, truncdiv, truncmod, var, vscale,
)
from .stmt import (
    Allocate, AssertStmt, AttrStmt, BufferStore, Evaluate, For, ForKind, IfThenElse, LetStmt,
    SeqStmt, Stmt, While,
)
from . import arith  # noqa: E402
from . import functor as stmt_functor  # noqa: E402  (TVM's name for the visitor module)
from . import ir_builder  # noqa: E402
from .verify import verify_well_formed  # noqa: E402
from . import pickling as _pickling  # noqa: E402,F401  (IR nodes pickle: tir/pickling.py)
from .schedule import BlockRV, LoopRV, Schedule, ScheduleError  # noqa: E402
from .tensor_intrinsic import TensorIntrin  # noqa: E402
from . import te  # noqa: E402
from . import script  # noqa: E402  (TVMScript: from tir.script import tir as T)
from . import testing  # noqa: E402  (CompareBeforeAfter)
from .structural import (  # noqa: E402
    assert_structural_equal, get_first_structural_mismatch, structural_equal, structural_hash,
)

import sys as _sys  # noqa: E402

# `from tir.stmt_functor import ...` works as in TVM, where it is a module of its own.
_sys.modules[__name__ + ".stmt_functor"] = stmt_functor


# `from tir import *` exports the IR's names and the modules TVM users reach for
# (ir_builder, stmt_functor, arith), never the implementation modules: a
# submodule such as tir.range must not shadow Python's builtin `range`.
__all__ = sorted(
    name
    for name, value in globals().items()
    if not name.startswith("_") and not isinstance(value, type(_sys))
) + ["arith", "ir_builder", "schedule", "script", "stmt_functor", "te", "testing"]
