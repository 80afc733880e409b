"""Simplify: Before/After pairs, facts from loops, branches and lets, and identity."""

import math

import pytest

import tir
import transform
from tir import Evaluate, For, ForKind, IfThenElse, LetStmt, SeqStmt

A = tir.decl_buffer((64,), "float32", name="A")
n = tir.Var("n", "int32")


def _func(body):
    return tir.PrimFunc([A, n], body)


def _run(body):
    return transform.Simplify()(tir.IRModule.from_expr(_func(body)))["main"].body


def _store(index, value=1.0):
    return tir.BufferStore(A, tir.const(value), [index])


def _loop(var, extent, body, lo=0):
    return For(var, lo, extent, ForKind.SERIAL, body)


# ------------------------------------------------------------------ expressions


@pytest.mark.parametrize(
    "make_index, expected",
    [
        (lambda i: tir.Add(i, 0), lambda i: i),
        (lambda i: tir.Sub(tir.Add(tir.Mul(i, 2), 3), 3), lambda i: i * 2),
        (lambda i: tir.floordiv(i, 8), lambda i: tir.const(0)),  # i in [0, 8)
        (lambda i: tir.floormod(i, 8), lambda i: i),
        (lambda i: tir.min(i, 8), lambda i: i),
        (lambda i: tir.max(i, -1), lambda i: i),
    ],
)
def test_expressions_simplify_under_loop_range(make_index, expected):
    i = tir.Var("i", "int32")
    out = _run(_loop(i, 8, _store(make_index(i))))
    tir.assert_structural_equal(out, _loop(i, 8, _store(expected(i))))


def test_symbolic_loop_range_is_used():
    i = tir.Var("i", "int32")
    # i in [0, n): i < n always holds in the body.
    out = _run(_loop(i, n, IfThenElse(i < n, _store(i))))
    tir.assert_structural_equal(out, _loop(i, n, _store(i)))


def test_loop_min_and_extent_are_simplified():
    i = tir.Var("i", "int32")
    out = _run(For(i, tir.Sub(n, n), tir.Add(n, 0), ForKind.SERIAL, _store(i)))
    tir.assert_structural_equal(out, _loop(i, n, _store(i)))


# ------------------------------------------------------------------ dead code


def test_constant_true_and_false_branches():
    then_s, else_s = _store(1), _store(2)
    assert _run(IfThenElse(tir.const(True), then_s, else_s)) is then_s
    assert _run(IfThenElse(tir.const(False), then_s, else_s)) is else_s
    out = _run(IfThenElse(tir.const(False), then_s))
    assert isinstance(out, Evaluate) and out.value.value == 0


def test_branch_proven_by_loop_range_is_removed():
    i = tir.Var("i", "int32")
    body = SeqStmt([IfThenElse(i < 16, _store(i)), IfThenElse(i >= 16, _store(i + 1))])
    out = _run(_loop(i, 16, body))
    tir.assert_structural_equal(out, _loop(i, 16, SeqStmt([_store(i), Evaluate(0)])))


def test_likely_condition_is_seen_through():
    i = tir.Var("i", "int32")
    out = _run(_loop(i, 16, IfThenElse(tir.likely(i < 16), _store(i))))
    tir.assert_structural_equal(out, _loop(i, 16, _store(i)))


def test_then_branch_knows_condition():
    i = tir.Var("i", "int32")
    inner = IfThenElse(i < 8, _store(i), _store(i + 1))
    out = _run(_loop(i, n, IfThenElse(i < 4, inner)))
    tir.assert_structural_equal(out, _loop(i, n, IfThenElse(i < 4, _store(i))))


def test_else_branch_knows_negated_condition():
    i = tir.Var("i", "int32")
    stmt = IfThenElse(i < 4, _store(i), IfThenElse(i >= 4, _store(i + 1), _store(i + 2)))
    out = _run(_loop(i, n, stmt))
    tir.assert_structural_equal(out, _loop(i, n, IfThenElse(i < 4, _store(i), _store(i + 1))))


def test_facts_do_not_leak_out_of_a_branch():
    i = tir.Var("i", "int32")
    stmt = SeqStmt([IfThenElse(i < 4, _store(i)), IfThenElse(i < 4, _store(i + 1))])
    out = _run(_loop(i, n, stmt))
    tir.assert_structural_equal(out, _loop(i, n, stmt))


def test_assert_condition_holds_in_its_body():
    i = tir.Var("i", "int32")
    body = tir.AssertStmt(n >= 4, "n too small", _loop(i, 4, IfThenElse(i < n, _store(i))))
    out = _run(body)
    expected = tir.AssertStmt(n >= 4, "n too small", _loop(i, 4, _store(i)))
    tir.assert_structural_equal(out.body, expected.body)


def test_zero_extent_loop_is_dropped():
    i = tir.Var("i", "int32")
    body = SeqStmt([_loop(i, tir.Sub(n, n), _store(i)), _store(n)])
    out = _run(body)
    tir.assert_structural_equal(out, SeqStmt([Evaluate(0), _store(n)]))


def test_while_false_is_dropped():
    out = _run(tir.While(tir.const(False), _store(0)))
    assert isinstance(out, Evaluate)


def test_branches_that_wraparound_can_flip_are_kept():
    U = tir.decl_buffer((1,), "uint8", name="U")
    u, c8 = tir.BufferLoad(U, [0]), (lambda v: tir.const(v, "uint8"))
    body = SeqStmt([IfThenElse(u - c8(255) <= c8(0), _store(0)),   # U[0] = 7: 7 - 255 = 8
                    IfThenElse(u + c8(5) >= c8(5), _store(1))])     # U[0] = 255: 255 + 5 = 4
    func = tir.PrimFunc([A, U], body)
    out = transform.Simplify()(tir.IRModule.from_expr(func))["main"].body
    kept = SeqStmt([IfThenElse(u - c8(255) <= c8(0), _store(0)),
                    IfThenElse(c8(5) <= u + c8(5), _store(1))])   # >= is written as <=
    tir.assert_structural_equal(out, kept)


def test_comparison_with_int32_min_is_decided_false():
    i = tir.Var("i", "int32")
    pick = tir.Select(tir.const(-2**31) >= i, tir.const(1.0), tir.const(0.0))
    out = _run(_loop(i, 4, tir.BufferStore(A, pick, [i])))
    tir.assert_structural_equal(out, _loop(i, 4, _store(i, 0.0)))


def test_float_floordiv_of_nan_folds_to_nan():
    out = _run(tir.BufferStore(A, tir.FloorDiv(tir.const(float("nan")), tir.const(2.0)), [0]))
    assert isinstance(out.value, tir.FloatImm) and math.isnan(out.value.value)


# ------------------------------------------------------------------ guards in Select values
#
# A Select evaluates both values on every iteration. Its condition is a fact in a value
# only where rewriting under a false fact is harmless: never for a load (its index, its
# predicate, the if_then_else guarding it) or a division an if_then_else guards.

_F0, _F1 = tir.const(0.0), tir.const(1.0)


def _in_loop(value_of):
    """Simplify ``for j in range(64): A[j] = value_of(j)``; return the stored value."""
    j = tir.Var("j", "int32")
    return j, _run(_loop(j, 64, tir.BufferStore(A, value_of(j), [j]))).body.value


def test_if_then_else_guard_of_a_load_in_a_select_value_is_kept():
    j, out = _in_loop(lambda j: tir.Select(j >= 1, tir.if_then_else(j - 1 >= 0, A[j - 1], _F0),
                                           _F1))
    ge1 = tir.LE(tir.const(1), j)
    tir.assert_structural_equal(out, tir.Select(ge1, tir.if_then_else(ge1, A[j - 1], _F0), _F1))


def test_guard_in_a_nested_select_is_kept():
    """Repro 24: the outer false value knows j == 1, which proves j < 7; A[j] runs for all j."""
    def value(j):
        test = tir.if_then_else(j < 7, A[j] > _F0, tir.const(False))
        return tir.Select(j != 1, _F1, tir.Select(test, tir.const(2.0), tir.const(3.0)))
    j, out = _in_loop(value)
    test = tir.if_then_else(j < 7, tir.LT(_F0, A[j]), tir.const(False))
    tir.assert_structural_equal(
        out, tir.Select(j != 1, _F1, tir.Select(test, tir.const(2.0), tir.const(3.0))))


def test_load_index_in_a_select_value_is_not_rewritten_under_the_condition():
    """A[min(j, 7)] is in bounds for every j; A[j] would not be where j >= 8."""
    j, out = _in_loop(lambda j: tir.Select(j < 8, A[tir.min(j, 7)], _F0))
    tir.assert_structural_equal(out, tir.Select(j < 8, A[tir.min(j, 7)], _F0))


def test_load_predicate_in_a_select_value_is_not_narrowed():
    def value(j):
        return tir.Select(j >= 4, tir.BufferLoad(A, [j - 2], tir.all(j - 2 >= 0, j < n)), _F0)
    j, out = _in_loop(value)
    masked = tir.BufferLoad(A, [j - 2], tir.And(tir.LE(tir.const(2), j), j < n))
    tir.assert_structural_equal(out, tir.Select(tir.LE(tir.const(4), j), masked, _F0))


def test_division_guarded_in_a_select_value_keeps_its_guard():
    """Folding the if_then_else would divide by n == 0 whenever the Select runs."""
    def index(j):
        return tir.Select(n != 0, tir.if_then_else(n != 0, tir.floordiv(j, n), 0), 0)
    j, out = _in_loop(lambda j: A[index(j)])
    tir.assert_structural_equal(out, A[index(j)])


def test_select_condition_still_simplifies_pure_arithmetic():
    """As TVM: pure values use the condition, an if_then_else of pure values folds."""
    j, out = _in_loop(lambda j: A[tir.Select(j < 8, tir.min(j, 7), 0)])
    tir.assert_structural_equal(out, A[tir.Select(j < 8, j, 0)])
    cast = (lambda e: tir.Cast("float32", e))
    j, out = _in_loop(lambda j: tir.Select(j >= 1, tir.if_then_else(j - 1 >= 0, cast(j - 1),
                                                                    _F0), _F1))
    tir.assert_structural_equal(out, tir.Select(tir.LE(tir.const(1), j), cast(j - 1), _F1))


def test_if_then_else_still_simplifies_its_values_under_its_condition():
    """Only the chosen value of an if_then_else runs: its condition is a sound fact."""
    j, out = _in_loop(lambda j: tir.if_then_else(j < 8, A[tir.min(j, 7)], _F0))
    tir.assert_structural_equal(out, tir.if_then_else(j < 8, A[j], _F0))


# ------------------------------------------------------------------ lets


def test_let_of_constant_or_var_is_inlined():
    x, y = tir.Var("x", "int32"), tir.Var("y", "int32")
    out = _run(LetStmt(x, tir.Add(3, 1), LetStmt(y, n, _store(x + y))))
    tir.assert_structural_equal(out, _store(n + 4))


def test_let_of_expression_is_kept_and_its_bounds_used():
    i, x = tir.Var("i", "int32"), tir.Var("x", "int32")
    body = LetStmt(x, tir.floormod(n, 8), IfThenElse(x < 8, _store(x)))
    out = _run(body)
    tir.assert_structural_equal(out, LetStmt(x, tir.floormod(n, 8), _store(x)))
    del i


# ------------------------------------------------------------------ identity


def test_nothing_to_simplify_keeps_module():
    i = tir.Var("i", "int32")
    mod = tir.IRModule.from_expr(_func(_loop(i, n, IfThenElse(i < 4, _store(i * 2 + 1)))))
    assert transform.Simplify()(mod) is mod


def test_only_changed_functions_are_rebuilt():
    i = tir.Var("i", "int32")
    keep = _func(_loop(i, n, _store(i)))
    j = tir.Var("j", "int32")
    change = _func(_loop(j, n, _store(tir.Add(j, 0))))
    out = transform.Simplify()(tir.IRModule({"keep": keep, "change": change}))
    assert out["keep"] is keep and out["change"] is not change


def test_simplify_in_a_pipeline():
    i = tir.Var("i", "int32")
    body = _loop(i, 16, SeqStmt([IfThenElse(i >= 16, _store(i)), _store(i)]))
    seq = transform.Sequential([transform.Simplify(), transform.RemoveNoOp()])
    out = seq(tir.IRModule.from_expr(_func(body)))["main"].body
    tir.assert_structural_equal(out, _loop(i, 16, _store(i)))


# ------------------------------------------------------------------ differential


class _RandomProgram:
    """Small random loop programs over int32 buffers, for differential checks.

    Every store and load index goes through ``floormod(..., 64)``, so any
    program is in bounds whatever the loop and let values are.
    """

    def __init__(self, seed):
        import random

        self.rng = random.Random(seed)
        self.a = tir.decl_buffer((64,), "int32", name="A")
        self.b = tir.decl_buffer((64,), "int32", name="B")
        self.n = tir.Var("n", "int32")

    def expr(self, scope, depth=0):
        r = self.rng
        leaves = [*scope, self.n, tir.const(r.randint(-3, 9))]
        if depth >= 2 or r.random() < 0.3:
            return r.choice(leaves)
        a, b = self.expr(scope, depth + 1), self.expr(scope, depth + 1)
        c = r.choice([1, 2, 4, 8])
        return r.choice([
            lambda: tir.Add(a, b), lambda: tir.Sub(a, b), lambda: tir.Mul(a, tir.const(c)),
            lambda: tir.FloorDiv(a, tir.const(c)), lambda: tir.FloorMod(a, tir.const(c)),
            lambda: tir.Min(a, b), lambda: tir.Max(a, b),
            lambda: tir.BufferLoad(self.b, [tir.floormod(a, 64)]),
        ])()

    def cond(self, scope):
        a, b = self.expr(scope, 1), self.expr(scope, 1)
        return self.rng.choice([tir.LT, tir.LE, tir.EQ, tir.GE])(a, b)

    def stmt(self, scope, depth=0):
        r = self.rng
        kind = r.choice(["store", "store", "for", "if", "let", "seq"] if depth < 3 else ["store"])
        if kind == "store":
            index = tir.floormod(self.expr(scope), 64)
            value = tir.Add(tir.BufferLoad(self.a, [index]), self.expr(scope))
            return tir.BufferStore(self.a, value, [index])
        if kind == "for":
            v = tir.Var(f"i{len(scope)}", "int32")
            extent = r.choice([tir.const(0), tir.const(1), tir.const(3), self.n, self.n - 2])
            loop_kind = r.choice([ForKind.SERIAL, ForKind.UNROLLED])
            lo = r.choice([tir.const(0), tir.const(2), self.n])
            return For(v, lo, extent, loop_kind, self.stmt([*scope, v], depth + 1))
        if kind == "if":
            else_case = self.stmt(scope, depth + 1) if r.random() < 0.5 else None
            return IfThenElse(self.cond(scope), self.stmt(scope, depth + 1), else_case)
        if kind == "let":
            v = tir.Var(f"x{len(scope)}", "int32")
            return LetStmt(v, self.expr(scope), self.stmt([*scope, v], depth + 1))
        return SeqStmt([self.stmt(scope, depth + 1) for _ in range(r.randint(2, 3))])

    def func(self):
        return tir.PrimFunc([self.a, self.b, self.n], self.stmt([]))


def _run_interpreted(func, n):
    import numpy as np

    from codegen.interp.backend import build_interpreter

    a = np.arange(64, dtype="int32") % 7
    b = (np.arange(64, dtype="int32") * 5) % 11 - 3
    build_interpreter(func)(a, b, n)
    return a


@pytest.mark.parametrize("seed", range(40))
def test_pipeline_preserves_meaning_of_random_programs(seed):
    import numpy as np

    from tir.verify import verify_well_formed

    func = _RandomProgram(seed).func()
    pipeline = transform.Sequential([
        transform.Simplify(), transform.RemoveNoOp(), transform.UnrollLoop(),
        transform.Simplify(), transform.RemoveNoOp(),
    ])
    with transform.PassContext(config={"tir.UnrollLoop": {"auto_max_step": 8}}):
        out = pipeline(tir.IRModule.from_expr(func))["main"]
    assert verify_well_formed(out)
    for n_value in (0, 3, 7):
        expected = _run_interpreted(func, n_value)
        np.testing.assert_array_equal(_run_interpreted(out, n_value), expected)
