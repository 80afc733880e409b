"""``VectorizeWhileSearch``: Before (ir_builder) / After (nodes) for the guarded form, one
recognition row per accepted shape, one refusal row per condition with its remark, the
config keys that turn the pass off, and what it leaves alone."""

import pytest

import tir
import transform
from tir import ir_builder
from tir.structural import assert_structural_equal
from transform.vector.analysis.while_search import find_while_search, shown
from transform.vector.reduction_ir import local_buffer
from transform.vector.vectorize_while_search import NOT_A_WHILE_SEARCH

F32 = "float32"


def two(dtype=F32):
    return tir.const(2, dtype)


def search(keep=lambda a, x: a[x] <= two(), form="guarded", bound=None, step=None,
           index_dtype="int32", shape=None, attrs=None, extra=None):
    """``while bound(I[0], n) and keep(A, I[0]): step(I)`` over ``A`` of ``shape``
    (a function of ``n``; default ``(n,)``), ``B`` of shape ``(n,)`` beside it; params
    ``A, I, B, d``."""
    n = tir.size_var("n", index_dtype)
    A = tir.decl_buffer(shape(n) if shape else (n,), F32, "A")
    I = tir.decl_buffer((2,), index_dtype, "I")  # noqa: E741 (the index buffer)
    B = tir.decl_buffer((n,), F32, "B")
    d = tir.var("d", "int32")
    ib = ir_builder.create()
    a, i, b = ib.buffer_ptr(A), ib.buffer_ptr(I), ib.buffer_ptr(B)
    test = bound(i, n) if bound else i[0] < n
    kept = keep(a, i[0]) if extra is None else extra(a, i, b, d)
    cond = tir.if_then_else(test, kept, tir.const(False, "bool")) if form == "guarded" \
        else tir.all(test, kept)
    with ib.while_loop(cond):
        if step is None:
            i[0] = i[0] + 1
        else:
            step(i, b)
    func = tir.PrimFunc([A, I, B, d], ib.get())
    return func.with_attr("tir.noalias", False) if attrs == "alias" else func


def run(func, config=None):
    with transform.PassContext(config=config or {}), transform.collect_remarks() as remarks:
        out = transform.VectorizeWhileSearch()(tir.IRModule.from_expr(func))["main"]
    return out, [str(r) for r in remarks]


def flat(remarks):
    return " ".join(" ".join(remarks).split())


def test_guarded_search_becomes_a_sentinel_first_match():
    func = search()
    n = func.buffer_map[func.params[0]].shape[0]
    A, I = (func.buffer_map[p] for p in func.params[:2])
    start, j = tir.var("I_start"), tir.var("I_i")
    found = local_buffer("I_found", "int32", 1)
    first = tir.BufferLoad(found, [0])
    kept = tir.BufferLoad(A, [j]) <= two()
    loop = tir.For(j, tir.max(start, 0), n - tir.max(start, 0), tir.ForKind.VECTORIZED,
                   tir.IfThenElse(tir.all(first == n, tir.Not(kept)),
                                  tir.BufferStore(found, j, [0])))
    vector = tir.Allocate(found.data, "int32", [1], tir.const(True, "bool"), tir.SeqStmt(
        [tir.BufferStore(found, n, [0]), loop, tir.BufferStore(I, first, [0])]))
    want = tir.LetStmt(start, tir.BufferLoad(I, [0]), tir.IfThenElse(
        tir.all(start >= 0, start < n), vector, func.body))
    after, remarks = run(func)
    assert_structural_equal(after.body, want)
    assert "vectorized: guarded while search I[0] < n: the first i from I[0] where " \
        "A[i] <= T.float32(2) fails" in flat(remarks)


ACCEPTED = [
    ("and form, A of n + 1", dict(form="and", shape=lambda n: (n + 1,))),
    ("guarded form, A[i + 1] of n + 1", dict(keep=lambda a, x: a[x + 1] <= two(),
                                             shape=lambda n: (n + 1,))),
    ("n > I[0]", dict(bound=lambda i, n: n > i[0])),
    ("I[0] + 1 < n", dict(bound=lambda i, n: i[0] + 1 < n)),
    ("int64 index", dict(index_dtype="int64")),
    ("no load of A", dict(keep=lambda a, x: x * x < 1000)),
    ("two buffers", dict(extra=lambda a, i, b, d: a[i[0]] <= b[i[0]])),
    ("a safe division", dict(extra=lambda a, i, b, d: i[0] // 3 < 5)),
]


@pytest.mark.parametrize("name,kwargs", ACCEPTED, ids=[r[0] for r in ACCEPTED])
def test_search_recognized(name, kwargs):
    func = search(**kwargs)
    found, why = find_while_search(func.body)
    assert why is None and found is not None
    after, remarks = run(func)
    assert after is not func and "vectorized:" in flat(remarks)


REFUSED = [
    ("step of 2", dict(step=lambda i, b: i.__setitem__(0, i[0] + 2)),
     "the body must be exactly I[0] = I[0] + 1"),
    ("another store", dict(step=lambda i, b: (i.__setitem__(0, i[0] + 1),
                                              b.__setitem__(0, two()))),
     "the body must be exactly I[0] = I[0] + 1"),
    ("bound reads I", dict(bound=lambda i, n: i[0] < i[1]),
     "reads I, which the loop writes"),
    ("keep reads I[1]", dict(extra=lambda a, i, b, d: a[i[0]] <= tir.cast(F32, i[1])),
     "reads I at an element other than the index I[0]"),
    ("and form reads A[n]", dict(form="and"),
     "A[i] is not provably in bounds on every iteration; the vector search evaluates the "
     "condition ahead of the serial loop, so it must have no effect at any index in "
     "[start, n] (the and evaluates both sides: the last test evaluates it at n too)"),
    ("A[i + 1]", dict(keep=lambda a, x: a[x + 1] <= two()),
     "A[i + 1] is not provably in bounds"),
    ("impure call", dict(keep=lambda a, x: tir.call_extern("float32", "f", a[x]) <= two()),
     "may have side effects"),
    ("division by d", dict(extra=lambda a, i, b, d: i[0] // d < 5), "may divide by 0 or -1"),
    ("impure bound", dict(bound=lambda i, n: i[0] < tir.call_extern("int32", "len")),
     "calls tir.call_extern"),
    ("int16 index", dict(index_dtype="int16"), "is int16 (int32 or int64 only)"),
    ("may alias", dict(attrs="alias"), "I and A may share memory"),
]


@pytest.mark.parametrize("name,kwargs,reason", REFUSED, ids=[r[0] for r in REFUSED])
def test_refused_with_a_remark(name, kwargs, reason):
    func = search(**kwargs)
    after, remarks = run(func)
    assert after is func, name
    text = flat(remarks)
    assert f"loop while I[0]: {NOT_A_WHILE_SEARCH}:" in text and reason in text, text


def test_an_offset_bound_that_may_overflow_is_refused():
    """``I[0] + 1 < x`` with ``x`` any int32: ``x - 1`` may wrap."""
    x = tir.var("x")
    func = search(bound=lambda i, n: i[0] + 1 < x)
    after, remarks = run(func)
    assert after is func and "the bound less the offset of I[0] may overflow" in flat(remarks)


@pytest.mark.parametrize("config", [{"tir.vectorize.while_search": False},
                                    {"tir.disable_vectorize": True}])
def test_config_turns_it_off(config):
    func = search()
    after, remarks = run(func, config)
    assert after is func and remarks == []


def test_other_while_loops_are_left_alone_without_a_remark():
    n = tir.size_var("n")
    A = tir.decl_buffer((n,), F32, "A")
    ib = ir_builder.create()
    a = ib.buffer_ptr(A)
    with ib.while_loop(a[0] < two()):
        a[0] = a[0] + two()
    func = tir.PrimFunc([A], ib.get())
    assert run(func) == (func, [])


def _in_loops(kind):
    """``for r in range(4) (kind): <the guarded search over row r of A[4, n]>``."""
    n = tir.size_var("n")
    A = tir.decl_buffer((4, n), F32, "A")
    I = tir.decl_buffer((4,), "int32", "I")  # noqa: E741 (the index buffer)
    ib = ir_builder.create()
    a, i = ib.buffer_ptr(A), ib.buffer_ptr(I)
    with ib.for_range(0, 4, "r", kind=kind) as r:
        with ib.while_loop(tir.if_then_else(i[r] < n, a[r, i[r]] <= two(),
                                            tir.const(False, "bool"))):
            i[r] = i[r] + 1
    return tir.PrimFunc([A, I], ib.get())


def test_a_search_per_row_uses_the_enclosing_loop_range():
    after, remarks = run(_in_loops("serial"))
    assert "vectorized: guarded while search I[r] < n" in flat(remarks)
    assert "T.vectorized" in str(after)


def test_a_while_inside_a_vectorized_loop_is_left_to_vectorize_loop():
    func = _in_loops("vectorize")
    assert run(func) == (func, [])


def test_the_bound_test_anywhere_in_a_chain_of_ands():
    """``(A[I] >= -2 and I < n) and A[I] <= 2``: TIR's and evaluates every side, so the
    keep is the and of the others (A of shape n + 1: the last test reads A[n])."""
    n = tir.size_var("n")
    A = tir.decl_buffer((n + 1,), F32, "A")
    B = tir.decl_buffer((n,), F32, "B")
    I = tir.decl_buffer((1,), "int32", "I")  # noqa: E741 (the index buffer)
    ib = ir_builder.create()
    a, i = ib.buffer_ptr(A), ib.buffer_ptr(I)
    x = i[0]
    cond = tir.And(tir.And(a[x] >= -two(), x < n), a[x] <= two())
    with ib.while_loop(cond):
        i[0] = i[0] + 1
    found, why = find_while_search(tir.PrimFunc([A, B, I], ib.get()).body)
    assert why is None and str(found.stop) == "n"
    assert shown(found.keep) == "A[I[0]] >= T.float32(-2) and A[I[0]] <= T.float32(2)"
