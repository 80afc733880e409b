"""te compute declarations: create_prim_func builds TVM's block form, named as TVM names it."""

from __future__ import annotations

import numpy as np
import pytest

import codegen
import tir
from codegen.interp.backend import build_interpreter
from tir import te
from tir.block import Block, BlockRealize, IterVar, IterVarType
from tir.stmt import BufferStore, For, ForKind, IfThenElse, SeqStmt

S, R = IterVarType.DataPar, IterVarType.CommReduce


def _loop(var, extent, body):
    return For(var, 0, extent, ForKind.SERIAL, body)


def _root(body, alloc=()):
    return BlockRealize([], True, Block([], "root", alloc_buffers=list(alloc), body=body))


def _func(params, body):
    f = tir.PrimFunc(params, body)
    return f.with_attr("global_symbol", "main").with_attr("tir.noalias", True)


def test_elementwise_is_one_block_under_its_loops():
    A = te.placeholder((8, 4), name="A")
    B = te.compute((8, 4), lambda i, j: A[i, j] * 2.0, name="B")
    func = te.create_prim_func([A, B])

    a, b = tir.decl_buffer((8, 4), name="A"), tir.decl_buffer((8, 4), name="B")
    i, j = tir.Var("i"), tir.Var("j")
    vi, vj = IterVar(8, tir.Var("v_i"), S), IterVar(4, tir.Var("v_j"), S)
    block = Block([vi, vj], "B", body=BufferStore(b, a[vi.var, vj.var] * 2.0, [vi.var, vj.var]))
    want = _func([a, b], _root(_loop(i, 8, _loop(j, 4, BlockRealize([i, j], True, block)))))
    tir.assert_structural_equal(func, want)


def test_matmul_reduction_has_init_and_reduce_iter_var():
    n = 16
    A = te.placeholder((n, n), name="A")
    B = te.placeholder((n, n), name="B")
    k = te.reduce_axis((0, n), name="k")
    C = te.compute((n, n), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    func = te.create_prim_func([A, B, C])

    a, b, c = (tir.decl_buffer((n, n), name=x) for x in "ABC")
    i, j, kk = tir.Var("i"), tir.Var("j"), tir.Var("k")
    vi, vj, vk = IterVar(n, tir.Var("v_i"), S), IterVar(n, tir.Var("v_j"), S), \
        IterVar(n, tir.Var("v_k"), R)
    out = [vi.var, vj.var]
    block = Block([vi, vj, vk], "C", init=BufferStore(c, tir.const(0.0), out),
                  body=BufferStore(c, c[vi.var, vj.var] + a[vi.var, vk.var] * b[vk.var, vj.var],
                                   out))
    nest = _loop(i, n, _loop(j, n, _loop(kk, n, BlockRealize([i, j, kk], True, block))))
    tir.assert_structural_equal(func, _func([a, b, c], _root(nest)))
    assert [iv.iter_type for iv in block.iter_vars] == [S, S, R]


def test_intermediates_live_in_the_root_block_and_names_are_unique():
    A = te.placeholder((10,), name="A")
    B = te.compute((10,), lambda i: A[i] + 1.0, name="T")
    C = te.compute((10,), lambda i: B[i] * 3.0, name="T")
    func = te.create_prim_func([A, C])
    root = func.body.block
    assert [buf.name for buf in root.alloc_buffers] == ["T"]
    assert root.alloc_buffers[0] is B.buffer
    assert [nest.body.block.name_hint for nest in root.body.seq] == ["T", "T_1"]
    tir.verify_well_formed(func)


def test_symbolic_shape_becomes_buffer_shape_and_loop_extent():
    n = te.var("n")
    A = te.placeholder((n,), name="A")
    B = te.compute((n,), lambda i: A[i] + 1.0, name="B")
    func = te.create_prim_func([A, B])
    loop = func.body.block.body
    assert isinstance(loop, For) and loop.extent is n
    assert func.buffer_map[func.params[0]].shape[0] is n


def test_max_min_and_where_reductions():
    A = te.placeholder((6, 5), name="A")
    k = te.reduce_axis((0, 5), name="k")
    M = te.compute((6,), lambda i: te.max(A[i, k], axis=k), name="M")
    k2 = te.reduce_axis((0, 5), name="k2")
    P = te.compute((6,), lambda i: te.sum(A[i, k2], axis=k2, where=A[i, k2] > 0.0), name="P")
    fm = te.create_prim_func([A, M])
    fp = te.create_prim_func([A, P])
    init = fm.body.block.body.body.body.block.init
    assert isinstance(init, BufferStore) and init.value.value == float("-inf")
    update = fp.body.block.body.body.body.block.body
    assert isinstance(update, IfThenElse)


def test_custom_comm_reducer():
    prod = te.comm_reducer(lambda x, y: x * y, lambda t: tir.const(1, t), name="prod")
    A = te.placeholder((4, 3), "int32", name="A")
    k = te.reduce_axis((0, 3), name="k")
    P = te.compute((4,), lambda i: prod(A[i, k], axis=k), name="P")
    block = te.create_prim_func([A, P]).body.block.body.body.body.block
    assert block.init.value.value == 1
    assert isinstance(block.body.value, tir.Mul)


def test_iter_var_arithmetic_in_indices():
    A = te.placeholder((10,), name="A")
    k = te.reduce_axis((0, 3), name="k")
    B = te.compute((8,), lambda i: te.sum(A[i + k], axis=k), name="B")
    func = te.create_prim_func([A, B])
    tir.verify_well_formed(func)


@pytest.mark.parametrize("make, match", [
    (lambda A: te.compute((4,), lambda i, j: A[i], name="B"), "takes 2 arguments"),
    (lambda A: te.compute((4,), lambda i: A[i, i], name="B"), "has 1 dimensions"),
    (lambda A: te.compute((4,), lambda i: te.sum(A[i], axis=te.reduce_axis((0, 4), "k")) * 2.0,
                          name="B"), "must be the whole body"),
    (lambda A: te.compute((4,), lambda i: te.sum(A[i], axis=i), name="B"), "reduce_axis"),
])
def test_bad_compute_declarations_name_the_stage(make, match):
    A = te.placeholder((4,), name="A")
    with pytest.raises((ValueError, TypeError, IndexError), match=match):
        make(A)


def test_placeholder_missing_from_arguments_is_named():
    A = te.placeholder((4,), name="A")
    B = te.compute((4,), lambda i: A[i] + 1.0, name="B")
    with pytest.raises(ValueError, match="placeholder A is read by B"):
        te.create_prim_func([B])


def test_compute_over_a_number_is_a_constant_stage():
    B = te.compute((3,), lambda i: 7, name="B")
    func = te.create_prim_func([B])
    store = func.body.block.body.body.block.body
    assert store.value.value == 7


def test_create_prim_func_builds_and_runs():
    n = 13
    A = te.placeholder((n, 7), name="A")
    B = te.placeholder((7, 5), name="B")
    k = te.reduce_axis((0, 7), name="k")
    C = te.compute((n, 5), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    D = te.compute((n, 5), lambda i, j: tir.max(C[i, j], tir.const(0.0)), name="D")
    func = te.create_prim_func([A, B, D])
    rng = np.random.default_rng(1)
    a = rng.standard_normal((n, 7)).astype("float32")
    b = rng.standard_normal((7, 5)).astype("float32")
    d = np.empty((n, 5), "float32")
    codegen.build(func)["main"](a, b, d)
    np.testing.assert_allclose(d, np.maximum(a @ b, 0), rtol=1e-5, atol=1e-5)
    d2 = np.empty_like(d)
    build_interpreter(func)["main"](a, b, d2)
    np.testing.assert_allclose(d2, d, rtol=1e-5, atol=1e-5)


def test_printed_function_shows_blocks_and_axes():
    A = te.placeholder((4, 4), name="A")
    k = te.reduce_axis((0, 4), name="k")
    B = te.compute((4,), lambda i: te.sum(A[i, k], axis=k), name="B")
    text = te.create_prim_func([A, B]).script()
    assert 'with T.block("B"):' in text
    assert "v_i = T.axis.spatial(4, i)" in text
    assert "v_k = T.axis.reduce(4, k)" in text
    assert "with T.init():" in text


def test_seq_of_stages_in_dependency_order():
    A = te.placeholder((4,), name="A")
    B = te.compute((4,), lambda i: A[i] + 1.0, name="B")
    C = te.compute((4,), lambda i: B[i] + A[i], name="C")
    body = te.create_prim_func([A, C]).body.block.body
    assert isinstance(body, SeqStmt)
    assert [s.body.block.name_hint for s in body.seq] == ["B", "C"]


def test_reduction_init_expression_uses_the_output_index():
    A = te.placeholder((4, 3), name="A")
    bias = te.placeholder((4,), name="bias")
    k = te.reduce_axis((0, 3), name="k")
    S = te.compute((4,), lambda i: te.sum(A[i, k], axis=k, init=bias[i]), name="S")
    func = te.create_prim_func([A, bias, S])
    block = func.body.block.body.body.body.block
    assert block.init.value.buffer is bias.buffer
    assert block.init.value.indices[0] is block.iter_vars[0].var
    tir.verify_well_formed(func)
