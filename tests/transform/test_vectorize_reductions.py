"""``VectorizeReductions``: Before (ir_builder) / After (nodes) for a sum, one recognition row
per shape (reduced, or refused with its reason), the remarks, and what the pass leaves alone."""

import numpy as np
import pytest

import codegen
import tir
import transform
from tir import ir_builder
from tir.structural import assert_structural_equal
from transform.vector.analysis.reductions import find_reductions, identity
from transform.vector.analysis.searches import find_search
from transform.vector.tail import STRIP_MINED
from transform.vector.vector_length import VECTOR_LENGTH
from transform.vector.vectorize_reductions import NOT_A_REDUCTION, ORDERED

BITS = codegen.Target("llvm").vector_width_bits
VL = BITS // 32  # float32 / int32 lanes per register on this host
NOTE = {STRIP_MINED: "reduction of S[0]"}


def loop_of(body, dtype="float32", n=None, extra=("B",), annotations=None):
    """``for i in vectorized(n): body(i, S, A, *extra)`` with S of shape (1,)."""
    n = tir.size_var("n") if n is None else n
    A = tir.decl_buffer((n,), dtype, "A")
    S = tir.decl_buffer((1,), dtype, "S")
    others = [tir.decl_buffer((n,), dtype, name) for name in extra]
    ib = ir_builder.create()
    s, a, *rest = (ib.buffer_ptr(b) for b in (S, A, *others))
    with ib.for_range(0, n, kind="vectorize", name="i", annotations=annotations) as i:
        body(i, s, a, *rest)
    return tir.PrimFunc([A, S, *others], ib.get())


def add_a(i, s, a, *rest):
    s[0] = s[0] + a[i]


def run(func, config=None):
    with transform.PassContext(config=config or {}), transform.collect_remarks() as remarks:
        out = transform.VectorizeReductions()(tir.IRModule.from_expr(func))["main"]
    return out, [r.line for r in remarks]


def expected_sum(func, k):
    """The rewrite of ``S[0] = S[0] + A[i]`` over a symbolic n (see the pass's docstring)."""
    A, S = _buffers(func)
    n = A.shape[0]

    def local(name, size):
        data = tir.Var(name, "handle", type_annotation="float32")
        return tir.decl_buffer((size,), "float32", name, data=data, scope="local")

    acc, tail_acc = local("S_acc", k * VL), local("S_tail", VL)

    def lanes(buf, c):
        return tir.BufferLoad(buf, [tir.Ramp(tir.const(c * VL), 1, VL)])

    def vector(buf, start, offset, note=NOTE):
        j = tir.Var("i", "int32")
        index = [tir.const(offset) + j]
        body = tir.BufferStore(buf, tir.BufferLoad(buf, index) + tir.BufferLoad(A, [start + j]),
                               index)
        return tir.For(j, 0, VL, tir.ForKind.VECTORIZED, body, note)

    outer, rest = tir.Var("i_outer", "int32"), tir.Var("i_rest", "int32")
    block = k * VL
    full = tir.floordiv(n, block)
    init = [tir.BufferStore(buf, tir.Broadcast(tir.const(-0.0, "float32"), VL),
                            [tir.Ramp(tir.const(c * VL), 1, VL)])
            for buf, c in [*((acc, c) for c in range(k)), (tail_acc, 0)]]
    main = tir.For(outer, 0, full, tir.ForKind.SERIAL,
                   tir.SeqStmt([vector(acc, outer * block + c * VL, c * VL) for c in range(k)]))
    rest_loop = tir.For(rest, 0, tir.floordiv(tir.floormod(n, block), VL), tir.ForKind.SERIAL,
                        vector(acc, full * block + rest * VL, 0))
    done = tir.floordiv(n, VL) * VL
    tail = vector(tail_acc, done, 0, {STRIP_MINED: "reduction of S[0], tail"})
    tail = tir.For(tail.loop_var, 0, VL, tir.ForKind.VECTORIZED,
                   tir.IfThenElse(done + tail.loop_var < n, tail.body), tail.annotations)
    combined = (lanes(acc, 0) + lanes(acc, 1)) + (lanes(acc, 2) + lanes(acc, 3))
    total = tir.Call("float32", "tir.vector_reduce_add_reassoc",
                     [combined + lanes(tail_acc, 0)])
    fold = tir.BufferStore(S, tir.BufferLoad(S, [0]) + total, [0])
    body = tir.SeqStmt([*init, main, rest_loop, tail, fold])
    body = tir.Allocate(acc.data, "float32", [block], tir.const(True, "bool"), body)
    return tir.Allocate(tail_acc.data, "float32", [VL], tir.const(True, "bool"), body)


def inside_allocations(stmt):
    """``stmt`` without the Allocates around it."""
    while isinstance(stmt, tir.Allocate):
        stmt = stmt.body
    return stmt


def _buffers(func):
    return [func.buffer_map[p] for p in func.params][:2]


def test_sum_becomes_k_accumulators_a_guarded_vector_tail_and_a_fold():
    func = loop_of(add_a, extra=())
    after, remarks = run(func)
    assert_structural_equal(after.body, expected_sum(func, 4))
    assert len(remarks) == 1 and "4 accumulators of" in remarks[0]


def test_constant_extent_caps_k_and_drops_empty_loops():
    func = loop_of(add_a, n=2 * VL + 3, extra=())
    after, remarks = run(func)
    assert "2 accumulators" in remarks[0]
    loops = [x for x in inside_allocations(after.body).seq if isinstance(x, tir.For)]
    # main loop (one block of 2 x VL), no VL-step loop (nothing left), the guarded tail
    assert [int(x.extent.value) for x in loops] == [1, VL]
    assert loops[1].kind == tir.ForKind.VECTORIZED
    assert str(loops[1].body.condition) == f"{2 * VL} + i < {2 * VL + 3}"


def test_extent_below_one_vector_is_left_to_vectorize_loop():
    func = loop_of(add_a, n=VL - 1, extra=())
    after, remarks = run(func)
    assert after is func and remarks == []


def test_ordered_mode_folds_each_vector_in_lane_order():
    func = loop_of(add_a, extra=())
    after, remarks = run(func, {ORDERED: True})
    text = after.script()
    assert 'T.call_intrin("float32", "tir.vector_reduce_add", S_vec[0:' in text
    assert "reassoc" not in text and "folded in serial order" in remarks[0]


def test_vector_length_annotation_is_used_and_dropped():
    func = loop_of(add_a, extra=(),
                   annotations={VECTOR_LENGTH: 4})
    after, remarks = run(func)
    assert f"accumulators of 4 lanes ({VECTOR_LENGTH})" in remarks[0]
    assert "tir.vector_length" not in after.script()


def test_disable_vectorize_leaves_the_loop():
    func = loop_of(add_a, extra=())
    after, remarks = run(func, {"tir.disable_vectorize": True})
    assert after is func and remarks == []


def test_vectorize_loop_alone_keeps_the_loop_serial():
    """Unchanged behaviour: without this pass the carried dependence keeps the loop serial."""
    func = loop_of(add_a, n=8, extra=())
    with transform.collect_remarks() as remarks:
        transform.VectorizeLoop()(tir.IRModule.from_expr(func))
    assert "not vectorized" in str(remarks[0])


# ---------------------------------------------------------------- recognition table

def _set(buf, index, value):
    buf[index] = value


RECOGNIZED = [
    ("add", "float32", lambda i, s, a, b: _set(s, 0, s[0] + a[i])),
    ("add swapped", "float32", lambda i, s, a, b: _set(s, 0, a[i] + s[0])),
    ("mul", "float64", lambda i, s, a, b: _set(s, 0, s[0] * a[i])),
    ("min", "int8", lambda i, s, a, b: _set(s, 0, tir.min(s[0], a[i]))),
    ("max", "uint32", lambda i, s, a, b: _set(s, 0, tir.max(a[i], s[0]))),
    ("and", "int16", lambda i, s, a, b: _set(s, 0, s[0] & a[i])),
    ("or", "bool", lambda i, s, a, b: _set(s, 0, s[0] | a[i])),
    ("xor", "uint8", lambda i, s, a, b: _set(s, 0, s[0] ^ a[i])),
    ("add", "int64", lambda i, s, a, b: _set(s, 0, s[0] + a[i] * b[i])),
]


@pytest.mark.parametrize("name,dtype,body", RECOGNIZED, ids=[r[0] + "-" + r[1]
                                                             for r in RECOGNIZED])
def test_recognized(name, dtype, body):
    found, refused = find_reductions(loop_of(body, dtype).body)
    assert refused == [] and [r.kind for r in found] == [name.split()[0]]


REFUSED = [
    ("subtraction", "float32", lambda i, s, a, b: _set(s, 0, s[0] - a[i]),
     "subtraction is not associative"),
    ("division", "float32", lambda i, s, a, b: _set(s, 0, s[0] / a[i]),
     "Div is not an associative operation"),
    ("read elsewhere", "float32",
     lambda i, s, a, b: (_set(s, 0, s[0] + a[i]), _set(b, i, s[0])),
     "B[i] = S[0] reads S, so its value is needed in every iteration"),
    ("histogram", "int32", lambda i, s, a, b: _set(b, a[i], b[a[i]] + 1),
     "the index of B changes with i (a histogram)"),
    ("nested op", "float32", lambda i, s, a, b: _set(s, 0, (s[0] + a[i]) * 2.0),
     "S is not an operand of the outer op"),
    ("float16", "float16", lambda i, s, a, b: _set(s, 0, s[0] + a[i]),
     "float16 reductions are not vectorized"),
    ("f reads acc", "float32", lambda i, s, a, b: _set(s, 0, s[0] + s[0] * a[i]),
     "reads S again in its value"),
]


@pytest.mark.parametrize("name,dtype,body,reason", REFUSED, ids=[r[0] for r in REFUSED])
def test_refused_with_reason(name, dtype, body, reason):
    func = loop_of(body, dtype)
    found, refused = find_reductions(func.body)
    assert found == [] and len(refused) == 1 and reason in refused[0].reason
    after, remarks = run(func)
    assert after is func
    assert len(remarks) == 1 and f": {NOT_A_REDUCTION}: " in remarks[0] and reason in remarks[0]


def guarded_sum(else_=False):
    """``if A[i] > 0: S[0] += A[i]`` (``else_``: ``else: B[i] = 1``)."""
    n = tir.size_var("n")
    A, S = tir.decl_buffer((n,), "float32", "A"), tir.decl_buffer((1,), "float32", "S")
    B = tir.decl_buffer((n,), "float32", "B")
    ib = ir_builder.create()
    a, s, b = ib.buffer_ptr(A), ib.buffer_ptr(S), ib.buffer_ptr(B)
    with ib.for_range(0, n, kind="vectorize", name="i") as i:
        with ib.if_scope(a[i] > 0):
            s[0] = s[0] + a[i]
        if else_:
            with ib.else_scope():
                b[i] = tir.const(1, "float32")
    return tir.PrimFunc([A, S, B], ib.get())


def test_reduction_inside_an_if_is_conditional_and_keeps_its_if():
    func = guarded_sum()
    [r], refused = find_reductions(func.body)
    assert refused == [] and r.conditional and r.kind == "add"
    after, remarks = run(func)
    assert "reduction S[0] (add, under an if)" in remarks[0]
    main = next(x for x in inside_allocations(after.body).seq if isinstance(x, tir.For))
    vector = main.body.seq[0]  # the first of the K vector loops
    assert isinstance(vector.body, tir.IfThenElse)
    assert vector.body.then_case.buffer.name == "S_acc"
    ordered, _ = run(func, {ORDERED: True})  # lanes not written keep the identity
    assert "S_vec[0:" in ordered.script() and "T.Broadcast(T.float32(-0)" in ordered.script()


def test_reduction_under_a_nested_loop_is_refused():
    n = tir.size_var("n")
    A, S = tir.decl_buffer((n, 4), "float32", "A"), tir.decl_buffer((1,), "float32", "S")
    ib = ir_builder.create()
    a, s = ib.buffer_ptr(A), ib.buffer_ptr(S)
    with ib.for_range(0, n, kind="vectorize", name="i") as i, ib.for_range(0, 4) as k:
        s[0] = s[0] + a[i, k]
    _, refused = find_reductions(ib.get())
    assert "is inside a nested loop or a let" in refused[0].reason


def test_element_wise_update_is_not_a_candidate():
    """``B[i] = B[i] + A[i]`` reads and writes the same element of each iteration only."""
    found, refused = find_reductions(loop_of(lambda i, s, a, b: _set(b, i, b[i] + a[i])).body)
    assert found == [] and refused == []


@pytest.mark.parametrize("kind,dtype,value", [
    ("add", "float32", "-0.0"), ("mul", "int8", "1"), ("min", "float64", "inf"),
    ("max", "int16", "-32768"), ("min", "uint8", "255"), ("and", "int32", "-1"),
    ("and", "uint32", "4294967295"), ("or", "bool", "0"), ("and", "bool", "1"),
    ("max", "float32", "-inf"),
])
def test_identity(kind, dtype, value):
    assert str(identity(kind, dtype).value) == value


# ---------------------------------------------------------------- searches

def search_loop(cond, then, else_=None, extra_read=False):
    """``for i in vectorized(n): if cond(a[i], m[0]): then(i, a, m, k) [else ...]``."""
    n = tir.size_var("n")
    A, M = tir.decl_buffer((n,), "float32", "A"), tir.decl_buffer((1,), "float32", "M")
    K, B = tir.decl_buffer((1,), "int32", "K"), tir.decl_buffer((n,), "float32", "B")
    ib = ir_builder.create()
    a, m, k, b = (ib.buffer_ptr(x) for x in (A, M, K, B))
    with ib.for_range(0, n, kind="vectorize", name="i") as i:
        with ib.if_scope(cond(a[i], m[0])):
            then(i, a, m, k)
        if else_ is not None:
            with ib.else_scope():
                else_(i, a, m, k)
        if extra_read:
            b[i] = m[0]
    return tir.PrimFunc([A, M, K, B], ib.get())


def take(i, a, m, k):
    m[0] = a[i]
    k[0] = i


SEARCHES = [
    ("a > m", lambda x, m: x > m, "max", True), ("m < a", lambda x, m: m < x, "max", True),
    ("a >= m", lambda x, m: x >= m, "max", False), ("m <= a", lambda x, m: m <= x, "max", False),
    ("a < m", lambda x, m: x < m, "min", True), ("m > a", lambda x, m: m > x, "min", True),
    ("a <= m", lambda x, m: x <= m, "min", False), ("m >= a", lambda x, m: m >= x, "min", False),
]


@pytest.mark.parametrize("name,cond,best,first", SEARCHES, ids=[s[0] for s in SEARCHES])
def test_search_recognized(name, cond, best, first):
    search, why_not = find_search(search_loop(cond, take).body)
    assert why_not is None and (search.best, search.first) == (best, first)
    alone, why_not = find_search(search_loop(cond, _value_only).body)
    assert why_not is None and alone.index_store is None
    assert (alone.best, alone.first) == (best, first)


def _index_plus_one(i, a, m, k):
    m[0] = a[i]
    k[0] = i + 1


def _value_only(i, a, m, k):
    m[0] = a[i]


def _other_value(i, a, m, k):
    m[0] = a[i] * 2.0
    k[0] = i


SEARCH_REFUSED = [
    ("else branch", dict(else_=take), "must be the store of the value (and of the index)"),
    ("index + 1", dict(then=_index_plus_one), "does not store the loop var i"),
    ("other value", dict(then=_other_value), "does not store A[i] to M[0]"),
    ("m read elsewhere", dict(extra_read=True), "also accesses M"),
]


@pytest.mark.parametrize("name,kwargs,reason", SEARCH_REFUSED, ids=[r[0] for r in SEARCH_REFUSED])
def test_search_refused_with_reason(name, kwargs, reason):
    kwargs = {"then": take, **kwargs}
    func = search_loop(lambda x, m: x > m, **kwargs)
    search, why_not = find_search(func.body)
    assert search is None and reason in why_not
    after, remarks = run(func)
    assert after is func and f": {NOT_A_REDUCTION}: if A[i] > M[0]: " in remarks[0]


def test_accumulator_allocated_inside_the_loop_is_refused():
    """Its fold would land after the loop, outside the allocation."""
    n = tir.size_var("n")
    A = tir.decl_buffer((n,), "float32", "A")
    ib = ir_builder.create()
    a = ib.buffer_ptr(A)
    with ib.for_range(0, n, kind="vectorize", name="i") as i:
        t = ib.allocate("float32", (1,), name="t", scope="local")
        t[0] = t[0] + a[i]
    _, refused = find_reductions(ib.get())
    assert refused and "t is allocated inside the loop" in refused[0].reason


def first_loop(cond, then=None, lo=0, else_=False):
    """``for i in vectorized(lo, n): if cond(a[i], k[0]): then(i, k)``."""
    n = tir.size_var("n")
    A, K = tir.decl_buffer((n,), "float32", "A"), tir.decl_buffer((1,), "int32", "K")
    ib = ir_builder.create()
    a, k = ib.buffer_ptr(A), ib.buffer_ptr(K)
    with ib.for_range(lo, n, kind="vectorize", name="i") as i:
        with ib.if_scope(cond(a[i], k[0])):
            (then or _store_i)(i, k)
        if else_:
            with ib.else_scope():
                k[0] = 0
    return tir.PrimFunc([A, K], ib.get())


def _store_i(i, k):
    k[0] = i


@pytest.mark.parametrize("cond", [lambda x, k: tir.all(k == -1, x > 2.0),
                                  lambda x, k: tir.all(x > 2.0, -1 == k)],
                         ids=["marker first", "marker second"])
def test_first_match_recognized(cond):
    match, why_not = find_search(first_loop(cond).body)
    assert why_not is None and match.marker.value == -1 and match.index_store.buffer.name == "K"


def test_first_match_below_a_bound_recognized():
    """``k < 0``: every index of a loop from 0 fails it, so the first store ends the search."""
    match, why_not = find_search(first_loop(lambda x, k: tir.all(k < 0, x > 2.0)).body)
    assert why_not is None and str(match.guard) == "K[0] < 0"


FIRST_REFUSED = [
    ("marker 0", dict(cond=lambda x, k: tir.all(k == 0, x > 2.0)),
     "a stored index may pass the test K[0] == 0"),
    ("negative start", dict(cond=lambda x, k: tir.all(k == -1, x > 2.0), lo=tir.var("lo")),
     "a stored index may pass the test K[0] == -1"),
    ("k < 1", dict(cond=lambda x, k: tir.all(k < 1, x > 2.0)),
     "a stored index may pass the test K[0] < 1"),
    ("index + 1", dict(cond=lambda x, k: tir.all(k == -1, x > 2.0),
                       then=lambda i, k: k.__setitem__(0, i + 1)), "does not store the loop var"),
    ("else branch", dict(cond=lambda x, k: tir.all(k == -1, x > 2.0), else_=True),
     "must be exactly the store to K[0], no else"),
]


@pytest.mark.parametrize("name,kwargs,reason", FIRST_REFUSED, ids=[r[0] for r in FIRST_REFUSED])
def test_first_match_refused_with_reason(name, kwargs, reason):
    func = first_loop(**kwargs)
    match, why_not = find_search(func.body)
    assert match is None and reason in why_not
    after, remarks = run(func)
    assert after is func and NOT_A_REDUCTION in remarks[0]


# ---------------------------------------------------------------- shared nodes


def test_accumulator_read_again_through_a_shared_node_is_refused():
    """acc[0] = min(acc[0], acc[0] % 1024 - i) with ONE BufferLoad object used twice (as
    Simplify may share nodes): still a second read of acc, so no reduction (a fuzzer find)."""
    acc = tir.decl_buffer((1,), "int32", "acc")
    i = tir.var("i")
    own = tir.BufferLoad(acc, [tir.const(0, "int32")])
    store = tir.BufferStore(acc, tir.min(own, tir.truncmod(own, 1024) - i),
                            [tir.const(0, "int32")])
    loop = tir.For(i, 0, 64, tir.ForKind.VECTORIZED, store)
    found, refused = find_reductions(loop)
    assert found == [] and "reads acc again" in refused[0].reason


def test_search_value_read_elsewhere_through_a_shared_node_is_refused():
    """``b[i] = m[0]`` beside the search, with the compare's own m[0] object: refused."""
    n = tir.size_var("n")
    A, M = tir.decl_buffer((n,), "float32", "A"), tir.decl_buffer((1,), "float32", "M")
    K, B = tir.decl_buffer((1,), "int32", "K"), tir.decl_buffer((n,), "float32", "B")
    i = tir.var("i")
    m0 = tir.BufferLoad(M, [tir.const(0, "int32")])
    a_i = tir.BufferLoad(A, [i])
    search = tir.IfThenElse(a_i > m0, tir.SeqStmt([
        tir.BufferStore(M, a_i, [tir.const(0, "int32")]),
        tir.BufferStore(K, i, [tir.const(0, "int32")])]))
    body = tir.SeqStmt([search, tir.BufferStore(B, m0, [i])])
    search_found, why_not = find_search(tir.For(i, 0, n, tir.ForKind.VECTORIZED, body))
    assert search_found is None and "also accesses M" in why_not


def test_unary_update_of_the_accumulator_is_refused_not_a_crash():
    """``flag[0] = !flag[0]`` reads and writes one element but has no two operands."""
    flag = tir.decl_buffer((1,), "bool", "flag")
    i = tir.var("i")
    zero = tir.const(0, "int32")
    store = tir.BufferStore(flag, tir.Not(tir.BufferLoad(flag, [zero])), [zero])
    found, refused = find_reductions(tir.For(i, 0, 64, tir.ForKind.VECTORIZED, store))
    assert found == [] and "not an associative operation" in refused[0].reason


def _strided_sum(term, dtype="float32", n=None):
    """``S[0] = S[0] + term(A, B, i)`` over A of 3n and B of n elements."""
    n = tir.size_var("n") if n is None else n
    A = tir.decl_buffer((3 * n,), dtype, "A")
    B = tir.decl_buffer((n,), dtype, "B")
    S = tir.decl_buffer((1,), dtype, "S")
    ib = ir_builder.create()
    a, b, s = (ib.buffer_ptr(x) for x in (A, B, S))
    with ib.for_range(0, n, kind="vectorize", name="i") as i:
        s[0] = s[0] + term(a, b, i)
    return tir.PrimFunc([A, B, S], ib.get())


# Float terms read through shuffled strided loads get 2 accumulators, not 4
# (analysis/strided_terms.py); terms that cover a contiguous run, or contiguous ones, keep 4.
@pytest.mark.parametrize("term, k", [
    (lambda a, b, i: a[3 * i], 2),
    (lambda a, b, i: a[2 * i], 2),
    (lambda a, b, i: a[3 * i] + a[3 * i + 1], 2),
    (lambda a, b, i: a[3 * i] * b[i], 4),
    (lambda a, b, i: a[2 * i] + a[2 * i + 1], 4),
    (lambda a, b, i: a[i], 4),
])
def test_accumulators_for_strided_terms(term, k):
    _, remarks = run(_strided_sum(term))
    assert f"{k} accumulators of" in remarks[0], remarks


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])
@pytest.mark.parametrize("n", [0, 1, 5 * VL + 3, 1001])
def test_strided_sums_with_two_accumulators_match_numpy(dtype, n):
    func = _strided_sum(lambda a, b, i: a[3 * i], dtype)
    mod = codegen.build(func)
    rng = np.random.default_rng(n)
    if dtype == "int32":
        a = rng.integers(-2**31, 2**31, 3 * n, dtype=np.int64).astype(np.int32)
    else:
        a = (rng.standard_normal(3 * n) * 1e3).astype(dtype)
        a[::7] = -0.0
    s = np.zeros(1, dtype)
    mod(a, np.zeros(n, dtype), s)
    if dtype == "int32":  # wraps as the serial int32 loop does in practice
        assert s[0] == a[::3].sum(dtype=np.int32)
    else:
        expected = a[::3].sum(dtype=np.float64)
        bound = (n + 1) * np.finfo(dtype).eps * np.abs(a[::3]).sum(dtype=np.float64)
        assert abs(float(s[0]) - expected) <= bound
