"""Visitors and mutators: dispatch by class, the same-object rule, and the helper walkers."""

import pytest
from tir.stmt_functor import (
    ExprMutator,
    ExprVisitor,
    StmtExprMutator,
    StmtExprVisitor,
    StmtMutator,
    StmtVisitor,
    contains,
    post_order_visit,
)

import tir
from tir import stmt_functor as sf

x = tir.var("x")
y = tir.var("y")


class Rename(StmtExprMutator):
    """Replace uses of one var by another."""

    def __init__(self, old, new):
        self.old, self.new = old, new

    def visit_var(self, v):
        return self.new if v is self.old else v


def _program():
    A = tir.decl_buffer((16,), "float32", "A")
    i = tir.var("i")
    store = tir.BufferStore(A, A[i] + 1.0, [i])
    other = tir.Evaluate(y + 1)
    loop = tir.For(i, 0, x, tir.ForKind.SERIAL, tir.SeqStmt([store, other]))
    return A, i, loop


def test_renaming_mutator_rebuilds_only_the_changed_path():
    _, i, loop = _program()
    z = tir.var("z")
    out = Rename(x, z)(loop)
    assert out is not loop and out.extent is z
    assert out.body is loop.body  # nothing below the extent changed
    assert out.loop_var is i and out.min is loop.min


def test_renaming_inside_a_sequence_keeps_siblings():
    _, _, loop = _program()
    z = tir.var("z")
    out = Rename(y, z)(loop)
    store, other = out.body.seq
    assert store is loop.body.seq[0]  # untouched sibling is the same object
    assert other is not loop.body.seq[1] and other.value.a is z
    assert out.extent is loop.extent


def test_unchanged_mutation_returns_the_same_object_at_every_level():
    A, _, loop = _program()
    for m in (StmtExprMutator(), StmtMutator(), Rename(tir.var("unused"), x)):
        assert m(loop) is loop
    e = (x + 1) * tir.Select(x < y, x, y)
    assert ExprMutator()(e) is e
    func = tir.PrimFunc([A, x, y], loop)
    assert StmtExprMutator()(func) is func


def test_mutator_on_primfunc_replaces_body():
    A, _, loop = _program()
    func = tir.PrimFunc([A, x, y], loop)
    z = tir.var("z")
    out = Rename(y, z)(func)
    assert out is not func and out.params == func.params
    assert out.body.body.seq[1].value.a is z


def test_binding_vars_are_not_visited_as_uses():
    _, i, loop = _program()
    seen = []

    class Collect(StmtExprVisitor):
        def visit_var(self, v):
            seen.append(v)

    Collect()(loop)
    # i is used in the indices, x in the extent, y in the other statement; the For's
    # loop_var field itself is a binding, not visited.
    assert sum(v is i for v in seen) == 2
    assert any(v is x for v in seen) and any(v is y for v in seen)


def test_dispatch_by_class_name():
    calls = []

    class V(StmtExprVisitor):
        def visit_add(self, e):
            calls.append("add")
            self.generic_visit(e)

        def visit_buffer_load(self, e):
            calls.append("load")

        def visit_for(self, s):
            calls.append("for")
            self.generic_visit(s)

        def visit_int_imm(self, e):
            calls.append("int")

    _, _, loop = _program()
    V()(loop)
    assert calls[0] == "for"
    assert calls.count("add") == 2 and calls.count("load") == 1
    assert calls.count("int") == 2  # min 0 and the 1 in y + 1
    assert sf.method_name(tir.BufferLoad) == "visit_buffer_load"
    assert sf.method_name(tir.IfThenElse) == "visit_if_then_else"
    assert sf.method_name(tir.EQ) == "visit_eq"


def test_size_var_falls_back_to_visit_var():
    seen = []

    class V(ExprVisitor):
        def visit_var(self, v):
            seen.append(("var", v.name))

    class W(V):
        def visit_size_var(self, v):
            seen.append(("size", v.name))

    e = tir.size_var("n") + x
    V()(e)
    assert seen == [("var", "n"), ("var", "x")]
    seen.clear()
    W()(e)
    assert seen == [("size", "n"), ("var", "x")]


def test_base_class_method_catches_subclasses():
    seen = []

    class V(ExprVisitor):
        def visit_cmp_op_node(self, e):
            seen.append(type(e).__name__)

    V()(tir.all(x < y, x == y, x >= 3))
    assert seen == ["LT", "EQ", "GE"]


def test_stmt_visitor_does_not_enter_expressions():
    seen = []

    class V(StmtVisitor):
        def visit_var(self, v):
            seen.append(v)

        def visit_buffer_store(self, s):
            seen.append(s)
            self.generic_visit(s)

    _, _, loop = _program()
    V()(loop)
    assert len(seen) == 1 and isinstance(seen[0], tir.BufferStore)


def test_stmt_mutator_keeps_expressions():
    class DropEvaluate(StmtMutator):
        def visit_evaluate(self, s):
            return tir.Evaluate(0)

        def visit_var(self, v):
            raise AssertionError("expressions must not be visited")

    _, _, loop = _program()
    out = DropEvaluate()(loop)
    assert out.body.seq[1].value.value == 0 and out.extent is x


def test_expr_functors_reject_statements():
    with pytest.raises(TypeError, match="ExprVisitor visits expressions only"):
        ExprVisitor()(tir.Evaluate(0))
    with pytest.raises(TypeError, match="ExprMutator mutates expressions only"):
        ExprMutator()(tir.Evaluate(0))
    with pytest.raises(TypeError, match="StmtExprVisitor: cannot visit int"):
        StmtExprVisitor()(3)


def test_post_order_visit_order():
    e = x + y * 2
    order = []
    post_order_visit(tir.Evaluate(e), order.append)
    assert [type(n).__name__ for n in order] == ["Var", "Var", "IntImm", "Mul", "Add", "Evaluate"]
    assert order[0] is x and order[1] is y and order[-2] is e


def test_post_order_visit_visits_shared_nodes_once():
    shared = x + 1
    order = []
    post_order_visit(tir.Evaluate(shared * shared), order.append)
    assert sum(n is shared for n in order) == 1


def test_contains_finds_what_post_order_visit_visits():
    i = tir.var("i")
    buf = tir.decl_buffer((8,), "float32", name="A")
    load = tir.BufferLoad(buf, [i * 2 + 1])
    loop = tir.For(i, 0, 4, tir.ForKind.SERIAL, tir.BufferStore(buf, load, [i]))
    seen = []
    post_order_visit(loop, seen.append)
    for node in seen:
        assert contains(loop, lambda n, node=node: n is node)
    assert not contains(loop, lambda n: isinstance(n, tir.IntImm) and n.value == 7)
    assert contains(load, lambda n: isinstance(n, tir.IntImm) and n.value == 2)
    assert not contains(load, lambda n: n is buf.data)  # buffers are leaves, as there


def test_substitute_with_dict_function_and_numbers():
    e = x + y
    out = sf.substitute(e, {x: 5})
    assert out.a.value == 5 and out.a.dtype == "int32" and out.b is y
    out = sf.substitute(e, lambda v: tir.const(2) if v is y else None)
    assert out.a is x and out.b.value == 2
    assert sf.substitute(e, {}) is e


def test_substitute_remaps_buffer_data():
    A = tir.decl_buffer((4,), "float32", "A")
    new_data = tir.Var("B", "handle")
    store = tir.BufferStore(A, A[0] + 1.0, [0])
    out = sf.substitute(store, {A.data: new_data})
    assert out.buffer is not A and out.buffer.data is new_data
    assert out.value.a.buffer is out.buffer  # one buffer remapped once
    assert out.buffer.shape == A.shape and out.buffer.name == "A"


def test_ir_transform_postorder_with_only_enable():
    loop = tir.For(x, 0, 4, tir.ForKind.SERIAL, tir.Evaluate(x + 1))
    seen = []

    def post(n):
        seen.append(type(n).__name__)
        return tir.Evaluate(0) if isinstance(n, tir.Evaluate) else None

    out = sf.ir_transform(loop, None, post, ["tir.Evaluate"])
    assert seen == ["Evaluate"] and out.body.value.value == 0 and out.extent is loop.extent
    seen.clear()
    sf.ir_transform(loop, None, post, [tir.For, tir.Add])
    assert seen == ["Add", "For"]


def test_ir_transform_preorder_replacement_skips_children():
    loop = tir.For(x, 0, 4, tir.ForKind.SERIAL, tir.Evaluate(x + 1))
    visited = []

    def pre(n):
        visited.append(type(n).__name__)
        return tir.Evaluate(7) if isinstance(n, tir.For) else None

    out = sf.ir_transform(loop, pre, None)
    assert visited == ["For"] and out.value.value == 7


def test_ir_transform_unchanged_returns_same_object():
    loop = tir.For(x, 0, 4, tir.ForKind.SERIAL, tir.Evaluate(x + 1))
    assert sf.ir_transform(loop, lambda n: None, lambda n: None) is loop


def test_ir_transform_unknown_type_name():
    with pytest.raises(ValueError, match="ir_transform: unknown node type 'Nope'"):
        sf.ir_transform(tir.Evaluate(0), None, None, ["tir.Nope"])


def test_deep_expression_does_not_hit_recursion_limit():
    e = x
    for k in range(5000):
        e = tir.Add(e, k)
    assert StmtExprMutator()(tir.Evaluate(e)).value is e
    count = []
    post_order_visit(e, count.append)
    assert len(count) == 10001


def test_long_sequence_is_iterated():
    seq = tir.SeqStmt([tir.Evaluate(k) for k in range(20000)])
    assert StmtExprMutator()(seq) is seq
