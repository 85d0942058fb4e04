// Validation (device-independent): the buffer-tensor rules of docs/contract.md section 2 and the
// operator-level rules of sections 1 and 4, one test per rule. Each asserts the status and the
// parts of the message that name the operator, the tensor, the field, the value and the rule.
// The carrier is a JOIN of {2,3} and {2,5} into {2,8} along axis 1 (FLOAT32); field index 1 is
// InputTensors[1], field index 2 the OutputTensor.
//
// C callers can store any 32-bit value in an enum field (Type, DataType, Flags, the operator
// type); the tests store such values as raw bytes (store_raw), and the library must reject them
// without undefined behaviour: under -fsanitize=enum a load of an out-of-range enum aborts.
#include <gtest/gtest.h>

#include "support/expect.h"
#include "support/sample_descs.h"
#include "support/test_env.h"

namespace odml_test {
namespace {

constexpr auto kInvalid = ODML_STATUS_INVALID_ARGUMENT;
constexpr size_t kInput1 = 1, kOutput = 2;

TEST(Validation, CarrierIsValid) { EXPECT_TRUE(create_succeeds(sample_join())); }

// Rule 1: Type == BUFFER.
TEST(Validation, TensorTypeNotBufferRejected) {
  OpDesc d = sample_join();
  d.tensor(kInput1).Type = DML_TENSOR_TYPE_INVALID;
  EXPECT_TRUE(create_fails(d, kInvalid, {"JOIN: InputTensors[1].Type is 0", "DML_TENSOR_TYPE_BUFFER"}));
  store_raw(d.tensor(kInput1).Type, 7);
  EXPECT_TRUE(create_fails(d, kInvalid, {"JOIN: InputTensors[1].Type is 7"}));
}

// Rule 1: Desc is not null.
TEST(Validation, TensorDescNullRejected) {
  OpDesc d = sample_join();
  d.tensor(kOutput).Desc = nullptr;
  EXPECT_TRUE(create_fails(d, kInvalid, {"JOIN: OutputTensor.Desc is null"}));
}

// Every tensor of the operator is described.
TEST(Validation, TensorPointerNullRejected) {
  OpDesc d = sample_join();
  d.join_desc().OutputTensor = nullptr;
  EXPECT_TRUE(create_fails(d, kInvalid, {"JOIN: OutputTensor is null"}));
}

// Rule 1: DataType is a known value other than UNKNOWN.
TEST(Validation, DataTypeUnknownRejected) {
  OpDesc d = sample_join();
  d.buffer(kInput1).DataType = DML_TENSOR_DATA_TYPE_UNKNOWN;
  EXPECT_TRUE(create_fails(d, kInvalid, {"JOIN: InputTensors[1].DataType is 0", "known DML_TENSOR_DATA_TYPE"}));
  d.buffer(kInput1).DataType = static_cast<DML_TENSOR_DATA_TYPE>(14);
  EXPECT_TRUE(create_fails(d, kInvalid, {"JOIN: InputTensors[1].DataType is 14"}));
  store_raw(d.buffer(kInput1).DataType, -1);
  EXPECT_TRUE(create_fails(d, kInvalid, {"JOIN: InputTensors[1].DataType is -1"}));
}

// Rule 2: 1 <= DimensionCount <= 8.
TEST(Validation, DimensionCountZeroRejected) {
  OpDesc d = sample_join();
  d.buffer(kInput1).DimensionCount = 0;
  EXPECT_TRUE(create_fails(d, kInvalid, {"JOIN: InputTensors[1].DimensionCount is 0", "1 to 8"}));
}

TEST(Validation, DimensionCountAboveEightRejected) {
  static const UINT nine[9] = {1, 1, 1, 1, 1, 1, 1, 2, 5};
  OpDesc d = sample_join();
  d.buffer(kInput1).DimensionCount = 9;
  d.buffer(kInput1).Sizes = nine;
  EXPECT_TRUE(create_fails(d, kInvalid, {"JOIN: InputTensors[1].DimensionCount is 9", "1 to 8"}));
}

TEST(Validation, SizesNullRejected) {
  OpDesc d = sample_join();
  d.buffer(kInput1).Sizes = nullptr;
  EXPECT_TRUE(create_fails(d, kInvalid, {"JOIN: InputTensors[1].Sizes is null"}));
}

// Rule 3: every size >= 1.
TEST(Validation, TensorSizeZeroRejected) {
  const OpDesc d = OpDesc::join({spec(kF32, {2, 3}), spec(kF32, {2, 0})}, spec(kF32, {2, 3}), 1);
  EXPECT_TRUE(create_fails(d, kInvalid, {"JOIN: InputTensors[1].Sizes[1] is 0", "at least 1", "no empty tensors"}));
}

// Rule 4: a zero stride broadcasts, on inputs.
TEST(Validation, InputBroadcastStridesAccepted) {
  EXPECT_TRUE(create_succeeds(
      OpDesc::join({spec(kF32, {2, 3}, Shape{0, 1}), spec(kF32, {2, 5}, Shape{0, 0})}, spec(kF32, {2, 8}), 1)));
}

// Rule 4: no zero stride on an output dimension of size > 1.
TEST(Validation, OutputZeroStrideRejected) {
  const OpDesc d = OpDesc::join({spec(kF32, {2, 3}), spec(kF32, {2, 5})}, spec(kF32, {2, 8}, Shape{0, 1}), 1);
  EXPECT_TRUE(create_fails(d, kInvalid, {"JOIN: OutputTensor.Strides[0] is 0 but Sizes[0] is 2", "cannot broadcast"}));
  const OpDesc s = OpDesc::split(spec(kF32, {2, 8}), {spec(kF32, {2, 3}), spec(kF32, {2, 5}, Shape{1, 0})}, 1);
  EXPECT_TRUE(create_fails(s, kInvalid, {"SPLIT: OutputTensors[1].Strides[1] is 0 but Sizes[1] is 5"}));
}

// A zero stride where the size is 1 addresses one element: no two elements share it.
TEST(Validation, OutputZeroStrideOnSizeOneDimensionAccepted) {
  EXPECT_TRUE(
      create_succeeds(OpDesc::join({spec(kF32, {1, 3}), spec(kF32, {1, 5})}, spec(kF32, {1, 8}, Shape{0, 1}), 1)));
}

// Rule 4: output strides that give two elements one address.
TEST(Validation, OutputOverlappingStridesRejected) {
  const OpDesc d = OpDesc::join({spec(kF32, {2, 3}), spec(kF32, {2, 5})}, spec(kF32, {2, 8}, Shape{4, 1}), 1);
  EXPECT_TRUE(create_fails(d, kInvalid, {"JOIN: OutputTensor.Strides {4, 1}", "same address", "must not overlap"}));
}

// Interleaved strides that collide only further in: (2,0) and (0,3) of {4,4} with strides {3,2}.
TEST(Validation, OutputInterleavedOverlapRejected) {
  const OpDesc d = OpDesc::join({spec(kF32, {4, 2}), spec(kF32, {4, 2})}, spec(kF32, {4, 4}, Shape{3, 2}), 1);
  EXPECT_TRUE(create_fails(d, kInvalid, {"JOIN: OutputTensor.Strides {3, 2}", "same address"}));
}

// Three dimensions that collide together though no two of them do on their own: strides {3, 2, 1}
// over {2, 2, 2} give (0,1,1) and (1,0,0) the offset 3, which only the listing of addresses finds.
TEST(Validation, OutputOverlapOfThreeDimensionsRejected) {
  const OpDesc d =
      OpDesc::join({spec(kF32, {2, 2, 1}), spec(kF32, {2, 2, 1})}, spec(kF32, {2, 2, 2}, Shape{3, 2, 1}), 2);
  EXPECT_TRUE(create_fails(
      d, kInvalid, {"JOIN: OutputTensor.Strides {3, 2, 1} give elements {0, 1, 1} and {1, 0, 0}", "must not overlap"}));
  const OpDesc s =
      OpDesc::split(spec(kF32, {2, 2, 3}), {spec(kF32, {2, 2, 2}, Shape{3, 2, 1}), spec(kF32, {2, 2, 1})}, 2);
  EXPECT_TRUE(create_fails(s, kInvalid, {"SPLIT: OutputTensors[0].Strides {3, 2, 1} give elements", "same address"}));
}

// Two dimensions that collide on their own are refused as overlapping whatever the size, before
// any listing of addresses: (3,0) and (0,2) with strides {2, 3}, in a tensor far past what the
// listing takes, and after another output has used all of it, in either order.
TEST(Validation, OutputPairwiseCollisionRejectedAtAnySize) {
  const uint32_t big = 1u << 21;
  const OpDesc join = OpDesc::join({spec(kF32, {4, big})}, spec(kF32, {4, big}, Shape{2, 3}), 1);
  EXPECT_TRUE(create_fails(join, kInvalid, {"JOIN: OutputTensor.Strides {2, 3} give elements {3, 0} and {0, 2}"}));
  const auto budget_eater = spec(kF32, {4, 1u << 20}, Shape{3, 4});  // disjoint, 2^22 elements: the whole listing
  const auto overlapping = spec(kF32, {4, 3}, Shape{2, 3});
  const uint32_t columns = (1u << 20) + 3;
  EXPECT_TRUE(create_fails(OpDesc::split(spec(kF32, {4, columns}), {budget_eater, overlapping}, 1), kInvalid,
                           {"OutputTensors[1].Strides {2, 3}", "same address"}));
  EXPECT_TRUE(create_fails(OpDesc::split(spec(kF32, {4, columns}), {overlapping, budget_eater}, 1), kInvalid,
                           {"OutputTensors[0].Strides {2, 3}", "same address"}));
}

// Interleaved but disjoint: i*3 + j*2 over {3,3} gives nine different offsets.
TEST(Validation, OutputInterleavedDisjointStridesAccepted) {
  EXPECT_TRUE(
      create_succeeds(OpDesc::join({spec(kF32, {3, 1}), spec(kF32, {3, 2})}, spec(kF32, {3, 3}, Shape{3, 2}), 1)));
}

// Proving interleaved outputs free of overlap lists their addresses, 2^22 of them at most an
// operator, however many outputs share them: a SPLIT into many outputs of one such layout is
// refused once their elements together pass that, rather than taking minutes to create.
TEST(Validation, InterleavedOutputsShareOneBudgetAnOperator) {
  const auto interleaved = [](uint32_t columns) { return spec(DML_TENSOR_DATA_TYPE_UINT8, {2, columns}, Shape{3, 2}); };
  const uint32_t half = 1u << 20;  // two outputs of 2 x 2^20 elements: 2^22 together, the whole budget
  EXPECT_TRUE(create_succeeds(
      OpDesc::split(spec(DML_TENSOR_DATA_TYPE_UINT8, {2, 2 * half}), {interleaved(half), interleaved(half)}, 1)));
  const OpDesc three = OpDesc::split(spec(DML_TENSOR_DATA_TYPE_UINT8, {2, 3 * half}),
                                     {interleaved(half), interleaved(half), interleaved(half)}, 1);
  EXPECT_TRUE(create_fails(three, ODML_STATUS_UNSUPPORTED,
                           {"SPLIT: OutputTensors[2].Strides {3, 2}", "cannot prove free of overlap",
                            "at most 4194304 elements of such outputs an operator, 0 left"}));
}

TEST(Validation, OutputPaddedStridesAccepted) {
  for (const Shape& strides : {Shape{10, 1}, Shape{16, 2}, Shape{8, 1}})
    EXPECT_TRUE(
        create_succeeds(OpDesc::join({spec(kF32, {2, 3}), spec(kF32, {2, 5})}, spec(kF32, {2, 8}, strides), 1)));
}

TEST(Validation, OutputPermutedStridesAccepted) {
  EXPECT_TRUE(
      create_succeeds(OpDesc::join({spec(kF32, {2, 3}), spec(kF32, {2, 5})}, spec(kF32, {2, 8}, Shape{1, 2}), 1)));
  EXPECT_TRUE(create_succeeds(
      OpDesc::join({spec(kF32, {2, 3, 4}), spec(kF32, {2, 3, 4})}, spec(kF32, {2, 6, 4}, Shape{1, 8, 2}), 1)));
}

// Rule 5: TotalTensorSizeInBytes >= DMLCalcBufferTensorSize.
TEST(Validation, TotalTensorSizeTooSmallRejected) {
  OpDesc d = sample_join();
  d.buffer(kInput1).TotalTensorSizeInBytes = 36;
  EXPECT_TRUE(create_fails(
      d, kInvalid,
      {"JOIN: InputTensors[1].TotalTensorSizeInBytes is 36", "DMLCalcBufferTensorSize gives 40", "at least"}));
  OpDesc strided = OpDesc::join({spec(kF32, {2, 3}), spec(kF32, {2, 5}, Shape{8, 1})}, spec(kF32, {2, 8}), 1);
  strided.buffer(kInput1).TotalTensorSizeInBytes = 48;  // 13 elements: 52 bytes
  EXPECT_TRUE(create_fails(strided, kInvalid, {"TotalTensorSizeInBytes is 48", "gives 52"}));
}

TEST(Validation, TotalTensorSizeLargerAccepted) {
  OpDesc d = sample_join();
  d.buffer(kInput1).TotalTensorSizeInBytes = 1 << 20;
  d.buffer(kOutput).TotalTensorSizeInBytes = 68;
  EXPECT_TRUE(create_succeeds(d));
}

// Rule 6: GuaranteedBaseOffsetAlignment is 0 or a power of two at least the element size.
TEST(Validation, AlignmentNotPowerOfTwoRejected) {
  for (UINT alignment : {3u, 12u, 48u, 0x80000001u}) {
    OpDesc d = sample_join();
    d.buffer(kInput1).GuaranteedBaseOffsetAlignment = alignment;
    EXPECT_TRUE(create_fails(
        d, kInvalid,
        {"JOIN: InputTensors[1].GuaranteedBaseOffsetAlignment is " + std::to_string(alignment), "power of two"}));
  }
}

TEST(Validation, AlignmentBelowElementSizeRejected) {
  OpDesc d = sample_join();
  d.buffer(kOutput).GuaranteedBaseOffsetAlignment = 2;
  EXPECT_TRUE(create_fails(d, kInvalid, {"OutputTensor.GuaranteedBaseOffsetAlignment is 2", "element size (4)"}));
  OpDesc wide = sample_join(DML_TENSOR_DATA_TYPE_FLOAT64);
  wide.buffer(kInput1).GuaranteedBaseOffsetAlignment = 4;
  EXPECT_TRUE(create_fails(wide, kInvalid, {"GuaranteedBaseOffsetAlignment is 4", "element size (8)"}));
}

TEST(Validation, AlignmentZeroOrPowerOfTwoAccepted) {
  for (UINT alignment : {0u, 4u, 8u, 16u, 256u, 4096u, 0x80000000u}) {
    OpDesc d = sample_join();
    d.buffer(kInput1).GuaranteedBaseOffsetAlignment = alignment;
    EXPECT_TRUE(create_succeeds(d)) << alignment;
  }
  OpDesc bytes = sample_join(DML_TENSOR_DATA_TYPE_UINT8);
  bytes.buffer(kInput1).GuaranteedBaseOffsetAlignment = 1;
  EXPECT_TRUE(create_succeeds(bytes));
}

// Rule 7: at most 2^32 - 1 elements, counted in 64 bits (65536 x 65537 wraps to 65536 in 32).
TEST(Validation, ElementCountAboveLimitRejected) {
  OpDesc d = OpDesc::split(spec(kF32, {65536, 65537}), {spec(kF32, {65536, 65537})}, 0);
  for (size_t i = 0; i < 2; ++i) d.buffer(i).TotalTensorSizeInBytes = uint64_t{1} << 36;
  EXPECT_TRUE(create_fails(d, kInvalid, {"SPLIT: InputTensor has 4295032832 elements", "at most 4294967295"}));
  OpDesc exact = OpDesc::split(spec(kF32, {65536, 65536}), {spec(kF32, {65536, 65536})}, 0);
  for (size_t i = 0; i < 2; ++i) exact.buffer(i).TotalTensorSizeInBytes = uint64_t{1} << 36;
  EXPECT_TRUE(create_fails(exact, kInvalid, {"SPLIT: InputTensor has 4294967296 elements"}));
}

// Rule 7: the physical extent (last index + 1) is at most 2^32 - 1, also counted in 64 bits.
TEST(Validation, PhysicalExtentAboveLimitRejected) {
  const auto u8 = DML_TENSOR_DATA_TYPE_UINT8;
  OpDesc d = OpDesc::join({spec(u8, {2, 3}, Shape{0xFFFFFFFF, 1}), spec(u8, {2, 5})}, spec(u8, {2, 8}), 1);
  d.buffer(0).TotalTensorSizeInBytes = uint64_t{1} << 34;
  EXPECT_TRUE(create_fails(
      d, kInvalid,
      {"JOIN: InputTensors[0].Strides {4294967295, 1}", "span 4294967298 elements", "at most 4294967295"}));
}

// Rule 7's messages name the true count and extent, not the 2^63 at which the limit checks stop
// counting: {2^32 - 1, 2^32 - 1} has 2^64 - 2^33 + 1 elements, which the message gave as 2^63, and a
// stride of 2^32 - 1 over 2^32 - 1 elements spans just under 2^64. Past 2^64 - 1 it says so.
TEST(Validation, ElementCountAndExtentPastTwoToThe63AreNamedExactly) {
  const auto u8 = DML_TENSOR_DATA_TYPE_UINT8;
  const UINT most = 0xFFFFFFFF;
  const auto text = [](unsigned __int128 v) {
    std::string digits;
    do digits.insert(digits.begin(), static_cast<char>('0' + static_cast<int>(v % 10)));
    while ((v /= 10) != 0);
    return digits;
  };
  OpDesc count = OpDesc::split(spec(u8, {most, most}), {spec(u8, {2, 3})}, 0);
  EXPECT_TRUE(create_fails(count, kInvalid,
                           {"SPLIT: InputTensor has " + text(static_cast<unsigned __int128>(most) * most) + " elements",
                            "at most 4294967295"}));
  OpDesc beyond = OpDesc::split(spec(u8, {most, most, 2}), {spec(u8, {2, 3})}, 0);
  EXPECT_TRUE(create_fails(beyond, kInvalid, {"SPLIT: InputTensor has more than 2^64 - 1 elements"}));
  OpDesc extent = OpDesc::join({spec(u8, {most}, Shape{most}), spec(u8, {5})}, spec(u8, {8}), 0);
  EXPECT_TRUE(create_fails(extent, kInvalid,
                           {"JOIN: InputTensors[0].Strides {4294967295}",
                            "span " + text(static_cast<unsigned __int128>(most - 1) * most + 1) + " elements"}));
}

TEST(Validation, PhysicalExtentAtLimitAccepted) {
  const auto u8 = DML_TENSOR_DATA_TYPE_UINT8;
  const OpDesc d =
      OpDesc::join({spec(u8, {2, 3}, Shape{0xFFFFFFFC, 1}), spec(u8, {2, 5})}, spec(u8, {2, 8}), 1);  // 2^32 - 1
  EXPECT_EQ(d.inputs()[0].total_bytes(), uint64_t{1} << 32);
  EXPECT_TRUE(create_succeeds(d));
}

// Flags: NONE or OWNED_BY_DML, the latter on inputs only.
TEST(Validation, UnknownFlagsRejected) {
  for (UINT flags : {2u, 3u, 0x80000000u}) {
    OpDesc d = sample_join();
    store_raw(d.buffer(kInput1).Flags, flags);
    EXPECT_TRUE(create_fails(
        d, kInvalid, {"JOIN: InputTensors[1].Flags is " + std::to_string(flags), "NONE (0) and OWNED_BY_DML (1)"}));
  }
}

TEST(Validation, OwnedByDmlOutputRejected) {
  OpDesc d = sample_join();
  d.buffer(kOutput).Flags = DML_TENSOR_FLAG_OWNED_BY_DML;
  EXPECT_TRUE(create_fails(d, kInvalid, {"JOIN: OutputTensor.Flags has OWNED_BY_DML", "inputs only"}));
  OpDesc n = sample_nonzero();
  n.buffer(1).Flags = DML_TENSOR_FLAG_OWNED_BY_DML;
  EXPECT_TRUE(create_fails(n, kInvalid, {"NONZERO_COORDINATES: OutputCountTensor.Flags has OWNED_BY_DML"}));
}

TEST(Validation, OwnedByDmlInputAccepted) {
  OpDesc d = sample_join();
  d.buffer(0).Flags = d.buffer(kInput1).Flags = DML_TENSOR_FLAG_OWNED_BY_DML;
  EXPECT_TRUE(create_succeeds(d));
  OpDesc n = sample_nonzero();
  n.buffer(0).Flags = DML_TENSOR_FLAG_OWNED_BY_DML;
  EXPECT_TRUE(create_succeeds(n));
}

// Section 1/4: the operator descriptor itself.
TEST(Validation, NullOperatorDescRejected) {
  EXPECT_TRUE(create_fails(nullptr, kInvalid, {"DML_OPERATOR_DESC is null"}));
}

TEST(Validation, NullOperatorDescDescRejected) {
  OpDesc j = sample_join(), s = sample_split(), n = sample_nonzero();
  j.op().Desc = s.op().Desc = n.op().Desc = nullptr;
  EXPECT_TRUE(create_fails(j, kInvalid, {"JOIN: DML_OPERATOR_DESC.Desc is null"}));
  EXPECT_TRUE(create_fails(s, kInvalid, {"SPLIT: DML_OPERATOR_DESC.Desc is null"}));
  EXPECT_TRUE(create_fails(n, kInvalid, {"NONZERO_COORDINATES: DML_OPERATOR_DESC.Desc is null"}));
}

// A valid request opendml cannot do: UNSUPPORTED, not INVALID_ARGUMENT.
TEST(Validation, UnknownOperatorTypeUnsupported) {
  for (int type : {1, 61, 64, 132, 134, 1000}) {
    OpDesc d = sample_join();
    store_raw(d.op().Type, type);
    EXPECT_TRUE(create_fails(d, ODML_STATUS_UNSUPPORTED, {"operator type " + std::to_string(type), "not implemented"}));
  }
}

// DML_OPERATOR_INVALID is no operator at all: the caller's mistake (DirectML's E_INVALIDARG), not
// one opendml lacks.
TEST(Validation, OperatorTypeInvalidRejected) {
  OpDesc d = sample_join();
  d.op().Type = DML_OPERATOR_INVALID;
  EXPECT_TRUE(create_fails(d, kInvalid, {"operator type 0 is DML_OPERATOR_INVALID", "JOIN (63)"}));
}

TEST(Validation, UnknownFeatureLevelRejected) {
  for (unsigned level : {0x0100u, 0x1100u, 0x4200u, 0x6500u, 0x7FFFu}) {  // within the enum's range
    char hex[16];
    std::snprintf(hex, sizeof hex, "0x%x", level);
    EXPECT_TRUE(create_fails(sample_join(), kInvalid, {std::string("feature level ") + hex, "not a DML_FEATURE_LEVEL"},
                             static_cast<DML_FEATURE_LEVEL>(level)));
  }
}

// Feature level 0 means the highest: what only 4_1 and above allow (FLOAT64, one dimension).
TEST(Validation, FeatureLevelZeroMeansHighest) {
  const OpDesc d = OpDesc::join({spec(DML_TENSOR_DATA_TYPE_FLOAT64, {3})}, spec(DML_TENSOR_DATA_TYPE_FLOAT64, {3}), 0);
  EXPECT_TRUE(create_succeeds(d, DML_FEATURE_LEVEL(0)));
  EXPECT_TRUE(create_fails(d, kInvalid, {"at feature level 4_0"}, DML_FEATURE_LEVEL_4_0));
}

// Section 1: levels are strict supersets: whatever one level accepts, every higher one accepts.
TEST(Validation, HigherFeatureLevelsAcceptWhatLowerOnesAccept) {
  const std::vector<DML_FEATURE_LEVEL> levels = {DML_FEATURE_LEVEL_1_0, DML_FEATURE_LEVEL_2_0, DML_FEATURE_LEVEL_2_1,
                                                 DML_FEATURE_LEVEL_3_0, DML_FEATURE_LEVEL_3_1, DML_FEATURE_LEVEL_4_0,
                                                 DML_FEATURE_LEVEL_4_1, DML_FEATURE_LEVEL_5_0, DML_FEATURE_LEVEL_5_1,
                                                 DML_FEATURE_LEVEL_5_2, DML_FEATURE_LEVEL_6_0, DML_FEATURE_LEVEL_6_1,
                                                 DML_FEATURE_LEVEL_6_2, DML_FEATURE_LEVEL_6_3, DML_FEATURE_LEVEL_6_4};
  for (DML_TENSOR_DATA_TYPE type : kAllTypes)
    for (uint32_t rank = 1; rank <= 8; ++rank) {
      const OpDesc descs[] = {join_of_rank(type, rank), split_of_rank(type, rank), nonzero_of_rank(type, rank)};
      for (const OpDesc& d : descs) {
        bool accepted = false;
        for (DML_FEATURE_LEVEL level : levels) {
          odml_operator op = nullptr;
          const bool ok = odml_operator_create(cpu_device().get(), &d.get(), level, &op) == ODML_STATUS_SUCCESS;
          odml_operator_destroy(op);
          EXPECT_TRUE(ok || !accepted) << d.to_string() << " is refused at " << std::hex << level
                                       << " but a lower level accepts it";
          accepted = accepted || ok;
        }
      }
    }
}

}  // namespace
}  // namespace odml_test
