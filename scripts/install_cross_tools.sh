#!/bin/sh
# Install what codegen.emulate needs to run aarch64/SVE modules on x86 (Debian, as root):
# QEMU user emulation and the aarch64 cross compiler (which brings the aarch64 C library).
# The same as: python -c "from codegen import emulation; emulation.find_tools(install=True)"
set -e
export DEBIAN_FRONTEND=noninteractive
PACKAGES="qemu-user gcc-aarch64-linux-gnu"
# A fresh machine has no package lists yet: update, then try again.
apt-get install -y --no-install-recommends $PACKAGES || {
    apt-get update && apt-get install -y --no-install-recommends $PACKAGES
}
qemu-aarch64 --version | head -n 1
aarch64-linux-gnu-gcc --version | head -n 1
