// The extensions (docs/contract.md section 7): 64-bit indices and coordinate offsets, what they
// allow, that nothing changes without them, and their NONZERO outputs on the test device. (Inputs
// past 2^32 elements run in the CUDA suite, where there is memory for them.)
#include <gtest/gtest.h>

#include <cstring>

#include "support/expect.h"
#include "support/random_cases.h"
#include "support/sample_descs.h"
#include "support/testers.h"

namespace odml_test {
namespace {

constexpr auto kInvalid = ODML_STATUS_INVALID_ARGUMENT;
constexpr uint32_t kWide = ODML_EXTENSION_64BIT_INDICES;
constexpr auto kI64 = DML_TENSOR_DATA_TYPE_INT64;
constexpr auto kU64 = DML_TENSOR_DATA_TYPE_UINT64;
constexpr auto kU8 = DML_TENSOR_DATA_TYPE_UINT8;
constexpr auto kU16 = DML_TENSOR_DATA_TYPE_UINT16;
constexpr const char* kOp = "NONZERO_COORDINATES: ";

OpDesc nonzero(DML_TENSOR_DATA_TYPE input_type, const Shape& input, DML_TENSOR_DATA_TYPE index_type,
               const Shape& coordinates, DML_TENSOR_DATA_TYPE count_type = DML_TENSOR_DATA_TYPE_UNKNOWN) {
  return OpDesc::nonzero(spec(input_type, input), spec(count_type ? count_type : index_type, {1}),
                         spec(index_type, coordinates));
}

TEST(Extension, Nonzero64BitOutputsNeedTheExtension) {
  for (DML_TENSOR_DATA_TYPE t : {kI64, kU64}) {
    SCOPED_TRACE(type_name(t));
    const OpDesc d = nonzero(kF32, {2, 3}, t, {6, 2});
    // The refusal names the extension that allows the type, as rule 7's does for element counts.
    EXPECT_TRUE(create_fails(d, kInvalid,
                             {std::string(kOp) + "OutputCountTensor.DataType is " + type_name(t), "allows UINT32",
                              "ODML_EXTENSION_64BIT_INDICES allows INT64 and UINT64"}));
    const OpDesc coordinates = nonzero(kF32, {2, 3}, t, {6, 2}, DML_TENSOR_DATA_TYPE_UINT32);
    EXPECT_TRUE(create_fails(coordinates, kInvalid,
                             {std::string(kOp) + "OutputCoordinatesTensor.DataType is " + type_name(t),
                              "ODML_EXTENSION_64BIT_INDICES allows INT64 and UINT64"}));
    // A DimensionCount the level refuses is still named first.
    EXPECT_TRUE(
        create_fails(d, kInvalid, {std::string(kOp) + "InputTensor.DimensionCount is 2"}, DML_FEATURE_LEVEL_3_0));
    EXPECT_TRUE(create_succeeds(d, DML_FEATURE_LEVEL(0), kWide));
    // Their dimension counts still follow DirectML's table: at 3_0 all three share one, 4 or 5.
    EXPECT_TRUE(create_fails(d, kInvalid, {"DimensionCount"}, DML_FEATURE_LEVEL_3_0, kWide));
  }
  // Types other than UINT32, INT64 and UINT64 stay rejected.
  EXPECT_TRUE(create_fails(nonzero(kF32, {2, 3}, DML_TENSOR_DATA_TYPE_INT32, {6, 2}), kInvalid,
                           {"OutputCountTensor.DataType is INT32"}, DML_FEATURE_LEVEL(0), kWide));
}

// UINT sizes cap M at 2^32 - 1; with the extension the row dimensions may multiply to M.
TEST(Extension, NonzeroRowDimensionsMultiplyToM) {
  const OpDesc split_rows = nonzero(kF32, {4, 6}, DML_TENSOR_DATA_TYPE_UINT32, {4, 6, 2});
  EXPECT_TRUE(
      create_fails(split_rows, kInvalid, {std::string(kOp) + "OutputCoordinatesTensor.Sizes[0] is 4", "must be 1"}));
  EXPECT_TRUE(create_succeeds(split_rows, DML_FEATURE_LEVEL(0), kWide));
  EXPECT_TRUE(create_fails(nonzero(kF32, {4, 6}, kU64, {4, 5, 2}), kInvalid,
                           {"multiply to 20", "InputTensor has 24 elements"}, DML_FEATURE_LEVEL(0), kWide));
  // Rows that are not evenly spaced cannot be written as one row dimension.
  OpDesc uneven = OpDesc::nonzero(spec(kF32, {4, 6}), spec(kU64, {1}), spec(kU64, {4, 6, 2}, Shape{100, 2, 1}));
  EXPECT_TRUE(create_fails(uneven, kInvalid, {"do not space the rows evenly"}, DML_FEATURE_LEVEL(0), kWide));
}

TEST(Extension, TensorsPastTwoToThe32Elements) {
  const uint32_t half = (1u << 31) + 8;  // two of them pass 2^32 - 1
  const OpDesc join = OpDesc::join({spec(kU8, {1, half}), spec(kU8, {1, half})}, spec(kU8, {2, half}), 0);
  EXPECT_TRUE(create_fails(join, kInvalid,
                           {"JOIN: OutputTensor has 4294967312 elements", "ODML_EXTENSION_64BIT_INDICES allows more"}));
  EXPECT_TRUE(create_succeeds(join, DML_FEATURE_LEVEL(0), kWide));
  const OpDesc split = OpDesc::split(spec(kU8, {2, half}), {spec(kU8, {1, half}), spec(kU8, {1, half})}, 0);
  EXPECT_TRUE(create_succeeds(split, DML_FEATURE_LEVEL(0), kWide));
  // NONZERO of such an input needs a 64-bit count; its coordinates may stay UINT32.
  const OpDesc narrow_count = nonzero(kU8, {2, half}, DML_TENSOR_DATA_TYPE_UINT32, {2, half, 2}, kU64);
  EXPECT_TRUE(create_succeeds(narrow_count, DML_FEATURE_LEVEL(0), kWide));
  EXPECT_TRUE(create_fails(nonzero(kU8, {2, half}, DML_TENSOR_DATA_TYPE_UINT32, {2, half, 2}), kInvalid,
                           {"more than 2^32 - 1, so OutputCountTensor must be INT64 or UINT64"}, DML_FEATURE_LEVEL(0),
                           kWide));
}

// The limit the extension lifts rule 7 to is 2^62 - 1 elements (docs/contract.md section 7; the
// header once said 2^64 - 1): a broadcast input of 2^62 elements is refused, and one of 2^62 - 1
// (2147483647 x 2147483649) passes, so that the operator is refused at its output instead.
TEST(Extension, ElementLimitIsTwoToThe62MinusOne) {
  const uint64_t limit = (uint64_t{1} << 62) - 1;
  const OpDesc over = OpDesc::split(spec(kU8, {1u << 31, 1u << 31}, Shape{0, 0}), {spec(kU8, {1, 1})}, 0);
  EXPECT_TRUE(create_fails(over, kInvalid,
                           {"SPLIT: InputTensor has " + std::to_string(limit + 1) + " elements",
                            "at most " + std::to_string(limit) + " are allowed"},
                           DML_FEATURE_LEVEL(0), kWide));
  const UINT a = 2147483647, b = 2147483649;
  ASSERT_EQ(uint64_t{a} * b, limit);
  const OpDesc at = OpDesc::split(spec(kU8, {a, b}, Shape{0, 0}), {spec(kU8, {1, 1})}, 0);
  EXPECT_TRUE(create_fails(at, kInvalid,
                           {"SPLIT: OutputTensors[0].Sizes[1] is 1 but InputTensor.Sizes[1] is 2147483649"},
                           DML_FEATURE_LEVEL(0), kWide));
}

// Compiling for what the descriptors declare, before any memory is bound, takes memory and time
// that do not grow with it: the CPU kernel listed a tile a 64 KiB, gigabytes of them for the 2^54
// bytes declared here.
TEST(Extension, CompilingAHugeDeclaredTensorIsBounded) {
  const uint32_t rows = (1u << 31) - 1;
  const OpDesc join =
      OpDesc::join({spec(kF32, {rows, 1u << 22}), spec(kF32, {rows, 1u << 22})}, spec(kF32, {rows, 1u << 23}), 1);
  EXPECT_TRUE(create_succeeds(join, DML_FEATURE_LEVEL(0), kWide));
  const OpDesc alone = OpDesc::join({spec(kF32, {rows, 1u << 23})}, spec(kF32, {rows, 1u << 23}), 0);
  EXPECT_TRUE(create_succeeds(alone, DML_FEATURE_LEVEL(0), kWide));
}

// A strided tensor spanning 2^58 + 1 FLOAT64 elements (2^64 + 64 bits): DMLCalcBufferTensorSize gives
// 2^64 - 1 rather than a wrapped 8 bytes, so a TotalTensorSizeInBytes of 16 is refused at creation
// instead of letting execute read 2^61 bytes past a 16-byte buffer.
TEST(Extension, StridesPastTwoToThe64BitsAreRefused) {
  const UINT sizes[] = {(1u << 27) + 1}, strides[] = {1u << 31};
  const DML_BUFFER_TENSOR_DESC input{DML_TENSOR_DATA_TYPE_FLOAT64, DML_TENSOR_FLAG_NONE, 1, sizes, strides, 16, 0};
  const DML_BUFFER_TENSOR_DESC output{
      DML_TENSOR_DATA_TYPE_FLOAT64, DML_TENSOR_FLAG_NONE, 1, sizes, nullptr, uint64_t{sizes[0]} * 8, 0};
  const DML_TENSOR_DESC input_desc{DML_TENSOR_TYPE_BUFFER, &input}, output_desc{DML_TENSOR_TYPE_BUFFER, &output};
  const DML_JOIN_OPERATOR_DESC join{1, &input_desc, &output_desc, 0};
  const DML_OPERATOR_DESC desc{DML_OPERATOR_JOIN, &join};
  EXPECT_TRUE(create_fails(&desc, kInvalid, {"JOIN: InputTensors[0] (Sizes {134217729}) spans 2^63 bits or more"},
                           DML_FEATURE_LEVEL(0), kWide));
}

// A tensor whose byte size saturates DMLCalcBufferTensorSize is refused even with a
// TotalTensorSizeInBytes of 2^64 - 1 that "covers" it: 2^61 FLOAT64 elements are 2^64 bytes, which
// wrapped to 0 in the CPU kernel's tiling at compile (a division by zero, SIGFPE).
TEST(Extension, TensorsOfTwoToThe64BytesAreRefused) {
  const UINT sizes[] = {1u << 31, 1u << 30};
  const DML_BUFFER_TENSOR_DESC tensor{
      DML_TENSOR_DATA_TYPE_FLOAT64, DML_TENSOR_FLAG_NONE, 2, sizes, nullptr, UINT64_MAX, 0};
  const DML_TENSOR_DESC tensor_desc{DML_TENSOR_TYPE_BUFFER, &tensor};
  const DML_JOIN_OPERATOR_DESC join{1, &tensor_desc, &tensor_desc, 0};
  const DML_OPERATOR_DESC desc{DML_OPERATOR_JOIN, &join};
  EXPECT_TRUE(create_fails(&desc, kInvalid,
                           {"(Sizes {2147483648, 1073741824}) spans 2^63 bits or more; no buffer holds it"},
                           DML_FEATURE_LEVEL(0), kWide));
}

// At exactly 2^32 - 1 elements every count fits a UINT32: only inputs past that need a 64-bit count.
TEST(Extension, NonzeroCountMayStayUint32AtTwoToThe32MinusOneElements) {
  const UINT rows = 65535, columns = 65537;  // 2^32 - 1 elements
  ASSERT_EQ(uint64_t{rows} * columns, 0xFFFFFFFFull);
  const OpDesc d = nonzero(kU8, {rows, columns}, DML_TENSOR_DATA_TYPE_UINT32, {rows, columns, 2});
  EXPECT_TRUE(create_succeeds(d, DML_FEATURE_LEVEL(0), kWide));
}

// ---- On the test device ----

TEST(DeviceExtension, Nonzero64BitCountAndCoordinates) {
  for (DML_TENSOR_DATA_TYPE t : {kI64, kU64}) {
    SCOPED_TRACE(type_name(t));
    NonzeroTester().extensions(kWide).index_type(t).sizes({3, 4}).density(0.5).run();
    NonzeroTester().extensions(kWide).index_type(t).type(kU8).sizes({5, 7, 9}).density(0.3).run();
    NonzeroTester().extensions(kWide).index_type(t).sizes({1, 1, 2, 4}).n(2).density(1.0).expect_count(8).run();
    // ONNX's int64 [N, M] layout, column-major.
    NonzeroTester().extensions(kWide).index_type(t).sizes({3, 4}).coordinates_strides({1, 12}).run();
    NonzeroTester().extensions(kWide).index_type(t).alignment(8).sizes({6}).run();
    NonzeroTester().extensions(kWide).index_type(t).type(DML_TENSOR_DATA_TYPE_FLOAT16).sizes({2048, 33}).run();
  }
}

// Dense rows of 8 or 16 bytes are stored as one vector, and wider ones (8 UINT32 columns, 4 or 8
// 64-bit ones) as 16-byte vectors by neighbouring threads: every column count of both widths, at
// every alignment of the coordinates, over several tiles.
TEST(DeviceExtension, NonzeroRowsOfEveryWidth) {
  for (uint32_t n = 1; n <= 8; ++n) {
    Shape sizes(n, 2);
    sizes.back() = 3000;
    for (uint32_t alignment : {0u, 4u, 8u, 16u}) {
      SCOPED_TRACE(::testing::Message() << n << " columns, alignment " << alignment);
      NonzeroTester().sizes(sizes).density(0.6).alignment(alignment).run();
      if (alignment == 4) continue;  // 64-bit coordinates are 8-byte aligned
      NonzeroTester().extensions(kWide).index_type(kI64).sizes(sizes).density(1.0).alignment(alignment).run();
      NonzeroTester().extensions(kWide).index_type(kU64).sizes(sizes).density(0.6).alignment(alignment).run();
    }
  }
}

TEST(DeviceExtension, NonzeroRowsOverSeveralDimensions) {
  NonzeroTester().extensions(kWide).index_type(kU64).sizes({4, 6}).coordinates_rank(3).row_sizes({4, 6}).run();
  NonzeroTester().extensions(kWide).index_type(kI64).sizes({30}).coordinates_rank(4).row_sizes({2, 3, 5}).run();
}

// A row dimension of size 1 just before N has a stride of its own that no row uses: the rows of
// {24, 1, 2} with strides {4, 2, 1} are 4 elements apart, not 2.
TEST(DeviceExtension, NonzeroRowsWithAnInnerRowDimensionOfSizeOne) {
  for (DML_TENSOR_DATA_TYPE t : {kU64, DML_TENSOR_DATA_TYPE_UINT32}) {
    SCOPED_TRACE(type_name(t));
    NonzeroTester()
        .extensions(kWide)
        .index_type(t)
        .sizes({4, 6})
        .coordinates_rank(3)
        .row_sizes({24, 1})
        .coordinates_strides({4, 2, 1})
        .density(0.7)
        .run();
  }
}

TEST(DeviceExtension, RandomNonzeroCases) {
  random_cases(60, [](Rng& rng) {
    random_nonzero_coordinates(rng).extensions(kWide).index_type(rng() % 2 ? kI64 : kU64).run();
  });
}

// Without 64-bit outputs the extension changes nothing: the same operators give the same results.
TEST(DeviceExtension, ExtensionAloneChangesNoResult) {
  random_cases(40, [](Rng& rng) {
    switch (rng() % 3) {
      case 0: random_join(rng).extensions(kWide).run(); break;
      case 1: random_split(rng).extensions(kWide).run(); break;
      default: random_nonzero_coordinates(rng).extensions(kWide).run();
    }
  });
}

// ---- Coordinate offsets ----

constexpr uint32_t kOffsets = ODML_EXTENSION_COORDINATE_OFFSETS;

// Creates and destroys an operator with options on the CPU; message receives the last error.
odml_status create_with(const OpDesc& d, const odml_operator_options& options, std::string* message) {
  odml_operator op = nullptr;
  const odml_status status =
      odml_operator_create_with_options(cpu_device().get(), &d.get(), DML_FEATURE_LEVEL(0), &options, &op);
  if (message != nullptr) *message = odml_last_error_message();
  odml_operator_destroy(op);
  return status;
}

odml_status create_with_offsets(const OpDesc& d, uint32_t extensions, std::vector<uint64_t> offsets,
                                std::string* message = nullptr) {
  return create_with(
      d, {extensions, static_cast<uint32_t>(offsets.size()), offsets.empty() ? nullptr : offsets.data(), 0, nullptr},
      message);
}

// The operator's type is checked before what its extensions carry: an operator opendml does not
// implement is UNSUPPORTED whatever extensions come with it, and an extension that does not apply
// to JOIN says so before it asks for its values.
TEST(Extension, OperatorTypeIsCheckedBeforeExtensionValues) {
  OpDesc unknown = OpDesc::join({spec(kU8, {2, 3})}, spec(kU8, {2, 3}), 0);
  store_raw(unknown.op().Type, 999);
  std::string message;
  EXPECT_EQ(create_with_offsets(unknown, kOffsets, {0, 0}, &message), ODML_STATUS_UNSUPPORTED);
  EXPECT_NE(message.find("operator type 999 is not implemented"), std::string::npos) << message;
  const OpDesc join = OpDesc::join({spec(kU8, {2, 3})}, spec(kU8, {2, 3}), 0);
  EXPECT_EQ(create_with_offsets(join, kOffsets, {}, &message), kInvalid);
  EXPECT_NE(message.find("ODML_EXTENSION_COORDINATE_OFFSETS applies to NONZERO_COORDINATES only"), std::string::npos)
      << message;
}

TEST(Extension, CoordinateOffsetsAreCheckedAtCreation) {
  const OpDesc d = nonzero(kF32, {4, 6}, DML_TENSOR_DATA_TYPE_UINT32, {24, 2});
  std::string message;
  EXPECT_EQ(create_with_offsets(d, kOffsets, {10, 20}), ODML_STATUS_SUCCESS);
  EXPECT_EQ(create_with_offsets(d, 0, {10, 20}, &message), kInvalid);
  EXPECT_NE(message.find("without ODML_EXTENSION_COORDINATE_OFFSETS"), std::string::npos) << message;
  EXPECT_EQ(create_with_offsets(d, kOffsets, {}, &message), kInvalid);
  EXPECT_NE(message.find("needs one coordinate offset per coordinate column"), std::string::npos) << message;
  EXPECT_TRUE(
      create_fails(d, kInvalid, {"needs one coordinate offset per coordinate column"}, DML_FEATURE_LEVEL(0), kOffsets));
  EXPECT_EQ(create_with_offsets(d, kOffsets, std::vector<uint64_t>(9, 0), &message), kInvalid);
  EXPECT_EQ(create_with_offsets(d, kOffsets, {1, 2, 3}, &message), kInvalid);
  EXPECT_NE(message.find("3 coordinate offsets were given for 2 coordinate columns"), std::string::npos) << message;
  // The largest coordinate of each column must stay within the coordinates' type.
  EXPECT_EQ(create_with_offsets(d, kOffsets, {0, 0xFFFFFFFFull - 5}), ODML_STATUS_SUCCESS);
  EXPECT_EQ(create_with_offsets(d, kOffsets, {0, 0xFFFFFFFFull - 4}, &message), kInvalid);
  EXPECT_NE(message.find("coordinate offset 1 is 4294967291"), std::string::npos) << message;
  const OpDesc wide = nonzero(kF32, {4, 6}, kI64, {24, 2});
  EXPECT_EQ(create_with_offsets(wide, kOffsets | kWide, {uint64_t{INT64_MAX} - 3, 0}), ODML_STATUS_SUCCESS);
  EXPECT_EQ(create_with_offsets(wide, kOffsets | kWide, {uint64_t{INT64_MAX} - 2, 0}), kInvalid);
  EXPECT_EQ(create_with_offsets(nonzero(kF32, {4, 6}, kU64, {24, 2}), kOffsets | kWide, {UINT64_MAX - 3, 0}),
            ODML_STATUS_SUCCESS);
  // A null array with a count is refused, not read.
  odml_operator op = nullptr;
  const odml_operator_options null_offsets{kOffsets, 2, nullptr, 0, nullptr};
  EXPECT_EQ(odml_operator_create_with_options(cpu_device().get(), &d.get(), DML_FEATURE_LEVEL(0), &null_offsets, &op),
            kInvalid);
  // JOIN and SPLIT write no coordinates.
  const OpDesc join = OpDesc::join({spec(kU8, {2, 3}), spec(kU8, {2, 3})}, spec(kU8, {4, 3}), 0);
  EXPECT_EQ(create_with_offsets(join, kOffsets, {1}, &message), kInvalid);
  EXPECT_NE(message.find("applies to NONZERO_COORDINATES only"), std::string::npos) << message;
}

// The limit on an offset comes from the largest coordinate of its own column: with the leading
// dimensions of size 1 that N = 2 leaves out of {1, 1, 4, 6}, column 0 runs to 3 and column 1 to 5.
TEST(Extension, CoordinateOffsetLimitFollowsEachColumnsDimension) {
  const OpDesc d = nonzero(kF32, {1, 1, 4, 6}, DML_TENSOR_DATA_TYPE_UINT32, {24, 2});
  std::string message;
  EXPECT_EQ(create_with_offsets(d, kOffsets, {0xFFFFFFFFull - 3, 0xFFFFFFFFull - 5}, &message), ODML_STATUS_SUCCESS)
      << message;
  EXPECT_EQ(create_with_offsets(d, kOffsets, {0xFFFFFFFFull - 2, 0}, &message), kInvalid);
  EXPECT_NE(message.find("coordinate offset 0 is 4294967293; with coordinates up to 3 in that column"),
            std::string::npos)
      << message;
  EXPECT_EQ(create_with_offsets(d, kOffsets, {0, 0xFFFFFFFFull - 4}, &message), kInvalid);
  EXPECT_NE(message.find("coordinate offset 1 is 4294967291; with coordinates up to 5 in that column"),
            std::string::npos)
      << message;
}

TEST(DeviceExtension, NonzeroCoordinateOffsets) {
  NonzeroTester().sizes({5, 7}).coordinate_offsets({100, 3}).run();
  NonzeroTester().type(kU8).sizes({6}).density(1.0).coordinate_offsets({1u << 31}).run();
  NonzeroTester().sizes({1, 1, 4, 6}).n(2).coordinate_offsets({7, 0}).run();
  // Vector rows (N = 2, 4, 8) and column-major coordinates.
  NonzeroTester().sizes({2, 3, 4, 5}).density(0.9).coordinate_offsets({1, 2, 3, 4}).run();
  NonzeroTester().sizes({2, 2, 2, 2, 2, 2, 2, 3}).density(0.9).coordinate_offsets({9, 8, 7, 6, 5, 4, 3, 2}).run();
  NonzeroTester().sizes({3, 4}).coordinates_strides({1, 12}).coordinate_offsets({40, 50}).run();
  NonzeroTester().extensions(kWide).index_type(kI64).sizes({300, 70}).coordinate_offsets({1000, 0}).run();
}

// Offsets past 32 bits, which only 64-bit coordinates hold: read back as int64 and compared here.
TEST(DeviceExtension, NonzeroCoordinateOffsetsPast32Bits) {
  const std::vector<float> values = {0, 1, 0, 2, 3, 0, 0, 4, 5, 0, 6, 0};  // [3, 4]
  const OpDesc d = nonzero(kF32, {3, 4}, kI64, {12, 2});
  RunOptions options;
  options.extensions = kWide | kOffsets;
  options.coordinate_offsets = {uint64_t{1} << 40, 7};
  const RunOutputs out = run_operator(d, {to_bytes(values)}, options);
  ASSERT_FALSE(out.empty());
  int64_t count = 0;
  std::memcpy(&count, out[0][0].data(), 8);
  ASSERT_EQ(count, 6);
  std::vector<int64_t> rows(12);
  std::memcpy(rows.data(), out[0][1].data(), 12 * 8);
  std::vector<int64_t> want;
  for (int64_t i = 0; i < 12; ++i)
    if (values[i] != 0) want.insert(want.end(), {(int64_t{1} << 40) + i / 4, 7 + i % 4});
  rows.resize(want.size());
  EXPECT_EQ(rows, want);
}

// ---- Fill rows ----

constexpr uint32_t kFill = ODML_EXTENSION_FILL_ROWS;

odml_status create_with_fill(const OpDesc& d, uint32_t extensions, std::vector<uint64_t> fill,
                             std::string* message = nullptr) {
  return create_with(
      d, {extensions, 0, nullptr, static_cast<uint32_t>(fill.size()), fill.empty() ? nullptr : fill.data()}, message);
}

TEST(Extension, FillValuesAreCheckedAtCreation) {
  const OpDesc d = nonzero(kF32, {4, 6}, DML_TENSOR_DATA_TYPE_UINT32, {24, 2});
  std::string message;
  EXPECT_EQ(create_with_fill(d, kFill, {0xFFFFFFFFull, 0}), ODML_STATUS_SUCCESS);
  EXPECT_EQ(create_with_fill(d, 0, {1, 2}, &message), kInvalid);
  EXPECT_NE(message.find("fill values were given without ODML_EXTENSION_FILL_ROWS"), std::string::npos) << message;
  EXPECT_EQ(create_with_fill(d, kFill, {}, &message), kInvalid);
  EXPECT_NE(message.find("needs one fill value per coordinate column"), std::string::npos) << message;
  EXPECT_EQ(create_with_fill(d, kFill, std::vector<uint64_t>(9, 0)), kInvalid);
  EXPECT_EQ(create_with_fill(d, kFill, {1}, &message), kInvalid);
  EXPECT_NE(message.find("1 fill values were given for 2 coordinate columns"), std::string::npos) << message;
  // UINT32 coordinates hold 32 bits; 64-bit ones any pattern (-1 as INT64).
  EXPECT_EQ(create_with_fill(d, kFill, {0, 0x100000000ull}, &message), kInvalid);
  EXPECT_NE(message.find("fill value 1 is 4294967296, more than a UINT32 coordinate holds"), std::string::npos)
      << message;
  EXPECT_EQ(create_with_fill(nonzero(kF32, {4, 6}, kI64, {24, 2}), kFill | kWide, {UINT64_MAX, UINT64_MAX}),
            ODML_STATUS_SUCCESS);
  odml_operator op = nullptr;
  const odml_operator_options null_fill{kFill, 0, nullptr, 2, nullptr};
  EXPECT_EQ(odml_operator_create_with_options(cpu_device().get(), &d.get(), DML_FEATURE_LEVEL(0), &null_fill, &op),
            kInvalid);
  const OpDesc split = OpDesc::split(spec(kU8, {4, 3}), {spec(kU8, {2, 3}), spec(kU8, {2, 3})}, 0);
  EXPECT_EQ(create_with_fill(split, kFill, {1}, &message), kInvalid);
  EXPECT_NE(message.find("ODML_EXTENSION_FILL_ROWS applies to NONZERO_COORDINATES only"), std::string::npos) << message;
}

// Every row past the count holds the fill, on every layout the kernels specialise: densities from
// none to all (no fill rows, all fill rows), vector rows (N = 2, 4, 8), column-major and padded
// coordinates, strided and narrow inputs, 64-bit coordinates, offsets beside the fill, and inputs
// spanning many tiles and blocks, each block filling its own share: on an H100 (132 SMs), blocks of
// one tile (2^20 float32 elements), of two (2^22) and of four (9 million).
TEST(DeviceExtension, NonzeroFillRows) {
  for (double density : {0.0, 0.001, 0.5, 1.0}) {
    NonzeroTester().sizes({5, 7}).density(density).fill_values({7, 0xFFFFFFFFull}).run();
    NonzeroTester().type(kU8).sizes({300, 1001}).density(density).fill_values({1, 2}).run();
  }
  NonzeroTester().sizes({6000}).density(0.3).fill_values({0xFFFFFFFFull}).run();
  NonzeroTester().sizes({2, 3, 4, 5}).density(0.4).fill_values({1, 2, 3, 4}).run();
  NonzeroTester().sizes({2, 2, 2, 2, 2, 2, 2, 3}).density(0.4).fill_values({9, 8, 7, 6, 5, 4, 3, 2}).run();
  NonzeroTester().sizes({3, 4}).coordinates_strides({1, 12}).fill_values({40, 50}).run();
  NonzeroTester().sizes({3, 4}).coordinates_strides({5, 2}).density(0.2).fill_values({3, 4}).run();
  NonzeroTester().sizes({64, 33}).strides({40, 1}).type(kU16).fill_values({5, 6}).run();
  NonzeroTester().sizes({1, 1, 40, 60}).n(2).fill_values({11, 12}).run();
  NonzeroTester().sizes({5, 7}).coordinate_offsets({100, 3}).fill_values({0, 0}).run();
  NonzeroTester().extensions(kWide).index_type(kI64).sizes({300, 70}).fill_values({UINT64_MAX, 1ull << 40}).run();
  NonzeroTester().extensions(kWide).index_type(kU64).sizes({1 << 20}).density(0.25).fill_values({123}).run();
  NonzeroTester().sizes({1 << 22}).density(0.01).fill_values({0xFFFFFFFFull}).run();
  NonzeroTester().sizes({3000, 3001}).density(0.5).fill_values({5, 6}).run();
  // Dense rows go out as 16-byte vectors between scalar ends: every column count, both widths,
  // and coordinates that start off a 16-byte boundary.
  for (uint32_t n = 1; n <= 8; ++n) {
    Shape sizes(n, 3);
    sizes.back() = 700;
    std::vector<uint64_t> fill(n);
    for (uint32_t j = 0; j < n; ++j) fill[j] = 1000 + j;
    NonzeroTester().sizes(sizes).density(0.3).fill_values(fill).run();
    NonzeroTester().sizes(sizes).density(0.3).alignment(4).fill_values(fill).run();
    NonzeroTester().extensions(kWide).index_type(kU64).sizes(sizes).density(0.7).alignment(8).fill_values(fill).run();
  }
}

}  // namespace
}  // namespace odml_test
