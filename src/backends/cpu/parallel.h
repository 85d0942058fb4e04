// Helpers the CPU kernels share: walking an index range row by row, and splitting work over threads.
#pragma once

#include <omp.h>

#include <algorithm>
#include <cstdint>

#include "core/tensor.h"

namespace opendml::internal {

inline uint64_t dot(const Dims& coord, const Dims& strides, uint32_t rank) {
  uint64_t offset = 0;
  for (uint32_t d = 0; d < rank; ++d) offset += coord[d] * strides[d];
  return offset;
}

// The coordinates of logical index `index` of `sizes` (row-major).
inline Dims unravel(uint64_t index, uint32_t rank, const Dims& sizes) {
  Dims coord{};
  for (uint32_t d = rank; d-- > 0;) {
    coord[d] = index % sizes[d];
    index /= sizes[d];
  }
  return coord;
}

// Moves coord, the coordinates of a logical index of `sizes` (row-major), `delta` indices forward:
// a division only where a dimension overflows, so that stepping through nearby indices is cheap.
inline void advance(Dims& coord, uint64_t delta, uint32_t rank, const Dims& sizes) {
  for (uint32_t d = rank; d-- > 0 && delta != 0;) {
    const uint64_t sum = coord[d] + delta;
    if (sum < sizes[d]) {
      coord[d] = sum;
      return;
    }
    coord[d] = sum % sizes[d];
    delta = sum / sizes[d];  // carried into the next dimension out
  }
}

// Visits the logical indices [begin, end) of `sizes` (row-major) as blocks of runs along the
// innermost dimension: fn(coord, rows, count) covers `rows` runs of `count` elements, the r-th
// starting at coord with coord[rank - 2] + r. rows > 1 only where count is the whole innermost
// dimension, so a caller walks many narrow runs with pointer steps instead of one call (and one
// dot product) each.
template <class Fn>
void for_each_block(uint32_t rank, const Dims& sizes, uint64_t begin, uint64_t end, Fn&& fn) {
  Dims coord = unravel(begin, rank, sizes);
  const uint32_t last = rank - 1;
  for (uint64_t i = begin; i < end;) {
    const uint64_t count = std::min(sizes[last] - coord[last], end - i);
    uint64_t rows = 1;
    if (rank > 1 && count == sizes[last]) rows = std::min(sizes[last - 1] - coord[last - 1], (end - i) / count);
    fn(coord, rows, count);
    i += rows * count;
    coord[last] += count;
    if (rank > 1 && coord[last] == sizes[last]) {
      coord[last] = 0;
      coord[last - 1] += rows;
      for (uint32_t d = last - 1; d > 0 && coord[d] == sizes[d]; --d) {
        coord[d] = 0;
        ++coord[d - 1];
      }
    }
  }
}

// The same as runs: fn(coord, count) where the run covers coord[rank - 1] .. coord[rank - 1] +
// count - 1.
template <class Fn>
void for_each_run(uint32_t rank, const Dims& sizes, uint64_t begin, uint64_t end, Fn&& fn) {
  for_each_block(rank, sizes, begin, end, [&](const Dims& first, uint64_t rows, uint64_t count) {
    Dims coord = first;
    for (uint64_t r = 1;; ++r) {
      fn(coord, count);
      if (r == rows) break;
      ++coord[rank - 2];  // rows > 1 implies rank > 1
    }
  });
}

// Work smaller than this runs on the calling thread: starting a team costs more than it saves.
inline constexpr uint64_t kParallelBytes = uint64_t{1} << 20;

inline constexpr uint64_t kMaxChunks = 1024;

// Chunks for `bytes` of work spread over the threads: at least 256 KiB each, a few per thread.
inline uint64_t chunk_count(uint64_t bytes) {
  if (bytes < kParallelBytes) return 1;
  const uint64_t per_thread = 4 * static_cast<uint64_t>(omp_get_max_threads());
  const uint64_t by_size = bytes / (uint64_t{256} << 10);
  return std::max<uint64_t>(1, std::min({by_size, per_thread, kMaxChunks}));
}

// fn(i) for each i in [0, n): on OpenMP's threads when `parallel` (schedule(static), or one index at a
// time with `dynamic`), else on the calling thread. Not an if() clause: a region whose if() is false
// still enters the OpenMP runtime, about a microsecond per region, more than a small input's work.
template <class Fn>
void for_each_index(uint64_t n, bool parallel, bool dynamic, Fn&& fn) {
  if (!parallel) {
    for (uint64_t i = 0; i < n; ++i) fn(i);
  } else if (dynamic) {
#pragma omp parallel for schedule(dynamic, 1)
    for (uint64_t i = 0; i < n; ++i) fn(i);
  } else {
#pragma omp parallel for schedule(static)
    for (uint64_t i = 0; i < n; ++i) fn(i);
  }
}

}  // namespace opendml::internal
