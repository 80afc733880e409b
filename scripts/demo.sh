#!/usr/bin/env bash
# The headline walkthrough: build a kernel with the ir_builder, vectorize it,
# show the IR before and after and the LLVM IR, run it and check it against NumPy.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/python tutorials/01_vector_add.py "$@"
