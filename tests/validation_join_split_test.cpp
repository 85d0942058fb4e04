// Validation (device-independent): the JOIN and SPLIT rules of docs/contract.md sections 3.1 and
// 3.2, one test per rule, and one per row of their feature-level support tables.
#include <gtest/gtest.h>

#include "support/expect.h"
#include "support/sample_descs.h"

namespace odml_test {
namespace {

constexpr auto kInvalid = ODML_STATUS_INVALID_ARGUMENT;

// At each of `levels`, the operator accepts exactly min_rank..max_rank dimensions (FLOAT32, in
// every row) and exactly `types` (at min_rank); a refusal names the whole tensor (JOIN's output,
// SPLIT's input, validated first), the value, the level and the allowed range or types.
void expect_support_row(OpDesc (*make)(DML_TENSOR_DATA_TYPE, uint32_t), const std::string& op,
                        const std::vector<DML_FEATURE_LEVEL>& levels, uint32_t min_rank, uint32_t max_rank,
                        const std::vector<DML_TENSOR_DATA_TYPE>& types) {
  const std::string whole = op == "JOIN" ? "JOIN: OutputTensor" : "SPLIT: InputTensor";
  for (DML_FEATURE_LEVEL level : levels) {
    const std::string at = "at feature level " + level_name(level) + " " + op + " allows ";
    for (uint32_t rank = 1; rank <= 8; ++rank) {
      SCOPED_TRACE(level_name(level) + ", " + std::to_string(rank) + " dimensions");
      if (rank >= min_rank && rank <= max_rank) {
        EXPECT_TRUE(create_succeeds(make(kF32, rank), level));
      } else {
        EXPECT_TRUE(create_fails(make(kF32, rank), kInvalid,
                                 {whole + ".DimensionCount is " + std::to_string(rank) + "; " + at +
                                  std::to_string(min_rank) + " to " + std::to_string(max_rank) + " dimensions"},
                                 level));
      }
    }
    for (DML_TENSOR_DATA_TYPE type : kAllTypes) {
      SCOPED_TRACE(level_name(level) + ", " + type_name(type));
      if (contains(types, type)) {
        EXPECT_TRUE(create_succeeds(make(type, min_rank), level));
      } else {
        EXPECT_TRUE(create_fails(make(type, min_rank), kInvalid,
                                 {whole + ".DataType is " + type_name(type) + "; " + at}, level));
      }
    }
  }
}

// ---- JOIN (docs/contract.md section 3.1) ----

TEST(Validation, JoinInputCountZeroRejected) {
  OpDesc d = sample_join();
  d.join_desc().InputCount = 0;
  EXPECT_TRUE(create_fails(d, kInvalid, {"JOIN: InputCount is 0; it must be at least 1"}));
}

TEST(Validation, JoinInputTensorsNullRejected) {
  OpDesc d = sample_join();
  d.join_desc().InputTensors = nullptr;
  EXPECT_TRUE(create_fails(d, kInvalid, {"JOIN: InputTensors is null but InputCount is 2"}));
}

TEST(Validation, JoinDataTypeMismatchRejected) {
  const OpDesc d =
      OpDesc::join({spec(kF32, {2, 3}), spec(DML_TENSOR_DATA_TYPE_FLOAT16, {2, 5})}, spec(kF32, {2, 8}), 1);
  EXPECT_TRUE(create_fails(
      d, kInvalid,
      {"JOIN: InputTensors[1].DataType is FLOAT16 but OutputTensor.DataType is FLOAT32", "same DataType"}));
}

TEST(Validation, JoinDimensionCountMismatchRejected) {
  const OpDesc d = OpDesc::join({spec(kF32, {2, 3}), spec(kF32, {1, 2, 5})}, spec(kF32, {2, 8}), 1);
  EXPECT_TRUE(create_fails(
      d, kInvalid,
      {"JOIN: InputTensors[1].DimensionCount is 3 but OutputTensor.DimensionCount is 2", "same DimensionCount"}));
}

TEST(Validation, JoinAxisOutOfRangeRejected) {
  for (UINT axis : {2u, 8u, 0xFFFFFFFFu}) {
    OpDesc d = sample_join();
    d.join_desc().Axis = axis;
    EXPECT_TRUE(create_fails(
        d, kInvalid,
        {"JOIN: Axis is " + std::to_string(axis) + "; it must be less than OutputTensor.DimensionCount (2)"}));
  }
}

// The message docs/contract.md section 4 gives as its example, word for word.
TEST(Validation, JoinOffAxisSizeMismatchRejected) {
  const OpDesc d = OpDesc::join({spec(kF32, {1, 4, 2, 1}), spec(kF32, {1, 4, 2, 1}), spec(kF32, {1, 5, 2, 1})},
                                spec(kF32, {1, 4, 2, 3}), 3);
  ASSERT_TRUE(create_fails(d, kInvalid, {}));
  EXPECT_STREQ(
      odml_last_error_message(),
      "JOIN: InputTensors[2].Sizes[1] is 5 but OutputTensor.Sizes[1] is 4; every dimension other than Axis (3) "
      "must match");
}

TEST(Validation, JoinAxisSumMismatchRejected) {
  for (uint32_t out : {7u, 9u}) {
    const OpDesc d = OpDesc::join({spec(kF32, {2, 3}), spec(kF32, {2, 5})}, spec(kF32, {2, out}), 1);
    EXPECT_TRUE(create_fails(
        d, kInvalid,
        {"JOIN: the InputTensors' Sizes[1] add up to 8 but OutputTensor.Sizes[1] is " + std::to_string(out)}));
  }
}

// The axis sum is counted in 64 bits: 2^31 + (2^31 + 1) wraps to 1 in 32.
TEST(Validation, JoinAxisSumCountedIn64Bits) {
  const auto u8 = DML_TENSOR_DATA_TYPE_UINT8;
  const OpDesc d = OpDesc::join({spec(u8, {0x80000000}), spec(u8, {0x80000001})}, spec(u8, {1}), 0);
  EXPECT_TRUE(create_fails(d, kInvalid, {"add up to 4294967297 but OutputTensor.Sizes[0] is 1"}));
  const OpDesc s = OpDesc::split(spec(u8, {1}), {spec(u8, {0x80000000}), spec(u8, {0x80000001})}, 0);
  EXPECT_TRUE(create_fails(s, kInvalid, {"add up to 4294967297 but InputTensor.Sizes[0] is 1"}));
}

// Each row of the JOIN support table of docs/contract.md section 3.1.
TEST(Validation, JoinSupportFeatureLevel4_1AndAbove) {
  expect_support_row(join_of_rank, "JOIN", {DML_FEATURE_LEVEL_4_1, DML_FEATURE_LEVEL_5_0, DML_FEATURE_LEVEL_6_4}, 1, 8,
                     kElevenTypes);
  EXPECT_TRUE(create_fails(join_of_rank(DML_TENSOR_DATA_TYPE_UINT4, 2), kInvalid, {"no feature level allows UINT4"}));
}

TEST(Validation, JoinSupportFeatureLevel3_1To4_0) {
  expect_support_row(join_of_rank, "JOIN", {DML_FEATURE_LEVEL_3_1, DML_FEATURE_LEVEL_4_0}, 4, 8, kEightTypes);
  EXPECT_TRUE(create_fails(join_of_rank(kF32, 3), kInvalid, {"3 dimensions needs 4_1"}, DML_FEATURE_LEVEL_3_1));
  EXPECT_TRUE(create_fails(join_of_rank(DML_TENSOR_DATA_TYPE_FLOAT64, 4), kInvalid, {"FLOAT64 needs 4_1"},
                           DML_FEATURE_LEVEL_4_0));
}

TEST(Validation, JoinSupportFeatureLevel3_0) {
  expect_support_row(join_of_rank, "JOIN", {DML_FEATURE_LEVEL_3_0}, 4, 5, kEightTypes);
  EXPECT_TRUE(create_fails(join_of_rank(kF32, 6), kInvalid, {"6 dimensions needs 3_1"}, DML_FEATURE_LEVEL_3_0));
}

TEST(Validation, JoinSupportFeatureLevel2_1) {
  expect_support_row(join_of_rank, "JOIN", {DML_FEATURE_LEVEL_2_1}, 4, 4, kEightTypes);
  EXPECT_TRUE(create_fails(join_of_rank(kF32, 5), kInvalid, {"5 dimensions needs 3_0"}, DML_FEATURE_LEVEL_2_1));
}

TEST(Validation, JoinSupportFeatureLevel1_0) {
  expect_support_row(join_of_rank, "JOIN", {DML_FEATURE_LEVEL_1_0, DML_FEATURE_LEVEL_2_0}, 4, 4, kSixTypes);
  EXPECT_TRUE(
      create_fails(join_of_rank(DML_TENSOR_DATA_TYPE_INT8, 4), kInvalid, {"INT8 needs 2_1"}, DML_FEATURE_LEVEL_1_0));
}

// Every input is checked against the table, not only the output.
TEST(Validation, JoinSupportAppliesToEveryInput) {
  const OpDesc d = OpDesc::join({spec(kF32, {1, 2}), spec(DML_TENSOR_DATA_TYPE_UINT4, {1, 2})}, spec(kF32, {2, 2}), 0);
  EXPECT_TRUE(create_fails(d, kInvalid, {"JOIN: InputTensors[1].DataType is UINT4"}));
}

// ---- SPLIT (docs/contract.md section 3.2) ----

TEST(Validation, SplitOutputCountZeroRejected) {
  OpDesc d = sample_split();
  d.split_desc().OutputCount = 0;
  EXPECT_TRUE(create_fails(d, kInvalid, {"SPLIT: OutputCount is 0; it must be at least 1"}));
}

TEST(Validation, SplitOutputTensorsNullRejected) {
  OpDesc d = sample_split();
  d.split_desc().OutputTensors = nullptr;
  EXPECT_TRUE(create_fails(d, kInvalid, {"SPLIT: OutputTensors is null but OutputCount is 2"}));
}

TEST(Validation, SplitInputTensorNullRejected) {
  OpDesc d = sample_split();
  d.split_desc().InputTensor = nullptr;
  EXPECT_TRUE(create_fails(d, kInvalid, {"SPLIT: InputTensor is null"}));
}

TEST(Validation, SplitDataTypeMismatchRejected) {
  const OpDesc d = OpDesc::split(spec(kF32, {2, 8}), {spec(kF32, {2, 3}), spec(DML_TENSOR_DATA_TYPE_INT32, {2, 5})}, 1);
  EXPECT_TRUE(create_fails(
      d, kInvalid, {"SPLIT: OutputTensors[1].DataType is INT32 but InputTensor.DataType is FLOAT32", "same DataType"}));
}

TEST(Validation, SplitDimensionCountMismatchRejected) {
  const OpDesc d = OpDesc::split(spec(kF32, {2, 8}), {spec(kF32, {2, 3, 1}), spec(kF32, {2, 5})}, 1);
  EXPECT_TRUE(create_fails(
      d, kInvalid,
      {"SPLIT: OutputTensors[0].DimensionCount is 3 but InputTensor.DimensionCount is 2", "same DimensionCount"}));
}

TEST(Validation, SplitAxisOutOfRangeRejected) {
  OpDesc d = sample_split();
  d.split_desc().Axis = 2;
  EXPECT_TRUE(create_fails(d, kInvalid, {"SPLIT: Axis is 2; it must be less than InputTensor.DimensionCount (2)"}));
}

TEST(Validation, SplitOffAxisSizeMismatchRejected) {
  const OpDesc d = OpDesc::split(spec(kF32, {2, 8}), {spec(kF32, {2, 3}), spec(kF32, {3, 5})}, 1);
  EXPECT_TRUE(create_fails(d, kInvalid,
                           {"SPLIT: OutputTensors[1].Sizes[0] is 3 but InputTensor.Sizes[0] is 2; every "
                            "dimension other than Axis (1) must match"}));
}

TEST(Validation, SplitAxisSumMismatchRejected) {
  const OpDesc d = OpDesc::split(spec(kF32, {2, 9}), {spec(kF32, {2, 3}), spec(kF32, {2, 5})}, 1);
  EXPECT_TRUE(
      create_fails(d, kInvalid, {"SPLIT: the OutputTensors' Sizes[1] add up to 8 but InputTensor.Sizes[1] is 9"}));
}

// SPLIT's outputs are outputs: the output stride rules apply to each of them.
TEST(Validation, SplitOutputOverlappingStridesRejected) {
  const OpDesc d = OpDesc::split(spec(kF32, {2, 8}), {spec(kF32, {2, 3}, Shape{2, 1}), spec(kF32, {2, 5})}, 1);
  EXPECT_TRUE(create_fails(d, kInvalid, {"SPLIT: OutputTensors[0].Strides {2, 1}", "same address"}));
}

TEST(Validation, SplitInputBroadcastStridesAccepted) {
  EXPECT_TRUE(
      create_succeeds(OpDesc::split(spec(kF32, {2, 8}, Shape{0, 1}), {spec(kF32, {2, 3}), spec(kF32, {2, 5})}, 1)));
}

TEST(Validation, SplitSupportFeatureLevel4_1AndAbove) {
  expect_support_row(split_of_rank, "SPLIT", {DML_FEATURE_LEVEL_4_1, DML_FEATURE_LEVEL_6_4}, 1, 8, kElevenTypes);
}

TEST(Validation, SplitSupportFeatureLevel3_0To4_0) {
  expect_support_row(split_of_rank, "SPLIT", {DML_FEATURE_LEVEL_3_0, DML_FEATURE_LEVEL_3_1, DML_FEATURE_LEVEL_4_0}, 1,
                     8, kEightTypes);
  EXPECT_TRUE(
      create_fails(split_of_rank(DML_TENSOR_DATA_TYPE_INT64, 2), kInvalid, {"INT64 needs 4_1"}, DML_FEATURE_LEVEL_3_0));
}

TEST(Validation, SplitSupportFeatureLevel2_1) {
  expect_support_row(split_of_rank, "SPLIT", {DML_FEATURE_LEVEL_2_1}, 4, 4, kEightTypes);
  EXPECT_TRUE(create_fails(split_of_rank(kF32, 1), kInvalid, {"1 dimensions needs 3_0"}, DML_FEATURE_LEVEL_2_1));
}

TEST(Validation, SplitSupportFeatureLevel1_0) {
  expect_support_row(split_of_rank, "SPLIT", {DML_FEATURE_LEVEL_1_0, DML_FEATURE_LEVEL_2_0}, 4, 4, kSixTypes);
  EXPECT_TRUE(
      create_fails(split_of_rank(DML_TENSOR_DATA_TYPE_UINT8, 4), kInvalid, {"UINT8 needs 2_1"}, DML_FEATURE_LEVEL_1_0));
}

}  // namespace
}  // namespace odml_test
