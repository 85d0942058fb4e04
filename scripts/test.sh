#!/usr/bin/env bash
# Builds and runs every test: the whole suite under AddressSanitizer and UndefinedBehaviorSanitizer
# (CPU backend), then a release build with the CUDA backend for Hopper (sm_90) when nvcc is
# available; its GPU tests report "skipped" on a machine without a GPU; then the Python package's
# tests (scripts/test-python.sh). This is what CI runs.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
export PATH="$PATH:/usr/local/cuda/bin"
cmake --workflow --preset test-asan
if command -v nvcc >/dev/null; then
  cmake --workflow --preset test-cuda
else
  echo "test: no nvcc, so the CUDA backend was not built"
fi
scripts/test-python.sh
