"""UnrollLoop: explicit unrolling, auto-unroll under config, fresh binders, kinds."""

import pytest

import tir
import transform
from tir import For, ForKind, SeqStmt
from tir.verify import verify_well_formed

A = tir.decl_buffer((64,), "float32", name="A")
n = tir.Var("n", "int32")


def _func(body):
    return tir.PrimFunc([A, n], body)


def _run(body, config=None):
    mod = tir.IRModule.from_expr(_func(body))
    with transform.PassContext(config={"tir.UnrollLoop": config} if config else None):
        return transform.UnrollLoop()(mod)["main"].body


def _store(index, value=1.0):
    return tir.BufferStore(A, tir.const(value), [index])


def test_unrolled_loop_becomes_copies_with_min_plus_k():
    i = tir.Var("i", "int32")
    loop = For(i, 2, 3, ForKind.UNROLLED, _store(i * 2))
    # Substitution does not fold: that is Simplify's job.
    expected = SeqStmt([_store(tir.Mul(k, 2)) for k in (2, 3, 4)])
    tir.assert_structural_equal(_run(loop), expected)


def test_symbolic_min_is_added():
    i = tir.Var("i", "int32")
    out = _run(For(i, n, 2, ForKind.UNROLLED, _store(i)))
    tir.assert_structural_equal(out, SeqStmt([_store(n + 0), _store(n + 1)]))


def test_extent_one_and_zero():
    i = tir.Var("i", "int32")
    out = _run(For(i, 0, 1, ForKind.UNROLLED, _store(i)))
    tir.assert_structural_equal(out, _store(tir.const(0)))
    out = _run(SeqStmt([For(i, 0, 0, ForKind.UNROLLED, _store(i)), _store(n)]))
    assert isinstance(out.seq[0], tir.Evaluate)


def test_non_constant_unrolled_loop_becomes_serial():
    i = tir.Var("i", "int32")
    loop = For(i, 0, n, ForKind.UNROLLED, _store(i))
    out = _run(loop)
    assert isinstance(out, For) and out.kind == ForKind.SERIAL and out.body is loop.body


def test_serial_loops_untouched_by_default():
    i = tir.Var("i", "int32")
    mod = tir.IRModule.from_expr(_func(For(i, 0, 4, ForKind.SERIAL, _store(i))))
    assert transform.UnrollLoop()(mod) is mod


def test_nested_unroll_gives_fresh_inner_binders():
    i, j = tir.Var("i", "int32"), tir.Var("j", "int32")
    x = tir.Var("x", "int32")
    inner = For(j, 0, n, ForKind.SERIAL, tir.LetStmt(x, i * 8 + j, _store(x)))
    out = _run(For(i, 0, 2, ForKind.UNROLLED, inner))
    assert len(out.seq) == 2
    first, second = out.seq
    assert first.loop_var is j and second.loop_var is not j
    assert first.body.var is x and second.body.var is not x
    assert second.body.body.indices[0] is second.body.var
    assert verify_well_formed(_func(out))


def test_allocated_buffers_are_renamed_in_copies():
    ib = tir.ir_builder.create()
    with ib.for_range(0, 2, name="i", kind="unroll") as i:
        tmp = ib.allocate("float32", 4, name="tmp")
        tmp[0] = tir.Cast("float32", i)
        ib.emit(tir.BufferStore(A, tmp[0], [i]))
    out = _run(ib.get())
    first, second = out.seq
    assert first.buffer_var is not second.buffer_var
    assert second.body.seq[0].buffer.data is second.buffer_var
    assert verify_well_formed(_func(out))


def test_auto_unroll_small_serial_loop():
    i = tir.Var("i", "int32")
    loop = For(i, 0, 4, ForKind.SERIAL, _store(i))
    out = _run(loop, {"auto_max_step": 4})
    tir.assert_structural_equal(out, SeqStmt([_store(tir.const(k)) for k in range(4)]))
    assert _run(loop, {"auto_max_step": 3}) is loop


def test_auto_unroll_counts_steps_of_the_whole_nest():
    i, j = tir.Var("i", "int32"), tir.Var("j", "int32")
    nest = For(i, 0, 4, ForKind.SERIAL, For(j, 0, 4, ForKind.SERIAL, _store(i * 4 + j)))
    out = _run(nest, {"auto_max_step": 8})
    # 4 * 1 steps fits for the inner loop, 4 * 4 does not for the outer one.
    assert isinstance(out, For) and out.loop_var is i and isinstance(out.body, SeqStmt)
    out = _run(nest, {"auto_max_step": 16})
    assert isinstance(out, SeqStmt) and len(out.seq) == 16


def test_auto_unroll_skips_loops_around_normal_loops():
    i, j = tir.Var("i", "int32"), tir.Var("j", "int32")
    nest = For(i, 0, 2, ForKind.SERIAL, For(j, 0, n, ForKind.SERIAL, _store(j)))
    assert _run(nest, {"auto_max_step": 1000}) is nest


def test_auto_max_depth_limits_nesting():
    i, j = tir.Var("i", "int32"), tir.Var("j", "int32")
    nest = For(i, 0, 2, ForKind.SERIAL, For(j, 0, 2, ForKind.SERIAL, _store(i * 2 + j)))
    out = _run(nest, {"auto_max_step": 100, "auto_max_depth": 1})
    assert isinstance(out, For) and out.loop_var is i and len(out.body.seq) == 2


def test_auto_max_extent():
    i = tir.Var("i", "int32")
    loop = For(i, 0, 3, ForKind.SERIAL, SeqStmt([_store(i), _store(i + 8)]))
    out = _run(loop, {"auto_max_extent": 3})
    assert isinstance(out, SeqStmt) and len(out.seq) == 6


def test_without_explicit_unroll_loops_are_only_marked():
    i = tir.Var("i", "int32")
    loop = For(i, 0, 4, ForKind.SERIAL, _store(i))
    out = _run(loop, {"auto_max_step": 4, "explicit_unroll": False})
    assert isinstance(out, For) and out.kind == ForKind.UNROLLED and out.body is loop.body
    marked = For(i, 0, 4, ForKind.UNROLLED, _store(i))
    assert _run(marked, {"explicit_unroll": False}) is marked


def test_vectorized_and_parallel_loops_are_not_auto_unrolled():
    i = tir.Var("i", "int32")
    for kind in (ForKind.VECTORIZED, ForKind.PARALLEL):
        loop = For(i, 0, 4, kind, _store(i))
        assert _run(loop, {"auto_max_step": 100}) is loop


def test_unrolled_copies_are_spliced_into_the_enclosing_seq():
    i = tir.Var("i", "int32")
    body = SeqStmt([_store(n), For(i, 0, 2, ForKind.UNROLLED, _store(i))])
    out = _run(body)
    assert len(out.seq) == 3 and out.seq[0] is body.seq[0]


def test_bad_config_subkey():
    with pytest.raises(ValueError, match="auto_max_step"):
        transform.PassContext(config={"tir.UnrollLoop": {"auto_max_steps": 4}})


def test_let_expressions_get_fresh_vars_in_copies():
    i, x = tir.Var("i", "int32"), tir.Var("x", "int32")
    value = tir.Cast("float32", tir.Let(x, i * 2, x + 1))
    out = _run(For(i, 0, 3, ForKind.UNROLLED, tir.BufferStore(A, value, [i])))
    lets = [s.value.value for s in out.seq]
    assert lets[0].var is x and len({id(let.var) for let in lets}) == 3
    assert all(let.body.a is let.var for let in lets)
    assert verify_well_formed(_func(out))


def test_pragma_unroll_explicit_leaves_unrolled_loops_to_codegen_in_its_scope():
    i, j, k = (tir.Var(v, "int32") for v in "ijk")
    inner = For(j, 0, 4, ForKind.UNROLLED, _store(i + j))
    outer = For(i, 0, 8, ForKind.SERIAL, inner, annotations={"pragma_unroll_explicit": 0})
    sibling = For(k, 0, 2, ForKind.UNROLLED, _store(k))
    out = _run(SeqStmt([outer, sibling]))
    # Inside the annotated loop: still a loop, marked for LLVM; the sibling after it is copied.
    assert isinstance(out.seq[0], For) and out.seq[0].body.kind == ForKind.UNROLLED
    assert out.seq[0].body.body is inner.body
    assert [type(s) for s in out.seq[1:]] == [tir.BufferStore, tir.BufferStore]


def test_pragma_unroll_explicit_one_overrides_the_config():
    i, j = tir.Var("i", "int32"), tir.Var("j", "int32")
    loop = For(i, 0, 8, ForKind.SERIAL, For(j, 0, 2, ForKind.UNROLLED, _store(i + j)),
               annotations={"pragma_unroll_explicit": tir.const(1)})
    out = _run(loop, {"explicit_unroll": False})
    assert isinstance(out.body, SeqStmt) and len(out.body.seq) == 2


def test_pragma_auto_unroll_max_step_picks_serial_loops_in_its_scope():
    i, j = tir.Var("i", "int32"), tir.Var("j", "int32")
    loop = For(i, 0, n, ForKind.SERIAL, For(j, 0, 4, ForKind.SERIAL, _store(i + j)),
               annotations={"pragma_auto_unroll_max_step": 16})
    assert isinstance(_run(loop).body, SeqStmt)
    loop = For(i, 0, n, ForKind.SERIAL, loop.body)  # without the annotation
    assert isinstance(_run(loop).body, For)


def test_pragma_with_a_bad_value_is_named():
    i = tir.Var("i", "int32")
    loop = For(i, 0, 2, ForKind.UNROLLED, _store(i),
               annotations={"pragma_unroll_explicit": "no"})
    with pytest.raises(ValueError, match="loop i: annotation pragma_unroll_explicit"):
        _run(loop)
