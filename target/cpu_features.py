"""Which vector-ISA features an x86 CPU name brings, read off the code LLVM generates for it.

A host CPU's features come from LLVM (``get_host_cpu_features``), but an
explicit CPU's do not: llvmlite exposes no feature table per CPU name. What
tirlite needs of them -- how wide the vector registers are, whether there is
FMA, half and bfloat16 conversion, AVX-512's sub-features -- shows in the code
LLVM emits. So each feature is probed with a small function whose assembly
names an instruction only that feature provides (``vfmadd`` for FMA, a
``%zmm`` register for AVX-512F, ``vpabsq`` on ``%ymm`` for AVX-512VL, ...).

The IR is generic: it compiles for any x86-64 CPU, so the probe cannot abort.
Call it only with a CPU name LLVM knows (``subtarget.check``): an unknown
name can end the process.

>>> sorted(name for name, on in cpu_features("x86_64-unknown-linux-gnu", "znver3").items()
...        if on)                                                   # doctest: +SKIP
['avx', 'avx2', 'bmi2', 'f16c', 'fma', 'popcnt', 'sse4.1']
"""

from __future__ import annotations

import functools
import re

import llvmlite.binding as llvm

_WIDE = '"min-legal-vector-width"="512"'  # let LLVM use 512-bit registers where it has them


def _vector_op(ty: str, op: str, attrs: str = "") -> str:
    return (f"define void @f(ptr %p) {attrs} {{\n  %a = load {ty}, ptr %p\n"
            f"  %b = {op} {ty} %a, %a\n  store {ty} %b, ptr %p\n  ret void\n}}\n")


def _pair_dot(n: int, attrs: str = "") -> str:
    """``c += a[even] * b[even] + a[odd] * b[odd]`` on ``2n`` int16 lanes into ``n`` int32."""
    even = ", ".join(f"i32 {2 * i}" for i in range(n))
    odd = ", ".join(f"i32 {2 * i + 1}" for i in range(n))
    h, v = f"<{2 * n} x i16>", f"<{n} x i32>"
    lines = [f"define void @f(ptr %p, ptr %q, ptr %r) {attrs} {{",
             f"  %a = load {h}, ptr %p", f"  %b = load {h}, ptr %q", f"  %c = load {v}, ptr %r"]
    for x in "ab":
        for part, idx in (("e", even), ("o", odd)):
            lines += [f"  %{x}{part} = shufflevector {h} %{x}, {h} poison, <{n} x i32> <{idx}>",
                      f"  %w{x}{part} = sext <{n} x i16> %{x}{part} to {v}"]
    lines += [f"  %me = mul {v} %wae, %wbe", f"  %mo = mul {v} %wao, %wbo",
              f"  %s = add {v} %me, %mo", f"  %t = add {v} %s, %c",
              f"  store {v} %t, ptr %r", "  ret void", "}", ""]
    return "\n".join(lines)


#: feature -> (LLVM IR of a function, a pattern only that feature's code matches).
PROBES: dict[str, tuple[str, str]] = {
    "sse4.1": (_vector_op("<4 x i32>", "mul"), r"pmulld"),
    "popcnt": ("declare i64 @llvm.ctpop.i64(i64)\ndefine i64 @f(i64 %a) {\n"
               "  %b = call i64 @llvm.ctpop.i64(i64 %a)\n  ret i64 %b\n}\n", r"popcnt"),
    "bmi2": ("define i64 @f(i64 %a, i64 %b) {\n  %c = shl i64 %a, %b\n  ret i64 %c\n}\n",
             r"shlx"),
    "avx": (_vector_op("<8 x float>", "fadd"), r"%ymm"),
    "avx2": (_vector_op("<8 x i32>", "mul"), r"vpmulld\s+%ymm"),
    "fma": ("declare float @llvm.fma.f32(float, float, float)\n"
            "define float @f(float %a, float %b, float %c) {\n"
            "  %d = call float @llvm.fma.f32(float %a, float %b, float %c)\n  ret float %d\n}\n",
            r"vfmadd"),
    "f16c": ("define <8 x float> @f(<8 x half> %a) {\n"
             "  %b = fpext <8 x half> %a to <8 x float>\n  ret <8 x float> %b\n}\n",
             r"vcvtph2ps"),
    "avx512f": (_vector_op("<16 x float>", "fadd", _WIDE), r"%zmm"),
    "avx512bw": (_vector_op("<64 x i8>", "add", _WIDE), r"vpaddb\s+%zmm"),
    "avx512dq": (_vector_op("<8 x i64>", "mul", _WIDE), r"vpmullq"),
    "avx512vl": ("declare <4 x i64> @llvm.abs.v4i64(<4 x i64>, i1)\n"
                 "define <4 x i64> @f(<4 x i64> %a) {\n"
                 "  %b = call <4 x i64> @llvm.abs.v4i64(<4 x i64> %a, i1 false)\n"
                 "  ret <4 x i64> %b\n}\n", r"vpabsq\s+%ymm"),
    "avx512bf16": (f"define void @f(ptr %p, ptr %q) {_WIDE} {{\n"
                   "  %a = load <16 x float>, ptr %p\n"
                   "  %b = fptrunc <16 x float> %a to <16 x bfloat>\n"
                   "  store <16 x bfloat> %b, ptr %q\n  ret void\n}\n", r"vcvtneps2bf16"),
    "avx512fp16": (_vector_op("<32 x half>", "fadd", _WIDE), r"vaddph"),
    # A multiply-add of int16 pairs into int32 becomes vpdpwssd where VNNI exists (and
    # vpmaddwd + vpaddd elsewhere): EVEX-encoded on zmm with AVX512-VNNI, VEX on ymm with
    # AVX-VNNI.
    "avx512vnni": (_pair_dot(16, _WIDE), r"(?<!\{vex\}\t)vpdpwssd\s[^\n]*%zmm"),
    "avxvnni": (_pair_dot(8), r"\{vex\}\s*vpdpwssd"),
}


@functools.cache
def cpu_features(triple: str, cpu: str, features: str = "") -> dict[str, bool]:
    """For each feature in ``PROBES``: whether LLVM's code for ``cpu`` (+ ``features``) uses it."""
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    machine = llvm.Target.from_triple(triple).create_target_machine(cpu=cpu, features=features)
    found = {}
    for name, (ir, pattern) in PROBES.items():
        asm = machine.emit_assembly(llvm.parse_assembly(ir))
        found[name] = re.search(pattern, asm) is not None
    return found
