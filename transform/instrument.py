"""Pass instruments: hooks a ``PassContext`` calls around every pass it runs.

Build steps that are not TIR passes (LLVM optimization, machine code) are
*phases* (``PassContext.phase``): an instrument hears them through
``run_before_phase(name)`` / ``run_after_phase(name)``, never through the pass
hooks, so a printer of TIR is never handed LLVM text.

>>> timing = PassTimingInstrument()
>>> with PassContext(instruments=[timing, PrintIRAfterEach()]):   # doctest: +SKIP
...     pipeline(mod)
>>> print(timing.render())                                          # doctest: +SKIP
"""

from __future__ import annotations

import sys
import time
from typing import IO, Any


class PassInstrument:
    """Base of instruments; every hook does nothing by default."""

    def enter_pass_ctx(self) -> None:
        """Called when a ``PassContext`` holding this instrument is entered."""

    def exit_pass_ctx(self) -> None:
        """Called when that ``PassContext`` is exited."""

    def should_run(self, mod: Any, info: Any) -> bool:
        """Return False to skip the pass described by ``info``."""
        return True

    def run_before_pass(self, mod: Any, info: Any) -> None:
        """Called just before a pass runs, with its input module."""

    def run_after_pass(self, mod: Any, info: Any) -> None:
        """Called just after a pass ran, with its output module."""

    def run_before_phase(self, name: str) -> None:
        """Called before a build phase that is not a TIR pass (``PassContext.phase``)."""

    def run_after_phase(self, name: str) -> None:
        """Called after that phase, even if it raised."""


def pass_instrument(cls: type) -> type:
    """Make a class with some of the hook methods a ``PassInstrument`` (as TVM's decorator)."""
    if issubclass(cls, PassInstrument):
        return cls
    return type(cls.__name__, (cls, PassInstrument), {
        "__doc__": cls.__doc__, "__module__": cls.__module__, "__qualname__": cls.__qualname__,
    })


class PrintIRAfterEach(PassInstrument):
    """Print ``=== after <pass name> ===`` and the module's text after every pass."""

    def __init__(self, file: IO[str] | None = None):
        self.file = file

    def run_after_pass(self, mod: Any, info: Any) -> None:
        out = self.file if self.file is not None else sys.stdout  # sys.stdout as of now
        print(f"=== after {info.name} ===", file=out)
        print(str(mod), file=out)


class PassTimingInstrument(PassInstrument):
    """Record the wall-clock seconds of every pass, and of the build phases after them.

    ``timings`` maps a pass name to its total seconds (a pass run twice adds
    up); ``records`` lists ``(name, seconds)`` in the order the passes ended.
    ``codegen.build`` also reports its phases after the TIR passes, under
    their names: ``codegen.tir_to_llvm`` (TIR to LLVM IR), ``llvm.parse_verify``,
    ``llvm.optimize`` (LLVM's O3) and ``llvm.codegen`` (machine code).
    """

    def __init__(self) -> None:
        self.timings: dict[str, float] = {}
        self.records: list[tuple[str, float]] = []
        self._starts: list[float] = []  # a stack: a Sequential's passes nest inside it

    def enter_pass_ctx(self) -> None:
        self.timings.clear()
        self.records.clear()
        self._starts.clear()

    def run_before_pass(self, mod: Any, info: Any) -> None:
        self._starts.append(time.perf_counter())

    def run_after_pass(self, mod: Any, info: Any) -> None:
        self._record(info.name)

    def run_before_phase(self, name: str) -> None:
        self._starts.append(time.perf_counter())

    def run_after_phase(self, name: str) -> None:
        self._record(name)

    def _record(self, name: str) -> None:
        seconds = time.perf_counter() - self._starts.pop()
        self.records.append((name, seconds))
        self.timings[name] = self.timings.get(name, 0.0) + seconds

    def render(self) -> str:
        """A table of pass names and milliseconds, slowest first, with the total."""
        rows = sorted(self.timings.items(), key=lambda kv: -kv[1])
        width = max([len("pass")] + [len(name) for name, _ in rows])
        lines = [f"{'pass':<{width}}  {'ms':>10}"]
        lines += [f"{name:<{width}}  {sec * 1e3:>10.3f}" for name, sec in rows]
        total = sum(sec for _, sec in self.records)
        lines.append(f"{'total':<{width}}  {total * 1e3:>10.3f}")
        return "\n".join(lines)
