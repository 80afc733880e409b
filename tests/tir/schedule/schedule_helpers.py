"""Shared checks for schedule tests: a scheduled function computes what the original computes."""

from __future__ import annotations

from typing import Any

import numpy as np

import codegen
import tir
from codegen.interp.backend import build_interpreter


def random_args(func: tir.PrimFunc, seed: int = 0) -> list[np.ndarray]:
    """One array per buffer parameter, filled with small random values (ints stay in range)."""
    rng = np.random.default_rng(seed)
    out = []
    for p in func.params:
        buf = func.buffer_map[p]
        shape = tuple(int(s.value) for s in buf.shape)
        if buf.dtype.startswith("float"):
            out.append(rng.uniform(-2.0, 2.0, size=shape).astype(buf.dtype))
        elif buf.dtype == "bool":
            out.append(rng.integers(0, 2, size=shape).astype(bool))
        else:
            out.append(rng.integers(-8, 9, size=shape).astype(buf.dtype))
    return out


def run_compiled(func: tir.PrimFunc, args: list[np.ndarray]) -> list[np.ndarray]:
    """``func`` built for the host, run on copies of ``args``; the arrays after the call."""
    arrays = [a.copy() for a in args]
    codegen.build(func)["main"](*arrays)
    return arrays


def run_interpreted(func: tir.PrimFunc, args: list[np.ndarray]) -> list[np.ndarray]:
    """``func`` run by the reference interpreter on copies of ``args``."""
    arrays = [a.copy() for a in args]
    build_interpreter(func)["main"](*arrays)
    return arrays


def assert_same(before: tir.PrimFunc, after: Any, seed: int = 0, interpret: bool = True) -> None:
    """The scheduled ``after`` (a PrimFunc or Schedule) computes what ``before`` computes.

    Both are compiled and run on the same random inputs; every buffer must agree
    (floats within float32 rounding: FMA contraction may differ), and the
    interpreter's run of ``after`` must agree too.
    """
    if isinstance(after, tir.Schedule):
        after = after.mod["main"]
    args = random_args(before, seed)
    want = run_compiled(before, args)
    runs = [("compiled", run_compiled(after, args))]
    if interpret:
        runs.append(("interpreted", run_interpreted(after, args)))
    for how, got in runs:
        for p, w, g in zip(before.params, want, got):
            name = before.buffer_map[p].name
            if w.dtype.kind == "f":
                np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5,
                                           err_msg=f"{how}: buffer {name}")
            else:
                np.testing.assert_array_equal(g, w, err_msg=f"{how}: buffer {name}")
