// Shared by the benchmarks: data generation, medians, table printing.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "opendml/directml.h"

namespace bench {

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

// Elements of `bytes_per_element` bytes, a fraction `density` of them non-zero (never all zero
// unless density is 0). Non-zero values have random bits, so floats include negatives and NaNs.
inline std::vector<uint8_t> random_elements(uint64_t count, uint32_t bytes_per_element, double density, uint64_t seed) {
  std::vector<uint8_t> data(count * bytes_per_element, 0);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (uint64_t i = 0; i < count; ++i) {
    if (density < 1.0 && unit(rng) >= density) continue;
    uint64_t bits = rng() | 1;  // never zero, never -0.0
    std::memcpy(&data[i * bytes_per_element], &bits, bytes_per_element);
  }
  return data;
}

// Alternating runs of zero and non-zero elements (density about 0.5), of geometric lengths with mean
// mean_run: the peer benchmark's "clustered runs" (bench/peers/common.py).
inline std::vector<uint8_t> clustered_elements(uint64_t count, uint32_t bytes_per_element, double mean_run,
                                               uint64_t seed) {
  std::vector<uint8_t> data(count * bytes_per_element, 0);
  std::mt19937_64 rng(seed);
  std::geometric_distribution<uint64_t> run(1.0 / mean_run);
  bool nonzero = false;
  for (uint64_t i = 0; i < count; nonzero = !nonzero) {
    const uint64_t end = std::min(count, i + run(rng) + 1);
    for (; i < end; ++i) {
      if (!nonzero) continue;
      uint64_t bits = rng() | 1;  // never zero, never -0.0
      std::memcpy(&data[i * bytes_per_element], &bits, bytes_per_element);
    }
  }
  return data;
}

inline std::vector<uint8_t> random_bytes(uint64_t count, uint64_t seed) {
  std::vector<uint8_t> data(count);
  std::mt19937_64 rng(seed);
  for (uint64_t i = 0; i < count; i += 8) {
    const uint64_t r = rng();
    std::memcpy(&data[i], &r, std::min<uint64_t>(8, count - i));
  }
  return data;
}

// sizes with `rank` dimensions whose product is n (n a power of two).
inline std::vector<uint32_t> shape_of(uint64_t n, uint32_t rank) {
  std::vector<uint32_t> sizes(rank, 1);
  uint32_t log = 0;
  while ((uint64_t{1} << log) < n) ++log;
  for (uint32_t i = 0; i < log; ++i) sizes[rank - 1 - (i % rank)] *= 2;
  return sizes;
}

inline std::string pow2(uint64_t n) {
  uint32_t log = 0;
  while ((uint64_t{1} << log) < n) ++log;
  return (uint64_t{1} << log) == n ? "2^" + std::to_string(log) : std::to_string(n);
}

}  // namespace bench
