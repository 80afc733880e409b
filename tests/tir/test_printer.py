"""The TVMScript-style printer: exact text for every node kind."""

import textwrap

import pytest

import tir
from tir import ForKind

x = tir.Var("x")
y = tir.Var("y")
z = tir.Var("z")
f = tir.Var("f", "float32")
b = tir.Var("b", "bool")
c = tir.Var("c", "bool")
A = tir.decl_buffer((16,), "float32", "A")


def golden(text: str) -> str:
    return textwrap.dedent(text).strip("\n")


def i64(v):
    return tir.IntImm("int64", v)


@pytest.mark.parametrize(
    "expr, text",
    [
        (tir.IntImm("int32", 4), "4"),
        (tir.IntImm("int32", -4), "-4"),
        (tir.IntImm("int64", 4), "T.int64(4)"),
        (tir.IntImm("uint8", 7), "T.uint8(7)"),
        (tir.IntImm("bool", 1), "T.bool(True)"),
        (tir.FloatImm("float32", 1.0), "T.float32(1)"),
        (tir.FloatImm("float32", 0.5), "T.float32(0.5)"),
        (tir.FloatImm("float32", 0.1), "T.float32(0.1)"),
        (tir.FloatImm("float64", 0.1), "T.float64(0.1)"),
        (tir.FloatImm("float16", 1e-3), "T.float16(0.001)"),
        (tir.FloatImm("float32", float("inf")), 'T.float32("inf")'),
        (tir.StringImm('say "hi"'), '"say \\"hi\\""'),
        (tir.Var("threadIdx.x"), "threadIdx_x"),
        (tir.Var("T"), "T_1"),
        (tir.Var("in"), "in_1"),
    ],
)
def test_leaves(expr, text):
    assert str(expr) == text


@pytest.mark.parametrize(
    "expr, text",
    [
        (tir.Add(x, y), "x + y"),
        (tir.Sub(x, tir.Sub(y, z)), "x - (y - z)"),
        (tir.Sub(tir.Sub(x, y), z), "x - y - z"),
        (tir.Mul(tir.Add(x, y), z), "(x + y) * z"),
        (tir.Add(x, tir.Mul(y, z)), "x + y * z"),
        (tir.Add(x, tir.Add(y, z)), "x + (y + z)"),
        (tir.Mul(x, tir.IntImm("int32", -3)), "x * -3"),
        (tir.FloorDiv(x, 4), "x // 4"),
        (tir.FloorMod(tir.Add(x, 1), 4), "(x + 1) % 4"),
        (tir.Mul(tir.FloorDiv(x, 4), 4), "x // 4 * 4"),
        (tir.FloorDiv(x, tir.Mul(y, 2)), "x // (y * 2)"),
        (tir.Div(x, y), "T.truncdiv(x, y)"),
        (tir.Mod(x, y), "T.truncmod(x, y)"),
        (tir.Div(f, tir.Add(f, 1.0)), "f / (f + T.float32(1))"),
        (tir.Mul(tir.Div(f, f), f), "f / f * f"),
        (tir.Min(x, tir.Max(y, 0)), "T.min(x, T.max(y, 0))"),
        (tir.LT(tir.Add(x, 1), y), "x + 1 < y"),
        (tir.EQ(tir.LT(x, y), b), "(x < y) == b"),
        (tir.And(tir.LT(x, y), tir.Or(b, c)), "x < y and (b or c)"),
        (tir.Or(tir.And(b, c), b), "b and c or b"),
        (tir.Not(tir.And(b, c)), "not (b and c)"),
        (tir.Not(tir.LE(x, y)), "not x <= y"),
        (tir.And(tir.Not(b), c), "not b and c"),
        (tir.GE(x, 0), "x >= 0"),
        (tir.NE(x, 0), "x != 0"),
        (tir.GT(x, 0), "x > 0"),
        (tir.Select(b, x, y), "T.Select(b, x, y)"),
        (tir.Cast("float32", tir.Add(x, 1)), 'T.Cast("float32", x + 1)'),
        (tir.Let(z, tir.Add(x, 1), tir.Mul(z, z)), "T.let(z, x + 1, z * z)"),
        (tir.exp(f), "T.exp(f)"),
        (tir.if_then_else(b, x, y), "T.if_then_else(b, x, y)"),
        (tir.call_extern("int32", "foo", x, 1), 'T.call_extern("int32", "foo", x, 1)'),
        (tir.reinterpret("int32", f), 'T.reinterpret("int32", f)'),
        (tir.Call("int32", "my.op", [x]), 'T.call_intrin("int32", "my.op", x)'),
        (tir.vscale(), "T.vscale()"),
    ],
)
def test_operators_and_calls(expr, text):
    assert str(expr) == text


@pytest.mark.parametrize(
    "expr, text",
    [
        (tir.Ramp(x, 2, 4), "T.Ramp(x, 2, 4)"),
        (tir.Broadcast(tir.FloatImm("float32", 1.0), 4), "T.Broadcast(T.float32(1), 4)"),
        (tir.Broadcast(f, 4 * tir.vscale()), "T.Broadcast(f, 4 * T.vscale())"),
        (tir.Shuffle([tir.Ramp(0, 1, 4), tir.Ramp(4, 1, 4)], [0, 4, 1, 5]),
         "T.Shuffle([T.Ramp(0, 1, 4), T.Ramp(4, 1, 4)], [0, 4, 1, 5])"),
        (A[x * 4], "A[x * 4]"),
        (A[tir.Ramp(x * 4, 1, 4)], "A[x * 4:x * 4 + 4]"),
        (A[tir.Ramp(x, 1, 4 * tir.vscale())], "A[x:x + 4 * T.vscale()]"),
        (A[tir.Ramp(x, 2, 4)], "A[T.Ramp(x, 2, 4)]"),
        (A[tir.Ramp(8, 1, 4)], "A[8:12]"),
        (tir.BufferLoad(A, [tir.Ramp(0, 1, 4)], tir.Broadcast(b, 4)),
         "A.vload([T.Ramp(0, 1, 4)], predicate=T.Broadcast(b, 4))"),
        (tir.decl_buffer((4, 8), "int8", "M")[x, y], "M[x, y]"),
        (tir.decl_buffer((4, 8), "int8", "M")[x, tir.Ramp(y, 1, 8)], "M[x, y:y + 8]"),
    ],
)
def test_vectors_and_loads(expr, text):
    assert str(expr) == text


def test_same_names_get_suffixes_in_order_of_meeting():
    x2 = tir.Var("x")
    assert str(tir.Add(tir.Add(x, x2), x)) == "x + x_1 + x"
    assert str(tir.Add(tir.Add(x2, x), x2)) == "x + x_1 + x"


def test_statements_golden():
    i, j = tir.Var("i"), tir.Var("j")
    store = tir.BufferStore(A, A[i * 4 + j] + tir.FloatImm("float32", 1.0), [i * 4 + j])
    inner = tir.For(j, 0, 4, ForKind.VECTORIZED, store)
    assert str(store) == "A[i * 4 + j] = A[i * 4 + j] + T.float32(1)"
    assert str(tir.For(i, 0, x, ForKind.SERIAL, inner)) == golden("""
        for i in range(x):
            for j in T.vectorized(4):
                A[i * 4 + j] = A[i * 4 + j] + T.float32(1)
    """)


@pytest.mark.parametrize(
    "kind, lo, extent, head",
    [
        (ForKind.SERIAL, 2, 8, "for i in range(2, 10):"),
        (ForKind.VECTORIZED, 2, 8, "for i in T.vectorized(2, 10):"),
        (ForKind.PARALLEL, 0, 8, "for i in T.parallel(8):"),
        (ForKind.UNROLLED, 0, 8, "for i in T.unroll(8):"),
        (ForKind.SERIAL, tir.Var("lo"), tir.Var("n"), "for i in range(lo, lo + n):"),
    ],
)
def test_loop_kinds_and_ranges(kind, lo, extent, head):
    i = tir.Var("i")
    loop = tir.For(i, lo, extent, kind, tir.Evaluate(i))
    assert str(loop) == f"{head}\n    T.evaluate(i)"


def test_loop_annotations_and_int64():
    i = tir.Var("i", "int64")
    loop = tir.For(i, i64(0), i64(4), ForKind.SERIAL, tir.Evaluate(0), {"pragma": 1})
    assert str(loop) == golden("""
        for i in T.serial(T.int64(4), annotations={"pragma": 1}):
            T.evaluate(0)
    """)


def test_sibling_loops_reuse_a_name_nested_ones_do_not():
    i1, i2, i3 = tir.Var("i"), tir.Var("i"), tir.Var("i")
    nested = tir.For(i2, 0, 2, ForKind.SERIAL, tir.For(i3, 0, 2, ForKind.SERIAL,
                                                        tir.Evaluate(i2 + i3)))
    seq = tir.SeqStmt([tir.For(i1, 0, 2, ForKind.SERIAL, tir.Evaluate(i1)), nested])
    assert str(seq) == golden("""
        for i in range(2):
            T.evaluate(i)
        for i in range(2):
            for i_1 in range(2):
                T.evaluate(i + i_1)
    """)


def test_if_while_let_assert_attr_evaluate():
    v = tir.Var("v")
    body = tir.SeqStmt([
        tir.IfThenElse(x < 3, tir.Evaluate(1), tir.Evaluate(2)),
        tir.IfThenElse(b, tir.Evaluate(3)),
        tir.While(x < 10, tir.Evaluate(x)),
        tir.LetStmt(v, x + 1, tir.AssertStmt(v > 0, "v must be positive",
                                             tir.Evaluate(v))),
        tir.AttrStmt(A, "storage_alignment", 64, tir.Evaluate(0)),
        tir.AttrStmt(None, "pragma_unroll", tir.StringImm("yes"), tir.Evaluate(0)),
    ])
    assert str(body) == golden("""
        if x < 3:
            T.evaluate(1)
        else:
            T.evaluate(2)
        if b:
            T.evaluate(3)
        while x < 10:
            T.evaluate(x)
        with T.LetStmt(x + 1) as v:
            assert v > 0, "v must be positive"
            T.evaluate(v)
        with T.attr(A, "storage_alignment", 64):
            T.evaluate(0)
        with T.attr(None, "pragma_unroll", "yes"):
            T.evaluate(0)
    """)


def test_vector_let_type_and_predicated_store():
    v = tir.Var("v", "float32x4")
    mask = tir.Ramp(0, 1, 4) < tir.Broadcast(x, 4)
    store = tir.BufferStore(A, v, [tir.Ramp(0, 1, 4)], mask)
    stmt = tir.LetStmt(v, A[tir.Ramp(0, 1, 4)], store)
    assert str(stmt) == golden("""
        v: T.float32x4 = A[0:4]
        A.vstore([T.Ramp(0, 1, 4)], v, predicate=T.Ramp(0, 1, 4) < T.Broadcast(x, 4))
    """)


def test_active_lane_mask_prints_as_tvm_with_its_uint1_dtype():
    mask = tir.get_active_lane_mask("uint1x4", x * 4, 14)
    assert mask.dtype == "boolx4"
    assert str(mask) == 'T.get_active_lane_mask("uint1x4", x * 4, 14)'
    store = tir.BufferStore(A, tir.Broadcast(tir.const(1.0), 4), [tir.Ramp(x * 4, 1, 4)], mask)
    assert str(store) == golden("""
        A.vstore([T.Ramp(x * 4, 1, 4)], T.Broadcast(T.float32(1), 4), \
predicate=T.get_active_lane_mask("uint1x4", x * 4, 14))
    """)


def test_active_lane_mask_checks_its_arguments():
    with pytest.raises(TypeError, match="must be a bool vector such as 'uint1x4'"):
        tir.get_active_lane_mask("int32x4", x, 14)
    with pytest.raises(TypeError, match="base and limit must be scalar integers"):
        tir.get_active_lane_mask("uint1x4", tir.const(0.5), 14)


def test_allocate_and_its_buffer_share_a_name():
    data = tir.Var("B", "handle", type_annotation="float32")
    B = tir.decl_buffer((16,), "float32", "B", data=data)
    i = tir.Var("i")
    loop = tir.For(i, 0, 16, ForKind.SERIAL, tir.BufferStore(B, A[i], [i]))
    alloc = tir.Allocate(data, "float32", [16], tir.const(True), loop)
    assert str(alloc) == golden("""
        B = T.allocate([16], "float32", "global")
        for i in range(16):
            B[i] = A[i]
    """)
    guarded = tir.Allocate(data, "float32", [x], b, tir.Evaluate(0))
    assert str(guarded) == golden("""
        B = T.allocate([x], "float32", "global", condition=b)
        T.evaluate(0)
    """)


def test_buffer_on_its_own():
    assert str(A) == 'A = T.Buffer((16,), "float32")'
    strided = tir.decl_buffer((x, 4), "int8", "S", strides=(4, 1), elem_offset=y,
                              scope="shared")
    assert str(strided) == (
        'S = T.Buffer((x, 4), "int8", strides=(4, 1), elem_offset=y, scope="shared")'
    )


def seed_function():
    """The seed walkthrough's program: ``A[i*4 + j] += 1`` with ``j`` vectorized."""
    n = tir.Var("n")
    ib = tir.ir_builder.create()
    a = ib.pointer("float32", name="A")
    with ib.for_range(0, n, name="i") as i:
        with ib.for_range(0, 4, kind="vectorize", name="j") as j:
            a[i * 4 + j] += tir.const(1, "float32")
    return tir.PrimFunc([a, n], ib.get())


def test_seed_function_golden():
    assert seed_function().script() == golden("""
        # from tvm.script import tir as T

        @T.prim_func
        def main(A: T.handle, n: T.int32):
            A_len = T.int32(is_size_var=True)
            A_1 = T.match_buffer(A, (A_len,), "float32")
            for i in range(n):
                for j in T.vectorized(4):
                    A_1[i * 4 + j] = A_1[i * 4 + j] + T.float32(1)
    """)


def test_seed_after_vectorize_golden():
    """The walkthrough's "after" text, built by hand."""
    func = seed_function()
    outer = func.body
    buf = outer.body.body.buffer
    i = outer.loop_var
    index = tir.Ramp(i * 4, 1, 4)
    one = tir.Broadcast(tir.FloatImm("float32", 1.0), 4)
    store = tir.BufferStore(buf, buf[index] + one, [index])
    after = func.with_body(tir.For(i, 0, outer.extent, ForKind.SERIAL, store))
    assert after.script().splitlines()[-2:] == [
        "    for i in range(n):",
        "        A_1[i * 4:i * 4 + 4] = A_1[i * 4:i * 4 + 4] + T.Broadcast(T.float32(1), 4)",
    ]


def test_function_attrs_return_type_and_module():
    n = tir.Var("n")
    B = tir.decl_buffer((n, 4), "float32", "B")
    func = tir.PrimFunc([B, n], tir.Evaluate(0), ret_type="int32").with_attr(
        "global_symbol", "copy"
    )
    mod = tir.IRModule({"copy": func, "another": tir.PrimFunc([], tir.Evaluate(1))})
    assert mod.script() == golden("""
        # from tvm.script import ir as I
        # from tvm.script import tir as T

        @I.ir_module
        class Module:
            @T.prim_func
            def another():
                T.evaluate(1)

            @T.prim_func
            def copy(B: T.handle, n: T.int32) -> T.int32:
                T.func_attr({"global_symbol": "copy"})
                B_1 = T.match_buffer(B, (n, 4), "float32")
                T.evaluate(0)
    """)


def test_buffer_data_var_prints_as_attribute_in_a_function():
    data_user = tir.AttrStmt(A.data, "storage_alignment", 64, tir.Evaluate(0))
    func = tir.PrimFunc([A], data_user)
    assert func.script().splitlines()[-2:] == [
        '    with T.attr(A_1.data, "storage_alignment", 64):',
        "        T.evaluate(0)",
    ]


def test_typed_handle_param_and_repr_matches_str():
    p = tir.Var("p", "handle", type_annotation="float32")
    func = tir.PrimFunc([p], tir.Evaluate(0))
    assert "def main(p: T.handle(\"float32\")):" in str(func)
    assert repr(x + 1) == str(x + 1) == (x + 1).script()


def test_unknown_node_falls_back_to_field_listing():
    import attrs

    from tir.node import expr_field, node

    @node
    class Reduce(tir.PrimExpr):
        """A stand-in for a node the printer does not know."""

        source: tir.PrimExpr = expr_field()
        combiner: str = attrs.field(default="add")
        dtype: str = attrs.field(default="int32")

    assert str(Reduce(x + 1)) == 'T.Reduce(source=x + 1, combiner="add", dtype="int32")'


def test_unknown_statement_prints_its_body_as_a_block():
    import attrs

    from tir.node import buffer_field, node, stmt_field

    @node
    class DeclBuffer(tir.Stmt):
        """A stand-in for a statement the printer does not know."""

        buffer: tir.Buffer = buffer_field()
        body: tir.Stmt = stmt_field()
        note: str = attrs.field(default="")

    @node
    class Barrier(tir.Stmt):
        """A leaf statement the printer does not know."""

        scope: str = attrs.field(default="shared")

    stmt = tir.SeqStmt([DeclBuffer(A, tir.Evaluate(0)), Barrier()])
    assert str(stmt) == golden("""
        with T.DeclBuffer(buffer=A, note=""):
            T.evaluate(0)
        T.Barrier(scope="shared")
    """)


def test_thread_binding_loop_and_size_var():
    tx = tir.Var("threadIdx.x")
    n = tir.SizeVar("n")
    loop = tir.For(tx, 0, n, ForKind.THREAD_BINDING, tir.Evaluate(tx),
                   thread_binding="threadIdx.x")
    assert str(loop) == golden("""
        for threadIdx_x in T.thread_binding(n, thread="threadIdx.x"):
            T.evaluate(threadIdx_x)
    """)


def test_zero_and_negative_zero_print_apart_whatever_was_printed_first():
    """-0.0 == 0.0 with one hash: a value-keyed cache once printed +0 as -0 after a -0."""
    neg, pos = tir.const(-0.0, "float32"), tir.const(0.0, "float32")
    texts = [str(neg), str(pos), str(neg)]
    assert texts == ["T.float32(-0)", "T.float32(0)", "T.float32(-0)"]
