import os

# JAX takes 75% of GPU memory at its first use unless told not to; the tests that need tens of
# GiB (inputs past 2^32 elements) share the process with JAX's tests.
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

import pytest

import opendml


def _cuda_missing():
    """Why CUDA tests cannot run here, or None when they can."""
    if not opendml.built_with_cuda:
        return "this build of opendml has no CUDA backend (nvcc was not found at build time)"
    try:
        opendml.Device("cuda")
    except opendml.UnsupportedError as e:
        return f"no CUDA GPU: {e}"
    return None


def pytest_collection_modifyitems(config, items):
    reason = _cuda_missing()
    if reason is None:
        return
    skip = pytest.mark.skip(reason=reason)
    for item in items:
        if "cuda" in item.keywords:
            item.add_marker(skip)
