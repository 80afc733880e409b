"""structural_digest: agrees with structural_equal, sees names on request, same in every process."""

import os
import subprocess
import sys

import tir
from tir import ForKind
from tir.structural import structural_digest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def kernel(extent=4, loop_name="i", buffer_name="A", value=1.0):
    """``A[i*4 + j] += value`` over an n x extent nest, the inner loop vectorized."""
    n = tir.Var("n")
    A = tir.decl_buffer((n * 4,), "float32", buffer_name)
    ib = tir.ir_builder.create()
    a = ib.buffer_ptr(A)
    with ib.for_range(0, n, name=loop_name) as i:
        with ib.for_range(0, extent, kind="vectorize", name="j") as j:
            a[i * 4 + j] += tir.const(value, "float32")
    return tir.PrimFunc([A, n], ib.get())


def test_equal_programs_have_equal_digests():
    assert structural_digest(kernel()) == structural_digest(kernel())
    assert len(structural_digest(kernel())) == 64  # sha256 hex


def test_different_programs_have_different_digests():
    base = structural_digest(kernel())
    assert structural_digest(kernel(extent=8)) != base
    assert structural_digest(kernel(value=2.0)) != base
    assert structural_digest(kernel(value=-0.0)) != structural_digest(kernel(value=0.0))


def test_names_count_only_when_asked():
    assert structural_digest(kernel(loop_name="k")) == structural_digest(kernel())
    named = structural_digest(kernel(), with_names=True)
    assert structural_digest(kernel(loop_name="k"), with_names=True) != named
    assert structural_digest(kernel(buffer_name="B"), with_names=True) != named
    assert structural_digest(kernel(), with_names=True) == named


def test_loop_kind_and_annotations_count():
    i = tir.Var("i")
    body = tir.Evaluate(i)

    def loop(kind, annotations=None):
        return tir.For(i, 0, 8, kind, body, annotations)

    digests = {structural_digest(loop(ForKind.SERIAL)), structural_digest(loop(ForKind.UNROLLED)),
               structural_digest(loop(ForKind.SERIAL, {"pragma": 1})),
               structural_digest(loop(ForKind.SERIAL, {"pragma": True}))}
    assert len(digests) == 4


def test_digest_is_the_same_in_another_process():
    # str hashing is randomized per process; the digest must not depend on it.
    code = ("import sys; sys.path.insert(0, 'tests/tir'); from test_structural_digest import *; "
            "print(structural_digest(tir.IRModule.from_expr(kernel()), with_names=True))")
    outputs = set()
    for seed in ("1", "2"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        run = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env,
                             capture_output=True, text=True, check=True)
        outputs.add(run.stdout.strip())
    assert outputs == {structural_digest(tir.IRModule.from_expr(kernel()), with_names=True)}
