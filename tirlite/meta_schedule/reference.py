"""The check data of a workload: random inputs and what the unscheduled function computes on them.

Every candidate the tuner measures must compute what the function as written
computes, so the reference is the unscheduled function itself, built once
(``codegen.build``, bounds checks on) and run on inputs drawn from a fixed
seed: uniform in [-1, 1) for floats, small integers for integers (so sums do
not wrap differently in different orders). Outputs are the parameters some
block writes; the rest are inputs.
"""

from __future__ import annotations

import numpy as np

import codegen
from tir.dtype import DataType
from tir.function import IRModule
from tir.schedule import analysis, tree

from .runner import Reference

#: Relative and absolute tolerance (the latter scaled by the output's magnitude) for
#: float outputs: schedules reorder float sums, and FMA rounds once per step.
FLOAT_RTOL = 1e-3
FLOAT_ATOL = 1e-4


def make_reference(mod: IRModule, seed: int = 0) -> Reference:
    """Inputs, expected outputs and tolerances for ``mod``'s one function."""
    func = next(iter(mod.functions.values()))
    buffers = [func.buffer_map[p] for p in func.params]
    written = {id(b) for r in tree.blocks(func) for b in analysis.writes(r.block)}
    outputs = [k for k, b in enumerate(buffers) if id(b) in written]
    rng = np.random.default_rng(seed)
    arrays = [_random(rng, b) if k not in outputs else _zeros(b) for k, b in enumerate(buffers)]
    built = codegen.build(mod)
    built(*arrays)
    expected = [arrays[k].copy() for k in outputs]
    inputs = [a if k not in outputs else _zeros(buffers[k]) for k, a in enumerate(arrays)]
    scale = max([float(np.nanmax(np.abs(e))) for e in expected if e.size] + [1.0])
    is_float = all(DataType(buffers[k].dtype).is_float for k in outputs)
    return Reference(inputs=inputs, output_indices=outputs, expected=expected,
                     rtol=FLOAT_RTOL if is_float else 0.0,
                     atol=FLOAT_ATOL * scale if is_float else 0.0)


def _shape(buf) -> tuple[int, ...]:
    return tuple(int(getattr(d, "value", d)) for d in buf.shape)


def _zeros(buf) -> np.ndarray:
    return np.zeros(_shape(buf), dtype=buf.dtype)


def _random(rng: np.random.Generator, buf) -> np.ndarray:
    dtype = DataType(buf.dtype)
    shape = _shape(buf)
    if dtype.is_float:
        return (rng.random(shape) * 2 - 1).astype(buf.dtype)
    if buf.dtype == "bool":
        return rng.random(shape) < 0.5
    low = 0 if buf.dtype.startswith("uint") else -8
    return rng.integers(low, 8, shape).astype(buf.dtype)
