// The tests' oracle: what docs/contract.md section 3 says each operator computes, element by
// element from the descriptors' Sizes and Strides. Nothing here calls the library.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "support/tensor_spec.h"

namespace odml_test {

// IEEE binary16 to binary32, written out by hand (exact for every half value).
float half_to_float(uint16_t bits);

// docs/contract.md section 3.3: an element is zero when it compares equal to zero (+0.0 and -0.0
// are zero, NaN and denormals are not).
bool is_zero(DML_TENSOR_DATA_TYPE type, const uint8_t* element);

// The bytes of the element at `coordinate` of a tensor whose buffer is `region`.
const uint8_t* element_at(const TensorSpec& t, const Bytes& region, const Shape& coordinate);

// A tensor's elements in logical (row-major) order, packed: element i at i * element_bytes.
Bytes gather(const TensorSpec& t, const Bytes& region);
// Writes packed logical-order elements into a region through the tensor's strides.
void scatter(const TensorSpec& t, const Bytes& logical, Bytes& region);

// JOIN: the output's elements in logical order.
Bytes join_oracle(const std::vector<TensorSpec>& inputs, const std::vector<Bytes>& regions, uint32_t axis);
// SPLIT: each output's elements in logical order.
std::vector<Bytes> split_oracle(const TensorSpec& input, const Bytes& region, const std::vector<TensorSpec>& outputs,
                                uint32_t axis);

// JOIN and SPLIT of packed 2-D pieces [rows, k_i] along axis 1 (or [r_i, k] along axis 0, as one
// row of r_i * k elements): whether `whole` holds, row after row, each piece's row of
// row_bytes[i] bytes in turn. Row by row with memcmp, for tensors of tens of MiB, which the
// element-wise oracle would take minutes over under the sanitizers.
::testing::AssertionResult rows_joined(const std::vector<Bytes>& pieces, const std::vector<uint64_t>& row_bytes,
                                       uint64_t rows, const Bytes& whole);

// One row of NONZERO_COORDINATES' output, 64 bits a coordinate: with the 64-bit index extension
// and coordinate offsets a coordinate may pass 2^32 (docs/contract.md section 7).
using Coordinates = std::vector<uint64_t>;
struct NonzeroResult {
  uint64_t count = 0;
  std::vector<Coordinates> rows;  // the first `count` rows, N coordinates each
};
// NONZERO_COORDINATES with N coordinate columns: the trailing N dimensions of every non-zero
// element, in ascending logical order, plus offsets[j] in column j when there are offsets
// (ODML_EXTENSION_COORDINATE_OFFSETS, N of them).
NonzeroResult nonzero_oracle(const TensorSpec& input, const Bytes& region, uint32_t n,
                             const std::vector<uint64_t>& offsets = {});
// Reads the count and the first `count` rows out of the operator's two output regions.
NonzeroResult read_nonzero(const TensorSpec& count, const Bytes& count_region, const TensorSpec& coordinates,
                           const Bytes& coordinates_region);
// The bits of coordinate j of row `row` in the coordinates' region (4 or 8 bytes wide).
uint64_t coordinate_bits(const TensorSpec& coordinates, const Bytes& region, uint64_t row, uint32_t j);
// Every row from `first` to M holds `fill` (ODML_EXTENSION_FILL_ROWS), bit for bit.
::testing::AssertionResult rows_filled(const TensorSpec& coordinates, const Bytes& region, uint64_t first,
                                       const std::vector<uint64_t>& fill);

// Bit-for-bit comparison of a tensor's elements (read through its strides) with expected
// logical-order elements; padding between elements is not compared.
::testing::AssertionResult elements_equal(const TensorSpec& t, const Bytes& region, const Bytes& expected,
                                          const std::string& name);
::testing::AssertionResult nonzero_equal(const NonzeroResult& actual, const NonzeroResult& expected);

}  // namespace odml_test
