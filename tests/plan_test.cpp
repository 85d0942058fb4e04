// Plan (device-independent, internal): what compile hands a backend (src/ops/plan.h). Dimensions
// contiguous in every tensor coalesce (XNNPACK's {4,5,3} -> {60}); JOIN/SPLIT become one copy
// item per piece, widened to 2..16-byte vectors only where sizes, strides, offsets and the base
// alignment all allow. Expected plans are worked out by hand from those rules.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

#include "ops/operator.h"
#include "support/oracle.h"
#include "support/random_cases.h"
#include "support/sample_descs.h"

namespace odml_test {
namespace {

using opendml::internal::CopyItem;
using opendml::internal::CopyPlan;
using opendml::internal::Dims;
using opendml::internal::NonzeroPlan;

opendml::internal::Plan plan(const OpDesc& desc) {
  auto def = opendml::internal::create_operator_def(&desc.get());
  if (!def.ok()) throw std::runtime_error(def.status().message());
  return opendml::internal::plan_operator(*def);
}

CopyPlan copy_plan(const OpDesc& desc) { return std::get<CopyPlan>(plan(desc)); }
NonzeroPlan nonzero_plan(const OpDesc& desc) { return std::get<NonzeroPlan>(plan(desc)); }

std::vector<uint64_t> first(const Dims& dims, uint32_t rank) { return {dims.begin(), dims.begin() + rank}; }

// One copy item, compared field by field so that a failure says which one differs.
struct Item {
  uint32_t input, output, width;
  std::vector<uint64_t> sizes, src_strides, dst_strides;
  uint64_t src_offset, dst_offset;
};

void expect_item(const CopyItem& got, const Item& want) {
  EXPECT_EQ(got.input, want.input);
  EXPECT_EQ(got.output, want.output);
  EXPECT_EQ(got.width, want.width);
  ASSERT_EQ(got.rank, want.sizes.size());
  EXPECT_EQ(first(got.sizes, got.rank), want.sizes);
  EXPECT_EQ(first(got.src_strides, got.rank), want.src_strides);
  EXPECT_EQ(first(got.dst_strides, got.rank), want.dst_strides);
  EXPECT_EQ(got.src_offset, want.src_offset);
  EXPECT_EQ(got.dst_offset, want.dst_offset);
}

TEST(Plan, PackedTensorCoalescesToOneDimension) {
  const NonzeroPlan p = nonzero_plan(OpDesc::nonzero(spec(kF32, {4, 5, 3}), spec(kU32, {1}), spec(kU32, {60, 3})));
  EXPECT_EQ(p.read_rank, 1u);
  EXPECT_EQ(p.read_sizes[0], 60u);
  EXPECT_EQ(p.read_strides[0], 1u);
  EXPECT_EQ(p.element_count, 60u);
  // The coordinate view keeps every dimension: columns are coordinates along each of them.
  EXPECT_EQ(p.columns, 3u);
  EXPECT_EQ(first(p.column_sizes, 3), (std::vector<uint64_t>{4, 5, 3}));
}

TEST(Plan, NonzeroTrailingDimensionsAndCoordinateStrides) {
  const NonzeroPlan p = nonzero_plan(OpDesc::nonzero(spec(kF32, {1, 1, 3, 4}, Shape{100, 50, 1, 3}), spec(kU32, {1}),
                                                     spec(kU32, {12, 3}, Shape{2, 24})));
  EXPECT_EQ(p.columns, 3u);
  EXPECT_EQ(first(p.column_sizes, 3), (std::vector<uint64_t>{1, 3, 4}));
  EXPECT_EQ(p.row_stride, 2u);
  EXPECT_EQ(p.column_stride, 24u);
  EXPECT_EQ(p.read_rank, 2u);  // {3,4} transposed does not coalesce; the leading ones go
  EXPECT_EQ(first(p.read_sizes, 2), (std::vector<uint64_t>{3, 4}));
  EXPECT_EQ(first(p.read_strides, 2), (std::vector<uint64_t>{1, 3}));
  EXPECT_EQ(p.count_bytes, 4u);
  EXPECT_EQ(p.coordinate_bytes, 4u);
}

TEST(Plan, JoinCopyOfPackedTensorIsOneWideRun) {
  const CopyPlan p = copy_plan(OpDesc::join({spec(kF32, {4, 5, 3})}, spec(kF32, {4, 5, 3}), 1));
  EXPECT_EQ(p.element_bytes, 4u);
  ASSERT_EQ(p.items.size(), 1u);
  expect_item(p.items[0], {0, 0, 16, {15}, {1}, {1}, 0, 0});  // 60 floats as 15 16-byte vectors
}

// Along axis 1 of packed tensors, each piece is a 2-D item: rows of the piece's (axis x inner)
// block, at the whole's row pitch. 21 floats per output row allow no vector wider than a float.
TEST(Plan, JoinOnAxis1OfPackedTensorsGivesTwoDimensionalItems) {
  const CopyPlan p = copy_plan(OpDesc::join({spec(kF32, {4, 2, 3}), spec(kF32, {4, 5, 3})}, spec(kF32, {4, 7, 3}), 1));
  ASSERT_EQ(p.items.size(), 2u);
  expect_item(p.items[0], {0, 0, 4, {4, 6}, {6, 1}, {21, 1}, 0, 0});
  expect_item(p.items[1], {1, 0, 4, {4, 15}, {15, 1}, {21, 1}, 0, 6});
}

TEST(Plan, SplitItemsReadFromTheirOffsets) {
  const CopyPlan p = copy_plan(sample_split());
  ASSERT_EQ(p.items.size(), 2u);
  expect_item(p.items[0], {0, 0, 4, {2, 3}, {8, 1}, {3, 1}, 0, 0});
  expect_item(p.items[1], {0, 1, 4, {2, 5}, {8, 1}, {5, 1}, 3, 0});
}

TEST(Plan, SizeOneDimensionsAreDropped) {
  const CopyPlan p = copy_plan(OpDesc::join({spec(kF32, {1, 1, 6}), spec(kF32, {1, 1, 2})}, spec(kF32, {1, 1, 8}), 2));
  ASSERT_EQ(p.items.size(), 2u);
  expect_item(p.items[0], {0, 0, 8, {3}, {1}, {1}, 0, 0});  // 6 floats: 8-byte pairs, not 16 (6 % 4)
  expect_item(p.items[1], {1, 0, 8, {1}, {1}, {1}, 0, 3});  // offset 6 floats = 3 pairs
}

// Widening needs the run length, every outer stride and the offset to be multiples of the vector.
TEST(Plan, WidensOnlyWhereSizesStridesAndOffsetsAllow) {
  const auto u8 = DML_TENSOR_DATA_TYPE_UINT8;
  const CopyPlan bytes = copy_plan(OpDesc::join({spec(u8, {4}), spec(u8, {12})}, spec(u8, {16}), 0));
  expect_item(bytes.items[0], {0, 0, 4, {1}, {1}, {1}, 0, 0});
  expect_item(bytes.items[1], {1, 0, 4, {3}, {1}, {1}, 0, 1});  // 12 % 8 != 0: 4 bytes, not 8

  const auto i16 = DML_TENSOR_DATA_TYPE_INT16;
  const CopyPlan rows = copy_plan(OpDesc::join({spec(i16, {8, 8}), spec(i16, {8, 8})}, spec(i16, {8, 16}), 1));
  // Each 8-element row is one 16-byte vector; the size-1 dimension that leaves goes (plan.h: "no
  // size-1 dimension unless rank == 1"), so each item is one strided dimension of vectors.
  expect_item(rows.items[0], {0, 0, 16, {8}, {1}, {2}, 0, 0});
  expect_item(rows.items[1], {1, 0, 16, {8}, {1}, {2}, 0, 1});

  const CopyPlan odd_pitch =
      copy_plan(OpDesc::join({spec(i16, {8, 8}, Shape{9, 1}), spec(i16, {8, 8})}, spec(i16, {8, 16}), 1));
  EXPECT_EQ(odd_pitch.items[0].width, 2u);  // a 9-element input pitch allows no vector
  EXPECT_EQ(odd_pitch.items[1].width, 16u);
}

// No wider than GuaranteedBaseOffsetAlignment (16 when 0) of every tensor of the item.
TEST(Plan, WideningLimitedByGuaranteedBaseOffsetAlignment) {
  for (const auto& [alignment, width] :
       std::vector<std::pair<uint32_t, uint32_t>>{{4, 4}, {8, 8}, {16, 16}, {0, 16}, {64, 16}}) {
    TensorSpec in = spec(kF32, {64});
    in.alignment = alignment;
    EXPECT_EQ(copy_plan(OpDesc::join({in}, spec(kF32, {64}), 0)).items[0].width, width) << alignment;
    TensorSpec out = spec(kF32, {64});
    out.alignment = alignment;
    EXPECT_EQ(copy_plan(OpDesc::join({spec(kF32, {64})}, out, 0)).items[0].width, width) << alignment;
  }
}

// An OWNED_BY_DML input is read from its copy in the persistent region, which is only a multiple of
// 256 bytes from the region's start, whatever larger GuaranteedBaseOffsetAlignment the desc gives.
TEST(Plan, OwnedInputsAreReadAtThePersistentRegionsAlignment) {
  for (const auto& [flags, want] : std::vector<std::pair<DML_TENSOR_FLAGS, uint32_t>>{
           {DML_TENSOR_FLAG_OWNED_BY_DML, 256}, {DML_TENSOR_FLAG_NONE, 1024}}) {
    TensorSpec in = spec(kF32, {64});
    in.flags = flags;
    in.alignment = 1024;
    EXPECT_EQ(copy_plan(OpDesc::join({in}, spec(kF32, {64}), 0)).items[0].src_alignment, want) << flags;
    EXPECT_EQ(nonzero_plan(OpDesc::nonzero(in, spec(DML_TENSOR_DATA_TYPE_UINT32, {1}),
                                           spec(DML_TENSOR_DATA_TYPE_UINT32, {64, 1})))
                  .input_alignment,
              want)
        << flags;
  }
}

TEST(Plan, NonContiguousInnerDimensionIsNotWidened) {
  const CopyPlan p = copy_plan(OpDesc::join({spec(kF32, {4, 8}, Shape{1, 4})}, spec(kF32, {4, 8}), 0));
  expect_item(p.items[0], {0, 0, 4, {4, 8}, {1, 4}, {8, 1}, 0, 0});
}

// A broadcast input keeps its zero stride, and a contiguous inner dimension still widens.
TEST(Plan, BroadcastInputKeepsZeroStride) {
  const CopyPlan p = copy_plan(OpDesc::split(spec(kF32, {4, 8}, Shape{0, 1}), {spec(kF32, {4, 8})}, 0));
  expect_item(p.items[0], {0, 0, 16, {4, 2}, {0, 1}, {2, 1}, 0, 0});
}

// plan.h's contract on random JOINs and SPLITs: every item has rank >= 1, no size-1 dimension
// unless rank == 1, a width of 1..16 bytes that is a multiple of the element size and no more
// than the base alignments allow; and moving each item's vectors as the contract says
// (src_offset + dot(c, src_strides) -> dst_offset + dot(c, dst_strides), in vectors) on the host
// gives what the oracle gives.
TEST(Plan, RandomCopyPlansKeepTheirContract) {
  random_cases(300, [](Rng& rng) {
    const bool join = rng() % 2;
    const Concat c = random_concat(rng, join, !join);
    const uint32_t eb = element_bytes(c.type);
    const auto alignment = [&] { return rng() % 2 ? 0u : eb << (rng() % 4); };
    std::vector<TensorSpec> pieces;
    for (size_t i = 0; i < c.pieces.size(); ++i) {
      pieces.push_back(spec(c.type, c.pieces[i], strides_or_null(c.piece_strides, i)));
      pieces.back().alignment = alignment();
    }
    TensorSpec whole = spec(c.type, concat_sizes(c.pieces, c.axis), c.whole_strides);
    whole.alignment = alignment();
    const OpDesc desc = join ? OpDesc::join(pieces, whole, c.axis) : OpDesc::split(whole, pieces, c.axis);
    SCOPED_TRACE(desc.to_string());
    const CopyPlan p = copy_plan(desc);
    ASSERT_EQ(p.items.size(), pieces.size());

    const std::vector<TensorSpec> in = desc.inputs(), out = desc.outputs();
    std::vector<Bytes> src, dst;
    for (const TensorSpec& t : in) src.push_back(random_bytes(rng, t.total_bytes()));
    for (const TensorSpec& t : out) dst.push_back(random_bytes(rng, t.total_bytes()));
    for (const CopyItem& item : p.items) {
      ASSERT_GE(item.rank, 1u);
      for (uint32_t d = 0; d < item.rank && item.rank > 1; ++d) EXPECT_GT(item.sizes[d], 1u) << "dimension " << d;
      EXPECT_TRUE(item.width == 1 || item.width == 2 || item.width == 4 || item.width == 8 || item.width == 16);
      EXPECT_EQ(item.width % eb, 0u);
      const TensorSpec& s = in.at(item.input);
      const TensorSpec& t = out.at(item.output);
      EXPECT_LE(item.width, std::max(eb, std::min(s.alignment ? s.alignment : 16, t.alignment ? t.alignment : 16)));
      Shape sizes(item.sizes.begin(), item.sizes.begin() + item.rank);
      for_each_coordinate(sizes, [&](const Shape& co) {
        uint64_t from = item.src_offset, to = item.dst_offset;
        for (uint32_t d = 0; d < item.rank; ++d) {
          from += co[d] * item.src_strides[d];
          to += co[d] * item.dst_strides[d];
        }
        ASSERT_LE((to + 1) * item.width, dst[item.output].size());
        ASSERT_LE((from + 1) * item.width, src[item.input].size());
        std::memcpy(dst[item.output].data() + to * item.width, src[item.input].data() + from * item.width, item.width);
      });
    }
    if (join) {
      EXPECT_TRUE(elements_equal(out[0], dst[0], join_oracle(in, src, c.axis), "OutputTensor"));
    } else {
      const std::vector<Bytes> expected = split_oracle(in[0], src[0], out, c.axis);
      for (size_t i = 0; i < out.size(); ++i)
        EXPECT_TRUE(elements_equal(out[i], dst[i], expected[i], "OutputTensors[" + std::to_string(i) + "]"));
    }
  });
}

// Every (source, destination) element pair a list of items copies, for comparing lists.
std::vector<std::pair<uint64_t, uint64_t>> element_map(const std::vector<CopyItem>& items) {
  std::vector<std::pair<uint64_t, uint64_t>> map;
  for (const CopyItem& item : items) {
    for (uint64_t i = 0; i < item.element_count(); ++i) {
      uint64_t rest = i, s = item.src_offset, d = item.dst_offset;
      for (uint32_t dim = item.rank; dim-- > 0;) {
        s += rest % item.sizes[dim] * item.src_strides[dim];
        d += rest % item.sizes[dim] * item.dst_strides[dim];
        rest /= item.sizes[dim];
      }
      map.emplace_back(s, d);
    }
  }
  std::sort(map.begin(), map.end());
  return map;
}

uint64_t item_extent(const CopyItem& item, const Dims& strides) {
  uint64_t e = 1;
  for (uint32_t d = 0; d < item.rank; ++d) e += (item.sizes[d] - 1) * strides[d];
  return e;
}

// split_items (for backends that index within an item in 32 bits) moves every element where it
// went before, and each piece keeps to the limits.
TEST(Plan, SplitItemsKeepsEveryElementAndTheLimits) {
  random_cases(300, [](Rng& rng) {
    CopyItem item;
    item.rank = 1 + rng() % 4;
    for (uint32_t d = item.rank; d-- > 0;) item.sizes[d] = 1 + rng() % 7;
    uint64_t src = 1 + rng() % 2, dst = 1;
    for (uint32_t d = item.rank; d-- > 0;) {  // padded, sometimes broadcast on the source
      item.src_strides[d] = rng() % 5 == 0 ? 0 : src;
      item.dst_strides[d] = dst;
      src *= item.sizes[d] + rng() % 2;
      dst *= item.sizes[d] + rng() % 3;
    }
    item.src_offset = rng() % 100;
    item.dst_offset = rng() % 100;
    const uint64_t max_count = 1 + rng() % 40, max_extent = 1 + rng() % 60;
    if (rng() % 3 == 0) {  // transposed: the strides of two dimensions swapped
      const uint32_t a = rng() % item.rank, b = rng() % item.rank;
      std::swap(item.src_strides[a], item.src_strides[b]);
    }
    const std::vector<CopyItem> pieces =
        *opendml::internal::split_items(std::vector<CopyItem>{item}, max_count, max_extent, UINT64_MAX);
    EXPECT_EQ(element_map(pieces), element_map({item}));
    EXPECT_TRUE(opendml::internal::split_items_fit(std::vector<CopyItem>{item}, max_count, max_extent, pieces.size()));
    EXPECT_FALSE(
        opendml::internal::split_items_fit(std::vector<CopyItem>{item}, max_count, max_extent, pieces.size() - 1));
    for (const CopyItem& p : pieces) {
      EXPECT_LE(p.element_count(), std::max<uint64_t>(max_count, 1));
      EXPECT_LE(item_extent(p, p.src_strides), max_extent);
      EXPECT_LE(item_extent(p, p.dst_strides), max_extent);
    }
  });
}

// A transposed n x n item (source strides {1, n}): a piece per row, cut again along the row, took
// n^3 / 2^32 pieces (2^22 at n = 2^18, 2 GB and 2 s to compile on CUDA; 2^28 at 2^20, which did not
// finish). Halving takes (n^2 / 2^32)^2 here, the fewest, and a declared size far past memory stops
// at the limit on pieces instead of making them.
TEST(Plan, SplitItemsOfATransposedItemStayFew) {
  const uint64_t max_extent = uint64_t{1} << 32;
  for (uint64_t n : {uint64_t{1} << 17, uint64_t{1} << 18, uint64_t{1} << 20}) {
    CopyItem item;
    item.rank = 2;
    item.sizes = {n, n};
    item.src_strides = {1, n};
    item.dst_strides = {n, 1};
    const uint64_t least = (n * n / max_extent) * (n * n / max_extent);
    const auto pieces = opendml::internal::split_items(std::vector<CopyItem>{item}, max_extent, max_extent, least);
    ASSERT_TRUE(pieces.has_value()) << n;
    uint64_t moved = 0;
    for (const CopyItem& p : *pieces) {
      EXPECT_LE(item_extent(p, p.src_strides), max_extent);
      EXPECT_LE(item_extent(p, p.dst_strides), max_extent);
      moved += p.element_count();
    }
    EXPECT_EQ(moved, n * n);
  }
  CopyItem huge;
  huge.rank = 2;
  huge.sizes = {uint64_t{1} << 31, uint64_t{1} << 31};
  huge.src_strides = {1, uint64_t{1} << 31};
  huge.dst_strides = {uint64_t{1} << 31, 1};
  EXPECT_FALSE(opendml::internal::split_items(std::vector<CopyItem>{huge}, max_extent, max_extent, 1 << 20));
  EXPECT_FALSE(opendml::internal::split_items_fit(std::vector<CopyItem>{huge}, max_extent, max_extent, 1 << 20));
}

}  // namespace
}  // namespace odml_test
