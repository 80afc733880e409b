"""Run aarch64 (and SVE) modules on an x86 machine under QEMU user emulation.

Example::

    mod = codegen.build(func, target="llvm -mtriple=aarch64-linux-gnu -mattr=+sve")
    emulation.find_tools(install=True)  # as root: apt-get installs QEMU and a cross gcc
    for length in emulation.SVE_VECTOR_LENGTHS:  # bytes: 128- to 2048-bit vectors
        em = codegen.emulate(mod, sve_vector_length=length)
        em["main"](a, b, c)  # checked like mod["main"]; written arrays updated in place
        assert em.vscale() == length // 16  # measured inside the emulator

How a call runs: the module is exported once as an aarch64 shared library
(``Module.export_library``, linked by the cross toolchain); each function
gets a small C driver (codegen/emulation/driver.py) compiled with
``aarch64-linux-gnu-gcc`` against it. A call checks its arguments with the
same ``ArgBinder`` as a native call, writes them to a file, runs::

    qemu-aarch64 -L /usr/aarch64-linux-gnu -cpu max,sve-default-vector-length=N driver in out

and copies back the arrays the kernel may write. The driver returns the
kernel's return code, so a failing assert raises the exception a native call
raises (``Module.error``). A module without SVE runs with ``-cpu max,sve=off``,
so it is also checked not to need SVE.

Emulation is slow (a process per call, ~50 ms) and for testing only.
Parallel loops run serially: the library's launcher slot stays empty, which
generated code treats as "no thread pool" (codegen/llvm/parallel.py).

The tools come from Debian's packages ``qemu-user`` and
``gcc-aarch64-linux-gnu``; ``find_tools(install=True)`` installs them when
running as root, else ``EmulationUnavailable`` says what to install. For a
script: ``tools = emulation.find_tools(install=True)`` once, then
``codegen.emulate(mod, N)`` for each vector length.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import threading
import weakref
from typing import Any

import numpy as np

from ..cross_tools import CrossTools, EmulationUnavailable, find_tools
from ..runtime.args import ArgBinder, stored_data_vars
from ..runtime.module import Module, check_aligned
from . import driver

#: The SVE vector lengths (bytes) the tests and the tutorial run at: 128 to 2048 bits.
SVE_VECTOR_LENGTHS = (16, 32, 64, 256)
#: The lengths ``emulate`` accepts: powers of two from 16 to 256 bytes. QEMU 7.2 also
#: runs 48 or 96 (Armv8 SVE allows any multiple of 16), but LLVM assumes vscale is a
#: power of two on AArch64, so such lengths could run miscompiled code; beyond 256
#: QEMU silently clamps to 256.
VALID_SVE_VECTOR_LENGTHS = (16, 32, 64, 128, 256)
#: Seconds one emulated call may take by default.
DEFAULT_TIMEOUT = 120.0

# The vscale probe: SVE's ``cntb`` is the vector length in bytes; vscale is that / 16.
_PROBE_SOURCE = r"""
#include <stdio.h>
int main(void) {
    unsigned long bytes;
    __asm__ volatile("cntb %0" : "=r"(bytes));
    printf("%lu\n", bytes / 16);
    return 0;
}
"""


def emulate(mod: Module, sve_vector_length: int | None = None, *,
            tools: CrossTools | None = None, timeout: float = DEFAULT_TIMEOUT) -> EmulatedModule:
    """Run an aarch64 ``mod`` under QEMU, with SVE vectors of ``sve_vector_length`` bytes.

    Args:
        mod: a module built for ``-mtriple=aarch64-linux-gnu`` (with or without ``+sve``).
        sve_vector_length: the SVE vector length in bytes (16, 32, 64, 128 or 256);
            required for an SVE module, ``None`` for a module without SVE.
        tools: the cross tools (default: ``find_tools()``, which does not install).
        timeout: seconds one call may take.

    Raises:
        ValueError: ``mod`` is not for aarch64, or the vector length does not fit it.
        EmulationUnavailable: QEMU or the cross compiler is missing.
    """
    if not isinstance(mod, Module):
        raise TypeError(f"emulate: expected a codegen.Module, got {type(mod).__name__}")
    target = mod.target
    if target.arch != "aarch64":
        raise ValueError(f"emulate: the module is compiled for {target.triple}, not aarch64; "
                         "build it with target='llvm -mtriple=aarch64-linux-gnu'")
    _check_vector_length(target, sve_vector_length)
    return EmulatedModule(mod, sve_vector_length, tools or find_tools(), timeout)


def _check_vector_length(target: Any, length: int | None) -> None:
    if not target.has_sve:
        if length is not None:
            raise ValueError(f"emulate: sve_vector_length={length!r} given, but the module's "
                             f"target {target} has no SVE (add -mattr=+sve)")
        return
    if length is None:
        raise ValueError("emulate: an SVE module needs sve_vector_length, one of "
                         f"{VALID_SVE_VECTOR_LENGTHS} (bytes)")
    if isinstance(length, bool) or length not in VALID_SVE_VECTOR_LENGTHS:
        raise ValueError(f"emulate: sve_vector_length={length!r} is not a valid SVE length; "
                         f"expected bytes, one of {VALID_SVE_VECTOR_LENGTHS}")


class _CrossBuild:
    """A module's aarch64 library and drivers, in a temporary directory of their own.

    Shared by every ``EmulatedModule`` of the same module (one per vector
    length), so the library and each driver are built once.
    """

    def __init__(self, mod: Module, tools: CrossTools):
        self.tools = tools
        self.dir = tempfile.mkdtemp(prefix="tirlite-emulation-")
        weakref.finalize(self, shutil.rmtree, self.dir, True)
        self.library = os.path.join(self.dir, "libmodule.so")
        mod.export_library(self.library)
        self._drivers: dict[str, str] = {}
        self._lock = threading.Lock()

    def driver(self, name: str, symbol: str, dtypes: list[str]) -> str:
        """The path of the driver program for function ``name`` (compiled on first use)."""
        with self._lock:
            if name not in self._drivers:
                self._drivers[name] = self._compile(name, driver.driver_source(symbol, dtypes))
            return self._drivers[name]

    def _compile(self, name: str, source: str) -> str:
        src = os.path.join(self.dir, f"driver_{len(self._drivers)}.c")
        exe = src[:-2]
        with open(src, "w") as f:
            f.write(source)
        cmd = [self.tools.cc, "-O1", "-o", exe, src, self.library, "-lm",
               f"-Wl,-rpath,{self.dir}"]
        result = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=120)
        if result.returncode != 0:
            raise RuntimeError(f"emulate: compiling the driver of {name!r} failed:\n"
                               f"{result.stderr}")
        return exe


_builds: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_builds_lock = threading.Lock()


def _cross_build(mod: Module, tools: CrossTools) -> _CrossBuild:
    """The module's ``_CrossBuild``, made once per module (and set of tools)."""
    with _builds_lock:
        build = _builds.get(mod)
        if build is None or build.tools != tools:
            build = _builds[mod] = _CrossBuild(mod, tools)
        return build


class EmulatedModule:
    """A ``Module`` running under QEMU; calls look like ``Module``'s (see ``emulate``)."""

    def __init__(self, mod: Module, sve_vector_length: int | None, tools: CrossTools,
                 timeout: float):
        self.module = mod
        #: The requested SVE vector length in bytes (None: SVE off).
        self.sve_vector_length = sve_vector_length
        self.tools = tools
        self.timeout = timeout
        self._build = _cross_build(mod, tools)
        self._funcs: dict[str, EmulatedFunction] = {}
        self._vscale: int | None = None

    @property
    def cpu(self) -> str:
        """QEMU's ``-cpu`` option for this vector length."""
        if self.sve_vector_length is None:
            return "max,sve=off"
        return f"max,sve-default-vector-length={self.sve_vector_length}"

    def __getitem__(self, name: str) -> EmulatedFunction:
        if name not in self._funcs:
            if name not in self.module.function_names:
                raise KeyError(f"module has no function {name!r}; it has "
                               f"{self.module.function_names}")
            self._funcs[name] = EmulatedFunction(self, name)
        return self._funcs[name]

    def __call__(self, *args: Any) -> None:
        self[self.module.entry_name](*args)

    def vscale(self) -> int:
        """vscale inside the emulator (the SVE vector length in bytes / 16), measured."""
        if self.sve_vector_length is None:
            raise ValueError("vscale: this module runs without SVE (sve_vector_length=None)")
        if self._vscale is None:
            probe = _probe(self.tools)
            self._vscale = int(self.run([probe]).stdout)
        return self._vscale

    def run(self, command: list[str]) -> subprocess.CompletedProcess:
        """Run an aarch64 program ``command`` under QEMU with this module's CPU options."""
        cmd = [self.tools.qemu, "-L", self.tools.sysroot, "-cpu", self.cpu, *command]
        try:
            result = subprocess.run(cmd, capture_output=True, check=False, text=True,
                                    timeout=self.timeout, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            raise TimeoutError(f"emulate: {os.path.basename(command[0])} did not finish in "
                               f"{self.timeout} s under QEMU") from None
        if result.returncode != 0:
            raise RuntimeError(f"emulate: {' '.join(cmd)} failed with "
                               f"{_status(result.returncode)}:\n{result.stderr}")
        return result

    def __repr__(self) -> str:
        return f"<EmulatedModule {self.module.function_names} (-cpu {self.cpu})>"


def _status(code: int) -> str:
    # QEMU ends with the guest's signal: a shell-style 128 + signal number, or a negative code.
    if code < 0 or code > 128:
        return f"signal {-code if code < 0 else code - 128}"
    return f"exit status {code}"


class EmulatedFunction:
    """One function of an ``EmulatedModule``: checks arguments like ``PackedFunction``."""

    def __init__(self, em: EmulatedModule, name: str):
        mod = em.module
        self.module, self.name = em, name
        func = mod._funcs[name]
        self._binder = ArgBinder(func, name)
        self._dtypes = ["handle" if p in func.buffer_map else p.dtype for p in func.params]
        self._dtypes += [v.dtype for v in self._binder.hidden_vars]
        self._written = [_may_write(func, p) for p in func.params]
        self._written += [False] * len(self._binder.hidden_vars)
        self._symbol = mod._symbols[name]

    def __call__(self, *args: Any) -> None:
        bound = self._binder.bind(args)
        values = list(bound.values) + list(bound.hidden_values)
        for k, d in enumerate(self._dtypes):
            if d == "handle":
                self._check_aligned(k, values[k])
        exe = self.module._build.driver(self.name, self._symbol, self._dtypes)
        packed = driver.pack_arguments(self._dtypes, values, self._written)
        with tempfile.TemporaryDirectory(dir=self.module._build.dir) as tmp:
            inp, out = os.path.join(tmp, "in"), os.path.join(tmp, "out")
            with open(inp, "wb") as f:
                f.write(packed.data)
            self.module.run([exe, inp, out])
            with open(out, "rb") as f:
                code = driver.unpack_results(packed, f.read())
        if code:
            raise self.module.module.error(self.name, code)

    def _check_aligned(self, k: int, arr: np.ndarray) -> None:
        # The same check (and words) as PackedFunction's, for the same behaviour.
        check_aligned(self.name, self._binder.func.params[k].name, arr)

    def __repr__(self) -> str:
        return f"<EmulatedFunction {self.name} of {self.module!r}>"


def _may_write(func: Any, param: Any) -> bool:
    """Whether a call may change the array passed for ``param`` (copied back if so)."""
    buf = func.buffer_map.get(param)
    if buf is None:  # a scalar, or a bare handle whose use we do not know: assume written
        return param.dtype == "handle"
    return any(buf.data is v for v in stored_data_vars(func))


_probes: dict[CrossTools, str] = {}
_probes_lock = threading.Lock()


def _probe(tools: CrossTools) -> str:
    """The vscale probe program, compiled once per process (and set of tools)."""
    with _probes_lock:
        if tools not in _probes:
            folder = tempfile.mkdtemp(prefix="tirlite-vscale-")
            weakref.finalize(_probe, shutil.rmtree, folder, True)
            src, exe = os.path.join(folder, "probe.c"), os.path.join(folder, "probe")
            with open(src, "w") as f:
                f.write(_PROBE_SOURCE)
            subprocess.run([tools.cc, "-march=armv8-a+sve", "-o", exe, src], check=True,
                           capture_output=True, timeout=120)
            _probes[tools] = exe
        return _probes[tools]


__all__ = ["SVE_VECTOR_LENGTHS", "VALID_SVE_VECTOR_LENGTHS", "CrossTools", "EmulatedFunction",
           "EmulatedModule", "EmulationUnavailable", "emulate", "find_tools"]
