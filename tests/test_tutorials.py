"""Every tutorial runs to completion (each asserts its own results)."""

import pathlib
import re
import runpy

import pytest

from codegen import emulation

TUTORIALS = sorted((pathlib.Path(__file__).parent.parent / "tutorials").glob("[0-9]*.py"))


def _check_scalable_vectors(out: str) -> None:
    """Lesson 6 shows both builds' IR and runs SVE at every vector length (if QEMU is there)."""
    for shown in ("<vscale x 4 x float>", "@llvm.vscale", "llvm.get.active.lane.mask.nxv4i1",
                  "llvm.masked.store.nxv4f32", "whilelo", "ld1w", "llvm.vector.reduce.fadd.nxv4f32",
                  "Failed to vectorize loop with extent T.vscale() * 4 for target llvm"):
        assert shown in out, f"06_scalable_vectors does not show {shown!r}"
    assert re.search(r"<(8|16) x float>", out), "no fixed-width x86 vectors shown"
    try:
        emulation.find_tools()  # the tutorial installed them if it could
    except emulation.EmulationUnavailable:
        assert "emulation unavailable" in out
        return
    for vscale in (1, 2, 4, 16):  # SVE_VECTOR_LENGTHS 16..256 bytes; two sizes n each
        runs = re.findall(rf"vscale = +{vscale},.*equal to NumPy and to x86", out)
        assert len(runs) == 2, f"saxpy at vscale {vscale}: {runs}"
        assert re.search(rf"vscale = +{vscale}: sum = ", out), f"no sum at vscale {vscale}"


#: Checks of a tutorial's output beyond "it ran and printed something".
OUTPUT_CHECKS = {"06_scalable_vectors": _check_scalable_vectors}


def test_there_are_tutorials():
    assert TUTORIALS, "tutorials/ has no numbered walkthroughs"


@pytest.mark.parametrize("path", TUTORIALS, ids=[p.stem for p in TUTORIALS])
def test_tutorial_runs(path, capsys):
    module = runpy.run_path(str(path), run_name="tutorial")
    module["main"]()
    out = capsys.readouterr().out
    assert out.strip(), f"{path.name} printed nothing"
    OUTPUT_CHECKS.get(path.stem, lambda out: None)(out)
