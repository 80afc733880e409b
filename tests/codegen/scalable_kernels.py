"""Hand-built scalable-vector (SVE) kernels, each with a NumPy reference.

Each kernel is TIR written with ``Ramp``/``Broadcast`` of ``k * vscale()``
lanes directly (no vectorizer), the forms the vectorizer emits for
``vectorized(k * vscale())`` loops. ``KERNELS`` maps a name to a ``Kernel``:
``make(dtype)`` builds the PrimFunc, ``inputs(dtype, rng)`` the input arrays,
``reference(inputs, vscale, dtype)`` the expected output arrays. All buffers
hold ``N`` elements; kernels whose loop runs ``N // VL`` full vectors rely on
``N`` being a multiple of every vector length (VL <= 16 * 16 lanes).
Used by test_scalable_codegen.py (LLVM IR and asm) and test_scalable_interp.py.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

import tir
from tir import dtype as dt

N = 512
INTS = ["int8", "int16", "int32", "int64", "uint8", "uint32"]
FLOATS = ["float32", "float16"]
ALL = FLOATS + INTS


def lanes_for(dtype: str) -> int:
    """The vscale multiplier that fills one 128-bit SVE granule with ``dtype``."""
    return 128 // dt.DataType(dtype).bits


def sdtype(dtype: str, k: int) -> str:
    """``dtype`` as a scalable vector of ``k * vscale`` lanes."""
    return f"{dtype}xvscalex{k}"


@dataclass
class Kernel:
    """A PrimFunc builder, its inputs and its NumPy reference."""

    make: Callable[[str], tir.PrimFunc]
    inputs: Callable[[str, np.random.Generator], list]
    reference: Callable[[list, int, str], list]
    dtypes: tuple = tuple(ALL)


def _vl(dtype: str):
    k = lanes_for(dtype)
    return k, k * tir.vscale()


def _buffers(names: str, dtype: str) -> list:
    return [tir.decl_buffer((N,), dtype, name=n) for n in names]


def _loop(i, extent, body) -> tir.For:
    return tir.For(i, 0, extent, tir.ForKind.SERIAL, body)


def _random(dtype: str, rng, low=-50, high=50, n=N) -> np.ndarray:
    t = dt.DataType(dtype)
    if t.is_float:
        return rng.uniform(low, high, n).astype(dtype)
    if t.is_uint:
        low = max(low, 0)
    return rng.integers(low, high, n).astype(dtype)


def _nonzero(dtype: str, rng) -> np.ndarray:
    x = _random(dtype, rng, 1, 20)
    return x


# ---------------------------------------------------------------- element-wise arithmetic

#: Binary ops stored into rows of C; float16 computes in float16 (as LLVM's half does).
_BINARY = [
    ("add", lambda a, b: a + b, np.add),
    ("sub", lambda a, b: a - b, np.subtract),
    ("mul", lambda a, b: a * b, np.multiply),
    ("min", tir.min, np.minimum),
    ("max", tir.max, np.maximum),
]


def _arith(dtype):
    """C[j, r] = op_j(A[r], B[r]) for add/sub/mul/min/max, plus truncating/flooring div/mod."""
    k, vl = _vl(dtype)
    A, B = _buffers("AB", dtype)
    ops = [f for _, f, _ in _BINARY] + [tir.truncdiv, tir.floordiv]
    if not dt.DataType(dtype).is_float:
        ops += [tir.truncmod, tir.floormod]
    C = tir.decl_buffer((len(ops), N), dtype, name="C")
    i = tir.Var("i", "int32")
    r = tir.Ramp(i * vl, 1, vl)
    a, b = tir.BufferLoad(A, [r]), tir.BufferLoad(B, [r])
    stores = [tir.BufferStore(C, f(a, b), [j, r]) for j, f in enumerate(ops)]
    return tir.PrimFunc([A, B, C], _loop(i, N // vl, tir.SeqStmt(stores)))


def _arith_ref(ins, vscale, dtype):
    a, b = ins
    rows = [np_f(a, b) for _, _, np_f in _BINARY]
    if dt.DataType(dtype).is_float:
        rows += [a / b, np.floor(a / b)]
    else:
        q = np.trunc(a.astype(np.float64) / b).astype(dtype)
        rows += [q, np.floor_divide(a, b), a - q * b, np.mod(a, b)]
    return [np.stack(rows).astype(dtype)]


# ---------------------------------------------------------------- compares, logic, select


def _logic(dtype):
    """C[r] = Select((a < b) & !(a == 0) | (a >= b + 3), a, b); M[r] = (a != b) (bool)."""
    k, vl = _vl(dtype)
    A, B, C = _buffers("ABC", dtype)
    M = tir.decl_buffer((N,), "bool", name="M")
    i = tir.Var("i", "int32")
    r = tir.Ramp(i * vl, 1, vl)
    a, b = tir.BufferLoad(A, [r]), tir.BufferLoad(B, [r])
    zero = tir.Broadcast(tir.const(0, dtype), vl)
    three = tir.Broadcast(tir.const(3, dtype), vl)
    cond = tir.Or(tir.And(tir.LT(a, b), tir.Not(tir.EQ(a, zero))), tir.GE(a, b + three))
    body = tir.SeqStmt([tir.BufferStore(C, tir.Select(cond, a, b), [r]),
                        tir.BufferStore(M, tir.NE(a, b), [r])])
    return tir.PrimFunc([A, B, C, M], _loop(i, N // vl, body))


def _logic_inputs(dtype, rng):
    a, b = _random(dtype, rng, 0, 20), _random(dtype, rng, 0, 20)
    a[::7] = 0
    b[::5] = a[::5]
    return [a, b]


def _logic_ref(ins, vscale, dtype):
    a, b = ins
    three = np.array(3, dtype)
    cond = ((a < b) & (a != 0)) | (a >= b + three)
    return [np.where(cond, a, b), a != b]


# ---------------------------------------------------------------- casts, reinterpret, let


def _convert(dtype):
    """F[r] = float32(a) * 0.5; W[r] = int32(a) + Let(t = a, t * t)...; R[r] = reinterpret(a)."""
    k, vl = _vl(dtype)
    (A,) = _buffers("A", dtype)
    F = tir.decl_buffer((N,), "float32", name="F")
    W = tir.decl_buffer((N,), "int32", name="W")
    rtype = _reinterpreted(dtype)
    R = tir.decl_buffer((N,), rtype, name="R")
    i = tir.Var("i", "int32")
    r = tir.Ramp(i * vl, 1, vl)
    a = tir.BufferLoad(A, [r])
    half = tir.Broadcast(tir.const(0.5, "float32"), vl)
    t = tir.Var("t", sdtype("int32", k))
    wide = tir.Cast(sdtype("int32", k), a)
    let = tir.Let(t, wide, t * t + t)
    body = tir.SeqStmt([
        tir.BufferStore(F, tir.Cast(sdtype("float32", k), a) * half, [r]),
        tir.BufferStore(W, let, [r]),
        tir.BufferStore(R, tir.Call(sdtype(rtype, k), "tir.reinterpret", [a]), [r]),
    ])
    return tir.PrimFunc([A, F, W, R], _loop(i, N // vl, body))


def _convert_ref(ins, vscale, dtype):
    (a,) = ins
    w = np.trunc(a.astype(np.float64)).astype(np.int64).astype(np.int32)
    return [a.astype(np.float32) * np.float32(0.5), (w * w + w).astype(np.int32),
            a.view(_reinterpreted(dtype))]


def _reinterpreted(dtype: str) -> str:
    """A dtype of the same width to reinterpret ``dtype`` as."""
    return {"float32": "uint32", "float16": "uint16", "int8": "uint8", "uint8": "int8",
            "int16": "float16", "int32": "float32", "int64": "float64",
            "uint32": "int32"}[dtype]


def _convert_inputs(dtype, rng):
    a = _random(dtype, rng, 0 if dt.DataType(dtype).is_uint else -100, 100)
    return [a, np.zeros(N, np.float32), np.zeros(N, np.int32), np.zeros(N, _reinterpreted(dtype))]


# ---------------------------------------------------------------- if_then_else, broadcast, ramps


def _if_then_else(dtype):
    """C[r] = if_then_else(a > b, a, b + s) (a lane condition: a blend), and a scalar
    condition choosing between two scalable values; Ramp as a value: D[r] = cast(ramp(i, s))."""
    k, vl = _vl(dtype)
    A, B, C, D = _buffers("ABCD", dtype)
    s = tir.Var("s", dtype)
    i = tir.Var("i", "int32")
    r = tir.Ramp(i * vl, 1, vl)
    a, b = tir.BufferLoad(A, [r]), tir.BufferLoad(B, [r])
    sd = sdtype(dtype, k)
    lane_choice = tir.Call(sd, "tir.if_then_else", [tir.GT(a, b), a, b + tir.Broadcast(s, vl)])
    scalar_choice = tir.if_then_else(tir.LT(i, 2), a, b)
    ramp = tir.Cast(sd, tir.Ramp(i, 3, vl))
    body = tir.SeqStmt([tir.BufferStore(C, lane_choice, [r]),
                        tir.BufferStore(D, scalar_choice + ramp, [r])])
    return tir.PrimFunc([A, B, C, D, s], _loop(i, N // vl, body))


def _if_then_else_inputs(dtype, rng):
    return [_random(dtype, rng, 0, 20), _random(dtype, rng, 0, 20), 5]


def _if_then_else_ref(ins, vscale, dtype):
    a, b, s = ins
    vl = lanes_for(dtype) * vscale
    c = np.where(a > b, a, b + np.array(s, dtype))
    idx = np.arange(N)
    it = idx // vl
    ramp = (it + 3 * (idx % vl)).astype(np.int64).astype(dtype)
    d = np.where(it < 2, a, b) + ramp
    return [c.astype(dtype), d.astype(dtype)]


# ---------------------------------------------------------------- predicated access


def _predicated(dtype):
    """C[r] = A[r] * 2 under get_active_lane_mask(base, n); D[r] = A[r] where A[r] > 0."""
    k, vl = _vl(dtype)
    A, C, D = _buffers("ACD", dtype)
    n = tir.Var("n", "int32")
    i = tir.Var("i", "int32")
    r = tir.Ramp(i * vl, 1, vl)
    mask = tir.op.get_active_lane_mask(f"uint1xvscalex{k}", i * vl, n)
    a = tir.BufferLoad(A, [r], predicate=mask)
    two = tir.Broadcast(tir.const(2, dtype), vl)
    positive = tir.GT(tir.BufferLoad(A, [r]), tir.Broadcast(tir.const(0, dtype), vl))
    body = tir.SeqStmt([
        tir.BufferStore(C, a * two, [r], predicate=mask),
        tir.BufferStore(D, tir.BufferLoad(A, [r], predicate=positive), [r], predicate=positive),
    ])
    extent = tir.floordiv(n + vl - 1, vl)
    return tir.PrimFunc([A, C, D, n], _loop(i, extent, body))


def _predicated_inputs(dtype, rng):
    return [_random(dtype, rng, -20 if not dt.DataType(dtype).is_uint else 0, 20),
            np.full(N, 7, dtype), np.full(N, 9, dtype), N - 37]


def _predicated_ref(ins, vscale, dtype):
    a, c, d, n = ins
    c, d = c.copy(), d.copy()
    c[:n] = a[:n] * np.array(2, dtype)
    vl = lanes_for(dtype) * vscale
    covered = -(-n // vl) * vl  # the loop runs over whole vectors up to n
    positive = (a > 0) & (np.arange(N) < covered)
    d[positive] = a[positive]
    return [c, d]


# ---------------------------------------------------------------- gathers and scatters


def _gather_scatter(dtype):
    """G[r] = A[2 * r] (stride 2); H[r] = A[idx[r]] (data indices, masked by a compare);
    S[idx[r]] = A[r] (a scatter)."""
    k, vl = _vl(dtype)
    A = tir.decl_buffer((2 * N,), dtype, name="A")
    G, H, S = _buffers("GHS", dtype)
    idx = tir.decl_buffer((N,), "int32", name="idx")
    i = tir.Var("i", "int32")
    r = tir.Ramp(i * vl, 1, vl)
    strided = tir.Ramp(i * vl * 2, 2, vl)
    index = tir.BufferLoad(idx, [r])
    even = tir.EQ(tir.floormod(index, tir.Broadcast(2, vl)), tir.Broadcast(0, vl))
    body = tir.SeqStmt([
        tir.BufferStore(G, tir.BufferLoad(A, [strided]), [r]),
        tir.BufferStore(H, tir.BufferLoad(A, [index], predicate=even), [r]),
        tir.BufferStore(S, tir.BufferLoad(A, [r]), [index]),
    ])
    return tir.PrimFunc([A, idx, G, H, S], _loop(i, N // vl, body))


def _gather_inputs(dtype, rng):
    return [_random(dtype, rng, n=2 * N), rng.permutation(N).astype(np.int32),
            np.zeros(N, dtype), np.zeros(N, dtype), np.zeros(N, dtype)]


def _gather_ref(ins, vscale, dtype):
    a, idx, _, _, _ = ins
    s = np.zeros(N, dtype)
    s[idx] = a[:N]
    return [a[0:2 * N:2], np.where(idx % 2 == 0, a[idx], 0).astype(dtype), s]


# ---------------------------------------------------------------- horizontal reductions

_REDUCE_KINDS_INT = ("add", "mul", "min", "max", "and", "or", "xor")
_REDUCE_KINDS_FLOAT = ("add", "mul", "min", "max", "add_reassoc", "mul_reassoc")


def _reductions(dtype):
    """Out[j, i] = vector_reduce_<kind_j>(A[i-th vector]) for every kind the dtype has."""
    k, vl = _vl(dtype)
    (A,) = _buffers("A", dtype)
    kinds = _kinds(dtype)
    Out = tir.decl_buffer((len(kinds), N), dtype, name="Out")
    i = tir.Var("i", "int32")
    a = tir.BufferLoad(A, [tir.Ramp(i * vl, 1, vl)])
    stores = [tir.BufferStore(Out, tir.Call(dtype, f"tir.vector_reduce_{kind}", [a]), [j, i])
              for j, kind in enumerate(kinds)]
    return tir.PrimFunc([A, Out], _loop(i, N // vl, tir.SeqStmt(stores)))


def _kinds(dtype):
    return _REDUCE_KINDS_FLOAT if dt.DataType(dtype).is_float else _REDUCE_KINDS_INT


def _reductions_inputs(dtype, rng):
    if dt.DataType(dtype).is_float:  # products of 64 lanes stay finite in float16
        a = rng.uniform(0.9, 1.1, N).astype(dtype)
        a[::3] *= -1
        return [a, np.zeros((len(_kinds(dtype)), N), dtype)]
    return [_random(dtype, rng, -100, 100), np.zeros((len(_kinds(dtype)), N), dtype)]


def _reductions_ref(ins, vscale, dtype):
    a, out = ins
    out = out.copy()
    vl = lanes_for(dtype) * vscale
    groups = a.reshape(-1, vl)
    table = {"add": np.add, "mul": np.multiply, "min": np.minimum, "max": np.maximum,
             "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor,
             "add_reassoc": np.add, "mul_reassoc": np.multiply}
    for j, kind in enumerate(_kinds(dtype)):
        if kind.split("_")[0] in ("add", "mul"):
            # sums and products in lane order (LLVM's ordered float reductions)
            first = np.array(1 if "mul" in kind else -0.0, dtype)
            out[j, : len(groups)] = [functools.reduce(table[kind], g, first) for g in groups]
        else:
            out[j, : len(groups)] = table[kind].reduce(groups, axis=1, dtype=dtype)
    return [out]


# ---------------------------------------------------------------- scalable accumulators


def _accumulate(dtype):
    """acc (an Allocate of 2 * k * vscale elements, two accumulators) sums A by vectors;
    S[0] = vector_reduce_add(acc[0:VL] + acc[VL:2VL]). T[0] = sum via a scalable-dtype
    Allocate (one element of dtype ``<vscale x k x T>``)."""
    k, vl = _vl(dtype)
    (A,) = _buffers("A", dtype)
    S = tir.decl_buffer((2,), dtype, name="S")
    sd = sdtype(dtype, k)
    acc = tir.decl_buffer((2 * vl,), dtype, name="acc", scope="local")
    vacc = tir.decl_buffer((1,), sd, name="vacc", scope="local")
    i = tir.Var("i", "int32")
    zero = tir.Broadcast(tir.const(0, dtype), vl)
    lo, hi = tir.Ramp(0, 1, vl), tir.Ramp(vl, 1, vl)
    a0 = tir.BufferLoad(A, [tir.Ramp(i * 2 * vl, 1, vl)])
    a1 = tir.BufferLoad(A, [tir.Ramp(i * 2 * vl + vl, 1, vl)])
    loop = _loop(i, N // (2 * vl), tir.SeqStmt([
        tir.BufferStore(acc, tir.BufferLoad(acc, [lo]) + a0, [lo]),
        tir.BufferStore(acc, tir.BufferLoad(acc, [hi]) + a1, [hi]),
        tir.BufferStore(vacc, tir.BufferLoad(vacc, [0]) + a0 + a1, [0]),
    ]))
    total = tir.BufferLoad(acc, [lo]) + tir.BufferLoad(acc, [hi])
    body = tir.SeqStmt([
        tir.BufferStore(acc, zero, [lo]), tir.BufferStore(acc, zero, [hi]),
        tir.BufferStore(vacc, zero, [0]),
        loop,
        tir.BufferStore(S, tir.Call(dtype, "tir.vector_reduce_add_reassoc"
                                    if dt.DataType(dtype).is_float else "tir.vector_reduce_add",
                                    [total]), [0]),
        tir.BufferStore(S, tir.Call(dtype, "tir.vector_reduce_add",
                                    [tir.BufferLoad(vacc, [0])]), [1]),
    ])
    body = tir.Allocate(vacc.data, sd, [1], tir.const(True), body)
    body = tir.Allocate(acc.data, dtype, [2 * vl], tir.const(True), body)
    return tir.PrimFunc([A, S], body)


def _accumulate_inputs(dtype, rng):
    if dt.DataType(dtype).is_float:
        return [rng.integers(-4, 5, N).astype(dtype), np.zeros(2, dtype)]
    return [_random(dtype, rng, 0, 3), np.zeros(2, dtype)]


def _accumulate_ref(ins, vscale, dtype):
    a, _ = ins
    total = np.add.reduce(a, dtype=dtype)
    return [np.array([total, total], dtype)]


# ---------------------------------------------------------------- vscale in scalar indices


def _vscale_index(dtype):
    """C[i * VL + VL - 1] = A[i * VL] + vscale (scalar accesses at vscale-dependent indices);
    V[0] = vscale."""
    k, vl = _vl(dtype)
    A, C = _buffers("AC", dtype)
    V = tir.decl_buffer((1,), "int32", name="V")
    i = tir.Var("i", "int32")
    value = tir.BufferLoad(A, [i * vl]) + tir.Cast(dtype, tir.vscale())
    body = tir.SeqStmt([
        tir.BufferStore(C, value, [i * vl + vl - 1]),
        tir.BufferStore(V, tir.vscale() * 1, [0]),
    ])
    return tir.PrimFunc([A, C, V], _loop(i, N // vl, body))


def _vscale_index_inputs(dtype, rng):
    return [_random(dtype, rng, 0, 50), np.zeros(N, dtype), np.zeros(1, np.int32)]


def _vscale_index_ref(ins, vscale, dtype):
    a, c, _ = ins
    vl = lanes_for(dtype) * vscale
    c = c.copy()
    c[vl - 1::vl] = a[::vl] + np.array(vscale, dtype)
    return [c, np.array([vscale], np.int32)]


KERNELS = {
    "arith": Kernel(_arith, lambda d, rng: [_random(d, rng), _nonzero(d, rng),
                                            np.zeros((9 if "int" in d else 7, N), d)],
                    lambda ins, v, d: _arith_ref(ins[:2], v, d)),
    "logic": Kernel(_logic, lambda d, rng: _logic_inputs(d, rng) + [np.zeros(N, d),
                                                                     np.zeros(N, bool)],
                    lambda ins, v, d: _logic_ref(ins[:2], v, d)),
    "convert": Kernel(_convert, _convert_inputs, lambda ins, v, d: _convert_ref(ins[:1], v, d)),
    "if_then_else": Kernel(_if_then_else, lambda d, rng: _if_then_else_inputs(d, rng)[:2] + [
        np.zeros(N, d), np.zeros(N, d), 5],
        lambda ins, v, d: _if_then_else_ref([ins[0], ins[1], ins[4]], v, d)),
    "predicated": Kernel(_predicated, _predicated_inputs, _predicated_ref),
    "gather_scatter": Kernel(_gather_scatter, _gather_inputs, _gather_ref),
    "reductions": Kernel(_reductions, _reductions_inputs, _reductions_ref),
    "accumulate": Kernel(_accumulate, _accumulate_inputs, _accumulate_ref),
    "vscale_index": Kernel(_vscale_index, _vscale_index_inputs, _vscale_index_ref),
}

#: Outputs of each kernel: positions of the output arrays in its argument list.
OUTPUTS = {
    "arith": [2], "logic": [2, 3], "convert": [1, 2, 3], "if_then_else": [2, 3],
    "predicated": [1, 2], "gather_scatter": [2, 3, 4], "reductions": [1],
    "accumulate": [1], "vscale_index": [1, 2],
}
