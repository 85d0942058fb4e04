// What opendml._torch_alloc (torch_alloc.cpp) hands opendml._opendml (frameworks.cpp): a capsule of
// this name holding a TorchEmpty, PyTorch's at::empty for the array layer's results.
#pragma once

#include <Python.h>

#include <cstddef>
#include <cstdint>

namespace opendml::python {

// A new tensor of `rank` sizes on like's device with like's dtype, or `dtype` (a torch.dtype) where
// not null. `like` is a torch.Tensor itself; null with a Python error set where PyTorch refuses.
using TorchEmpty = PyObject* (*)(PyObject* like, const int64_t* shape, size_t rank, PyObject* dtype);
inline constexpr const char* kTorchEmptyCapsule = "opendml._torch_alloc.empty";

}  // namespace opendml::python
