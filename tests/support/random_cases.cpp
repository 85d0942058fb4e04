#include "support/random_cases.h"

#include <algorithm>
#include <numeric>

#include "support/data_types.h"

namespace odml_test {
namespace {

template <class T>
const T& pick(Rng& rng, const std::vector<T>& values) {
  return values[rng() % values.size()];
}

uint32_t below(Rng& rng, uint32_t n) { return static_cast<uint32_t>(rng() % n); }

// GuaranteedBaseOffsetAlignment: 0 or a power of two from the element size to 64.
uint32_t random_alignment(Rng& rng, uint32_t element_bytes) {
  if (rng() % 2) return 0;
  return std::min<uint32_t>(64, element_bytes << below(rng, 4));
}

// The options every random case draws the same way.
template <class Derived>
void random_options(Rng& rng, Tester<Derived>& t, DML_TENSOR_DATA_TYPE type) {
  t.type(type).seed(rng()).alignment(random_alignment(rng, element_bytes(type)));
  t.extra_bytes(rng() % 3 == 0 ? below(rng, 64) : 0);
  t.owned_by_dml(rng() % 8 == 0);
}

}  // namespace

void random_cases(int count, const std::function<void(Rng& rng)>& run_case) {
  const uint64_t seed = next_seed();
  Rng rng(seed);
  SCOPED_TRACE("cases drawn from " + seed_note(seed));
  for (int c = 0; c < count && !::testing::Test::HasFailure(); ++c) {
    SCOPED_TRACE("random case " + std::to_string(c));
    run_case(rng);
  }
}

Shape random_sizes(Rng& rng, uint32_t rank, uint64_t max_elements) {
  Shape sizes(rank, 1);
  uint64_t count = 1;
  for (uint32_t d = 0; d < rank; ++d) {
    const uint32_t s = 1 + below(rng, 5);
    if (count * s > max_elements) continue;
    sizes[d] = s;
    count *= s;
  }
  return sizes;
}

std::optional<Shape> random_strides(Rng& rng, const Shape& sizes, bool broadcast) {
  const uint32_t rank = static_cast<uint32_t>(sizes.size());
  const uint32_t kind = below(rng, broadcast ? 5 : 4);
  if (kind == 0) return std::nullopt;
  if (kind == 1) return packed_strides(sizes);
  // Dimensions laid out innermost first in `order`, each stride past the span of the inner ones.
  std::vector<uint32_t> order(rank);
  std::iota(order.begin(), order.end(), 0);
  std::reverse(order.begin(), order.end());
  if (kind >= 3) std::shuffle(order.begin(), order.end(), rng);
  Shape strides(rank);
  uint64_t next = 1 + below(rng, 2);
  for (uint32_t d : order) {
    strides[d] = static_cast<uint32_t>(next);
    next = next * sizes[d] + below(rng, 3);
  }
  if (kind == 4)
    for (uint32_t& s : strides)
      if (rng() % 2) s = 0;
  return strides;
}

Shape random_strides_or_empty(Rng& rng, const Shape& sizes, bool broadcast) {
  return random_strides(rng, sizes, broadcast).value_or(Shape{});
}

Concat random_concat(Rng& rng, bool broadcast_pieces, bool broadcast_whole) {
  Concat c;
  c.type = pick(rng, kElevenTypes);
  const uint32_t rank = 1 + below(rng, 8);
  c.axis = below(rng, rank);
  const Shape base = random_sizes(rng, rank, 240);
  c.pieces.assign(1 + below(rng, 4), base);
  for (Shape& p : c.pieces) {
    p[c.axis] = 1 + below(rng, 4);
    c.piece_strides.push_back(random_strides_or_empty(rng, p, broadcast_pieces));
  }
  c.whole_strides = random_strides(rng, concat_sizes(c.pieces, c.axis), broadcast_whole);
  return c;
}

JoinTester random_join(Rng& rng) {
  const Concat c = random_concat(rng, true, false);
  JoinTester t;
  random_options(rng, t, c.type);
  t.axis(c.axis).inputs(c.pieces).input_strides(c.piece_strides);
  if (c.whole_strides) t.output_strides(*c.whole_strides);
  return t;
}

SplitTester random_split(Rng& rng) {
  const Concat c = random_concat(rng, false, true);
  SplitTester t;
  random_options(rng, t, c.type);
  t.axis(c.axis).outputs(c.pieces).output_strides(c.piece_strides);
  if (c.whole_strides) t.input_strides(*c.whole_strides);
  return t;
}

NonzeroTester random_nonzero_coordinates(Rng& rng) {
  const DML_TENSOR_DATA_TYPE type = pick(rng, kEightTypes);
  const uint32_t rank = 1 + below(rng, 8);
  Shape sizes = random_sizes(rng, rank, 600);
  const uint32_t leading_ones = rng() % 3 == 0 ? below(rng, rank + 1) : 0;
  std::fill(sizes.begin(), sizes.begin() + leading_ones, 1u);
  uint32_t effective = rank;
  while (effective > 0 && sizes[rank - effective] == 1) --effective;
  const uint32_t min_n = std::max(1u, effective);
  const uint32_t n = min_n + below(rng, rank - min_n + 1);
  const uint32_t coordinates_rank = 2 + below(rng, 7);
  Shape coordinate_sizes(coordinates_rank, 1);
  coordinate_sizes[coordinates_rank - 2] = static_cast<uint32_t>(element_count(sizes));
  coordinate_sizes[coordinates_rank - 1] = n;

  NonzeroTester t;
  random_options(rng, t, type);
  t.sizes(sizes).n(n).density(pick(rng, std::vector<double>{0.0, 0.02, 0.5, 0.99, 1.0}));
  t.count_rank(1 + below(rng, 8)).coordinates_rank(coordinates_rank);
  if (const auto s = random_strides(rng, sizes, true)) t.strides(*s);
  if (const auto s = random_strides(rng, coordinate_sizes, false)) t.coordinates_strides(*s);
  return t;
}

}  // namespace odml_test
