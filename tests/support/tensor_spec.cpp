#include "support/tensor_spec.h"

#include <sstream>

#include "support/data_types.h"

namespace odml_test {

Shape packed_strides(const Shape& sizes) {
  Shape strides(sizes.size());
  uint64_t stride = 1;
  for (size_t d = sizes.size(); d-- > 0;) {
    strides[d] = static_cast<uint32_t>(stride);
    stride *= sizes[d];
  }
  return strides;
}

uint64_t element_count(const Shape& sizes) {
  uint64_t n = 1;
  for (uint32_t s : sizes) n *= s;
  return n;
}

uint64_t element_offset(const Shape& coordinate, const Shape& strides) {
  uint64_t offset = 0;
  for (size_t d = 0; d < coordinate.size(); ++d) offset += uint64_t{coordinate[d]} * strides[d];
  return offset;
}

uint64_t logical_index(const Shape& coordinate, const Shape& sizes) {
  uint64_t index = 0;
  for (size_t d = 0; d < sizes.size(); ++d) index = index * sizes[d] + coordinate[d];
  return index;
}

void for_each_coordinate(const Shape& sizes, const std::function<void(const Shape&)>& fn) {
  for (uint32_t s : sizes)
    if (s == 0) return;
  Shape c(sizes.size(), 0);
  while (true) {
    fn(c);
    size_t d = sizes.size();
    while (d > 0) {
      --d;
      if (++c[d] < sizes[d]) break;
      c[d] = 0;
      if (d == 0) return;
    }
    if (sizes.empty()) return;
  }
}

Shape concat_sizes(const std::vector<Shape>& pieces, uint32_t axis) {
  Shape whole = pieces.at(0);
  whole.at(axis) = 0;
  for (const Shape& p : pieces) whole[axis] += p[axis];
  return whole;
}

uint64_t required_bytes(DML_TENSOR_DATA_TYPE type, const Shape& sizes, const std::optional<Shape>& strides) {
  const uint64_t bits = element_bits(type);
  if (bits == 0) return 0;
  uint64_t elements = 1;
  if (strides) {
    for (size_t d = 0; d < sizes.size(); ++d) elements += uint64_t{sizes[d] - 1} * (*strides)[d];
  } else {
    elements = element_count(sizes);
  }
  uint64_t total_bits = 0;
  if (__builtin_mul_overflow(elements, bits, &total_bits) || total_bits >= uint64_t{1} << 63) return UINT64_MAX;
  return ((total_bits + 7) / 8 + 3) / 4 * 4;
}

std::string to_string(const Shape& shape) { return to_string(std::vector<uint64_t>(shape.begin(), shape.end())); }

std::string to_string(const std::vector<uint64_t>& values) {
  std::ostringstream out;
  out << "{";
  for (size_t i = 0; i < values.size(); ++i) out << (i ? "," : "") << values[i];
  out << "}";
  return out.str();
}

std::string TensorSpec::to_string() const {
  std::ostringstream out;
  out << type_name(type) << odml_test::to_string(sizes);
  if (strides) out << " strides " << odml_test::to_string(*strides);
  if (flags) out << " flags " << flags;
  if (extra_bytes) out << " +" << extra_bytes << "B";
  if (alignment) out << " align " << alignment;
  return out.str();
}

TensorSpec spec(DML_TENSOR_DATA_TYPE type, Shape sizes, std::optional<Shape> strides) {
  TensorSpec t;
  t.type = type;
  t.sizes = std::move(sizes);
  t.strides = std::move(strides);
  return t;
}

}  // namespace odml_test
