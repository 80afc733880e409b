"""Every tutorial runs to completion (each asserts its own results)."""

import pathlib
import runpy

import pytest

TUTORIALS = sorted((pathlib.Path(__file__).parent.parent / "tutorials").glob("[0-9]*.py"))


def test_there_are_tutorials():
    assert TUTORIALS, "tutorials/ has no numbered walkthroughs"


@pytest.mark.parametrize("path", TUTORIALS, ids=[p.stem for p in TUTORIALS])
def test_tutorial_runs(path, capsys):
    module = runpy.run_path(str(path), run_name="tutorial")
    module["main"]()
    assert capsys.readouterr().out.strip(), f"{path.name} printed nothing"
