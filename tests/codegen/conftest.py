"""Fixtures shared by the codegen tests (``tools``, the aarch64 emulation, is in
tests/conftest.py)."""

import pytest

from codegen.runtime.args import ArgBinder


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
