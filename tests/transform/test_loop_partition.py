"""LoopPartition: TVM's cases (test_tir_transform_loop_partition.py, now under
tests/python/s_tir/transform/), rebuilt with tirlite's node constructors, then tirlite's own."""

import pytest

import tir
import transform
from tir import Evaluate, For, ForKind, IfThenElse, SeqStmt
from tir.functor import post_order_visit
from tir.verify import verify_well_formed

n = tir.Var("n", "int32")
m = tir.Var("m", "int32")
CONST = {"tir.LoopPartition": {"partition_const_loop": True}}


def _mod(body, params=(n, m)):
    return tir.IRModule.from_expr(tir.PrimFunc(list(params), body))


def _partition(body, config=None, params=(n, m), simplify=True):
    """LoopPartition (then Simplify and RemoveNoOp, as TVM's tests do) on ``body``."""
    mod = _mod(body, params)
    with transform.PassContext(config=config):
        mod = transform.LoopPartition()(mod)
        verify_well_formed(mod)
        if simplify:
            mod = transform.RemoveNoOp()(transform.Simplify()(mod))
    return mod["main"].body


def _count(stmt, cls):
    found = []
    post_order_visit(stmt, lambda x: found.append(x) if isinstance(x, cls) else None)
    return len(found)


def _effect(value):
    """``T.evaluate(value)`` with a side effect (RemoveNoOp keeps it)."""
    return Evaluate(tir.call_extern("int32", "effect", value))


def _if_else(cond):
    return IfThenElse(tir.likely(cond), _effect(m), _effect(n))


def _grid(names_extents, body_fn):
    loop_vars = [tir.Var(name, "int32") for name, _ in names_extents]
    body = body_fn(*loop_vars)
    for v, (_, extent) in reversed(list(zip(loop_vars, names_extents))):
        body = For(v, 0, extent, ForKind.SERIAL, body)
    return body


# ------------------------------------------------------------------ TVM's cases


def test_multi_loop():
    body = _grid([("i", 4), ("j", n), ("k", m)], lambda i, j, k: _if_else(i * m + j + k < n))
    out = _partition(body)
    assert isinstance(out.body, SeqStmt)
    assert _count(out.body.seq[0], IfThenElse) == 0  # the first j piece has no guard left


def test_multi_if():
    def body_fn(i, j, k):
        return SeqStmt([_if_else(i * m + j + k < n), _if_else(i * m + j - k < n)])

    out = _partition(_grid([("i", 4), ("j", n), ("k", m)], body_fn))
    assert _count(out.body.seq[0], IfThenElse) == 0


def test_condition():
    def body_fn(i, j):
        return _effect(tir.Select(tir.likely(i * 4 + j < n), m, n))

    out = _partition(_grid([("i", tir.truncdiv(n + 3, 4)), ("j", 4)], body_fn))
    assert _count(out.seq[0], tir.Select) == 0


def test_condition_eq():
    out = _partition(_grid([("i", 10)], lambda i: _effect(tir.Select(tir.likely(i == 5), m, n))),
                     CONST)
    assert _count(out.seq[0], tir.Select) == 0


def test_everything_during_deduction():
    def body_fn(i, j):
        return IfThenElse(tir.likely(tir.truncdiv(i, j) < m), _effect(m))

    out = _partition(_grid([("i", n), ("j", 32)], body_fn))
    assert isinstance(out.body.body, IfThenElse)  # not linear in i: nothing to partition


def test_one_d_pool():
    out_b = tir.decl_buffer((16,), "float32", name="out")
    data = tir.decl_buffer((16,), "float32", name="data")

    def update(ow, kw):
        return tir.BufferStore(out_b, tir.max(out_b[ow], data[ow + kw - 1]), [ow])

    def nest(cond_fn):
        return _grid([("ow", 16), ("kw", 3)], lambda ow, kw: cond_fn(ow, kw, update(ow, kw)))

    body = SeqStmt([
        nest(lambda ow, kw, s: IfThenElse(tir.likely(ow > 0), IfThenElse(tir.likely(ow < 15), s))),
        nest(lambda ow, kw, s: IfThenElse(tir.likely(ow < 1), IfThenElse(tir.likely(kw > 0), s))),
        nest(lambda ow, kw, s: IfThenElse(tir.likely(ow > 14), IfThenElse(tir.likely(kw < 2), s))),
    ])
    out = _partition(body, CONST, params=(data, out_b))
    assert _count(out, IfThenElse) == 0


def test_cce_loop_1():
    a = tir.decl_buffer((514 * 514,), "float16", name="A")
    b = tir.decl_buffer((514 * 514,), "float16", name="B")

    def body_fn(i, j):
        value = b[i * 514 + j + 1] + b[(i + 1) * 514 + j + 1] + b[(i + 2) * 514 + j + 1]
        store = tir.BufferStore(a, value, [(i + 1) * 514 + j + 1])
        return IfThenElse(tir.likely(i * 160 + j < 1600), store)

    out = _partition(_grid([("i", 11), ("j", 160)], body_fn), CONST, params=(a, b))
    assert _count(out, IfThenElse) == 0


def test_cce_loop_2():
    length, tile = 112, 32

    def call(lo, hi):
        return Evaluate(tir.call_extern("float32", "cce_intrisic", lo, hi))

    def body_fn(i):
        return IfThenElse(tir.likely(i * tile + tile > length), call(i * tile, length),
                          call(i * tile, i * tile + tile))

    out = _partition(_grid([("i", (length + tile - 1) // tile)], body_fn), CONST)
    assert _count(out, IfThenElse) == 0


def test_cce_loop_3():
    def body_fn(i, j):
        call = Evaluate(tir.call_extern("float16", "cce_intrisic", i))
        return IfThenElse(tir.likely(i * 4 + j < 39991), call)

    out = _partition(_grid([("i", 9998), ("j", 4)], body_fn), CONST)
    assert _count(out, IfThenElse) == 0


def test_docstring_example_three_levels():
    """TVM's TryPartition comment: i in 4, j in 10, likely(i*10 + j < 36)."""
    a = tir.decl_buffer((40,), "float32", name="A")
    b = tir.decl_buffer((40,), "float32", name="B")

    def body_fn(i, j):
        return IfThenElse(tir.likely(i * 10 + j < 36),
                          tir.BufferStore(a, b[i * 10 + j], [i * 10 + j]))

    out = _partition(_grid([("i", 4), ("j", 10)], body_fn), CONST, params=(a, b))
    i, j, j2 = (tir.Var(s, "int32") for s in "ijj")
    expected = SeqStmt([
        For(i, 0, 3, ForKind.SERIAL,
            For(j, 0, 10, ForKind.SERIAL, tir.BufferStore(a, b[i * 10 + j], [i * 10 + j]))),
        For(j2, 0, 6, ForKind.SERIAL, tir.BufferStore(a, b[j2 + 30], [j2 + 30])),
    ])
    tir.assert_structural_equal(out, expected)


def test_keep_loop_annotations():
    a = tir.decl_buffer((160,), "int32", name="A")
    b = tir.decl_buffer((160,), "int32", name="B")
    i = tir.Var("i", "int32")

    def store(idx, k):
        return tir.BufferStore(b, a[idx] + k, [idx])

    body = IfThenElse(i < 10, store(i, 1),
                      IfThenElse(tir.all(10 <= i, i < 150), store(i, 2), store(i, 3)))
    loop = For(i, 0, 160, ForKind.SERIAL, body,
               annotations={"pragma_loop_partition_hint": True, "key": "value"})
    out = _partition(loop, CONST, params=(a, b))
    i1, i2, i3 = (tir.Var("i", "int32") for _ in range(3))
    expected = SeqStmt([
        For(i1, 0, 10, ForKind.SERIAL, store(i1, 1), annotations={"key": "value"}),
        For(i2, 0, 140, ForKind.SERIAL, store(i2 + 10, 2), annotations={"key": "value"}),
        For(i3, 0, 10, ForKind.SERIAL, store(i3 + 150, 3), annotations={"key": "value"}),
    ])
    tir.assert_structural_equal(out, expected)


def test_single_point_with_partition_hint():
    """TVM's concat_func_single_point: i1 > 63 / i1 == 63 / else."""
    p0 = tir.decl_buffer((28, 64), "int8", name="p0")
    p1 = tir.decl_buffer((28, 1), "int8", name="p1")
    p2 = tir.decl_buffer((28, 63), "int8", name="p2")
    out_b = tir.decl_buffer((28, 128), "int8", name="out")
    i0, i1 = tir.Var("i0", "int32"), tir.Var("i1", "int32")

    def put(src, col):
        return tir.BufferStore(out_b, src[i0, col], [i0, i1])

    body = IfThenElse(i1 > 63, put(p0, i1 - 64),
                      IfThenElse(i1 == 63, put(p1, i1 - 63), put(p2, i1)))
    inner = For(i1, 0, 128, ForKind.SERIAL, body, annotations={"pragma_loop_partition_hint": 1})
    config = {"tir.LoopPartition": {"partition_const_loop": True,
                                    "unroll_loop_with_partition_hint_no_interval": True}}
    out = _partition(For(i0, 0, 28, ForKind.SERIAL, inner), config,
                     params=(p0, p1, p2, out_b))
    assert _count(out, IfThenElse) == 0
    pieces = out.body.seq
    assert [p.extent.value for p in pieces if isinstance(p, For)] == [63, 64]
    assert isinstance(pieces[1], tir.BufferStore)  # i1 == 63, inlined


# ------------------------------------------------------------------ tirlite's cases


def test_constant_loops_untouched_without_partition_const_loop():
    body = _grid([("i", 4), ("j", 10)], lambda i, j: _if_else(i * 10 + j < 36))
    mod = _mod(body)
    out = transform.LoopPartition()(mod)["main"].body
    likely = []
    post_order_visit(out, lambda x: likely.append(x) if isinstance(x, tir.Call)
                     and x.op == "tir.likely" else None)
    assert _count(out, For) == 2 and not likely  # likely stripped all the same, as in TVM


def test_no_unroll_loop_with_extent_one():
    body = _grid([("i", 4), ("j", 10)], lambda i, j: _if_else(i * 10 + j < 36))
    config = {"tir.LoopPartition": {"partition_const_loop": True,
                                    "no_unroll_loop_with_extent_one": True}}
    out = _partition(body, config, simplify=False)
    assert [p.extent.value for p in out.seq[:2]] == [3, 1]  # the guarded i == 3 stays a loop


def test_split_guard_symbolic_extent_has_guard_free_middle():
    a = tir.decl_buffer((n,), "float32", name="A")
    out = _partition(_grid([("i", tir.floordiv(n + 5, 6)), ("j", 6)],
                           lambda i, j: IfThenElse(tir.likely(i * 6 + j < n),
                                                   tir.BufferStore(a, tir.const(1.0),
                                                                   [i * 6 + j]))),
                     params=(a, n))
    middle = out.seq[0]
    assert isinstance(middle, For) and _count(middle, IfThenElse) == 0
    tir.assert_structural_equal(middle.extent, tir.floordiv(n, 6))


def test_conjunct_settled_alone():
    """likely(a) and likely(b): each settles on its own loop (two splits in one block)."""
    def body_fn(i, j):
        cond = tir.all(tir.likely(i < n), tir.likely(j < m))
        return IfThenElse(cond, _effect(i + j))

    out = _partition(_grid([("i", n + 3), ("j", m + 2)], body_fn))
    # i < n and j < m both settled; the pieces where one is false are empty and go away
    i, j = tir.Var("i", "int32"), tir.Var("j", "int32")
    expected = For(i, 0, tir.max(n, 0), ForKind.SERIAL,
                   For(j, 0, tir.max(m, 0), ForKind.SERIAL, _effect(i + j)))
    tir.assert_structural_equal(out, expected)


def test_condition_on_inner_var_bound_inside_is_kept():
    """A bound mentioning a let var of the body cannot move out of the loop."""
    x = tir.Var("x", "int32")

    def body_fn(i):
        return tir.LetStmt(x, n * 2, IfThenElse(tir.likely(i < x), _effect(i)))

    out = _partition(_grid([("i", n)], body_fn), simplify=False)
    assert isinstance(out, For) and _count(out, IfThenElse) == 1


def test_unchanged_function_comes_back_as_is():
    mod = _mod(_grid([("i", n)], lambda i: Evaluate(i)))
    assert transform.LoopPartition()(mod) is mod


def test_bad_config_is_rejected():
    with pytest.raises(ValueError, match="partition_const_loop"):
        transform.PassContext(config={"tir.LoopPartition": {"partition_const_loops": True}})
    with pytest.raises(TypeError, match="bool"):
        transform.PassContext(config={"tir.LoopPartition": {"partition_const_loop": 1}})


# ------------------------------------------------------------------ block predicates


def _split_elementwise(rows, factor):
    from tir import te

    a = te.placeholder((rows, 8), name="A")
    b = te.compute((rows, 8), lambda i, j: a[i, j] * 2.0, name="B")
    sch = tir.Schedule(te.create_prim_func([a, b]))
    i, _ = sch.get_loops(sch.get_block("B"))
    sch.split(i, factors=[None, factor])
    return sch.mod


def test_block_predicate_lowers_as_likely_only_under_config():
    mod = _split_elementwise(10, 4)
    plain = transform.LowerOpaqueBlock()(mod)["main"].body
    guard = plain.body.body.body
    assert isinstance(guard, IfThenElse) and isinstance(guard.condition, tir.LT)
    with transform.PassContext(config={"tir.lower_opaque_block.likely_predicate": True}):
        marked = transform.LowerOpaqueBlock()(mod)["main"].body
    cond = marked.body.body.body.condition
    assert isinstance(cond, tir.Call) and cond.op == "tir.likely"
    tir.assert_structural_equal(cond.args[0], guard.condition, map_free_vars=True)
    # the pipeline's setting, switched off by the config
    with transform.PassContext(config={"tir.lower_opaque_block.likely_predicate": False}):
        off = transform.LowerOpaqueBlock(likely_predicate=True)(mod)["main"].body
    assert isinstance(off.body.body.body.condition, tir.LT)


def test_split_guard_peeled_by_the_build_pipeline():
    from codegen.build import lower

    body = lower(_split_elementwise(10, 4))["main"].body
    assert isinstance(body, SeqStmt) and _count(body, IfThenElse) == 0
    assert body.seq[0].extent.value == 2  # two full tiles of 4 rows, then the 2 rows left
    with transform.PassContext(disabled_pass=["tir.LoopPartition"]):
        guarded = lower(_split_elementwise(10, 4))["main"].body
    assert isinstance(guarded, For) and _count(guarded, IfThenElse) == 1
