#!/bin/sh
# Install what codegen.emulate needs to run aarch64/SVE modules on x86 (Debian, as root):
# QEMU user emulation, the aarch64 cross compiler and the aarch64 C library to link with.
# The list is codegen/cross_packages.py's, which codegen.cross_tools also installs from:
#     python -c "from codegen import emulation; emulation.find_tools(install=True)"
set -e
cd "$(dirname "$0")/.."
export DEBIAN_FRONTEND=noninteractive
PACKAGES=$(python3 codegen/cross_packages.py)
# A fresh machine has no package lists yet: update, then try again.
apt-get install -y --no-install-recommends $PACKAGES || {
    apt-get update && apt-get install -y --no-install-recommends $PACKAGES
}
qemu-aarch64 --version | head -n 1
aarch64-linux-gnu-gcc --version | head -n 1
ls /usr/aarch64-linux-gnu/lib/crti.o /usr/aarch64-linux-gnu/lib/libm.so
