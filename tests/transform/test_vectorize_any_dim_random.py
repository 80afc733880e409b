"""Random 2-D access patterns under one or two vectorized loops, with config
``tir.vectorize.any_dim_access``: whatever the vectorizer does (vectorize, merge the loops,
scalarize, keep a loop serial for a dependence), the interpreter must compute what the
serial loops compute, and must not read outside a buffer where the serial program does
not (a padded read that left its buffer raises IndexError in the interpreter).

Indices mix the loop vars, a runtime value and constants in both dimensions; reads whose
index may leave the 8 x 8 buffer are padded reads (``if_then_else(in_bounds, P[...], pad)``);
reads of the written buffer Q and stores through any pair of indices exercise the
dependence analysis on vector indices in every dimension.
"""

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from vectorize_eval import assert_same_result, run

import codegen
import tir
import transform
from tir.stmt import BufferStore, For, ForKind, SeqStmt

F32 = "float32"
P = tir.decl_buffer((8, 8), F32, name="P")
Q = tir.decl_buffer((8, 8), F32, name="Q")
K = tir.decl_buffer((8, 8), "int32", name="K")
i, j, c = tir.var("i"), tir.var("j"), tir.var("c")
PARAMS = [P, Q, K, c]


def arrays():
    rng = np.random.default_rng(11)
    ints = rng.integers(-3, 4, 64).astype(np.int32)
    ints[::4] = 0
    return {"P": rng.standard_normal(64).astype(np.float32),
            "Q": rng.standard_normal(64).astype(np.float32), "K": ints}


def _in_bounds(index):
    return tir.all(*[tir.all(0 <= e, e < 8) for e in index])


# Indices that stay in [0, 8) for loop extents up to 4 and c in [0, 4).
SAFE = [lambda: i, lambda: j, lambda: c, lambda: i + j, lambda: 3 - i, lambda: j + 4,
        lambda: i * 2, lambda: c + j]
# Indices that may leave the buffer: read through a padded read only.
WILD = [lambda: i - 1, lambda: j + 5, lambda: i + j - 2, lambda: 9 - j * 3, lambda: c - i]


@st.composite
def index_pairs(draw, wild):
    pool = SAFE + WILD if wild else SAFE
    return [draw(st.sampled_from(pool))() for _ in range(2)]


@st.composite
def terms(draw):
    kind = draw(st.sampled_from(["p", "q", "padded", "choose", "divide", "const"]))
    if kind == "p":
        return P[tuple(draw(index_pairs(False)))]
    if kind == "q":
        return Q[tuple(draw(index_pairs(False)))]
    if kind == "padded":
        index = draw(index_pairs(True))
        pad = tir.const(draw(st.sampled_from([0.0, -1.5, 4.0])), F32)
        return tir.if_then_else(_in_bounds(index), P[tuple(index)], pad)
    if kind == "choose":  # a condition on the vars choosing between two reads
        a, b = draw(index_pairs(False)), draw(index_pairs(True))
        other = tir.if_then_else(_in_bounds(b), Q[tuple(b)], tir.const(2.0, F32))
        return tir.if_then_else(i < j + c - 1, P[tuple(a)], other)
    if kind == "divide":  # an integer division evaluated only where K is not zero
        index = tuple(draw(index_pairs(False)))
        quotient = tir.truncdiv(tir.const(12, "int32"), K[index])
        return tir.Cast(F32, tir.if_then_else(K[index] != 0, quotient, tir.const(-7, "int32")))
    return tir.const(draw(st.sampled_from([0.5, -2.0])), F32)


@st.composite
def statements(draw):
    value = draw(terms())
    for _ in range(draw(st.integers(0, 2))):
        value = value + draw(terms())
    return BufferStore(Q, value, draw(index_pairs(False)))


@st.composite
def programs(draw):
    body = draw(statements())
    if draw(st.booleans()):
        body = SeqStmt([body, draw(statements())])
    kinds = [draw(st.sampled_from([ForKind.VECTORIZED, ForKind.VECTORIZED, ForKind.SERIAL]))
             for _ in range(2)]
    inner, outer = (j, i) if draw(st.booleans()) else (i, j)
    loop = For(inner, 0, draw(st.integers(1, 4)), kinds[0], body)
    loop = For(outer, 0, draw(st.integers(1, 4)), kinds[1], loop)
    return tir.PrimFunc(PARAMS, loop), draw(st.integers(0, 3))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs())
def test_random_any_dim_programs_compute_what_the_serial_loops_compute(program):
    before, c_value = program
    with transform.PassContext(config={"tir.vectorize.any_dim_access": True}):
        after = transform.VectorizeLoop()(tir.IRModule.from_expr(before))["main"]
    tir.verify_well_formed(after)
    assert_same_result(before, after, arrays(), {"c": c_value})


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs())
def test_random_any_dim_programs_compile_to_what_the_serial_loops_compute(program):
    """The same programs through codegen.build (linearized vector indices, masked loads,
    gathers and scatters in LLVM) against the interpreter on the function as written."""
    func, c_value = program
    want, _ = run(func, arrays(), {"c": c_value})
    with transform.PassContext(config={"codegen.llvm.fp_contract": False}):
        module = codegen.build(func, "llvm")
    args = [arrays()[name].reshape(8, 8) for name in "PQK"]
    module["main"](*args, c_value)
    for name, got in zip("PQK", args):
        np.testing.assert_array_equal(got.reshape(-1), want[name], err_msg=f"buffer {name}")
