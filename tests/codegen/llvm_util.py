"""Helpers for the LLVM backend tests: element-wise kernels built from TIR nodes directly."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

import codegen
import tir

INTS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
FLOATS = ["float32", "float64"]


def elementwise(fn: Callable, in_dtypes: list[str], out_dtype: str, n: int = 16,
                lanes: int = 1) -> tir.PrimFunc:
    """``C[i] = fn(A0[i], A1[i], ...)`` over ``n`` elements, ``lanes`` at a time.

    With ``lanes > 1`` the index is a ``Ramp`` built by hand (no vectorizer involved).
    """
    return multi([fn], in_dtypes, [out_dtype], n, lanes)


def multi(fns: list[Callable], in_dtypes: list[str], out_dtypes: list[str], n: int = 16,
          lanes: int = 1) -> tir.PrimFunc:
    """``C<k>[i] = fns[k](A0[i], ...)`` for each k: many checks from one build."""
    ins = [tir.decl_buffer((n,), d, name=f"A{k}") for k, d in enumerate(in_dtypes)]
    outs = [tir.decl_buffer((n,), d, name=f"C{k}") for k, d in enumerate(out_dtypes)]
    i = tir.Var("i", "int32")
    index = i * lanes if lanes == 1 else tir.Ramp(i * lanes, 1, lanes)
    loads = [tir.BufferLoad(b, [index]) for b in ins]
    stores = [tir.BufferStore(out, fn(*loads), [index]) for fn, out in zip(fns, outs)]
    body = tir.For(i, 0, n // lanes, tir.ForKind.SERIAL, tir.SeqStmt.flatten(stores))
    return tir.PrimFunc(ins + outs, body)


def run_multi(func: tir.PrimFunc, inputs: list, out_dtypes: list[str]) -> list[np.ndarray]:
    """Build and run a ``multi`` kernel; returns its outputs."""
    n = inputs[0].shape[0]
    outs = [np.zeros(n, dtype=d) for d in out_dtypes]
    codegen.build(func)(*inputs, *outs)
    return outs


def run(func: tir.PrimFunc, *inputs: np.ndarray, out_dtype: str | None = None,
        target: str = "llvm") -> np.ndarray:
    """Build ``func``, run it on ``inputs`` and a fresh output array, return the output."""
    n = inputs[0].shape[0] if inputs else 16
    out = np.zeros(n, dtype=out_dtype or inputs[0].dtype)
    codegen.build(func, target=target)(*inputs, out)
    return out


def sample(dtype: str, n: int = 16, seed: int = 0, lo: int = -100, hi: int = 100) -> np.ndarray:
    """Random values of ``dtype`` (non-negative for unsigned, never zero for ints)."""
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.integers(0, 2, n).astype(bool)
    if dtype.startswith("float"):
        return rng.uniform(lo / 10, hi / 10, n).astype(dtype)
    info = np.iinfo(dtype)
    values = rng.integers(max(lo, info.min), min(hi, info.max), n, endpoint=True)
    values[values == 0] = 7
    return values.astype(dtype)
