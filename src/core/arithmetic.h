// Integer arithmetic that sizing grids, tiles and chunks needs everywhere. Header-only and constexpr,
// so host code and CUDA device code (compiled with --expt-relaxed-constexpr) share it.
#pragma once

namespace opendml::internal {

// a / b rounded up; b > 0, and a + b - 1 must not overflow T.
template <class T>
constexpr T ceil_div(T a, T b) {
  return (a + b - 1) / b;
}

}  // namespace opendml::internal
