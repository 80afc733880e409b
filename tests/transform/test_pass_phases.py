"""PassContext.phase: build steps after the TIR passes, heard by the instruments that ask."""

import io

import pytest

import codegen
import tir
import transform
from tir import ir_builder
from transform import PassContext

LLVM_PHASES = ["codegen.tir_to_llvm", "llvm.parse_verify", "llvm.optimize", "llvm.codegen"]


def vector_add():
    A, B = (tir.decl_buffer((64,), "float32", name=n) for n in "AB")
    ib = ir_builder.create()
    a, b = ib.buffer_ptr(A), ib.buffer_ptr(B)
    with ib.for_range(0, 64, name="i", kind="vectorize") as i:
        b[i] = a[i] + tir.const(1.0, "float32")
    return tir.PrimFunc([A, B], ib.get())


class Recorder(transform.PassInstrument):
    """Every hook call, in order."""

    def __init__(self):
        self.calls = []

    def run_before_pass(self, mod, info):
        self.calls.append(("before pass", info.name))

    def run_after_pass(self, mod, info):
        self.calls.append(("after pass", info.name))

    def run_before_phase(self, name):
        self.calls.append(("before phase", name))

    def run_after_phase(self, name):
        self.calls.append(("after phase", name))


def test_a_phase_calls_the_phase_hooks_only():
    rec = Recorder()
    with PassContext(instruments=[rec]) as ctx, ctx.phase("llvm.optimize"):
        rec.calls.append(("inside", None))
    assert rec.calls == [("before phase", "llvm.optimize"), ("inside", None),
                         ("after phase", "llvm.optimize")]


def test_a_failing_phase_still_ends():
    timing = transform.PassTimingInstrument()
    with PassContext(instruments=[timing]) as ctx:
        with pytest.raises(RuntimeError, match="boom"), ctx.phase("llvm.codegen"):
            raise RuntimeError("boom")
    assert [name for name, _ in timing.records] == ["llvm.codegen"]


def test_build_times_its_llvm_phases_after_the_passes():
    codegen.clear_cache()
    timing = transform.PassTimingInstrument()
    with PassContext(instruments=[timing]):
        codegen.build(vector_add())
    names = [name for name, _ in timing.records]
    assert names[-4:] == LLVM_PHASES
    assert names[:-4] == [p.info.name for p in codegen.default_pipeline()]
    assert all(timing.timings[p] > 0 for p in LLVM_PHASES)
    table = timing.render()
    for p in LLVM_PHASES:
        assert p in table
    total = float(table.splitlines()[-1].split()[-1])
    assert total == pytest.approx(sum(s for _, s in timing.records) * 1e3, abs=1e-2)


def test_printers_do_not_see_the_llvm_phases():
    codegen.clear_cache()
    out = io.StringIO()
    with PassContext(instruments=[transform.PrintIRAfterEach(out)]):
        codegen.build(vector_add())
    text = out.getvalue()
    assert text.count("=== after") == len(codegen.default_pipeline())
    assert "llvm" not in text.replace('"target": "llvm"', "") and "define" not in text


def test_instruments_without_phase_hooks_still_work():
    class Old:  # the five pass hooks of a duck-typed instrument, nothing more
        enter_pass_ctx = exit_pass_ctx = lambda self: None
        run_before_pass = run_after_pass = lambda self, mod, info: None

        def should_run(self, mod, info):
            return True

    codegen.clear_cache()
    with PassContext(instruments=[Old()]):
        assert codegen.build(vector_add()).function_names == ["main"]
