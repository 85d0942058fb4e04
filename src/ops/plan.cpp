#include "ops/plan.h"

#include <algorithm>

#include "core/arithmetic.h"

namespace opendml::internal {
namespace {

// The span of an item's elements on one side relative to its offset: sum((size - 1) * stride) + 1.
uint64_t extent(const CopyItem& item, const Dims& strides) {
  uint64_t e = 1;
  for (uint32_t d = 0; d < item.rank; ++d) e += (item.sizes[d] - 1) * strides[d];
  return e;
}

struct SplitLimits {
  uint64_t max_count, max_extent;
  bool fits(const CopyItem& i) const {
    return i.element_count() <= max_count && extent(i, i.src_strides) <= max_extent &&
           extent(i, i.dst_strides) <= max_extent;
  }
};

// Pieces of `item`, each within `limits`, appended to `out` (or only counted, where out is null):
// false, and no more pieces, once `left` would be exceeded. Cuts the outermost dimension whose
// slices (one index of it) fit into runs of as many slices as fit, where one does; otherwise halves
// the dimension that most exceeds the limits and splits each half again. Halving, rather than a
// piece per slice of an outer dimension, keeps a transposed item of n x n elements at about
// (n^2 / max_extent)^2 pieces instead of n^3 / max_extent, and the time spent with them.
bool split(const CopyItem& item, const SplitLimits& limits, std::vector<CopyItem>* out, uint64_t& left) {
  const auto emit = [&](const CopyItem& piece) {
    if (left == 0) return false;
    --left;
    if (out) out->push_back(piece);
    return true;
  };
  if (limits.fits(item)) return emit(item);
  for (uint32_t d = 0; d < item.rank; ++d) {
    if (item.sizes[d] == 1) continue;
    CopyItem one = item;
    one.sizes[d] = 1;
    if (!limits.fits(one)) continue;
    uint64_t per_piece = limits.max_count / one.element_count();
    if (item.src_strides[d] > 0)
      per_piece = std::min(per_piece, (limits.max_extent - extent(one, one.src_strides)) / item.src_strides[d] + 1);
    if (item.dst_strides[d] > 0)
      per_piece = std::min(per_piece, (limits.max_extent - extent(one, one.dst_strides)) / item.dst_strides[d] + 1);
    if (ceil_div(item.sizes[d], per_piece) > left) {
      left = 0;
      return false;
    }
    for (uint64_t first = 0; first < item.sizes[d]; first += per_piece) {
      CopyItem piece = item;
      piece.sizes[d] = std::min(per_piece, item.sizes[d] - first);
      piece.src_offset += first * item.src_strides[d];
      piece.dst_offset += first * item.dst_strides[d];
      emit(piece);
    }
    return true;
  }
  // No dimension's slice fits: halve the dimension that adds most to a side past max_extent (or,
  // where only the count is past max_count, the largest one).
  const bool src_over = extent(item, item.src_strides) > limits.max_extent;
  const bool dst_over = extent(item, item.dst_strides) > limits.max_extent;
  uint32_t widest = 0;
  uint64_t most = 0;
  for (uint32_t d = 0; d < item.rank; ++d) {
    const uint64_t stride = std::max(src_over ? item.src_strides[d] : 0, dst_over ? item.dst_strides[d] : 0);
    const uint64_t adds = src_over || dst_over ? (item.sizes[d] - 1) * stride : item.sizes[d];
    if (adds > most) most = adds, widest = d;
  }
  CopyItem low = item, high = item;
  low.sizes[widest] = item.sizes[widest] / 2;
  high.sizes[widest] = item.sizes[widest] - low.sizes[widest];
  high.src_offset += low.sizes[widest] * item.src_strides[widest];
  high.dst_offset += low.sizes[widest] * item.dst_strides[widest];
  return split(low, limits, out, left) && split(high, limits, out, left);
}

}  // namespace

std::optional<std::vector<CopyItem>> split_items(std::span<const CopyItem> items, uint64_t max_count,
                                                 uint64_t max_extent, uint64_t max_pieces) {
  std::vector<CopyItem> out;
  out.reserve(items.size());
  uint64_t left = max_pieces;
  for (const CopyItem& item : items)
    if (!split(item, {max_count, max_extent}, &out, left)) return std::nullopt;
  return out;
}

bool split_items_fit(std::span<const CopyItem> items, uint64_t max_count, uint64_t max_extent, uint64_t max_pieces) {
  uint64_t left = max_pieces;
  for (const CopyItem& item : items)
    if (!split(item, {max_count, max_extent}, nullptr, left)) return false;
  return true;
}

}  // namespace opendml::internal
