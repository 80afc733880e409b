"""Fixtures shared by the codegen tests.

``tools``: the aarch64 cross tools and QEMU for tests that run modules under
emulation (codegen/emulation.py). As root (CI) the fixture installs Debian's
packages; elsewhere, without them, the test skips with the command that would.
"""

import os

import pytest

from codegen import emulation
from codegen.runtime.args import ArgBinder


@pytest.fixture(scope="session")
def tools():
    try:
        return emulation.find_tools(install=os.geteuid() == 0)
    except emulation.EmulationUnavailable as err:
        pytest.skip(f"no aarch64 emulation: {err}")


@pytest.fixture
def binds(monkeypatch):
    """How many calls reached the Python checks."""
    count = [0]
    original = ArgBinder.bind

    def counting(self, args):
        count[0] += 1
        return original(self, args)

    monkeypatch.setattr(ArgBinder, "bind", counting)
    return count
