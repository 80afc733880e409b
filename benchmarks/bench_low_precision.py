"""Low-precision kernels side by side: int8 matmul through tensorize, float32 and bfloat16
matmuls, an int8 dot product; against NumPy, numba and PyTorch (CPU) where installed.

    .venv/bin/python benchmarks/bench_low_precision.py [--section matmul|dot] [--runs 7]
    TIRLITE_HOST_TARGET="llvm -mcpu=znver3" .venv/bin/python benchmarks/bench_low_precision.py

Sections:

- ``matmul`` (1024^3, one thread): tirlite's float32 matmul (the default schedule,
  ``ms.apply_default_schedule``), the uint8 x int8 -> int32 matmul through
  ``sch.tensorize`` with the best x86 dot intrinsic the host target has
  (``tir.tensor_intrin.dot_intrin_for``: VNNI, else vpmaddwd), on a
  pre-packed right operand, with a 8 x 2 (AVX-512) or 4 x 2 (AVX2) register tile
  accumulating in a ``local`` buffer; a bfloat16 matmul (float32 accumulation, default schedule).
  Reported in G(FL)OP/s and as ratios to the float32 one.
- ``dot`` (2^22 elements): ``s += int32(a[i]) * int32(b[i])`` on uint8 x int8 and on
  int8 x int8, tirlite's vectorized reduction (``vpdpbusd`` for uint8 x int8 on VNNI
  targets, ``transform.ByteDotAccumulation``; also without it) against numba's loop
  (the faster of fastmath on and off) and NumPy's ``np.dot`` on int32 copies (its
  natural form; NumPy has no int8 dot).

PyTorch rows appear when ``import torch`` works (``pip install torch --index-url
https://download.pytorch.org/whl/cpu`` into the venv). Medians of interleaved runs.
"""

from __future__ import annotations

import argparse
import functools
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_kernels import _host_cpu, interleaved_median_ms  # noqa: E402, I001 (threads first)

import numpy as np  # noqa: E402

import codegen  # noqa: E402
import tir  # noqa: E402
import transform  # noqa: E402
from tir import te  # noqa: E402
from target.tensor_intrinsics import bf16_dot_intrin_for, dot_intrin_for  # noqa: E402
from tirlite import meta_schedule as ms  # noqa: E402

N_MATMUL, N_DOT = 1024, 1 << 22


def int8_matmul(n: int, lanes: int) -> tir.PrimFunc:
    """``C = A @ B.T`` on uint8 x int8 -> int32, B packed as [j / lanes, k / 4, lanes, 4]."""
    a = te.placeholder((n, n), "uint8", name="A")
    b = te.placeholder((n // lanes, n // 4, lanes, 4), "int8", name="B")
    k = te.reduce_axis((0, n), name="k")
    c = te.compute((n, n), lambda i, j: te.sum(
        a[i, k].astype("int32") * b[j // lanes, k // 4, j % lanes, k % 4].astype("int32"),
        axis=k), name="C")
    return te.create_prim_func([a, b, c])


def tensorized_schedule(func: tir.PrimFunc, intrin: str, lanes: int, rows: int = 8,
                        cols: int = 2) -> tir.Schedule:
    """A ``rows x cols`` tile of intrinsic calls per k step, accumulating in registers."""
    sch = tir.Schedule(func)
    blk = sch.get_block("C")
    local = sch.cache_write(blk, 0, "local")
    i, j, k = sch.get_loops(blk)
    io, ii = sch.split(i, [None, rows])
    jo, jt, ji = sch.split(j, [None, cols, lanes])
    ko, ki = sch.split(k, [None, 4])
    sch.reorder(io, jo, ko, ii, jt, ji, ki)
    sch.reverse_compute_at(local, jo)
    sch.decompose_reduction(blk, ko)
    sch.tensorize(ji, intrin)
    sch.unroll(jt)
    sch.unroll(ii)
    return sch


def bf16_matmul_packed(n: int) -> tir.PrimFunc:
    """``C = A @ B.T`` on bfloat16 into float32, B packed as [j / 16, k / 2, 16, 2]."""
    a = te.placeholder((n, n), "bfloat16", name="A")
    b = te.placeholder((n // 16, n // 2, 16, 2), "bfloat16", name="B")
    k = te.reduce_axis((0, n), name="k")
    c = te.compute((n, n), lambda i, j: te.sum(
        a[i, k].astype("float32") * b[j // 16, k // 2, j % 16, k % 2].astype("float32"),
        axis=k), name="C")
    return te.create_prim_func([a, b, c])


def bf16_pair_schedule(func: tir.PrimFunc, rows: int = 8, cols: int = 2) -> tir.Schedule:
    """As ``tensorized_schedule``, with ``vdpbf16ps`` (inexact: allowed explicitly)."""
    sch = tir.Schedule(func)
    blk = sch.get_block("C")
    local = sch.cache_write(blk, 0, "local")
    i, j, k = sch.get_loops(blk)
    io, ii = sch.split(i, [None, rows])
    jo, jt, ji = sch.split(j, [None, cols, 16])
    ko, ki = sch.split(k, [None, 2])
    sch.reorder(io, jo, ko, ii, jt, ji, ki)
    sch.reverse_compute_at(local, jo)
    sch.decompose_reduction(blk, ko)
    sch.tensorize(ji, "dot_16x2_bf16_avx512bf16", allow_inexact=True)
    sch.unroll(jt)
    sch.unroll(ii)
    return sch


def float_matmul(n: int, dtype: str) -> tir.IRModule:
    a = te.placeholder((n, n), dtype, name="A")
    b = te.placeholder((n, n), dtype, name="B")
    k = te.reduce_axis((0, n), name="k")
    c = te.compute((n, n), lambda i, j: te.sum(
        a[i, k].astype("float32") * b[k, j].astype("float32"), axis=k), name="C")
    return ms.apply_default_schedule(tir.IRModule({"main": te.create_prim_func([a, b, c])}),
                                     target="llvm")


def matmul_rows(runs: int) -> list[tuple]:
    n, rng = N_MATMUL, np.random.default_rng(0)
    intrin, lanes = dot_intrin_for(codegen.Target("llvm"))
    a8 = rng.integers(0, 256, (n, n)).astype(np.uint8)
    b8 = rng.integers(-128, 128, (n, n)).astype(np.int8)
    packed = b8.reshape(n // lanes, lanes, n // 4, 4).transpose(0, 2, 1, 3).copy()
    c8 = np.zeros((n, n), np.int32)
    rows = 8 if lanes == 16 else 4  # 8 x 2 accumulators of 32 zmm; 4 x 2 of 16 ymm
    sch = tensorized_schedule(int8_matmul(n, lanes), intrin, lanes, rows=rows)
    int8 = codegen.build(sch.mod)
    int8(a8, packed, c8)
    assert np.array_equal(c8, a8.astype(np.int32) @ b8.astype(np.int32).T), "int8 matmul"
    x, y = (rng.standard_normal((n, n)).astype(np.float32) for _ in range(2))
    z = np.zeros((n, n), np.float32)
    f32 = codegen.build(float_matmul(n, "float32"))
    fns = {"float32": lambda: f32(x, y, z), f"int8 ({intrin})": lambda: int8(a8, packed, c8),
           "numpy float32": lambda: np.matmul(x, y, out=z)}
    fns.update(_bf16(n, x, y))
    fns.update(_torch_matmuls(x, y))
    times = interleaved_median_ms(fns, runs)
    ops = 2 * n ** 3
    return [(name, ms_, ops / ms_ / 1e6, times["float32"] / ms_) for name, ms_ in times.items()]


def _bf16(n: int, x: np.ndarray, y: np.ndarray) -> dict:
    import ml_dtypes

    xb, yb = x.astype(ml_dtypes.bfloat16), y.astype(ml_dtypes.bfloat16)
    zb = np.zeros((n, n), np.float32)
    try:
        mod = codegen.build(float_matmul(n, "bfloat16"))
    except (ValueError, tir.ScheduleError) as err:
        print(f"bfloat16 matmul: not built ({err})")
        return {}
    mod(xb, yb, zb)
    want = xb.astype(np.float32) @ yb.astype(np.float32)
    assert np.allclose(zb, want, rtol=1e-3, atol=1e-2), "bfloat16 matmul"
    fns = {"bfloat16 (f32 acc.)": lambda: mod(xb, yb, zb)}
    if bf16_dot_intrin_for(codegen.Target("llvm")):
        packed = yb.T.reshape(n // 16, 16, n // 2, 2).transpose(0, 2, 1, 3).copy()
        pairs = codegen.build(bf16_pair_schedule(bf16_matmul_packed(n)).mod)
        zp = np.zeros((n, n), np.float32)
        pairs(xb, packed, zp)
        assert np.allclose(zp, want, rtol=1e-3, atol=1e-2), "bfloat16 vdpbf16ps matmul"
        fns["bfloat16 (vdpbf16ps)"] = lambda: pairs(xb, packed, zp)
    return fns


def _torch_matmuls(x: np.ndarray, y: np.ndarray) -> dict:
    try:
        import torch
    except ImportError:
        return {}
    torch.set_num_threads(1)
    tx, ty = torch.from_numpy(x), torch.from_numpy(y)
    bx, by = tx.to(torch.bfloat16), ty.to(torch.bfloat16)
    return {"torch float32": lambda: torch.matmul(tx, ty),
            "torch bfloat16": lambda: torch.matmul(bx, by)}


def tir_dot(n: int, da: str = "uint8", db: str = "int8") -> tir.PrimFunc:
    """``s[0] = sum int32(a[i]) * int32(b[i])`` over ``da`` x ``db``, a vectorized loop."""
    ib = tir.ir_builder.create()
    a = ib.buffer_ptr(tir.decl_buffer((n,), da, "a"))
    b = ib.buffer_ptr(tir.decl_buffer((n,), db, "b"))
    s = ib.buffer_ptr(tir.decl_buffer((1,), "int32", "s"))
    s[0] = tir.const(0, "int32")
    with ib.for_range(0, n, name="i", kind="vectorize") as i:
        s[0] = s[0] + tir.Cast("int32", a[i]) * tir.Cast("int32", b[i])
    bufs = [a.buffer, b.buffer, s.buffer]
    params = [tir.Var(buf.name, "handle") for buf in bufs]
    return tir.PrimFunc(params, ib.get(), buffer_map=dict(zip(params, bufs)))


def _dot_inputs(n: int, da: str, db: str, rng) -> tuple[np.ndarray, np.ndarray]:
    info_a, info_b = np.iinfo(da), np.iinfo(db)
    return (rng.integers(info_a.min, info_a.max, n, endpoint=True).astype(da),
            rng.integers(info_b.min, info_b.max, n, endpoint=True).astype(db))


def dot_rows(runs: int) -> list[tuple]:
    """uint8 x int8 and int8 x int8 dots: tirlite (with and without ``vpdpbusd``, config
    ``tir.vectorize.dot_instructions``), numba's loop (the faster of fastmath on and off)
    and NumPy's ``np.dot`` on int32 copies. Rows: name, ms, GOP/s, time / tirlite's."""
    rows = []
    for da, db in (("uint8", "int8"), ("int8", "int8")):
        n, rng = N_DOT, np.random.default_rng(1)
        a, b = _dot_inputs(n, da, db, rng)
        s = np.zeros(1, np.int32)
        want = np.int64(np.dot(a.astype(np.int64), b.astype(np.int64)))
        want = np.int32((int(want) + 2 ** 31) % 2 ** 32 - 2 ** 31)
        mods = {"tirlite": codegen.build(tir_dot(n, da, db))}
        with transform.PassContext(config={"tir.vectorize.dot_instructions": False}):
            mods["tirlite, no dot instr."] = codegen.build(tir_dot(n, da, db))
        fns = {}
        for name, mod in mods.items():
            mod(a, b, s)
            assert s[0] == want, f"{da} x {db} dot ({name})"
            fns[name] = functools.partial(mod, a, b, s)
        a32, b32 = a.astype(np.int32), b.astype(np.int32)
        fns["numpy (int32 copies)"] = lambda a32=a32, b32=b32: np.dot(a32, b32)
        fns.update(_numba_dots(a, b, want))
        times = interleaved_median_ms(fns, runs)
        times = _fastest_numba(times)
        rows += [(f"{da} x {db}: {name}", ms_, 2 * n / ms_ / 1e6, ms_ / times["tirlite"])
                 for name, ms_ in times.items()]
    return rows


def _numba_dots(a: np.ndarray, b: np.ndarray, want: np.int32) -> dict:
    """numba's loop, compiled with fastmath on and off, checked against ``want``."""
    try:
        import numba
    except ImportError:
        return {}
    fns = {}
    for fastmath in (True, False):
        @numba.njit(fastmath=fastmath, cache=False)
        def dot(x, y):
            s = np.int32(0)
            for i in range(x.shape[0]):
                s += np.int32(x[i]) * np.int32(y[i])
            return s

        assert dot(a, b) == want, "numba dot"
        fns[f"numba (fastmath={fastmath})"] = functools.partial(dot, a, b)
    return fns


def _fastest_numba(times: dict) -> dict:
    """``times`` with only the faster numba variant, named ``numba`` plus its flag."""
    numba_rows = sorted((t, name) for name, t in times.items() if name.startswith("numba"))
    out = {name: t for name, t in times.items() if not name.startswith("numba")}
    if numba_rows:
        t, name = numba_rows[0]
        out[name.replace("numba (", "numba, fastest (")] = t
    return out


#: The sections, in the order they run: name -> (title, rows(runs), row format). Each rows
#: function returns (name, ms, rate, ratio) tuples; add a section by adding an entry.
SECTIONS = {
    "matmul": (f"matmul {N_MATMUL}^3, one thread: ms, G(FL)OP/s, speed / tirlite float32",
               matmul_rows, "{:9.2f}{:9.1f}{:8.2f}x"),
    "dot": ("int8 dot over 2^22: ms, GOP/s, time / tirlite's (2x numba asked)",
            dot_rows, "{:9.3f}{:9.1f}{:8.2f}x"),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--section", choices=list(SECTIONS), action="append")
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    target = codegen.Target("llvm")
    print(f"host: {_host_cpu()}; target {target.mcpu}, {target.vector_width_bits}-bit vectors, "
          f"AVX512-VNNI {target.has_feature('avx512vnni')}, "
          f"AVX-VNNI {target.has_feature('avxvnni')}, "
          f"AVX512-BF16 {target.has_feature('avx512bf16')}")
    for name in args.section or list(SECTIONS):
        title, rows, fmt = SECTIONS[name]
        print(f"\n{title}")
        for row_name, *figures in rows(args.runs):
            print(f"  {row_name:<46}" + fmt.format(*figures))


if __name__ == "__main__":
    main()
