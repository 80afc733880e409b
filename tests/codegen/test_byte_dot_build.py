"""Integer dot products of 8-bit (and 16-bit) inputs built end to end, with ByteDotAccumulation.

``s = s + int32(a[i]) * int32(b[i])`` on uint8 x int8 uses ``vpdpbusd`` where the
target has AVX512-VNNI or AVX-VNNI; other products (int8 x int8, uint8 x uint8,
int16 x int16) are left to LLVM, which adds int16 pairs (``vpmaddwd``,
``vpdpwssd``). Every build must agree with the serial build, the interpreter on
the function as written, the interpreter on the lowered function and NumPy, bit
for bit, with data at the extremes of the types, tails, empty loops, a nonzero
initial value and sums that wrap around int32. The instruction expected on the
host comes from ``Target.has_feature``; explicit CPUs are compiled to assembly only.
"""

import re

import numpy as np
import pytest

import codegen
import tir
import transform
from codegen.interp.backend import build_interpreter
from transform.vector.byte_dot_accumulation import byte_dot_accumulation

HOST = codegen.Target("llvm")
SERIAL = {"tir.disable_vectorize": True}
NO_DOT = {"tir.vectorize.dot_instructions": False}
FORMS = [("uint8", "int8"), ("int8", "uint8"), ("int8", "int8"), ("uint8", "uint8"),
         ("int16", "int16")]
SIZES = [0, 1, 3, 31, 63, 64, 65, 128, 1001, 4099]
#: vpdpbusd on zmm (EVEX), on ymm with AVX-VNNI (VEX).
ZMM_DOT = r"(?<!\{vex\}\t)vpdpbusd\s[^\n]*%zmm"
YMM_DOT = r"\{vex\}\s*vpdpbusd\s[^\n]*%ymm"


def dot(da: str, db: str, n=None) -> tir.PrimFunc:
    """``S[0] = S[0] + int32(A[i]) * int32(B[i])`` over a vectorized loop (n symbolic if None)."""
    n = tir.size_var("n") if n is None else n
    A, B = tir.decl_buffer((n,), da, "A"), tir.decl_buffer((n,), db, "B")
    S = tir.decl_buffer((1,), "int32", "S")
    ib = tir.ir_builder.create()
    a, b, s = (ib.buffer_ptr(x) for x in (A, B, S))
    with ib.for_range(0, n, name="i", kind="vectorize") as i:
        s[0] = s[0] + tir.Cast("int32", a[i]) * tir.Cast("int32", b[i])
    return tir.PrimFunc([A, B, S], ib.get())


def matvec(da: str, db: str, m: int, n: int) -> tir.PrimFunc:
    """``C[i] = C[i] + sum_k int32(A[i, k]) * int32(X[k])``, the k loop vectorized."""
    A, X = tir.decl_buffer((m, n), da, "A"), tir.decl_buffer((n,), db, "X")
    C = tir.decl_buffer((m,), "int32", "C")
    ib = tir.ir_builder.create()
    a, x, c = (ib.buffer_ptr(t) for t in (A, X, C))
    with ib.for_range(0, m, name="i") as i:
        with ib.for_range(0, n, name="k", kind="vectorize") as k:
            c[i] = c[i] + tir.Cast("int32", a[i, k]) * tir.Cast("int32", x[k])
    return tir.PrimFunc([A, X, C], ib.get())


def build(func, config=None, target="llvm"):
    with transform.PassContext(config=config or {}):
        return codegen.build(func, target=target)


def inputs(dtype: str, n: int, pattern: str, rng) -> np.ndarray:
    """``n`` values: random over the whole type, or its extremes (min, max, 0, -1 mixed)."""
    info = np.iinfo(dtype)
    if pattern == "min":
        return np.full(n, info.min, dtype)
    if pattern == "max":
        return np.full(n, info.max, dtype)
    if pattern == "extremes":
        return rng.choice(np.array([info.min, info.max, 0, info.max // 2 + 1], dtype), n)
    return rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)


def wrapped_dot(a: np.ndarray, b: np.ndarray, init: int) -> int:
    """``init + sum a * b`` computed exactly, wrapped to int32."""
    total = init + int(np.dot(a.astype(np.int64), b.astype(np.int64)))
    return (total + 2 ** 31) % 2 ** 32 - 2 ** 31


def results(func, args) -> list[int]:
    """S[0] after the vectorized build, the serial build, the build without the dot
    instructions, the interpreter on ``func`` as written and on the lowered function."""
    mods = [build(func), build(func, SERIAL), build(func, NO_DOT), build_interpreter(func),
            build(func, target="interp")]
    out = []
    for mod in mods:
        copies = [x.copy() for x in args]
        mod(*copies)
        out.append(int(copies[-1][0]))
    return out


@pytest.mark.parametrize("da,db", FORMS)
@pytest.mark.parametrize("n", SIZES)
def test_every_build_agrees_with_numpy(da, db, n):
    rng = np.random.default_rng(n)
    func = dot(da, db)
    for pattern in ("random", "extremes", "min", "max"):
        a, b = inputs(da, n, pattern, rng), inputs(db, n, "random", rng)
        for x, y in ((a, b), (a, inputs(db, n, pattern, rng))):
            init = -123457 if pattern == "random" else 2 ** 31 - 5
            want = wrapped_dot(x, y, init)
            got = results(func, [x, y, np.array([init], np.int32)])
            assert got == [want] * len(got), f"{da} x {db}, n={n}, {pattern}"


@pytest.mark.parametrize("da,db", FORMS)
def test_sums_that_wrap_around_int32(da, db):
    """All-extreme inputs over 4099 elements, from an initial value 17 inside the edge of
    int32 that the products run towards: the exact sum leaves int32 (once for bytes, many
    times for int16 pairs); every build gives the same wrapped value."""
    n = 4099
    for pa, pb in (("max", "min"), ("max", "max"), ("min", "min")):
        a, b = inputs(da, n, pa, None), inputs(db, n, pb, None)
        exact = int(np.dot(a.astype(np.int64), b.astype(np.int64)))
        init = 2 ** 31 - 18 if exact > 0 else -(2 ** 31) + 17
        assert exact == 0 or not -(2 ** 31) <= init + exact < 2 ** 31  # it does wrap
        want = wrapped_dot(a, b, init)
        assert results(dot(da, db), [a, b, np.array([init], np.int32)]) == [want] * 5


@pytest.mark.parametrize("da,db", [("uint8", "int8"), ("int8", "int8")])
@pytest.mark.parametrize("m,n", [(3, 0), (5, 1), (4, 67), (7, 256), (2, 1003)])
def test_matvec_rows_agree(da, db, m, n):
    rng = np.random.default_rng(m * 1000 + n)
    a = inputs(da, m * n, "extremes", rng).reshape(m, n)
    x = inputs(db, n, "random", rng)
    c0 = rng.integers(-1000, 1000, m).astype(np.int32)
    want = np.array([wrapped_dot(a[i], x, int(c0[i])) for i in range(m)], np.int32)
    func = matvec(da, db, m, n)
    mods = [build(func), build(func, SERIAL), build_interpreter(func),
            build(func, target="interp")]
    for mod in mods:
        c = c0.copy()
        mod(a, x, c)
        np.testing.assert_array_equal(c, want)


def _vnni_pattern(target: codegen.Target) -> str | None:
    """The vpdpbusd a uint8 x int8 dot should compile to on ``target``, or None."""
    if target.has_feature("avx512vnni") and target.vector_width_bits >= 512:
        return ZMM_DOT
    if target.has_feature("avxvnni"):
        return YMM_DOT
    return None


def test_the_host_uses_its_dot_instruction():
    asm = build(dot("uint8", "int8")).get_source("asm")
    pattern = _vnni_pattern(HOST)
    if pattern is None:
        assert "vpdpbusd" not in asm
    else:
        assert re.search(pattern, asm), HOST
    assert "vpmaddubsw" not in asm  # it saturates int16 pair sums: never exact here


@pytest.mark.parametrize("cpu,pattern", [("znver4", ZMM_DOT), ("cascadelake", ZMM_DOT),
                                         ("alderlake", YMM_DOT), ("znver3", None)])
@pytest.mark.parametrize("da,db", [("uint8", "int8"), ("int8", "uint8")])
def test_explicit_cpus_compile_to_their_dot_instruction(cpu, pattern, da, db):
    target = codegen.Target(f"llvm -mcpu={cpu}")
    assert _vnni_pattern(target) == pattern
    asm = build(dot(da, db, 4096), target=target).get_source("asm")
    if pattern is None:
        assert "vpdpbusd" not in asm and re.search(r"vpmaddwd", asm)
    else:
        assert re.search(pattern, asm)
        assert not re.search(r"vpmov[sz]xbd", asm)  # no operand widened to int32 lanes
    assert "vpmaddubsw" not in asm


@pytest.mark.parametrize("cpu", ["znver4", "cascadelake", "alderlake", "znver3"])
@pytest.mark.parametrize("da,db", [("int8", "int8"), ("uint8", "uint8"), ("int16", "int16")])
def test_other_products_stay_on_int16_pairs(cpu, da, db):
    """No vpdpbusd (its second operand is signed bytes: exact for uint8 x int8 only), and
    never the saturating vpmaddubsw; LLVM adds int16 pairs, with VNNI through vpdpwssd."""
    asm = build(dot(da, db, 4096), target=f"llvm -mcpu={cpu}").get_source("asm")
    assert "vpdpbusd" not in asm and "vpmaddubsw" not in asm
    assert re.search(r"vpdpwssd|vpmaddwd", asm)


def test_config_turns_the_pass_off():
    asm = build(dot("uint8", "int8", 4096), NO_DOT, "llvm -mcpu=znver4").get_source("asm")
    assert "vpdpbusd" not in asm


def _lowered(func, target: str):
    with transform.PassContext(config=NO_DOT):
        return codegen.lower(func, target)["main"]


def _calls(stmt) -> list:
    found = []
    tir.functor.post_order_visit(stmt, lambda node: found.append(node) if isinstance(
        node, tir.Call) and node.op == "tir.call_llvm_pure_intrin" else None)
    return found


def test_the_rewrite_keeps_the_predicated_tail():
    """Main-loop updates become vpdpbusd; the masked tail keeps its lanes (and its product)."""
    body = byte_dot_accumulation(_lowered(dot("uint8", "int8"), "llvm -mcpu=znver4").body,
                                 codegen.Target("llvm -mcpu=znver4"))
    calls = _calls(body)
    assert calls and all(c.args[0].value == "llvm.x86.avx512.vpdpbusd.512" for c in calls)
    masked = []
    tir.functor.post_order_visit(body, lambda node: masked.append(node) if isinstance(
        node, tir.stmt.BufferStore) and node.predicate is not None else None)
    assert masked and not _calls(masked[0])


def test_an_accumulator_read_lane_by_lane_is_left_alone():
    """The rewrite only applies to lane-free accumulators: a caller's buffer updated in
    place with vector indices is not one (which lane gets which product shows)."""
    A, B = tir.decl_buffer((64,), "uint8", "A"), tir.decl_buffer((64,), "int8", "B")
    C = tir.decl_buffer((64,), "int32", "C")
    ib = tir.ir_builder.create()
    a, b, c = (ib.buffer_ptr(x) for x in (A, B, C))
    with ib.for_range(0, 64, name="i", kind="vectorize") as i:
        c[i] = c[i] + tir.Cast("int32", a[i]) * tir.Cast("int32", b[i])
    func = tir.PrimFunc([A, B, C], ib.get())
    lowered = _lowered(func, "llvm -mcpu=znver4")
    body = byte_dot_accumulation(lowered.body, codegen.Target("llvm -mcpu=znver4"))
    assert body is lowered.body
    assert "vpdpbusd" not in build(func, target="llvm -mcpu=znver4").get_source("asm")


def test_targets_without_vnni_are_left_alone():
    lowered = _lowered(dot("uint8", "int8"), "llvm -mcpu=znver3")
    assert byte_dot_accumulation(lowered.body, codegen.Target("llvm -mcpu=znver3")) is (
        lowered.body)
