"""Run a function before and after a pass on the reference interpreter and compare.

Vectorized loops run as serial loops when interpreted, so the function before
the pass gives the reference result. Arrays are given by buffer name, flat (a
buffer of ``float32x4`` elements holds 4 scalars per element); scalars by param
name. Extern calls (``tir.call_extern``) are logged, so a test can check that an
impure call runs once per lane, in order.
"""

from __future__ import annotations

import numpy as np

import tir
from codegen.interp.backend import build_interpreter
from tir import dtype as dt
from tir.functor import post_order_visit


def run(func: tir.PrimFunc, arrays: dict, scalars: dict | None = None) -> tuple[dict, list]:
    """The arrays after running ``func`` (flat, by buffer name), and the log of extern calls."""
    calls: list[tuple] = []
    externs = {name: _logger(name, calls) for name in _extern_names(func)}
    args, out = [], {}
    for param in func.params:
        buf = func.buffer_map.get(param)
        if buf is None:
            args.append((scalars or {})[param.name])
            continue
        array = _array_for(buf, arrays[buf.name])
        out[buf.name] = array.reshape(-1)  # a view: the call writes through it
        args.append(array)
    build_interpreter(func, externs=externs)["main"](*args)
    return out, calls


def assert_same_result(before: tir.PrimFunc, after: tir.PrimFunc, arrays: dict,
                       scalars: dict | None = None) -> dict:
    """Run both functions on copies of ``arrays``: every buffer and the call log must agree."""
    want, want_calls = run(before, arrays, scalars)
    got, got_calls = run(after, arrays, scalars)
    for name in want:
        np.testing.assert_array_equal(got[name], want[name], err_msg=f"buffer {name}")
    assert got_calls == want_calls
    return got


def _array_for(buf: tir.Buffer, values) -> np.ndarray:
    """A fresh array of ``buf``'s element type in the shape the interpreter checks."""
    t = dt.DataType(buf.dtype)
    flat = np.array(values, dtype=np.dtype(str(t.element_of))).reshape(-1)
    lanes = (t.lanes,) if t.lanes > 1 else ()
    if all(isinstance(s, tir.IntImm) for s in buf.shape):
        return flat.reshape(tuple(s.value for s in buf.shape) + lanes)
    return flat.reshape((-1,) + lanes)  # a symbolic length: one dimension, bound from the array


def _extern_names(func: tir.PrimFunc) -> set:
    names: set = set()

    def visit(node):
        if isinstance(node, tir.Call) and node.op in ("tir.call_extern", "tir.call_pure_extern"):
            names.add(node.args[0].value)

    post_order_visit(func.body, visit)
    return names


def _logger(name: str, calls: list):
    def call(*args):
        calls.append((name, *[np.asarray(a).tolist() for a in args]))
        return 0

    return call
