// Random cases over data type, rank, axis, layout (packed, padded, permuted, broadcast), density,
// region size, alignment and OWNED_BY_DML, each from one seed that its failure prints.
#pragma once

#include <functional>
#include <optional>

#include "support/testers.h"

namespace odml_test {

// Runs `count` cases, each drawing from one generator seeded by next_seed(), whose seed every
// failure prints; stops at the first case that fails.
void random_cases(int count, const std::function<void(Rng& rng)>& run_case);

// Up to `max_elements` elements in `rank` dimensions, sizes 1 to 5.
Shape random_sizes(Rng& rng, uint32_t rank, uint64_t max_elements);
// Packed (null or explicit), padded, permuted or, where `broadcast` allows it, zero-stride
// strides for `sizes`. Without broadcast, no two elements share an address.
std::optional<Shape> random_strides(Rng& rng, const Shape& sizes, bool broadcast);
// As random_strides, with packed given as an empty Shape (the testers' convention).
Shape random_strides_or_empty(Rng& rng, const Shape& sizes, bool broadcast);

// A JOIN or SPLIT layout: pieces of one base shape, each its own length along axis, with random
// strides (an empty Shape for packed); zero strides only where `broadcast_*` allows them.
struct Concat {
  DML_TENSOR_DATA_TYPE type;
  uint32_t axis;
  std::vector<Shape> pieces, piece_strides;
  std::optional<Shape> whole_strides;
};
Concat random_concat(Rng& rng, bool broadcast_pieces, bool broadcast_whole);

JoinTester random_join(Rng& rng);
SplitTester random_split(Rng& rng);
NonzeroTester random_nonzero_coordinates(Rng& rng);

}  // namespace odml_test
