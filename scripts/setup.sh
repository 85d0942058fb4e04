#!/usr/bin/env bash
# Installs the Debian/Ubuntu packages that building and testing opendml needs, where they are
# missing. The CUDA backend is built when nvcc is found (the toolkit is not installed here).
set -euo pipefail
# clang, its sanitizer runtimes and LLVM's OpenMP (with Archer): the tsan and fuzz stages;
# python3-dev and python3-venv: the Python package's stage.
packages=(cmake ninja-build g++ python3 python3-dev python3-venv libgtest-dev libgmock-dev nlohmann-json3-dev clang
          libclang-rt-dev libomp-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  echo "setup: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# The peer benchmark's tests run under the python3 that CMake finds: NumPy, and matplotlib for its plots.
if ! python3 -c 'import numpy, matplotlib' >/dev/null 2>&1; then
  echo "setup: installing numpy and matplotlib for $(command -v python3)"
  python3 -m pip install -q numpy matplotlib
fi
# nvcc lives outside PATH in the usual toolkit install.
if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then
  echo "setup: nvcc found at /usr/local/cuda/bin (add it to PATH to build the CUDA backend)"
fi
