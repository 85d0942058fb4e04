// Integer arithmetic that sizing grids, tiles and chunks needs everywhere. Header-only and constexpr,
// so host code and CUDA device code (compiled with --expt-relaxed-constexpr) share it.
#pragma once

namespace opendml::internal {

// a / b rounded up, for b > 0 and any a: no a + b - 1 that wraps near the top of T (cuda.slices sized
// a grid of 0 blocks for 2^32 - 1023 to 2^32 - 1 units that way).
template <class T>
constexpr T ceil_div(T a, T b) {
  return a / b + (a % b != 0 ? 1 : 0);
}

}  // namespace opendml::internal
