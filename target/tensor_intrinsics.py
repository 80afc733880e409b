"""Which shipped tensor intrinsic (``tir.tensor_intrin``) a target can run.

The intrinsics are TIR (``tir/tensor_intrin/x86.py``); which one a CPU runs is
a question about the target's features, so it is answered here, a layer above
``tir``.

>>> dot_intrin_for(Target("llvm -mcpu=cascadelake"))                # doctest: +SKIP
('dot_16x4_vnni', 16)
"""

from __future__ import annotations

from typing import Any

from .target import Target


def vpdpbusd_bytes(target: Target) -> tuple[int, ...]:
    """The widths (in bytes, widest first) of ``vpdpbusd`` that ``target`` can run: zmm with
    AVX512-VNNI and 512-bit vectors, ymm with AVX-VNNI or AVX512-VNNI + AVX512-VL."""
    if target.arch != "x86_64":
        return ()
    vnni512 = target.has_feature("avx512vnni")
    widths = []
    if vnni512 and target.vector_width_bits >= 512:
        widths.append(64)
    if target.has_feature("avxvnni") or vnni512 and target.has_feature("avx512vl"):
        widths.append(32)
    return tuple(widths)


def dot_intrin_for(target: Any) -> tuple[str, int] | None:
    """``(name, lanes)`` of the best uint8 x int8 -> int32 dot intrinsic ``target`` can run,
    or None (not x86, or no AVX2). ``target`` is a ``Target`` or its string."""
    t = target if isinstance(target, Target) else Target(str(target))
    if t.arch not in ("x86_64", "i386", "i686"):
        return None
    widths = vpdpbusd_bytes(t)
    if 64 in widths:
        return "dot_16x4_vnni", 16
    if t.vector_width_bits >= 512 and t.has_feature("avx512bw"):
        return "dot_16x4_avx512", 16
    if 32 in widths:
        return "dot_8x4_avxvnni", 8
    if t.has_feature("avx2"):
        return "dot_8x4_avx2", 8
    return None


def bf16_dot_intrin_for(target: Any) -> tuple[str, int] | None:
    """``(name, lanes)`` of the bfloat16 pair intrinsic ``target`` can run, or None."""
    t = target if isinstance(target, Target) else Target(str(target))
    if t.arch == "x86_64" and t.vector_width_bits >= 512 and t.has_feature("avx512bf16"):
        return "dot_16x2_bf16_avx512bf16", 16
    return None


def arm_dot_intrin_for(target: Any, signed: bool = True) -> tuple[str, int] | None:
    """``(name, lanes)`` of the best AArch64 8-bit dot intrinsic ``target`` can run, or None
    (not AArch64). ``signed`` picks int8 x int8 -> int32, else uint8 x uint8 -> uint32.

    ``sdot``/``udot`` need the dotprod feature as ``-mattr=+dotprod`` says it (a CPU named
    by ``-mcpu`` alone counts as without it: the NEON fallback is exact anywhere).
    """
    t = target if isinstance(target, Target) else Target(str(target))
    if t.arch != "aarch64":
        return None
    if t.has_feature("dotprod"):
        return ("dot_4x4_i8i8s32_sdot" if signed else "dot_4x4_u8u8u32_udot"), 4
    return ("dot_4x4_i8i8s32_neon" if signed else "dot_4x4_u8u8u32_neon"), 4
