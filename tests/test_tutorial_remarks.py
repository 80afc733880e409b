"""The whole kernels of tutorial 04 report one remark per loop the user marked vectorize."""

import pathlib
import runpy

import pytest

import codegen
import tir
import transform
from tir import ir_builder
from tir.functor import post_order_visit
from tir.stmt import For, ForKind

LESSON = pathlib.Path(__file__).parent.parent / "tutorials" / "04_tails_conditionals_reductions.py"
KERNELS = ["build_softmax", "build_layernorm", "build_depthwise", "build_saxpy",
           "build_rectify", "build_copy_prefix", "build_histogram"]


@pytest.fixture(scope="module")
def lesson() -> dict:
    return runpy.run_path(str(LESSON), run_name="tutorial")


def user_loops(func) -> list[str]:
    """The names of the loops of ``func`` marked vectorize, in program order."""
    found: list[For] = []
    post_order_visit(func.body, lambda n: found.append(n) if isinstance(n, For)
                     and n.kind == ForKind.VECTORIZED else None)
    return [loop.loop_var.name for loop in found]


@pytest.mark.parametrize("name", KERNELS)
def test_one_remark_per_vectorized_loop_in_the_users_names(lesson, name):
    func = lesson[name]()
    with transform.collect_remarks() as heard:
        lib = codegen.build(func)
    remarks = [r for r in lib.remarks if isinstance(r, transform.VectorizeRemark)]
    assert [r.loop_var for r in remarks] == user_loops(func), remarks
    assert heard == list(lib.remarks)  # listeners hear the folded remarks, nothing more
    for remark in remarks:
        text = str(remark)
        assert "_outer" not in text and " // " not in text, text  # no names the passes made
        assert all(len(line) <= transform.vector.remarks.WIDTH for line in text.splitlines())
        assert text.replace("\n    ", " ") == remark.line


def test_int8_loads_computing_in_int32_fill_a_register(lesson):
    lib = codegen.build(lesson["build_depthwise"]())
    [remark] = lib.remarks
    bits = codegen.Target("llvm").vector_width_bits
    assert remark.lanes == bits // 8  # a register of int8 per load, the sums in 4 of int32
    assert f"{bits}-bit registers / int8 loads, 4 registers of int32" in remark.reason
    assert remark.hint == ""  # nothing left for an annotation to gain


def test_float16_loads_computing_in_float32_get_the_vector_length_hint():
    n = tir.size_var("n")
    a = tir.decl_buffer((n,), "float16", "A")
    b = tir.decl_buffer((n,), "float32", "B")
    ib = ir_builder.create()
    pa, pb = ib.buffer_ptr(a), ib.buffer_ptr(b)
    with ib.for_range(0, n, kind="vectorize", name="i") as i:
        pb[i] = tir.Cast("float32", pa[i]) * tir.const(2.0, "float32")
    [remark] = codegen.build(tir.PrimFunc([a, b], ib.get())).remarks
    code = f'annotations={{"tir.vector_length": {2 * remark.lanes}}}'
    assert remark.hint == f"float16 loads fill half of a register: {code}"
    assert any(code in line for line in str(remark).splitlines())  # never split by wrapping


def test_a_dependence_of_unknown_distance_names_the_annotation_that_waives_it(lesson):
    lib = codegen.build(lesson["build_histogram"]())
    [remark] = lib.remarks
    assert remark.outcome == "not vectorized"
    assert 'annotations={"tir.vectorize.assume_independent": True}' in remark.hint
