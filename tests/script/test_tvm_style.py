"""Before/After tests written as TVM writes them: TVMScript functions and
``tir.testing.CompareBeforeAfter``, for passes and schedule primitives."""

import pytest

import tir
import transform
from codegen import Target
from tir.script import tir as T


class TestVectorizeLoop(tir.testing.CompareBeforeAfter):
    transform = transform.VectorizeLoop()

    def before(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
        for i in T.vectorized(16):
            B[i] = A[i] * T.float32(2)

    def expected(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
        B[0:16] = A[0:16] * T.Broadcast(T.float32(2), 16)


class TestVectorizeOuterIndex(tir.testing.CompareBeforeAfter):
    transform = transform.VectorizeLoop()

    def before(A: T.Buffer((64,), "float32"), n: T.int32):
        for i in range(n):
            for j in T.vectorized(4):
                A[i * 4 + j] = A[i * 4 + j] + T.float32(1)

    def expected(A: T.Buffer((64,), "float32"), n: T.int32):
        for i in range(n):
            A[i * 4:i * 4 + 4] = A[i * 4:i * 4 + 4] + T.Broadcast(T.float32(1), 4)


class TestVectorizeSkipped(tir.testing.CompareBeforeAfter):
    """With vectorization disabled, a vectorized loop becomes a serial one."""

    def transform(self):
        return transform.VectorizeLoop(enable_vectorize=False)

    def before(A: T.Buffer((16,), "float32")):
        for i in T.vectorized(16):
            A[i] = T.float32(0)

    def expected(A: T.Buffer((16,), "float32")):
        for i in range(16):
            A[i] = T.float32(0)


class TestSimplifyFoldsIndex(tir.testing.CompareBeforeAfter):
    transform = transform.Simplify()

    def before(A: T.Buffer((16,), "int32"), n: T.int32):
        for i in range(16):
            A[i] = n * 2 - n - n + i // 1

    def expected(A: T.Buffer((16,), "int32"), n: T.int32):
        for i in range(16):
            A[i] = i


class TestSimplifyProvesCondition(tir.testing.CompareBeforeAfter):
    transform = transform.Simplify()

    def before(A: T.Buffer((16,), "int32")):
        for i in range(16):
            if i < 16:
                A[i] = 1
            else:
                A[i] = 2

    def expected(A: T.Buffer((16,), "int32")):
        for i in range(16):
            A[i] = 1


class TestRemoveEmptyLoop(tir.testing.CompareBeforeAfter):
    transform = transform.RemoveNoOp()

    def before(A: T.Buffer((16,), "float32")):
        for i in range(16):
            T.evaluate(0)
        A[0] = T.float32(1)

    def expected(A: T.Buffer((16,), "float32")):
        A[0] = T.float32(1)


class TestRemoveZeroExtentLoop(tir.testing.CompareBeforeAfter):
    transform = transform.RemoveNoOp()

    def before(A: T.Buffer((16,), "float32")):
        for i in range(0):
            A[i] = T.float32(1)
        A[1] = T.float32(2)

    def expected(A: T.Buffer((16,), "float32")):
        A[1] = T.float32(2)


class TestUnrollLoop(tir.testing.CompareBeforeAfter):
    transform = transform.UnrollLoop()

    def before(A: T.Buffer((4,), "int32")):
        for i in T.unroll(3):
            A[i] = i

    def expected(A: T.Buffer((4,), "int32")):
        A[0] = 0
        A[1] = 1
        A[2] = 2


class TestExpectedError(tir.testing.CompareBeforeAfter):
    """``expected`` may name the error the transform raises (here: a symbolic extent)."""

    transform = transform.VectorizeLoop()

    def before(A: T.Buffer((16,), "float32"), n: T.int32):
        for i in T.vectorized(n):
            A[i] = T.float32(0)

    expected = ValueError


@T.prim_func
def matmul(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"),
           C: T.Buffer((16, 16), "float32")):
    for i, j, k in T.grid(16, 16, 16):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            T.reads(A[vi, vk], B[vk, vj])
            T.writes(C[vi, vj])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


@T.prim_func
def matmul_split(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"),
                 C: T.Buffer((16, 16), "float32")):
    for i_0, i_1, j, k in T.grid(4, 4, 16, 16):
        with T.block("C"):
            vi = T.axis.spatial(16, i_0 * 4 + i_1)
            vj, vk = T.axis.remap("SR", [j, k])
            T.reads(A[vi, vk], B[vk, vj])
            T.writes(C[vi, vj])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]


def test_schedule_split_matches_the_expected_script():
    sch = tir.Schedule(matmul)
    i, _, _ = sch.get_loops(sch.get_block("C"))
    sch.split(i, [None, 4])
    tir.assert_structural_equal(sch.mod["main"], matmul_split)


def test_schedule_vectorize_and_parallel_loop_kinds():
    sch = tir.Schedule(matmul)
    i, j, _ = sch.get_loops(sch.get_block("C"))
    sch.parallel(i)

    @T.prim_func
    def expected(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"),
                 C: T.Buffer((16, 16), "float32")):
        for i in T.parallel(16):
            for j, k in T.grid(16, 16):
                with T.block("C"):
                    vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                    with T.init():
                        C[vi, vj] = T.float32(0)
                    C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]

    tir.assert_structural_equal(sch.mod["main"], expected)


def test_compare_before_after_reports_a_mismatch():
    class Wrong(tir.testing.CompareBeforeAfter):
        transform = transform.RemoveNoOp()

        def before(A: T.Buffer((4,), "float32")):
            A[0] = T.float32(1)

        def expected(A: T.Buffer((4,), "float32")):
            A[0] = T.float32(2)

    with pytest.raises(ValueError, match="structural mismatch"):
        Wrong().test_compare()


def test_vectorize_tail_as_predicated_accesses():
    """TVM's ``test_vectorize_and_predicate_*``: the guard becomes a lane mask."""

    @T.prim_func
    def before(A: T.Buffer((14,), "float32"), B: T.Buffer((14,), "float32")):
        for io in range(4):
            for ii in T.vectorized(4):
                if io * 4 + ii < 14:
                    B[io * 4 + ii] = A[io * 4 + ii] + T.float32(1)

    @T.prim_func
    def expected(A: T.Buffer((14,), "float32"), B: T.Buffer((14,), "float32")):
        for io in range(4):
            mask = T.meta_var(T.get_active_lane_mask("uint1x4", io * 4, 14))
            a = T.meta_var(A.vload([T.Ramp(io * 4, 1, 4)], predicate=mask))
            B.vstore([T.Ramp(io * 4, 1, 4)], a + T.Broadcast(T.float32(1), 4), predicate=mask)

    config = {"tir.enable_buffer_level_predication": True}
    with transform.PassContext(config=config):
        after = transform.VectorizeLoop()(tir.IRModule.from_expr(before))["main"]
    tir.assert_structural_equal(after, expected)


def test_vectorize_scalable_loop_for_sve():
    @T.prim_func
    def before(A: T.Buffer((64,), "float32")):
        for i in T.vectorized(4 * T.vscale()):
            A[i] = T.float32(1)

    @T.prim_func
    def expected(A: T.Buffer((64,), "float32")):
        # TVM's order, vscale() * 4, as the vectorizer builds the lane count
        A[0:T.vscale() * 4] = T.Broadcast(T.float32(1), T.vscale() * 4)

    with Target("llvm -mtriple=aarch64-linux-gnu -mattr=+v8.2a,+sve"):
        after = transform.VectorizeLoop()(tir.IRModule.from_expr(before))["main"]
    tir.assert_structural_equal(after, expected)
