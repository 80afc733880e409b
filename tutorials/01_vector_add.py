"""Lesson 1: a vector add, from the ir_builder to native code.

This is tirlite end to end, in the order a compiler sees it:

1. write a loop program with the ir_builder, marking the inner loop
   ``kind="vectorize"``;
2. run the ``VectorizeLoop`` pass and see the loop turn into vector
   operations on ``Ramp`` indices;
3. compile with ``codegen.build`` and read the LLVM IR: float vectors as
   wide as this machine's vector registers (``<8 x float>`` for AVX2's 256
   bits, ``<16 x float>`` for AVX-512), one register each;
4. call the compiled function on NumPy arrays and check it against NumPy.

Run it with ``bash scripts/demo.sh`` (or ``python tutorials/01_vector_add.py``).
"""

import numpy as np

import codegen
import tir
import transform
from tir import ir_builder

HOST = codegen.Target("llvm")  # this machine's CPU and features, as LLVM sees them
LANES = HOST.vector_width_bits // 32  # float32 lanes filling one of its vector registers


def build_vector_add(lanes: int = LANES) -> tir.PrimFunc:
    """C = A + B over (n, lanes) buffers, the inner axis vectorized."""
    n = tir.size_var("n")
    # Two-dimensional buffers keep the kernel safe for any n: the runtime
    # binds n from the arrays' shapes and checks that all three agree.
    A = tir.decl_buffer((n, lanes), "float32", name="A")
    B = tir.decl_buffer((n, lanes), "float32", name="B")
    C = tir.decl_buffer((n, lanes), "float32", name="C")

    ib = ir_builder.create()
    a, b, c = ib.buffer_ptr(A), ib.buffer_ptr(B), ib.buffer_ptr(C)
    with ib.for_range(0, n, name="i") as i:
        with ib.for_range(0, lanes, kind="vectorize", name="j") as j:
            c[i, j] = a[i, j] + b[i, j]
    return tir.PrimFunc([A, B, C], ib.get())


def vector_lines(llvm_ir: str, limit: int = 12) -> list[str]:
    """The lines of the main function that work on ``LANES``-lane vectors."""
    body = llvm_ir[llvm_ir.index("define") :]
    return [line.strip() for line in body.splitlines() if f"<{LANES} x float>" in line][:limit]


def vector_unit(target: codegen.Target) -> str:
    """The name of the vector instruction set the target's widest registers belong to."""
    features = target.features.split(",")
    for name, feature in (("AVX-512", "+avx512f"), ("AVX2", "+avx2"), ("AVX", "+avx")):
        if feature in features:
            return name
    return {"x86_64": "SSE", "aarch64": "NEON"}.get(target.arch, target.arch)


def main() -> None:
    mod = tir.IRModule.from_expr(build_vector_add())

    print("=== TIR as written: the j loop is marked vectorized ===")
    print(mod["main"])

    # The pass returns IR only; what it did and why comes beside it, as remarks.
    with transform.collect_remarks() as remarks:
        vectorized = transform.VectorizeLoop()(mod)
    print(f"=== after VectorizeLoop: j became the index vector 0:{LANES} ===")
    print(vectorized["main"])
    for remark in remarks:
        print("remark:", remark)
    assert [r.outcome for r in remarks] == ["vectorized"]

    lib = codegen.build(mod, target="llvm")
    ll = lib.get_source("ll")
    print(f"=== LLVM IR for {HOST.mcpu} ({vector_unit(HOST)}, {HOST.vector_width_bits}-bit "
          f"registers): the lines on <{LANES} x float> ===")
    lines = vector_lines(ll)
    print("\n".join(lines))
    assert lines, f"expected {LANES}-lane float vector operations in the LLVM IR"

    rng = np.random.default_rng(0)
    n = 1000
    a = rng.standard_normal((n, LANES), dtype=np.float32)
    b = rng.standard_normal((n, LANES), dtype=np.float32)
    c = np.empty_like(a)
    lib["main"](a, b, c)
    np.testing.assert_allclose(c, a + b, rtol=0, atol=0)
    print(f"=== ran on {n * LANES} floats: matches NumPy exactly ===")


if __name__ == "__main__":
    main()
