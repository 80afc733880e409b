"""The kernels of bench_access.py written for Apache TVM, run as a worker in TVM's own venv.

bench_access.py starts this as ``$TVM_PYTHON benchmarks/bench_access_tvm.py
CONFIG_JSON`` and drives it through bench_access_common.serve: it builds and
checks every kernel, then runs one kernel per line of stdin and prints its time.

Each kernel is TVMScript with the loop structure a TVM user writes: a serial
loop over blocks of LANES (the host's vector width in float32), an inner
``T.vectorized(LANES)`` loop. TVM's VectorizeLoop keeps a reduction serial, so
the strided sums carry a hand-written accumulator of 4 x LANES lanes (four
registers, so the adds overlap) and a serial combine, as bench_reach_tvm.py
does. The transpose walks tiles of 8 x 8 (common.TRANSPOSE_TILE) with the row loop serial and
the column loop vectorized (contiguous stores, strided loads).
"""

from __future__ import annotations

import json
import sys

import bench_access_common as common  # the same directory
import tvm
from tvm.script import tirx as T


def kernels(n: int, L: int) -> dict:  # noqa: C901, N803 (one TVMScript function per kernel)
    """TVMScript functions for the kernels of bench_access.py (n output elements)."""
    blocks = n // L
    ACC = 4 * L  # noqa: N806 (the accumulator width, a constant)
    side = common.transpose_side(n)
    TT = common.TRANSPOSE_TILE  # noqa: N806 (a constant)
    tiles = side // TT
    w0, w1, w2 = common.GRAY_F32
    u0, u1, u2 = common.GRAY_U8

    def copy(stride: int):
        @T.prim_func
        def f(A: T.Buffer((stride * n,), "float32"), B: T.Buffer((n,), "float32")):
            for i in range(blocks):
                for j in T.vectorized(L):
                    B[i * L + j] = A[stride * (i * L + j)]
        return f

    def total(stride: int):
        @T.prim_func
        def f(A: T.Buffer((stride * n,), "float32"), S: T.Buffer((1,), "float32")):
            acc = T.alloc_buffer((ACC,), "float32")
            for j in T.vectorized(ACC):
                acc[j] = T.float32(0)
            for i in range(n // ACC):
                for j in T.vectorized(ACC):
                    acc[j] = acc[j] + A[stride * (i * ACC + j)]
            S[0] = T.float32(0)
            for j in range(ACC):
                S[0] = S[0] + acc[j]
        return f

    @T.prim_func
    def reverse(A: T.Buffer((n,), "float32"), B: T.Buffer((n,), "float32")):
        for i in range(blocks):
            for j in T.vectorized(L):
                B[i * L + j] = A[n - 1 - (i * L + j)]

    @T.prim_func
    def cmul(X: T.Buffer((2 * n,), "float32"), Y: T.Buffer((2 * n,), "float32"),
             C: T.Buffer((2 * n,), "float32")):
        for i in range(blocks):
            for j in T.vectorized(L):
                C[2 * (i * L + j)] = (X[2 * (i * L + j)] * Y[2 * (i * L + j)]
                                      - X[2 * (i * L + j) + 1] * Y[2 * (i * L + j) + 1])
                C[2 * (i * L + j) + 1] = (X[2 * (i * L + j)] * Y[2 * (i * L + j) + 1]
                                          + X[2 * (i * L + j) + 1] * Y[2 * (i * L + j)])

    @T.prim_func
    def gray_f32(RGB: T.Buffer((3 * n,), "float32"), G: T.Buffer((n,), "float32")):
        for i in range(blocks):
            for j in T.vectorized(L):
                G[i * L + j] = (T.float32(w0) * RGB[3 * (i * L + j)]
                                + T.float32(w1) * RGB[3 * (i * L + j) + 1]
                                + T.float32(w2) * RGB[3 * (i * L + j) + 2])

    @T.prim_func
    def gray_u8(RGB: T.Buffer((3 * n,), "uint8"), G: T.Buffer((n,), "uint8")):
        for i in range(blocks):
            for j in T.vectorized(L):
                G[i * L + j] = T.Cast("uint8", (
                    T.Cast("int32", RGB[3 * (i * L + j)]) * u0
                    + T.Cast("int32", RGB[3 * (i * L + j) + 1]) * u1
                    + T.Cast("int32", RGB[3 * (i * L + j) + 2]) * u2 + 128) >> 8)

    @T.prim_func
    def transpose(A: T.Buffer((side, side), "float32"), B: T.Buffer((side, side), "float32")):
        for io in range(tiles):
            for jo in range(tiles):
                for i in range(TT):
                    for j in T.vectorized(TT):
                        B[io * TT + i, jo * TT + j] = A[jo * TT + j, io * TT + i]

    @T.prim_func
    def gather(A: T.Buffer((n,), "float32"), idx: T.Buffer((n,), "int32"),
               C: T.Buffer((n,), "float32")):
        for i in range(blocks):
            for j in T.vectorized(L):
                C[i * L + j] = A[idx[i * L + j]]

    return {"copy_s2": copy(2), "copy_s3": copy(3), "sum_s2": total(2), "sum_s3": total(3),
            "reverse": reverse, "cmul": cmul, "rgb_gray_f32": gray_f32, "rgb_gray_u8": gray_u8,
            "transpose": transpose, "gather": gather}


def main() -> None:
    config = json.loads(sys.argv[1])
    n, lanes = config["n"], config["lanes"]
    target = tvm.target.Target({"kind": "llvm", "mcpu": config["mcpu"],
                                "mtriple": config["triple"]})
    dev = tvm.cpu()
    funcs = kernels(n, lanes)
    runners, ready = {}, {}
    for name in (k for k in config["kernels"] if k in funcs):  # others: not written here
        try:
            entry = tvm.compile(funcs[name], target=target)["main"]
            args = common.arrays(name, n)
            tensors = [tvm.runtime.tensor(a, dev) for a in args]
            run = (lambda e=entry, t=tensors: e(*t))
            try:
                common.run_and_check(name, args, run, result=lambda t=tensors: t[-1].numpy())
            except AssertionError as err:
                ready[name] = {"error": f"WRONG RESULT: {common.error_text(err)}"}
                continue
        except Exception as err:  # noqa: BLE001 (report it, build the others)
            ready[name] = {"error": common.error_text(err)}
            continue
        runners[name] = run
        ready[name] = {"ok": True}
    common.serve(runners, ready, {"version": tvm.__version__})


if __name__ == "__main__":
    main()
