// NONZERO_COORDINATES on the GPU in three kernels on one stream, none of which waits for another
// block or for the host:
//   1. flags: block b reads tile b (kThreads * kVectors 16-byte vectors, striped across the block so
//      that every load is coalesced), writes one bit per element to a bit mask in the temporary
//      region and the tile's non-zero count to offsets[b];
//   2. scan: one block turns the tile counts into exclusive offsets, offsets[tiles] and the count
//      output into the total;
//   3. coordinates: block b reads the tile's offset and bits (tiles without non-zeros stop there),
//      ranks the set bits with a block scan, stages their local indices in shared memory and writes
//      the coordinate words from there, consecutive threads to consecutive addresses.
// The input is read once; the mask (1 bit per element) is what the third kernel reads instead, and
// it is usually still in L2. A single-pass scan with decoupled look-back was measured slower
// (bench/NOTES.md): every tile waited on its predecessors' publications.
#include <algorithm>

#include "backends/cuda/cuda_backend.h"
#include "backends/cuda/cuda_status.h"
#include "backends/cuda/fast_divmod.h"

namespace opendml {
namespace {

constexpr uint32_t kThreads = 256;
constexpr uint32_t kVectors = 4;  // 16-byte loads per thread and tile, striped across the block
constexpr uint32_t kTileBytes = kThreads * kVectors * 16;
constexpr uint32_t kScanThreads = 1024;
constexpr uint32_t kScanPerThread = 16;

// 32-bit mask words per tile: one bit per element.
constexpr uint32_t tile_words(uint32_t element_bytes) { return kTileBytes / element_bytes / 32; }

// Coordinate j of logical index i is (i / inner[j]) % sizes[j].
struct Columns {
  FastDivmod inner[kMaxRank];
  FastDivmod sizes[kMaxRank];
};

struct NonzeroParams {
  const std::byte* input;
  uint32_t* count;
  uint32_t* coordinates;
  uint32_t* offsets;     // tiles + 1 words: tile counts, then exclusive offsets and the total
  uint32_t* flag_words;  // tiles * tile_words(element bytes): bit i of a tile is its element i
  uint32_t elements;
  uint32_t tiles;
  uint32_t value_mask;
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
      flags[k] = word_flags<T>(raw[k].x, p.value_mask) | word_flags<T>(raw[k].y, p.value_mask) << kPerWord |
                 word_flags<T>(raw[k].z, p.value_mask) << (2 * kPerWord) |
                 word_flags<T>(raw[k].w, p.value_mask) << (3 * kPerWord);
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
      f |= uint32_t{(static_cast<uint32_t>(bits) & p.value_mask) != 0} << e;
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

// Programmatic dependent launch (Hopper): a kernel launched after another with the
// programmatic-serialization attribute may start once every block of the one before has called
// allow_next_kernel(); wait_for_previous_kernel() then blocks until that kernel has finished and its
// writes are visible. The next kernel's launch latency hides behind the previous kernel's tail.
__device__ __forceinline__ void allow_next_kernel() {
#if __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

__device__ __forceinline__ void wait_for_previous_kernel() {
#if __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

// Exclusive prefix sum of v over the block's kBlock threads; `total` receives the block's sum.
template <uint32_t kBlock>
__device__ __forceinline__ uint32_t block_exclusive_sum(uint32_t v, uint32_t& total) {
  constexpr uint32_t kBlockWarps = kBlock / 32;
  __shared__ uint32_t warp_totals[kBlockWarps];
  const uint32_t lane = threadIdx.x & 31, warp = threadIdx.x / 32;
  const uint32_t inclusive = warp_inclusive_sum(v);
  if (lane == 31) warp_totals[warp] = inclusive;
  __syncthreads();
  uint32_t below = 0;
  total = 0;
#pragma unroll 8
  for (uint32_t w = 0; w < kBlockWarps; ++w) {
    const uint32_t t = warp_totals[w];
    below += w < warp ? t : 0;
    total += t;
  }
  __syncthreads();  // warp_totals is free for the next call
  return below + inclusive - v;
}

// Kernel 1. Element e of vector k of thread t is tile element (k * kThreads + t) * E + e, E = 16 /
// sizeof(T), so the E flag bits of kLanes = 32 / E neighbouring lanes make one mask word.
template <class T, bool kContiguous>
__global__ void __launch_bounds__(kThreads) flag_kernel(const NonzeroParams p) {
  constexpr uint32_t E = 16 / sizeof(T);
  constexpr uint32_t kLanes = 32 / E;
  const uint32_t lane = threadIdx.x & 31;
  allow_next_kernel();
  uint32_t flags[kVectors];
  load_flags<T, kContiguous>(p, blockIdx.x, flags);
  uint32_t* words = p.flag_words + uint64_t{blockIdx.x} * tile_words(sizeof(T));
  uint32_t count = 0;
#pragma unroll
  for (uint32_t k = 0; k < kVectors; ++k) {
    count += __popc(flags[k]);
    uint32_t word = flags[k] << (E * (lane % kLanes));
#pragma unroll
    for (uint32_t d = 1; d < kLanes; d *= 2) word |= __shfl_xor_sync(0xFFFFFFFFu, word, d);
    if (lane % kLanes == 0) words[(k * kThreads + threadIdx.x) / kLanes] = word;
  }
  uint32_t total;
  block_exclusive_sum<kThreads>(count, total);
  if (threadIdx.x == 0) p.offsets[blockIdx.x] = total;
}

// Kernel 2, one block: the tile counts become exclusive offsets, kScanThreads * kScanPerThread
// tiles a round.
__global__ void __launch_bounds__(kScanThreads) scan_kernel(const NonzeroParams p) {
  wait_for_previous_kernel();
  allow_next_kernel();  // only now: the next kernel's blocks must not take the SMs the flags need
  uint32_t carry = 0;
  for (uint32_t base = 0; base < p.tiles; base += kScanThreads * kScanPerThread) {
    const uint32_t first = base + threadIdx.x * kScanPerThread;
    uint32_t counts[kScanPerThread];
    uint32_t sum = 0;
#pragma unroll
    for (uint32_t j = 0; j < kScanPerThread; ++j) {
      counts[j] = first + j < p.tiles ? p.offsets[first + j] : 0;
      sum += counts[j];
    }
    uint32_t total;
    uint32_t running = carry + block_exclusive_sum<kScanThreads>(sum, total);
#pragma unroll
    for (uint32_t j = 0; j < kScanPerThread; ++j) {
      if (first + j < p.tiles) p.offsets[first + j] = running;
      running += counts[j];
    }
    carry += total;
  }
  if (threadIdx.x == 0) {
    p.offsets[p.tiles] = carry;
    *p.count = carry;
  }
}

// Kernel 3. Thread t ranks mask words [t * kWordsPerThread, (t + 1) * kWordsPerThread).
template <uint32_t kTileWords>
__global__ void __launch_bounds__(kThreads) coordinate_kernel(const NonzeroParams p) {
  constexpr uint32_t kWordsPerThread = (kTileWords + kThreads - 1) / kThreads;
  // Local indices of the tile's non-zeros, in order; entry r at padded(r), so that threads writing
  // runs of ranks 32 or 64 apart (dense tiles) do not all hit one shared-memory bank.
  __shared__ uint16_t selected[kTileWords * 32 + kTileWords * 32 / 32];
  const auto padded = [](uint32_t r) { return r + r / 32; };
  __shared__ alignas(16) uint32_t column_words[sizeof(Columns) / 4];
  const Columns& columns = *reinterpret_cast<const Columns*>(column_words);
  const uint32_t tile = blockIdx.x;
  const uint32_t* tile_flags = p.flag_words + uint64_t{tile} * kTileWords;
  wait_for_previous_kernel();
  uint32_t words[kWordsPerThread];
#pragma unroll
  for (uint32_t j = 0; j < kWordsPerThread; ++j) {
    const uint32_t w = threadIdx.x * kWordsPerThread + j;
    words[j] = w < kTileWords ? tile_flags[w] : 0;
  }
  const uint32_t first_row = p.offsets[tile];
  const uint32_t tile_total = p.offsets[tile + 1] - first_row;
  if (tile_total == 0) return;
  // Divisors indexed per lane by column: from shared memory, where lanes don't serialize.
  for (uint32_t i = threadIdx.x; i < sizeof(Columns) / 4; i += kThreads)
    column_words[i] = reinterpret_cast<const uint32_t*>(&p.column_tables)[i];

  uint32_t count = 0;
#pragma unroll
  for (uint32_t j = 0; j < kWordsPerThread; ++j) count += __popc(words[j]);
  uint32_t unused;
  uint32_t rank = block_exclusive_sum<kThreads>(count, unused);
#pragma unroll
  for (uint32_t j = 0; j < kWordsPerThread; ++j)
    for (uint32_t bits = words[j]; bits != 0; bits &= bits - 1)
      selected[padded(rank++)] = static_cast<uint16_t>((threadIdx.x * kWordsPerThread + j) * 32 + __ffs(bits) - 1);
  __syncthreads();

  // Write the coordinate words, consecutive threads to consecutive addresses.
  const uint32_t tile_begin = tile * kTileWords * 32;  // < elements < 2^32
  const auto write = [&](uint32_t row, uint32_t column) {
    const uint32_t index = tile_begin + selected[padded(row)];
    uint32_t outer, coordinate;
    columns.sizes[column].divmod(columns.inner[column].quotient(index), outer, coordinate);
    p.coordinates[(uint64_t{first_row} + row) * p.row_stride + uint64_t{column} * p.column_stride] = coordinate;
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

KernelFunction flag_kernel_for(uint32_t element_bytes, bool contiguous) {
  switch (element_bytes * 2 + contiguous) {
    case 2: return flag_kernel<uint8_t, false>;
    case 3: return flag_kernel<uint8_t, true>;
    case 4: return flag_kernel<uint16_t, false>;
    case 5: return flag_kernel<uint16_t, true>;
    case 8: return flag_kernel<uint32_t, false>;
    default: return flag_kernel<uint32_t, true>;
  }
}

KernelFunction coordinate_kernel_for(uint32_t element_bytes) {
  switch (element_bytes) {
    case 1: return coordinate_kernel<tile_words(1)>;
    case 2: return coordinate_kernel<tile_words(2)>;
    default: return coordinate_kernel<tile_words(4)>;
  }
}

// Launches kernel(p) as a programmatic dependent of the stream's previous kernel (see
// wait_for_previous_kernel).
Status launch_after_previous(KernelFunction kernel, uint32_t blocks, uint32_t threads, cudaStream_t stream,
                             const NonzeroParams& p) {
  static const bool pdl = !env_flag("OPENDML_NO_PDL");
  cudaLaunchAttribute attribute{};
  attribute.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attribute.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(blocks);
  config.blockDim = dim3(threads);
  config.stream = stream;
  config.attrs = &attribute;
  config.numAttrs = pdl ? 1 : 0;
  return cuda_status(cudaLaunchKernelEx(&config, kernel, p), "cuda.nonzero: launching");
}

class CudaNonzeroKernel final : public Kernel {
 public:
  CudaNonzeroKernel(const NonzeroPlan& plan, const CudaDevice& device) : ordinal_(device.ordinal()) {
    const bool contiguous = plan.read_rank == 1 && plan.read_strides[0] == 1 && plan.input_alignment >= 16;
    flag_kernel_ = flag_kernel_for(plan.element_bytes, contiguous);
    coordinate_kernel_ = coordinate_kernel_for(plan.element_bytes);
    const uint64_t tile_items = kTileBytes / plan.element_bytes;
    NonzeroParams& p = params_;
    p.elements = static_cast<uint32_t>(plan.element_count);
    p.tiles = static_cast<uint32_t>((plan.element_count + tile_items - 1) / tile_items);
    p.value_mask = plan.value_mask;
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
    offsets_bytes_ = (uint64_t{p.tiles} + 1) * 4 + 15 & ~uint64_t{15};
    flag_bytes_ = uint64_t{p.tiles} * tile_words(plan.element_bytes) * 4;
  }

  uint64_t temporary_bytes() const override { return offsets_bytes_ + flag_bytes_; }

  Status execute(const ExecuteArgs& args) const override {
    DeviceGuard guard(ordinal_);
    const auto stream = static_cast<cudaStream_t>(args.stream);
    NonzeroParams p = params_;
    p.input = args.inputs[0];
    p.count = reinterpret_cast<uint32_t*>(args.outputs[0]);
    p.coordinates = reinterpret_cast<uint32_t*>(args.outputs[1]);
    p.offsets = reinterpret_cast<uint32_t*>(args.temporary);
    p.flag_words = reinterpret_cast<uint32_t*>(args.temporary + offsets_bytes_);
    flag_kernel_<<<p.tiles, kThreads, 0, stream>>>(p);
    ODML_RETURN_IF_ERROR(check_launch("cuda.nonzero (flags)", stream));
    ODML_RETURN_IF_ERROR(launch_after_previous(scan_kernel, 1, kScanThreads, stream, p));
    ODML_RETURN_IF_ERROR(check_launch("cuda.nonzero (scan)", stream));
    ODML_RETURN_IF_ERROR(launch_after_previous(coordinate_kernel_, p.tiles, kThreads, stream, p));
    return check_launch("cuda.nonzero (coordinates)", stream);
  }

 private:
  int ordinal_;
  KernelFunction flag_kernel_ = nullptr;
  KernelFunction coordinate_kernel_ = nullptr;
  NonzeroParams params_{};
  uint64_t offsets_bytes_ = 0;
  uint64_t flag_bytes_ = 0;
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
