"""InstrumentBoundCheckers: what is proven, what is checked, what is skipped, and identity."""

import importlib
import sys
from pathlib import Path

import numpy as np
import pytest

import codegen
import tir
import transform
from tir import AssertStmt, BufferStore, Evaluate, For, ForKind, IfThenElse, LetStmt, SeqStmt
from tir.functor import post_order_visit

ROOT = Path(__file__).resolve().parents[2]
n = tir.Var("n", "int32")
m = tir.Var("m", "int32")
A = tir.decl_buffer((m,), "float32", name="A")
S = tir.decl_buffer((64,), "float32", name="S")


def _run(body, params=(A, S, n, m), **config):
    func = tir.PrimFunc(list(params), body)
    with transform.PassContext(config=config):
        out = transform.InstrumentBoundCheckers()(tir.IRModule.from_expr(func))["main"]
    return func, out


def _asserts(stmt):
    found = []
    post_order_visit(stmt, lambda x: found.append(x) if isinstance(x, AssertStmt) else None)
    return found


def _loop(var, extent, body, kind=ForKind.SERIAL):
    return For(var, 0, extent, kind, body)


def _store(buf, index, value=1.0):
    return BufferStore(buf, tir.const(value, "float32"), [index])


def _conds(assert_stmt):
    """The conjuncts of an assert's condition, printed."""
    out, todo = [], [assert_stmt.condition]
    while todo:
        c = todo.pop()
        if isinstance(c, tir.And):
            todo += [c.b, c.a]
        else:
            out.append(str(c))
    return out


# ------------------------------------------------------------------ proven: nothing added


def test_static_loop_inside_static_shape_is_the_same_function():
    i = tir.Var("i", "int32")
    func, out = _run(_loop(i, 64, _store(S, i)))
    assert out is func


def test_loop_over_symbolic_shape_is_proven():
    i = tir.Var("i", "int32")
    func, out = _run(_loop(i, m, BufferStore(A, A[i] + 1.0, [i])))
    assert out is func


def test_blocks_of_floordiv_extent_are_proven():
    i, j = tir.Var("i", "int32"), tir.Var("j", "int32")
    ramp = tir.Ramp(i * 8, 1, 8)
    body = _loop(i, tir.floordiv(m, 8), BufferStore(A, tir.Broadcast(tir.const(1.0), 8), [ramp]))
    func, out = _run(body)
    assert out is func
    serial = _loop(i, tir.floordiv(m, 8), _loop(j, 8, _store(A, i * 8 + j)))
    func, out = _run(serial)
    assert out is func


def test_if_branch_conditions_prove_the_access():
    i = tir.Var("i", "int32")
    then_only = IfThenElse(i < m, _store(A, i))
    else_only = IfThenElse(i >= m, Evaluate(0), _store(A, i))
    func, out = _run(_loop(i, n, SeqStmt([then_only, else_only])))
    assert out is func


def test_let_and_assert_facts_prove_the_access():
    i, k = tir.Var("i", "int32"), tir.Var("k", "int32")
    B = tir.decl_buffer((n + 1,), "float32", name="B")
    let = _loop(i, n, LetStmt(k, i + 1, _store(B, k)))
    func, out = _run(let, params=(B, n))
    assert out is func
    guarded = _loop(i, n, AssertStmt(i < m, tir.StringImm("i fits"), _store(A, i)))
    func, out = _run(guarded)
    assert out is func


def test_config_off_leaves_the_function_alone():
    i = tir.Var("i", "int32")
    func, out = _run(_loop(i, n, _store(A, i)), **{"tir.instrument_bound_checkers": False})
    assert out is func
    assert transform.known_configs()["tir.instrument_bound_checkers"].default is True


def test_instrumenting_twice_adds_nothing_more():
    i = tir.Var("i", "int32")
    _, once = _run(_loop(i, n, _store(A, i)))
    twice = transform.InstrumentBoundCheckers()(tir.IRModule.from_expr(once))["main"]
    assert twice is once


# ------------------------------------------------------------------ checked


def test_unproven_scalar_store_gets_one_assert_with_its_message():
    i = tir.Var("i", "int32")
    _, out = _run(_loop(i, n, BufferStore(A, A[i] + 1.0, [i])))
    (check,) = _asserts(out.body)
    assert isinstance(out.body, For) and out.body.body is check
    assert check.message.value == "index out of bounds: A[i] with extent m"
    assert _conds(check) == ["i < m"]  # i >= 0 is proven; the load and the store share it
    assert isinstance(check.body, BufferStore)


def test_index_that_wraps_around_is_checked_and_fails_at_run_time():
    x = tir.Var("x", "uint8")
    B = tir.decl_buffer((251,), "int32", name="B")
    index = (x - tir.const(5, "uint8")).astype("int32")  # x < 5 wraps: 251 ... 255
    func, out = _run(BufferStore(B, tir.const(7, "int32"), [index]), params=(B, x))
    (check,) = _asserts(out.body)
    assert _conds(check) == ['T.Cast("int32", x - T.uint8(5)) < 251']
    block = np.zeros(300, "int32")
    lib = codegen.build(func, target="llvm")
    lib["main"](block[10:261], 9)
    assert np.flatnonzero(block).tolist() == [10 + 4]
    # the caller's array is a view into a larger block, so a missed check cannot corrupt memory
    with pytest.raises(RuntimeError, match=r"index out of bounds: B\[T.Cast\(\"int32\""):
        lib["main"](block[10:261], 0)
    assert np.flatnonzero(block).tolist() == [10 + 4]


def test_ramp_spans_lowest_and_highest_lane():
    i = tir.Var("i", "int32")
    up = BufferStore(A, tir.Broadcast(tir.const(1.0), 4), [tir.Ramp(i * 4, 1, 4)])
    down = BufferStore(A, tir.Broadcast(tir.const(1.0), 4), [tir.Ramp(i * 4 + 2, -2, 4)])
    _, out = _run(_loop(i, n, SeqStmt([up, down])))
    first, second = _asserts(out.body)
    assert _conds(first) == ["i * 4 + 3 < m"]
    assert first.message.value == "index out of bounds: A[i * 4:i * 4 + 4] with extent m"
    assert sorted(_conds(second)) == ["i * 4 + 2 < m", "i * 4 - 4 >= 0"]
    assert second.message.value == (
        "index out of bounds: A[i * 4 + 2:i * 4 + 2 - 8:-2] with extent m")


def test_broadcast_index_checks_its_value_and_2d_message_shows_the_shape():
    i = tir.Var("i", "int32")
    M = tir.decl_buffer((m, 4), "float32", name="M")
    store = BufferStore(M, tir.Broadcast(tir.const(1.0), 4), [i, tir.Ramp(0, 1, 4)])
    spread = BufferStore(A, tir.Broadcast(tir.const(1.0), 4), [tir.Broadcast(i + 1, 4)])
    _, out = _run(_loop(i, n, SeqStmt([store, spread])), params=(A, M, n, m))
    first, second = _asserts(out.body)
    assert _conds(first) == ["i < m"]  # the ramp 0:4 is proven against 4
    assert first.message.value == "index out of bounds: M[i, 0:4] with shape (m, 4)"
    assert _conds(second) == ["i + 1 < m"]


def test_gather_index_is_one_unsigned_vector_compare_inside_the_index_check():
    i = tir.Var("i", "int32")
    idx = tir.decl_buffer((n,), "int32", name="idx")
    ramp = tir.Ramp(i * 8, 1, 8)
    store = BufferStore(S, A[idx[ramp]], [ramp])
    _, out = _run(_loop(i, tir.floordiv(n, 8), store), params=(A, S, idx, n, m))
    outer = out.body.body
    assert isinstance(outer, AssertStmt)  # S[i*8:i*8+8]: 64 is not proven against n // 8 * 8
    inner = outer.body
    assert isinstance(inner, AssertStmt) and isinstance(inner.body, BufferStore)
    # 0 <= lane < m as one vector compare: a negative lane reinterpreted as uint32 is
    # >= 2**31 > m; one all-lanes reduction of the compare's mask, no max tree
    assert str(inner.condition) == (
        'T.call_intrin("bool", "tir.vector_reduce_and", '
        'T.reinterpret("uint32x8", idx[i * 8:i * 8 + 8]) < T.Broadcast(T.Cast("uint32", m), 8))'
    )
    assert inner.message.value == "index out of bounds: A[idx[i * 8:i * 8 + 8]] with extent m"


def test_several_buffers_share_one_assert():
    i = tir.Var("i", "int32")
    B = tir.decl_buffer((n,), "float32", name="B")
    _, out = _run(_loop(i, m, BufferStore(B, A[i + 1], [i])), params=(A, B, n, m))
    (check,) = _asserts(out.body)
    assert sorted(_conds(check)) == ["i + 1 < m", "i < n"]
    assert check.message.value == (
        "index out of bounds: one of A[i + 1] with extent m; B[i] with extent n")


def test_load_in_if_condition_wraps_the_if():
    i = tir.Var("i", "int32")
    branch = IfThenElse(A[i + 1] > 0.0, _store(S, 0))
    _, out = _run(_loop(i, n, branch))
    check = out.body.body
    assert isinstance(check, AssertStmt) and check.body is branch


# ------------------------------------------------------------------ skipped


def test_if_then_else_branches_masked_accesses_and_while_conditions_are_skipped():
    i = tir.Var("i", "int32")
    chosen = tir.if_then_else(i < m, A[i], tir.const(0.0))
    masked = BufferStore(A, tir.Broadcast(tir.const(1.0), 4), [tir.Ramp(i * 4, 1, 4)],
                         predicate=tir.Ramp(i * 4, 1, 4) < tir.Broadcast(m, 4))
    body = SeqStmt([_store(S, 0, 0.0), BufferStore(S, chosen, [0]), masked])
    func, out = _run(_loop(i, n, body))
    assert out is func
    loop = tir.While(A[0] > 0.0, _store(S, 1))
    func, out = _run(loop)
    assert out is func


def test_scalable_ramp_spans_vscale_lanes():
    i = tir.Var("i", "int32")
    lanes = 4 * tir.vscale()
    store = BufferStore(A, tir.Broadcast(tir.const(1.0), lanes), [tir.Ramp(i, 1, lanes)])
    _, out = _run(_loop(i, n, store))
    (check,) = _asserts(out.body)
    assert _conds(check) == ["T.vscale() * 4 + i - 1 < m"]
    assert check.message.value == "index out of bounds: A[i:i + T.vscale() * 4] with extent m"


# ------------------------------------------------------------------ masked accesses


def _tail_store(buf, base, limit, lanes=8):
    """The store of a strip-mined tail: lanes ``base + k < limit`` of ``buf[base + k]``."""
    mask = tir.get_active_lane_mask(f"uint1x{lanes}", base, limit)
    return BufferStore(buf, tir.Broadcast(tir.const(1.0), lanes), [tir.Ramp(base, 1, lanes)],
                       predicate=mask)


def test_tail_mask_checks_its_last_active_lane_unless_no_lane_is_on():
    base = tir.floordiv(n, 8) * 8
    _, out = _run(_tail_store(S, base, n))
    (check,) = _asserts(out)
    # lanes base .. min(base + 8, n) - 1 can be on; none is when base >= n
    # (n < 0 makes base negative: its lanes below 0 are on)
    assert str(check.condition) == "not n // 8 * 8 < n or n // 8 * 8 >= 0 and n - 1 < 64"
    assert check.message.value == "index out of bounds: S[n // 8 * 8:n // 8 * 8 + 8] with extent 64"


def test_tail_mask_over_a_buffer_of_its_limit_is_proven():
    k = tir.size_var("k")
    K = tir.decl_buffer((k,), "float32", name="K")
    base = tir.floordiv(k, 8) * 8
    body = SeqStmt([_tail_store(K, base, k), _tail_store(K, base, tir.min(k, n))])
    func, out = _run(body, params=(K, n))
    assert out is func


def test_masked_load_and_store_share_one_guarded_assert():
    i = tir.Var("i", "int32")
    ramp = tir.Ramp(i * 4, 1, 4)
    mask = tir.get_active_lane_mask("uint1x4", i * 4, n)
    load = tir.BufferLoad(S, [tir.Ramp(i * 4 + 64, 1, 4)], predicate=mask)
    store = BufferStore(A, load, [ramp], predicate=mask)
    _, out = _run(_loop(i, m, store))
    (check,) = _asserts(out.body)
    assert check.message.value == (
        "index out of bounds: one of S[i * 4 + 64:i * 4 + 64 + 4] with extent 64; "
        "A[i * 4:i * 4 + 4] with extent m")
    assert _conds(check) == ["not i * 4 < n or T.min(i * 4 + 4, n) + 63 < 64",
                             "not i * 4 < n or T.min(i * 4 + 4, n) - 1 < m"]


def test_if_converted_mask_checks_every_active_lane():
    """A mask beyond the tail's (an if on loaded values) is checked lane by lane: a lane it
    turns off may well be out of bounds in a valid program."""
    i = tir.Var("i", "int32")
    ramp = tir.Ramp(i * 4, 1, 4)
    mask = tir.get_active_lane_mask("uint1x4", i * 4, n) & (A[ramp] > tir.Broadcast(0.0, 4))
    store = BufferStore(S, tir.Broadcast(tir.const(1.0), 4), [ramp], predicate=mask)
    _, out = _run(_loop(i, m, store))
    outer = out.body.body
    inner = outer.body
    assert outer.message.value == "index out of bounds: A[i * 4:i * 4 + 4] with extent m"
    assert inner.message.value == "index out of bounds: S[i * 4:i * 4 + 4] with extent 64"
    assert str(inner.condition) == (
        'T.call_intrin("bool", "tir.vector_reduce_and", not (' + str(mask)
        + ') or T.reinterpret("uint32x4", T.Ramp(i * 4, 1, 4)) < T.Broadcast(T.uint32(64), 4))')


def test_scalar_predicate_guards_the_check():
    i = tir.Var("i", "int32")
    store = BufferStore(S, tir.const(1.0), [i + 60], predicate=i < 4)  # proven under i < 4
    load = tir.BufferLoad(S, [i + 64], predicate=i < n)
    _, out = _run(_loop(i, m, SeqStmt([store, BufferStore(A, load, [0])])))
    (check,) = _asserts(out.body)
    assert check.body is out.body.body.seq[1].body
    assert _conds(check) == ["not i < n or i + 64 < 64"]  # A[0]: 0 < m inside the loop


def test_masked_accesses_run_only_their_active_lanes_in_both_backends():
    base = tir.Var("base", "int32")
    limit = tir.Var("limit", "int32")
    func = tir.PrimFunc([S, base, limit], _tail_store(S, base, limit))
    for target in ("llvm", "interp"):
        lib = codegen.build(func, target=target)
        for b, lim in ((56, 64), (60, 64), (64, 64), (100, 64), (-8, -8), (200, 0), (0, 0)):
            out = np.zeros(64, "float32")
            lib(out, b, lim)  # all lanes off, or all on lanes inside: no error
            assert out.sum() == max(0, min(lim, b + 8, 64) - max(b, 0)), (target, b, lim)
        for b, lim in ((60, 65), (57, 100), (-1, 3)):
            with pytest.raises(RuntimeError, match=r"index out of bounds: S\[base:base \+ 8\]"):
                lib(np.zeros(64, "float32"), b, lim)


# ------------------------------------------------------------------ real kernels


def _count_asserts(func):
    return len(_asserts(codegen.lower(func)["main"].body))


def test_benchmark_kernels_get_no_checks_except_the_data_dependent_gather():
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        bench = importlib.import_module("bench_kernels")
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    for name in ("tir_vector_add", "tir_saxpy", "tir_relu", "tir_sum"):
        assert _count_asserts(getattr(bench, name)(1024)) == 0, name
    assert _count_asserts(bench.tir_matmul(64)) == 0
    # A[idx[k]]: the indices are data, only a run-time check can keep them in bounds
    assert _count_asserts(bench.tir_gather(1024)) == 1


def test_tutorial_vector_add_gets_no_checks():
    sys.path.insert(0, str(ROOT / "tutorials"))
    try:
        lesson = importlib.import_module("01_vector_add")
    finally:
        sys.path.remove(str(ROOT / "tutorials"))
    assert _count_asserts(lesson.build_vector_add()) == 0


def test_interpreter_runs_the_gather_check():
    ib = tir.ir_builder.create()
    a, c = ib.pointer("float32", name="A"), ib.pointer("float32", name="C")
    idx = ib.pointer("int32", name="idx")
    with ib.for_range(0, 2, name="i") as i, ib.for_range(0, 4, name="j", kind="vectorize") as j:
        c[i * 4 + j] = a[idx[i * 4 + j]]
    func = tir.PrimFunc([a, idx, c], ib.get())
    lib = codegen.build(func, "interp")
    src, out = np.arange(8, dtype="float32"), np.zeros(8, "float32")
    lib(src, np.arange(8, dtype="int32")[::-1].copy(), out)
    assert out.tolist() == list(range(7, -1, -1))
    bad = np.arange(8, dtype="int32")
    bad[5] = 8
    with pytest.raises(RuntimeError, match=r"index out of bounds: A\[idx\[i \* 4:i \* 4 \+ 4\]\]"):
        lib(src, bad, out)


def test_a_loop_var_reused_in_a_sibling_loop_does_not_keep_its_old_range():
    i = tir.Var("i", "int32")
    body = SeqStmt([_loop(i, m, _store(A, i)), _loop(i, n, _store(A, i))])
    _, out = _run(body)
    first, second = out.body.seq
    assert not _asserts(first) and [str(c) for c in map(_conds, _asserts(second))] == ["['i < m']"]
