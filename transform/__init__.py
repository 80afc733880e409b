"""Passes over TIR and the infrastructure they run in (TVM's tvm.transform + tir.transform)."""
# ruff: noqa: F401  (this file is the package's list of exports)

from .vector import (
    ByteDotAccumulation,
    ContiguousAccumulation,
    IfConvertVectorLoops,
    InterchangeVectorLoops,
    MergeInterleavedAccesses,
    NarrowIntegerArithmetic,
    StripMineVectorLoops,
    VectorizeError,
    VectorizeLoop,
    VectorizeReductions,
    VectorizeRemark,
    VectorizeScans,
    VectorizeSkipper,
    VectorizeWhileSearch,
    VersionSymbolicStrides,
)
from .config import ConfigKey, known_configs, register_config
from .instrument import PassInstrument, PassTimingInstrument, PrintIRAfterEach, pass_instrument
from .pass_base import (
    ModulePass,
    Pass,
    PassInfo,
    PrimFuncPass,
    Sequential,
    module_pass,
    prim_func_pass,
)
from .bounds_analysis import RejectOutOfBoundsAccesses
from .hoist_bound_checks import HoistVectorBoundChecks
from .instrument_bound_checkers import InstrumentBoundCheckers
from .lower_blocks import (
    CompactBufferAllocation,
    LowerInitBlock,
    LowerOpaqueBlock,
    PlanAndUpdateBufferAllocationLocation,
)
from .loop_partition import LoopPartition
from .lower_vector_math import LowerVectorMath
from .pass_context import PassContext
from .remarks import collect_remarks, emit_remark
from .remove_no_op import RemoveNoOp
from .simplify import Simplify
from .unroll_loop import UnrollLoop
from .parallel import LegalizeParallelLoops, ParallelRemark
