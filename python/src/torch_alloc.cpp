// opendml._torch_alloc: the array layer's results for torch.Tensor arguments, allocated through
// PyTorch's C++ API (at::empty with the argument's options) rather than through Tensor.new_empty,
// whose Python argument parsing is most of what a small call costs above torch.cat
// (docs/python.md, `opendml.torch`, "Allocation"). The tensor is PyTorch's own, with its storage
// from PyTorch's allocator, as new_empty would make it.
//
// Built only where the interpreter that builds the package can import torch
// (python/CMakeLists.txt), against that torch's headers and libraries; it exports the torch version
// it was built for, and opendml/_frameworks.py uses it only under the same version. It links
// PyTorch's libraries but loads no other copy of them: they are already in the process, since torch
// is imported first.
#include "torch_alloc.h"

#include <ATen/ops/empty.h>
#include <torch/csrc/Dtype.h>
#include <torch/csrc/autograd/python_variable.h>

#include <exception>

namespace {

// opendml::python::TorchEmpty.
PyObject* empty(PyObject* like, const int64_t* shape, size_t rank, PyObject* dtype) {
  try {
    at::TensorOptions options = THPVariable_Unpack(like).options();
    if (dtype != nullptr) {
      if (!THPDtype_Check(dtype)) {
        PyErr_SetString(PyExc_TypeError, "opendml._torch_alloc: dtype is not a torch.dtype");
        return nullptr;
      }
      options = options.dtype(reinterpret_cast<THPDtype*>(dtype)->scalar_type);
    }
    return THPVariable_Wrap(at::empty(at::IntArrayRef(shape, rank), options));
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
    return nullptr;
  }
}

constexpr opendml::python::TorchEmpty kEmpty = empty;

PyModuleDef module_def = {PyModuleDef_HEAD_INIT,
                          "_torch_alloc",
                          "PyTorch's C++ allocation for opendml's array layer (python/src/torch_alloc.cpp)",
                          -1,
                          nullptr,
                          nullptr,
                          nullptr,
                          nullptr,
                          nullptr};

}  // namespace

PyMODINIT_FUNC PyInit__torch_alloc() {
  PyObject* m = PyModule_Create(&module_def);
  if (m == nullptr) return nullptr;
  PyObject* capsule = PyCapsule_New(reinterpret_cast<void*>(kEmpty), opendml::python::kTorchEmptyCapsule, nullptr);
  if (capsule != nullptr && PyModule_AddObject(m, "empty", capsule) != 0) Py_CLEAR(capsule);  // stolen on success
  if (capsule == nullptr || PyModule_AddStringConstant(m, "torch_version", OPENDML_TORCH_VERSION) != 0) {
    Py_DECREF(m);
    return nullptr;
  }
  return m;
}
