"""The kernel set for differential tests, each written with ``tir.ir_builder``.

A kernel function returns a ``Kernel``: ``(func, make_inputs, reference)``.
``make_inputs(rng)`` gives a fresh tuple of call arguments (outputs included,
zero-filled); ``reference(inputs)`` gives ``{argument index: expected array}``
for the outputs, computed with NumPy from the inputs before the call. Sizes
are around 1000 elements so the interpreter runs each in well under a second.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

import tir
from tir import ir_builder

N = 1000  # a multiple of 8
TAIL_N = 1003  # not a multiple of 8: exercises the guarded tail


class Kernel(NamedTuple):
    """A PrimFunc with its input maker and its NumPy reference."""

    func: tir.PrimFunc
    make_inputs: Callable
    reference: Callable


def _floats(rng, n, dtype="float32", lo=-2.0, hi=2.0):
    return rng.uniform(lo, hi, n).astype(dtype)


def _ints(rng, n, dtype):
    """The full range for types that wrap; for int32/int64 a range where a * b + a fits.

    Signed overflow of 32- and 64-bit integers is undefined in TIR (TVM emits
    ``nsw`` arithmetic for them), so no kernel relies on it; int8/int16 and
    unsigned types wrap around.
    """
    info = np.iinfo(dtype)
    lo, hi = info.min, info.max
    if dtype in ("int32", "int64"):
        hi = 2 ** (info.bits // 2 - 2)
        lo = -hi
    return rng.integers(lo, hi, n, dtype=dtype, endpoint=True)



@contextlib.contextmanager
def _vector_loop(ib, blocks):
    """``for i in range(blocks): for j in vectorized(8)``; yields the index ``i * 8 + j``."""
    with (
        ib.for_range(0, blocks, name="i") as i,
        ib.for_range(0, 8, name="j", kind="vectorize") as j,
    ):
        yield i * 8 + j


def _pointers(ib, dtype, *names):
    return [ib.pointer(dtype, name=name) for name in names]


# ---------------------------------------------------------------- element-wise float


def vector_add() -> Kernel:
    """C = A + B with i over n/8 and j vectorized 8; n bound from the buffers."""
    n = tir.size_var("n")
    bufs = [tir.decl_buffer((n,), "float32", name) for name in "ABC"]
    ib = ir_builder.create()
    A, B, C = (ib.buffer_ptr(b) for b in bufs)
    with _vector_loop(ib, n // 8) as k:
        C[k] = A[k] + B[k]
    func = tir.PrimFunc(bufs, ib.get())
    return Kernel(
        func,
        lambda rng: (_floats(rng, N), _floats(rng, N), np.zeros(N, "float32")),
        lambda ins: {2: ins[0] + ins[1]},
    )


def guarded_tail() -> Kernel:
    """C = A * B + 1 over ceil(n/8) blocks of 8 with ``if i*8+j < n``."""
    n = tir.var("n")
    ib = ir_builder.create()
    A, B, C = _pointers(ib, "float32", "A", "B", "C")
    with _vector_loop(ib, (n + 7) // 8) as k, ib.if_scope(k < n):
        C[k] = A[k] * B[k] + 1.0
    func = tir.PrimFunc([A, B, C, n], ib.get())
    return Kernel(
        func,
        lambda rng: (_floats(rng, TAIL_N), _floats(rng, TAIL_N), np.zeros(TAIL_N, "float32"),
                     TAIL_N),
        lambda ins: {2: ins[0] * ins[1] + np.float32(1)},
    )


def let_binding() -> Kernel:
    """B = t + t*t with t = 2*A bound by ``let`` inside a vectorized loop."""
    ib = ir_builder.create()
    A, B = _pointers(ib, "float32", "A", "B")
    with _vector_loop(ib, N // 8) as k:
        t = ib.let("t", A[k] * 2.0)
        B[k] = t + t * t
    func = tir.PrimFunc([A, B], ib.get())

    def reference(ins):
        t = ins[0] * np.float32(2)
        return {1: t + t * t}

    return Kernel(func, lambda rng: (_floats(rng, N), np.zeros(N, "float32")), reference)


def if_else() -> Kernel:
    """B = A if A > 0 else -0.5 * A, as an if/else inside a vectorized loop."""
    ib = ir_builder.create()
    A, B = _pointers(ib, "float32", "A", "B")
    with _vector_loop(ib, N // 8) as k:
        with ib.if_scope(A[k] > 0.0):
            B[k] = A[k]
        with ib.else_scope():
            B[k] = A[k] * -0.5
    func = tir.PrimFunc([A, B], ib.get())
    return Kernel(
        func,
        lambda rng: (_floats(rng, N), np.zeros(N, "float32")),
        lambda ins: {1: np.where(ins[0] > 0, ins[0], ins[0] * np.float32(-0.5))},
    )


def relu_select() -> Kernel:
    """B = max(A, 0) written as ``Select(A > 0, A, 0)``."""
    ib = ir_builder.create()
    A, B = _pointers(ib, "float32", "A", "B")
    with _vector_loop(ib, N // 8) as k:
        x = A[k]
        B[k] = tir.Select(x > 0.0, x, tir.const(0.0, "float32"))
    func = tir.PrimFunc([A, B], ib.get())
    return Kernel(
        func,
        lambda rng: (_floats(rng, N), np.zeros(N, "float32")),
        lambda ins: {1: np.maximum(ins[0], np.float32(0))},
    )


def math_intrinsics() -> Kernel:
    """B = exp(A/2) + sqrt(|A|) + tanh(A) - floor(A) + fma(A, A, 1)."""
    ib = ir_builder.create()
    A, B = _pointers(ib, "float32", "A", "B")
    with _vector_loop(ib, N // 8) as k:
        x = A[k]
        B[k] = (tir.exp(x * 0.5) + tir.sqrt(tir.abs(x)) + tir.tanh(x)
                        - tir.floor(x) + tir.fma(x, x, tir.const(1.0)))
    func = tir.PrimFunc([A, B], ib.get())

    def reference(ins):
        x = ins[0].astype(np.float64)
        out = np.exp(x * 0.5) + np.sqrt(np.abs(x)) + np.tanh(x) - np.floor(x) + (x * x + 1)
        return {1: out.astype("float32")}

    return Kernel(func, lambda rng: (_floats(rng, N), np.zeros(N, "float32")), reference)


# ---------------------------------------------------------------- casts and bits


def cast_int8_to_float() -> Kernel:
    """B = float32(A) * 0.25 for int8 A."""
    ib = ir_builder.create()
    A = ib.pointer("int8", name="A")
    B = ib.pointer("float32", name="B")
    with _vector_loop(ib, N // 8) as k:
        B[k] = A[k].astype("float32") * 0.25
    func = tir.PrimFunc([A, B], ib.get())
    return Kernel(
        func,
        lambda rng: (_ints(rng, N, "int8"), np.zeros(N, "float32")),
        lambda ins: {1: ins[0].astype("float32") * np.float32(0.25)},
    )


def cast_float_to_int() -> Kernel:
    """B = int32(A * 100): truncation towards zero, negatives included."""
    ib = ir_builder.create()
    A = ib.pointer("float32", name="A")
    B = ib.pointer("int32", name="B")
    with _vector_loop(ib, N // 8) as k:
        B[k] = (A[k] * 100.0).astype("int32")
    func = tir.PrimFunc([A, B], ib.get())
    return Kernel(
        func,
        lambda rng: (_floats(rng, N), np.zeros(N, "int32")),
        lambda ins: {1: np.trunc(ins[0] * np.float32(100)).astype("int32")},
    )


def reinterpret_bits() -> Kernel:
    """B = |A| by clearing the sign bit of A's bits (reinterpret to int32 and back)."""
    ib = ir_builder.create()
    A, B = _pointers(ib, "float32", "A", "B")
    with _vector_loop(ib, N // 8) as k:
        bits = tir.reinterpret("int32", A[k])
        B[k] = tir.reinterpret("float32", tir.bitwise_and(bits, 0x7FFFFFFF))
    func = tir.PrimFunc([A, B], ib.get())
    return Kernel(
        func,
        lambda rng: (_floats(rng, N), np.zeros(N, "float32")),
        lambda ins: {1: np.abs(ins[0])},
    )


def int_division() -> Kernel:
    """C = floordiv(A, B) * 1000 + floormod(A, B) * 100 + truncdiv(A, B) * 10 + truncmod(A, B)."""
    ib = ir_builder.create()
    A, B, C = _pointers(ib, "int32", "A", "B", "C")
    with _vector_loop(ib, N // 8) as k:
        a, b = A[k], B[k]
        C[k] = (tir.floordiv(a, b) * 1000 + tir.floormod(a, b) * 100
                        + tir.truncdiv(a, b) * 10 + tir.truncmod(a, b))
    func = tir.PrimFunc([A, B, C], ib.get())

    def make_inputs(rng):
        b = rng.integers(1, 9, N).astype("int32") * rng.choice([-1, 1], N).astype("int32")
        return rng.integers(-500, 500, N).astype("int32"), b, np.zeros(N, "int32")

    def reference(ins):
        a, b = ins[0].astype(np.int64), ins[1].astype(np.int64)
        trunc_q = np.trunc(a / b).astype(np.int64)
        out = (a // b) * 1000 + (a % b) * 100 + trunc_q * 10 + (a - trunc_q * b)
        return {2: out.astype("int32")}

    return Kernel(func, make_inputs, reference)


# ---------------------------------------------------------------- indexing


def nested_vectorized() -> Kernel:
    """C[i, j*8+k] = 2 * A[i, j*8+k] + i with j vectorized 4 around k vectorized 8."""
    rows, cols = 32, 32
    bufs = [tir.decl_buffer((rows, cols), "float32", name) for name in "AC"]
    ib = ir_builder.create()
    A, C = (ib.buffer_ptr(b) for b in bufs)
    with (
        ib.for_range(0, rows, name="i") as i,
        ib.for_range(0, 4, name="j", kind="vectorize") as j,
        ib.for_range(0, 8, name="k", kind="vectorize") as k,
    ):
        C[i, j * 8 + k] = A[i, j * 8 + k] * 2.0 + i.astype("float32")
    func = tir.PrimFunc(bufs, ib.get())
    row_index = np.arange(rows, dtype="float32")[:, None]
    return Kernel(
        func,
        lambda rng: (_floats(rng, (rows, cols)), np.zeros((rows, cols), "float32")),
        lambda ins: {1: ins[0] * np.float32(2) + row_index},
    )


def index_2d() -> Kernel:
    """C[i, j] = A[i, j] + B[j, i] (a transpose read) on 2-D buffers."""
    m = 32
    bufs = [tir.decl_buffer((m, m), "float32", name) for name in "ABC"]
    ib = ir_builder.create()
    A, B, C = (ib.buffer_ptr(b) for b in bufs)
    with ib.for_range(0, m, name="i") as i, ib.for_range(0, m, name="j", kind="vectorize") as j:
        C[i, j] = A[i, j] + B[j, i]
    func = tir.PrimFunc(bufs, ib.get())
    return Kernel(
        func,
        lambda rng: (_floats(rng, (m, m)), _floats(rng, (m, m)), np.zeros((m, m), "float32")),
        lambda ins: {2: ins[0] + ins[1].T},
    )


def strided_reversed() -> Kernel:
    """B[i] = A[2*i] (stride 2) and C[i] = A[2n-1-i] (reversed)."""
    half = N // 2
    ib = ir_builder.create()
    A, B, C = _pointers(ib, "float32", "A", "B", "C")
    with (
        ib.for_range(0, half // 4, name="i") as i,
        ib.for_range(0, 4, name="j", kind="vectorize") as j,
    ):
        k = i * 4 + j
        B[k] = A[k * 2]
        C[k] = A[N - 1 - k]
    func = tir.PrimFunc([A, B, C], ib.get())
    return Kernel(
        func,
        lambda rng: (_floats(rng, N), np.zeros(half, "float32"), np.zeros(half, "float32")),
        lambda ins: {1: ins[0][0::2][:half], 2: ins[0][::-1][:half]},
    )


def gather() -> Kernel:
    """C[i] = A[idx[i]] through an int32 index buffer."""
    ib = ir_builder.create()
    A, C = _pointers(ib, "float32", "A", "C")
    idx = ib.pointer("int32", name="idx")
    with _vector_loop(ib, N // 8) as k:
        C[k] = A[idx[k]]
    func = tir.PrimFunc([A, idx, C], ib.get())
    return Kernel(
        func,
        lambda rng: (_floats(rng, N), rng.integers(0, N, N).astype("int32"),
                     np.zeros(N, "float32")),
        lambda ins: {2: ins[0][ins[1]]},
    )


def parallel_rows() -> Kernel:
    """B[r, c] = A[r, c] * 3 - 1 with a parallel row loop and a vectorized column loop."""
    rows, cols = 25, 40
    bufs = [tir.decl_buffer((rows, cols), "float32", name) for name in "AB"]
    ib = ir_builder.create()
    A, B = (ib.buffer_ptr(b) for b in bufs)
    with (
        ib.for_range(0, rows, name="r", kind="parallel") as r,
        ib.for_range(0, cols // 8, name="c") as c,
        ib.for_range(0, 8, name="v", kind="vectorize") as v,
    ):
        B[r, c * 8 + v] = A[r, c * 8 + v] * 3.0 - 1.0
    func = tir.PrimFunc(bufs, ib.get())
    return Kernel(
        func,
        lambda rng: (_floats(rng, (rows, cols)), np.zeros((rows, cols), "float32")),
        lambda ins: {1: ins[0] * np.float32(3) - np.float32(1)},
    )


def strided_param() -> Kernel:
    """B = 2 * A where A is a column slice of a wider matrix (declared symbolic row stride)."""
    rows, cols = 16, 24
    s = tir.size_var("s")
    A = tir.decl_buffer((rows, cols), "float32", "A", strides=[s, 1])
    B = tir.decl_buffer((rows, cols), "float32", "B")
    ib = ir_builder.create()
    a, b = ib.buffer_ptr(A), ib.buffer_ptr(B)
    with (
        ib.for_range(0, rows, name="r") as r,
        ib.for_range(0, cols // 8, name="c") as c,
        ib.for_range(0, 8, name="v", kind="vectorize") as v,
    ):
        b[r, c * 8 + v] = a[r, c * 8 + v] * 2.0
    func = tir.PrimFunc([A, B], ib.get())
    return Kernel(
        func,
        lambda rng: (_floats(rng, (rows, cols + 10))[:, 3:3 + cols],
                     np.zeros((rows, cols), "float32")),
        lambda ins: {1: ins[0] * np.float32(2)},
    )


# ---------------------------------------------------------------- reductions


def serial_sum() -> Kernel:
    """S[0] = sum(A) in a serial loop, accumulated in the output buffer (float64)."""
    ib = ir_builder.create()
    A, S = _pointers(ib, "float64", "A", "S")
    S[0] = 0.0
    with ib.for_range(0, N, name="i") as i:
        S[0] += A[i]
    func = tir.PrimFunc([A, S], ib.get())
    return Kernel(
        func,
        lambda rng: (_floats(rng, N, "float64"), np.zeros(1, "float64")),
        lambda ins: {1: np.array([ins[0].sum()])},
    )


def vectorized_int_sum() -> Kernel:
    """S[0] = sum(A) (int32) accumulated in a local buffer over a vectorized inner loop."""
    ib = ir_builder.create()
    A, S = _pointers(ib, "int32", "A", "S")
    acc = ib.allocate("int32", (1,), name="acc")
    acc[0] = 0
    with _vector_loop(ib, N // 8) as k:
        acc[0] = acc[0] + A[k]
    S[0] = acc[0]
    func = tir.PrimFunc([A, S], ib.get())
    return Kernel(
        func,
        lambda rng: (rng.integers(-1000, 1000, N).astype("int32"), np.zeros(1, "int32")),
        lambda ins: {1: np.array([ins[0].sum()], "int32")},
    )


def local_vector_buffer() -> Kernel:
    """B = 2 * A + 1 through an 8-element local buffer written and read by vectorized loops."""
    ib = ir_builder.create()
    A, B = _pointers(ib, "float32", "A", "B")
    tmp = ib.allocate("float32", (8,), name="tmp")
    with ib.for_range(0, N // 8, name="i") as i:
        with ib.for_range(0, 8, name="j", kind="vectorize") as j:
            tmp[j] = A[i * 8 + j] * 2.0
        with ib.for_range(0, 8, name="j", kind="vectorize") as j:
            B[i * 8 + j] = tmp[j] + 1.0
    func = tir.PrimFunc([A, B], ib.get())
    return Kernel(
        func,
        lambda rng: (_floats(rng, N), np.zeros(N, "float32")),
        lambda ins: {1: ins[0] * np.float32(2) + np.float32(1)},
    )


# ---------------------------------------------------------------- dtype coverage


def elementwise_dtype(dtype: str) -> Kernel:
    """C = A * B + A and D = max(A, B) - min(A, B) in ``dtype`` (narrow/unsigned ints wrap)."""
    ib = ir_builder.create()
    A, B, C, D = _pointers(ib, dtype, "A", "B", "C", "D")
    with _vector_loop(ib, N // 8) as k:
        a, b = A[k], B[k]
        C[k] = a * b + a
        D[k] = tir.max(a, b) - tir.min(a, b)
    func = tir.PrimFunc([A, B, C, D], ib.get())
    is_float = dtype.startswith("float")

    def make_inputs(rng):
        make = (lambda: _floats(rng, N, dtype)) if is_float else (lambda: _ints(rng, N, dtype))
        return make(), make(), np.zeros(N, dtype), np.zeros(N, dtype)

    def reference(ins):
        with np.errstate(over="ignore"):
            a, b = ins[0], ins[1]
            return {2: a * b + a, 3: np.maximum(a, b) - np.minimum(a, b)}

    return Kernel(func, make_inputs, reference)


def bool_logic() -> Kernel:
    """C = (A and not B) or (A == B) on bool buffers."""
    ib = ir_builder.create()
    A, B, C = _pointers(ib, "bool", "A", "B", "C")
    with _vector_loop(ib, N // 8) as k:
        a, b = A[k], B[k]
        C[k] = tir.any(tir.all(a, tir.Not(b)), tir.EQ(a, b))
    func = tir.PrimFunc([A, B, C], ib.get())
    return Kernel(
        func,
        lambda rng: (rng.random(N) < 0.5, rng.random(N) < 0.5, np.zeros(N, bool)),
        lambda ins: {2: (ins[0] & ~ins[1]) | (ins[0] == ins[1])},
    )


# ---------------------------------------------------------------- if-conversion


def conv3x3_guarded_func() -> tir.PrimFunc:
    """``out[y, x] = sum of img[y + dy, x + dx] * K[dy * 3 + dx]`` for ``x < w - 2``.

    The inner x loop runs over the whole row (``vectorize``) with the guard
    ``if x < w - 2`` inside: IfConvertVectorLoops makes it masked accesses.
    Rows ``h - 2`` and up and columns ``w - 2`` and up of ``out`` are not written.
    """
    h, w = tir.size_var("h"), tir.size_var("w")
    img = tir.decl_buffer((h, w), "float32", name="img")
    weights = tir.decl_buffer((9,), "float32", name="K")
    out = tir.decl_buffer((h, w), "float32", name="out")
    ib = ir_builder.create()
    src, k, dst = (ib.buffer_ptr(b) for b in (img, weights, out))
    with ib.for_range(0, h - 2, name="y") as y, \
            ib.for_range(0, w, kind="vectorize", name="x") as x:
        with ib.if_scope(x < w - 2):
            total = src[y, x] * k[0]
            for tap in range(1, 9):
                total = total + src[y + tap // 3, x + tap % 3] * k[tap]
            dst[y, x] = total
    return tir.PrimFunc([img, weights, out], ib.get())


def conv3x3_reference(img: np.ndarray, weights: np.ndarray, out: np.ndarray) -> np.ndarray:
    """NumPy's ``conv3x3_guarded_func``: ``out`` with its written part replaced."""
    h, w = img.shape
    result = out.copy()
    if h < 3 or w < 3:
        return result
    total = img[:-2, :-2] * weights[0]
    for tap in range(1, 9):
        dy, dx = divmod(tap, 3)
        total = total + img[dy:h - 2 + dy, dx:w - 2 + dx] * weights[tap]
    result[:-2, :-2] = total
    return result


def conv3x3_guarded() -> Kernel:
    """The guarded 3x3 convolution on a 34 x 37 image (37: not a multiple of a vector)."""
    return Kernel(
        conv3x3_guarded_func(),
        lambda rng: (_floats(rng, 34 * 37).reshape(34, 37), _floats(rng, 9),
                     np.zeros((34, 37), "float32")),
        lambda ins: {2: conv3x3_reference(*ins)},
    )


def guarded_division() -> Kernel:
    """``if B != 0: C = A // B else: C = -1`` (int32): the division is if-converted."""
    ib = ir_builder.create()
    A, B, C = _pointers(ib, "int32", "A", "B", "C")
    with _vector_loop(ib, N // 8) as k:
        with ib.if_scope(B[k] != 0):
            C[k] = tir.floordiv(A[k], B[k])
        with ib.else_scope():
            C[k] = tir.const(-1, "int32")
    func = tir.PrimFunc([A, B, C], ib.get())

    def make_inputs(rng):
        b = rng.integers(-3, 4, N, dtype="int32")  # many zeros and -1s
        return _ints(rng, N, "int32"), b, np.zeros(N, "int32")

    def reference(ins):
        a, b = ins[0], ins[1]
        return {2: np.where(b != 0, a // np.where(b != 0, b, 1), -1).astype("int32")}

    return Kernel(func, make_inputs, reference)


INT_DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
FLOAT_DTYPES = ["float16", "float32", "float64"]

#: name -> kernel builder, in a stable order for test ids.
KERNELS: dict[str, Callable[[], Kernel]] = {
    "vector_add": vector_add,
    "guarded_tail": guarded_tail,
    "let_binding": let_binding,
    "if_else": if_else,
    "relu_select": relu_select,
    "math_intrinsics": math_intrinsics,
    "cast_int8_to_float": cast_int8_to_float,
    "cast_float_to_int": cast_float_to_int,
    "reinterpret_bits": reinterpret_bits,
    "int_division": int_division,
    "nested_vectorized": nested_vectorized,
    "index_2d": index_2d,
    "strided_reversed": strided_reversed,
    "gather": gather,
    "parallel_rows": parallel_rows,
    "strided_param": strided_param,
    "serial_sum": serial_sum,
    "vectorized_int_sum": vectorized_int_sum,
    "local_vector_buffer": local_vector_buffer,
    "bool_logic": bool_logic,
    "conv3x3_guarded": conv3x3_guarded,
    "guarded_division": guarded_division,
}
for _dtype in INT_DTYPES + FLOAT_DTYPES:
    KERNELS[f"elementwise_{_dtype}"] = functools.partial(elementwise_dtype, _dtype)
