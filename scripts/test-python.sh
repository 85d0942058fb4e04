#!/usr/bin/env bash
# Builds the Python package opendml and runs its tests (python/tests) in a virtual environment at
# ${OPENDML_VENV:-$HOME/.cache/opendml/venv}, created or reused. Everything the tests need comes
# from PyPI. The CUDA backend is built when nvcc is found; tests marked `cuda` report "skipped"
# (with the reason) where there is no GPU. Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
venv="${OPENDML_VENV:-$HOME/.cache/opendml/venv}"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
py="$venv/bin/python"
"$py" -m pip install -q --upgrade pip
"$py" -m pip install -q numpy pytest nanobind scikit-build-core onnx onnxruntime "jax[cpu]" ml_dtypes torch
# --no-build-isolation: build with the nanobind and scikit-build-core just installed, and keep the
# build directory (build/python/) between runs. Whether to build the CUDA backend is said every
# time, so that a value cached there by an earlier build does not stick.
cuda=OFF
if command -v nvcc >/dev/null || [ -x /usr/local/cuda/bin/nvcc ]; then cuda=ON; fi
"$py" -m pip install -q --no-build-isolation -Ccmake.define.OPENDML_WITH_CUDA=$cuda .
# torch is installed above, so the package has opendml._torch_alloc: its test fails rather than
# skips where the build left it out.
OPENDML_REQUIRE_TORCH_ALLOC=1 "$py" -m pytest -ra python/tests "$@"
