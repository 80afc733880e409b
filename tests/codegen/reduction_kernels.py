"""Reduction kernels written as ONE ``ib.for_range(0, n, kind="vectorize")`` loop into a
scalar accumulator buffer ``S`` of shape (1,) (``argbest``: ``M`` and ``K``): what
``transform.VectorizeReductions`` rewrites.

Each constructor returns a ``tir.PrimFunc`` over buffers of a symbolic length ``n`` (or a
constant one); the tests and ``benchmarks/`` import them from here. Call as
``mod["main"](a, s)`` (``dot``: ``(a, b, s)``); ``s`` holds the initial value and receives
the result, as the serial loop would.
"""

from __future__ import annotations

from collections.abc import Callable

import tir
from tir import ir_builder

#: kind -> how the loop body combines the accumulator ``s`` with the element ``x``.
OPS: dict[str, Callable] = {
    "add": lambda s, x: s + x,
    "mul": lambda s, x: s * x,
    "min": lambda s, x: tir.min(s, x),
    "max": lambda s, x: tir.max(s, x),
    "and": lambda s, x: s & x,
    "or": lambda s, x: s | x,
    "xor": lambda s, x: s ^ x,
}


def _loop(ib, n, annotations):
    return ib.for_range(0, n, kind="vectorize", name="i", annotations=annotations)


def reduction(dtype: str, kind: str, n=None, annotations: dict | None = None,
              swap: bool = False) -> tir.PrimFunc:
    """``for i in vectorized(n): S[0] = S[0] OP A[i]`` (``swap``: ``A[i] OP S[0]``)."""
    n = tir.size_var("n") if n is None else n
    A = tir.decl_buffer((n,), dtype, "A")
    S = tir.decl_buffer((1,), dtype, "S")
    ib = ir_builder.create()
    a, s = ib.buffer_ptr(A), ib.buffer_ptr(S)
    with _loop(ib, n, annotations) as i:
        s[0] = OPS[kind](a[i], s[0]) if swap else OPS[kind](s[0], a[i])
    return tir.PrimFunc([A, S], ib.get())


def sum_kernel(dtype: str = "float32", n=None) -> tir.PrimFunc:
    """``S[0] += A[i]`` over a vectorized loop."""
    return reduction(dtype, "add", n)


def max_kernel(dtype: str = "float32", n=None) -> tir.PrimFunc:
    """``S[0] = max(S[0], A[i])`` over a vectorized loop (float: NaN wins, as tir.max)."""
    return reduction(dtype, "max", n)


def dot(dtype: str = "float32", n=None) -> tir.PrimFunc:
    """``S[0] += A[i] * B[i]`` over a vectorized loop; call as ``(a, b, s)``."""
    n = tir.size_var("n") if n is None else n
    A, B = (tir.decl_buffer((n,), dtype, name) for name in "AB")
    S = tir.decl_buffer((1,), dtype, "S")
    ib = ir_builder.create()
    a, b, s = (ib.buffer_ptr(x) for x in (A, B, S))
    with _loop(ib, n, None) as i:
        s[0] += a[i] * b[i]
    return tir.PrimFunc([A, B, S], ib.get())


def sum_and_scale(dtype: str = "float32", n=None) -> tir.PrimFunc:
    """``B[i] = A[i] * 2; S[0] += A[i]``: a reduction beside an element-wise statement."""
    n = tir.size_var("n") if n is None else n
    A, B = (tir.decl_buffer((n,), dtype, name) for name in "AB")
    S = tir.decl_buffer((1,), dtype, "S")
    ib = ir_builder.create()
    a, b, s = (ib.buffer_ptr(x) for x in (A, B, S))
    with _loop(ib, n, None) as i:
        b[i] = a[i] * tir.const(2, dtype)
        s[0] += b[i]
    return tir.PrimFunc([A, B, S], ib.get())


def guarded(dtype: str, kind: str, n=None) -> tir.PrimFunc:
    """``if A[i] > 0: S[0] = S[0] OP A[i]; else: B[i] = A[i]``: a conditional reduction."""
    n = tir.size_var("n") if n is None else n
    A, B = (tir.decl_buffer((n,), dtype, name) for name in "AB")
    S = tir.decl_buffer((1,), dtype, "S")
    ib = ir_builder.create()
    a, b, s = (ib.buffer_ptr(x) for x in (A, B, S))
    with _loop(ib, n, None) as i:
        with ib.if_scope(a[i] > tir.const(0, dtype)):
            s[0] = OPS[kind](s[0], a[i])
        with ib.else_scope():
            b[i] = a[i]
    return tir.PrimFunc([A, B, S], ib.get())


#: compare -> ``cond(x, m)`` of ``argbest``: > and < keep the first index, >= and <= the last.
COMPARES: dict[str, Callable] = {
    ">": lambda x, m: x > m, ">=": lambda x, m: x >= m,
    "<": lambda x, m: x < m, "<=": lambda x, m: x <= m,
}


def argbest(dtype: str = "float32", compare: str = ">", index_dtype: str = "int32",
            n=None) -> tir.PrimFunc:
    """``if A[i] CMP M[0]: M[0] = A[i]; K[0] = i`` over a vectorized loop; call as
    ``(a, m, k)`` with ``m``/``k`` holding the start (e.g. -inf and -1)."""
    n = tir.size_var("n") if n is None else n
    A = tir.decl_buffer((n,), dtype, "A")
    M = tir.decl_buffer((1,), dtype, "M")
    K = tir.decl_buffer((1,), index_dtype, "K")
    ib = ir_builder.create()
    a, m, k = (ib.buffer_ptr(x) for x in (A, M, K))
    with _loop(ib, n, None) as i, ib.if_scope(COMPARES[compare](a[i], m[0])):
        m[0] = a[i]
        k[0] = i if index_dtype == i.dtype else tir.cast(index_dtype, i)
    return tir.PrimFunc([A, M, K], ib.get())


def moments(dtype: str = "int32", n=None) -> tir.PrimFunc:
    """``M[0] += A[i]; M[1] += A[i] * A[i]; M[2] = max(M[2], A[i])``: three accumulators,
    three elements of one buffer; call as ``(a, m)``."""
    n = tir.size_var("n") if n is None else n
    A = tir.decl_buffer((n,), dtype, "A")
    M = tir.decl_buffer((3,), dtype, "M")
    ib = ir_builder.create()
    a, m = ib.buffer_ptr(A), ib.buffer_ptr(M)
    with _loop(ib, n, None) as i:
        m[0] = m[0] + a[i]
        m[1] = m[1] + a[i] * a[i]
        m[2] = tir.max(m[2], a[i])
    return tir.PrimFunc([A, M], ib.get())


def unrolled_sum(dtype: str = "int32", terms: int = 5, n=None) -> tir.PrimFunc:
    """``S[0] = S[0] + A[i, 0] + A[i, 1] + ... + A[i, 4]``: partial sums unrolled by hand,
    ``terms`` per iteration of a vectorized loop over ``n``; call as ``(a, s)``."""
    n = tir.size_var("n") if n is None else n
    A = tir.decl_buffer((n, terms), dtype, "A")
    S = tir.decl_buffer((1,), dtype, "S")
    ib = ir_builder.create()
    a, s = ib.buffer_ptr(A), ib.buffer_ptr(S)
    with _loop(ib, n, None) as i:
        value = s[0]
        for t in range(terms):
            value = value + a[i, t]
        s[0] = value
    return tir.PrimFunc([A, S], ib.get())


def guarded_best(dtype: str = "float32", compare: str = ">", absolute: bool = False,
                 n=None) -> tir.PrimFunc:
    """``if v CMP M[0]: M[0] = v`` with ``v`` ``A[i]`` (or ``abs(A[i])``) over a vectorized
    loop: the best value alone, written as a guarded update; call as ``(a, m)``."""
    n = tir.size_var("n") if n is None else n
    A = tir.decl_buffer((n,), dtype, "A")
    M = tir.decl_buffer((1,), dtype, "M")
    ib = ir_builder.create()
    a, m = ib.buffer_ptr(A), ib.buffer_ptr(M)
    with _loop(ib, n, None) as i:
        v = tir.abs(a[i]) if absolute else a[i]
        with ib.if_scope(COMPARES[compare](v, m[0])):
            m[0] = v
    return tir.PrimFunc([A, M], ib.get())


def last_match(dtype: str = "float32", threshold: float = 2.0, index_dtype: str = "int32",
               n=None) -> tir.PrimFunc:
    """``if A[i] > threshold: K[0] = i``: the last index above the threshold (``K[0]`` keeps
    its start when there is none); call as ``(a, k)``."""
    n = tir.size_var("n") if n is None else n
    A = tir.decl_buffer((n,), dtype, "A")
    K = tir.decl_buffer((1,), index_dtype, "K")
    ib = ir_builder.create()
    a, k = ib.buffer_ptr(A), ib.buffer_ptr(K)
    with _loop(ib, n, None) as i, ib.if_scope(a[i] > tir.const(threshold, dtype)):
        k[0] = i if index_dtype == i.dtype else tir.cast(index_dtype, i)
    return tir.PrimFunc([A, K], ib.get())


def argmax(dtype: str = "float32", n=None) -> tir.PrimFunc:
    """The first index of the maximum (``>``), as ``np.argmax`` on data without NaN."""
    return argbest(dtype, ">", n=n)


def first_match(dtype: str = "float32", threshold: float = 2.0, index_dtype: str = "int32",
                marker: int = -1, n=None) -> tir.PrimFunc:
    """``if K[0] == marker and A[i] > threshold: K[0] = i``: the first index above the
    threshold (``K[0]`` keeps its start unless it holds ``marker``); call as ``(a, k)``."""
    n = tir.size_var("n") if n is None else n
    A = tir.decl_buffer((n,), dtype, "A")
    K = tir.decl_buffer((1,), index_dtype, "K")
    ib = ir_builder.create()
    a, k = ib.buffer_ptr(A), ib.buffer_ptr(K)
    with _loop(ib, n, None) as i:
        with ib.if_scope(tir.all(k[0] == marker, a[i] > tir.const(threshold, dtype))):
            k[0] = i if index_dtype == i.dtype else tir.cast(index_dtype, i)
    return tir.PrimFunc([A, K], ib.get())


def flagged_match(dtype: str = "float32", threshold: float = 2.0, n=None) -> tir.PrimFunc:
    """``if F[0] == 0 and A[i] > threshold: K[0] = i; F[0] = 1``: the first index above the
    threshold and a raised flag (both untouched unless ``F[0]`` starts at 0); ``(a, k, f)``."""
    n = tir.size_var("n") if n is None else n
    A = tir.decl_buffer((n,), dtype, "A")
    K = tir.decl_buffer((1,), "int32", "K")
    F = tir.decl_buffer((1,), "int32", "F")
    ib = ir_builder.create()
    a, k, f = ib.buffer_ptr(A), ib.buffer_ptr(K), ib.buffer_ptr(F)
    with _loop(ib, n, None) as i:
        with ib.if_scope(tir.all(f[0] == 0, a[i] > tir.const(threshold, dtype))):
            k[0] = i
            f[0] = 1
    return tir.PrimFunc([A, K, F], ib.get())


__all__ = ["COMPARES", "OPS", "argbest", "argmax", "dot", "first_match", "flagged_match",
           "guarded", "max_kernel",
           "reduction",
           "sum_and_scale", "sum_kernel"]
