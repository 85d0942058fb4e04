// What both ways into the library from Python share: the array layer (arrays.cpp, arrays from DLPack)
// and JAX's FFI handlers (jax_ffi.cpp, buffers from XLA). Both describe their arrays as DirectML buffer
// tensors (Spec), compile an operator once per description (Entry) and bind its regions.
#pragma once

#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "dlpack.h"

namespace opendml::python {

// The opendml device at a place, opened once and never destroyed: at exit, the CUDA runtime may
// already be gone. Safe to call from any thread (XLA runs handlers on its own).
const Device& device_for(Place place);

// A tensor of an operator as DirectML sees it, and where its data is.
struct Spec {
  DML_TENSOR_DATA_TYPE type = DML_TENSOR_DATA_TYPE_UNKNOWN;
  uint32_t rank = 0;
  uint32_t sizes[kMaxDims]{};
  uint32_t strides[kMaxDims]{};
  bool packed = true;      // null Strides
  uint32_t alignment = 0;  // GuaranteedBaseOffsetAlignment: 0 (16 bytes) or what a view's address allows
  std::byte* data = nullptr;

  TensorDesc desc() const {
    std::optional<std::vector<uint32_t>> s;
    if (!packed) s.emplace(strides, strides + rank);
    TensorDesc t(type, std::vector<uint32_t>(sizes, sizes + rank), std::move(s));
    t.alignment(alignment);
    return t;
  }
  // The cache key's part for this tensor: type, alignment, rank, 'p' or 's', the sizes, and the
  // strides unless packed. Written in place, into a key grown once (every array-layer call builds
  // one).
  size_t key_bytes() const { return sizeof type + sizeof alignment + 2 + (packed ? 1 : 2) * rank * sizeof(uint32_t); }
  char* write_key(char* p) const {
    const size_t dims = rank * sizeof(uint32_t);
    std::memcpy(p, &type, sizeof type);
    p += sizeof type;
    std::memcpy(p, &alignment, sizeof alignment);
    p += sizeof alignment;
    *p++ = static_cast<char>(rank);
    *p++ = packed ? 'p' : 's';
    std::memcpy(p, sizes, dims);
    p += dims;
    if (!packed) std::memcpy(p, strides, dims);
    return packed ? p : p + dims;
  }
  void append_key(std::string& key) const {
    const size_t at = key.size();
    key.resize(at + key_bytes());
    write_key(key.data() + at);
  }
};

// A compiled operator and the sizes its bindings need.
struct Entry {
  CompiledOperator op;
  std::vector<uint64_t> region_bytes;  // each tensor's TotalTensorSizeInBytes, inputs then outputs
  uint64_t bytes = 0;                  // their sum
  uint64_t temporary_bytes = 0;
  uint64_t persistent_bytes = 0;
  std::unique_ptr<Buffer> persistent;  // where the caller keeps one (the array layer)
};

// The operator descriptions of the three operators over `tensors`' descriptions, in the order
// inputs then outputs (NONZERO_COORDINATES: input, count, coordinates).
std::unique_ptr<OperatorDesc> nonzero_desc(std::vector<TensorDesc>& d);
std::unique_ptr<OperatorDesc> join_desc(std::vector<TensorDesc>& d, uint32_t axis);
std::unique_ptr<OperatorDesc> split_desc(std::vector<TensorDesc>& d, uint32_t axis);

// Creates and compiles an operator on `device` (not initialized). An array whose type or rank no
// DirectML feature level takes raises UNSUPPORTED rather than INVALID_ARGUMENT.
template <class MakeDesc>
std::unique_ptr<Entry> compile_entry(const Device& device, std::span<const Spec* const> tensors, uint32_t extensions,
                                     MakeDesc make_desc, ColumnValues columns = {}) {
  std::vector<TensorDesc> descs;
  std::vector<uint64_t> region_bytes;
  descs.reserve(tensors.size());
  for (const Spec* s : tensors) {
    descs.push_back(s->desc());
    region_bytes.push_back(descs.back().total_size());
  }
  const auto desc = make_desc(descs);
  std::optional<Operator> op;
  try {
    const uint32_t asked = extensions | (columns.offsets.empty() ? 0u : uint32_t{ODML_EXTENSION_COORDINATE_OFFSETS}) |
                           (columns.fill.empty() ? 0u : uint32_t{ODML_EXTENSION_FILL_ROWS});
    op.emplace(device, *desc, DML_FEATURE_LEVEL(0), operator_options(asked, columns));
  } catch (const Error& e) {
    // A valid request that opendml cannot carry out (NONZERO on float64, say): the library's support
    // check names it so.
    if (e.status() == ODML_STATUS_INVALID_ARGUMENT &&
        std::string_view(e.what()).find("(no feature level allows ") != std::string_view::npos)
      throw Error(ODML_STATUS_UNSUPPORTED, e.what());
    throw;
  }
  auto entry = std::make_unique<Entry>(Entry{op->compile(), std::move(region_bytes), 0, 0, 0, nullptr});
  for (uint64_t b : entry->region_bytes) entry->bytes += b;
  const odml_binding_properties p = entry->op.binding_properties();
  entry->temporary_bytes = p.temporary_size_in_bytes;
  entry->persistent_bytes = p.persistent_size_in_bytes;
  return entry;
}

// Fills `persistent` (persistent_bytes of it; none where that is 0), stream-ordered on CUDA.
void initialize(const Entry& e, void* persistent, void* stream);

// The bindings of one execute: inputs and outputs at `in` and `out` (together as many as
// region_bytes has), the temporary and persistent regions where the operator has them. `storage`
// holds the regions (a caller's thread_local vector: a warm call allocates nothing).
odml_bindings bindings(const Entry& e, std::span<std::byte* const> in, std::span<std::byte* const> out, void* temporary,
                       void* persistent, std::vector<odml_buffer_binding>& storage);

}  // namespace opendml::python
