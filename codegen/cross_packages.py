"""The Debian packages aarch64 emulation needs: the one list the install script,
``codegen.cross_tools`` and its error messages use.

Each entry is (package, what it provides). ``apt-get install
--no-install-recommends`` installs exactly these and their dependencies, as a
bare machine would: the C library headers and start files (``crti.o``,
``libm.so``) that linking needs are only a *recommendation* of the cross
compiler, so they are listed here by name.

Run as a script (no imports, so it works before the project is installed), it
prints the package names: ``python3 codegen/cross_packages.py``.
"""

PACKAGES_PROVIDING = (
    ("qemu-user", "qemu-aarch64, which runs aarch64 Linux programs on x86"),
    ("gcc-aarch64-linux-gnu", "aarch64-linux-gnu-gcc, the cross compiler and linker"),
    ("libc6-dev-arm64-cross", "the aarch64 C library's crti.o and libm.so, for linking"),
)
PACKAGES = tuple(name for name, _ in PACKAGES_PROVIDING)

if __name__ == "__main__":
    print(" ".join(PACKAGES))
