"""Lesson 2: inside the vectorizer -- how VectorizeLoop rewrites a loop, rule by rule.

We take the smallest interesting program, a vector add over a flat buffer::

    for i in range(n):
        for j in vectorized(4):
            A[i*4 + j] = A[i*4 + j] + 1f

and watch ``transform.VectorizeLoop`` turn the ``j`` loop into four-lane
vector code. The pass walks the loop body depth first (the store's index,
then its value: the load, the constant, the add) and applies one rule per
node kind; we subclass its ``Vectorizer`` to print every rule as it fires.
Then we look at what happens when a loop *cannot* be vectorized, and how to
turn vectorization off.

Run it with ``python tutorials/02_vectorizer_walkthrough.py``.
"""

import tir
import transform
from tir import ir_builder
from tir.expr import Broadcast, BufferLoad, FloatImm, IntImm, Ramp
from tir.stmt import BufferStore, For, ForKind
from transform.vector import Vectorizer

LANES = 4


def build_vector_add() -> tir.PrimFunc:
    """A[i*4 + j] += 1 for i in [0, n), with j vectorized."""
    n = tir.var("n")
    ib = ir_builder.create()
    A = ib.pointer("float32", name="A")
    with ib.for_range(0, n, name="i") as i:
        with ib.for_range(0, LANES, kind="vectorize", name="j") as j:
            A[i * LANES + j] += tir.const(1, "float32")
    return tir.PrimFunc([A, n], ib.get())


class TracingVectorizer(Vectorizer):
    """The pass's Vectorizer, printing each rule it applies.

    Each ``visit_<node>`` method is the rule for one node kind (the real ones
    are in transform/vector/vectorizer/expr_rules.py); we call the rule, then print
    what it returned. A rule returns the very same node when nothing in it
    depends on the loop var, so ``out is not node`` means "this rule fired".
    """

    # Rule 1: the loop var j becomes the vector of lane indices Ramp(min, 1, lanes).
    def visit_var(self, node):
        out = super().visit_var(node)
        if out is not node:
            print(f"  Var       {node}  ->  {out}          (the loop var is the lane index)")
        return out

    # Rule 2: scalar + ramp is still a ramp, with the scalar added to its base:
    # i*4 + Ramp(0, 1, 4) = Ramp(i*4, 1, 4). Other adds become lane-by-lane adds.
    def visit_add(self, node):
        out = super().visit_add(node)
        if out is not node and isinstance(out, Ramp):
            print(f"  Add       {node}  ->  {out}   (scalar + ramp stays a ramp)")
        elif out is not node:
            print(f"  Add       {node}  ->  {out}   (lane by lane)")
        return out

    # Rule 3: (see wide) the scalar constant 1f is broadcast to 4 lanes.
    def wide(self, new, old_lanes):
        # Where a value that does not depend on j meets one that does, it is
        # replicated to the full width: a scalar becomes a Broadcast. (For i * 4
        # that Broadcast then merges with the ramp, so we only show constants.)
        out = super().wide(new, old_lanes)
        if isinstance(out, Broadcast) and isinstance(new, (IntImm, FloatImm)):
            print(f"  Broadcast {new}  ->  {out}   (a scalar constant meets a vector)")
        return out

    # Rule 5 (seed 004's Mul): Ramp(b, s) * x = Ramp(b*x, s*x) only when the
    # analyzer proves x > 0; otherwise the product is computed lane by lane.
    def visit_mul(self, node):
        out = super().visit_mul(node)
        if isinstance(out, Ramp):
            print(f"  Mul       {node}  ->  {out}   (ramp * positive scalar stays a ramp)")
        elif out is not node:
            print(f"  Mul       {node}  ->  {out}   (sign unknown: lane by lane)")
        return out

    # Rule 4: a load whose index became a ramp reads `lanes` consecutive
    # elements at once; a store likewise writes them.
    def visit_buffer_load(self, node):
        out = super().visit_buffer_load(node)
        if out is not node:
            print(f"  Load      {node}  ->  {out}   (ramp index: one vector load)")
        return out

    def visit_buffer_store(self, node):
        out = super().visit_buffer_store(node)
        if out is not node:
            print(f"  Store     {node}\n         -> {out}")
        return out


def walk_through_the_rules(func: tir.PrimFunc) -> tir.Stmt:
    """Vectorize the j loop by hand with the tracing vectorizer; returns the new i-loop body."""
    outer = func.body
    inner = outer.body
    assert isinstance(inner, For) and inner.kind == ForKind.VECTORIZED
    print(f"=== vectorizing loop {inner.loop_var} ({inner.extent} lanes), node by node ===")
    vectorizer = TracingVectorizer(inner.loop_var, inner.extent.value, inner.min)
    return vectorizer.vectorize(inner.body)


def show_the_mul_rule() -> None:
    """j * 2 stays a ramp (2 > 0); j * m does not, as m may be negative or zero."""
    j, m = tir.var("j"), tir.var("m")
    print("=== the Mul rule: when is ramp * x still a ramp? ===")
    tracer = TracingVectorizer(j, LANES)
    assert isinstance(tracer.visit_expr(j * 2), Ramp)
    assert not isinstance(tracer.visit_expr(j * m), Ramp)


def show_a_scalarized_loop() -> None:
    """A guard on the loop var cannot be one vector instruction: the loop stays serial."""
    n = tir.var("n")
    ib = ir_builder.create()
    A = ib.pointer("float32", name="A")
    with ib.for_range(0, LANES, kind="vectorize", name="j") as j, ib.if_scope(j < n):
        A[j] = A[j] * tir.const(2, "float32")
    mod = tir.IRModule.from_expr(tir.PrimFunc([A, n], ib.get()))

    print("=== a loop the vectorizer must scalarize (remarks printed by the pass) ===")
    with transform.PassContext(config={"tir.vectorize_remarks": True}) as ctx:
        out = transform.VectorizeLoop()(mod)
    print(out["main"].body)
    [remark] = ctx.remarks  # the entered PassContext collects the remarks too
    assert (remark.outcome, remark.reason) == ("scalarized", "if condition depends on j")
    assert out["main"].body.kind == ForKind.SERIAL


def show_a_dependence() -> None:
    """A recurrence: iteration j reads what iteration j - 1 wrote, so lanes cannot run at once.

    Vector code would load A[j - 1] for all lanes before storing any A[j]: every
    lane but the first would read a stale value. The legality analysis
    (transform/vector/analysis/legality.py) finds the distance-1 dependence and keeps
    the loop serial, naming it in the remark.
    """
    ib = ir_builder.create()
    A = ib.pointer("float32", name="A")
    with ib.for_range(1, LANES + 1, kind="vectorize", name="j") as j:
        A[j] = A[j - 1] + tir.const(1, "float32")
    mod = tir.IRModule.from_expr(tir.PrimFunc([A], ib.get()))

    print("=== a loop with a dependence between iterations ===")
    with transform.collect_remarks() as remarks:
        out = transform.VectorizeLoop()(mod)
    print(out["main"].body)
    [remark] = remarks
    print("remark:", remark)
    assert remark.outcome == "not vectorized" and "(distance 1)" in remark.reason
    assert out["main"].body.kind == ForKind.SERIAL


def main() -> None:
    func = build_vector_add()
    mod = tir.IRModule.from_expr(func)
    print("=== before: j is a vectorized loop ===")
    print(func.body)

    # 1. The rules, one by one: Var -> Ramp, i*4 + Ramp -> Ramp, the load, the
    #    constant 1f broadcast to 4 lanes, the add, the store.
    by_hand = walk_through_the_rules(func)

    # 2. The pass does exactly this for every vectorized loop it finds.
    after = transform.VectorizeLoop()(mod)["main"]
    print("=== after VectorizeLoop: the j loop is gone ===")
    print(after.body)
    tir.assert_structural_equal(after.body.body, by_hand)

    # The store is now one 4-lane load, add and store at Ramp(i*4, 1, 4).
    a, i = func.buffer_map[func.params[0]], after.body.loop_var
    index = Ramp(i * LANES, 1, LANES)
    one = Broadcast(tir.const(1, "float32"), LANES)
    tir.assert_structural_equal(by_hand, BufferStore(a, BufferLoad(a, [index]) + one, [index]))

    # 3. Multiplying a ramp needs a proof that the factor is positive.
    show_the_mul_rule()

    # 4. When the rules do not apply, the loop stays correct: it runs serially.
    show_a_scalarized_loop()

    # 5. Before any rewrite, the legality analysis checks that lanes may run at once.
    show_a_dependence()

    # 6. Vectorization off: vectorized loops just become serial loops.
    with transform.PassContext(config={"tir.disable_vectorize": True}):
        serial = transform.VectorizeLoop()(mod)["main"]
    print("=== with tir.disable_vectorize: a plain serial loop ===")
    print(serial.body)
    assert serial.body.body.kind == ForKind.SERIAL


if __name__ == "__main__":
    main()
