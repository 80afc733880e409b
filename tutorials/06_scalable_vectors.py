"""Lesson 6: one kernel, fixed-width vectors on x86 and scalable vectors on SVE.

x86 vectors have a width fixed when the program is compiled: AVX2 registers
hold 8 float32 lanes, AVX-512 registers 16. Arm's SVE leaves the width to the
chip: a register holds ``vscale x 128`` bits, where ``vscale`` (1 to 16) is
known only when the program runs. One SVE binary runs on every SVE chip.

This lesson writes saxpy, ``y[i] = a * x[i] + y[i]`` over a symbolic ``n``,
once, with its loop marked ``vectorize``, and builds it twice:

1. for this machine: the loop is strip-mined into ``<16 x float>`` (or
   ``<8 x float>``) vectors plus one predicated tail (lesson 4);
2. for ``llvm -mtriple=aarch64-linux-gnu -mattr=+sve``: a vector-length-
   agnostic loop over ``<vscale x 4 x float>`` vectors, every one predicated
   by ``llvm.get.active.lane.mask``, so there is no tail at all;
3. it runs the x86 build natively and the SVE build under QEMU at every vector
   length of ``codegen.emulation.SVE_VECTOR_LENGTHS`` (vscale 1, 2, 4, 16):
   the same binary, four register widths, one answer;
4. a sum on SVE: a scalable accumulator and ``llvm.vector.reduce.fadd``;
5. a loop written with a scalable extent, ``4 * tir.vscale()``, on x86: an error.

The kernels are built with ``codegen.llvm.fp_contract`` off, so ``a * x + y``
is a float32 multiply then a float32 add, exactly what NumPy computes.

Run it with ``python tutorials/06_scalable_vectors.py``; ``--full`` also
prints the complete LLVM IR and assembly of both builds. The emulated runs
need ``qemu-user`` and ``gcc-aarch64-linux-gnu`` (installed automatically
when run as root); without them only those runs are skipped.
"""

import re
import sys

import numpy as np

import codegen
import tir
import transform
from codegen import emulation
from tir import ir_builder

HOST = codegen.Target("llvm")
LANES = HOST.vector_width_bits // 32  # float32 lanes in one of this machine's registers
SVE = "llvm -mtriple=aarch64-linux-gnu -mattr=+sve"
STRICT = {"codegen.llvm.fp_contract": False}  # no fused multiply-add: bit-exact with NumPy
RNG = np.random.default_rng(0)


def saxpy() -> tir.PrimFunc:
    """y[i] = a * x[i] + y[i] for i < n; n is bound from the arrays at call time."""
    n = tir.size_var("n")
    a = tir.Var("a", "float32")
    X = tir.decl_buffer((n,), "float32", name="x")
    Y = tir.decl_buffer((n,), "float32", name="y")
    ib = ir_builder.create()
    x, y = ib.buffer_ptr(X), ib.buffer_ptr(Y)
    with ib.for_range(0, n, kind="vectorize", name="i") as i:
        y[i] = a * x[i] + y[i]
    return tir.PrimFunc([a, X, Y], ib.get())


def build(func: tir.PrimFunc, target: str, config: dict = STRICT) -> codegen.Module:
    with transform.PassContext(config=config):
        return codegen.build(func, target=target)


def key_lines(text: str, wanted: list[tuple[str, str]]) -> list[str]:
    """For each (regex, why): the first line of ``text``'s function body matching regex."""
    body = text[text.index("define"):] if "define" in text else text
    body = body[:body.index("\n}")] if "\n}" in body else body  # the function, not the declares
    lines = [" ".join(line.split()) for line in body.splitlines()]  # tabs (asm) to spaces
    found = []
    for pattern, why in wanted:
        line = next((ln for ln in lines if re.search(pattern, ln)), None)
        assert line is not None, f"no line matching {pattern!r}"
        found.append(f"  {why:<44s} {line}")
    return found


def show_build(title: str, mod: codegen.Module, ir_lines, asm_lines, full: bool) -> None:
    print(f"=== {title}: the lowered TIR (what the build pipeline made of the loop) ===")
    print(mod.get_source("tir").split("@T.prim_func\n", 1)[-1])
    for remark in mod.remarks:
        print("  remark:", remark)
    print("  key lines of its LLVM IR:")
    print("\n".join(key_lines(mod.get_source("ll"), ir_lines)))
    print("  and of its assembly:")
    print("\n".join(key_lines(mod.get_source("asm"), asm_lines)))
    if full:
        print(mod.get_source("ll"))
        print(mod.get_source("asm"))
    print()


# ---------------------------------------------------------------- 1. and 2. the two builds


def two_builds(full: bool) -> tuple[codegen.Module, codegen.Module]:
    func = saxpy()
    print("=== saxpy, written once: the i loop is marked vectorized, n is symbolic ===")
    print(func.script().split("@T.prim_func\n", 1)[-1])

    host = build(func, "llvm")
    v = f"<{LANES} x float>"
    show_build(f"x86 ({HOST.mcpu}, {HOST.vector_width_bits}-bit registers)", host, [
        (rf"= load {v}", f"x: one full {LANES}-lane vector"),
        (rf"= fmul {v}", "a * x, lane by lane"),
        (rf"= fadd {v}", "+ y"),
        (rf"store {v}", "back to y"),
        (r"get\.active\.lane\.mask", f"the tail: lanes k < n % {LANES} are on"),
        (r"masked\.load", "loads only those lanes"),
        (r"masked\.store", "and stores only them"),
    ], [
        (r"\bvmulps\b", "multiply"),
        (r"\bvaddps\b", "add"),
        (r"vmaskmovps|vmovups.*\{%k\d\}", "the tail's masked load or store"),
    ], full)

    sve = build(func, SVE)
    s = "<vscale x 4 x float>"
    show_build("SVE (aarch64 -mattr=+sve, vscale x 128-bit registers)", sve, [
        (r"@llvm\.vscale", "vscale, read from the chip at run time"),
        (r"get\.active\.lane\.mask\.nxv4i1", "lanes k < n - i_outer * VL are on"),
        (r"masked\.load\.nxv4f32", f"a {s}: 4, 8, ... 64 lanes"),
        (rf"= fmul {s}", "a * x"),
        (rf"= fadd {s}", "+ y"),
        (r"masked\.store\.nxv4f32", "the last vector's lanes past n are off"),
    ], [
        (r"\b(rdvl|cntw)\b", "vector length: bytes (rdvl), words (cntw)"),
        (r"\bwhilelo\b", "the predicate: lanes while base + k < n"),
        (r"\bld1w\b", "predicated load of 32-bit lanes"),
        (r"\bfmul\b", "multiply"),
        (r"\bfadd\b", "add"),
        (r"\bst1w\b", "predicated store"),
    ], full)

    fused = build(func, SVE, config={}).get_source("asm")  # the default: fp_contract on
    fma = key_lines(fused, [(r"\b(fmla|fmad)\b", "one multiply-add, rounded once")])
    print("  With codegen.llvm.fp_contract on (the default), LLVM fuses the two:")
    print(fma[0] + "\n")
    return host, sve


# ---------------------------------------------------------------- 3. run both


def find_emulation_tools():
    """QEMU and the cross compiler, or None (and why) if they are missing and can't be installed."""
    try:
        return emulation.find_tools(install=True)  # installs with apt-get only as root
    except emulation.EmulationUnavailable as err:
        print(f"*** emulation unavailable: skipping the SVE runs (the IR above is still "
              f"what SVE would run).\n    {err}")
        return None


def run_both(host: codegen.Module, sve: codegen.Module):
    """Saxpy natively and emulated, against NumPy; returns the emulation tools (or None)."""
    print("=== running saxpy: x86 natively, SVE under QEMU at every vector length ===")
    tools = find_emulation_tools()
    a = np.float32(1.5)
    for n in (3, 1003):  # shorter than one vector; and a tail at every width
        x = RNG.standard_normal(n).astype(np.float32)
        y0 = RNG.standard_normal(n).astype(np.float32)
        want = a * x + y0  # float32 multiply, then float32 add

        y_host = y0.copy()
        host["main"](a, x, y_host)
        np.testing.assert_array_equal(y_host, want)
        print(f"  n={n:5d} x86, {LANES}-lane vectors: equal to NumPy")
        if tools is None:
            continue
        for length in emulation.SVE_VECTOR_LENGTHS:
            em = codegen.emulate(sve, sve_vector_length=length, tools=tools)
            y = y0.copy()
            em(a, x, y)
            np.testing.assert_array_equal(y, want)
            np.testing.assert_array_equal(y, y_host)
            vscale = em.vscale()
            assert vscale == length // 16
            print(f"  n={n:5d} SVE {length * 8:4d}-bit registers: vscale = {vscale:2d}, "
                  f"{4 * vscale:2d} lanes, {-(-n // (4 * vscale)):3d} iterations: "
                  "equal to NumPy and to x86")
    return tools


# ---------------------------------------------------------------- 4. a sum on SVE


def vector_sum() -> tir.PrimFunc:
    n = tir.size_var("n")
    X = tir.decl_buffer((n,), "float32", name="x")
    S = tir.decl_buffer((1,), "float32", name="s")
    ib = ir_builder.create()
    x, s = ib.buffer_ptr(X), ib.buffer_ptr(S)
    s[0] = tir.const(0.0, "float32")
    with ib.for_range(0, n, kind="vectorize", name="i") as i:
        s[0] = s[0] + x[i]
    return tir.PrimFunc([X, S], ib.get())


def sum_on_sve(tools) -> None:
    print("\n=== a sum on SVE: a scalable accumulator, one horizontal add after the loop ===")
    mod = build(vector_sum(), SVE)
    for remark in mod.remarks:
        print("  remark:", remark)
    print("\n".join(key_lines(mod.get_source("ll"), [
        (r"alloca <vscale x 4 x float>", "the accumulator: one SVE register"),
        (r"= fadd <vscale x 4 x float>", "lane-wise partial sums"),
        (r"llvm\.vector\.reduce\.fadd\.nxv4f32", "the lanes summed once, at the end"),
    ])))
    if tools is None:
        return
    x = RNG.standard_normal(1001).astype(np.float32)
    for length in emulation.SVE_VECTOR_LENGTHS:
        em = codegen.emulate(mod, sve_vector_length=length, tools=tools)
        s = np.zeros(1, np.float32)
        em(x, s)
        # Partial sums in 4 * vscale lanes round differently from NumPy's pairwise sum.
        np.testing.assert_allclose(s[0], x.astype(np.float64).sum(), rtol=1e-5, atol=1e-4)
        print(f"  vscale = {em.vscale():2d}: sum = {s[0]:.6f} (NumPy {x.sum():.6f})")


# ---------------------------------------------------------------- 5. scalable extents by hand


def scalable_by_hand() -> None:
    print("\n=== a loop over 4 * vscale() lanes, written by hand ===")
    X = tir.decl_buffer((64,), "float32", name="x")  # 64 lanes: the longest SVE vector
    ib = ir_builder.create()
    x = ib.buffer_ptr(X)
    with ib.for_range(0, 4 * tir.vscale(), kind="vectorize", name="j") as j:
        x[j] = x[j] * tir.const(2.0, "float32")
    func = tir.PrimFunc([X], ib.get())
    lowered = build(func, SVE).get_source("tir")
    print("  on SVE it is one scalable vector:",
          next(ln.strip() for ln in lowered.splitlines() if "T.vscale" in ln))
    try:
        build(func, "llvm")
    except transform.VectorizeError as err:
        print(f"  on x86 it is refused (TVM's rule and message):\n    {err}")
        assert "Failed to vectorize loop with extent" in str(err)
    else:
        raise AssertionError("a scalable extent was vectorized for x86")


def main() -> None:
    full = "--full" in sys.argv
    host, sve = two_builds(full)
    tools = run_both(host, sve)
    sum_on_sve(tools)
    scalable_by_hand()


if __name__ == "__main__":
    main()
