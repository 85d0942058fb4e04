// DeviceSplit: SPLIT on the test device, compared bit for bit with the oracle (docs/contract.md
// section 3.2).
#include <gtest/gtest.h>

#include "support/data_types.h"
#include "support/random_cases.h"

namespace odml_test {
namespace {

const std::vector<float> kOneToTwelve = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};

// docs/contract.md section 3.2: {1,1,6,2} along Axis 2 into {1,1,2,2}, {1,1,1,2}, {1,1,3,2}.
TEST(DeviceSplit, SpecExampleAxis2) {
  SplitTester()
      .axis(2)
      .outputs({{1, 1, 2, 2}, {1, 1, 1, 2}, {1, 1, 3, 2}})
      .input_values(kOneToTwelve)
      .expect_output<float>(0, {1, 2, 3, 4})
      .expect_output<float>(1, {5, 6})
      .expect_output<float>(2, {7, 8, 9, 10, 11, 12})
      .run();
}

// docs/contract.md section 3.2: the same input along Axis 3 into two {1,1,6,1}.
TEST(DeviceSplit, SpecExampleAxis3) {
  SplitTester()
      .axis(3)
      .outputs({{1, 1, 6, 1}, {1, 1, 6, 1}})
      .input_values(kOneToTwelve)
      .expect_output<float>(0, {1, 3, 5, 7, 9, 11})
      .expect_output<float>(1, {2, 4, 6, 8, 10, 12})
      .run();
}

TEST(DeviceSplit, EveryDataType) {
  for (DML_TENSOR_DATA_TYPE type : kElevenTypes) {
    SCOPED_TRACE(type_name(type));
    SplitTester().type(type).axis(1).outputs({{2, 3}, {2, 5}}).run();
    SplitTester().type(type).axis(2).outputs({{2, 3, 1}, {2, 3, 4}, {2, 3, 2}}).run();
  }
}

TEST(DeviceSplit, EveryRankAndAxis) {
  for (uint32_t rank = 1; rank <= 8; ++rank)
    for (uint32_t axis = 0; axis < rank; ++axis) {
      Shape a(rank);
      for (uint32_t d = 0; d < rank; ++d) a[d] = 3 - d % 3;  // at most 216 elements at rank 8
      Shape b = a;
      a[axis] = 1;
      b[axis] = 2;
      SplitTester().type(DML_TENSOR_DATA_TYPE_INT32).axis(axis).outputs({a, b, a}).run();
    }
}

TEST(DeviceSplit, EveryFeatureLevelThatHasSplit) {
  for (DML_FEATURE_LEVEL level : {DML_FEATURE_LEVEL_1_0, DML_FEATURE_LEVEL_2_1, DML_FEATURE_LEVEL_3_0,
                                  DML_FEATURE_LEVEL_4_1, DML_FEATURE_LEVEL_6_4})
    SplitTester().feature_level(level).axis(1).outputs({{2, 1, 3, 4}, {2, 2, 3, 4}}).run();
}

TEST(DeviceSplit, SingleOutputIsACopy) {
  SplitTester().axis(0).outputs({{3, 7}}).run();
  SplitTester().type(DML_TENSOR_DATA_TYPE_UINT64).axis(1).outputs({{4, 3}}).output_strides({{1, 4}}).run();
}

TEST(DeviceSplit, PaddedStrides) {
  SplitTester().axis(1).outputs({{3, 2}, {3, 4}}).input_strides({8, 1}).output_strides({{5, 1}, {9, 2}}).run();
  SplitTester()
      .type(DML_TENSOR_DATA_TYPE_INT8)
      .axis(0)
      .outputs({{2, 3, 4}, {1, 3, 4}})
      .input_strides({13, 4, 1})
      .output_strides({{20, 5, 1}, {}})
      .run();
}

TEST(DeviceSplit, PermutedStrides) {
  SplitTester().axis(0).outputs({{2, 3}, {4, 3}}).input_strides({1, 6}).run();
  SplitTester().axis(1).outputs({{4, 3}, {4, 5}}).output_strides({{1, 4}, {1, 4}}).run();
  SplitTester()
      .type(DML_TENSOR_DATA_TYPE_FLOAT16)
      .axis(2)
      .outputs({{2, 3, 2}, {2, 3, 3}})
      .input_strides({3, 1, 6})
      .output_strides({{1, 4, 2}, {18, 1, 3}})
      .run();
}

TEST(DeviceSplit, BroadcastInput) {
  SplitTester().axis(1).outputs({{4, 3}, {4, 2}}).input_strides({0, 1}).run();
  SplitTester().type(DML_TENSOR_DATA_TYPE_UINT8).axis(0).outputs({{2, 5}, {3, 5}}).input_strides({1, 0}).run();
  SplitTester().axis(0).outputs({{1, 4}, {2, 4}}).input_strides({0, 0}).run();
}

TEST(DeviceSplit, StridedOutputs) {
  SplitTester().axis(1).outputs({{2, 3}, {2, 5}}).output_strides({{16, 2}, {7, 1}}).run();
}

TEST(DeviceSplit, TotalTensorSizeLargerThanNeeded) {
  SplitTester().extra_bytes(36).axis(1).outputs({{2, 3}, {2, 5}}).run();
}

TEST(DeviceSplit, GuaranteedBaseOffsetAlignmentBindsBelowSixteen) {
  for (DML_TENSOR_DATA_TYPE type : kElevenTypes)
    for (uint32_t a = element_bytes(type); a <= 8; a *= 2) {
      SCOPED_TRACE(type_name(type) + " alignment " + std::to_string(a));
      SplitTester().type(type).alignment(a).axis(0).outputs({{2, 32}, {3, 32}}).run();
      SplitTester().type(type).alignment(a).axis(1).outputs({{2, 16}, {2, 48}}).run();
    }
}

TEST(DeviceSplit, OwnedByDmlInput) {
  SplitTester().owned_by_dml().axis(1).outputs({{2, 3}, {2, 5}}).executions(2).run();
  SplitTester().owned_by_dml().axis(0).outputs({{2, 3}, {1, 3}}).input_strides({1, 3}).run();
}

TEST(DeviceSplit, ConcurrentExecutionFromSeveralThreads) {
  SplitTester().threads(4).executions(3).axis(1).outputs({{8, 3}, {8, 50}, {8, 1}}).run();
}

TEST(DeviceSplit, ThousandSmallOutputs) {
  SplitTester().type(DML_TENSOR_DATA_TYPE_UINT16).axis(0).outputs(std::vector<Shape>(1000, {1, 2})).run();
}

TEST(DeviceSplit, LargeEnoughForEveryThread) {
  SplitTester().axis(1).outputs({{256, 700}, {256, 1100}}).run();
  SplitTester().axis(0).outputs({{300, 1024}, {300, 1024}}).input_strides({1, 600}).run();
}

// JOIN then SPLIT along the same axis gives back the inputs bit for bit, whatever the layouts.
TEST(DeviceSplit, SplitOfJoinGivesBackTheInputs) {
  random_cases(20, [](Rng& rng) {
    const Concat c = random_concat(rng, false, false);
    std::vector<TensorSpec> pieces;
    for (size_t i = 0; i < c.pieces.size(); ++i)
      pieces.push_back(spec(c.type, c.pieces[i], strides_or_null(c.piece_strides, i)));
    const TensorSpec whole = spec(c.type, concat_sizes(c.pieces, c.axis), c.whole_strides);
    std::vector<Bytes> inputs;
    for (const TensorSpec& p : pieces) inputs.push_back(random_bytes(rng, p.total_bytes()));

    const OpDesc join = OpDesc::join(pieces, whole, c.axis);
    SCOPED_TRACE(join.to_string());
    const RunOutputs joined = run_operator(join, inputs);
    ASSERT_FALSE(joined.empty());
    const RunOutputs split = run_operator(OpDesc::split(whole, pieces, c.axis), {joined[0][0]});
    ASSERT_FALSE(split.empty());
    for (size_t i = 0; i < pieces.size(); ++i)
      EXPECT_TRUE(elements_equal(pieces[i], split[0][i], gather(pieces[i], inputs[i]), "piece " + std::to_string(i)));
  });
}

// Rows of every length the CPU copies with a move of fixed size (1 to 256 bytes), with 16-byte
// moves and overlapping ends (3 to 511 bytes), and with memcpy (512 bytes and more).
TEST(DeviceSplit, RowsOfEveryLength) {
  for (uint32_t bytes : {1u, 3u, 4u, 7u, 8u, 15u, 16u, 17u, 32u, 64u, 100u, 128u, 256u, 511u, 512u, 700u}) {
    SCOPED_TRACE(std::to_string(bytes) + "-byte rows");
    SplitTester().type(DML_TENSOR_DATA_TYPE_UINT8).alignment(1).axis(1).outputs({{37, bytes}, {37, 3}}).run();
  }
}

TEST(DeviceSplit, RandomCases) {
  random_cases(200, [](Rng& rng) { random_split(rng).run(); });
}

}  // namespace
}  // namespace odml_test
