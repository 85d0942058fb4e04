// The caller's array library (opendml/_frameworks.py): how to allocate like its arrays, which CUDA
// stream it considers current, and how to borrow its arrays fastest.
#pragma once

#include <unordered_map>

#include "dlpack.h"

namespace opendml::python {

struct Framework {
  nb::object adapter;
  bool synchronize = false;  // the library cannot order its streams after ours (JAX)
  // PyTorch's, used directly from here rather than through the adapter's Python code, since every
  // call takes this path: torch.dtype -> DLPack type, dtype names -> torch.dtype, and
  // torch._C._cuda_getCurrentRawStream.
  std::unordered_map<PyObject*, DLDataType> torch_types;
  std::unordered_map<std::string, nb::object> torch_dtypes;
  nb::object torch_raw_stream;

  // A new array on `like`'s device with `like`'s dtype, or the one named ("uint32", "int64", ...).
  nb::object empty(nb::handle like, nb::handle shape, const char* dtype) const;
  // The cudaStream_t its library runs on for CUDA device `device`.
  intptr_t current_stream(nb::handle like, int device) const;
};

// The framework of an array's type, asked of opendml._frameworks once per type.
const Framework& framework_for(nb::handle array);

// Where an array lives (PyTorch's accessors for its tensors, else DLPack or the CUDA array interface).
Place place_of_array(nb::handle array, const Name& what);

// Borrows `array` for work at `place` on `stream`, or raises naming `what` if it lives elsewhere.
// PyTorch tensors go through their own accessors when `stream` is PyTorch's current stream (which
// `on_current_stream` says, or PyTorch is asked), where DLPack's handshake would have nothing to do;
// everything else goes through DLPack and its handshake.
Borrowed take(nb::handle array, const Name& what, Place place, intptr_t stream, bool on_current_stream, bool writable);

}  // namespace opendml::python
