#include "support/oracle.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>

#include "support/data_types.h"

namespace odml_test {
namespace {

std::string hex(const uint8_t* p, uint32_t n) {
  std::ostringstream out;
  out << "0x" << std::hex;
  for (uint32_t i = n; i-- > 0;) out << (p[i] < 16 ? "0" : "") << int{p[i]};  // little endian
  return out.str();
}

// `coordinate` of a piece, moved along `axis` to where the piece starts in the whole.
Shape shifted(Shape coordinate, uint32_t axis, uint32_t start) {
  coordinate[axis] += start;
  return coordinate;
}

}  // namespace

float half_to_float(uint16_t bits) {
  const bool negative = (bits >> 15) != 0;
  const int exponent = (bits >> 10) & 0x1F;
  const int mantissa = bits & 0x3FF;
  float magnitude;
  if (exponent == 0) {
    magnitude = std::ldexp(static_cast<float>(mantissa), -24);  // zero and subnormals
  } else if (exponent == 31) {
    magnitude = mantissa ? std::numeric_limits<float>::quiet_NaN() : std::numeric_limits<float>::infinity();
  } else {
    magnitude = std::ldexp(static_cast<float>(mantissa | 0x400), exponent - 25);
  }
  return negative ? -magnitude : magnitude;
}

bool is_zero(DML_TENSOR_DATA_TYPE type, const uint8_t* element) {
  switch (type) {
    case DML_TENSOR_DATA_TYPE_FLOAT32: {
      float f;
      std::memcpy(&f, element, 4);
      return f == 0.0f;
    }
    case DML_TENSOR_DATA_TYPE_FLOAT64: {
      double f;
      std::memcpy(&f, element, 8);
      return f == 0.0;
    }
    case DML_TENSOR_DATA_TYPE_FLOAT16: {
      uint16_t h;
      std::memcpy(&h, element, 2);
      return half_to_float(h) == 0.0f;
    }
    default:
      for (uint32_t i = 0; i < element_bytes(type); ++i)
        if (element[i] != 0) return false;
      return true;
  }
}

const uint8_t* element_at(const TensorSpec& t, const Bytes& region, const Shape& coordinate) {
  return region.data() + element_offset(coordinate, t.element_strides()) * element_bytes(t.type);
}

Bytes gather(const TensorSpec& t, const Bytes& region) {
  const uint32_t eb = element_bytes(t.type);
  Bytes out;
  out.reserve(element_count(t.sizes) * eb);
  for_each_coordinate(t.sizes, [&](const Shape& c) {
    const uint8_t* p = element_at(t, region, c);
    out.insert(out.end(), p, p + eb);
  });
  return out;
}

void scatter(const TensorSpec& t, const Bytes& logical, Bytes& region) {
  const uint32_t eb = element_bytes(t.type);
  const Shape strides = t.element_strides();
  uint64_t i = 0;
  for_each_coordinate(t.sizes, [&](const Shape& c) {
    std::memcpy(region.data() + element_offset(c, strides) * eb, logical.data() + i++ * eb, eb);
  });
}

Bytes join_oracle(const std::vector<TensorSpec>& inputs, const std::vector<Bytes>& regions, uint32_t axis) {
  std::vector<Shape> pieces;
  for (const TensorSpec& t : inputs) pieces.push_back(t.sizes);
  const Shape out_sizes = concat_sizes(pieces, axis);
  const uint32_t eb = element_bytes(inputs[0].type);
  Bytes out(element_count(out_sizes) * eb);
  uint32_t start = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    for_each_coordinate(inputs[i].sizes, [&](const Shape& c) {
      const uint64_t o = logical_index(shifted(c, axis, start), out_sizes);
      std::memcpy(out.data() + o * eb, element_at(inputs[i], regions[i], c), eb);
    });
    start += inputs[i].sizes[axis];
  }
  return out;
}

::testing::AssertionResult rows_joined(const std::vector<Bytes>& pieces, const std::vector<uint64_t>& row_bytes,
                                       uint64_t rows, const Bytes& whole) {
  uint64_t at = 0;
  for (uint64_t r = 0; r < rows; ++r) {
    for (size_t i = 0; i < pieces.size(); ++i) {
      const uint64_t n = row_bytes[i];
      if (at + n > whole.size() || (r + 1) * n > pieces[i].size())
        return ::testing::AssertionFailure() << "row " << r << " of piece " << i << " lies outside its region";
      if (std::memcmp(whole.data() + at, pieces[i].data() + r * n, n) != 0)
        return ::testing::AssertionFailure()
               << "row " << r << " of piece " << i << " differs (at byte " << at << " of the whole)";
      at += n;
    }
  }
  return ::testing::AssertionSuccess();
}

std::vector<Bytes> split_oracle(const TensorSpec& input, const Bytes& region, const std::vector<TensorSpec>& outputs,
                                uint32_t axis) {
  const uint32_t eb = element_bytes(input.type);
  std::vector<Bytes> out;
  uint32_t start = 0;
  for (const TensorSpec& t : outputs) {
    Bytes piece;
    for_each_coordinate(t.sizes, [&](const Shape& c) {
      const uint8_t* p = element_at(input, region, shifted(c, axis, start));
      piece.insert(piece.end(), p, p + eb);
    });
    out.push_back(std::move(piece));
    start += t.sizes[axis];
  }
  return out;
}

NonzeroResult nonzero_oracle(const TensorSpec& input, const Bytes& region, uint32_t n,
                             const std::vector<uint64_t>& offsets) {
  NonzeroResult r;
  for_each_coordinate(input.sizes, [&](const Shape& c) {
    if (is_zero(input.type, element_at(input, region, c))) return;
    ++r.count;
    Coordinates row(c.end() - n, c.end());
    for (size_t j = 0; j < offsets.size() && j < row.size(); ++j) row[j] += offsets[j];
    r.rows.push_back(std::move(row));
  });
  return r;
}

uint64_t coordinate_bits(const TensorSpec& coordinates, const Bytes& region, uint64_t row, uint32_t j) {
  const uint32_t rank = coordinates.rank();
  Shape c(rank, 0);
  for (uint64_t rest = row, d = rank - 1; d-- > 0;) {  // the row dimensions multiply to M
    c[d] = static_cast<uint32_t>(rest % coordinates.sizes[d]);
    rest /= coordinates.sizes[d];
  }
  c[rank - 1] = j;
  uint64_t v = 0;  // little-endian: the low bytes come first
  std::memcpy(&v, element_at(coordinates, region, c), element_bytes(coordinates.type));
  return v;
}

NonzeroResult read_nonzero(const TensorSpec& count, const Bytes& count_region, const TensorSpec& coordinates,
                           const Bytes& coordinates_region) {
  NonzeroResult r;
  // Counts and coordinates are UINT32, or 64-bit with the 64-bit index extension.
  std::memcpy(&r.count, element_at(count, count_region, Shape(count.rank(), 0)), element_bytes(count.type));
  const uint64_t m = element_count(Shape(coordinates.sizes.begin(), coordinates.sizes.end() - 1));
  const uint32_t n = coordinates.sizes[coordinates.rank() - 1];
  for (uint64_t row = 0; row < std::min<uint64_t>(r.count, m); ++row) {
    Coordinates values(n);
    for (uint32_t j = 0; j < n; ++j) {
      values[j] = coordinate_bits(coordinates, coordinates_region, row, j);
    }
    r.rows.push_back(values);
  }
  return r;
}

::testing::AssertionResult rows_filled(const TensorSpec& coordinates, const Bytes& region, uint64_t first,
                                       const std::vector<uint64_t>& fill) {
  const uint64_t m = element_count(Shape(coordinates.sizes.begin(), coordinates.sizes.end() - 1));
  for (uint64_t row = first; row < m; ++row)
    for (uint32_t j = 0; j < fill.size(); ++j)
      if (const uint64_t v = coordinate_bits(coordinates, region, row, j); v != fill[j])
        return ::testing::AssertionFailure() << "row " << row << " (past the count, " << first << ") column " << j
                                             << " is " << v << ", not the fill " << fill[j];
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult elements_equal(const TensorSpec& t, const Bytes& region, const Bytes& expected,
                                          const std::string& name) {
  const uint32_t eb = element_bytes(t.type);
  if (expected.size() != element_count(t.sizes) * eb)
    return ::testing::AssertionFailure() << name << ": the oracle has " << expected.size() / eb << " elements but "
                                         << t.to_string() << " has " << element_count(t.sizes);
  uint64_t i = 0, mismatches = 0;
  std::ostringstream first;
  for_each_coordinate(t.sizes, [&](const Shape& c) {
    const uint8_t* actual = element_at(t, region, c);
    const uint8_t* want = expected.data() + i++ * eb;
    if (std::memcmp(actual, want, eb) == 0) return;
    if (++mismatches <= 8)
      first << "\n  " << name << to_string(c) << ": expected " << hex(want, eb) << ", got " << hex(actual, eb);
  });
  if (mismatches == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << name << " (" << t.to_string() << "): " << mismatches << " of " << i
                                       << " elements differ" << first.str();
}

::testing::AssertionResult nonzero_equal(const NonzeroResult& actual, const NonzeroResult& expected) {
  if (actual.count != expected.count)
    return ::testing::AssertionFailure() << "count is " << actual.count << " but the oracle counts " << expected.count;
  for (size_t row = 0; row < expected.rows.size(); ++row)
    if (actual.rows[row] != expected.rows[row])
      return ::testing::AssertionFailure()
             << "row " << row << " of " << expected.count << " is " << to_string(actual.rows[row])
             << " but the oracle gives " << to_string(expected.rows[row]);
  return ::testing::AssertionSuccess();
}

}  // namespace odml_test
