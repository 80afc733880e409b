#!/usr/bin/env bash
# Run the test suite on every core (installs into .venv first). Extra arguments go to
# pytest (-n 0 runs in one process). TIRLITE_HOST_TARGET="llvm -mcpu=x86-64-v3" runs it
# as on an AVX2 machine (see README, "Testing on another CPU").
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/python -m pytest -q -n auto "$@"
