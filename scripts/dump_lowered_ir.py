"""Print the lowered IR of the tutorial and benchmark kernels, to compare two commits.

A refactor that promises "behaviour unchanged" shows it here: run this on both
commits and diff the outputs (they must be byte-identical)::

    python scripts/dump_lowered_ir.py > /tmp/before.txt      # on the old commit
    python scripts/dump_lowered_ir.py > /tmp/after.txt       # on the new one
    diff /tmp/before.txt /tmp/after.txt

Every function ``codegen.build`` compiles while the tutorials run (01-05, 07's default
schedule only: tuning measures) is recorded after the last pass of the pipeline, with its
target; the benchmark kernels are lowered for the host and for an AVX2 CPU (``--target``
picks others). Remarks are left out: their wording may change while the IR may not.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import pathlib
import runpy
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

import codegen  # noqa: E402
import transform  # noqa: E402

build_module = importlib.import_module("codegen.build")

TUTORIALS = ("01_vector_add", "02_vectorizer_walkthrough", "03_kernel_writers_guide",
             "04_tails_conditionals_reductions", "05_schedules")
TARGETS = ("llvm", "llvm -mcpu=znver3")


def _recording(log: list):
    """A pipeline whose last pass appends each function's final IR to ``log``."""
    original = build_module.default_pipeline

    @transform.module_pass(opt_level=0, name="RecordLoweredIR")
    def record(mod, ctx):
        for name, func in mod.items():
            log.append((name, func.attrs.get("target") if func.attrs else None, str(func)))
        return mod

    def pipeline():
        return original() + [record]

    return pipeline


def tutorial_ir() -> list:
    log: list = []
    original = build_module.default_pipeline
    build_module.default_pipeline = _recording(log)
    build_module.clear_cache()
    try:
        for stem in TUTORIALS:
            log.append((f"== tutorial {stem}", None, ""))
            module = runpy.run_path(str(ROOT / "tutorials" / f"{stem}.py"), run_name="tutorial")
            with contextlib.redirect_stdout(io.StringIO()):
                module["main"]()
    finally:
        build_module.default_pipeline = original
    return log


def benchmark_funcs() -> dict:
    import bench_access
    import bench_kernels
    import bench_reach2

    funcs = {}
    for name in ("vector_add", "saxpy", "relu", "gather", "sum"):
        funcs[f"kernels.{name}"] = getattr(bench_kernels, f"tir_{name}")(1000)
    funcs["kernels.matmul"] = bench_kernels.tir_matmul(64)
    funcs["kernels.conv"] = bench_kernels.tir_conv(16)
    for stride in (2, 3, 5):
        funcs[f"access.copy_strided{stride}"] = bench_access.tir_copy_strided(1000, stride)
        funcs[f"access.sum_strided{stride}"] = bench_access.tir_sum_strided(1000, stride)
    for name in ("reverse", "cmul", "rgb_gray_f32", "rgb_gray_u8", "gather"):
        funcs[f"access.{name}"] = getattr(bench_access, f"tir_{name}")(1000)
    funcs["access.transpose_2d"] = bench_access.tir_transpose_2d(64, 8)
    funcs["access.transpose_flat"] = bench_access.tir_transpose_flat(64, 8)
    for name, make in bench_reach2.MAKERS.items():
        funcs[f"reach2.{name}"] = make(1000)
    return funcs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", action="append", help="targets for the benchmark kernels")
    args = parser.parse_args()
    out = sys.stdout
    for name, target, text in tutorial_ir():
        out.write(f"-- {name} [{target}]\n{text}\n")
    for target in args.target or TARGETS:
        for name, func in benchmark_funcs().items():
            out.write(f"-- {name} [{target}]\n{codegen.lower(func, target)}\n")


if __name__ == "__main__":
    main()
