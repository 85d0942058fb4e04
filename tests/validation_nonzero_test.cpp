// Validation (device-independent): the NONZERO_COORDINATES rules of docs/contract.md section 3.3,
// one test per rule and per row of the support table.
#include <gtest/gtest.h>

#include "support/expect.h"
#include "support/sample_descs.h"

namespace odml_test {
namespace {

constexpr auto kInvalid = ODML_STATUS_INVALID_ARGUMENT;
constexpr const char* kOp = "NONZERO_COORDINATES: ";

OpDesc nonzero(const Shape& input, const Shape& count, const Shape& coordinates, DML_TENSOR_DATA_TYPE count_type = kU32,
               DML_TENSOR_DATA_TYPE coordinates_type = kU32) {
  return OpDesc::nonzero(spec(kF32, input), spec(count_type, count), spec(coordinates_type, coordinates));
}

TEST(Validation, NonzeroNullTensorRejected) {
  const char* fields[] = {"InputTensor", "OutputCountTensor", "OutputCoordinatesTensor"};
  for (int i = 0; i < 3; ++i) {
    OpDesc d = sample_nonzero();
    DML_NONZERO_COORDINATES_OPERATOR_DESC& n = d.nonzero_desc();
    (i == 0 ? n.InputTensor : i == 1 ? n.OutputCountTensor : n.OutputCoordinatesTensor) = nullptr;
    EXPECT_TRUE(create_fails(d, kInvalid, {std::string(kOp) + fields[i] + " is null"}));
  }
}

// "Below 3_0 the operator does not exist."
TEST(Validation, NonzeroExistsFromFeatureLevel3_0) {
  for (DML_FEATURE_LEVEL level : {DML_FEATURE_LEVEL_1_0, DML_FEATURE_LEVEL_2_0, DML_FEATURE_LEVEL_2_1})
    EXPECT_TRUE(create_fails(
        nonzero_of_rank(kF32, 4), kInvalid,
        {std::string(kOp) + "the operator exists from feature level 3_0", "created at " + level_name(level)}, level));
  EXPECT_TRUE(create_succeeds(nonzero_of_rank(kF32, 4), DML_FEATURE_LEVEL_3_0));
}

TEST(Validation, NonzeroInputDataTypes) {
  for (DML_TENSOR_DATA_TYPE type : kAllTypes) {
    SCOPED_TRACE(type_name(type));
    if (contains(kEightTypes, type))
      EXPECT_TRUE(create_succeeds(sample_nonzero(type)));
    else
      EXPECT_TRUE(create_fails(sample_nonzero(type), kInvalid,
                               {std::string(kOp) + "InputTensor.DataType is " + type_name(type),
                                "no feature level allows " + type_name(type)}));
  }
}

TEST(Validation, NonzeroCountNotUint32Rejected) {
  for (DML_TENSOR_DATA_TYPE type : {DML_TENSOR_DATA_TYPE_INT32, DML_TENSOR_DATA_TYPE_UINT64, kF32})
    EXPECT_TRUE(create_fails(nonzero({2, 3}, {1}, {6, 2}, type), kInvalid,
                             {std::string(kOp) + "OutputCountTensor.DataType is " + type_name(type), "allows UINT32"}));
}

TEST(Validation, NonzeroCountNotScalarRejected) {
  EXPECT_TRUE(create_fails(nonzero({2, 3}, {1, 2}, {6, 2}), kInvalid,
                           {std::string(kOp) + "OutputCountTensor.Sizes[1] is 2", "every size must be 1"}));
}

TEST(Validation, NonzeroCoordinatesNotUint32Rejected) {
  for (DML_TENSOR_DATA_TYPE type : {DML_TENSOR_DATA_TYPE_INT64, DML_TENSOR_DATA_TYPE_INT32})
    EXPECT_TRUE(create_fails(nonzero({2, 3}, {1}, {6, 2}, kU32, type), kInvalid,
                             {std::string(kOp) + "OutputCoordinatesTensor.DataType is " + type_name(type)}));
}

TEST(Validation, NonzeroCoordinatesLeadingSizesRejected) {
  EXPECT_TRUE(create_fails(
      nonzero({2, 3}, {1}, {1, 2, 6, 2}), kInvalid,
      {std::string(kOp) + "OutputCoordinatesTensor.Sizes[1] is 2", "every size but the last two (M, N) must be 1"}));
}

TEST(Validation, NonzeroCoordinatesMMismatchRejected) {
  for (uint32_t m : {5u, 7u})
    EXPECT_TRUE(create_fails(nonzero({2, 3}, {1}, {m, 2}), kInvalid,
                             {std::string(kOp) + "OutputCoordinatesTensor.Sizes[0] (M) is " + std::to_string(m) +
                              " but InputTensor has 6 elements"}));
}

TEST(Validation, NonzeroNBelowEffectiveRankRejected) {
  EXPECT_TRUE(create_fails(nonzero({1, 2, 3, 4}, {1}, {24, 2}), kInvalid,
                           {std::string(kOp) + "OutputCoordinatesTensor.Sizes[1] (N) is 2; it must be from 3",
                            "effective rank of InputTensor.Sizes {1, 2, 3, 4}", "to 4"}));
  EXPECT_TRUE(create_fails(nonzero({1, 1, 5, 5, 5}, {1}, {125, 2}), kInvalid, {"(N) is 2; it must be from 3"}));
}

TEST(Validation, NonzeroNAboveDimensionCountRejected) {
  EXPECT_TRUE(create_fails(
      nonzero({2, 3}, {1}, {6, 3}), kInvalid,
      {std::string(kOp) + "OutputCoordinatesTensor.Sizes[1] (N) is 3", "to 2 (InputTensor.DimensionCount)"}));
  EXPECT_TRUE(create_fails(nonzero({1, 1, 1, 1}, {1}, {1, 5}), kInvalid, {"(N) is 5; it must be from 1"}));
}

// N from max(1, effective rank) to DimensionCount: {1,2,3,4} -> 3..4, {1,1,5,5,5} -> 3..5,
// {1,1,1,1} -> 1..4.
TEST(Validation, NonzeroNRangeFromEffectiveRankAccepted) {
  for (uint32_t n = 3; n <= 4; ++n) EXPECT_TRUE(create_succeeds(nonzero({1, 2, 3, 4}, {1}, {24, n})));
  for (uint32_t n = 3; n <= 5; ++n) EXPECT_TRUE(create_succeeds(nonzero({1, 1, 5, 5, 5}, {1}, {125, n})));
  for (uint32_t n = 1; n <= 4; ++n) EXPECT_TRUE(create_succeeds(nonzero({1, 1, 1, 1}, {1}, {1, n})));
}

// Coordinates are an output: overlapping strides are refused, ONNX Runtime's {2, 2M} accepted.
TEST(Validation, NonzeroCoordinatesOverlappingStridesRejected) {
  const OpDesc d = OpDesc::nonzero(spec(kF32, {2, 3}), spec(kU32, {1}), spec(kU32, {6, 2}, Shape{1, 1}));
  EXPECT_TRUE(create_fails(d, kInvalid, {std::string(kOp) + "OutputCoordinatesTensor.Strides {1, 1}", "same address"}));
}

TEST(Validation, NonzeroOnnxRuntimeCoordinateStridesAccepted) {
  EXPECT_TRUE(create_succeeds(OpDesc::nonzero(spec(kF32, {2, 3}), spec(kU32, {1}), spec(kU32, {6, 2}, Shape{2, 12}))));
}

// 4_0 and above: input 1..8, count 1..8 and coordinates 2..8 dimensions, independently.
TEST(Validation, NonzeroSupportFeatureLevel4_0IndependentDimensionCounts) {
  for (DML_FEATURE_LEVEL level : {DML_FEATURE_LEVEL_4_0, DML_FEATURE_LEVEL_6_4})
    for (uint32_t rank = 1; rank <= 8; ++rank) {
      SCOPED_TRACE(level_name(level) + ", " + std::to_string(rank) + " dimensions");
      EXPECT_TRUE(create_succeeds(nonzero_of_ranks(kF32, rank, 1, 2), level));
      EXPECT_TRUE(create_succeeds(nonzero_of_ranks(kF32, 2, rank, 2), level));
      if (rank >= 2) {
        EXPECT_TRUE(create_succeeds(nonzero_of_ranks(kF32, 2, 1, rank), level));
      }
    }
  EXPECT_TRUE(create_fails(nonzero({3}, {1}, {3}), kInvalid,
                           {std::string(kOp) + "OutputCoordinatesTensor.DimensionCount is 1", "allows 2 to 8"}));
}

// 3_0 up to 4_0: the three tensors share one DimensionCount, 4 or 5.
TEST(Validation, NonzeroSupportFeatureLevel3_0SameDimensionCount) {
  for (DML_FEATURE_LEVEL level : {DML_FEATURE_LEVEL_3_0, DML_FEATURE_LEVEL_3_1}) {
    const std::string at = level_name(level);
    SCOPED_TRACE(at);
    EXPECT_TRUE(create_succeeds(nonzero_of_rank(kF32, 4), level));
    EXPECT_TRUE(create_succeeds(nonzero_of_rank(kF32, 5), level));
    EXPECT_TRUE(create_fails(
        nonzero_of_ranks(kF32, 4, 4, 5), kInvalid,
        {std::string(kOp) + "OutputCoordinatesTensor.DimensionCount is 5 but InputTensor.DimensionCount is 4",
         "at feature level " + at, "same DimensionCount"},
        level));
    EXPECT_TRUE(create_fails(nonzero_of_ranks(kF32, 5, 4, 5), kInvalid,
                             {"OutputCountTensor.DimensionCount is 4 but InputTensor.DimensionCount is 5"}, level));
    EXPECT_TRUE(create_fails(nonzero_of_rank(kF32, 3), kInvalid,
                             {std::string(kOp) + "InputTensor.DimensionCount is 3; at feature level " + at +
                                  " NONZERO_COORDINATES allows 4 to 5",
                              "3 dimensions needs 4_0"},
                             level));
    EXPECT_TRUE(create_fails(nonzero_of_rank(kF32, 6), kInvalid, {"DimensionCount is 6", "allows 4 to 5"}, level));
    for (DML_TENSOR_DATA_TYPE type : kEightTypes) EXPECT_TRUE(create_succeeds(nonzero_of_rank(type, 4), level));
  }
}

}  // namespace
}  // namespace odml_test
