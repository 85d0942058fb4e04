// Buffer tensors: the validated form of a DML_TENSOR_DESC and the descriptor algebra the planners
// share (sizes, extents, coalescing).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/status.h"
#include "opendml/directml.h"

namespace opendml::internal {

inline constexpr uint32_t kMaxRank = DML_TENSOR_DIMENSION_COUNT_MAX1;
// Element counts and physical extents are at most kMaxElements (docs/contract.md section 2, rule
// 7), or kMaxElements64 with the 64-bit index extension (section 7).
inline constexpr uint64_t kMaxElements = 0xFFFFFFFFull;
inline constexpr uint64_t kMaxElements64 = (uint64_t{1} << 62) - 1;

using Dims = std::array<uint64_t, kMaxRank>;

// A DML_BUFFER_TENSOR_DESC that passed every rule of docs/contract.md section 2.
struct Tensor {
  DML_TENSOR_DATA_TYPE data_type = DML_TENSOR_DATA_TYPE_UNKNOWN;
  bool owned_by_dml = false;
  uint32_t rank = 0;
  Dims sizes{};
  Dims strides{};  // in elements; the packed row-major strides when the desc had none
  uint64_t total_bytes = 0;
  uint32_t base_alignment = 0;  // what a bound address is a multiple of (16 unless the desc says)

  uint64_t element_count() const;
  // What the address the operator reads at execute is a multiple of: base_alignment, except that
  // an OWNED_BY_DML input is read from its copy in the persistent region, at a multiple of
  // DML_PERSISTENT_BUFFER_ALIGNMENT (docs/contract.md section 5).
  uint32_t read_alignment() const {
    return owned_by_dml && base_alignment > DML_PERSISTENT_BUFFER_ALIGNMENT ? DML_PERSISTENT_BUFFER_ALIGNMENT
                                                                            : base_alignment;
  }
};

enum class Role { kInput, kOutput };

// The elements that proving an operator's outputs free of overlap may still list, address by address
// (outputs whose dimensions interleave, docs/contract.md section 2 rule 4): one budget an operator,
// so that creating one takes bounded time however many outputs it has.
struct OverlapBudget {
  uint64_t elements = uint64_t{1} << 22;
};

// Reads and validates desc. `where` names the tensor in messages, e.g. "JOIN: InputTensors[2]".
// Post: the returned tensor satisfies rules 1-7 of docs/contract.md section 2 for `role`, with at
// most max_elements elements and physical extent; an output's overlap proof spent from `budget`.
Result<Tensor> read_tensor(const DML_TENSOR_DESC* desc, Role role, std::string_view where, OverlapBudget& budget,
                           uint64_t max_elements = kMaxElements);

// The element strides of a packed row-major tensor of `rank` dimensions.
Dims packed_strides(const Dims& sizes, uint32_t rank);

// sum((size_i - 1) * stride_i) + 1, saturating at 2^63 so that callers can compare it to limits.
uint64_t physical_extent(const Dims& sizes, const Dims& strides, uint32_t rank);

// A view of several tensors over the same logical sizes: the planners' working form.
// Pre: every stride set has `rank` entries. Post (coalesce): the same map from logical index to
// element offset in every stride set, with size-1 dimensions dropped and adjacent dimensions that
// are contiguous in every stride set merged ({4,5,3} packed -> {60}); rank >= 1.
template <size_t kViews>
struct MultiView {
  uint32_t rank = 0;
  Dims sizes{};
  std::array<Dims, kViews> strides{};

  void coalesce();
};

template <size_t kViews>
void MultiView<kViews>::coalesce() {
  uint32_t out = 0;
  for (uint32_t d = 0; d < rank; ++d) {
    if (sizes[d] == 1) continue;
    bool merges = out > 0;
    for (size_t v = 0; v < kViews && merges; ++v) merges = strides[v][out - 1] == sizes[d] * strides[v][d];
    if (merges) {
      sizes[out - 1] *= sizes[d];
      for (size_t v = 0; v < kViews; ++v) strides[v][out - 1] = strides[v][d];
      continue;
    }
    sizes[out] = sizes[d];
    for (size_t v = 0; v < kViews; ++v) strides[v][out] = strides[v][d];
    ++out;
  }
  if (out == 0) {  // a single element
    sizes[0] = 1;
    for (size_t v = 0; v < kViews; ++v) strides[v][0] = 1;
    out = 1;
  }
  for (uint32_t d = out; d < kMaxRank; ++d) {
    sizes[d] = 1;
    for (size_t v = 0; v < kViews; ++v) strides[v][d] = 0;
  }
  rank = out;
}

// "{1, 2, 3}", for messages.
std::string dims_to_string(const Dims& dims, uint32_t rank);

}  // namespace opendml::internal
