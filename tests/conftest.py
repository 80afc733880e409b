"""Fixtures shared across the test packages.

``tools``: the aarch64 cross tools and QEMU for tests that run modules under
emulation (codegen/emulation.py). As root (CI) the fixture installs Debian's
packages; elsewhere, without them, the test skips with the command that would.
"""

import os

import pytest

from codegen import emulation


@pytest.fixture(scope="session")
def tools():
    try:
        return emulation.find_tools(install=os.geteuid() == 0)
    except emulation.EmulationUnavailable as err:
        pytest.skip(f"no aarch64 emulation: {err}")
