// A buffer tensor as the tests describe it, and the naive descriptor arithmetic of
// docs/contract.md section 2 that the oracles use: every element's address is
// dot(coordinate, strides), nothing coalesced, nothing shared with the library.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "opendml/directml.h"

namespace odml_test {

using Shape = std::vector<uint32_t>;
using Bytes = std::vector<uint8_t>;

Shape packed_strides(const Shape& sizes);
uint64_t element_count(const Shape& sizes);
uint64_t element_offset(const Shape& coordinate, const Shape& strides);  // in elements
// Row-major index of coordinate within sizes.
uint64_t logical_index(const Shape& coordinate, const Shape& sizes);
// Calls fn(coordinate) for every coordinate of sizes in row-major order (the last one fastest).
void for_each_coordinate(const Shape& sizes, const std::function<void(const Shape&)>& fn);
// The sizes of the concatenation of `pieces` along axis (JOIN's output, SPLIT's input).
Shape concat_sizes(const std::vector<Shape>& pieces, uint32_t axis);
// docs/contract.md section 2: (packed or last-index-plus-one) elements, whole bytes, rounded up to
// 4.
uint64_t required_bytes(DML_TENSOR_DATA_TYPE type, const Shape& sizes, const std::optional<Shape>& strides);

std::string to_string(const Shape& shape);
std::string to_string(const std::vector<uint64_t>& values);

struct TensorSpec {
  DML_TENSOR_DATA_TYPE type = DML_TENSOR_DATA_TYPE_FLOAT32;
  Shape sizes;
  std::optional<Shape> strides;  // null strides in the desc when empty
  DML_TENSOR_FLAGS flags = DML_TENSOR_FLAG_NONE;
  uint64_t extra_bytes = 0;  // TotalTensorSizeInBytes beyond the required size
  uint32_t alignment = 0;    // GuaranteedBaseOffsetAlignment

  Shape element_strides() const { return strides ? *strides : packed_strides(sizes); }
  uint64_t total_bytes() const { return required_bytes(type, sizes, strides) + extra_bytes; }
  uint32_t rank() const { return static_cast<uint32_t>(sizes.size()); }
  std::string to_string() const;
};

// A tensor spec with packed strides.
TensorSpec spec(DML_TENSOR_DATA_TYPE type, Shape sizes, std::optional<Shape> strides = std::nullopt);

}  // namespace odml_test
