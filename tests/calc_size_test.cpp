// CalcBufferTensorSize: DMLCalcBufferTensorSize as docs/contract.md section 2 defines it. Expected
// values are worked out by hand from the formula.
#include <gtest/gtest.h>

#include <random>

#include "opendml/directml.h"
#include "support/data_types.h"
#include "support/tensor_spec.h"

namespace odml_test {
namespace {

uint64_t calc(DML_TENSOR_DATA_TYPE type, const Shape& sizes, const Shape& strides = {}) {
  return DMLCalcBufferTensorSize(type, static_cast<UINT>(sizes.size()), sizes.data(),
                                 strides.empty() ? nullptr : strides.data());
}

TEST(CalcBufferTensorSize, PackedIsElementCountTimesElementSize) {
  EXPECT_EQ(calc(DML_TENSOR_DATA_TYPE_FLOAT32, {2, 3}), 24u);
  EXPECT_EQ(calc(DML_TENSOR_DATA_TYPE_FLOAT64, {3, 5}), 120u);
  EXPECT_EQ(calc(DML_TENSOR_DATA_TYPE_INT16, {2, 2}), 8u);
  EXPECT_EQ(calc(DML_TENSOR_DATA_TYPE_UINT8, {4}), 4u);
  EXPECT_EQ(calc(DML_TENSOR_DATA_TYPE_UINT32, {1, 1, 1, 1, 1, 1, 1, 7}), 28u);
}

// No dimensions: one element (the empty product), with or without strides, rounded up to 4 bytes.
TEST(CalcBufferTensorSize, NoDimensionsIsOneElement) {
  const UINT unused = 7;
  EXPECT_EQ(DMLCalcBufferTensorSize(DML_TENSOR_DATA_TYPE_FLOAT64, 0, &unused, nullptr), 8u);
  EXPECT_EQ(DMLCalcBufferTensorSize(DML_TENSOR_DATA_TYPE_FLOAT32, 0, &unused, &unused), 4u);
  EXPECT_EQ(DMLCalcBufferTensorSize(DML_TENSOR_DATA_TYPE_UINT8, 0, &unused, nullptr), 4u);
  EXPECT_EQ(DMLCalcBufferTensorSize(DML_TENSOR_DATA_TYPE_FLOAT32, 0, nullptr, nullptr), 0u);  // null sizes: 0
}

// Element sizes: 8 for FLOAT64/UINT64/INT64, 4 for the 32-bit, 2 for the 16-bit, 1 for the 8-bit.
TEST(CalcBufferTensorSize, ElementSizeOfEveryType) {
  const std::pair<DML_TENSOR_DATA_TYPE, uint64_t> expected[] = {
      {DML_TENSOR_DATA_TYPE_FLOAT64, 64}, {DML_TENSOR_DATA_TYPE_UINT64, 64}, {DML_TENSOR_DATA_TYPE_INT64, 64},
      {DML_TENSOR_DATA_TYPE_FLOAT32, 32}, {DML_TENSOR_DATA_TYPE_UINT32, 32}, {DML_TENSOR_DATA_TYPE_INT32, 32},
      {DML_TENSOR_DATA_TYPE_FLOAT16, 16}, {DML_TENSOR_DATA_TYPE_UINT16, 16}, {DML_TENSOR_DATA_TYPE_INT16, 16},
      {DML_TENSOR_DATA_TYPE_UINT8, 8},    {DML_TENSOR_DATA_TYPE_INT8, 8},    {DML_TENSOR_DATA_TYPE_UINT4, 4},
      {DML_TENSOR_DATA_TYPE_INT4, 4}};
  for (const auto& [type, bytes_of_8] : expected) EXPECT_EQ(calc(type, {8}), bytes_of_8) << type_name(type);
}

// With strides: (sum((size_i - 1) * stride_i) + 1) elements.
TEST(CalcBufferTensorSize, StridedIsLastIndexPlusOne) {
  EXPECT_EQ(calc(DML_TENSOR_DATA_TYPE_FLOAT32, {2, 3}, {4, 1}), 28u);    // 7 elements
  EXPECT_EQ(calc(DML_TENSOR_DATA_TYPE_FLOAT32, {2, 3}, {1, 2}), 24u);    // transposed: 6
  EXPECT_EQ(calc(DML_TENSOR_DATA_TYPE_FLOAT64, {2, 3}, {10, 3}), 136u);  // 17
  EXPECT_EQ(calc(DML_TENSOR_DATA_TYPE_FLOAT16, {3, 2}, {0, 1}), 4u);     // broadcast rows: 2
  EXPECT_EQ(calc(DML_TENSOR_DATA_TYPE_FLOAT32, {4, 4}, {0, 0}), 4u);     // one element
}

TEST(CalcBufferTensorSize, RoundsUpToFourBytes) {
  EXPECT_EQ(calc(DML_TENSOR_DATA_TYPE_INT8, {1}), 4u);
  EXPECT_EQ(calc(DML_TENSOR_DATA_TYPE_UINT8, {5}), 8u);
  EXPECT_EQ(calc(DML_TENSOR_DATA_TYPE_UINT8, {9}), 12u);
  EXPECT_EQ(calc(DML_TENSOR_DATA_TYPE_FLOAT16, {3}), 8u);
  EXPECT_EQ(calc(DML_TENSOR_DATA_TYPE_UINT8, {2, 3}, {5, 1}), 8u);  // 8 elements
  EXPECT_EQ(calc(DML_TENSOR_DATA_TYPE_INT16, {2, 3}, {5, 1}), 16u);
}

// UINT4/INT4 are half a byte: bits rounded up to whole bytes, then to 4.
TEST(CalcBufferTensorSize, HalfByteTypes) {
  EXPECT_EQ(calc(DML_TENSOR_DATA_TYPE_UINT4, {1}), 4u);
  EXPECT_EQ(calc(DML_TENSOR_DATA_TYPE_UINT4, {9}), 8u);               // 36 bits: 5 bytes
  EXPECT_EQ(calc(DML_TENSOR_DATA_TYPE_INT4, {17}), 12u);              // 68 bits: 9 bytes
  EXPECT_EQ(calc(DML_TENSOR_DATA_TYPE_INT4, {3}, {3}), 4u);           // 7 elements: 28 bits
  EXPECT_EQ(calc(DML_TENSOR_DATA_TYPE_UINT4, {2, 5}, {11, 2}), 12u);  // 20 elements: 10 bytes
}

// 64-bit arithmetic: DirectML's published helper gives 0 for the first (2^34 mod 2^32).
TEST(CalcBufferTensorSize, NoWrapAt32Bits) {
  EXPECT_EQ(calc(DML_TENSOR_DATA_TYPE_FLOAT32, {65536, 65536}), uint64_t{1} << 34);
  EXPECT_EQ(calc(DML_TENSOR_DATA_TYPE_FLOAT64, {65536, 65536, 2}), uint64_t{1} << 36);
  EXPECT_EQ(calc(DML_TENSOR_DATA_TYPE_UINT8, {2}, {0xFFFFFFFF}), uint64_t{1} << 32);  // 2^32 elements
  EXPECT_EQ(calc(DML_TENSOR_DATA_TYPE_FLOAT32, {3, 2}, {0xFFFFFFFF, 0xFFFFFFFF}), 4 * (3 * uint64_t{0xFFFFFFFF} + 1));
}

// Sizes of 2^63 bits or more give 2^64 - 1, never a wrapped small size: FLOAT16, FLOAT32 and
// FLOAT64 at 2^59 elements are 2^63, 2^64 and 2^65 bits, and so is a strided FLOAT64 tensor spanning
// 2^58 + 1 elements; UINT8 at 2^59 elements (2^62 bits) still fits.
TEST(CalcBufferTensorSize, SaturatesFromTwoToThe63Bits) {
  EXPECT_EQ(calc(DML_TENSOR_DATA_TYPE_FLOAT16, {1u << 29, 1u << 30}), UINT64_MAX);
  EXPECT_EQ(calc(DML_TENSOR_DATA_TYPE_FLOAT32, {1u << 29, 1u << 30}), UINT64_MAX);
  EXPECT_EQ(calc(DML_TENSOR_DATA_TYPE_FLOAT64, {1u << 29, 1u << 30}), UINT64_MAX);
  EXPECT_EQ(calc(DML_TENSOR_DATA_TYPE_FLOAT64, {(1u << 27) + 1}, {1u << 31}), UINT64_MAX);
  EXPECT_EQ(calc(DML_TENSOR_DATA_TYPE_UINT8, {1u << 29, 1u << 30}), uint64_t{1} << 59);
  // Two strided terms that each saturate: their sum saturated too (2^63 + 2^63 wrapped to 0, which
  // gave 4 and 8 bytes).
  EXPECT_EQ(calc(DML_TENSOR_DATA_TYPE_FLOAT32, {0xFFFFFFFF, 0xFFFFFFFF}, {0xFFFFFFFF, 0xFFFFFFFF}), UINT64_MAX);
  EXPECT_EQ(calc(DML_TENSOR_DATA_TYPE_FLOAT64, {0xFFFFFFFF, 0xFFFFFFFF}, {0xFFFFFFFF, 0xFFFFFFFF}), UINT64_MAX);
  EXPECT_EQ(calc(DML_TENSOR_DATA_TYPE_UINT8, {(1u << 31) + 2, (1u << 31) + 2}, {0xFFFFFFFF, 0xFFFFFFFF}), UINT64_MAX);
}

TEST(CalcBufferTensorSize, UnknownTypeGivesZero) {
  for (int type : {0, 14, 15}) EXPECT_EQ(calc(static_cast<DML_TENSOR_DATA_TYPE>(type), {2, 3}), 0u) << type;
}

// The tests' own formula (support/tensor_spec.h) agrees with the library's on random shapes.
TEST(CalcBufferTensorSize, AgreesWithTheTestsFormula) {
  std::mt19937_64 rng(7);
  for (int c = 0; c < 500; ++c) {
    const DML_TENSOR_DATA_TYPE type = kAllTypes[rng() % kAllTypes.size()];
    Shape sizes(1 + rng() % 8), strides(sizes.size());
    for (size_t d = 0; d < sizes.size(); ++d) {
      sizes[d] = 1 + rng() % 6;
      strides[d] = rng() % 40;
    }
    EXPECT_EQ(calc(type, sizes), required_bytes(type, sizes, std::nullopt)) << to_string(sizes);
    EXPECT_EQ(calc(type, sizes, strides), required_bytes(type, sizes, strides)) << to_string(strides);
  }
}

}  // namespace
}  // namespace odml_test
