"""``ByteDotAccumulation`` Before/After: which updates become ``vpdpbusd``, and which stay.

The end-to-end differential tests are in tests/codegen/test_byte_dot_build.py.
"""

import pytest

import codegen
import tir
from target.tensor_intrinsics import vpdpbusd_bytes
from tir import op
from tir.expr import Cast, Ramp
from tir.op_intrin import call_llvm_pure_intrin
from tir.stmt import BufferStore
from tir.structural import assert_structural_equal
from transform.vector.byte_dot_accumulation import byte_dot_accumulation

ZNVER4, ALDERLAKE = codegen.Target("llvm -mcpu=znver4"), codegen.Target("llvm -mcpu=alderlake")


def _ramp(base, lanes: int) -> Ramp:
    return Ramp(op.const(base, "int32") if isinstance(base, int) else base,
                op.const(1, "int32"), lanes)


def accumulate(lanes: int, update, da: str = "uint8", db: str = "int8",
               read_lanes: bool = False) -> tir.Stmt:
    """An accumulator of ``lanes`` int32, zeroed, updated by ``update(acc, a, b, i, ib)`` in a
    loop, then summed into ``S[0]`` (or, with ``read_lanes``, copied out lane by lane)."""
    A, B = tir.decl_buffer((1024,), da, "A"), tir.decl_buffer((1024,), db, "B")
    S = tir.decl_buffer((lanes,), "int32", "S")
    ib = tir.ir_builder.create()
    a, b, s = (ib.buffer_ptr(x) for x in (A, B, S))
    acc = ib.allocate("int32", lanes, name="S_acc", scope="local")
    acc[_ramp(0, lanes)] = tir.Broadcast(op.const(0, "int32"), lanes)
    with ib.for_range(0, 1024 // lanes, name="i") as i:
        update(acc, a, b, i, ib)
    whole = acc[_ramp(0, lanes)]
    if read_lanes:
        s[_ramp(0, lanes)] = whole
    else:
        s[0] = s[0] + tir.call_intrin("int32", "tir.vector_reduce_add", whole)
    return ib.get()


def product(lanes: int):
    def update(acc, a, b, i, ib):
        r = _ramp(i * lanes, lanes)
        acc[_ramp(0, lanes)] = acc[_ramp(0, lanes)] + (
            Cast(f"int32x{lanes}", a[r]) * Cast(f"int32x{lanes}", b[r]))
    return update


def dots(lanes: int, width: int, name: str, swap: bool = False):
    """The update as ``vpdpbusd``s of ``width`` bytes each (the expected After)."""
    quads = width // 4

    def update(acc, a, b, i, ib):
        for k in range(lanes // width):
            r = _ramp(i * lanes + k * width, width)
            part = _ramp(k * quads, quads)
            x, y = (b, a) if swap else (a, b)
            acc[part] = call_llvm_pure_intrin(
                f"int32x{quads}", name, op.const(3, "uint32"), acc[part],
                op.reinterpret(f"int32x{quads}", x[r]), op.reinterpret(f"int32x{quads}", y[r]))
    return update


def test_targets_name_their_widths():
    assert vpdpbusd_bytes(ZNVER4) == (64, 32)
    assert vpdpbusd_bytes(ALDERLAKE) == (32,)
    assert vpdpbusd_bytes(codegen.Target("llvm -mcpu=znver3")) == ()
    assert vpdpbusd_bytes(codegen.Target("llvm -mtriple=aarch64-linux-gnu")) == ()


@pytest.mark.parametrize("target,lanes,width,name", [
    (ZNVER4, 64, 64, "llvm.x86.avx512.vpdpbusd.512"),
    (ZNVER4, 128, 64, "llvm.x86.avx512.vpdpbusd.512"),
    (ZNVER4, 32, 32, "llvm.x86.avx512.vpdpbusd.256"),
    (ALDERLAKE, 32, 32, "llvm.x86.avx512.vpdpbusd.256"),
    (ALDERLAKE, 64, 32, "llvm.x86.avx512.vpdpbusd.256"),
])
def test_a_summed_byte_product_becomes_vpdpbusd(target, lanes, width, name):
    before = accumulate(lanes, product(lanes))
    after = byte_dot_accumulation(before, target)
    assert_structural_equal(after, accumulate(lanes, dots(lanes, width, name)),
                            map_free_vars=True)


def test_int8_times_uint8_passes_the_uint8_operand_first():
    before = accumulate(64, product(64), da="int8", db="uint8")
    after = byte_dot_accumulation(before, ZNVER4)
    want = accumulate(64, dots(64, 64, "llvm.x86.avx512.vpdpbusd.512", swap=True),
                      da="int8", db="uint8")
    assert_structural_equal(after, want, map_free_vars=True)


@pytest.mark.parametrize("da,db", [("int8", "int8"), ("uint8", "uint8"), ("int16", "int16")])
def test_other_products_stay(da, db):
    before = accumulate(64, product(64), da=da, db=db)
    assert byte_dot_accumulation(before, ZNVER4) is before


def test_an_accumulator_read_lane_by_lane_stays():
    before = accumulate(64, product(64), read_lanes=True)
    assert byte_dot_accumulation(before, ZNVER4) is before


def test_a_predicated_update_stays():
    def masked(acc, a, b, i, ib):
        r = _ramp(i * 64, 64)
        keep = r < tir.Broadcast(op.const(1000, "int32"), 64)
        value = acc[_ramp(0, 64)] + Cast("int32x64", a[r]) * Cast("int32x64", b[r])
        ib.emit(BufferStore(acc.asbuffer(), value, [_ramp(0, 64)], predicate=keep))
    before = accumulate(64, masked)
    assert byte_dot_accumulation(before, ZNVER4) is before


def test_lanes_no_instruction_covers_stay():
    before = accumulate(16, product(16))  # 16 bytes: no 128-bit vpdpbusd is used
    assert byte_dot_accumulation(before, ZNVER4) is before
