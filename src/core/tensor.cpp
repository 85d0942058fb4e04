#include "core/tensor.h"

#include <algorithm>
#include <bit>
#include <numeric>
#include <vector>

#include "core/data_type.h"

namespace opendml::internal {
namespace {

constexpr uint64_t kSaturated = uint64_t{1} << 63;

uint64_t saturating_mul(uint64_t a, uint64_t b) {
  uint64_t r;
  return __builtin_mul_overflow(a, b, &r) || r > kSaturated ? kSaturated : r;
}

uint64_t saturating_add(uint64_t a, uint64_t b) {
  return a > kSaturated - std::min(b, kSaturated) ? kSaturated : a + b;
}

uint64_t product(const Dims& sizes, uint32_t rank) {
  uint64_t n = 1;
  for (uint32_t d = 0; d < rank; ++d) n = saturating_mul(n, sizes[d]);
  return n;
}

// Bytes of `elements` elements of `bits` bits each, rounded up to whole bytes and then to 4;
// UINT64_MAX where the bits reach 2^63 (no buffer that large exists, and no descriptor passes it).
uint64_t buffer_bytes(uint64_t elements, uint32_t bits) {
  const uint64_t total_bits = saturating_mul(elements, bits);
  return total_bits >= kSaturated ? ~uint64_t{0} : ((total_bits + 7) / 8 + 3) & ~uint64_t{3};
}

// The element count and the physical extent for messages: exact, where the checks above stop
// counting at 2^63 (a count of {2^32 - 1, 2^32 - 1} is 2^64 - 2^33 + 1, not 2^63), or "more than
// 2^64 - 1".
std::string exact_text(bool overflow, uint64_t value) {
  return overflow ? std::string("more than 2^64 - 1") : std::to_string(value);
}

std::string element_count_text(const Dims& sizes, uint32_t rank) {
  uint64_t n = 1;
  bool overflow = false;
  for (uint32_t d = 0; d < rank; ++d) overflow |= __builtin_mul_overflow(n, sizes[d], &n);
  return exact_text(overflow, n);
}

std::string extent_text(const Dims& sizes, const Dims& strides, uint32_t rank) {
  uint64_t last = 0;
  bool overflow = false;
  for (uint32_t d = 0; d < rank; ++d) {
    uint64_t term;
    overflow |= __builtin_mul_overflow(sizes[d] - 1, strides[d], &term);
    overflow |= __builtin_add_overflow(last, term, &last);
  }
  overflow |= __builtin_add_overflow(last, 1, &last);
  return exact_text(overflow, last);
}

// Coordinates of logical index `index` over sizes, for messages.
std::string coordinate_string(uint64_t index, const Dims& sizes, uint32_t rank) {
  Dims coord{};
  for (uint32_t d = rank; d-- > 0;) {
    coord[d] = index % sizes[d];
    index /= sizes[d];
  }
  return dims_to_string(coord, rank);
}

// Rule 4 for outputs: no two logical elements may share an address. Sorted by stride, a layout
// whose every stride exceeds the span of the smaller ones is disjoint; layouts that fail that test
// are either caught by a pair of dimensions that collide on their own (a certain collision),
// enumerated when small, or refused as unprovable. Dimensions j and k of strides s_j and s_k, g their
// greatest common divisor, collide on their own exactly when s_k / g < size_j and s_j / g < size_k:
// coordinate s_k / g along j and s_j / g along k are both at offset s_j * s_k / g.
Status check_output_strides(const Tensor& t, std::string_view where, OverlapBudget& budget) {
  struct Dim {
    uint64_t stride, size;
    uint32_t index;
  };
  std::vector<Dim> dims;
  for (uint32_t d = 0; d < t.rank; ++d) {
    if (t.sizes[d] == 1) continue;
    if (t.strides[d] == 0)
      return invalid_argument(where, ".Strides[", d, "] is 0 but Sizes[", d, "] is ", t.sizes[d],
                              "; an output cannot broadcast, so no output stride may be 0");
    dims.push_back({t.strides[d], t.sizes[d], d});
  }
  std::sort(dims.begin(), dims.end(), [](const Dim& a, const Dim& b) { return a.stride < b.stride; });
  const auto collision = [&](const std::string& a, const std::string& b) {
    return invalid_argument(where, ".Strides ", dims_to_string(t.strides, t.rank), " give elements ", a, " and ", b,
                            " of Sizes ", dims_to_string(t.sizes, t.rank),
                            " the same address; output elements must not overlap");
  };
  uint64_t span = 0;  // largest offset reachable with the dimensions so far
  bool uncertain = false;
  for (size_t k = 0; k < dims.size(); ++k) {
    if (dims[k].stride <= span) {
      for (size_t j = 0; j < k; ++j) {
        const uint64_t g = std::gcd(dims[j].stride, dims[k].stride);
        const uint64_t along_j = dims[k].stride / g, along_k = dims[j].stride / g;
        if (along_j < dims[j].size && along_k < dims[k].size) {
          Dims a{}, b{};
          a[dims[j].index] = along_j;
          b[dims[k].index] = along_k;
          return collision(dims_to_string(a, t.rank), dims_to_string(b, t.rank));
        }
      }
      uncertain = true;
    }
    span = saturating_add(span, saturating_mul(dims[k].size - 1, dims[k].stride));
  }
  if (!uncertain) return {};

  const uint64_t count = t.element_count();
  if (count > budget.elements)
    return unsupported(where, ".Strides ", dims_to_string(t.strides, t.rank),
                       " interleave dimensions in a way opendml cannot prove free of overlap for Sizes ",
                       dims_to_string(t.sizes, t.rank), " (it lists at most ", OverlapBudget{}.elements,
                       " elements of such outputs an operator, ", budget.elements,
                       " left); use strides that each exceed the span of the smaller ones");
  budget.elements -= count;
  std::vector<std::pair<uint64_t, uint64_t>> offsets;  // (address, logical index)
  offsets.reserve(count);
  for (uint64_t i = 0; i < count; ++i) {
    uint64_t rest = i, offset = 0;
    for (uint32_t d = t.rank; d-- > 0;) {
      offset += (rest % t.sizes[d]) * t.strides[d];
      rest /= t.sizes[d];
    }
    offsets.push_back({offset, i});
  }
  std::sort(offsets.begin(), offsets.end());
  for (size_t i = 1; i < offsets.size(); ++i)
    if (offsets[i].first == offsets[i - 1].first)
      return collision(coordinate_string(offsets[i - 1].second, t.sizes, t.rank),
                       coordinate_string(offsets[i].second, t.sizes, t.rank));
  return {};
}

}  // namespace

uint64_t Tensor::element_count() const { return product(sizes, rank); }

Dims packed_strides(const Dims& sizes, uint32_t rank) {
  Dims strides{};
  uint64_t stride = 1;
  for (uint32_t d = rank; d-- > 0;) {
    strides[d] = stride;
    stride = saturating_mul(stride, sizes[d]);
  }
  return strides;
}

uint64_t physical_extent(const Dims& sizes, const Dims& strides, uint32_t rank) {
  uint64_t last = 0;
  for (uint32_t d = 0; d < rank; ++d) last = saturating_add(last, saturating_mul(sizes[d] - 1, strides[d]));
  return saturating_add(last, 1);
}

std::string dims_to_string(const Dims& dims, uint32_t rank) {
  std::string s = "{";
  for (uint32_t d = 0; d < rank; ++d) s += (d ? ", " : "") + std::to_string(dims[d]);
  return s + "}";
}

Result<Tensor> read_tensor(const DML_TENSOR_DESC* desc, Role role, std::string_view where, OverlapBudget& budget,
                           uint64_t max_elements) {
  if (desc == nullptr) return invalid_argument(where, " is null; every tensor of the operator must be described");
  if (desc->Type != DML_TENSOR_TYPE_BUFFER)
    return invalid_argument(where, ".Type is ", static_cast<int>(desc->Type),
                            "; it must be DML_TENSOR_TYPE_BUFFER (1)");
  if (desc->Desc == nullptr)
    return invalid_argument(where, ".Desc is null; a buffer tensor needs a DML_BUFFER_TENSOR_DESC");
  const auto& buffer = *static_cast<const DML_BUFFER_TENSOR_DESC*>(desc->Desc);

  const DataTypeInfo* type = data_type_info(buffer.DataType);
  if (type == nullptr)
    return invalid_argument(where, ".DataType is ", static_cast<int>(buffer.DataType),
                            "; it must be a known DML_TENSOR_DATA_TYPE other than UNKNOWN");
  if ((buffer.Flags & ~DML_TENSOR_FLAG_OWNED_BY_DML) != 0)
    return invalid_argument(where, ".Flags is ", static_cast<unsigned>(buffer.Flags),
                            "; the known flags are NONE (0) and OWNED_BY_DML (1)");
  if ((buffer.Flags & DML_TENSOR_FLAG_OWNED_BY_DML) && role == Role::kOutput)
    return invalid_argument(where, ".Flags has OWNED_BY_DML; the flag is allowed on inputs only");
  if (buffer.DimensionCount < 1 || buffer.DimensionCount > kMaxRank)
    return invalid_argument(where, ".DimensionCount is ", buffer.DimensionCount, "; it must be 1 to ", kMaxRank);
  if (buffer.Sizes == nullptr) return invalid_argument(where, ".Sizes is null; it must have DimensionCount entries");

  Tensor t;
  t.data_type = buffer.DataType;
  t.owned_by_dml = (buffer.Flags & DML_TENSOR_FLAG_OWNED_BY_DML) != 0;
  t.rank = buffer.DimensionCount;
  for (uint32_t d = 0; d < t.rank; ++d) {
    if (buffer.Sizes[d] == 0)
      return invalid_argument(where, ".Sizes[", d,
                              "] is 0; every size must be at least 1 (there are no empty tensors)");
    t.sizes[d] = buffer.Sizes[d];
  }
  const uint64_t count = t.element_count();
  const char* const beyond = max_elements == kMaxElements ? " (ODML_EXTENSION_64BIT_INDICES allows more)" : "";
  if (count > max_elements)
    return invalid_argument(where, " has ", element_count_text(t.sizes, t.rank), " elements (Sizes ",
                            dims_to_string(t.sizes, t.rank), "); at most ", max_elements, " are allowed", beyond);
  if (buffer.Strides != nullptr) {
    for (uint32_t d = 0; d < t.rank; ++d) t.strides[d] = buffer.Strides[d];
  } else {
    t.strides = packed_strides(t.sizes, t.rank);
  }
  const uint64_t extent = physical_extent(t.sizes, t.strides, t.rank);
  if (extent > max_elements)
    return invalid_argument(where, ".Strides ", dims_to_string(t.strides, t.rank), " with Sizes ",
                            dims_to_string(t.sizes, t.rank), " span ", extent_text(t.sizes, t.strides, t.rank),
                            " elements; at most ", max_elements, " are allowed", beyond);
  if (role == Role::kOutput) ODML_RETURN_IF_ERROR(check_output_strides(t, where, budget));

  const uint64_t required =
      DMLCalcBufferTensorSize(buffer.DataType, buffer.DimensionCount, buffer.Sizes, buffer.Strides);
  // Saturated (docs/contract.md section 2): 2^63 bits or more, which no byte count of a buffer holds,
  // and which the kernels' byte arithmetic must never see (with 64-bit indices, 2^61 FLOAT64 elements
  // are 2^64 bytes).
  if (required == ~uint64_t{0})
    return invalid_argument(where, " (Sizes ", dims_to_string(t.sizes, t.rank),
                            ") spans 2^63 bits or more; no buffer holds it");
  if (buffer.TotalTensorSizeInBytes < required)
    return invalid_argument(where, ".TotalTensorSizeInBytes is ", buffer.TotalTensorSizeInBytes,
                            " but DMLCalcBufferTensorSize gives ", required, "; it must be at least that");
  t.total_bytes = buffer.TotalTensorSizeInBytes;

  const uint32_t alignment = buffer.GuaranteedBaseOffsetAlignment;
  const uint32_t element_bytes = std::max<uint32_t>(1, type->bits / 8);
  if (alignment != 0 && (!std::has_single_bit(alignment) || alignment < element_bytes))
    return invalid_argument(where, ".GuaranteedBaseOffsetAlignment is ", alignment,
                            "; it must be 0 or a power of two no smaller than the element size (", element_bytes, ")");
  t.base_alignment = alignment != 0 ? alignment : DML_MINIMUM_BUFFER_TENSOR_ALIGNMENT;
  return t;
}

}  // namespace opendml::internal

extern "C" UINT64 DMLCalcBufferTensorSize(DML_TENSOR_DATA_TYPE dataType, UINT dimensionCount, const UINT* sizes,
                                          const UINT* strides) {
  using namespace opendml::internal;
  const DataTypeInfo* type = data_type_info(dataType);
  if (type == nullptr || sizes == nullptr || dimensionCount > kMaxRank) return 0;
  Dims s{}, st{};
  for (UINT d = 0; d < dimensionCount; ++d) {
    if (sizes[d] == 0) return 0;
    s[d] = sizes[d];
    st[d] = strides ? strides[d] : 0;
  }
  const uint64_t elements = strides ? physical_extent(s, st, dimensionCount) : product(s, dimensionCount);
  return buffer_bytes(elements, type->bits);
}
