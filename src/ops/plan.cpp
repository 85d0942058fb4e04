#include "ops/plan.h"

#include <algorithm>

namespace opendml::internal {
namespace {

// The span of an item's elements on one side relative to its offset: sum((size - 1) * stride) + 1.
uint64_t extent(const CopyItem& item, const Dims& strides) {
  uint64_t e = 1;
  for (uint32_t d = 0; d < item.rank; ++d) e += (item.sizes[d] - 1) * strides[d];
  return e;
}

// The same item without dimension 0, at row `row` of it.
CopyItem inner_row(const CopyItem& item, uint64_t row) {
  CopyItem r = item;
  r.rank = item.rank - 1;
  for (uint32_t d = 0; d < r.rank; ++d) {
    r.sizes[d] = item.sizes[d + 1];
    r.src_strides[d] = item.src_strides[d + 1];
    r.dst_strides[d] = item.dst_strides[d + 1];
  }
  r.sizes[r.rank] = 1;
  r.src_strides[r.rank] = r.dst_strides[r.rank] = 0;
  r.src_offset = item.src_offset + row * item.src_strides[0];
  r.dst_offset = item.dst_offset + row * item.dst_strides[0];
  return r;
}

void split(const CopyItem& item, uint64_t max_count, uint64_t max_extent, std::vector<CopyItem>& out) {
  const auto fits = [&](const CopyItem& i) {
    return i.element_count() <= max_count && extent(i, i.src_strides) <= max_extent &&
           extent(i, i.dst_strides) <= max_extent;
  };
  if (fits(item)) {
    out.push_back(item);
    return;
  }
  // Rows of dimension 0, as many per piece as fit; one row too large is split further.
  const uint64_t rows = item.sizes[0];
  CopyItem one = item;
  one.sizes[0] = 1;
  if (item.rank == 1 ? false : !fits(one)) {
    for (uint64_t row = 0; row < rows; ++row) split(inner_row(item, row), max_count, max_extent, out);
    return;
  }
  const uint64_t inner_count = one.element_count();
  const uint64_t inner_src = extent(one, one.src_strides), inner_dst = extent(one, one.dst_strides);
  uint64_t per_piece = max_count / inner_count;
  if (item.src_strides[0] > 0) per_piece = std::min(per_piece, (max_extent - inner_src) / item.src_strides[0] + 1);
  if (item.dst_strides[0] > 0) per_piece = std::min(per_piece, (max_extent - inner_dst) / item.dst_strides[0] + 1);
  for (uint64_t first = 0; first < rows; first += per_piece) {
    CopyItem piece = item;
    piece.sizes[0] = std::min(per_piece, rows - first);
    piece.src_offset += first * item.src_strides[0];
    piece.dst_offset += first * item.dst_strides[0];
    out.push_back(piece);
  }
}

}  // namespace

std::vector<CopyItem> split_items(std::span<const CopyItem> items, uint64_t max_count, uint64_t max_extent) {
  std::vector<CopyItem> out;
  out.reserve(items.size());
  for (const CopyItem& item : items) split(item, max_count, max_extent, out);
  return out;
}

}  // namespace opendml::internal
