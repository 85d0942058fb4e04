// DeviceJoin: JOIN on the test device, compared bit for bit with the oracle (docs/contract.md
// section 3.1).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

#include "support/data_types.h"
#include "support/guarded_buffer.h"
#include "support/oracle.h"
#include "support/random_cases.h"
#include "support/runner.h"
#include "support/testers.h"

namespace odml_test {
namespace {

constexpr auto kF32 = DML_TENSOR_DATA_TYPE_FLOAT32;

// docs/contract.md section 3.1, DirectML's example: {1,1,2,3} and {1,1,2,4} along Axis 3.
TEST(DeviceJoin, SpecExampleTwoInputsAxis3) {
  JoinTester()
      .axis(3)
      .inputs({{1, 1, 2, 3}, {1, 1, 2, 4}})
      .input_values<float>(0, {1, 2, 3, 4, 5, 6})
      .input_values<float>(1, {7, 8, 9, 10, 11, 12, 13, 14})
      .expect_output<float>({1, 2, 3, 7, 8, 9, 10, 4, 5, 6, 11, 12, 13, 14})
      .run();
}

JoinTester three_two_by_two(uint32_t axis) {
  std::vector<Shape> inputs(3, Shape{1, 1, 2, 2});
  return JoinTester()
      .axis(axis)
      .inputs(inputs)
      .input_values<float>(0, {1, 2, 3, 4})
      .input_values<float>(1, {5, 6, 7, 8})
      .input_values<float>(2, {9, 10, 11, 12});
}

TEST(DeviceJoin, SpecExampleThreeInputsAxis1) {
  three_two_by_two(1).expect_output<float>({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}).run();
}

TEST(DeviceJoin, SpecExampleThreeInputsAxis2) {
  three_two_by_two(2).expect_output<float>({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}).run();
}

TEST(DeviceJoin, SpecExampleThreeInputsAxis3) {
  three_two_by_two(3).expect_output<float>({1, 2, 5, 6, 9, 10, 3, 4, 7, 8, 11, 12}).run();
}

TEST(DeviceJoin, EveryDataType) {
  for (DML_TENSOR_DATA_TYPE type : kElevenTypes) {
    SCOPED_TRACE(type_name(type));
    JoinTester().type(type).axis(1).inputs({{2, 3}, {2, 5}}).run();
    JoinTester().type(type).axis(0).inputs({{3, 4, 5}, {1, 4, 5}, {2, 4, 5}}).run();
  }
}

TEST(DeviceJoin, EveryRankAndAxis) {
  for (uint32_t rank = 1; rank <= 8; ++rank)
    for (uint32_t axis = 0; axis < rank; ++axis) {
      Shape a(rank);
      for (uint32_t d = 0; d < rank; ++d) a[d] = 1 + d % 3;  // at most 72 elements at rank 8
      Shape b = a;
      a[axis] = 2;
      b[axis] = 3;
      JoinTester().type(DML_TENSOR_DATA_TYPE_UINT16).axis(axis).inputs({a, b}).run();
    }
}

TEST(DeviceJoin, EveryFeatureLevelThatHasJoin) {
  for (DML_FEATURE_LEVEL level : {DML_FEATURE_LEVEL_1_0, DML_FEATURE_LEVEL_2_1, DML_FEATURE_LEVEL_3_0,
                                  DML_FEATURE_LEVEL_3_1, DML_FEATURE_LEVEL_4_1, DML_FEATURE_LEVEL_6_4})
    JoinTester().feature_level(level).axis(2).inputs({{1, 2, 3, 4}, {1, 2, 1, 4}}).run();
}

TEST(DeviceJoin, SingleInputIsACopy) {
  JoinTester().axis(0).inputs({{3, 7}}).run();
  JoinTester().type(DML_TENSOR_DATA_TYPE_INT8).axis(1).inputs({{5, 3}}).input_strides({{1, 5}}).run();
}

TEST(DeviceJoin, PaddedStrides) {
  // Row pitch larger than the row, and gaps between elements.
  JoinTester().axis(1).inputs({{3, 2}, {3, 4}}).input_strides({{5, 1}, {9, 2}}).output_strides({8, 1}).run();
  JoinTester()
      .type(DML_TENSOR_DATA_TYPE_FLOAT16)
      .axis(0)
      .inputs({{2, 3, 4}, {1, 3, 4}})
      .input_strides({{20, 5, 1}, {}})
      .output_strides({13, 4, 1})
      .run();
}

TEST(DeviceJoin, PermutedStrides) {
  // Transposed inputs and a transposed output.
  JoinTester().axis(0).inputs({{2, 3}, {4, 3}}).input_strides({{1, 2}, {1, 4}}).run();
  JoinTester().axis(1).inputs({{4, 3}, {4, 5}}).output_strides({1, 4}).run();
  JoinTester()
      .type(DML_TENSOR_DATA_TYPE_INT64)
      .axis(2)
      .inputs({{2, 3, 2}, {2, 3, 3}})
      .input_strides({{1, 4, 2}, {18, 1, 3}})
      .output_strides({3, 1, 6})
      .run();
}

TEST(DeviceJoin, BroadcastInputs) {
  JoinTester().axis(1).inputs({{4, 3}, {4, 2}}).input_strides({{0, 1}, {1, 0}}).run();
  JoinTester().type(DML_TENSOR_DATA_TYPE_UINT8).axis(0).inputs({{2, 5}, {3, 5}}).input_strides({{0, 0}, {}}).run();
}

TEST(DeviceJoin, StridedOutput) {
  JoinTester().axis(1).inputs({{2, 3}, {2, 5}}).output_strides({16, 2}).run();
  JoinTester().type(DML_TENSOR_DATA_TYPE_FLOAT64).axis(0).inputs({{1, 2}, {2, 2}}).output_strides({3, 1}).run();
}

TEST(DeviceJoin, TotalTensorSizeLargerThanNeeded) {
  JoinTester().extra_bytes(36).axis(1).inputs({{2, 3}, {2, 5}}).run();
  JoinTester().type(DML_TENSOR_DATA_TYPE_INT8).extra_bytes(1000).axis(0).inputs({{1}, {2}}).run();
}

TEST(DeviceJoin, GuaranteedBaseOffsetAlignmentBindsBelowSixteen) {
  // Every power of two from the element size to 8: buffers at an address that is a multiple of it
  // and not of 16, with inner rows long enough that wide vector copies would be tempting.
  for (DML_TENSOR_DATA_TYPE type : kElevenTypes)
    for (uint32_t a = element_bytes(type); a <= 8; a *= 2) {
      SCOPED_TRACE(type_name(type) + " alignment " + std::to_string(a));
      JoinTester().type(type).alignment(a).axis(0).inputs({{2, 32}, {3, 32}}).run();
      JoinTester().type(type).alignment(a).axis(1).inputs({{2, 16}, {2, 48}}).run();
    }
}

TEST(DeviceJoin, OwnedByDmlInputs) {
  JoinTester().owned_by_dml().axis(1).inputs({{2, 3}, {2, 5}}).executions(2).run();
  JoinTester()
      .owned_by_dml()
      .type(DML_TENSOR_DATA_TYPE_FLOAT16)
      .axis(0)
      .inputs({{2, 3}, {1, 3}})
      .input_strides({{1, 2}, {0, 1}})
      .run();
}

// Initializing again with another persistent region prepares that region (opendml.h): each
// persistent region keeps the OWNED_BY_DML input it was initialized with.
TEST(DeviceJoin, EachPersistentRegionKeepsItsOwnedInput) {
  const opendml::Device& device = test_device();
  TensorSpec a = spec(kF32, {2, 3});
  a.flags = DML_TENSOR_FLAG_OWNED_BY_DML;
  const TensorSpec b = spec(kF32, {2, 5}), out = spec(kF32, {2, 8});
  const OpDesc desc = OpDesc::join({a, b}, out, 1);
  opendml::CompiledOperator op = opendml::Operator(device, desc.get()).compile();
  const odml_binding_properties props = op.binding_properties();
  ASSERT_EQ(props.temporary_size_in_bytes, 0u) << "this test binds no temporary region";
  Rng rng(next_seed());
  const Bytes x = random_bytes(rng, 24), y = random_bytes(rng, 24), b_data = random_bytes(rng, 40);
  GuardedBuffer in_a(device, a), in_b(device, b), first(device, props.persistent_size_in_bytes, 256),
      second(device, props.persistent_size_in_bytes, 256);
  in_b.upload(b_data);
  for (const auto& [data, region] : {std::pair{&x, &first}, std::pair{&y, &second}}) {
    in_a.upload(*data);
    const odml_buffer_binding owned[2] = {in_a.binding(), {}};
    op.initialize({owned, 2, nullptr, 0, {}, region->binding()});
    device.synchronize();
  }
  in_a.poison();
  for (const auto& [data, region] : {std::pair{&x, &first}, std::pair{&y, &second}}) {
    GuardedBuffer result(device, out);
    op.execute({{}, in_b.binding()}, {result.binding()}, {}, region->binding());
    device.synchronize();
    EXPECT_TRUE(elements_equal(out, result.download(), join_oracle({a, b}, {*data, b_data}, 1), "OutputTensor"));
    EXPECT_TRUE(result.guards_intact("OutputTensor"));
  }
}

TEST(DeviceJoin, ConcurrentExecutionFromSeveralThreads) {
  JoinTester().threads(4).executions(3).axis(1).inputs({{8, 3}, {8, 50}, {8, 1}}).run();
  JoinTester().threads(4).executions(2).owned_by_dml().axis(0).inputs({{10, 8}, {6, 8}}).run();
}

TEST(DeviceJoin, ThousandSmallInputs) {
  JoinTester().type(DML_TENSOR_DATA_TYPE_INT16).axis(1).inputs(std::vector<Shape>(1000, {2, 1})).run();
  JoinTester().axis(0).inputs(std::vector<Shape>(1000, {1, 3})).output_strides({4, 1}).run();
}

// The GPU's ways of finding a block's piece of work: up to 8 inputs in the launch's parameters, in
// chunks of one vector per thread where they would not give every SM a block, else of four (inputs
// that are each one contiguous run of one width, as those of 5 floats here, take cuda.copy's Runs:
// AndSplitContiguousRunsOfEveryWidth); more inputs in the persistent region, through a block ->
// input table unless every input fits one block.
TEST(DeviceJoin, FewAndManyInputsOfEverySize) {
  for (uint32_t count : {2u, 8u, 9u, 40u}) {
    for (uint32_t columns : {5u, 4096u, 4100u, 40000u}) {
      SCOPED_TRACE(::testing::Message() << count << " inputs of " << columns << " floats");
      std::vector<Shape> inputs(count, Shape{1, columns});
      inputs[count / 2][1] = columns / 2 + 1;  // one input of another size
      JoinTester().axis(1).inputs(inputs).run();
      SplitTester().axis(1).outputs(inputs).run();
    }
  }
  // Rows of 1200 bytes, wider than cuda.slices takes, from 2 to 8 pieces: on the GPU, cuda.copy's
  // items in the kernel parameters, from two of them to as many as the parameters hold.
  for (uint32_t count = 2; count <= 8; ++count) {
    SCOPED_TRACE(::testing::Message() << count << " pieces of 7 rows of 300 floats");
    const std::vector<Shape> rows(count, Shape{7, 300});
    JoinTester().axis(1).inputs(rows).run();
    SplitTester().axis(1).outputs(rows).run();
  }
}

// Up to 8 pieces that are each one contiguous run (a JOIN or SPLIT along the outermost axis: on
// the GPU, cuda.copy's Runs, a block's piece found by comparisons, one vector a thread): vectors of
// every width the bound addresses allow (alignment 1 to 16 bytes). With 16-byte vectors the pieces
// are of 1, 255, 256 and 257 vectors (a block's and one either side), and of 2500; narrower
// vectors make more of them from the same bytes, up to 40000 one-byte vectors (157 blocks).
// Pieces whose vectors differ in width take the general kernel, with the same results.
TEST(DeviceJoin, AndSplitContiguousRunsOfEveryWidth) {
  const uint32_t lengths[] = {4096, 16, 4080, 4112, 40000, 48, 8192, 1024};  // bytes, multiples of 16
  for (uint32_t alignment : {1u, 2u, 4u, 8u, 16u}) {
    for (size_t count : {1u, 2u, 5u, 8u}) {
      SCOPED_TRACE(::testing::Message() << count << " pieces, alignment " << alignment);
      std::vector<Shape> pieces;
      for (size_t i = 0; i < count; ++i) pieces.push_back({lengths[i]});
      JoinTester().type(DML_TENSOR_DATA_TYPE_UINT8).alignment(alignment).axis(0).inputs(pieces).run();
      SplitTester().type(DML_TENSOR_DATA_TYPE_UINT8).alignment(alignment).axis(0).outputs(pieces).run();
    }
  }
  // Byte runs of lengths that no wider vector divides, and rows of a larger type.
  JoinTester().type(DML_TENSOR_DATA_TYPE_UINT8).axis(0).inputs({{1}, {255}, {257}, {4097}, {3}}).run();
  SplitTester().type(DML_TENSOR_DATA_TYPE_UINT8).axis(0).outputs({{1}, {255}, {257}, {4097}, {3}}).run();
  JoinTester().type(DML_TENSOR_DATA_TYPE_UINT64).axis(0).inputs({{3, 1000}, {1, 1000}, {70, 1000}}).run();
  SplitTester().type(DML_TENSOR_DATA_TYPE_UINT64).axis(0).outputs({{3, 1000}, {1, 1000}, {70, 1000}}).run();
  // 16-byte vectors for the first piece, 8-byte ones for the two after it (at byte 4096 and 4104).
  JoinTester().type(DML_TENSOR_DATA_TYPE_UINT8).axis(0).inputs({{4096}, {8}, {4096}}).run();
  SplitTester().type(DML_TENSOR_DATA_TYPE_UINT8).axis(0).outputs({{4096}, {8}, {4096}}).run();
}

// Up to 8 pieces whose rows are each one contiguous run, joined along an inner axis (attention's
// Q, K and V; on the GPU, cuda.copy's rows of runs: Runs with a row length and row steps per piece):
// vectors of every width the bound addresses allow, rows of 528 to 8208 bytes (wider than cuda.slices
// takes), so that rows of 16-byte vectors end inside a block's 256 vectors, on its last and past it.
// Then rows beside contiguous runs (the padded input of a JOIN along the outer axis: each run taken as
// one row), padded rows on either side, and pieces whose vectors differ in width (one padded to
// 8-byte rows beside 16-byte ones: the general kernel, same results).
TEST(DeviceJoin, AndSplitRowsOfContiguousRunsOfEveryWidth) {
  const uint32_t lengths[] = {4096, 528, 4080, 4112, 8208, 544, 8192, 1024};  // bytes a row, multiples of 16
  for (uint32_t alignment : {1u, 2u, 4u, 8u, 16u}) {
    for (size_t count : {2u, 3u, 5u, 8u}) {
      SCOPED_TRACE(::testing::Message() << count << " pieces, alignment " << alignment);
      std::vector<Shape> pieces;
      for (size_t i = 0; i < count; ++i) pieces.push_back({5, lengths[i]});
      JoinTester().type(DML_TENSOR_DATA_TYPE_UINT8).alignment(alignment).axis(1).inputs(pieces).run();
      SplitTester().type(DML_TENSOR_DATA_TYPE_UINT8).alignment(alignment).axis(1).outputs(pieces).run();
    }
  }
  const std::vector<Shape> qkv(3, Shape{32, 4096});
  JoinTester().type(DML_TENSOR_DATA_TYPE_FLOAT16).axis(1).inputs(qkv).run();
  SplitTester().type(DML_TENSOR_DATA_TYPE_FLOAT16).axis(1).outputs(qkv).run();
  JoinTester().axis(0).inputs({{3, 300}, {5, 300}, {2, 300}}).input_strides({{}, {304, 1}, {}}).run();
  SplitTester().axis(0).outputs({{3, 300}, {5, 300}, {2, 300}}).output_strides({{}, {304, 1}, {}}).run();
  JoinTester().axis(1).inputs({{7, 300}, {7, 200}}).output_strides({600, 1}).run();
  SplitTester().axis(1).outputs({{7, 300}, {7, 200}}).input_strides({520, 1}).run();
  JoinTester().axis(0).inputs({{3, 300}, {5, 300}, {2, 300}}).input_strides({{}, {310, 1}, {}}).run();
  SplitTester().axis(0).outputs({{3, 300}, {5, 300}, {2, 300}}).output_strides({{}, {310, 1}, {}}).run();
}

// Pieces of one shape whose rows are each one contiguous run (on the GPU, cuda.copy's rows of runs
// of one shape: each thread moves a vector of every piece): 2 to 8 pieces, every vector width, row
// and vector counts that end inside a block's 256 vectors and past it; then pieces that differ only
// in their row count or their padding, which must not be taken for one shape.
TEST(DeviceJoin, AndSplitRowsOfOneShape) {
  for (uint32_t alignment : {1u, 2u, 4u, 8u, 16u}) {
    for (size_t count : {2u, 3u, 4u, 7u, 8u}) {
      for (Shape piece : {Shape{5, 528}, Shape{33, 4096}, Shape{3, 8208}}) {
        SCOPED_TRACE(::testing::Message()
                     << count << " pieces of " << piece[0] << " x " << piece[1] << ", alignment " << alignment);
        const std::vector<Shape> pieces(count, piece);
        JoinTester().type(DML_TENSOR_DATA_TYPE_UINT8).alignment(alignment).axis(1).inputs(pieces).run();
        SplitTester().type(DML_TENSOR_DATA_TYPE_UINT8).alignment(alignment).axis(1).outputs(pieces).run();
      }
    }
  }
  JoinTester().type(DML_TENSOR_DATA_TYPE_FLOAT16).axis(1).inputs({{256, 4096}, {256, 4096}, {256, 4096}}).run();
  SplitTester().type(DML_TENSOR_DATA_TYPE_FLOAT16).axis(1).outputs({{256, 4096}, {256, 4096}, {256, 4096}}).run();
  JoinTester().axis(0).inputs({{3, 300}, {3, 300}}).input_strides({{304, 1}, {304, 1}}).run();
  JoinTester().axis(0).inputs({{3, 300}, {3, 300}}).input_strides({{304, 1}, {308, 1}}).run();
  SplitTester().axis(0).outputs({{3, 300}, {4, 300}}).output_strides({{304, 1}, {304, 1}}).run();
}

// Many pieces of one shape: the GPU works out each block's piece from its number (cuda.copy's
// uniform items), several pieces a block, one block or several per piece, rows of one or many
// elements; a piece of another layout (transposed) or size takes the general path.
TEST(DeviceJoin, ManyPiecesOfOneShape) {
  for (uint32_t count : {9u, 40u, 1000u}) {
    for (uint32_t columns : {5u, 1024u, 4100u, 40000u}) {
      if (uint64_t{count} * columns > (uint64_t{1} << 23)) continue;
      SCOPED_TRACE(::testing::Message() << count << " pieces of " << columns << " floats");
      const std::vector<Shape> pieces(count, Shape{1, columns});
      JoinTester().axis(1).inputs(pieces).run();
      SplitTester().axis(1).outputs(pieces).run();
      JoinTester().axis(0).inputs(pieces).run();
      SplitTester().axis(0).outputs(pieces).run();
    }
  }
  // Pieces of 3 rows of 40 floats, several a block, the last block's share cut short.
  for (uint32_t count : {1000u, 1001u})
    for (uint32_t axis : {0u, 1u}) {
      const std::vector<Shape> small(count, Shape{3, 40});
      JoinTester().axis(axis).inputs(small).run();
      SplitTester().axis(axis).outputs(small).run();
    }
  // Pieces that are each one contiguous run of vectors of 1, 2, 4, 8 and 16 bytes, 9 and 1001 of
  // them (cuda.copy's uniform runs; on the GPU, pieces wider than cuda.slices takes, 128 bytes and
  // more, or 512 for a JOIN of up to 16 pieces, take them in the default run, and the smaller ones
  // where cuda.copy is forced).
  for (uint32_t bytes : {3u, 6u, 12u, 24u, 48u, 136u, 513u, 514u, 516u, 520u, 528u})
    for (uint32_t count : {9u, 1001u}) {
      SCOPED_TRACE(::testing::Message() << count << " pieces of " << bytes << " bytes");
      const std::vector<Shape> runs(count, Shape{1, bytes});
      JoinTester().type(DML_TENSOR_DATA_TYPE_UINT8).axis(0).inputs(runs).run();
      SplitTester().type(DML_TENSOR_DATA_TYPE_UINT8).axis(0).outputs(runs).run();
    }
  const std::vector<Shape> rows(12, Shape{37, 100});
  JoinTester().axis(1).inputs(rows).run();
  SplitTester().axis(1).outputs(rows).run();
  JoinTester().axis(0).inputs(rows).output_strides({1, 37 * 12}).run();  // a transposed output
  std::vector<Shape> one_other(12, Shape{37, 37});
  std::vector<Shape> transposed(12);
  transposed[7] = {1, 37};
  JoinTester().axis(1).inputs(one_other).input_strides(transposed).run();
}

// Outputs over 1 MiB make the CPU backend split the work over threads.
TEST(DeviceJoin, LargeEnoughForEveryThread) {
  JoinTester().axis(1).inputs({{256, 700}, {256, 1100}}).run();                                 // 1.8 MiB
  JoinTester().axis(0).inputs({{300, 1024}, {300, 1024}}).input_strides({{1, 300}, {}}).run();  // transposed
  JoinTester().type(DML_TENSOR_DATA_TYPE_UINT8).axis(0).inputs({{1, 1 << 20}, {1, 1 << 20}}).run();
  JoinTester().axis(1).inputs({{512, 300}, {512, 400}}).input_strides({{0, 1}, {1, 0}}).run();  // broadcast
}

// Rows of every length the CPU copies with a move of fixed size (1 to 256 bytes), with 16-byte
// moves and overlapping ends (3 to 511 bytes), and with memcpy (512 bytes and more); bytes at an
// alignment of 1, so that no row is widened.
TEST(DeviceJoin, RowsOfEveryLength) {
  for (uint32_t bytes : {1u,  2u,  3u,  4u,   5u,   7u,   8u,   9u,   15u,  16u,  17u, 31u,
                         32u, 33u, 64u, 100u, 128u, 255u, 256u, 257u, 511u, 512u, 700u}) {
    SCOPED_TRACE(std::to_string(bytes) + "-byte rows");
    JoinTester().type(DML_TENSOR_DATA_TYPE_UINT8).alignment(1).axis(1).inputs({{37, bytes}, {37, 3}}).run();
    JoinTester().type(DML_TENSOR_DATA_TYPE_UINT8).axis(1).inputs({{37, 2}, {37, bytes}}).run();
  }
}

// Two to five and eight pieces of one vector per row each (of 1, 2, 4, 8 and 16 bytes), joined into
// and split from a packed and a padded tensor: the CPU's row by row copy (up to four inputs) with
// chunks that start inside the rows' range, and cuda.slices' runs of whole rows (2, 4 and 8 pieces of
// one unit).
TEST(DeviceJoin, AndSplitNarrowSlicesOfEveryWidth) {
  for (DML_TENSOR_DATA_TYPE type : {DML_TENSOR_DATA_TYPE_UINT8, DML_TENSOR_DATA_TYPE_UINT16,
                                    DML_TENSOR_DATA_TYPE_UINT32, DML_TENSOR_DATA_TYPE_UINT64})
    for (uint32_t elements : {1u, 2u})
      for (uint32_t pieces : {2u, 3u, 4u, 5u, 8u}) {
        SCOPED_TRACE(type_name(type) + " x " + std::to_string(elements) + ", " + std::to_string(pieces) + " pieces");
        const std::vector<Shape> pieces_shapes(pieces, Shape{40000, elements});
        const Shape padded{pieces * elements + 3, 1};
        JoinTester().type(type).axis(1).inputs(pieces_shapes).run();
        JoinTester().type(type).axis(1).inputs(pieces_shapes).output_strides(padded).run();
        SplitTester().type(type).axis(1).outputs(pieces_shapes).run();
        SplitTester().type(type).axis(1).outputs(pieces_shapes).input_strides(padded).run();
      }
}

// JOIN of packed 2-D pieces along `axis` (0 or 1), then SPLIT of the result back into them, each
// checked row by row (rows_joined): for sizes where the element-wise oracle is too slow.
void join_and_split_rows(DML_TENSOR_DATA_TYPE type, uint32_t alignment, uint32_t axis,
                         const std::vector<Shape>& shapes) {
  std::vector<TensorSpec> pieces;
  std::vector<uint64_t> row_bytes;
  std::vector<Bytes> data;
  Rng rng(next_seed());
  for (const Shape& shape : shapes) {
    pieces.push_back(spec(type, shape));
    pieces.back().alignment = alignment;
    row_bytes.push_back(uint64_t{element_bytes(type)} * (axis == 0 ? shape[0] * shape[1] : shape[1]));
    data.emplace_back(pieces.back().total_bytes());  // random, 8 bytes per draw
    for (uint64_t at = 0; at < data.back().size(); at += 8) {
      const uint64_t bits = rng();
      std::memcpy(data.back().data() + at, &bits, std::min<uint64_t>(8, data.back().size() - at));
    }
  }
  TensorSpec whole = spec(type, concat_sizes(shapes, axis));
  whole.alignment = alignment;
  const uint64_t rows = axis == 0 ? 1 : shapes[0][0];
  const OpDesc join = OpDesc::join(pieces, whole, axis);
  SCOPED_TRACE(join.to_string());
  const RunOutputs joined = run_operator(join, data);
  ASSERT_FALSE(joined.empty());
  EXPECT_TRUE(rows_joined(data, row_bytes, rows, joined[0][0])) << "JOIN";
  const RunOutputs split = run_operator(OpDesc::split(whole, pieces, axis), {joined[0][0]});
  ASSERT_FALSE(split.empty());
  EXPECT_TRUE(rows_joined(split[0], row_bytes, rows, joined[0][0])) << "SPLIT";
}

// The layouts that the CPU's non-temporal stores take apart, with 16-byte rows in `rows`: narrow
// slices row by row in 16-, 8- and 4-byte vectors, three pieces of narrow slices, 256-byte slices,
// 64-byte slices at an alignment of 4 (4-byte moves), and pieces end to end in 16-, 8- and 4-byte
// vectors (by their alignment).
void join_and_split_stream_layouts(uint32_t rows) {
  constexpr auto kU8 = DML_TENSOR_DATA_TYPE_UINT8;
  join_and_split_rows(kU8, 16, 1, {{rows / 2, 16}, {rows / 2, 16}});
  join_and_split_rows(kU8, 16, 1, {{rows, 8}, {rows, 8}});
  join_and_split_rows(kU8, 16, 1, {{2 * rows, 4}, {2 * rows, 4}});
  join_and_split_rows(kU8, 16, 1, {{rows / 3, 16}, {rows / 3, 16}, {rows / 3, 16}});
  join_and_split_rows(kU8, 16, 1, {{rows / 32, 256}, {rows / 32, 256}});
  join_and_split_rows(kU8, 4, 1, {{rows / 8, 64}, {rows / 8, 64}});
  join_and_split_rows(kU8, 16, 0, {{rows + 2, 8}, {rows - 2, 8}});
  join_and_split_rows(kU8, 8, 0, {{rows, 16}, {7, 16}});
  join_and_split_rows(kU8, 4, 0, {{rows, 16}, {5, 16}});
}

// Tensors larger than the last-level cache, which the CPU writes with non-temporal stores (64 MiB
// each, and not a whole number of tiles).
TEST(DeviceJoin, AndSplitLargerThanTheLastLevelCache) { join_and_split_stream_layouts((1u << 22) + 4); }

// The same non-temporal stores at every size (OPENDML_CPU_STREAM_BYTES=0, docs/contract.md section
// 5), where the element-wise oracle checks them: the cases above with few rows, rows of 64 bytes and
// more in 4-, 8- and 16-byte vectors at every alignment that allows them, transposed inputs (each
// element a store of its own), and random cases.
TEST(DeviceJoin, AndSplitWithNonTemporalStoresAtEverySize) {
  if (test_device_name().rfind("cpu", 0) != 0) GTEST_SKIP() << "OPENDML_CPU_STREAM_BYTES is the CPU's";
  const ScopedEnv stream("OPENDML_CPU_STREAM_BYTES", "0");
  constexpr auto kU8 = DML_TENSOR_DATA_TYPE_UINT8;
  join_and_split_stream_layouts(1000 + 4);
  for (uint32_t alignment : {4u, 8u, 16u, 32u})
    for (uint32_t bytes : {64u, 68u, 72u, 80u, 96u, 100u, 128u, 256u, 260u, 700u}) {
      SCOPED_TRACE(std::to_string(bytes) + "-byte rows at " + std::to_string(alignment));
      JoinTester().type(kU8).alignment(alignment).axis(1).inputs({{37, bytes}, {37, 4}}).run();
      SplitTester().type(kU8).alignment(alignment).axis(1).outputs({{37, 4}, {37, bytes}}).run();
    }
  JoinTester().axis(1).inputs({{37, 20}, {37, 30}}).input_strides({{1, 37}, {1, 37}}).run();
  SplitTester().axis(0).outputs({{20, 37}, {30, 37}}).input_strides({1, 50}).run();
  random_cases(200, [](Rng& rng) {
    random_join(rng).run();
    random_split(rng).run();
  });
}

TEST(DeviceJoin, RandomCases) {
  random_cases(200, [](Rng& rng) { random_join(rng).run(); });
}

// docs/contract.md section 5: the descriptor is copied at create, the compiled operator is
// independent of the operator, and operators keep their device alive.
TEST(DeviceJoin, CompiledOperatorOutlivesDescriptorOperatorAndDevice) {
  std::unique_ptr<opendml::CompiledOperator> compiled;
  {
    const opendml::Device device(test_device_name());
    auto desc = std::make_unique<opendml::JoinDesc>(
        std::vector<opendml::TensorDesc>{opendml::TensorDesc(kF32, {2, 2}), opendml::TensorDesc(kF32, {2, 1})},
        opendml::TensorDesc(kF32, {2, 3}), 1);
    const opendml::Operator op(device, *desc);
    desc.reset();
    compiled = std::make_unique<opendml::CompiledOperator>(op.compile());
  }
  compiled->initialize();
  const opendml::Device& device = test_device();
  const std::vector<float> a = {1, 2, 3, 4}, b = {5, 6}, want = {1, 2, 5, 3, 4, 6};
  opendml::Buffer da(device, 16), db(device, 8), dout(device, 24);
  device.upload(da.data(), a.data(), 16);
  device.upload(db.data(), b.data(), 8);
  compiled->execute({da.binding(), db.binding()}, {dout.binding()});
  device.synchronize();
  std::vector<float> out(6);
  device.download(out.data(), dout.data(), 24);
  EXPECT_EQ(out, want);
}

}  // namespace
}  // namespace odml_test
