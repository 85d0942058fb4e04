// DeviceNonzero: NONZERO_COORDINATES on the test device, compared with the oracle: the count and
// the first `count` rows (docs/contract.md section 3.3; rows past the count are undefined and
// never read).
#include <gtest/gtest.h>

#include "support/data_types.h"
#include "support/random_cases.h"

namespace odml_test {
namespace {

// docs/contract.md section 3.3, DirectML's example: {1,1,2,4} FLOAT32 with -0.0 among the zeros,
// N = 3.
TEST(DeviceNonzero, SpecExample) {
  NonzeroTester()
      .sizes({1, 1, 2, 4})
      .values<float>({1.0f, 0.0f, 0.0f, 2.0f, -0.0f, 3.5f, 0.0f, -5.2f})
      .count_rank(4)
      .coordinates_rank(4)
      .n(3)
      .expect_count(4)
      .expect_rows({{0, 0, 0}, {0, 0, 3}, {0, 1, 1}, {0, 1, 3}})
      .run();
}

// docs/contract.md section 3.3: non-zeros at {1,0}, {1,2}, {0,5} of a 2-D input come out in
// element order.
TEST(DeviceNonzero, SpecExampleTwoDimensional) {
  NonzeroTester()
      .type(DML_TENSOR_DATA_TYPE_INT32)
      .sizes({2, 6})
      .values<int32_t>({0, 0, 0, 0, 0, 7, -1, 0, 9, 0, 0, 0})
      .expect_count(3)
      .expect_rows({{0, 5}, {1, 0}, {1, 2}})
      .run();
}

// +0.0 and -0.0 are zero; NaN (either sign), denormals and infinities are not (no flushing).
TEST(DeviceNonzero, FloatSignedZerosNanDenormals) {
  const std::vector<Coordinates> rows = {{2}, {3}, {4}, {5}, {6}, {7}};
  NonzeroTester()
      .type(DML_TENSOR_DATA_TYPE_FLOAT32)
      .sizes({8})
      .values<uint32_t>(
          {0x00000000, 0x80000000, 0x7FC00000, 0xFFC00001, 0x00000001, 0x80000001, 0x7F800000, 0x3F800000})
      .expect_count(6)
      .expect_rows(rows)
      .run();
  NonzeroTester()
      .type(DML_TENSOR_DATA_TYPE_FLOAT16)
      .sizes({8})
      .values<uint16_t>({0x0000, 0x8000, 0x7E00, 0xFE01, 0x0001, 0x8001, 0x7C00, 0x3C00})
      .expect_count(6)
      .expect_rows(rows)
      .run();
}

// For integers every bit counts, the sign bit included.
TEST(DeviceNonzero, IntegerSignBitAloneIsNonzero) {
  NonzeroTester()
      .type(DML_TENSOR_DATA_TYPE_INT8)
      .sizes({4})
      .values<uint8_t>({0, 0x80, 0, 1})
      .expect_count(2)
      .expect_rows({{1}, {3}})
      .run();
  NonzeroTester()
      .type(DML_TENSOR_DATA_TYPE_INT16)
      .sizes({3})
      .values<uint16_t>({0x8000, 0, 0x0100})
      .expect_count(2)
      .expect_rows({{0}, {2}})
      .run();
  NonzeroTester()
      .type(DML_TENSOR_DATA_TYPE_UINT32)
      .sizes({3})
      .values<uint32_t>({0, 0x80000000, 0})
      .expect_count(1)
      .expect_rows({{1}})
      .run();
}

TEST(DeviceNonzero, EveryInputDataType) {
  for (DML_TENSOR_DATA_TYPE type : kEightTypes) {
    SCOPED_TRACE(type_name(type));
    NonzeroTester().type(type).sizes({3, 5, 7}).density(0.5).run();
  }
}

TEST(DeviceNonzero, EveryRank) {
  for (uint32_t rank = 1; rank <= 8; ++rank) {
    Shape sizes(rank);
    for (uint32_t d = 0; d < rank; ++d) sizes[d] = 2 + d % 3;
    NonzeroTester().type(DML_TENSOR_DATA_TYPE_UINT8).sizes(sizes).density(0.3).run();
  }
}

TEST(DeviceNonzero, Densities) {
  for (DML_TENSOR_DATA_TYPE type : {DML_TENSOR_DATA_TYPE_INT16, DML_TENSOR_DATA_TYPE_FLOAT32})
    for (double density : {0.0, 0.001, 0.5, 0.99, 1.0}) {
      SCOPED_TRACE(type_name(type) + " density " + std::to_string(density));
      NonzeroTester().type(type).sizes({40, 50}).density(density).run();
    }
}

// N from max(1, effective rank) to the input's DimensionCount: the trailing N dimensions.
TEST(DeviceNonzero, NFromEffectiveRankToInputRank) {
  for (uint32_t n = 2; n <= 4; ++n) NonzeroTester().sizes({1, 1, 3, 4}).n(n).run();
  for (uint32_t n = 1; n <= 4; ++n) {
    NonzeroTester().sizes({1, 1, 1, 1}).n(n).values<float>({2.0f}).expect_count(1).run();
    NonzeroTester().sizes({1, 1, 1, 1}).n(n).values<float>({-0.0f}).expect_count(0).run();
  }
  NonzeroTester().sizes({2, 1, 3}).n(3).density(0.7).run();
  NonzeroTester().sizes({1, 5, 1, 5, 5}).n(4).density(0.2).run();
}

TEST(DeviceNonzero, PermutedInputStridesKeepElementOrder) {
  NonzeroTester()
      .type(DML_TENSOR_DATA_TYPE_UINT16)
      .sizes({2, 3})
      .strides({1, 2})
      .values<uint16_t>({0, 1, 2, 3, 0, 5})
      .expect_rows({{0, 1}, {0, 2}, {1, 0}, {1, 2}})
      .run();
  NonzeroTester().sizes({2, 3, 4}).strides({1, 2, 6}).density(0.5).run();
  NonzeroTester().type(DML_TENSOR_DATA_TYPE_INT8).sizes({5, 7}).strides({1, 5}).density(0.5).run();
}

TEST(DeviceNonzero, PaddedInputStrides) {
  NonzeroTester().sizes({3, 4}).strides({9, 2}).density(0.5).run();
  NonzeroTester().type(DML_TENSOR_DATA_TYPE_FLOAT16).sizes({2, 3, 5}).strides({40, 10, 1}).density(0.5).run();
}

TEST(DeviceNonzero, BroadcastInput) {
  NonzeroTester().sizes({4, 5}).strides({0, 1}).density(0.5).run();
  NonzeroTester().type(DML_TENSOR_DATA_TYPE_INT32).sizes({3, 4}).strides({1, 0}).density(0.5).run();
  NonzeroTester().sizes({3, 3}).strides({0, 0}).density(1.0).expect_count(9).run();
}

// ONNX Runtime reads int64 coordinates [N, M] as UINT32 pairs: strides {2, 2M}.
TEST(DeviceNonzero, OnnxRuntimeCoordinateStrides) {
  NonzeroTester().sizes({3, 4}).coordinates_strides({2, 2 * 12}).density(0.5).run();
  NonzeroTester().type(DML_TENSOR_DATA_TYPE_INT8).sizes({2, 3, 5}).coordinates_strides({2, 2 * 30}).run();
  NonzeroTester().sizes({7}).coordinates_strides({2, 2 * 7}).density(1.0).run();
}

TEST(DeviceNonzero, PaddedAndPermutedCoordinates) {
  NonzeroTester().sizes({4, 5}).coordinates_strides({3, 1}).run();
  NonzeroTester().sizes({4, 5}).coordinates_strides({1, 20}).run();
  NonzeroTester().sizes({2, 3}).coordinates_rank(4).coordinates_strides({100, 50, 5, 2}).run();
}

TEST(DeviceNonzero, CountAndCoordinatesRanks) {
  for (uint32_t count_rank = 1; count_rank <= 8; ++count_rank)
    NonzeroTester().sizes({3, 4}).count_rank(count_rank).run();
  for (uint32_t coordinates_rank = 2; coordinates_rank <= 8; ++coordinates_rank)
    NonzeroTester().sizes({3, 4}).coordinates_rank(coordinates_rank).run();
  NonzeroTester().sizes({3, 4}).count_rank(3).count_strides({5, 7, 9}).run();
}

TEST(DeviceNonzero, FeatureLevel3SameDimensionCount) {
  for (DML_FEATURE_LEVEL level : {DML_FEATURE_LEVEL_3_0, DML_FEATURE_LEVEL_3_1}) {
    NonzeroTester().feature_level(level).sizes({1, 2, 3, 4}).count_rank(4).coordinates_rank(4).run();
    NonzeroTester().feature_level(level).sizes({2, 1, 3, 1, 2}).count_rank(5).coordinates_rank(5).run();
  }
}

TEST(DeviceNonzero, TotalTensorSizeLargerThanNeeded) { NonzeroTester().extra_bytes(44).sizes({3, 4}).run(); }

TEST(DeviceNonzero, GuaranteedBaseOffsetAlignmentBindsBelowSixteen) {
  for (DML_TENSOR_DATA_TYPE type : kEightTypes)
    for (uint32_t a = element_bytes(type); a <= 8; a *= 2) {
      SCOPED_TRACE(type_name(type) + " alignment " + std::to_string(a));
      NonzeroTester().type(type).alignment(a).sizes({3, 64}).run();
    }
}

// Rows of 4 and 8 bytes (N = 1 or 2 UINT32 coordinates, N = 1 UINT64), the GPU's narrowest dense rows,
// bound 4, 8 and 16 bytes off a 32-byte boundary, so that its groups of rows start at every position
// within a 16-byte vector, over many groups and tiles, sparse to full, with fill rows too.
TEST(DeviceNonzero, NarrowRowsAtEveryAlignment) {
  for (uint32_t a : {4u, 8u, 16u})
    for (double density : {0.03, 0.5, 1.0}) {
      SCOPED_TRACE(::testing::Message() << "alignment " << a << ", density " << density);
      NonzeroTester().alignment(a).sizes({100003}).density(density).run();
      NonzeroTester().alignment(a).sizes({211, 389}).density(density).run();
      NonzeroTester().alignment(a).type(DML_TENSOR_DATA_TYPE_UINT8).sizes({70001}).density(density).run();
      NonzeroTester().alignment(a).sizes({50021}).density(density).fill_values({9}).run();
      if (a == 4) continue;  // 8-byte coordinates bind at multiples of 8
      NonzeroTester()
          .alignment(a)
          .extensions(ODML_EXTENSION_64BIT_INDICES)
          .index_type(DML_TENSOR_DATA_TYPE_UINT64)
          .sizes({100003})
          .density(density)
          .run();
    }
}

// Innermost dimensions around the 64 elements of the CPU backend's mask blocks: from 64 on it works
// out a row's coordinates once a block and steps them per non-zero only where a block crosses rows
// (cpu_nonzero.cpp); also with fewer coordinates than dimensions, and read transposed.
TEST(DeviceNonzero, RowsAroundTheMaskBlockWidth) {
  for (uint32_t inner : {63u, 64u, 65u, 127u, 128u, 129u, 1000u})
    for (double density : {0.3, 1.0}) {
      SCOPED_TRACE(::testing::Message() << "innermost " << inner << ", density " << density);
      NonzeroTester().sizes({5, inner}).density(density).run();
      NonzeroTester().sizes({1, 3, inner}).n(2).density(density).run();
      NonzeroTester().sizes({3, inner}).strides({1, 3}).density(density).run();
    }
}

TEST(DeviceNonzero, OwnedByDmlInput) {
  NonzeroTester().owned_by_dml().sizes({5, 6}).executions(2).run();
  NonzeroTester().owned_by_dml().type(DML_TENSOR_DATA_TYPE_INT8).sizes({5, 6}).strides({1, 5}).run();
}

TEST(DeviceNonzero, ConcurrentExecutionFromSeveralThreads) {
  NonzeroTester().threads(4).executions(3).sizes({20, 30}).density(0.4).run();
}

// Inputs over 1 MiB make the CPU backend count and write in chunks on every thread.
TEST(DeviceNonzero, LargeEnoughForEveryThread) {
  NonzeroTester().type(DML_TENSOR_DATA_TYPE_INT8).sizes({1024, 1500}).density(0.3).run();
  NonzeroTester().sizes({600, 1000}).density(0.01).run();
  // Narrow inner dimensions: chunks start inside rows, and coordinates carry across two of them.
  NonzeroTester().type(DML_TENSOR_DATA_TYPE_UINT16).sizes({70001, 5, 3}).density(0.4).run();
  NonzeroTester().type(DML_TENSOR_DATA_TYPE_UINT8).sizes({300007, 2}).density(0.05).fill_values({1, 2}).run();
  NonzeroTester().type(DML_TENSOR_DATA_TYPE_FLOAT16).sizes({1000, 600}).strides({1, 1000}).density(0.5).run();
  NonzeroTester()  // N below the rank, ONNX Runtime's coordinate strides
      .type(DML_TENSOR_DATA_TYPE_UINT16)
      .sizes({1, 1, 700, 800})
      .n(3)
      .coordinates_strides({2, 2 * 560000})
      .density(0.2)
      .run();
}

// More tiles than a GPU holds blocks at once: CUDA blocks take several tiles each, and the last
// block fewer.
TEST(DeviceNonzero, MoreTilesThanResidentBlocks) {
  NonzeroTester().type(DML_TENSOR_DATA_TYPE_UINT8).sizes({2048, 16383}).density(0.3).run();
  NonzeroTester().sizes({3000, 3001}).density(0.5).run();
}

// Inputs of one tile (on the GPU: 16 KiB) run in one block, which skips the grid barrier; a few
// tiles more do not: one to five tiles, the last one partial or full, contiguous and strided, with
// fill rows.
TEST(DeviceNonzero, OneTileAndAFew) {
  for (uint32_t elements : {4096u, 4097u, 12293u, 16384u, 20480u}) {
    for (double density : {0.0, 0.3, 1.0}) {
      SCOPED_TRACE(::testing::Message() << elements << " elements, density " << density);
      NonzeroTester().sizes({elements}).density(density).run();
      NonzeroTester().type(DML_TENSOR_DATA_TYPE_UINT8).sizes({4, elements}).density(density).run();
      NonzeroTester().sizes({elements / 4, 4}).strides({1, elements / 4}).density(density).run();
      NonzeroTester().sizes({elements}).density(density).fill_values({7}).run();
    }
  }
}

// Runs of non-zeros and of zeros, from one element to several tiles, starting on and off the GPU
// kernel's 32-element mask words and a warp's 1024 elements, for each element width: warps whose
// words are all full or all empty beside warps with partial words.
template <class T>
NonzeroTester runs_of_nonzeros(DML_TENSOR_DATA_TYPE type, const Shape& sizes) {
  return alternating_runs<T>(type, sizes, {1024, 3072, 32, 64, 5000, 7, 2048, 31, 33, 20000, 1, 4096, 8192, 995});
}

TEST(DeviceNonzero, RunsOfNonzeros) {
  for (uint32_t elements : {70000u, 300007u}) {
    SCOPED_TRACE(::testing::Message() << elements << " elements");
    runs_of_nonzeros<uint32_t>(DML_TENSOR_DATA_TYPE_UINT32, {elements}).run();
    runs_of_nonzeros<uint16_t>(DML_TENSOR_DATA_TYPE_UINT16, {elements}).run();
    runs_of_nonzeros<uint8_t>(DML_TENSOR_DATA_TYPE_UINT8, {elements}).run();
    runs_of_nonzeros<uint32_t>(DML_TENSOR_DATA_TYPE_UINT32, {elements / 7, 7}).fill_values({3, 4}).run();
  }
  // Every element non-zero: every warp's words are full.
  NonzeroTester().type(DML_TENSOR_DATA_TYPE_UINT8).sizes({1000, 301}).density(1.0).run();
}

TEST(DeviceNonzero, RandomCases) {
  random_cases(200, [](Rng& rng) { random_nonzero_coordinates(rng).run(); });
}

}  // namespace
}  // namespace odml_test
