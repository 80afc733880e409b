"""Round trip: ``from_source(print(f))`` is structurally equal to ``f``, and prints the same.

The functions come from the fuzzer's generator (before and after
``VectorizeLoop``, with and without predication), schedules of ``te`` functions
(before and after lowering), the tutorials' kernels and scalable (SVE)
vectorized loops. A few are also built and run: the parsed function computes
what the original computes.
"""

import importlib.util
import inspect
import pathlib

import numpy as np
import pytest

import codegen
import tir
import transform
from codegen import Target
from tir import te
from tir.functor import ir_transform
from tir.script import from_source
from tirlite.fuzz.program import generate

ROOT = pathlib.Path(__file__).resolve().parents[2]
PREDICATION = {"tir.enable_buffer_level_predication": True}


def flat_seqs(func: tir.PrimFunc) -> tir.PrimFunc:
    """``func`` with nested ``SeqStmt``s flattened: the text cannot show the nesting."""
    def post(s):
        if any(isinstance(x, tir.SeqStmt) for x in s.seq):
            return tir.SeqStmt.flatten(s.seq)
        return None

    return func.with_body(ir_transform(func.body, None, post, ["tir.SeqStmt"]))


def assert_round_trip(ir):
    text = ir.script()
    parsed = from_source(text)
    want = flat_seqs(ir) if isinstance(ir, tir.PrimFunc) else ir
    tir.assert_structural_equal(parsed, want)
    assert parsed.script() == text
    return parsed


def vectorized(func, config=None):
    with transform.PassContext(config=config or {}):
        return transform.VectorizeLoop()(tir.IRModule.from_expr(func))["main"]


@pytest.mark.parametrize("seed", range(40))
def test_fuzz_programs(seed):
    func = generate(seed).func
    assert_round_trip(func)
    for config in (None, PREDICATION):
        assert_round_trip(vectorized(func, config))


@pytest.mark.parametrize("seed", [0, 3, 7, 12])
def test_parsed_fuzz_programs_compute_the_same(seed):
    case = generate(seed)
    parsed = from_source(vectorized(case.func).script())
    args = case.make_inputs(0)
    want = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    got = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    codegen.build(case.func)["main"](*want)
    codegen.build(parsed)["main"](*got)
    for w, g in zip(want, got):
        if isinstance(w, np.ndarray):
            np.testing.assert_array_equal(g, w)


def matmul_bias():
    A = te.placeholder((32, 16), "float32", name="A")
    B = te.placeholder((16, 24), "float32", name="B")
    k = te.reduce_axis((0, 16), name="k")
    C = te.compute((32, 24), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    D = te.compute((32, 24), lambda i, j: tir.max(C[i, j], tir.const(0.0)), name="D")
    return te.create_prim_func([A, B, D])


def schedules():
    """Scheduled variants of one function: each primitive a few tests use."""
    base = matmul_bias()
    out = {"te": base}
    sch = tir.Schedule(base)
    c = sch.get_block("C")
    i, j, k = sch.get_loops(c)
    io, ii = sch.split(i, [None, 8])
    jo, ji = sch.split(j, [None, 8])
    sch.reorder(io, jo, k, ii, ji)
    sch.vectorize(ji)
    sch.parallel(io)
    sch.annotate(ii, "pragma_unroll_explicit", 1)
    out["tiled"] = sch.mod["main"]
    sch.decompose_reduction(c, k)
    out["decomposed"] = sch.mod["main"]
    sch = tir.Schedule(base)
    sch.cache_write(sch.get_block("C"), 0, "local")
    sch.cache_read(sch.get_block("C"), 0, "global")
    out["cached"] = sch.mod["main"]
    sch = tir.Schedule(base)
    sch.reverse_compute_at(sch.get_block("D"), sch.get_loops(sch.get_block("C"))[0])
    out["compute_at"] = sch.mod["main"]
    sch = tir.Schedule(base)
    sch.rfactor(sch.get_loops(sch.get_block("C"))[2], 0)
    out["rfactor"] = sch.mod["main"]
    return out


LOWERING = [transform.LowerInitBlock(), transform.PlanAndUpdateBufferAllocationLocation(),
            transform.CompactBufferAllocation(), transform.LowerOpaqueBlock()]


@pytest.mark.parametrize("name", ["te", "tiled", "decomposed", "cached", "compute_at",
                                  "rfactor"])
def test_schedules_and_their_lowering(name):
    func = schedules()[name]
    parsed = assert_round_trip(func)
    mod = tir.IRModule.from_expr(func)
    for p in LOWERING:
        mod = p(mod)
        assert_round_trip(mod["main"])
    args = [np.random.default_rng(0).uniform(-1, 1, tuple(int(s) for s in
            func.buffer_map[p].shape)).astype("float32") for p in func.params]
    want, got = [a.copy() for a in args], [a.copy() for a in args]
    codegen.build(func)["main"](*want)
    codegen.build(parsed)["main"](*got)
    np.testing.assert_allclose(got[-1], want[-1], rtol=1e-5, atol=1e-5)


def tutorial_kernels():
    """The ``build_*`` kernels of the tutorials that need no arguments, or small ones."""
    sizes = {"chunks": 4, "n": 64, "m": 8, "k": 8, "bits": 256, "lanes": 8}
    for path in sorted((ROOT / "tutorials").glob("0*.py")):
        spec = importlib.util.spec_from_file_location(f"_tutorial_{path.stem}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        for name, fn in vars(module).items():
            if not name.startswith("build_") or not inspect.isfunction(fn):
                continue
            params = inspect.signature(fn).parameters.values()
            required = [p.name for p in params if p.default is inspect.Parameter.empty]
            if all(p in sizes for p in required):
                yield f"{path.stem}.{name}", fn, {p: sizes[p] for p in required}


TUTORIALS = list(tutorial_kernels())


def test_tutorials_have_kernels():
    assert len(TUTORIALS) >= 10


@pytest.mark.parametrize("name, build, kwargs", TUTORIALS, ids=[t[0] for t in TUTORIALS])
def test_tutorial_kernels(name, build, kwargs):
    func = build(**kwargs)
    if isinstance(func, tir.IRModule):
        func = func["main"]
    if not isinstance(func, tir.PrimFunc):
        pytest.skip(f"{name} builds a {type(func).__name__}")
    assert_round_trip(func)
    with transform.PassContext(config=PREDICATION):
        mod = transform.StripMineVectorLoops()(tir.IRModule.from_expr(func))
        assert_round_trip(mod["main"])
        assert_round_trip(transform.VectorizeLoop()(mod)["main"])


SVE = "llvm -mtriple=aarch64-linux-gnu -mattr=+v8.2a,+sve"


@pytest.mark.parametrize("seed", range(6))
def test_scalable_vectorized_loops(seed):
    n = tir.Var("n")
    A = tir.decl_buffer((n,), "float32", "A")
    B = tir.decl_buffer((n,), "float32", "B")
    ib = tir.ir_builder.create()
    a, b = ib.buffer_ptr(A), ib.buffer_ptr(B)
    lanes = tir.vscale() * (4 if seed % 2 else 8)
    with ib.for_range(0, tir.ceildiv(n, lanes), name="io") as io:
        with ib.for_range(0, lanes, kind="vectorize", name="ii") as ii:
            i = io * lanes + ii
            with ib.if_scope(i < n):
                b[i] = a[i] * tir.const(2.0 + seed, "float32") + b[i]
    func = tir.PrimFunc([A, B, n], ib.get())
    with Target(SVE), transform.PassContext(config=PREDICATION):
        after = transform.VectorizeLoop()(tir.IRModule.from_expr(func))["main"]
    assert "vscale" in after.script()
    assert_round_trip(after)


def test_modules_round_trip():
    mod = tir.IRModule({"a": generate(1).func, "b": generate(2).func})
    assert_round_trip(mod)


def test_deep_expressions_and_long_functions():
    A = tir.decl_buffer((16,), "float32", "A")
    deep = A[0]
    for k in range(3000):
        deep = deep + A[k % 16]
    i = tir.Var("i")
    stores = [tir.BufferStore(A, A[k % 16] * tir.const(2.0), [k % 16]) for k in range(2000)]
    body = tir.SeqStmt([tir.BufferStore(A, deep, [0]),
                        tir.For(i, 0, 16, tir.ForKind.SERIAL, tir.SeqStmt(stores))])
    assert_round_trip(tir.PrimFunc([A], body))


def test_a_let_ending_a_nested_sequence_keeps_its_scope():
    A = tir.decl_buffer((8,), "int32", "A")
    t = tir.Var("t")
    let = tir.LetStmt(t, A[0] + 1, tir.BufferStore(A, t, [1]))
    inner = tir.SeqStmt([tir.SeqStmt([tir.BufferStore(A, 0, [2]), let])])
    body = tir.SeqStmt([inner, tir.BufferStore(A, 5, [3])])
    parsed = assert_round_trip(tir.PrimFunc([A], body))
    assert isinstance(parsed.body.seq[1], tir.LetStmt)  # the store after it stays outside


@pytest.mark.parametrize("seed", range(8))
def test_fully_lowered_fuzz_programs(seed):
    from codegen.build import lower

    assert_round_trip(lower(generate(seed).func)["main"])


def test_views_of_a_handle_param_are_declared_after_the_lets_they_use():
    p = tir.Var("p", "handle", type_annotation="float32")
    n, m = tir.Var("n"), tir.Var("m")
    V = tir.decl_buffer((n,), "float32", "V", data=p)
    W = tir.decl_buffer((m,), "float32", "W", data=p)
    body = tir.SeqStmt([tir.BufferStore(V, 1.0, [0]),
                        tir.LetStmt(m, n + 1, tir.BufferStore(W, 2.0, [1]))])
    func = tir.PrimFunc([p], body)
    text = func.script()
    assert text.index("W = T.Buffer((m,)") > text.index("m: T.int32 = n + 1")
    parsed = from_source(text)
    tir.assert_structural_equal(parsed, func, map_free_vars=True)
    assert parsed.script() == text


def test_a_size_var_first_used_inside_a_shape_expression():
    # A[w + 2] before B[w]: the printed function declares w, and the parsed one's w
    # pairs with it where it first appears (in A's shape), as a bare extent would.
    w = tir.size_var("w")
    A = tir.decl_buffer((w + 2,), "float32", name="A")
    B = tir.decl_buffer((w,), "float32", name="B")
    i = tir.Var("i")
    body = tir.For(i, 0, w, tir.ForKind.SERIAL,
                   tir.BufferStore(B, A[i] + A[i + 2], [i]))
    assert_round_trip(tir.PrimFunc([A, B], body))
