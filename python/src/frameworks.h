// The caller's array library (opendml/_frameworks.py): how to allocate like its arrays, which CUDA
// stream it considers current, and how to borrow its arrays fastest.
#pragma once

#include <span>
#include <unordered_map>
#include <vector>

#include "dlpack.h"
#include "torch_alloc.h"

namespace opendml::python {

struct Framework {
  nb::object adapter;
  bool synchronize = false;  // the library cannot order its streams after ours (JAX)
  bool immutable = false;    // its arrays must not be written: out= is refused (JAX)
  bool masked = false;       // its arrays carry a mask that their data, as borrowed, leaves out (numpy.ma)
  // PyTorch's, called from here rather than through the adapter's Python code, since every call
  // takes this path: torch.utils.dlpack.to_dlpack (a C function, where Tensor.__dlpack__ is Python),
  // dtype names -> torch.dtype, and torch._C._cuda_getCurrentRawStream.
  nb::object torch_to_dlpack;
  std::unordered_map<std::string, nb::object> torch_dtypes;
  nb::object torch_raw_stream;
  nb::object torch_increment_version;  // torch._C._increment_version, for out= tensors; None where absent
  nb::object torch_grad_enabled;       // torch.is_grad_enabled
  nb::object torch_inference_mode;     // torch.is_inference_mode_enabled
  nb::object torch_forward_ad;         // torch.autograd.forward_ad, or None: its _current_level
  nb::object torch_tangent_of;         // a tensor's forward-mode tangent, or None
  nb::object torch_transformed;        // whether a tensor is a torch.func transform's wrapper, or None
  // PyTorch's DLPack C exchange API (PyTorch 2.10 and later), for arrays of exactly torch.Tensor's
  // type: a tensor's DLTensor and the current stream in one C call each, with no capsule to make
  // and release. Null where the library has none (then the functions above serve).
  const DLPackExchangeAPI* exchange = nullptr;
  // opendml._torch_alloc's at::empty (torch_alloc.h), for arrays of exactly torch.Tensor's type,
  // where the package has it for this torch; else null (then new_empty).
  TorchEmpty torch_empty = nullptr;

  bool is_torch() const { return torch_to_dlpack.is_valid(); }

  // A new array on `like`'s device with `like`'s dtype, or the one named ("uint32", "int64", ...).
  nb::object empty(nb::handle like, std::span<const int64_t> shape, const char* dtype) const;
  // The cudaStream_t its library runs on for CUDA device `device`.
  intptr_t current_stream(nb::handle like, int device) const;
};

// The framework of an array's type, asked of opendml._frameworks once per type.
const Framework& framework_for(nb::handle array);

// Where an array lives (PyTorch's accessors for its tensors, else DLPack or the CUDA array interface).
Place place_of_array(nb::handle array, const Name& what);

// Where a call's work runs: its device, its stream, and whose current stream that is, so that
// PyTorch tensors skip the DLPack handshake where it would have nothing to do.
struct Target {
  Place place;
  intptr_t stream = 0;
  const Framework* current_of = nullptr;  // the library whose current stream `stream` is, if known
  mutable int torch_current = -1;         // whether it is PyTorch's current stream: -1 until asked, once a call
  // PyTorch tensors the call writes (out=, outputs, regions): their versions move as torch's in-place
  // operations move them, once the work is queued (written), so that a refused call leaves them as
  // they were.
  mutable std::vector<nb::handle> versioned;
  mutable const Framework* versioned_by = nullptr;
  void written() const;

  // Whether work on this stream needs no DLPack handshake for an array of f's library: on the CPU,
  // or where the stream is that library's current one (PyTorch asked once per call).
  bool no_handshake(const Framework& f, nb::handle array) const;
};

// A PyTorch tensor through to_dlpack (a C function, and one call for its place and layout), checked
// to be at `place` where one is given.
// `fresh`: the array is one that this call just allocated with new_empty (Framework::empty), which
// never requires grad, so the check for it is skipped.
Borrowed take_torch(const Framework& f, nb::handle array, const Name& what, std::optional<Place> place, bool writable,
                    bool fresh = false);

// JOIN and SPLIT are linear, and torch.cat and torch.split keep their inputs' gradients: a PyTorch
// input that requires grad while grad mode is on is refused, since the array layer's result would
// silently drop it (opendml.torch's join and split record it); so is one that carries a tangent of
// torch.autograd.forward_ad, which it would drop as silently. Nothing for other arrays.
void check_gradient_kept(nb::handle array, const Name& what);

// Borrows `array` for work at target.place on target.stream, or raises naming `what` if it lives
// elsewhere. PyTorch tensors go through to_dlpack, without the handshake, when the stream is
// PyTorch's current one; everything else goes through __dlpack__ and its handshake.
Borrowed take(nb::handle array, const Name& what, const Target& target, bool writable, bool fresh = false);

}  // namespace opendml::python
