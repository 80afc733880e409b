"""``StripMineVectorLoops``: Before (ir_builder) / After (ir_builder) for each kind of extent,
the vector length rule, the ``tir.vector_length`` annotation and its errors."""

import numpy as np
import pytest

import codegen
import tir
import transform
from tir import ir_builder
from tir.structural import assert_structural_equal
from transform.vector.strip_mine_vector_loops import MAX_VECTORS
from transform.vector.tail import PREDICATE_TAIL, STRIP_MINED
from transform.vector.vector_length import VECTOR_LENGTH

BITS = codegen.Target("llvm").vector_width_bits
VL = BITS // 32  # float32 lanes per register on this host
NOTE = f"strip-mined by {VL} (the target's {BITS}-bit registers / float32)"


def add_one(extent, lo=0, annotations=None, dtype="float32", size=None):
    """``for i in vectorized(lo, lo + extent): B[i] = A[i] + 1``."""
    A = tir.decl_buffer((size if size is not None else 1 << 20,), dtype, name="A")
    B = tir.decl_buffer(A.shape, dtype, name="B")
    ib = ir_builder.create()
    a, b = ib.buffer_ptr(A), ib.buffer_ptr(B)
    with ib.for_range(lo, lo + extent, kind="vectorize", name="i",
                      annotations=annotations) as i:
        b[i] = a[i] + tir.const(1, dtype)
    return tir.PrimFunc([A, B], ib.get()), (A, B)


def strip_mined(bufs, extent, vl, lo=0, full=None, tail=True, note=NOTE, count=None):
    """What the pass should make of ``add_one``: full vectors, then the guarded tail."""
    A, B = bufs
    count = extent if count is None else count
    full = tir.floordiv(count, vl) if full is None else full
    ib = ir_builder.create()
    a, b = ib.buffer_ptr(A), ib.buffer_ptr(B)
    one = tir.const(1, A.dtype)
    if not (isinstance(full, int) and full == 0):
        with ib.for_range(0, full, name="i_outer") as o, \
                ib.for_range(0, vl, kind="vectorize", name="i",
                             annotations={STRIP_MINED: note}) as v:
            k = lo + o * vl + v
            b[k] = a[k] + one
    if tail:
        with ib.for_range(0, vl, kind="vectorize", name="i",
                          annotations={STRIP_MINED: f"{note}, tail", PREDICATE_TAIL: True}) as v:
            k = lo + full * vl + v
            with ib.if_scope(k < lo + count):
                b[k] = a[k] + one
    return ib.get()


def run(func, config=None):
    with transform.PassContext(config=config or {}):
        return transform.StripMineVectorLoops()(tir.IRModule.from_expr(func))["main"]


def test_symbolic_extent_gets_full_vectors_and_a_guarded_tail():
    n = tir.size_var("n")
    func, bufs = add_one(n)
    assert_structural_equal(run(func).body, strip_mined(bufs, n, VL))


def test_constant_extent_not_a_multiple_peels_one_tail():
    func, bufs = add_one(2 * VL + 3)
    assert_structural_equal(run(func).body, strip_mined(bufs, 2 * VL + 3, VL, full=2))


def test_constant_multiple_above_the_threshold_has_no_tail():
    extent = 2 * MAX_VECTORS * VL
    func, bufs = add_one(extent)
    assert_structural_equal(run(func).body,
                            strip_mined(bufs, extent, VL, full=2 * MAX_VECTORS, tail=False))


def test_large_constant_extent():
    func, bufs = add_one(32768 + 5)
    assert_structural_equal(run(func).body,
                            strip_mined(bufs, 32768 + 5, VL, full=(32768 + 5) // VL))


def test_extent_below_one_vector_gets_one_masked_vector():
    func, bufs = add_one(VL - 1, annotations={VECTOR_LENGTH: VL})
    assert_structural_equal(run(func).body,
                            strip_mined(bufs, VL - 1, VL, full=0, note=f"strip-mined by {VL} "
                                        f"({VECTOR_LENGTH})"))


@pytest.mark.parametrize("extent", [1, VL - 1, VL, 2 * VL, MAX_VECTORS * VL])
def test_small_constant_extents_are_left_alone(extent):
    """Up to one register, or a few whole registers: one vector, as VectorizeLoop makes it."""
    func, _ = add_one(extent)
    assert run(func) is func


def test_non_zero_min_offsets_indices_and_guard():
    n = tir.size_var("n")
    func, bufs = add_one(n, lo=3)
    # The extent is (3 + n) - 3 until Simplify; guard and accesses share the base 3 + full * VL.
    extent = func.body.extent
    assert_structural_equal(run(func).body, strip_mined(bufs, extent, VL, lo=3))


def test_extent_that_may_be_negative_is_clamped():
    n = tir.var("n")  # a plain int32 var: the loop may run no iteration at all
    func, bufs = add_one(n, lo=2)
    count = tir.max(func.body.extent, 0)
    assert_structural_equal(run(func).body, strip_mined(bufs, n, VL, lo=2, count=count))


def test_annotation_sets_the_vector_length_and_is_dropped():
    n = tir.size_var("n")
    func, bufs = add_one(n, annotations={VECTOR_LENGTH: 4})
    after = run(func)
    assert_structural_equal(after.body,
                            strip_mined(bufs, n, 4, note=f"strip-mined by 4 ({VECTOR_LENGTH})"))
    loops = [after.body[0].body, after.body[1]]
    assert all(VECTOR_LENGTH not in loop.annotations for loop in loops)


def test_annotation_strip_mines_a_small_multiple_too():
    """A user who asks for 4 lanes gets 4 lanes, not one 16-lane vector."""
    func, bufs = add_one(16, annotations={VECTOR_LENGTH: 4})
    assert_structural_equal(run(func).body, strip_mined(
        bufs, 16, 4, full=4, tail=False, note=f"strip-mined by 4 ({VECTOR_LENGTH})"))


@pytest.mark.parametrize("bad", [0, -8, 6, 12, True, "8", 8.0])
def test_bad_annotation_is_a_clear_error(bad):
    func, _ = add_one(tir.size_var("n"), annotations={VECTOR_LENGTH: bad})
    with pytest.raises(ValueError, match=r"main: loop i: annotation tir.vector_length must be "
                                         r"a positive power of two .*got " + repr(bad)):
        run(func)


@pytest.mark.parametrize("dtype, bits", [("float64", 64), ("int16", 16), ("int8", 8)])
def test_vector_length_is_register_over_widest_element(dtype, bits):
    n = tir.size_var("n")
    func, bufs = add_one(n, dtype=dtype)
    note = f"strip-mined by {BITS // bits} (the target's {BITS}-bit registers / {dtype})"
    assert_structural_equal(run(func).body, strip_mined(bufs, n, BITS // bits, note=note))


def _widening(load: str, store: str):
    n = tir.size_var("n")
    A = tir.decl_buffer((n,), load, name="A")
    B = tir.decl_buffer((n,), store, name="B")
    ib = ir_builder.create()
    a, b = ib.buffer_ptr(A), ib.buffer_ptr(B)
    with ib.for_range(0, n, kind="vectorize", name="i") as i:
        b[i] = tir.Cast(store, a[i])
    return str(run(tir.PrimFunc([A, B], ib.get())))


def test_widest_of_mixed_float_element_types_decides():
    after = _widening("float16", "float64")
    assert f"strip-mined by {BITS // 64} (the target's {BITS}-bit registers / float64)" in after


@pytest.mark.parametrize("load, store, ratio", [("int8", "int32", 4), ("uint8", "int16", 2),
                                                ("int8", "float64", 4), ("int16", "int64", 4),
                                                ("int32", "int64", 2)])
def test_narrow_integer_loads_widen_into_up_to_four_registers(load, store, ratio):
    bits = int(store[-2:]) if store[-2:].isdigit() else int(store[-1])
    lanes = BITS // bits * ratio
    assert (f"strip-mined by {lanes} (the target's {BITS}-bit registers / {load} loads, "
            f"{ratio} registers of {store})") in _widening(load, store)


def test_vector_length_follows_the_function_target():
    target = "llvm -mtriple=x86_64-linux-gnu -mcpu=haswell"
    bits = codegen.Target(target).vector_width_bits
    n = tir.size_var("n")
    func, bufs = add_one(n)
    after = run(func.with_attr("target", target))
    note = f"strip-mined by {bits // 32} (the target's {bits}-bit registers / float32)"
    assert_structural_equal(after.body, strip_mined(bufs, n, bits // 32, note=note))


def nest(outer, inner):
    """``for i in vectorized(outer): for j in vectorized(inner): A[i * inner + j] += 1``."""
    A = tir.decl_buffer((1 << 20,), "float32", name="A")
    ib = ir_builder.create()
    a = ib.buffer_ptr(A)
    with ib.for_range(0, outer, kind="vectorize", name="i") as i, \
            ib.for_range(0, inner, kind="vectorize", name="j") as j:
        a[i * inner + j] = a[i * inner + j] + tir.const(1, "float32")
    return tir.PrimFunc([A], ib.get())


def test_nested_vectorized_loops_within_a_few_registers_are_left_to_vectorize_loop():
    func = nest(2, MAX_VECTORS * VL // 2)
    with transform.collect_remarks() as remarks:
        assert run(func) is func
    assert remarks == []


@pytest.mark.parametrize("outer, inner", [(2, MAX_VECTORS * VL), (64, 64), (4, "n")])
def test_a_nest_too_wide_for_one_vector_keeps_its_outer_loop_serial(outer, inner):
    inner = tir.size_var("n") if inner == "n" else inner
    func = nest(outer, inner)
    with transform.collect_remarks() as remarks:
        after = run(func)
    assert after.body.kind == tir.ForKind.SERIAL  # the outer loop i
    kinds = []
    tir.stmt_functor.post_order_visit(after.body.body, lambda n: kinds.append(n.kind)
                                      if isinstance(n, tir.For) else None)
    assert tir.ForKind.VECTORIZED in kinds  # j is still vectorized (strip-mined if large)
    size = f"{outer * inner} lanes" if isinstance(inner, int) else "a symbolic number of lanes"
    assert [r.line for r in remarks] == [
        f"main: loop i ({outer} lanes): not vectorized: kept serial: merged with the "
        f"vectorized loop(s) inside it, it would be one vector of {size} (more than "
        f"{MAX_VECTORS} x {VL}); the loops inside are vectorized on their own"]


def test_a_wide_nest_builds_and_computes_what_the_serial_build_does():
    func = nest(128, 256)
    data = np.random.default_rng(0).random(1 << 20, dtype=np.float32)
    got, want = data.copy(), data.copy()
    codegen.build(func)["main"](got)
    with transform.PassContext(config={"tir.disable_vectorize": True}):
        codegen.build(func)["main"](want)
    np.testing.assert_array_equal(got, want)


def test_nothing_to_do_when_vectorization_is_off():
    func, _ = add_one(tir.size_var("n"))
    assert run(func, {"tir.disable_vectorize": True}) is func


def test_vectorize_loop_alone_still_rejects_a_symbolic_extent():
    """The pass is the pipeline's; VectorizeLoop by itself keeps TVM's behaviour."""
    func, _ = add_one(tir.size_var("n"))
    with pytest.raises(transform.VectorizeError, match="extent n is not a constant"):
        transform.VectorizeLoop()(tir.IRModule.from_expr(func))


def test_remarks_name_the_vector_length_and_the_predicated_tail():
    func, _ = add_one(tir.size_var("n"))
    with transform.collect_remarks() as remarks:
        transform.Sequential([transform.StripMineVectorLoops(), transform.VectorizeLoop()])(
            tir.IRModule.from_expr(func))
    # One remark for the one loop: its peeled tail is a detail of it.
    assert [r.line for r in remarks] == [f"main: loop i ({VL} lanes): vectorized: {NOTE}; "
                                         "predicated tail"]


def test_loop_carried_dependence_stays_serial_after_strip_mining():
    n = tir.size_var("n")
    A = tir.decl_buffer((n,), "float32", name="A")
    ib = ir_builder.create()
    a = ib.buffer_ptr(A)
    with ib.for_range(1, n, kind="vectorize", name="i") as i:
        a[i] = a[i - 1] + tir.const(1, "float32")
    func = tir.PrimFunc([A], ib.get())
    with transform.collect_remarks() as remarks:
        after = transform.Sequential([transform.StripMineVectorLoops(),
                                      transform.VectorizeLoop()])(tir.IRModule.from_expr(func))
    [remark] = remarks  # the tail stays serial for the same reason: said once
    assert remark.outcome == "not vectorized"
    assert remark.reason == f"{NOTE}; A[i - 1] reads what A[i] writes in the previous iteration " \
        "(distance 1)"
    assert "Ramp" not in str(after["main"])


def test_without_codegen_the_pass_reads_the_target_layer():
    # transform does not import codegen (the layering runs the other way): the vector
    # width of "llvm" comes from the target layer below both, with no import-time hook.
    import subprocess
    import sys

    code = (
        "import sys, tir, transform\n"
        "from tir import ir_builder\n"
        "n = tir.size_var('n')\n"
        "ib = ir_builder.create(); A = ib.pointer('float32', name='A')\n"
        "with ib.for_range(0, n, kind='vectorize', name='i') as i:\n"
        "    A[i] = 1.0\n"
        "mod = tir.IRModule.from_expr(tir.PrimFunc([A, n], ib.get()))\n"
        "print(type(transform.StripMineVectorLoops()(mod)['main'].body).__name__)\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'codegen'))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.splitlines()
    assert out == ["SeqStmt", "[]"]
