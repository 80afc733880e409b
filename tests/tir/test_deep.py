"""Deep and long programs: build, print, hash, compare and mutate without RecursionError."""

import pytest
from tir.stmt_functor import StmtExprMutator

import tir
from tir import assert_structural_equal, structural_equal, structural_hash

DEPTH = 5_000
LENGTH = 100_000

x = tir.Var("x")
y = tir.Var("y")
A = tir.decl_buffer((LENGTH,), "int32", "A")


def deep_sum(var):
    """``var + 1 + 2 + ... + (DEPTH - 1)``: a left-deep chain of Adds."""
    e = var
    for k in range(1, DEPTH):
        e = e + k
    return e


def long_seq(var):
    """``A[k] = var`` for each k: a SeqStmt of LENGTH stores."""
    return tir.SeqStmt([tir.BufferStore(A, var, [tir.IntImm("int32", k)]) for k in range(LENGTH)])


class Identity(StmtExprMutator):
    """No overrides: every node must come back as the same object."""


class Rename(StmtExprMutator):
    """Replace uses of one var by another."""

    def __init__(self, old, new):
        self.old, self.new = old, new

    def visit_var(self, v):
        return self.new if v is self.old else v


@pytest.fixture(scope="module")
def seqs():
    return long_seq(x), long_seq(x), long_seq(y)


def test_deep_sum_is_left_deep():
    e = deep_sum(x)
    depth = 0
    while isinstance(e, tir.Add):
        e, depth = e.a, depth + 1
    assert e is x and depth == DEPTH - 1


def test_deep_sum_prints():
    text = str(deep_sum(x))
    assert text.startswith("x + 1 + 2 + 3 + ") and text.endswith(" + 4998 + 4999")
    assert "(" not in text


def test_deep_sum_hashes_and_compares():
    a, b = deep_sum(x), deep_sum(x)
    assert structural_hash(a) == structural_hash(b)
    assert structural_equal(a, b)
    assert not structural_equal(a, deep_sum(y))
    assert structural_equal(a, deep_sum(y), map_free_vars=True)
    with pytest.raises(ValueError, match=r"at (a\.){4998}a: free variables x and y differ"):
        assert_structural_equal(a, deep_sum(y))


def test_deep_sum_mutates():
    a = deep_sum(x)
    assert Identity()(a) is a
    renamed = Rename(x, y)(a)
    assert renamed is not a
    assert_structural_equal(renamed, deep_sum(y))


def test_deep_let_statement_chain_prints_flat():
    vars_ = [tir.Var(f"v{k}") for k in range(DEPTH)]
    body = tir.Evaluate(vars_[-1])
    for k in reversed(range(DEPTH)):
        body = tir.LetStmt(vars_[k], vars_[k - 1] + 1 if k else 0, body)
    lines = str(body).splitlines()
    assert lines[:2] == ["v0: T.int32 = 0", "v1: T.int32 = v0 + 1"]
    assert lines[-1] == f"T.evaluate(v{DEPTH - 1})" and len(lines) == DEPTH + 1
    assert structural_hash(body) == structural_hash(Identity()(body))


@pytest.mark.slow
def test_long_seq_prints(seqs):
    text = str(seqs[0])
    lines = text.splitlines()
    assert len(lines) == LENGTH
    assert lines[0] == "A[0] = x" and lines[-1] == f"A[{LENGTH - 1}] = x"


@pytest.mark.slow
def test_long_seq_hashes_and_compares(seqs):
    a, b, c = seqs
    assert structural_hash(a) == structural_hash(b)
    assert structural_equal(a, b)
    assert structural_equal(a, c, map_free_vars=True)
    with pytest.raises(ValueError, match=r"at seq\[0\]\.value: free variables x and y"):
        assert_structural_equal(a, c)


@pytest.mark.slow
def test_long_seq_mutates(seqs):
    a, _, c = seqs
    assert Identity()(a) is a
    renamed = Rename(x, y)(a)
    assert renamed is not a and renamed.seq[-1].value is y
    assert_structural_equal(renamed, c)
