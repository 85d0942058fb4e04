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

// Visits the logical indices [begin, end) of `sizes` (row-major) as runs along the innermost
// dimension: fn(coord, count) where coord is the run's first coordinate and the run covers
// coord[rank - 1] .. coord[rank - 1] + count - 1.
template <class Fn>
void for_each_run(uint32_t rank, const Dims& sizes, uint64_t begin, uint64_t end, Fn&& fn) {
  Dims coord{};
  uint64_t rest = begin;
  for (uint32_t d = rank; d-- > 0;) {
    coord[d] = rest % sizes[d];
    rest /= sizes[d];
  }
  const uint32_t last = rank - 1;
  for (uint64_t i = begin; i < end;) {
    const uint64_t count = std::min(sizes[last] - coord[last], end - i);
    fn(coord, count);
    i += count;
    coord[last] += count;
    for (uint32_t d = last; d > 0 && coord[d] == sizes[d]; --d) {
      coord[d] = 0;
      ++coord[d - 1];
    }
  }
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
