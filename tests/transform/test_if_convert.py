"""IfConvertVectorLoops: Before (ir_builder) / After (built by hand) and the remarks."""

import pytest

import codegen  # noqa: F401  (installs the target-width resolver StripMineVectorLoops needs)
import tir
import transform
from tir import ir_builder
from tir.expr import BufferLoad, Select
from tir.node import replace
from tir.stmt import (
    Allocate,
    AssertStmt,
    AttrStmt,
    BufferStore,
    Evaluate,
    For,
    ForKind,
    IfThenElse,
    LetStmt,
    SeqStmt,
    While,
)

F32, I32 = "float32", "int32"
ZERO = tir.const(0.0, F32)


def convert(func: tir.PrimFunc, config: dict | None = None) -> tuple[tir.PrimFunc, list]:
    """The pass's output under ``config`` and the remarks it emitted."""
    with transform.collect_remarks() as remarks, transform.PassContext(config=config or {}):
        after = transform.IfConvertVectorLoops()(tir.IRModule.from_expr(func))["main"]
    return after, [r.line for r in remarks]


def kernel(body, dtype=F32, extent=16):
    """``for j in vectorized(extent): body(ib, a, b, c, j, k)`` over A, B (16,), C (n,)."""
    n, k = tir.var("n"), tir.var("k")
    A = tir.decl_buffer((16,), dtype, name="A")
    B = tir.decl_buffer((16,), dtype, name="B")
    C = tir.decl_buffer((n,), dtype, name="C")
    ib = ir_builder.create()
    a, b, c = (ib.buffer_ptr(x) for x in (A, B, C))
    with ib.for_range(0, extent, kind="vectorize", name="j") as j:
        body(ib, a, b, c, j, k)
    return tir.PrimFunc([A, B, C, k], ib.get()), (A, B, C), k


def expect(before: tir.PrimFunc, body) -> tir.PrimFunc:
    """``before`` with the vectorized loop's body replaced by ``body``."""
    return before.with_body(replace(before.body, body=body))


def test_if_without_else_predicates_the_store_and_keeps_in_bounds_loads():
    def body(ib, a, b, c, j, k):
        with ib.if_scope(a[j] > 0.0):
            b[j] = a[j] * 2.0

    before, (A, B, _), _ = kernel(body)
    after, remarks = convert(before)
    j = before.body.loop_var
    cond = BufferLoad(A, [j]) > ZERO
    store = BufferStore(B, BufferLoad(A, [j]) * tir.const(2.0, F32), [j], predicate=cond)
    tir.assert_structural_equal(after, expect(before, store))
    assert remarks == ["main: loop j: if-converted: if A[j] > T.float32(0) (1 masked store)"]


def test_if_else_masks_the_else_branch_and_its_unsafe_load():
    def body(ib, a, b, c, j, k):
        with ib.if_scope(a[j] > 0.0):
            b[j] = a[j]
        with ib.else_scope():
            c[j] = c[j + k]

    before, (A, B, C), k = kernel(body)
    after, remarks = convert(before)
    j = before.body.loop_var
    cond = BufferLoad(A, [j]) > ZERO
    other = tir.Not(cond)
    expected = SeqStmt([
        BufferStore(B, BufferLoad(A, [j]), [j], predicate=cond),
        # C has n elements: neither C[j] nor C[j + k] is provably in bounds
        BufferStore(C, BufferLoad(C, [j + k], predicate=other), [j], predicate=other),
    ])
    tir.assert_structural_equal(after, expect(before, expected))
    assert remarks == [
        "main: loop j: if-converted: if A[j] > T.float32(0) (2 masked stores, 1 masked load)"]


def test_same_location_stores_become_one_select():
    def body(ib, a, b, c, j, k):
        with ib.if_scope(a[j] > 0.0):
            b[j] = a[j]
        with ib.else_scope():
            b[j] = a[j] * -0.5

    before, (A, B, _), _ = kernel(body)
    after, remarks = convert(before)
    j = before.body.loop_var
    value = Select(BufferLoad(A, [j]) > ZERO, BufferLoad(A, [j]),
                   BufferLoad(A, [j]) * tir.const(-0.5, F32))
    tir.assert_structural_equal(after, expect(before, BufferStore(B, value, [j])))
    assert remarks[0].startswith("main: loop j: if-converted: if ")
    assert remarks[0].endswith(" (1 select)")


def test_select_masks_each_side_load_that_may_be_out_of_bounds():
    def body(ib, a, b, c, j, k):
        with ib.if_scope(a[j] > 0.0):
            b[j] = c[j + k]
        with ib.else_scope():
            b[j] = c[j - k]

    before, (A, B, C), k = kernel(body)
    after, remarks = convert(before)
    j = before.body.loop_var
    cond = BufferLoad(A, [j]) > ZERO
    value = Select(cond, BufferLoad(C, [j + k], predicate=cond),
                   BufferLoad(C, [j - k], predicate=tir.Not(cond)))
    tir.assert_structural_equal(after, expect(before, BufferStore(B, value, [j])))
    assert remarks[0].endswith("(1 select, 2 masked loads)")


def test_in_bounds_load_stays_unmasked_one_past_the_end_is_masked():
    def body(ib, a, b, c, j, k):
        with ib.if_scope(a[j] > 0.0):
            b[j] = a[j] + a[j + 1]  # j + 1 reaches A[16] on the last iteration

    before, (A, B, _), _ = kernel(body)
    after, _ = convert(before)
    j = before.body.loop_var
    cond = BufferLoad(A, [j]) > ZERO
    value = BufferLoad(A, [j]) + BufferLoad(A, [j + 1], predicate=cond)
    tir.assert_structural_equal(after, expect(before, BufferStore(B, value, [j],
                                                                  predicate=cond)))


def test_nested_ifs_and_their_masks_and_mask_the_inner_condition():
    def body(ib, a, b, c, j, k):
        with ib.if_scope(a[j] > 0.0), ib.if_scope(c[j + k] > 1.0):
            b[j] = a[j]

    before, (A, B, C), k = kernel(body)
    after, remarks = convert(before)
    j = before.body.loop_var
    outer = BufferLoad(A, [j]) > ZERO
    inner = BufferLoad(C, [j + k], predicate=outer) > tir.const(1.0, F32)
    store = BufferStore(B, BufferLoad(A, [j]), [j], predicate=tir.And(outer, inner))
    tir.assert_structural_equal(after, expect(before, store))
    assert len(remarks) == 1  # the nested if is part of the outer one's conversion


def test_let_in_branch_masks_the_loads_of_its_value():
    def body(ib, a, b, c, j, k):
        with ib.if_scope(a[j] > 0.0):
            t = ib.let("t", c[j + k] * 2.0)
            b[j] = t

    before, (A, B, C), k = kernel(body)
    after, _ = convert(before)
    j = before.body.loop_var
    cond = BufferLoad(A, [j]) > ZERO
    let = after.body.body
    assert isinstance(let, LetStmt)
    expected = LetStmt(let.var, BufferLoad(C, [j + k], predicate=cond) * tir.const(2.0, F32),
                       BufferStore(B, let.var, [j], predicate=cond))
    tir.assert_structural_equal(after, expect(before, expected))


def test_integer_division_by_a_loaded_value_divides_by_one_on_off_lanes():
    def body(ib, a, b, c, j, k):
        with ib.if_scope(b[j] != 0):
            a[j] = tir.floordiv(a[j], b[j]) + tir.floordiv(a[j], 4) + tir.truncdiv(a[j], -1)

    before, (A, B, _), _ = kernel(body, dtype=I32)
    after, remarks = convert(before)
    j = before.body.loop_var
    cond = tir.NE(BufferLoad(B, [j]), tir.const(0, I32))
    load_a = BufferLoad(A, [j])
    value = (tir.FloorDiv(load_a, Select(cond, BufferLoad(B, [j]), tir.const(1, I32)))
             + tir.FloorDiv(load_a, tir.const(4, I32))  # a positive constant cannot trap
             + tir.Div(load_a, Select(cond, tir.const(-1, I32), tir.const(1, I32))))  # INT_MIN
    tir.assert_structural_equal(after, expect(before, BufferStore(A, value, [j],
                                                                  predicate=cond)))
    assert remarks[0].endswith("(1 masked store, 2 guarded divisions)")


def test_condition_the_branch_overwrites_is_evaluated_once_in_a_let():
    def body(ib, a, b, c, j, k):
        with ib.if_scope(a[j] > 0.0):
            a[j] = ZERO
            b[j] = a[j] + 1.0

    before, (A, B, _), _ = kernel(body)
    after, _ = convert(before)
    j = before.body.loop_var
    let = after.body.body
    assert isinstance(let, LetStmt) and let.var.dtype == "bool"
    expected = LetStmt(let.var, BufferLoad(A, [j]) > ZERO, SeqStmt([
        BufferStore(A, ZERO, [j], predicate=let.var),
        BufferStore(B, BufferLoad(A, [j]) + tir.const(1.0, F32), [j], predicate=let.var),
    ]))
    tir.assert_structural_equal(after, expect(before, expected))


def _store(B, j):
    return BufferStore(B, ZERO, [j])


REFUSALS = {
    "loop": (lambda B, j: For(tir.var("v"), 0, 2, ForKind.SERIAL, _store(B, j)),
             "the branch contains a loop"),
    "while": (lambda B, j: While(tir.const(False), _store(B, j)),
              "the branch contains a while loop"),
    "allocate": (lambda B, j: Allocate(tir.Var("s", "handle"), F32, [4], tir.const(True),
                                       _store(B, j)), "the branch allocates s"),
    "assert": (lambda B, j: AssertStmt(j < 100, tir.StringImm("big"), _store(B, j)),
               "the branch contains an assert"),
    "attr": (lambda B, j: AttrStmt(None, "pragma_x", tir.const(1, I32), _store(B, j)),
             "the branch contains an attribute statement (pragma_x)"),
    "extern": (lambda B, j: Evaluate(tir.call_extern(I32, "log_it", j)),
               "the branch calls extern function 'log_it', which may have side effects"),
    "address_of": (lambda B, j: Evaluate(tir.call_intrin("handle", "tir.address_of",
                                                         BufferLoad(B, [j]))),
                   "the branch takes an address (tir.address_of)"),
    "vector": (lambda B, j: BufferStore(B, tir.Broadcast(ZERO, 2), [tir.Ramp(0, 1, 2)]),
               "the branch has a vector access to B"),
}


@pytest.mark.parametrize("name", REFUSALS)
def test_hazard_leaves_the_if_and_says_why(name):
    make, reason = REFUSALS[name]

    def body(ib, a, b, c, j, k):
        with ib.if_scope(a[j] > 0.0):
            ib.emit(make(b.asbuffer() if hasattr(b, "asbuffer") else b.buffer, j))

    before, _, _ = kernel(body)
    after, remarks = convert(before)
    assert after.body is before.body
    assert remarks == [f"main: loop j: not if-converted: if A[j] > T.float32(0): {reason}"]


def test_side_effect_in_the_condition_is_refused():
    def body(ib, a, b, c, j, k):
        with ib.if_scope(tir.call_extern(I32, "poll", j) > 0):
            b[j] = ZERO

    before, _, _ = kernel(body)
    after, remarks = convert(before)
    assert after.body is before.body
    assert remarks[0].startswith("main: loop j: not if-converted: if ")
    assert remarks[0].endswith(": the condition calls extern function 'poll', "
                               "which may have side effects")


def test_condition_not_depending_on_the_var_is_left_alone():
    def body(ib, a, b, c, j, k):
        with ib.if_scope(k > 0):
            b[j] = a[j]

    before, _, _ = kernel(body)
    after, remarks = convert(before)
    assert after.body is before.body and remarks == []


def test_condition_on_a_let_of_the_var_is_converted():
    def body(ib, a, b, c, j, k):
        t = ib.let("t", j * 2)
        with ib.if_scope(t < k):
            b[j] = a[j]

    before, _, _ = kernel(body)
    _, remarks = convert(before)
    assert remarks == ["main: loop j: if-converted: if t < k (1 masked store)"]


def if_kernel():
    def body(ib, a, b, c, j, k):
        with ib.if_scope(a[j] > 0.0):
            b[j] = a[j]

    return kernel(body)[0]


@pytest.mark.parametrize("config", [{"tir.vectorize.if_conversion": False},
                                    {"tir.disable_vectorize": True}])
def test_config_turns_the_pass_off(config):
    before = if_kernel()
    after, remarks = convert(before, config)
    assert after.body is before.body and remarks == []


def test_serial_loops_are_not_touched():
    n = tir.var("n")
    A = tir.decl_buffer((n,), F32, name="A")
    ib = ir_builder.create()
    a = ib.buffer_ptr(A)
    with ib.for_range(0, n, name="i") as i, ib.if_scope(a[i] > 0.0):
        a[i] = ZERO
    before = tir.PrimFunc([A], ib.get())
    after, remarks = convert(before)
    assert after.body is before.body and remarks == []


def test_vectorize_loop_alone_still_scalarizes_the_if():
    """TVM's VectorizeLoop keeps a var-dependent if serial; only the new pass converts it."""
    with transform.collect_remarks() as remarks:
        after = transform.VectorizeLoop()(tir.IRModule.from_expr(if_kernel()))["main"]
    assert isinstance(after.body, For) and after.body.kind == ForKind.SERIAL
    assert "scalarized: if condition depends on j" in str(remarks[0])


def test_converted_loop_vectorizes_with_vector_predicates():
    converted, _ = convert(if_kernel())
    with transform.collect_remarks() as remarks:
        after = transform.VectorizeLoop()(tir.IRModule.from_expr(converted))["main"]
    assert [r.outcome for r in remarks] == ["vectorized"]
    assert isinstance(after.body, BufferStore) and after.body.predicate.dtype == "boolx16"


def test_legality_still_sees_predicated_accesses():
    """``if A[j] > 0: A[j + 1] = 1`` carries a dependence; its mask does not hide it."""
    def body(ib, a, b, c, j, k):
        with ib.if_scope(a[j] > 0.0):
            a[j + 1] = tir.const(1.0, F32)

    before, _, _ = kernel(body, extent=15)
    converted, _ = convert(before)
    with transform.collect_remarks() as remarks:
        transform.VectorizeLoop()(tir.IRModule.from_expr(converted))
    assert remarks[0].outcome == "not vectorized"
    assert "A[j + 1]" in remarks[0].reason


def test_tail_guard_is_left_to_predication_and_the_user_if_inside_is_converted():
    n = tir.var("n")
    A = tir.decl_buffer((n,), F32, name="A")
    B = tir.decl_buffer((n,), F32, name="B")
    ib = ir_builder.create()
    a, b = ib.buffer_ptr(A), ib.buffer_ptr(B)
    with ib.for_range(0, n, kind="vectorize", name="j") as j, ib.if_scope(a[j] > 0.0):
        b[j] = a[j]
    mod = tir.IRModule.from_expr(tir.PrimFunc([A, B], ib.get()))
    with transform.collect_remarks() as remarks:
        mod = transform.Sequential([transform.StripMineVectorLoops(),
                                    transform.IfConvertVectorLoops()])(mod)
    tail = mod["main"].body.seq[1]
    assert isinstance(tail.body, IfThenElse)  # the tail guard stays, for predicate.py
    assert isinstance(tail.body.then_case, BufferStore)  # the user's if is gone
    assert tail.body.then_case.predicate is not None
    with transform.collect_remarks() as vector_remarks:
        transform.VectorizeLoop()(mod)
    # The user's if in the main loop and in the tail: one remark, in the user's index.
    assert [r.line for r in remarks] == [
        "main: loop j: if-converted: if T.float32(0) < A[j] (1 masked store)"]
    assert [r.outcome for r in vector_remarks] == ["vectorized", "predicated"]


def test_predicated_store_left_scalar_by_vectorize_loop_is_an_if_again():
    """A masked store to one element cannot be vector code; scalarized, it reads as a branch."""
    def body(ib, a, b, c, j, k):
        with ib.if_scope(a[j] > 0.0):
            b[0] = a[j]

    before, (A, B, _), _ = kernel(body)
    converted, _ = convert(before)
    with transform.collect_remarks() as remarks:
        after = transform.VectorizeLoop()(tir.IRModule.from_expr(converted))["main"]
    assert remarks[0].outcome in ("scalarized", "not vectorized")
    loop = after.body
    cond = BufferLoad(A, [loop.loop_var]) > ZERO
    expected = For(loop.loop_var, 0, 16, ForKind.SERIAL,
                   IfThenElse(cond, BufferStore(B, BufferLoad(A, [loop.loop_var]), [0])))
    tir.assert_structural_equal(after.body, expected)


def test_uniform_load_of_a_branch_stays_guarded_through_vectorize_and_simplify():
    """Repro 23: ``if i*16 + j < 3: B[i, j] = P[3 - 2*i] else: B[i, j] = j``. The load of
    P (out of bounds where i >= 2, where no lane takes the branch) is masked by the
    condition; scalarized, the mask is an if_then_else, which Simplify must keep inside
    the Select: the Select's condition is no fact about a value it computes anyway."""
    B = tir.decl_buffer((4, 16), I32, name="B")
    P = tir.decl_buffer((4,), I32, name="P")
    ib = ir_builder.create()
    b, p = ib.buffer_ptr(B), ib.buffer_ptr(P)
    with ib.for_range(0, 4, name="i") as i:
        with ib.for_range(0, 16, name="j", kind="vectorize") as j:
            with ib.if_scope(i * 16 + j < 3):
                b[i, j] = p[3 - 2 * i]
            with ib.else_scope():
                b[i, j] = j
    before = tir.PrimFunc([B, P], ib.get())
    converted, _ = convert(before)
    i, j = before.body.loop_var, before.body.body.loop_var
    cond = i * 16 + j < 3
    load = BufferLoad(P, [3 - 2 * i], predicate=cond)
    tir.assert_structural_equal(
        converted.body.body.body, BufferStore(B, Select(cond, load, j), [i, j]))
    passes = transform.Sequential([transform.VectorizeLoop(), transform.Simplify()])
    after = passes(tir.IRModule.from_expr(converted))["main"].body.body
    js = after.loop_var
    cond = i * 16 + js < 3
    guarded = tir.if_then_else(cond, BufferLoad(P, [3 - i * 2]), tir.const(0, I32))
    tir.assert_structural_equal(after.body, BufferStore(B, Select(cond, guarded, js), [i, js]))
