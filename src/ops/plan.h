// Plans: what compile hands a backend. They are backend-independent and hold no pointers: the
// tensors are named by their binding slot (the index into the operator's inputs or outputs).
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <variant>
#include <vector>

#include "core/arithmetic.h"
#include "core/tensor.h"

namespace opendml::internal {

// One strided copy between an input and an output over the same logical sizes. All quantities are
// in units of `width` bytes: the planner widens the element to 2, 4, 8 or 16 bytes where the
// innermost dimension is contiguous on both sides and every stride, offset and base alignment
// allows it, so that kernels move whole vectors.
// Invariants: rank >= 1, sizes coalesced (no size-1 dimension unless rank == 1); for every
// logical coordinate c, input element src_offset + dot(c, src_strides) goes to output element
// dst_offset + dot(c, dst_strides).
struct CopyItem {
  uint32_t input = 0;   // slot of the source among the operator's inputs
  uint32_t output = 0;  // slot of the destination among the operator's outputs
  uint32_t width = 1;   // bytes per moved element: 1, 2, 4, 8 or 16
  uint32_t rank = 1;
  Dims sizes{};
  Dims src_strides{};
  Dims dst_strides{};
  uint64_t src_offset = 0;
  uint64_t dst_offset = 0;
  uint32_t src_alignment = 16;  // bytes: what the bound tensors' addresses are multiples of
  uint32_t dst_alignment = 16;

  uint64_t element_count() const {
    uint64_t n = 1;
    for (uint32_t d = 0; d < rank; ++d) n *= sizes[d];
    return n;
  }
  // The innermost dimension is contiguous on both sides.
  bool inner_contiguous() const { return src_strides[rank - 1] == 1 && dst_strides[rank - 1] == 1; }
};

// JOIN and SPLIT: every element of the output(s) comes from exactly one copy item.
struct CopyPlan {
  uint32_t element_bytes = 0;  // of the operator's data type, before widening
  std::vector<CopyItem> items;

  // Bytes of items [first, end) (all of them by default), moved once in each direction. Each item
  // is under 2^60 bytes (its outputs are, docs/contract.md section 2), and the sum stops at 2^62, so
  // it never wraps however many items there are.
  uint64_t bytes(size_t first = 0, size_t end = SIZE_MAX) const { return units(0, first, end); }
  // The same in KiB (each item rounded up), which stops at 2^62 KiB: past every plan's bytes, where
  // bytes() stops at 2^62 (a SPLIT of a broadcast input moves up to 2^65 bytes).
  uint64_t kib() const { return units(10, 0, SIZE_MAX); }

 private:
  uint64_t units(uint32_t shift, size_t first, size_t end) const {
    uint64_t n = 0;
    for (size_t i = first; i < std::min(end, items.size()); ++i)
      n = std::min(n + ceil_div(items[i].element_count() * items[i].width, uint64_t{1} << shift), uint64_t{1} << 62);
    return n;
  }
};

// NONZERO_COORDINATES over input slot 0, writing output slots 0 (count) and 1 (coordinates).
struct NonzeroPlan {
  uint32_t element_bytes = 0;    // 1, 2 or 4
  uint32_t value_mask = 0;       // an element is non-zero when (bits & value_mask) != 0
  uint64_t element_count = 0;    // M
  uint32_t input_alignment = 0;  // the input's bound address is a multiple of this

  // The input over its trailing N dimensions (the leading ones all have size 1): the coordinates
  // of logical index i, one per column of a row, are unravel(i, column_sizes).
  uint32_t columns = 0;  // N, the coordinates in a row
  Dims column_sizes{};

  // The input with dimensions coalesced, for reading: logical index i is the element at
  // dot(unravel(i, read_sizes), read_strides).
  uint32_t read_rank = 0;
  Dims read_sizes{};
  Dims read_strides{};

  // Coordinates: row m, column j is element m * row_stride + j * column_stride, each
  // coordinate_bytes wide (4: UINT32; 8: INT64 or UINT64 with 64-bit indices); the count is
  // count_bytes wide.
  uint64_t row_stride = 0;
  uint64_t column_stride = 0;
  uint32_t count_bytes = 4;
  uint32_t coordinate_bytes = 4;
  // Rows of coordinates back to back, each one run of `columns` values.
  bool dense_rows() const { return column_stride == 1 && row_stride == columns; }
  // Added to coordinate j of every row (ODML_EXTENSION_COORDINATE_OFFSETS; zero without it).
  Dims column_offsets{};
  // Rows past the count hold fill_values (ODML_EXTENSION_FILL_ROWS; unwritten without it). Each
  // backend writes them in its pass over the input: the part of the input before element i holds
  // z zeros, and zero number z owns fill row M - 1 - z, so every part fills its own share.
  bool fill_rows = false;
  Dims fill_values{};
};

using Plan = std::variant<CopyPlan, NonzeroPlan>;

// The same copies as `items`, split where an item has more than max_count elements or spans more
// than max_extent elements on either side of its offsets: for a backend whose kernels index within
// an item in 32 bits. Null where that takes more than max_pieces pieces (a tensor declared far
// larger than memory; the time and memory spent are bounded by max_pieces). Pre: max_count,
// max_extent >= 1 and a single element fits. Post: every element goes where it went before; items
// within the limits stay whole.
std::optional<std::vector<CopyItem>> split_items(std::span<const CopyItem> items, uint64_t max_count,
                                                 uint64_t max_extent, uint64_t max_pieces);
// Whether split_items stays within max_pieces, counted without making the pieces.
bool split_items_fit(std::span<const CopyItem> items, uint64_t max_count, uint64_t max_extent, uint64_t max_pieces);

}  // namespace opendml::internal
