"""Buffer access codegen: vector, strided, gathered and predicated accesses; allocations."""

import re

import numpy as np
import pytest

import codegen
import tir
import transform
from tir import ir_builder


def _build(func, **config):
    with transform.PassContext(config=config):
        return codegen.build(func)


def _copy_kernel(load_index, store_index, n=16, out_n=16, lanes=8, dtype="float32"):
    """B[store_index(i)] = A[load_index(i)] for i over n // lanes vector steps."""
    A = tir.decl_buffer((n,), dtype, name="A")
    B = tir.decl_buffer((out_n,), dtype, name="B")
    i = tir.Var("i", "int32")
    body = tir.BufferStore(B, tir.BufferLoad(A, [load_index(i)]), [store_index(i)])
    return tir.PrimFunc([A, B], tir.For(i, 0, n // lanes, tir.ForKind.SERIAL, body))


def test_contiguous_vector_access_is_one_vector_load_and_store():
    func = _copy_kernel(lambda i: tir.Ramp(i * 8, 1, 8), lambda i: tir.Ramp(i * 8, 1, 8))
    ll = _build(func, **{"codegen.llvm.opt_level": 0}).get_source("ll")
    assert "load <8 x float>" in ll and "store <8 x float>" in ll
    assert "gather" not in ll


def test_strided_load_is_vector_loads_and_a_shuffle():
    """Stride 2 over 8 lanes spans 15 elements: two 8-lane loads ([0, 8) and [7, 15)), or
    where masked loads are cheap (AVX-512) one 16-lane load (A has 16 elements: element
    15 is provably inside, so no mask either)."""
    func = _copy_kernel(lambda i: tir.Ramp(i * 8, 2, 8), lambda i: tir.Ramp(i * 8, 1, 8),
                        n=16, out_n=16, lanes=16)  # one step: A[0:16:2] -> B[0:8]
    ll = _build(func, **{"codegen.llvm.opt_level": 0}).get_source("ll")
    assert "gather" not in ll and "shufflevector" in ll
    if codegen.Target("llvm").vector_width_bits >= 512:
        assert "= load <16 x float>" in ll
    else:
        assert len(re.findall(r"= load <8 x float>", ll)) == 2
    a, b = np.arange(16, dtype="float32"), np.zeros(16, "float32")
    _build(func)(a, b)
    np.testing.assert_array_equal(b[:8], a[::2])


def test_sparse_strided_load_is_a_gather():
    """Stride 16: one chunk per lane saves nothing; the hardware gather when pinned."""
    func = _copy_kernel(lambda i: tir.Ramp(i * 8, 16, 8), lambda i: tir.Ramp(i * 8, 1, 8),
                        n=128, out_n=16, lanes=128)
    config = {"codegen.llvm.opt_level": 0, "codegen.gather": "hardware"}
    assert "llvm.masked.gather" in _build(func, **config).get_source("ll")
    a, b = np.arange(128, dtype="float32"), np.zeros(16, "float32")
    _build(func)(a, b)
    np.testing.assert_array_equal(b[:8], a[::16])


def test_strided_and_reversed_accesses():
    n = 16
    A = tir.decl_buffer((2 * n,), "int32", name="A")
    B = tir.decl_buffer((n,), "int32", name="B")
    C = tir.decl_buffer((n,), "int32", name="C")
    i = tir.Var("i", "int32")
    body = tir.SeqStmt([
        tir.BufferStore(B, tir.BufferLoad(A, [tir.Ramp(i * 16, 2, 8)]), [tir.Ramp(i * 8, 1, 8)]),
        # scatter: C[15 - 8i - k] = A[8i + k]
        tir.BufferStore(C, tir.BufferLoad(A, [tir.Ramp(i * 8, 1, 8)]),
                        [tir.Ramp(15 - i * 8, -1, 8)]),
    ])
    func = tir.PrimFunc([A, B, C], tir.For(i, 0, 2, tir.ForKind.SERIAL, body))
    a, b, c = np.arange(2 * n, dtype="int32"), np.zeros(n, "int32"), np.zeros(n, "int32")
    _build(func)(a, b, c)
    np.testing.assert_array_equal(b, a[0 : 2 * n : 2])
    np.testing.assert_array_equal(c, a[:n][::-1])


def test_gather_through_an_index_buffer():
    A = tir.decl_buffer((32,), "float64", name="A")
    idx = tir.decl_buffer((8,), "int32", name="idx")
    B = tir.decl_buffer((8,), "float64", name="B")
    ramp = tir.Ramp(0, 1, 8)
    body = tir.BufferStore(B, tir.BufferLoad(A, [tir.BufferLoad(idx, [ramp])]), [ramp])
    a = np.arange(32, dtype="float64") * 1.5
    ix = np.array([31, 0, 7, 7, 3, 20, 11, 2], dtype="int32")
    b = np.zeros(8, "float64")
    _build(tir.PrimFunc([A, idx, B], body))(a, ix, b)
    np.testing.assert_array_equal(b, a[ix])


def test_predicated_load_and_store_are_masked():
    """A tail: lanes at or past n are neither read nor written."""
    n = tir.size_var("n")
    A = tir.decl_buffer((n,), "float32", name="A")
    B = tir.decl_buffer((n,), "float32", name="B")
    i = tir.Var("i", "int32")
    ramp = tir.Ramp(i * 8, 1, 8)
    mask = tir.LT(ramp, tir.Broadcast(n, 8))
    load = tir.BufferLoad(A, [ramp], predicate=mask)
    body = tir.BufferStore(B, load + tir.Broadcast(tir.const(1.0), 8), [ramp], predicate=mask)
    func = tir.PrimFunc([A, B], tir.For(i, 0, (n + 7) // 8, tir.ForKind.SERIAL, body))
    mod = _build(func)
    assert "llvm.masked.load" in mod.get_source("ll") or "maskmov" in mod.get_source("asm")
    for size in (1, 8, 13):
        a = np.arange(size, dtype="float32")
        b = np.zeros(size, "float32")
        mod(a, b)
        np.testing.assert_array_equal(b, a + 1)


def test_two_dimensional_buffers_with_strides_and_symbolic_shape():
    m, n = tir.size_var("m"), tir.size_var("n")
    s = tir.size_var("s")
    A = tir.decl_buffer((m, n), "float32", name="A", strides=(s, 1))
    B = tir.decl_buffer((n, m), "float32", name="B")
    ib = ir_builder.create()
    a, b = ib.buffer_ptr(A), ib.buffer_ptr(B)
    with ib.for_range(0, m, name="i") as i, ib.for_range(0, n, name="j") as j:
        b[j, i] = a[i, j] * 2.0
    mod = _build(tir.PrimFunc([A, B], ib.get()))
    big = np.arange(5 * 12, dtype="float32").reshape(5, 12)
    view = big[:, 2:9]  # strides (12, 1) elements, not contiguous
    out = np.zeros((7, 5), "float32")
    mod(view, out)
    np.testing.assert_array_equal(out, view.T * 2)


def test_elem_offset_view_of_an_allocation():
    """A buffer view at elem_offset 4 of a local allocation."""
    A = tir.decl_buffer((8,), "int32", name="A")
    B = tir.decl_buffer((8,), "int32", name="B")
    data = tir.Var("tmp", "handle")
    whole = tir.decl_buffer((12,), "int32", name="tmp", data=data)
    part = tir.decl_buffer((8,), "int32", name="part", data=data, elem_offset=4)
    ramp = tir.Ramp(0, 1, 8)
    body = tir.SeqStmt([
        tir.BufferStore(part, tir.BufferLoad(A, [ramp]), [ramp]),
        tir.BufferStore(B, tir.BufferLoad(whole, [tir.Ramp(4, 1, 8)]), [ramp]),
    ])
    alloc = tir.Allocate(data, "int32", [12], tir.const(True), body)
    a, b = np.arange(8, dtype="int32") + 100, np.zeros(8, "int32")
    _build(tir.PrimFunc([A, B], alloc))(a, b)
    np.testing.assert_array_equal(b, a)


@pytest.mark.parametrize("lanes", [1, 8])
def test_bool_buffers_are_bytes(lanes):
    A = tir.decl_buffer((16,), "bool", name="A")
    B = tir.decl_buffer((16,), "bool", name="B")
    i = tir.Var("i", "int32")
    idx = i * lanes if lanes == 1 else tir.Ramp(i * lanes, 1, lanes)
    body = tir.BufferStore(B, tir.Not(tir.BufferLoad(A, [idx])), [idx])
    func = tir.PrimFunc([A, B], tir.For(i, 0, 16 // lanes, tir.ForKind.SERIAL, body))
    a = np.arange(16) % 3 == 0
    b = np.zeros(16, bool)
    _build(func)(a, b)
    np.testing.assert_array_equal(b, ~a)
    assert set(b.view("uint8")) <= {0, 1}


def test_float16_storage_and_arithmetic():
    A = tir.decl_buffer((16,), "float16", name="A")
    B = tir.decl_buffer((16,), "float16", name="B")
    ramp = tir.Ramp(0, 1, 16)
    value = tir.BufferLoad(A, [ramp]) * tir.Broadcast(tir.const(0.5, "float16"), 16)
    a = np.linspace(-4, 4, 16).astype("float16")
    b = np.zeros(16, "float16")
    _build(tir.PrimFunc([A, B], tir.BufferStore(B, value, [ramp])))(a, b)
    np.testing.assert_array_equal(b, a * np.float16(0.5))


def _local_sum(extent, n_expr=None):
    """S[0] = sum over a local buffer of ``extent`` elements filled with A's values."""
    n = tir.size_var("n")
    A = tir.decl_buffer((n,), "float64", name="A")
    S = tir.decl_buffer((1,), "float64", name="S")
    ib = ir_builder.create()
    a, s = ib.buffer_ptr(A), ib.buffer_ptr(S)
    size = extent if n_expr is None else n
    tmp = ib.allocate("float64", (size,), name="tmp")
    with ib.for_range(0, size, name="i") as i:
        tmp[i] = a[i] * 2.0
    s[0] = tir.const(0.0, "float64")
    with ib.for_range(0, size, name="j") as j:
        s[0] = s[0] + tmp[j]
    return tir.PrimFunc([A, S], ib.get())


@pytest.mark.parametrize("extent, on_stack", [(16, True), (512, True), (4096, False)])
def test_constant_allocations_stack_or_heap(extent, on_stack):
    mod = _build(_local_sum(extent))
    ll = mod.get_source("ll")
    assert ("aligned_alloc" not in ll) == on_stack
    if not on_stack:
        assert "@free" in ll
    a, s = np.arange(extent, dtype="float64"), np.zeros(1, "float64")
    mod(a, s)
    assert s[0] == 2 * a.sum()


def test_symbolic_allocation_on_the_heap():
    mod = _build(_local_sum(None, n_expr=True))
    assert "aligned_alloc" in mod.get_source("ll")
    for size in (0, 3, 10000):
        a, s = np.arange(size, dtype="float64"), np.zeros(1, "float64")
        mod(a, s)
        assert s[0] == 2 * a.sum()


# tmp has n - 8 elements; the loop writes 16 of them with the bound checks off, so
# only the check of the extent stands between a negative n - 8 and a heap overrun.
NEGATIVE_ALLOCATION = """
import sys
import numpy as np
import codegen, tir, transform
from tir import ir_builder

n = tir.var("n")
A = tir.decl_buffer((16,), "float32", name="A")
ib = ir_builder.create()
a = ib.buffer_ptr(A)
tmp = ib.allocate("float32", (n - 8,), name="tmp")
with ib.for_range(0, 16, name="i") as i:
    tmp[i] = a[i]
    a[i] = tmp[i] + tir.const(1.0, "float32")
with transform.PassContext(config={"tir.instrument_bound_checkers": False}):
    lib = codegen.build(tir.PrimFunc([A, n], ib.get()), sys.argv[1])
x = np.zeros(16, "float32")
lib(x, 24)
assert (x == 1).all(), x
for size in (4, -100):
    try:
        lib(x, size)
    except RuntimeError as e:
        print("RuntimeError:", e)
"""


@pytest.mark.parametrize("target", ["llvm", "interp"])
def test_a_negative_symbolic_allocation_raises_at_run_time(target):
    import subprocess
    import sys
    from pathlib import Path

    # a subprocess: an overrun heap block would kill it, not the test session
    result = subprocess.run([sys.executable, "-c", NEGATIVE_ALLOCATION, target],
                            cwd=Path(__file__).resolve().parents[2], capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    message = ("RuntimeError: main: assertion failed: allocate 'tmp': the extent n - 8 of "
               "dimension 0 is negative; an allocation's size must be >= 0")
    assert result.stdout.splitlines() == [message, message]


def test_a_size_var_extent_needs_no_check():
    mod = _build(_local_sum(None, n_expr=True))  # tmp has n elements, n a size var: n >= 0
    assert "aligned_alloc" in mod.get_source("ll")
    messages = [str(mod.error("main", code)) for code in range(1, 8)]
    assert not [m for m in messages if "negative" in m], messages


def test_vector_access_to_an_allocation_is_aligned():
    """tmp is 64-byte aligned and i*8 is a multiple of 8 floats: `align 32` accesses."""
    A = tir.decl_buffer((64,), "float32", name="A")
    B = tir.decl_buffer((64,), "float32", name="B")
    data = tir.Var("tmp", "handle")
    tmp = tir.decl_buffer((64,), "float32", name="tmp", data=data)
    i, j = tir.Var("i", "int32"), tir.Var("j", "int32")  # a var is bound once (build verifies)
    ramp_i, ramp_j = tir.Ramp(i * 8, 1, 8), tir.Ramp(j * 8, 1, 8)
    body = tir.SeqStmt([
        tir.For(i, 0, 8, tir.ForKind.SERIAL,
                tir.BufferStore(tmp, tir.BufferLoad(A, [ramp_i]), [ramp_i])),
        tir.For(j, 0, 8, tir.ForKind.SERIAL,
                tir.BufferStore(B, tir.BufferLoad(tmp, [ramp_j]), [ramp_j])),
    ])
    func = tir.PrimFunc([A, B], tir.Allocate(data, "float32", [64], tir.const(True), body))
    ll = _build(func, **{"codegen.llvm.opt_level": 0}).get_source("ll")
    tmp_accesses = [ln for ln in ll.splitlines() if "<8 x float>" in ln and "align 32" in ln]
    assert len(tmp_accesses) == 2, ll
    # NumPy only guarantees element alignment for parameters.
    assert "load <8 x float>, ptr %A" not in ll or "align 4" in ll


def test_vector_dtype_buffer_assumes_only_element_alignment():
    """A float32x4 buffer takes (n, 4) float32 arrays, which may be only 4-byte aligned."""
    A = tir.decl_buffer((8,), "float32x4", name="A")
    B = tir.decl_buffer((8,), "float32x4", name="B")
    i = tir.Var("i", "int32")
    body = tir.BufferStore(B, tir.BufferLoad(A, [i]) * tir.Broadcast(tir.const(2.0), 4), [i])
    mod = _build(tir.PrimFunc([A, B], tir.For(i, 0, 8, tir.ForKind.SERIAL, body)))
    raw = np.zeros(8 * 4 + 1, "float32")
    a = raw[1:].reshape(8, 4)  # 4 bytes past a 16-byte boundary (NumPy allocates 16-aligned)
    a[:] = np.arange(32).reshape(8, 4)
    b = np.zeros((8, 4), "float32")
    mod(a, b)
    np.testing.assert_array_equal(b, a * 2)


def test_float16_on_a_cpu_without_f16c_uses_libgcc_helpers():
    """x86-64 without F16C converts halves through __extendhfsf2/__truncsfhf2 calls."""
    A = tir.decl_buffer((16,), "float16", name="A")
    B = tir.decl_buffer((16,), "float16", name="B")
    ramp = tir.Ramp(0, 1, 16)
    value = tir.BufferLoad(A, [ramp]) * tir.Broadcast(tir.const(3.0, "float16"), 16)
    func = tir.PrimFunc([A, B], tir.BufferStore(B, value, [ramp]))
    mod = codegen.build(func, target="llvm -mcpu=x86-64")
    assert "__extendhfsf2" in mod.get_source("asm")
    a = np.linspace(-2, 2, 16).astype("float16")
    b = np.zeros(16, "float16")
    mod(a, b)
    np.testing.assert_array_equal(b, a * np.float16(3))


def test_strided_access_mixing_int64_offsets_and_int32_indices():
    n = tir.size_var("n", "int64")
    A = tir.decl_buffer((n,), "float32", name="A", elem_offset=tir.Var("off", "int64"))
    B = tir.decl_buffer((8,), "float32", name="B")
    body = tir.BufferStore(B, tir.BufferLoad(A, [tir.Ramp(1, 2, 8)]), [tir.Ramp(0, 1, 8)])
    a, b = np.arange(20, dtype="float32"), np.zeros(8, "float32")
    _build(tir.PrimFunc([A, B], body))(a, b)
    np.testing.assert_array_equal(b, a[1:17:2])


def test_gather_on_a_vector_dtype_buffer_is_rejected():
    A = tir.decl_buffer((8,), "float32x4", name="A")
    B = tir.decl_buffer((8,), "float32x4", name="B")
    body = tir.BufferStore(B, tir.BufferLoad(A, [tir.Ramp(0, 2, 2)]), [tir.Ramp(0, 1, 2)])
    with pytest.raises(ValueError, match="gather/scatter on buffer A of vector dtype float32x4"):
        _build(tir.PrimFunc([A, B], body))


def _aligns(ll: str) -> list[int]:
    return [int(a) for a in re.findall(r"\balign (\d+)", ll)]


@pytest.mark.parametrize("lanes", [3, 5, 6, 7, 12])
def test_odd_lane_count_access_to_an_allocation_has_a_power_of_two_alignment(lanes):
    """tmp[lanes*k : lanes*k + lanes] is at a multiple of 4*lanes bytes: only its largest
    power-of-two factor is a true alignment (LLVM rejects `align 12`)."""
    n = 4 * lanes
    A = tir.decl_buffer((n,), "float32", name="A")
    B = tir.decl_buffer((n,), "float32", name="B")
    data = tir.Var("tmp", "handle")
    tmp = tir.decl_buffer((n,), "float32", name="tmp", data=data)
    one = tir.Broadcast(tir.const(1.0), lanes)
    ramps = [tir.Ramp(k * lanes, 1, lanes) for k in range(4)]  # constant offsets, 0 first
    body = tir.SeqStmt(
        [tir.BufferStore(tmp, tir.BufferLoad(A, [r]), [r]) for r in ramps]
        + [tir.BufferStore(B, tir.BufferLoad(tmp, [r]) + one, [r]) for r in ramps]
    )
    func = tir.PrimFunc([A, B], tir.Allocate(data, "float32", [n], tir.const(True), body))
    ll = _build(func, **{"codegen.llvm.opt_level": 0}).get_source("ll")
    assert all(a & (a - 1) == 0 for a in _aligns(ll)), ll
    true_align = (4 * lanes) & -(4 * lanes)
    addresses = ["%tmp"] + re.findall(r"(%[\w.]+) = getelementptr inbounds float, ptr %tmp,", ll)
    tmp_aligns = [int(a) for p in addresses
                  for a in re.findall(rf"<{lanes} x float>.*ptr {re.escape(p)}, align (\d+)", ll)]
    assert tmp_aligns == [true_align] * 8, ll
    a, b = np.arange(n, dtype="float32"), np.zeros(n, "float32")
    _build(func)(a, b)
    np.testing.assert_array_equal(b, a + 1)


def test_vectorized_loop_over_a_local_allocation_with_three_lanes_builds():
    """The vectorizer privatizes `t` per lane: a 3-lane store to a local buffer."""
    A = tir.decl_buffer((3,), "float32", name="A")
    B = tir.decl_buffer((3,), "float32", name="B")
    ib = ir_builder.create()
    a, b = ib.buffer_ptr(A), ib.buffer_ptr(B)
    with ib.for_range(0, 3, kind="vectorize", name="j") as j:
        with ib.new_scope():
            t = ib.allocate("float32", (1,), name="t", scope="local")
            t[0] = a[j] * tir.const(2.0, "float32")
            b[j] = t[0] + tir.const(1.0, "float32")
    x, y = np.array([1.0, 2.0, 3.0], "float32"), np.zeros(3, "float32")
    _build(tir.PrimFunc([A, B], ib.get()))(x, y)
    np.testing.assert_array_equal(y, x * 2 + 1)


def test_allocation_of_a_three_lane_vector_dtype_is_element_aligned():
    """A float32x3 element is 12 bytes; tmp[1] is at byte 12, aligned to 4 only."""
    A = tir.decl_buffer((2,), "float32x3", name="A")
    B = tir.decl_buffer((2,), "float32x3", name="B")
    data = tir.Var("tmp", "handle")
    tmp = tir.decl_buffer((2,), "float32x3", name="tmp", data=data)
    stores = [tir.BufferStore(tmp, tir.BufferLoad(A, [k]), [k]) for k in range(2)]
    stores += [tir.BufferStore(B, tir.BufferLoad(tmp, [k]), [k]) for k in range(2)]
    body = tir.Allocate(data, "float32x3", [2], tir.const(True), tir.SeqStmt(stores))
    func = tir.PrimFunc([A, B], body)
    ll = _build(func, **{"codegen.llvm.opt_level": 0}).get_source("ll")
    assert all(a & (a - 1) == 0 for a in _aligns(ll)), ll
    a, b = np.arange(6, dtype="float32").reshape(2, 3), np.zeros((2, 3), "float32")
    _build(func)(a, b)
    np.testing.assert_array_equal(b, a)
