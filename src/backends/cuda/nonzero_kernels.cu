// NONZERO_COORDINATES on the GPU in one pass over the input: a single-pass scan with decoupled
// look-back (Merrill and Garland, "Single-pass Parallel Prefix Scan with Decoupled Look-back").
//
// Block b handles tile b: kThreads * kVectors 16-byte vectors of input, read striped across the
// block so that every load instruction is coalesced. It flags the non-zero elements, counts them
// with a block scan, and publishes the count in the tile's status word. Warp 0 then reads its
// predecessors' statuses, summing counts until it meets a tile that has published its inclusive
// prefix, which gives the tile's first output row; it publishes its own inclusive prefix in turn.
// The block stages the local indices of its non-zeros in shared memory and writes the coordinate
// words from there, consecutive threads to consecutive addresses. The last tile writes the count.
//
// Tile b waits only for tiles below b. Like CUB's single-pass scans, this relies on the GPU
// starting a grid's blocks in index order, so that a waited-for block is always running. (Tiles
// handed out by an atomic counter would not rely on it, but they add a round trip before each
// tile's first publication, which every later tile waits for; the versions that used one measured
// no faster: bench/NOTES.md.)
// Nothing waits for the host; the statuses are cleared by a memset node on the same stream.
#include <algorithm>

#include "backends/cuda/cuda_backend.h"
#include "backends/cuda/cuda_status.h"
#include "backends/cuda/fast_divmod.h"

namespace opendml {
namespace {

constexpr uint32_t kThreads = 256;
constexpr uint32_t kWarps = kThreads / 32;
constexpr uint32_t kVectors = 4;  // 16-byte loads per thread and tile, striped across the block
constexpr uint32_t kTileBytes = kThreads * kVectors * 16;

// Tile status words: the status in the high half, a count in the low half.
constexpr uint64_t kAggregate = uint64_t{1} << 32;  // the tile's own count is known
constexpr uint64_t kInclusive = uint64_t{2} << 32;  // the count of this tile and all before it is known

__device__ __forceinline__ uint64_t load_relaxed(const uint64_t* p) {
  uint64_t v;
  asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}

__device__ __forceinline__ void store_relaxed(uint64_t* p, uint64_t v) {
  asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

// Coordinate j of logical index i is (i / inner[j]) % sizes[j].
struct Columns {
  FastDivmod inner[kMaxRank];
  FastDivmod sizes[kMaxRank];
};

struct NonzeroParams {
  const std::byte* input;
  uint32_t* count;
  uint32_t* coordinates;
  uint64_t* statuses;
  uint32_t elements;
  uint32_t tiles;
  uint32_t mask;
  // Reading a strided input: logical index -> element offset.
  uint32_t read_rank;
  FastDivmod read_sizes[kMaxRank];
  uint32_t read_strides[kMaxRank];
  // Writing: word w of a tile is row w / N, column w % N when rows are contiguous in memory, else
  // the words go column by column.
  uint32_t columns;  // N
  FastDivmod columns_div;
  Columns column_tables;
  uint32_t row_stride, column_stride;
  bool row_major;
};

__device__ __forceinline__ uint32_t element_offset(const NonzeroParams& p, uint32_t index) {
  uint32_t offset = 0;
  for (uint32_t d = p.read_rank - 1; d > 0; --d) {
    uint32_t q, r;
    p.read_sizes[d].divmod(index, q, r);
    offset += r * p.read_strides[d];
    index = q;
  }
  return offset + index * p.read_strides[0];
}

// Bit e: element e of the 4 / sizeof(T) elements packed in `word` is non-zero. SIMD within the
// word: adding 0x7F.. to each lane's low bits carries into its high bit exactly when they are not
// all zero; a multiply gathers the lanes' high bits.
template <class T>
__device__ __forceinline__ uint32_t word_flags(uint32_t word, uint32_t mask) {
  if constexpr (sizeof(T) == 4) {
    return (word & mask) != 0;
  } else if constexpr (sizeof(T) == 2) {
    const uint32_t y = word & (mask | mask << 16);
    const uint32_t high = ((y & 0x7FFF7FFFu) + 0x7FFF7FFFu | y) & 0x80008000u;
    return (high >> 15 & 1u) | (high >> 30 & 2u);
  } else {
    const uint32_t y = word & (mask * 0x01010101u);
    const uint32_t high = ((y & 0x7F7F7F7Fu) + 0x7F7F7F7Fu | y) & 0x80808080u;
    return ((high >> 7) * 0x00204081u) >> 21 & 0xFu;
  }
}

// Element e of vector k of this thread has tile-local index k * kThreads * E + threadIdx.x * E + e,
// E = 16 / sizeof(T): consecutive threads read consecutive 16 bytes. Bit e of flags[k] is set
// when that element is non-zero.
template <class T>
__device__ __forceinline__ bool full_tile(const NonzeroParams& p, uint32_t tile) {
  constexpr uint64_t kTileItems = kTileBytes / sizeof(T);
  return tile < p.tiles && (uint64_t{tile} + 1) * kTileItems <= p.elements;
}

template <class T, bool kContiguous>
__device__ __forceinline__ void load_flags(const NonzeroParams& p, uint32_t tile, uint32_t (&flags)[kVectors]) {
  constexpr uint32_t E = 16 / sizeof(T);
  if (kContiguous && full_tile<T>(p, tile)) {
    const uint4* v = reinterpret_cast<const uint4*>(p.input) + uint64_t{tile} * kThreads * kVectors;
    uint4 raw[kVectors];
#pragma unroll
    for (uint32_t k = 0; k < kVectors; ++k) raw[k] = v[k * kThreads + threadIdx.x];
#pragma unroll
    for (uint32_t k = 0; k < kVectors; ++k) {
      constexpr uint32_t kPerWord = 4 / sizeof(T);
      flags[k] = word_flags<T>(raw[k].x, p.mask) | word_flags<T>(raw[k].y, p.mask) << kPerWord |
                 word_flags<T>(raw[k].z, p.mask) << (2 * kPerWord) | word_flags<T>(raw[k].w, p.mask) << (3 * kPerWord);
    }
    return;
  }
  // A strided input, or the last, partial tile.
  const uint32_t tile_begin = tile * kThreads * kVectors * E;
#pragma unroll 1
  for (uint32_t k = 0; k < kVectors; ++k) {
    uint32_t f = 0;
    const uint32_t first = tile_begin + k * kThreads * E + threadIdx.x * E;
#pragma unroll 4
    for (uint32_t e = 0; e < E; ++e) {
      if (uint64_t{first} + e >= p.elements) break;
      const uint32_t index = first + e;
      const T bits = reinterpret_cast<const T*>(p.input)[kContiguous ? index : element_offset(p, index)];
      f |= uint32_t{(static_cast<uint32_t>(bits) & p.mask) != 0} << e;
    }
    flags[k] = f;
  }
}

template <class V>
__device__ __forceinline__ V warp_inclusive_sum(V v) {
  const uint32_t lane = threadIdx.x & 31;
#pragma unroll
  for (uint32_t d = 1; d < 32; d *= 2) {
    const V up = __shfl_up_sync(0xFFFFFFFFu, v, d);
    if (lane >= d) v += up;
  }
  return v;
}

__device__ __forceinline__ uint32_t warp_sum(uint32_t v) {
#pragma unroll
  for (uint32_t d = 16; d > 0; d /= 2) v += __shfl_xor_sync(0xFFFFFFFFu, v, d);
  return v;
}

// Warp 0: the number of non-zeros in tiles [0, tile). Each pass reads a window of the 128 nearest
// unread predecessors, four per lane (lane 0 the nearest), and sums counts up to the nearest
// inclusive prefix; without one, it sums the window and reads the next.
constexpr uint32_t kLookBackPerLane = 4;

__device__ uint32_t look_back(const NonzeroParams& p, uint32_t tile) {
  const uint32_t lane = threadIdx.x & 31;
  uint32_t prefix = 0;
  int64_t nearest = int64_t{tile} - 1;
  while (true) {
    // Wait until the window is known from the nearest predecessor back to the first inclusive
    // prefix (or to its end): later statuses don't matter.
    uint64_t status[kLookBackPerLane];
    uint32_t sum = 0;
    bool found = false;
    uint32_t sleep = 8;
    while (true) {
#pragma unroll
      for (uint32_t j = 0; j < kLookBackPerLane; ++j) {
        const int64_t predecessor = nearest - lane * kLookBackPerLane - j;
        status[j] = predecessor >= 0 ? load_relaxed(&p.statuses[predecessor]) : kInclusive;
      }
      bool ready = true;  // every status up to this lane's first inclusive prefix is published
      sum = 0;
      found = false;
#pragma unroll
      for (uint32_t j = 0; j < kLookBackPerLane; ++j) {
        if (found) break;
        ready = ready && (status[j] >> 32) != 0;
        sum += static_cast<uint32_t>(status[j]);
        found = ready && (status[j] & ~uint64_t{0xFFFFFFFFu}) == kInclusive;
      }
      const uint32_t stops = __ballot_sync(0xFFFFFFFFu, found);
      const uint32_t complete = __ballot_sync(0xFFFFFFFFu, ready);
      // Lanes up to the first one that stops must be complete.
      const uint32_t needed = stops ? 0xFFFFFFFFu >> (31 - (__ffs(stops) - 1)) : 0xFFFFFFFFu;
      if ((complete & needed) == needed) break;
      __nanosleep(sleep);
      sleep = min(sleep * 2, 256u);
    }
    const uint32_t inclusive = __ballot_sync(0xFFFFFFFFu, found);
    if (inclusive != 0) {
      const uint32_t stop = __ffs(inclusive) - 1;
      return prefix + warp_sum(lane <= stop ? sum : 0);
    }
    prefix += warp_sum(sum);
    nearest -= 32 * kLookBackPerLane;
  }
}

template <class T, bool kContiguous>
__global__ void __launch_bounds__(kThreads) nonzero_kernel(const NonzeroParams p) {
  constexpr uint32_t E = 16 / sizeof(T);
  constexpr uint32_t kTileItems = kThreads * kVectors * E;
  static_assert(kVectors * 16 <= 64, "the per-vector counts are packed in 16-bit fields of a 64-bit scan");
  __shared__ uint32_t prefix_shared;
  __shared__ uint64_t total_shared;  // the four regions' counts, 16 bits each
  __shared__ uint64_t warp_offsets[kWarps];
  __shared__ uint16_t selected[kTileItems];  // local indices of the tile's non-zeros, in order
  __shared__ alignas(16) uint32_t column_words[sizeof(Columns) / 4];
  const Columns& columns = *reinterpret_cast<const Columns*>(column_words);
  const uint32_t lane = threadIdx.x & 31, warp = threadIdx.x / 32;
  const uint32_t tile = blockIdx.x;
  const uint32_t tile_begin = tile * kTileItems;  // < elements < 2^32

  uint32_t flags[kVectors];
  load_flags<T, kContiguous>(p, tile, flags);
  // Divisors indexed per lane by column: from shared memory, where lanes don't serialize.
  for (uint32_t i = threadIdx.x; i < sizeof(Columns) / 4; i += kThreads)
    column_words[i] = reinterpret_cast<const uint32_t*>(&p.column_tables)[i];

  // Block scan of the per-vector counts, four 16-bit fields at once.
  uint64_t mine = 0;
#pragma unroll
  for (uint32_t k = 0; k < kVectors; ++k) mine |= uint64_t{static_cast<uint32_t>(__popc(flags[k]))} << (16 * k);
  const uint64_t inclusive = warp_inclusive_sum(mine);
  if (lane == 31) warp_offsets[warp] = inclusive;
  __syncthreads();
  if (warp == 0) {
    const uint64_t total = lane < kWarps ? warp_offsets[lane] : 0;
    const uint64_t running = warp_inclusive_sum(total);
    __syncwarp();
    if (lane < kWarps) warp_offsets[lane] = running - total;
    const uint64_t packed_total = __shfl_sync(0xFFFFFFFFu, running, 31);
    uint32_t tile_total = 0;
#pragma unroll
    for (uint32_t k = 0; k < kVectors; ++k) tile_total += (packed_total >> (16 * k)) & 0xFFFF;

    // Publish the tile's count, learn its first row, publish its inclusive prefix.
    uint32_t prefix = 0;
    if (tile == 0) {
      if (lane == 0) store_relaxed(&p.statuses[0], kInclusive | tile_total);
    } else {
      if (lane == 0) store_relaxed(&p.statuses[tile], kAggregate | tile_total);
      prefix = look_back(p, tile);
      if (lane == 0) store_relaxed(&p.statuses[tile], kInclusive | (prefix + tile_total));
    }
    if (lane == 0) {
      prefix_shared = prefix;
      total_shared = packed_total;
      if (tile == p.tiles - 1) *p.count = prefix + tile_total;
    }
  }
  __syncthreads();

  // Stage the local indices of this thread's non-zeros at their ranks.
  const uint64_t packed_total = total_shared;
  if (packed_total == 0) return;
  const uint64_t exclusive = warp_offsets[warp] + inclusive - mine;
  uint32_t tile_total = 0;
#pragma unroll
  for (uint32_t k = 0; k < kVectors; ++k) {
    uint32_t rank = tile_total + static_cast<uint32_t>((exclusive >> (16 * k)) & 0xFFFF);
    for (uint32_t bits = flags[k]; bits != 0; bits &= bits - 1)
      selected[rank++] = static_cast<uint16_t>(k * kThreads * E + threadIdx.x * E + __ffs(bits) - 1);
    tile_total += static_cast<uint32_t>((packed_total >> (16 * k)) & 0xFFFF);
  }
  __syncthreads();

  // Write the coordinate words, consecutive threads to consecutive addresses.
  const uint64_t first_row = prefix_shared;
  const auto write = [&](uint32_t row, uint32_t column) {
    const uint32_t index = tile_begin + selected[row];
    uint32_t outer, coordinate;
    columns.sizes[column].divmod(columns.inner[column].quotient(index), outer, coordinate);
    p.coordinates[(first_row + row) * p.row_stride + uint64_t{column} * p.column_stride] = coordinate;
  };
  if (p.row_major) {
    for (uint32_t w = threadIdx.x; w < tile_total * p.columns; w += kThreads) {
      uint32_t row, column;
      p.columns_div.divmod(w, row, column);
      write(row, column);
    }
  } else {
    for (uint32_t column = 0; column < p.columns; ++column)
      for (uint32_t row = threadIdx.x; row < tile_total; row += kThreads) write(row, column);
  }
}

using KernelFunction = void (*)(NonzeroParams);

KernelFunction kernel_for(uint32_t element_bytes, bool contiguous) {
  switch (element_bytes * 2 + contiguous) {
    case 2: return nonzero_kernel<uint8_t, false>;
    case 3: return nonzero_kernel<uint8_t, true>;
    case 4: return nonzero_kernel<uint16_t, false>;
    case 5: return nonzero_kernel<uint16_t, true>;
    case 8: return nonzero_kernel<uint32_t, false>;
    default: return nonzero_kernel<uint32_t, true>;
  }
}

class CudaNonzeroKernel final : public Kernel {
 public:
  CudaNonzeroKernel(const NonzeroPlan& plan, const CudaDevice& device) : ordinal_(device.ordinal()) {
    const bool contiguous = plan.read_rank == 1 && plan.read_strides[0] == 1 && plan.input_alignment >= 16;
    kernel_ = kernel_for(plan.element_bytes, contiguous);
    const uint64_t tile_items = kTileBytes / plan.element_bytes;
    NonzeroParams& p = params_;
    p.elements = static_cast<uint32_t>(plan.element_count);
    p.tiles = static_cast<uint32_t>((plan.element_count + tile_items - 1) / tile_items);
    p.mask = plan.value_mask;
    p.read_rank = plan.read_rank;
    for (uint32_t d = 0; d < plan.read_rank; ++d) {
      p.read_sizes[d] = FastDivmod(static_cast<uint32_t>(plan.read_sizes[d]));
      p.read_strides[d] = static_cast<uint32_t>(plan.read_strides[d]);
    }
    p.columns = plan.rank;
    p.columns_div = FastDivmod(plan.rank);
    uint64_t inner = 1;
    for (uint32_t j = plan.rank; j-- > 0;) {
      p.column_tables.inner[j] = FastDivmod(static_cast<uint32_t>(inner));
      p.column_tables.sizes[j] = FastDivmod(static_cast<uint32_t>(plan.sizes[j]));
      inner *= plan.sizes[j];
    }
    p.row_stride = static_cast<uint32_t>(plan.row_stride);
    p.column_stride = static_cast<uint32_t>(plan.column_stride);
    p.row_major = plan.column_stride <= plan.row_stride;
  }

  uint64_t temporary_bytes() const override { return uint64_t{params_.tiles} * 8; }

  Status execute(const ExecuteArgs& args) const override {
    DeviceGuard guard(ordinal_);
    const auto stream = static_cast<cudaStream_t>(args.stream);
    ODML_RETURN_IF_ERROR(cuda_status(cudaMemsetAsync(args.temporary, 0, temporary_bytes(), stream),
                                     "cuda.nonzero: clearing the scan state"));
    NonzeroParams p = params_;
    p.input = args.inputs[0];
    p.count = reinterpret_cast<uint32_t*>(args.outputs[0]);
    p.coordinates = reinterpret_cast<uint32_t*>(args.outputs[1]);
    p.statuses = reinterpret_cast<uint64_t*>(args.temporary);
    kernel_<<<p.tiles, kThreads, 0, stream>>>(p);
    return check_launch("cuda.nonzero", stream);
  }

 private:
  int ordinal_;
  KernelFunction kernel_ = nullptr;
  NonzeroParams params_{};
};

}  // namespace

std::string cuda_nonzero_declines(const NonzeroPlan& plan, const CudaDevice&) {
  if (plan.element_bytes > 4) return cat(plan.element_bytes, "-byte elements");
  return "";
}

std::unique_ptr<Kernel> make_cuda_nonzero_kernel(const NonzeroPlan& plan, const CudaDevice& device) {
  return std::make_unique<CudaNonzeroKernel>(plan, device);
}

}  // namespace opendml
