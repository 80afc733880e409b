"""Finding (and, as root, installing) the aarch64 cross tools: QEMU, a cross compiler, a linker.

Emulation (codegen/emulation.py) needs three things from Debian's packages
(the list is ``codegen/cross_packages.py``, which the install script reads too):

- ``qemu-aarch64`` (package ``qemu-user``; ``qemu-aarch64-static`` from
  ``qemu-user-static`` works too), which runs aarch64 Linux programs on x86;
- ``aarch64-linux-gnu-gcc`` (package ``gcc-aarch64-linux-gnu``), which compiles
  the small C driver that calls a kernel and links shared libraries;
- the aarch64 C library in ``/usr/aarch64-linux-gnu``, the "sysroot": its
  loader, which QEMU runs programs with (``libc6-arm64-cross``, a dependency of
  the compiler), and ``crti.o`` and ``libm.so``, which linking needs
  (``libc6-dev-arm64-cross``, only a recommendation of the compiler, so a bare
  ``--no-install-recommends`` install lacks it unless it is named).

The tools count as present only when all of these are: a compiler without
its C library fails every link (``cannot find crti.o``).

``export_library`` of an aarch64 module only needs a linker: the cross
compiler, or ``ld.lld`` (package ``lld``) when the compiler is missing.

>>> tools = find_tools(install=True)    # doctest: +SKIP
>>> tools.qemu, tools.cc                 # doctest: +SKIP
('/usr/bin/qemu-aarch64', '/usr/bin/aarch64-linux-gnu-gcc')
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import threading

import attrs

from .cross_packages import PACKAGES

#: The command that installs the packages emulation needs.
INSTALL_COMMAND = "apt-get install -y --no-install-recommends " + " ".join(PACKAGES)
SYSROOT = "/usr/aarch64-linux-gnu"
#: Files of the sysroot, and the package each comes from: running needs the loader,
#: linking the start files and the math library.
SYSROOT_FILES = (
    ("lib/ld-linux-aarch64.so.1", "libc6-arm64-cross"),
    ("lib/crti.o", "libc6-dev-arm64-cross"),
    ("lib/libm.so", "libc6-dev-arm64-cross"),
)

_QEMU_NAMES = ("qemu-aarch64", "qemu-aarch64-static")
_CC_NAME = "aarch64-linux-gnu-gcc"
_LLD_NAME = "ld.lld"
#: Seconds apt-get may take before we give up (an update fetches the package lists).
_APT_TIMEOUT = 900
_install_lock = threading.Lock()

# Looked up through the module so tests can pretend a tool is missing.
_which = shutil.which


class EmulationUnavailable(RuntimeError):
    """A tool needed to cross-link or emulate is missing; the message says how to install it."""


@attrs.frozen
class CrossTools:
    """Paths of the aarch64 tools (``None`` for a missing optional one)."""

    qemu: str  #: ``qemu-aarch64``
    cc: str  #: ``aarch64-linux-gnu-gcc``
    sysroot: str  #: the aarch64 C library QEMU loads programs with (``-L``)
    lld: str | None = None  #: ``ld.lld``, when installed


def _missing(qemu: str | None, cc: str | None, sysroot_missing: list[str]) -> list[str]:
    missing = []
    if qemu is None:
        missing.append("qemu-aarch64 (Debian package qemu-user)")
    if cc is None:
        missing.append(f"{_CC_NAME} (Debian package gcc-aarch64-linux-gnu)")
    missing.extend(sysroot_missing)
    return missing


def _lookup() -> tuple[CrossTools | None, list[str]]:
    qemu = next((p for p in map(_which, _QEMU_NAMES) if p), None)
    cc = _which(_CC_NAME)
    missing = _missing(qemu, cc, _missing_sysroot_files())
    if missing:
        return None, missing
    return CrossTools(qemu=qemu, cc=cc, sysroot=SYSROOT, lld=_which(_LLD_NAME)), []


def _missing_sysroot_files() -> list[str]:
    """The sysroot files running and linking need that are absent, with their packages."""
    return [f"{SYSROOT}/{path} (Debian package {package})" for path, package in SYSROOT_FILES
            if not os.path.exists(os.path.join(SYSROOT, path))]


def find_tools(install: bool = False) -> CrossTools:
    """The tools emulation needs; with ``install=True``, apt-get installs missing ones as root.

    Raises:
        EmulationUnavailable: a tool is missing (and could not be installed);
            the message names it and the command that installs it.
    """
    tools, missing = _lookup()
    if tools is not None:
        return tools
    if install and _can_install():
        with _install_lock:
            tools, missing = _lookup()  # another thread may have installed them meanwhile
            if tools is None:
                log = _apt_install()
                tools, missing = _lookup()
        if tools is not None:
            return tools
        raise EmulationUnavailable(
            f"aarch64 emulation: {INSTALL_COMMAND} did not provide {', '.join(missing)}:\n{log}")
    how = ("(install=True runs it only as root, with apt-get)" if install
           else "as root, or call codegen.emulation.find_tools(install=True) as root")
    raise EmulationUnavailable(
        f"aarch64 emulation needs {', '.join(missing)}; install with: {INSTALL_COMMAND} {how}")


def _can_install() -> bool:
    return os.geteuid() == 0 and _which("apt-get") is not None


def _apt(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    cmd = ["apt-get", "-o", "DPkg::Lock::Timeout=120", *args]
    try:
        return subprocess.run(cmd, env=env, capture_output=True, text=True, check=False,
                              timeout=_APT_TIMEOUT, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(cmd, -1, "", f"timed out after {_APT_TIMEOUT} s")


def _apt_install() -> str:
    """Install ``PACKAGES``, updating the package lists first if needed; the output's tail."""
    result = _apt("install", "-y", "--no-install-recommends", *PACKAGES)
    if result.returncode != 0:  # a fresh machine has no package lists yet
        _apt("update")
        result = _apt("install", "-y", "--no-install-recommends", *PACKAGES)
    return (result.stdout + result.stderr)[-2000:]


# ---------------------------------------------------------------- cross linking


def link_command(output: str, objects: list[str]) -> list[str]:
    """The command linking aarch64 ``objects`` into the shared library ``output``.

    ``aarch64-linux-gnu-gcc -shared``, or ``ld.lld -shared`` when the cross
    compiler is missing. Raises ``EmulationUnavailable`` when neither exists.
    """
    cc = _which(_CC_NAME)
    if cc is not None:
        return [cc, "-shared", "-o", output, *objects, "-lm"]
    lld = _which(_LLD_NAME)
    if lld is not None:
        # Without the C library's sysroot libm stays an undefined symbol, resolved at load time.
        libdir = os.path.join(SYSROOT, "lib")
        libm = ["-L", libdir, "-lm"] if os.path.exists(os.path.join(libdir, "libm.so")) else []
        return [lld, "-shared", "-o", output, *objects, *libm]
    raise EmulationUnavailable(
        f"export_library: linking a shared library for aarch64 needs {_CC_NAME} "
        "(apt-get install -y gcc-aarch64-linux-gnu) or ld.lld (apt-get install -y lld); "
        "or export an object file (a path ending in .o) instead")


def link_shared(obj: bytes, path: str) -> None:
    """Link the aarch64 object code ``obj`` into the shared library ``path``."""
    with tempfile.TemporaryDirectory() as tmp:
        obj_path = os.path.join(tmp, "module.o")
        with open(obj_path, "wb") as f:
            f.write(obj)
        cmd = link_command(path, [obj_path])
        result = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=120)
    if result.returncode != 0:
        raise RuntimeError(f"export_library: {cmd[0]} failed:\n{result.stderr}")


__all__ = ["CrossTools", "EmulationUnavailable", "find_tools", "link_command", "link_shared"]
