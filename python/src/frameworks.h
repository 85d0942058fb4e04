// The caller's array library (opendml/_frameworks.py): how to allocate like its arrays, which CUDA
// stream it considers current, and how to borrow its arrays fastest.
#pragma once

#include <unordered_map>

#include "dlpack.h"

namespace opendml::python {

struct Framework {
  nb::object empty;           // empty(like, shape, dtype name or None) -> array on like's device
  nb::object current_stream;  // current_stream(like, device index) -> cudaStream_t as an int
  bool synchronize = false;   // the library cannot order its streams after ours (JAX)
  std::unordered_map<PyObject*, DLDataType> torch_types;  // PyTorch's: torch.dtype -> DLPack type
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
