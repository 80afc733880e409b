"""Block, BlockRealize and IterVar: construction checks, equality, copies, verification."""

from __future__ import annotations

import pytest

import tir
from tir.block import Block, BlockRealize, IterVar, IterVarType
from tir.functor import StmtExprMutator, copy_with_fresh_binders
from tir.stmt import BufferStore, For, ForKind


def _sum_rows(n=8, m=4, name="B"):
    A = tir.decl_buffer((n, m), name="A")
    B = tir.decl_buffer((n,), name="B")
    i, k = tir.Var("i"), tir.Var("k")
    vi = IterVar(n, tir.Var("vi"), IterVarType.DataPar)
    vk = IterVar(m, tir.Var("vk"), IterVarType.CommReduce)
    block = Block([vi, vk], name, init=BufferStore(B, tir.const(0.0), [vi.var]),
                  body=BufferStore(B, B[vi.var] + A[vi.var, vk.var], [vi.var]))
    nest = For(i, 0, n, ForKind.SERIAL, For(k, 0, m, ForKind.SERIAL,
                                            BlockRealize([i, k], True, block)))
    tmp = tir.decl_buffer((n,), name="tmp")
    root = BlockRealize([], True, Block([], "root", alloc_buffers=[tmp], body=nest))
    return tir.PrimFunc([A, B], root)


def test_two_independent_builds_are_structurally_equal_and_hash_alike():
    f, g = _sum_rows(), _sum_rows()
    tir.assert_structural_equal(f, g)
    assert tir.structural_hash(f) == tir.structural_hash(g)


def test_block_name_and_iter_type_take_part_in_equality():
    assert not tir.structural_equal(_sum_rows(name="B"), _sum_rows(name="C"))
    f = _sum_rows()
    realize = f.body.block.body.body.body
    iv = realize.block.iter_vars[1]
    spatial = IterVar(iv.dom, iv.var, IterVarType.DataPar)
    changed = tir.node.replace(realize.block, iter_vars=(realize.block.iter_vars[0], spatial))
    assert not tir.structural_equal(realize.block, changed)


def test_fresh_copy_renews_iter_vars_and_allocations():
    f = _sum_rows()
    copy = copy_with_fresh_binders(f.body)
    old_block, new_block = f.body.block.body.body.body.block, copy.block.body.body.body.block
    assert new_block.iter_vars[0].var is not old_block.iter_vars[0].var
    assert copy.block.alloc_buffers[0].data is not f.body.block.alloc_buffers[0].data
    tir.assert_structural_equal(f, f.with_body(copy))


def test_mutator_returns_the_same_block_when_nothing_changes():
    f = _sum_rows()
    assert StmtExprMutator()(f.body) is f.body


def test_verify_accepts_blocks_and_rejects_iter_var_escaping_its_block():
    f = _sum_rows()
    assert tir.verify_well_formed(f)
    realize = f.body.block.body.body.body
    vi = realize.block.iter_vars[0].var
    B = f.buffer_map[f.params[1]]
    leak = tir.SeqStmt([realize, BufferStore(B, tir.const(1.0), [vi])])
    bad = f.with_body(tir.node.replace(f.body, block=tir.node.replace(
        f.body.block, body=For(tir.Var("i"), 0, 8, ForKind.SERIAL,
                               For(tir.Var("k"), 0, 4, ForKind.SERIAL, leak)))))
    with pytest.raises(ValueError, match="vi outside the block B"):
        tir.verify_well_formed(bad)


def test_realize_checks_its_values():
    vi = IterVar(4, tir.Var("vi"), IterVarType.DataPar)
    B = tir.decl_buffer((4,), name="B")
    block = Block([vi], "B", body=BufferStore(B, tir.const(0.0), [vi.var]))
    with pytest.raises(ValueError, match="1 iter vars"):
        BlockRealize([], True, block)
    with pytest.raises(TypeError, match="int64"):
        BlockRealize([tir.Var("i", "int64")], True, block)
    with pytest.raises(TypeError, match="bool"):
        BlockRealize([tir.Var("i")], tir.Var("p"), block)


def test_iter_var_takes_tvm_arguments():
    iv = IterVar((2, 10), "v", IterVarType.CommReduce)
    assert iv.min.value == 2 and iv.extent.value == 8 and iv.is_reduce
    assert IterVar(tir.Range(0, 4), tir.Var("w")).dom.extent.value == 4
    with pytest.raises(TypeError, match="must be a Var"):
        IterVar(4, 3)
