"""x86 tensor intrinsics: uint8 x int8 dot products of 4 into int32 lanes.

Each intrinsic computes, for ``L`` output lanes (16 on AVX-512, 8 on AVX2)::

    C[i] += int32(A[k]) * int32(B[i, k])      for i < L, k < 4

``A`` is 4 uint8 (one row of the left matrix), ``B`` is ``L x 4`` int8 (a
packed block of the right one), ``C`` is ``L`` int32. Names and desc follow
TVM's ``tir/tensor_intrin/x86.py``:

- ``dot_16x4_vnni``: one ``vpdpbusd`` on zmm (AVX512-VNNI);
- ``dot_8x4_avxvnni``: one ``vpdpbusd`` on ymm (AVX-VNNI, VEX-encoded);
- ``dot_16x4_avx512`` and ``dot_8x4_avx2``: without VNNI, widen both to int16
  and multiply-add pairs with ``vpmaddwd``, then add the two pair sums;
- ``dot_16x2_bf16_avx512bf16``: ``C[i] += float32(A[k]) * float32(B[i, k])``, k < 2,
  on bfloat16 with one ``vdpbf16ps`` (AVX512-BF16). It is registered as inexact
  (the instruction's order of the two adds and its flushing of subnormals are its
  own), so ``tensorize`` takes it with ``allow_inexact=True`` only.

The fallbacks are exact, unlike TVM's AVX-512 one, which multiplies with
``vpmaddubsw``: that instruction saturates its int16 pair sums, so 255 * -128
+ 255 * -128 comes out as -32768 (TVM's result is wrong for such inputs).
Here each product of a uint8 and an int8 fits int16 and ``vpmaddwd`` adds
pairs of them in int32, so every lane is the exact wrapped int32 sum, as the
serial loop computes it.

Use the one ``target.tensor_intrinsics.dot_intrin_for(target)`` names: the code
of an intrinsic the target lacks does not compile (codegen says which intrinsic
and why).
"""

from __future__ import annotations

from ..script import tir as T
from ..tensor_intrinsic import TensorIntrin


def u8i8_dot_desc(lanes: int):
    """``C[i] += int32(A[k]) * int32(B[i, k])`` for i < lanes, k < 4 (TVM's desc)."""

    @T.prim_func
    def desc(
        A: T.Buffer((4,), "uint8", offset_factor=1),
        B: T.Buffer((lanes, 4), "int8", offset_factor=1),
        C: T.Buffer((lanes,), "int32", offset_factor=1),
    ) -> None:
        with T.block("root"):
            for i in T.serial(0, lanes):
                for k in T.serial(0, 4):
                    with T.block("update"):
                        vi, vk = T.axis.remap("SR", [i, k])
                        C[vi] = C[vi] + T.cast(A[vk], "int32") * T.cast(B[vi, vk], "int32")

    return desc


def u8i8_dot_vpdpbusd(lanes: int, intrinsic: str):
    """One ``vpdpbusd`` (``intrinsic``: the zmm or the ymm one) over ``lanes`` int32 lanes."""
    acc, a_dtype, b_dtype = f"int32x{lanes}", "uint8x4", f"int8x{4 * lanes}"

    @T.prim_func
    def impl(
        A: T.Buffer((4,), "uint8", offset_factor=1),
        B: T.Buffer((lanes, 4), "int8", offset_factor=1),
        C: T.Buffer((lanes,), "int32", offset_factor=1),
    ) -> None:
        with T.block("root"):
            # The 4 bytes of A as one int32, in every lane: vpdpbusd multiplies lane i's
            # 4 bytes of both operands pairwise and adds the 4 products to C[i].
            a_all = T.broadcast(T.reinterpret(A.vload([0], a_dtype), dtype="int32"), lanes)
            b = T.reinterpret(B.vload([0, 0], b_dtype), dtype=acc)
            C[T.ramp(0, 1, lanes)] = T.call_llvm_pure_intrin(
                acc, intrinsic, T.uint32(3), C.vload([0], acc), a_all, b)

    return impl


def u8i8_dot_pmaddwd(lanes: int, intrinsic: str):
    """The exact fallback: both operands widened to int16, ``vpmaddwd`` (``intrinsic``) sums
    pairs of products into int32, then the two pair sums of each lane are added."""
    acc, half, wide = f"int32x{lanes}", 2 * lanes, 4 * lanes
    bytes_u8, bytes_i8, pairs_i16 = f"uint8x{wide}", f"int8x{wide}", f"int16x{wide}"

    @T.prim_func
    def impl(
        A: T.Buffer((4,), "uint8", offset_factor=1),
        B: T.Buffer((lanes, 4), "int8", offset_factor=1),
        C: T.Buffer((lanes,), "int32", offset_factor=1),
    ) -> None:
        with T.block("root"):
            a_all = T.reinterpret(
                T.broadcast(T.reinterpret(A.vload([0], "uint8x4"), dtype="int32"), lanes),
                dtype=bytes_u8)
            a16 = T.cast(a_all, pairs_i16)
            b16 = T.cast(B.vload([0, 0], bytes_i8), pairs_i16)
            # Lane m of a pair sum is row m // 2's products k = 2(m % 2) and 2(m % 2) + 1:
            # the first half of the rows from the first half of the bytes, and so on.
            lo = T.call_llvm_pure_intrin(
                acc, intrinsic, T.uint32(2),
                T.Shuffle([a16], list(range(half))), T.Shuffle([b16], list(range(half))))
            hi = T.call_llvm_pure_intrin(
                acc, intrinsic, T.uint32(2),
                T.Shuffle([a16], list(range(half, wide))),
                T.Shuffle([b16], list(range(half, wide))))
            C[T.ramp(0, 1, lanes)] = (C.vload([0], acc)
                                      + T.Shuffle([lo, hi], list(range(0, half, 2)))
                                      + T.Shuffle([lo, hi], list(range(1, half, 2))))

    return impl


dot_product_16x4_u8i8i32_desc = u8i8_dot_desc(16)
dot_product_16x4_u8i8i32_vnni = u8i8_dot_vpdpbusd(16, "llvm.x86.avx512.vpdpbusd.512")
dot_product_16x4_u8i8i32_avx512 = u8i8_dot_pmaddwd(16, "llvm.x86.avx512.pmaddw.d.512")
dot_product_8x4_u8i8i32_desc = u8i8_dot_desc(8)
# The 256-bit intrinsic is VEX-encoded with AVX-VNNI, EVEX with AVX512-VNNI + VL.
dot_product_8x4_u8i8i32_avxvnni = u8i8_dot_vpdpbusd(8, "llvm.x86.avx512.vpdpbusd.256")
dot_product_8x4_u8i8i32_avx2 = u8i8_dot_pmaddwd(8, "llvm.x86.avx2.pmadd.wd")


@T.prim_func
def dot_product_16x2_bf16f32_desc(
    A: T.Buffer((2,), "bfloat16", offset_factor=1),
    B: T.Buffer((16, 2), "bfloat16", offset_factor=1),
    C: T.Buffer((16,), "float32", offset_factor=1),
) -> None:
    with T.block("root"):
        for i in T.serial(0, 16):
            for k in T.serial(0, 2):
                with T.block("update"):
                    vi, vk = T.axis.remap("SR", [i, k])
                    C[vi] = C[vi] + T.cast(A[vk], "float32") * T.cast(B[vi, vk], "float32")


@T.prim_func
def dot_product_16x2_bf16f32_avx512bf16(
    A: T.Buffer((2,), "bfloat16", offset_factor=1),
    B: T.Buffer((16, 2), "bfloat16", offset_factor=1),
    C: T.Buffer((16,), "float32", offset_factor=1),
) -> None:
    with T.block("root"):
        # A's pair in every lane; vdpbf16ps adds lane i's two products to C[i].
        a_all = T.reinterpret(
            T.broadcast(T.reinterpret(A.vload([0], "bfloat16x2"), dtype="int32"), 16),
            dtype="bfloat16x32")
        C[T.ramp(0, 1, 16)] = T.call_llvm_pure_intrin(
            "float32x16", "llvm.x86.avx512bf16.dpbf16ps.512", T.uint32(3),
            C.vload([0], "float32x16"), a_all, B.vload([0, 0], "bfloat16x32"))


VNNI_DOT_16x4_INTRIN = "dot_16x4_vnni"
AVX512_DOT_16x4_INTRIN = "dot_16x4_avx512"
AVXVNNI_DOT_8x4_INTRIN = "dot_8x4_avxvnni"
AVX2_DOT_8x4_INTRIN = "dot_8x4_avx2"

TensorIntrin.register(VNNI_DOT_16x4_INTRIN, dot_product_16x4_u8i8i32_desc,
                      dot_product_16x4_u8i8i32_vnni, override=True)
TensorIntrin.register(AVX512_DOT_16x4_INTRIN, dot_product_16x4_u8i8i32_desc,
                      dot_product_16x4_u8i8i32_avx512, override=True)
TensorIntrin.register(AVXVNNI_DOT_8x4_INTRIN, dot_product_8x4_u8i8i32_desc,
                      dot_product_8x4_u8i8i32_avxvnni, override=True)
TensorIntrin.register(AVX2_DOT_8x4_INTRIN, dot_product_8x4_u8i8i32_desc,
                      dot_product_8x4_u8i8i32_avx2, override=True)

BF16_DOT_16x2_INTRIN = "dot_16x2_bf16_avx512bf16"
TensorIntrin.register(
    BF16_DOT_16x2_INTRIN, dot_product_16x2_bf16f32_desc, dot_product_16x2_bf16f32_avx512bf16,
    override=True,
    inexact="vdpbf16ps adds the pair's two products to the float32 lane in its own order, "
            "rounding to nearest even, and flushes subnormal inputs and results to zero "
            "(a float reduction's reassociation, as a vectorized float sum does)")

