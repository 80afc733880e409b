"""TVMScript constructs, each parsed and compared with the IR built by hand."""

import numpy as np
import pytest

import codegen
import tir
from tir import ForKind
from tir.script import ir as I
from tir.script import tir as T


def buf(shape, dtype="float32", name="A"):
    return tir.decl_buffer(shape, dtype, name)


def func_of(body_of, *buffers, scalars=()):
    """A PrimFunc over ``buffers`` and ``scalars`` whose body ``body_of`` builds from them."""
    return tir.PrimFunc(list(buffers) + list(scalars), body_of(*buffers, *scalars))


def test_buffer_params_loops_and_stores():
    @T.prim_func
    def f(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
        for i in range(16):
            B[i] = A[i] + T.float32(1)

    A, B = buf((16,)), buf((16,), name="B")
    i = tir.Var("i")
    want = tir.PrimFunc([A, B], tir.For(i, 0, 16, ForKind.SERIAL,
                                       tir.BufferStore(B, A[i] + tir.const(1.0), [i])))
    tir.assert_structural_equal(f, want)


def test_handle_params_match_buffer_and_shape_vars():
    @T.prim_func
    def f(a: T.handle, n: T.int32):
        m = T.int32()
        A = T.match_buffer(a, (n, m), "int8")
        for i, j in T.grid(n, m):
            A[i, j] = T.int8(0)

    assert [p.dtype for p in f.params] == ["handle", "int32"]
    A = f.buffer_map[f.params[0]]
    assert A.shape[0] is f.params[1] and A.dtype == "int8" and A.name == "A"
    loop = f.body
    assert loop.extent is f.params[1] and loop.body.extent is A.shape[1]


def test_loop_kinds_ranges_and_annotations():
    @T.prim_func
    def f(A: T.Buffer((64,), "float32")):
        for i in T.parallel(2, 10):
            for j in T.vectorized(4):
                A[i * 4 + j] = T.float32(0)
        for k in T.unroll(4, annotations={"pragma_unroll": 1}):
            A[k] = T.float32(1)
        for t in T.thread_binding(4, thread="threadIdx.x"):
            A[t] = T.float32(2)

    outer, unrolled, bound = f.body.seq
    assert (outer.kind, outer.min.value, outer.extent.value) == (ForKind.PARALLEL, 2, 8)
    assert outer.body.kind == ForKind.VECTORIZED
    assert unrolled.kind == ForKind.UNROLLED and dict(unrolled.annotations) == {
        "pragma_unroll": 1}
    assert bound.kind == ForKind.THREAD_BINDING and bound.thread_binding == "threadIdx.x"


def test_int64_loops_take_their_extent_dtype():
    @T.prim_func
    def f(A: T.Buffer((T.int64(8),), "float32")):
        for i in range(T.int64(8)):
            A[i] = T.float32(0)

    assert f.body.loop_var.dtype == "int64"


def test_let_statements_and_annotated_assignments():
    @T.prim_func
    def f(A: T.Buffer((16,), "int32"), n: T.int32):
        x = n + 1
        y: T.int64 = T.int64(3)
        A[0] = x + T.Cast("int32", y)

    let_x = f.body
    assert isinstance(let_x, tir.LetStmt) and let_x.var.name == "x"
    assert let_x.body.var.dtype == "int64"


def test_a_stored_value_takes_the_buffer_dtype_as_in_tvm():
    @T.prim_func
    def f(A: T.Buffer((4,), "float32"), n: T.int32):
        A[0] = n
        A[1] = 2

    first, second = f.body.seq
    assert isinstance(first.value, tir.Cast) and first.value.dtype == "float32"
    assert second.value.dtype == "float32"


def test_if_else_while_assert_and_evaluate():
    @T.prim_func
    def f(A: T.Buffer((16,), "int32"), n: T.int32):
        assert n > 0, "n must be positive"
        if n < 8:
            A[0] = 1
        else:
            A[0] = 2
        while A[0] < 10:
            A[0] = A[0] + 1
        T.evaluate(T.call_extern("int32", "printf", "done"))

    assert isinstance(f.body, tir.AssertStmt) and f.body.message.value == "n must be positive"
    branch, loop, call = f.body.body.seq
    assert isinstance(branch, tir.IfThenElse) and branch.else_case is not None
    assert isinstance(loop, tir.While)
    assert call.value.op == "tir.call_extern" and call.value.args[0].value == "printf"


def test_python_conditions_pick_a_branch_at_parse_time():
    flag = False

    @T.prim_func
    def f(A: T.Buffer((4,), "int32")):
        if flag:
            A[0] = 1
        else:
            A[0] = 2

    assert f.body.value.value == 2


def test_meta_var_closure_and_caller_locals():
    n = 8
    scale = T.meta_var(3)

    @T.prim_func
    def f(A: T.Buffer((n,), "int32")):
        for i in range(n):
            A[i] = A[i] * scale

    assert f.buffer_map[f.params[0]].shape[0].value == 8
    assert f.body.body.value.b.value == 3


def test_expressions():
    @T.prim_func
    def f(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "int32"), x: T.int32):
        A[0] = T.Select(x < 3, T.exp(A[1]), T.sqrt(A[2]))
        A[1] = T.if_then_else(T.likely(x > 0), A[3], T.float32("inf"))
        B[0] = T.truncdiv(x, 3) + T.truncmod(x, 3) + x // 3 + x % 3
        B[1] = T.min(x, 4) + T.max(x, T.int32(-4)) + T.reinterpret("int32", A[4])
        B[2] = T.let(v, x + 1, v * v)  # noqa: F821  (v is bound by T.let)
        B[3] = T.Cast("int32", A[5]) + T.int32(T.float32(2.5))
        A[2] = T.fma(A[3], A[4], A[5]) + T.call_pure_extern("float32", "cosf", A[6])

    stores = f.body.seq
    assert isinstance(stores[0].value, tir.Select)
    assert stores[1].value.op == "tir.if_then_else"
    assert stores[1].value.args[0].op == "tir.likely"
    assert np.isinf(stores[1].value.args[2].value)
    assert type(stores[2].value.a.a.a).__name__ == "Div"
    assert isinstance(stores[4].value, tir.Let)
    assert stores[4].value.body.a is stores[4].value.var


def test_vectors_ramps_broadcasts_shuffles_and_predicates():
    @T.prim_func
    def f(A: T.Buffer((16,), "float32"), n: T.int32):
        A[0:4] = A[4:8] + T.Broadcast(T.float32(1), 4)
        A[T.Ramp(8, 2, 4)] = T.Shuffle([A[0:4], A[4:8]], [0, 4, 1, 5])
        A.vstore([T.Ramp(0, 1, 4)], A.vload([T.Ramp(4, 1, 4)], predicate=T.Ramp(0, 1, 4)
                 < T.Broadcast(n, 4)), predicate=T.get_active_lane_mask("uint1x4", 0, n))

    first, second, third = f.body.seq
    assert isinstance(first.indices[0], tir.Ramp) and first.indices[0].lanes == 4
    assert second.value.dtype == "float32x4" and isinstance(second.value, tir.Shuffle)
    assert third.predicate.dtype == "boolx4" and third.value.predicate.dtype == "boolx4"


def test_scalable_vectors():
    @T.prim_func
    def f(A: T.Buffer((64,), "float32"), i: T.int32):
        A[i:i + 4 * T.vscale()] = T.Broadcast(T.float32(0), 4 * T.vscale())

    store = f.body
    assert store.value.dtype == "float32xvscalex4"
    assert store.indices[0].dtype == "int32xvscalex4"


def test_allocate_decl_buffer_and_attr():
    @T.prim_func
    def f(A: T.Buffer((16,), "float32")):
        tmp = T.allocate([16], "float32", "global")
        for i in range(16):
            tmp[i] = A[i]
        flat = T.decl_buffer((4, 4), "float32", data=tmp)
        with T.attr(tmp, "storage_alignment", 64):
            A[0] = flat[1, 1]
        scratch = T.decl_buffer((8,), "int32")
        scratch[0] = 1

    alloc = f.body
    assert isinstance(alloc, tir.Allocate) and alloc.dtype == "float32"
    loop, attr_stmt, inner_alloc = alloc.body.seq
    assert loop.body.buffer.data is alloc.buffer_var
    assert attr_stmt.body.value.buffer.shape[0].value == 4
    assert attr_stmt.body.value.buffer.data is alloc.buffer_var
    assert isinstance(inner_alloc, tir.Allocate) and inner_alloc.dtype == "int32"


def test_blocks_axes_init_where_and_root_block():
    @T.prim_func
    def f(A: T.Buffer((8, 8), "float32"), C: T.Buffer((8,), "float32")):
        B = T.alloc_buffer((8,), "float32")
        for i, k in T.grid(8, 8):
            with T.block("sum"):
                vi, vk = T.axis.remap("SR", [i, k])
                T.reads(A[vi, vk])
                T.writes(B[vi])
                T.block_attr({"meta": "x"})
                with T.init():
                    B[vi] = T.float32(0)
                B[vi] = B[vi] + A[vi, vk]
        for i in range(8):
            with T.sblock("copy"):
                v = T.axis.spatial((0, 8), i)
                T.where(i < 7)
                C[v] = B[v]

    root = f.body.block
    assert root.name_hint == "root" and len(root.alloc_buffers) == 1
    sum_realize = root.body.seq[0].body.body
    blk = sum_realize.block
    assert [iv.is_reduce for iv in blk.iter_vars] == [False, True]
    assert blk.init is not None and dict(blk.annotations) == {"meta": "x"}
    copy_realize = root.body.seq[1].body
    assert isinstance(copy_realize.predicate, tir.LT)


def test_a_written_root_block_is_kept():
    @T.prim_func
    def f(A: T.Buffer((8,), "float32")):
        with T.block("root"):
            for i in range(8):
                with T.block("b"):
                    v = T.axis.spatial(8, i)
                    A[v] = T.float32(0)

    assert f.body.block.name_hint == "root"
    assert isinstance(f.body.block.body, tir.For)


def test_func_attr_return_type_and_private():
    @T.prim_func(private=True)
    def f(x: T.int32) -> T.int32:
        T.func_attr({"tir.noalias": True})
        T.evaluate(x)

    assert dict(f.attrs) == {"tir.noalias": True} and f.ret_type == "int32"


def test_typed_handles_and_old_buffer_subscripts():
    @T.prim_func
    def f(p: T.handle("float32"), A: T.Buffer[(4,), "int32"]):  # noqa: F821
        T.evaluate(p)

    assert f.params[0].type_annotation == "float32"
    assert f.buffer_map[f.params[1]].dtype == "int32"


def test_assume_and_scoped_let_assert():
    @T.prim_func
    def f(A: T.Buffer((4,), "int32"), n: T.int32):
        T.assume(n >= 0)
        with T.LetStmt(n + 1) as m:
            A[0] = m
        with T.Assert(n < 100, "small"):
            A[1] = n
        A[2] = 0

    assume, let, check, last = f.body.seq
    assert assume.value.op == "tir.assume"
    assert isinstance(let, tir.LetStmt) and isinstance(check, tir.AssertStmt)


def test_ir_module_class():
    @I.ir_module
    class Module:
        @T.prim_func
        def add(A: T.Buffer((4,), "float32")):
            for i in range(4):
                A[i] = A[i] + T.float32(1)

        @T.prim_func
        def zero(A: T.Buffer((4,), "float32")):
            for i in range(4):
                A[i] = T.float32(0)

    assert sorted(Module.functions) == ["add", "zero"]
    text = Module.script()
    tir.assert_structural_equal(tir.script.from_source(text), Module)


def test_size_var_params_and_declarations():
    @T.prim_func
    def f(a: T.handle, m: T.int32(is_size_var=True)):
        n = T.int32(is_size_var=True)
        A = T.match_buffer(a, (n, m), "float32")
        A[0, 0] = T.float32(0)

    assert isinstance(f.params[1], tir.SizeVar)
    assert isinstance(f.buffer_map[f.params[0]].shape[0], tir.SizeVar)
    tir.assert_structural_equal(tir.script.from_source(f.script()), f)


def test_ir_module_with_tvm_arguments():
    @I.ir_module(check_well_formed=False)
    class Module:
        @T.prim_func(private=True)
        def main(A: T.Buffer((4,), "float32")):
            A[0] = T.float32(0)

    assert list(Module.functions) == ["main"]


def test_parsed_function_builds_and_runs():
    @T.prim_func
    def saxpy(A: T.Buffer((37,), "float32"), B: T.Buffer((37,), "float32"), a: T.float32):
        for io in range(10):
            for ii in T.vectorized(4):
                if io * 4 + ii < 37:
                    B[io * 4 + ii] = a * A[io * 4 + ii] + B[io * 4 + ii]

    x = np.arange(37, dtype="float32")
    y = np.ones(37, dtype="float32")
    codegen.build(saxpy)["main"](x, y, 2.0)
    np.testing.assert_allclose(y, 2 * np.arange(37) + 1)


def test_from_source_accepts_both_import_headers():
    for header in ("from tvm.script import tir as T", "from tir.script import tir as T"):
        f = tir.script.from_source(f"""
{header}

@T.prim_func
def main(A: T.Buffer((4,), "float32")):
    A[0] = T.float32(1)
""")
        assert isinstance(f.body, tir.BufferStore)


def test_from_source_extra_vars():
    f = tir.script.from_source("""
@T.prim_func
def main(A: T.Buffer((N,), "float32")):
    A[0] = T.float32(1)
""", extra_vars={"N": 12})
    assert f.buffer_map[f.params[0]].shape[0].value == 12


def test_python_values_that_are_not_ir_raise_at_their_use():
    with pytest.raises(tir.script.ParseError, match="only buffers can be stored to"):
        tir.script.from_source("""
@T.prim_func
def main(n: T.int32):
    n[0] = 1
""")
