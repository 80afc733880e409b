"""AArch64 tensor intrinsics: 8-bit dot products of 4 into 32-bit lanes, 4 lanes.

Each intrinsic computes, on one 128-bit NEON register of 4 lanes::

    C[i] += T(A[k]) * T(B[i, k])      for i < 4, k < 4

``A`` is 4 bytes (one row of the left matrix), ``B`` is a ``4 x 4`` block of
the right one packed row by row, ``C`` is 4 accumulators of type ``T``.
Names and desc follow TVM's ``tir/tensor_intrin/arm_cpu.py``:

- ``dot_4x4_i8i8s32_sdot``: int8 x int8 -> int32, one ``sdot`` (Armv8.2 dotprod);
- ``dot_4x4_u8u8u32_udot``: uint8 x uint8 -> uint32, one ``udot`` (dotprod);
- ``dot_4x4_i8i8s32_neon`` and ``dot_4x4_u8u8u32_neon``: the same without
  dotprod, in plain vector TIR: widen both operands to 32 bits, multiply,
  and add each lane's 4 products (LLVM selects NEON's widening multiplies).

All four are exact. Lane ``i`` of ``sdot``/``udot`` adds the 4 products of
lane ``i``'s bytes to ``C[i]`` in 32 bits: a product of two 8-bit values fits
16 bits and a sum of 4 of them 18, so only the add to ``C[i]`` can wrap, and it
wraps as the serial loop's 32-bit add does. The fallback's products and partial
sums are 32-bit and never overflow either. (TVM's NEON fallback adds pairs of
``smull`` products with ``saddlp``, which is exact too; it has no unsigned one.)

Use the one ``target.tensor_intrinsics.arm_dot_intrin_for(target)`` names: ``sdot``/``udot`` do not
compile for an AArch64 target without ``+dotprod`` (codegen says which
intrinsic and why).
"""

from __future__ import annotations

from ..script import tir as T
from ..tensor_intrinsic import TensorIntrin


def dot_desc(elem: str, acc: str):
    """``C[i] += acc(A[k]) * acc(B[i, k])`` for i, k < 4 on ``elem`` (TVM's desc)."""

    @T.prim_func
    def desc(
        A: T.Buffer((4,), elem, offset_factor=1),
        B: T.Buffer((4, 4), elem, offset_factor=1),
        C: T.Buffer((4,), acc, offset_factor=1),
    ) -> None:
        with T.block("root"):
            for i in T.serial(0, 4):
                for k in T.serial(0, 4):
                    with T.block("update"):
                        vi, vk = T.axis.remap("SR", [i, k])
                        C[vi] = C[vi] + T.cast(A[vk], acc) * T.cast(B[vi, vk], acc)

    return desc


def dot_instruction(elem: str, acc: str, intrinsic: str):
    """One ``sdot``/``udot`` (``intrinsic``) into C's 4 lanes."""
    quad, bytes16, acc4 = f"{elem}x4", f"{elem}x16", f"{acc}x4"

    @T.prim_func
    def impl(
        A: T.Buffer((4,), elem, offset_factor=1),
        B: T.Buffer((4, 4), elem, offset_factor=1),
        C: T.Buffer((4,), acc, offset_factor=1),
    ) -> None:
        with T.block("root"):
            # A's 4 bytes as one 32-bit value in every lane: sdot/udot multiplies lane i's
            # 4 bytes of both operands pairwise and adds the 4 products to C[i].
            a_all = T.reinterpret(
                T.broadcast(T.reinterpret(A.vload([0], quad), dtype=acc), 4), dtype=bytes16)
            C[T.ramp(0, 1, 4)] = T.call_llvm_pure_intrin(
                acc4, intrinsic, T.uint32(3), C.vload([0], acc4), a_all,
                B.vload([0, 0], bytes16))

    return impl


def dot_neon(elem: str, acc: str):
    """The exact fallback without dotprod: 32-bit products, neighbours added twice."""
    quad, bytes16, acc4, acc16 = f"{elem}x4", f"{elem}x16", f"{acc}x4", f"{acc}x16"

    @T.prim_func
    def impl(
        A: T.Buffer((4,), elem, offset_factor=1),
        B: T.Buffer((4, 4), elem, offset_factor=1),
        C: T.Buffer((4,), acc, offset_factor=1),
    ) -> None:
        with T.block("root"):
            a_all = T.reinterpret(
                T.broadcast(T.reinterpret(A.vload([0], quad), dtype=acc), 4), dtype=bytes16)
            prod = T.cast(a_all, acc16) * T.cast(B.vload([0, 0], bytes16), acc16)
            # Lane i's products are prod[4i : 4i + 4]: add neighbours twice (NEON's addp).
            pairs = (T.Shuffle([prod], [0, 2, 4, 6, 8, 10, 12, 14])
                     + T.Shuffle([prod], [1, 3, 5, 7, 9, 11, 13, 15]))
            C[T.ramp(0, 1, 4)] = (C.vload([0], acc4)
                                  + (T.Shuffle([pairs], [0, 2, 4, 6])
                                     + T.Shuffle([pairs], [1, 3, 5, 7])))

    return impl


dot_product_4x4_i8i8i32_desc = dot_desc("int8", "int32")
dot_product_4x4_i8i8i32_sdot = dot_instruction("int8", "int32",
                                               "llvm.aarch64.neon.sdot.v4i32.v16i8")
dot_product_4x4_i8i8i32_neon = dot_neon("int8", "int32")
dot_product_4x4_u8u8u32_desc = dot_desc("uint8", "uint32")
dot_product_4x4_u8u8u32_udot = dot_instruction("uint8", "uint32",
                                               "llvm.aarch64.neon.udot.v4i32.v16i8")
dot_product_4x4_u8u8u32_neon = dot_neon("uint8", "uint32")


ARM_DOT_4x4_i8_SDOT_INTRIN = "dot_4x4_i8i8s32_sdot"
ARM_DOT_4x4_i8_NEON_INTRIN = "dot_4x4_i8i8s32_neon"
ARM_DOT_4x4_u8_UDOT_INTRIN = "dot_4x4_u8u8u32_udot"
ARM_DOT_4x4_u8_NEON_INTRIN = "dot_4x4_u8u8u32_neon"

TensorIntrin.register(ARM_DOT_4x4_i8_SDOT_INTRIN, dot_product_4x4_i8i8i32_desc,
                      dot_product_4x4_i8i8i32_sdot, override=True)
TensorIntrin.register(ARM_DOT_4x4_i8_NEON_INTRIN, dot_product_4x4_i8i8i32_desc,
                      dot_product_4x4_i8i8i32_neon, override=True)
TensorIntrin.register(ARM_DOT_4x4_u8_UDOT_INTRIN, dot_product_4x4_u8u8u32_desc,
                      dot_product_4x4_u8u8u32_udot, override=True)
TensorIntrin.register(ARM_DOT_4x4_u8_NEON_INTRIN, dot_product_4x4_u8u8u32_desc,
                      dot_product_4x4_u8u8u32_neon, override=True)

