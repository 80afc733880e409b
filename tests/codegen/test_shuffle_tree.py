"""codegen.llvm.shuffle_tree: shuffle counts and widths, values through the JIT, end to end."""

import ctypes
import random

import llvmlite.binding as llvm
import numpy as np
import pytest
from llvmlite import ir

import codegen
import tir
import transform
from codegen import Target, machine
from codegen.llvm.shuffle_tree import shuffle_tree

I32 = ir.IntType(32)
PTR = ir.PointerType()


def _define(module: ir.Module, name: str, widths: list[int], picks: list[int]) -> ir.Function:
    """``void name(ptr src, ptr dst)``: dst = shuffle_tree(parts loaded from src, picks).

    Part k has ``widths[k]`` lanes (0: an i32 scalar); src holds the parts back to back.
    """
    fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [PTR, PTR]), name)
    b = ir.IRBuilder(fn.append_basic_block())
    src, dst = fn.args
    parts, start = [], 0
    for w in widths:
        ptr = b.gep(src, [I32(start)], inbounds=True, source_etype=I32)
        parts.append(b.load(ptr, typ=I32 if w == 0 else ir.VectorType(I32, w), align=4))
        start += max(w, 1)
    fn.parts, fn.result = parts, shuffle_tree(b, parts, picks)
    b.store(fn.result, dst, align=4)
    b.ret_void()
    return fn


def _ops(fn: ir.Function, opname: str) -> list:
    return [i for block in fn.blocks for i in block.instructions if i.opname == opname]


def _shuffles(widths: list[int], picks: list[int]) -> list[int]:
    """Result widths of the shufflevectors shuffle_tree emits, sorted."""
    fn = _define(ir.Module(), "f", widths, picks)
    assert fn.result.type == ir.VectorType(I32, len(picks))
    return sorted(i.type.count for i in _ops(fn, "shufflevector"))


def _interleave(n: int, w: int) -> list[int]:
    return [k * w + lane for lane in range(w) for k in range(n)]


@pytest.mark.parametrize("n, widths", [
    (2, [16]),
    (3, [16, 16, 24]),  # the third part is padded to 16: no same-type tree does better
    (4, [16, 16, 32]),
    (8, [16] * 4 + [32] * 2 + [64]),
])
def test_concatenation(n, widths):
    assert _shuffles([8] * n, list(range(8 * n))) == widths


def test_concatenation_of_unequal_parts_splits_where_widths_match():
    assert _shuffles([4, 4, 8], list(range(16))) == [8, 16]  # (4 ++ 4) ++ 8, no pad
    assert _shuffles([8, 4, 4], list(range(16))) == [8, 16]


def test_interleave():
    assert _shuffles([8, 8], _interleave(2, 8)) == [16]  # complex numbers
    assert _shuffles([8, 8, 8], _interleave(3, 8)) == [16, 16, 24]  # RGB


@pytest.mark.parametrize("phase", [0, 1])
def test_deinterleave_stride_2(phase):
    assert _shuffles([8, 8], list(range(phase, 16, 2))) == [8]


@pytest.mark.parametrize("phase", [0, 1, 2])
def test_deinterleave_stride_3_compresses(phase):
    """Each of the three parts gives 2 or 3 lanes: two shuffles of 8, never 16 or 24."""
    assert _shuffles([8, 8, 8], list(range(phase, 24, 3))) == [8, 8]


def test_reverse_and_duplicates_of_one_part():
    assert _shuffles([8], list(range(7, -1, -1))) == [8]
    assert _shuffles([8], [3, 3, 3, 3, 0, 0]) == [6]
    assert _shuffles([4, 4], [0, 4, 0, 4, 7, 7, 1, 1]) == [8]


def test_whole_part_costs_nothing():
    fn = _define(ir.Module(), "f", [4, 8, 4], list(range(4, 12)))
    assert fn.result is fn.parts[1]
    assert _shuffles([4, 4], list(range(8))) == [8]  # identity concatenation: one shuffle


def test_sparse_pick_from_16_vectors():
    picks = [1 * 8 + 1, 5 * 8 + 5, 9 * 8 + 1, 14 * 8 + 6]
    fn = _define(ir.Module(), "f", [8] * 16, picks)
    shuffles = _ops(fn, "shufflevector")
    assert sorted(s.type.count for s in shuffles) == [2, 2, 4]
    read = {id(op) for s in shuffles for op in s.operands[:2]}
    assert [k for k, p in enumerate(fn.parts) if id(p) in read] == [1, 5, 9, 14]


def test_dont_care_lanes():
    fn = _define(ir.Module(), "f", [8], [0, -1, 2, 3, -1, 5, 6, 7])
    assert fn.result is fn.parts[0]  # identity up to don't-cares
    fn = _define(ir.Module(), "f", [8], [7, -1, 5, -1])
    (shuffle,) = _ops(fn, "shufflevector")
    assert str(shuffle.operands[2]) == "<4 x i32> <i32 7, i32 undef, i32 5, i32 undef>"
    llvm.parse_assembly(str(fn.module)).verify()
    fn = _define(ir.Module(), "f", [8, 8], [-1, -1])
    assert not _ops(fn, "shufflevector") and isinstance(fn.result, ir.Constant)


def test_scalars():
    fn = _define(ir.Module(), "f", [0, 0, 0, 0], [0, 1, 2, 3])
    assert len(_ops(fn, "insertelement")) == 4 and not _ops(fn, "shufflevector")
    fn = _define(ir.Module(), "f", [4, 0], list(range(5)))
    assert len(_ops(fn, "insertelement")) == 1 and len(_ops(fn, "shufflevector")) == 1
    assert _shuffles([0], [0, 0, 0, 0]) == [4]  # broadcast: insert, then one shuffle
    fn = _define(ir.Module(), "f", [0, 3], [0, 1, 0, 3, 2])  # a scalar read twice: no pad
    assert [i.type.count for i in _ops(fn, "insertelement")] == [3]
    assert [i.type.count for i in _ops(fn, "shufflevector")] == [5]


def test_bad_input_raises():
    b = ir.IRBuilder(ir.Function(ir.Module(), ir.FunctionType(ir.VoidType(), []), "f")
                     .append_basic_block())
    v = ir.Constant(ir.VectorType(I32, 4), None)
    with pytest.raises(ValueError, match=r"out of range \[-1, 4\)"):
        shuffle_tree(b, [v], [4])
    with pytest.raises(TypeError, match="element type"):
        shuffle_tree(b, [v, ir.Constant(ir.FloatType(), 0.0)], [0])


# ------------------------------------------------------------ values

def _random_case(rng: random.Random) -> tuple[list[int], list[int]]:
    widths = [rng.choice([0, 1, 1, 2, 3, 4, 5, 7, 8, 8, 16]) for _ in range(rng.randint(1, 12))]
    sizes = [max(w, 1) for w in widths]
    starts = np.cumsum([0] + sizes)
    used = rng.sample(range(len(widths)), rng.randint(1, len(widths)))  # often a sparse subset
    lanes = [starts[j] + k for j in used for k in range(sizes[j])]
    total = sum(sizes)
    pool = lanes if rng.random() < 0.7 else list(range(total))
    picks = [int(rng.choice(pool)) if rng.random() > 0.1 else -1 for _ in range(rng.randint(1, 24))]
    return widths, picks


CASES = [_random_case(random.Random(seed)) for seed in range(120)] + [
    ([8] * 16, [9, 45, 77, 118]), ([8, 8, 8], _interleave(3, 8)), ([8] * 3, list(range(1, 24, 3))),
    ([0, 1, 0, 3], [0, 1, 2, 3, 4, 5, 2, 0]), ([5, 3, 7], list(range(15))[::-1]),
]


@pytest.mark.parametrize("opt_level", [0, 3])
def test_values_match_numpy(opt_level):
    """Random widths (scalars, 1-lane, odd sizes) and picks (sparse, repeated, -1), JIT-run."""
    module = ir.Module()
    fns = [_define(module, f"case{k}", *case) for k, case in enumerate(CASES)]
    for fn, (widths, picks) in zip(fns, CASES):
        shuffles = _ops(fn, "shufflevector")
        used = {p for p in picks if p >= 0}
        assert all(s.type.count <= max(len(picks), *widths) for s in shuffles)
        assert len(shuffles) <= 2 * len(used) + 1
    target = Target("llvm")
    text = str(module)
    parsed = machine.parse(text)
    machine.optimize(parsed, target, opt_level)
    tm = machine.jit_target_machine(machine.machine_target(target, str(parsed)))
    engine = llvm.create_mcjit_compiler(parsed, tm)
    engine.finalize_object()
    proto = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p)
    rng = np.random.default_rng(opt_level)
    for k, (widths, picks) in enumerate(CASES):
        src = rng.integers(-2**31, 2**31, sum(max(w, 1) for w in widths), dtype=np.int64)
        src = src.astype(np.int32)
        dst = np.zeros(len(picks), np.int32)
        proto(engine.get_function_address(f"case{k}"))(src.ctypes.data, dst.ctypes.data)
        cared = np.array(picks) >= 0
        np.testing.assert_array_equal(dst[cared], src[np.array(picks)[cared]],
                                      err_msg=f"widths {widths} picks {picks}")


# ------------------------------------------------------------ through the compiler

def _shuffle_kernel(dtype: str, widths: list[int], picks: list[int]) -> tir.PrimFunc:
    bufs = [tir.decl_buffer((w,), dtype, name=f"A{k}") for k, w in enumerate(widths)]
    out = tir.decl_buffer((len(picks),), dtype, name="C")
    loads = [tir.BufferLoad(b, [tir.Ramp(0, 1, w) if w > 1 else tir.const(0)])
             for b, w in zip(bufs, widths)]
    body = tir.BufferStore(out, tir.Shuffle(loads, picks), [tir.Ramp(0, 1, len(picks))])
    return tir.PrimFunc(bufs + [out], body)


@pytest.mark.parametrize("dtype", ["int32", "float32", "int8", "float64"])
@pytest.mark.parametrize("widths, picks, shuffles", [
    ([8, 8, 8], _interleave(3, 8), 3),
    ([8, 8, 8], list(range(2, 24, 3)), 2),
    ([8] * 16, [127, 3, 64, 70, 100, 3], 3),
    ([1, 4, 1, 3], [0, 5, 1, 2, 3, 4, 8, 7, 6, 5], 2),
])
def test_shuffle_kernel_matches_numpy_and_interpreter(dtype, widths, picks, shuffles):
    func = _shuffle_kernel(dtype, widths, picks)
    rng = np.random.default_rng(len(picks))
    arrays = [rng.uniform(-100, 100, w).astype(dtype) for w in widths]
    if dtype.startswith("float"):
        arrays[0][0] = np.nan
    want = np.concatenate(arrays)[picks]
    for target in ("llvm", "interp"):
        c = np.zeros(len(picks), dtype)
        codegen.build(func, target=target)(*arrays, c)
        np.testing.assert_array_equal(c, want, err_msg=target)
    with transform.PassContext(config={"codegen.llvm.opt_level": 0}):
        ll = codegen.build(func).get_source("ll")
    assert ll.count("= shufflevector") == shuffles
