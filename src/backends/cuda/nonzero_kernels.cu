// NONZERO_COORDINATES on the GPU in one launch (cooperative, or one cluster where the grid has a few
// blocks) that never waits for the host:
//
//   phase 1: each block takes a contiguous range of tiles. For each tile (kThreads * kVectors
//            16-byte vectors, read striped across the block so that every load is coalesced) it
//            makes one bit per element (the tile's mask words) and each warp's count of non-zeros.
//            Only the block itself reads them back, so they stay in shared memory (Kept), as many
//            tiles' worth as the resident blocks leave room for; only the rest go to the temporary
//            region. No warp waits for another: the loads of the next tile are issued before the
//            current one's flags are worked out, so two tiles per block are in flight.
//   grid barrier (cooperative_groups: every block is resident by construction of the grid; a block
//            barrier where the grid is one block, the cluster's barrier where a grid of a few blocks
//            is launched as one cluster), split in two: between arriving and waiting, a block ranks
//            and stages its first group of tiles, which needs nothing from the others.
//   phase 2: a block's first output row is the sum of the totals of the blocks before it (a few
//            hundred to a few thousand words, read from L2). For each group of its tiles with
//            non-zeros (group_tiles: a mask word per thread at least; the warps' counts summed) it
//            ranks the mask's set bits with a block scan, stages their local indices in shared
//            memory and writes the coordinates from there, a row per thread (a 16-byte part per
//            thread for rows wider than 16 bytes), consecutive threads to consecutive rows; the next
//            group's mask words are loaded meanwhile. The last block writes the count.
//            Where blocks have kPoolTiles tiles or more, the last of each block's groups go to a
//            pool: their owner only publishes their first rows, and blocks done with their own
//            groups claim them one at a time (write_pool), so that the GPU does not end the call
//            writing with ever fewer blocks.
//
// The input is read once; phase 2 reads the mask (1 bit per element) from shared memory or, past
// the kept tiles, usually from L2. Earlier versions (bench/NOTES.md): a single-pass scan with
// decoupled look-back, where every tile waited on its predecessors' publications (0.40 of a copy at
// density 0), and three kernels (flags, scan, coordinates), which paid three launches. A single
// pass built from this file's own parts (cuda.lookback, lookback_kernel below) reaches 0.66-0.72 of
// the copy from 2^24 elements, so it runs only inputs of one tile: one plain block, where this
// kernel would be one block of a cooperative launch.
#include <cooperative_groups.h>

#include <algorithm>
#include <cuda/atomic>
#include <initializer_list>
#include <utility>

#include "backends/cuda/cuda_backend.h"
#include "backends/cuda/cuda_status.h"
#include "backends/cuda/fast_divmod.h"
#include "backends/cuda/word_flags.h"
#include "core/arithmetic.h"

namespace opendml::internal {
namespace {

// The kernel's tuning, printed by OPENDML_VERBOSE=1; bench/NOTES.md logs what each value measured.
constexpr uint32_t kThreads = 256;
constexpr uint32_t kWarps = kThreads / 32;
constexpr uint32_t kVectors = 4;  // 16-byte loads per thread and tile, striped across the block
constexpr uint32_t kTileBytes = kThreads * kVectors * 16;
constexpr uint32_t kPassTiles = kThreads / kWarps;  // phase 2 reads the counts of this many tiles at once
// Blocks of at least this many tiles take an odd number: blocks whose ranges start a multiple of
// 64 KiB apart read 6% slower all at once (float32 at 2^28: 100 tiles a block; 1.036x with 101).
constexpr uint32_t kOddRangeTiles = 64;
// A grid takes one block an SM fewer than fit where that leaves the SM with the most tiles this many
// times fewer: uint8 at 2^26 on an H200 made 586 blocks of 7 tiles at five an SM, 35 tiles on 58 SMs,
// where four an SM make 512 blocks of 8 and 32 tiles at most (bench/NOTES.md, "one block an SM fewer").
constexpr double kBalanceGain = 1.05;
// Blocks of at least kPoolTiles tiles leave the last 1/kPoolShare of their groups (kPassTiles tiles
// at most) to a pool that whichever block is done with its own groups first writes: blocks of the
// same work end phase 2 up to 140 us apart at 2^28 elements (1.04x at 2^28, 1.03x at 2^26; at 8
// tiles a block the claims cost more than they win; from 12, float16 at 2^26, 13 tiles a block at
// five an SM, takes the pooled grid: 1.019x). One-byte elements keep no pool: its code alone cost
// their kernels 8-15% (bench/NOTES.md, "A pool of each block's last groups", "kPoolTiles 12").
constexpr uint32_t kPoolTiles = 12;
constexpr uint32_t kPoolShare = 4;
// Grids of 2 to kClusterBlocks blocks (inputs of up to 8 tiles) launch as one thread block cluster,
// on GPUs that have them, and their grid barrier is the cluster's, in hardware, instead of
// cooperative groups' counter in global memory: 1.06x at 2^14 float32 elements (bench/NOTES.md,
// "NONZERO: small grids as one cluster"). 8 is the largest cluster every GPU with clusters launches.
constexpr uint32_t kClusterBlocks = 8;
constexpr bool pools(uint32_t element_bytes) { return element_bytes >= 2; }
// pool_rows' value until the owner has published it.
constexpr uint64_t kRowPending = ~uint64_t{0};

// Whether this grid is one cluster of blocks (execute launches it so where it has 2 to kClusterBlocks
// blocks, the GPU has clusters and the kernel was compiled for sm_90 or later): the same answer in
// every thread of the grid.
__device__ __forceinline__ bool grid_is_one_cluster() {
#if __CUDA_ARCH__ >= 900
  return gridDim.x > 1 && cooperative_groups::this_cluster().num_blocks() == gridDim.x;
#else
  return false;
#endif
}

// The grid barrier, in two halves (every thread calls both): the cluster's barrier where the grid is
// one cluster (its arrive releases and its wait acquires the blocks' earlier writes, block_totals
// among them), a block barrier where the grid is one block, cooperative groups' grid barrier
// otherwise (a cooperative launch).
class GridBarrier {
 public:
  __device__ __forceinline__ void arrive() {
    if (gridDim.x == 1) {
      __syncthreads();
    } else if (cluster_) {
#if __CUDA_ARCH__ >= 900
      cooperative_groups::this_cluster().barrier_arrive();
#endif
    } else {
      arrival_ = grid_.barrier_arrive();
    }
  }
  __device__ __forceinline__ void wait() {
    if (gridDim.x == 1) return;
    if (cluster_) {
#if __CUDA_ARCH__ >= 900
      cooperative_groups::this_cluster().barrier_wait();
#endif
    } else {
      grid_.barrier_wait(std::move(arrival_));
    }
  }

 private:
  const bool cluster_ = grid_is_one_cluster();
  const cooperative_groups::grid_group grid_ = cooperative_groups::this_grid();
  cooperative_groups::grid_group::arrival_token arrival_ = 0;
};

// 32-bit mask words per tile: one bit per element.
constexpr uint32_t tile_words(uint32_t element_bytes) { return kTileBytes / element_bytes / 32; }

// Phase 2 ranks and writes a block's tiles in groups of this many, so that every thread holds a mask
// word at least: two tiles of 4-byte elements (128 words each), one of narrower types.
constexpr uint32_t group_tiles(uint32_t element_bytes) {
  return kThreads > tile_words(element_bytes) ? kThreads / tile_words(element_bytes) : 1;
}

// Dense rows wider than 16 bytes are stored as this many 16-byte parts, by as many neighbouring
// lanes (write_rows).
constexpr uint32_t row_parts(uint32_t columns, uint32_t coordinate_bytes) {
  const uint32_t row_bytes = columns * coordinate_bytes;
  return row_bytes >= 32 && row_bytes % 16 == 0 ? row_bytes / 16 : 1;
}

// Index: the type of logical indices, row numbers and element offsets: uint32_t, or uint64_t for
// inputs past 2^32 - 1 elements (64-bit indices, docs/contract.md section 7), where division is
// plain 64-bit division rather than FastDivmod.
struct NonzeroParams {
  const std::byte* input;
  void* count;             // count_bytes wide
  void* coordinates;       // each coordinate as wide as the kernel's C
  uint32_t* block_totals;  // a word per block (a block's range of any input that fits on a GPU)
  // The tiles of a block past its first kept_tiles (Kept) have slots here, spilled_tiles a block:
  uint32_t* warp_counts;  // kWarps words a slot: the non-zeros each warp found in the tile
  uint32_t* flag_words;   // tile_words(element bytes) a slot: bit i is the tile's element i
  // The pool (kPoolTiles): a block's tiles past own_tiles, pool_groups groups, are always spilled, and
  // written by whichever block claims them first, in the order of *claims (a count over the grid).
  // Their owner publishes each one's rows in pool_rows: pool_groups + 1 words a block, the pool's first
  // row and each group's end row, kRowPending until then.
  uint32_t* claims;
  uint64_t* pool_rows;
  uint64_t* statuses;  // cuda.lookback's: a word a tile; none for one tile (lookback_kernel)
  uint64_t elements;
  uint32_t tiles;
  uint32_t tiles_per_block;
  uint32_t own_tiles;    // tiles_per_block less the pool's: a multiple of group_tiles where there is a pool
  uint32_t pool_groups;  // 0: no pool
  uint32_t kept_tiles;   // a multiple of group_tiles, or tiles_per_block; at most own_tiles
  uint32_t spilled_tiles;
  uint32_t value_mask;
  uint32_t count_bytes;
  // Reading a strided input: logical index -> element offset.
  uint32_t read_rank;
  FastDivmod read_sizes[kMaxRank];  // narrow indices
  uint32_t read_strides[kMaxRank];
  uint64_t wide_read_sizes[kMaxRank];  // wide indices
  uint64_t wide_read_strides[kMaxRank];
  // Writing: row m, coordinate j goes to coordinates[m * row_stride + j * column_stride]; the
  // coordinates of logical index i are unravel(i, column_sizes).
  uint32_t columns;  // N
  FastDivmod column_sizes[kMaxRank];
  uint64_t row_stride, column_stride;
  uint64_t column_offsets[kMaxRank];  // added to coordinate j (zero without the extension)
  uint64_t fill_values[kMaxRank];     // coordinate j of the rows past the count, with fill_rows
  bool fill_rows;
  bool dense_rows;   // NonzeroPlan::dense_rows()
  bool vector_rows;  // rows are dense, of 8 bytes or a multiple of 16, aligned to min(row bytes, 16)
};

// q = n / divisor, r = n % divisor for dimension d of the sizes `sizes` (read or column).
__device__ __forceinline__ void divmod(const FastDivmod& f, uint32_t n, uint32_t& q, uint32_t& r) { f.divmod(n, q, r); }
__device__ __forceinline__ void divmod(const FastDivmod& f, uint64_t n, uint64_t& q, uint64_t& r) {
  q = n / f.divisor;
  r = n - q * f.divisor;
}

template <class Index>
__device__ __forceinline__ Index element_offset(const NonzeroParams& p, Index index) {
  Index offset = 0;
  if constexpr (sizeof(Index) == 4) {
    for (uint32_t d = p.read_rank - 1; d > 0; --d) {
      uint32_t q, r;
      p.read_sizes[d].divmod(index, q, r);
      offset += r * p.read_strides[d];
      index = q;
    }
    return offset + index * p.read_strides[0];
  } else {
    for (uint32_t d = p.read_rank - 1; d > 0; --d) {
      const uint64_t q = index / p.wide_read_sizes[d];
      offset += (index - q * p.wide_read_sizes[d]) * p.wide_read_strides[d];
      index = q;
    }
    return offset + index * p.wide_read_strides[0];
  }
}

// Element e of vector k of this thread has tile-local index k * kThreads * E + threadIdx.x * E + e,
// E = 16 / sizeof(T): consecutive threads read consecutive 16 bytes. Bit e of flags[k] is set
// when that element is non-zero.
//
// A full tile of a contiguous input: its 16-byte vectors, read past L1 and marked for early eviction
// from L2 (the input is read once; the mask that phase 2 reads back should stay in L2).
__device__ __forceinline__ void load_vectors(const NonzeroParams& p, uint32_t tile, uint4 (&raw)[kVectors]) {
  const uint4* v = reinterpret_cast<const uint4*>(p.input) + uint64_t{tile} * kThreads * kVectors;
#pragma unroll
  for (uint32_t k = 0; k < kVectors; ++k) raw[k] = __ldcs(v + k * kThreads + threadIdx.x);
}

template <class T>
__device__ __forceinline__ void vector_flags(const NonzeroParams& p, const uint4 (&raw)[kVectors],
                                             uint32_t (&flags)[kVectors]) {
  constexpr uint32_t kPerWord = 4 / sizeof(T);
#pragma unroll
  for (uint32_t k = 0; k < kVectors; ++k)
    flags[k] = word_flags<T>(raw[k].x, p.value_mask) | word_flags<T>(raw[k].y, p.value_mask) << kPerWord |
               word_flags<T>(raw[k].z, p.value_mask) << (2 * kPerWord) |
               word_flags<T>(raw[k].w, p.value_mask) << (3 * kPerWord);
}

// A strided input, or the last, partial tile: element by element.
template <class T, bool kContiguous, class Index>
__device__ __forceinline__ void load_flags(const NonzeroParams& p, uint32_t tile, uint32_t (&flags)[kVectors]) {
  constexpr uint32_t E = 16 / sizeof(T);
  const Index tile_begin = Index{tile} * (kThreads * kVectors * E);
#pragma unroll 1
  for (uint32_t k = 0; k < kVectors; ++k) {
    uint32_t f = 0;
    const Index first = tile_begin + k * kThreads * E + threadIdx.x * E;
#pragma unroll 4
    for (uint32_t e = 0; e < E; ++e) {
      if (uint64_t{first} + e >= p.elements) break;
      const Index index = first + e;
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

// Exclusive prefix sum of v over the block's kBlock threads; `total` receives the block's sum.
template <uint32_t kBlock, class V>
__device__ __forceinline__ V block_exclusive_sum(V v, V& total) {
  constexpr uint32_t kBlockWarps = kBlock / 32;
  __shared__ V warp_totals[kBlockWarps];
  const uint32_t lane = threadIdx.x & 31, warp = threadIdx.x / 32;
  const V inclusive = warp_inclusive_sum(v);
  if (lane == 31) warp_totals[warp] = inclusive;
  __syncthreads();
  V below = 0;
  total = 0;
#pragma unroll 8
  for (uint32_t w = 0; w < kBlockWarps; ++w) {
    const V t = warp_totals[w];
    below += w < warp ? t : 0;
    total += t;
  }
  __syncthreads();  // warp_totals is free for the next call
  return below + inclusive - v;
}

// The kept region: dynamic shared memory, sized per plan (CudaNonzeroKernel).
extern __shared__ uint4 kept_region[];

// What phase 1 finds in a block's tiles, for phase 2 of the same block: a tile's mask words and its
// warps' counts of non-zeros, in shared memory for the block's first p.kept_tiles tiles and in the
// block's p.spilled_tiles slots of the temporary region (p.flag_words, p.warp_counts) past them.
template <class T>
struct Kept {
  static constexpr uint32_t kTileWords = tile_words(sizeof(T));
  uint32_t* words;        // p.kept_tiles * kTileWords
  uint32_t* warp_counts;  // p.kept_tiles * kWarps, after them

  __device__ explicit Kept(const NonzeroParams& p)
      : words(reinterpret_cast<uint32_t*>(kept_region)), warp_counts(words + p.kept_tiles * kTileWords) {}

  // Where tile `tile` of a block whose first tile is `first` keeps them.
  __device__ __forceinline__ uint32_t* mask_of(const NonzeroParams& p, uint32_t first, uint32_t tile) {
    return slot<kTileWords>(words, p, p.flag_words, blockIdx.x, tile - first);
  }
  __device__ __forceinline__ uint32_t* warp_counts_of(const NonzeroParams& p, uint32_t first, uint32_t tile) {
    return slot<kWarps>(warp_counts, p, p.warp_counts, blockIdx.x, tile - first);
  }
  // The mask of tile number i of block `block`, where i is one of its pooled tiles (always spilled).
  static __device__ __forceinline__ uint32_t* pooled_mask_of(const NonzeroParams& p, uint32_t block, uint32_t i) {
    return slot<kTileWords>(nullptr, p, p.flag_words, block, i);
  }

 private:
  // The kWords words of block `block`'s tile number i: kept, or in the block's spilled slots.
  template <uint32_t kWords>
  static __device__ __forceinline__ uint32_t* slot(uint32_t* kept, const NonzeroParams& p, uint32_t* spilled,
                                                   uint32_t block, uint32_t i) {
    if (i < p.kept_tiles) return kept + i * kWords;
    return spilled + (uint64_t{block} * p.spilled_tiles + (i - p.kept_tiles)) * kWords;
  }
};

// Phase 1 for one tile: writes its mask words to `words` and the warp's count of non-zeros to
// warp_counts[warp], and returns that count (the same in every lane). Element e of vector k of
// thread t is tile element (k * kThreads + t) * E + e, E = 16 / sizeof(T), so the E flag bits of
// kLanes = 32 / E neighbouring lanes make one mask word.
template <class T>
__device__ __forceinline__ uint32_t store_flags(uint32_t* words, uint32_t* warp_counts,
                                                const uint32_t (&flags)[kVectors]) {
  constexpr uint32_t E = 16 / sizeof(T);
  constexpr uint32_t kLanes = 32 / E;
  const uint32_t lane = threadIdx.x & 31;
  uint32_t count = 0;
#pragma unroll
  for (uint32_t k = 0; k < kVectors; ++k) {
    count += __popc(flags[k]);
    uint32_t word = flags[k] << (E * (lane % kLanes));
#pragma unroll
    for (uint32_t d = 1; d < kLanes; d *= 2) word |= __shfl_xor_sync(0xFFFFFFFFu, word, d);
    if (lane % kLanes == 0) words[(k * kThreads + threadIdx.x) / kLanes] = word;
  }
  count = __reduce_add_sync(0xFFFFFFFFu, count);
  if (lane == 0) warp_counts[threadIdx.x / 32] = count;
  return count;
}

// Phase 1 over the block's tiles [first, end); returns the block's count of non-zeros (in every
// thread). Full tiles of a contiguous input go through registers two tiles deep.
template <class T, bool kContiguous, class Index>
__device__ __forceinline__ uint32_t flag_tiles(const NonzeroParams& p, Kept<T>& kept, uint32_t first, uint32_t end) {
  constexpr uint64_t kTileItems = kTileBytes / sizeof(T);
  uint32_t warp_total = 0;
  uint32_t tile = first;
  if constexpr (kContiguous) {
    const uint32_t full_end = static_cast<uint32_t>(min(uint64_t{end}, p.elements / kTileItems));
    uint4 raw[kVectors];
    if (tile < full_end) load_vectors(p, tile, raw);
    for (; tile < full_end; ++tile) {
      uint4 next[kVectors];
      if (tile + 1 < full_end) load_vectors(p, tile + 1, next);
      uint32_t flags[kVectors];
      vector_flags<T>(p, raw, flags);
      warp_total += store_flags<T>(kept.mask_of(p, first, tile), kept.warp_counts_of(p, first, tile), flags);
#pragma unroll
      for (uint32_t k = 0; k < kVectors; ++k) raw[k] = next[k];
    }
  }
  for (; tile < end; ++tile) {
    uint32_t flags[kVectors];
    load_flags<T, kContiguous, Index>(p, tile, flags);
    warp_total += store_flags<T>(kept.mask_of(p, first, tile), kept.warp_counts_of(p, first, tile), flags);
  }
  __shared__ uint32_t warp_totals[kWarps];
  if ((threadIdx.x & 31) == 0) warp_totals[threadIdx.x / 32] = warp_total;
  __syncthreads();
  uint32_t total = 0;
#pragma unroll
  for (uint32_t w = 0; w < kWarps; ++w) total += warp_totals[w];
  return total;
}

// Local indices of a group's non-zeros, in order. Entry r lives at padded(r), so that threads
// writing runs of ranks 32 or 64 apart (dense tiles) do not all hit one shared-memory bank.
template <uint32_t kWords>
struct Staging {
  uint16_t selected[kWords * 32 + kWords];
  static __device__ __forceinline__ uint32_t padded(uint32_t r) { return r + r / 32; }
};

// Stores the N coordinates of row `row` counted from the row at `first`: as one vector where the
// rows are vector rows (p.vector_rows: dense, and aligned to min(row bytes, 16)) of 8 or 16 bytes,
// else a coordinate at a time. Vector rows wider than 16 bytes go out a part per lane (write_rows).
// Dense rows are addressed with the strides known at compile time, so that a 32-bit `row` (a row
// within a group, write_rows) costs one multiply-add, where 64-bit row times row stride took seven
// instructions of the few dozen a row costs.
template <uint32_t N, class C, class Row>
__device__ __forceinline__ void store_row(const NonzeroParams& p, C* first, Row row, const C (&v)[N]) {
  if (!p.dense_rows) {
    C* out = first + uint64_t{row} * p.row_stride;
#pragma unroll
    for (uint32_t j = 0; j < N; ++j) out[j * p.column_stride] = v[j];
    return;
  }
  C* out = first + row * N;
  if constexpr (N * sizeof(C) == 8) {
    if (p.vector_rows) {
      uint2 u;
      memcpy(&u, v, 8);
      *reinterpret_cast<uint2*>(out) = u;
      return;
    }
  } else if constexpr (N * sizeof(C) == 16) {
    if (p.vector_rows) {
      uint4 u;
      memcpy(&u, v, 16);
      *reinterpret_cast<uint4*>(out) = u;
      return;
    }
  }
#pragma unroll
  for (uint32_t j = 0; j < N; ++j) out[j] = v[j];
}

// fn.template operator()<N>() with N = p.columns, a compile-time constant.
template <class Fn>
__device__ __forceinline__ void with_columns(const NonzeroParams& p, Fn&& fn) {
  switch (p.columns) {
    case 1: return fn.template operator()<1>();
    case 2: return fn.template operator()<2>();
    case 3: return fn.template operator()<3>();
    case 4: return fn.template operator()<4>();
    case 5: return fn.template operator()<5>();
    case 6: return fn.template operator()<6>();
    case 7: return fn.template operator()<7>();
    default: return fn.template operator()<8>();
  }
}

// The coordinates of logical index `index`, unravelled with N - 1 divisions (the leading dimensions
// of the input have size 1), each with its column's offset (docs/contract.md section 7), in C's width.
template <uint32_t N, class Index, class C>
__device__ __forceinline__ void coordinates(const NonzeroParams& p, Index index, C (&v)[N]) {
  Index c[N];
#pragma unroll
  for (uint32_t j = N - 1; j > 0; --j) {
    Index q;
    divmod(p.column_sizes[j], index, q, c[j]);
    index = q;
  }
  c[0] = index;
#pragma unroll
  for (uint32_t j = 0; j < N; ++j) v[j] = static_cast<C>(static_cast<C>(c[j]) + static_cast<C>(p.column_offsets[j]));
}

// 16-byte part k of coordinates v, for k = part < P, chosen by value (no divergence).
template <uint32_t P, uint32_t N, class C>
__device__ __forceinline__ uint4 pick_part(const C (&v)[N], uint32_t part) {
  uint4 u;
#pragma unroll
  for (uint32_t k = 0; k < P; ++k) {
    uint4 part_k;
    memcpy(&part_k, &v[k * N / P], 16);
    if (part == k) u = part_k;
  }
  return u;
}

// The first of this thread's slots (rows, or 16-byte parts of rows) in a run of slots that starts at
// slot `first` of the output: slot s goes to lane (first + s) % 32, so that a warp's store covers 32
// slots aligned in the output (whole cache lines of dense rows) rather than parts of two runs.
__device__ __forceinline__ uint32_t first_slot(uint64_t first) {
  return (threadIdx.x + kThreads - static_cast<uint32_t>(first % 32)) % kThreads;
}

// The group's rows, consecutive threads to consecutive rows: coalesced for dense rows and for
// column-major coordinates alike. C is the coordinate type.
//
// Vector rows of P = row_parts(N, C) > 1 16-byte parts go P lanes to a row: each unravels the row
// and stores its part, so that a warp's store covers 512 consecutive bytes. A lane storing its own
// row's parts one by one covered half of every 32-byte sector each store touched (1.3-1.7x slower
// at rank 8; bench/NOTES.md, version 12, also for two variants with less division work that
// measured slower).
template <uint32_t N, uint32_t kWords, class Index, class C>
__device__ __forceinline__ void write_rows(const NonzeroParams& p, const Staging<kWords>& staging, Index begin,
                                           Index first_row, uint32_t total) {
  constexpr uint32_t P = row_parts(N, sizeof(C));
  if constexpr (P > 1) {
    if (p.vector_rows) {
      uint4* out = reinterpret_cast<uint4*>(static_cast<C*>(p.coordinates) + uint64_t{first_row} * N);
      for (uint32_t slot = first_slot(uint64_t{first_row} * P); slot < total * P; slot += kThreads) {
        C v[N];
        coordinates<N, Index, C>(p, begin + staging.selected[staging.padded(slot / P)], v);
        out[slot] = pick_part<P>(v, slot % P);
      }
      return;
    }
  }
  C* const rows = static_cast<C*>(p.coordinates) + uint64_t{first_row} * p.row_stride;  // the group's first
  for (uint32_t row = first_slot(first_row); row < total; row += kThreads) {
    C v[N];
    coordinates<N, Index, C>(p, begin + staging.selected[staging.padded(row)], v);
    store_row<N>(p, rows, row, v);
  }
}

// Fill rows [first_row, last_row) of dense coordinates (row stride N, column stride 1): one flat run
// of elements whose values repeat every N, written as 16-byte streaming stores (nothing reads them
// soon) between scalar head and tail elements. The vectors that start at column j all hold the same
// bytes, pattern[j] in shared memory; each thread's next vector starts kStep columns further on.
template <uint32_t N, class C>
__device__ __forceinline__ void fill_flat(const NonzeroParams& p, uint64_t first_row, uint64_t last_row) {
  constexpr uint32_t W = 16 / sizeof(C);  // elements in a vector
  constexpr uint32_t kStep = kThreads * W % N;
  __shared__ uint4 pattern[kMaxRank];
  C* out = static_cast<C*>(p.coordinates);
  const uint64_t begin = first_row * N, end = last_row * N;
  // Element e is 16-byte aligned when (e + skew) % W == 0.
  const uint64_t skew = reinterpret_cast<uintptr_t>(out) / sizeof(C) % W;
  const uint64_t body = min(end, (begin + skew + W - 1) / W * W - skew);
  const uint64_t aligned_end = (end + skew) / W * W;
  const uint64_t tail = aligned_end >= body + skew ? aligned_end - skew : body;
  for (uint64_t e = begin + threadIdx.x; e < body; e += kThreads) out[e] = static_cast<C>(p.fill_values[e % N]);
  for (uint64_t e = tail + threadIdx.x; e < end; e += kThreads) out[e] = static_cast<C>(p.fill_values[e % N]);
  if (threadIdx.x < N) {
    C w[W];
#pragma unroll
    for (uint32_t k = 0; k < W; ++k) w[k] = static_cast<C>(p.fill_values[(threadIdx.x + k) % N]);
    memcpy(&pattern[threadIdx.x], w, 16);
  }
  __syncthreads();
  uint4* vectors = reinterpret_cast<uint4*>(out + body);
  const uint64_t count = (tail - body) / W;
  uint32_t column = static_cast<uint32_t>((body + uint64_t{threadIdx.x} * W) % N);
  for (uint64_t c = threadIdx.x; c < count; c += kThreads) {
    __stcs(vectors + c, pattern[column]);
    column += kStep;
    if (column >= N) column -= N;
  }
}

// The fill rows a block owns (ODML_EXTENSION_FILL_ROWS): zero number z of the input, in element
// order, owns row M - 1 - z, so a block whose elements [begin, end) hold `total` non-zeros, the
// first at row `row`, fills the rows of its zeros' mirror images: every row past the count has
// exactly one owner, and each block's share is one contiguous run. Called by every thread.
template <class T, class C>
__device__ __forceinline__ void fill_rows(const NonzeroParams& p, uint32_t first_tile, uint32_t end_tile, uint64_t row,
                                          uint32_t total) {
  constexpr uint64_t kTileItems = kTileBytes / sizeof(T);
  const uint64_t begin = first_tile * kTileItems, end = min(end_tile * kTileItems, p.elements);
  const uint64_t last = p.elements - (begin - row);  // one past the block's run
  const uint64_t first = last - ((end - begin) - total);
  with_columns(p, [&]<uint32_t N>() {
    if (p.dense_rows) return fill_flat<N, C>(p, first, last);
    C v[N];
#pragma unroll
    for (uint32_t j = 0; j < N; ++j) v[j] = static_cast<C>(p.fill_values[j]);
    for (uint64_t r = first + threadIdx.x; r < last; r += kThreads)
      store_row<N>(p, static_cast<C*>(p.coordinates), r, v);
  });
}

// Phase 2 reads a group's mask words (kGroupWords: group_tiles tiles' worth, kept in shared memory
// or in the temporary region), thread t words [t * kWordsPerThread, (t + 1) * kWordsPerThread). The
// first `valid_words` are the block's; the rest (tiles past the block's range) read as zero.
template <uint32_t kGroupWords>
struct GroupWords {
  static constexpr uint32_t kWordsPerThread = ceil_div(kGroupWords, kThreads);
  uint32_t words[kWordsPerThread];

  __device__ __forceinline__ void load(const uint32_t* group_flags, uint32_t valid_words) {
#pragma unroll
    for (uint32_t j = 0; j < kWordsPerThread; ++j) {
      const uint32_t w = threadIdx.x * kWordsPerThread + j;
      words[j] = w < valid_words ? group_flags[w] : 0;
    }
  }
};

// Ranks a group's non-zeros with a block scan and stages their local indices, in order, for
// write_rows. Needs nothing from other blocks, so the group before the grid barrier's wait can go
// through it too.
template <uint32_t kGroupWords>
__device__ __forceinline__ void stage_group(Staging<kGroupWords>& staging, const GroupWords<kGroupWords>& mask) {
  constexpr uint32_t kWordsPerThread = GroupWords<kGroupWords>::kWordsPerThread;
  uint32_t count = 0;
#pragma unroll
  for (uint32_t j = 0; j < kWordsPerThread; ++j) count += __popc(mask.words[j]);
  uint32_t unused;
  uint32_t rank = block_exclusive_sum<kThreads>(count, unused);  // its barriers also end the last group's writes
#pragma unroll
  for (uint32_t j = 0; j < kWordsPerThread; ++j)
    for (uint32_t bits = mask.words[j]; bits != 0; bits &= bits - 1)
      staging.selected[staging.padded(rank++)] =
          static_cast<uint16_t>((threadIdx.x * kWordsPerThread + j) * 32 + __ffs(bits) - 1);
  __syncthreads();
}

// The counts of tiles [pass, pass + n), n <= kPassTiles, into `counts`: thread t reads the count of
// warp t % kWarps in tile pass + t / kWarps, and each group of kWarps lanes sums its tile's.
template <class T>
__device__ __forceinline__ void read_pass_counts(const NonzeroParams& p, Kept<T>& kept, uint32_t first, uint32_t pass,
                                                 uint32_t n, uint32_t (&counts)[kPassTiles]) {
  static_assert(kPassTiles * kWarps == kThreads && 32 % kWarps == 0);
  const uint32_t t = threadIdx.x / kWarps;
  uint32_t c = t < n ? kept.warp_counts_of(p, first, pass + t)[threadIdx.x % kWarps] : 0;
#pragma unroll
  for (uint32_t d = 1; d < kWarps; d *= 2) c += __shfl_xor_sync(0xFFFFFFFFu, c, d);
  if (threadIdx.x % kWarps == 0) counts[t] = c;
}

// The pool (kPoolTiles). Pooled group number g of the grid is group g % p.pool_groups of block
// g / p.pool_groups's pool; this is its first tile.
template <class T>
__device__ __forceinline__ uint32_t pooled_tile(const NonzeroParams& p, uint32_t group) {
  return group / p.pool_groups * p.tiles_per_block + p.own_tiles + group % p.pool_groups * group_tiles(sizeof(T));
}

// The number of non-zeros, in the count output's width (4 or 8 bytes).
__device__ __forceinline__ void store_count(const NonzeroParams& p, uint64_t count) {
  if (p.count_bytes == 8) {
    *static_cast<uint64_t*>(p.count) = count;
  } else {
    *static_cast<uint32_t*>(p.count) = static_cast<uint32_t>(count);
  }
}

__device__ __forceinline__ uint64_t read_published(uint64_t* row) {
  return cuda::atomic_ref<uint64_t, cuda::thread_scope_device>(*row).load(cuda::memory_order_relaxed);
}
__device__ __forceinline__ void publish(uint64_t* row, uint64_t value) {
  cuda::atomic_ref<uint64_t, cuda::thread_scope_device>(*row).store(value, cuda::memory_order_relaxed);
}

// Warp 0 of a block with a pool, once its first row `row` is known: publishes the rows of its pooled
// groups, whose tiles' counts are `counts` (read_pass_counts from the pool's first tile), for the
// blocks that claim them. The row values are all a claimer needs from the owner: the mask words went
// to the temporary region before the grid barrier.
template <class T>
__device__ __forceinline__ void publish_pool_rows(const NonzeroParams& p, const uint32_t (&counts)[kPassTiles],
                                                  uint64_t row, uint32_t block_total) {
  constexpr uint32_t G = group_tiles(sizeof(T));
  const uint32_t g = threadIdx.x;
  uint32_t count = 0;
#pragma unroll
  for (uint32_t i = 0; i < G; ++i) count += g < p.pool_groups && g * G + i < kPassTiles ? counts[g * G + i] : 0;
  const uint32_t end = warp_inclusive_sum(count);
  const uint64_t first = row + block_total - __shfl_sync(0xFFFFFFFFu, end, 31);
  uint64_t* rows = p.pool_rows + uint64_t{blockIdx.x} * (p.pool_groups + 1);
  if (g == 0) publish(rows, first);
  if (g < p.pool_groups) publish(rows + g + 1, first + end);
}

// A pooled group as claimed: its number over the grid, or past the pool's end, and its rows.
struct PoolClaim {
  uint32_t group;
  uint64_t first_row, end_row;
};

// Thread 0: the rows of pooled group `group` (none past the pool's end), once its owner has published
// them. Owners publish right after the grid barrier, and every block is resident: the wait ends.
__device__ __forceinline__ PoolClaim wait_for_rows(const NonzeroParams& p, uint32_t group) {
  PoolClaim claim{group, 0, 0};
  if (group >= gridDim.x * p.pool_groups) return claim;
  uint64_t* rows = p.pool_rows + uint64_t{group / p.pool_groups} * (p.pool_groups + 1) + group % p.pool_groups;
  while ((claim.first_row = read_published(rows)) == kRowPending) {
  }
  while ((claim.end_row = read_published(rows + 1)) == kRowPending) {
  }
  return claim;
}

// Phase 2's pool, once a block's own groups are written: claims pooled groups one at a time until none
// is left and writes each as its owner would (write_group(first tile, first row, count)). The next
// claim's atomic goes out before a group is staged, and the claimed group's mask words are loaded
// before the group before it is written, so that neither waits on L2 alone.
template <class T, uint32_t kGroupWords, class WriteGroup>
__device__ __forceinline__ void write_pool(const NonzeroParams& p, Staging<kGroupWords>& staging,
                                           GroupWords<kGroupWords>& mask, WriteGroup&& write_group) {
  constexpr uint32_t G = group_tiles(sizeof(T));
  __shared__ PoolClaim claimed[2];  // thread 0 fills them in turn; read by all after a barrier
  const auto claim = [&](uint32_t slot, uint32_t group) {
    if (threadIdx.x == 0) claimed[slot] = wait_for_rows(p, group);
    __syncthreads();
    return claimed[slot];
  };
  const auto load = [&](const PoolClaim& c) {  // a group with rows
    const uint32_t tile = pooled_tile<T>(p, c.group), block = c.group / p.pool_groups;
    const uint32_t end = min(p.tiles, (block + 1) * p.tiles_per_block);
    mask.load(Kept<T>::pooled_mask_of(p, block, tile - block * p.tiles_per_block),
              min(G, end - tile) * tile_words(sizeof(T)));
  };
  uint32_t slot = 0;
  PoolClaim current = claim(slot, threadIdx.x == 0 ? atomicAdd(p.claims, 1) : 0);
  if (current.end_row > current.first_row) load(current);
  while (current.group < gridDim.x * p.pool_groups) {
    const uint32_t next_group = threadIdx.x == 0 ? atomicAdd(p.claims, 1) : 0;
    const uint32_t count = static_cast<uint32_t>(current.end_row - current.first_row);
    if (count > 0) stage_group(staging, mask);
    slot ^= 1;
    const PoolClaim next = claim(slot, next_group);
    if (next.end_row > next.first_row) load(next);
    if (count > 0) write_group(pooled_tile<T>(p, current.group), current.first_row, count);
    current = next;
  }
}

// kPool: the kernel for plans with a pool (p.pool_groups > 0). Its code takes the float32 kernel
// from 48 registers to 64 (5 blocks an SM to 4), which cost plans without a pool 2-4.5%, so they get
// a kernel without it.
template <class T, bool kContiguous, class Index, class C, bool kPool>
__global__ void __launch_bounds__(kThreads) nonzero_kernel(const NonzeroParams p) {
  static_assert(!kPool || pools(sizeof(T)));
  constexpr uint32_t kTileWords = tile_words(sizeof(T));
  constexpr uint32_t G = group_tiles(sizeof(T));
  constexpr uint32_t kGroupWords = kTileWords * G;
  static_assert(kPassTiles % G == 0, "a group of tiles lies within one pass");  // and p.kept_tiles % G == 0
  __shared__ Staging<kGroupWords> staging;
  Kept<T> kept(p);
  __shared__ uint32_t pass_counts[kPassTiles];
  const uint32_t first_tile = blockIdx.x * p.tiles_per_block;
  const uint32_t end_tile = min(p.tiles, first_tile + p.tiles_per_block);
  const uint32_t own_end = min(end_tile, first_tile + p.own_tiles);  // the block's pool: [own_end, end_tile)

  const uint32_t block_total = flag_tiles<T, kContiguous, Index>(p, kept, first_tile, end_tile);
  if (threadIdx.x == 0) p.block_totals[blockIdx.x] = block_total;
  // The pool's state for this call, before the barrier: nothing claimed, no rows published; and the
  // counts of the block's pooled tiles, for publish_pool_rows.
  __shared__ uint32_t pool_counts[kPassTiles];
  if constexpr (kPool) {
    if (blockIdx.x == 0 && threadIdx.x == 0) *p.claims = 0;
    for (uint32_t i = threadIdx.x; i <= p.pool_groups; i += kThreads)
      p.pool_rows[uint64_t{blockIdx.x} * (p.pool_groups + 1) + i] = kRowPending;
    read_pass_counts(p, kept, first_tile, own_end, end_tile - own_end, pool_counts);
  }
  // The grid barrier, arrived at here and waited for once the block's first group with non-zeros is
  // staged. A grid of one block (an input of one tile) waits for nothing but itself: 1.2 us of a
  // 7-us call on an H100. One block working through four tiles took 1.6x as long as four blocks and
  // the grid barrier (bench/NOTES.md).
  GridBarrier barrier;
  barrier.arrive();

  // The block's own tiles in passes: their counts read at once, then the groups of G tiles with
  // non-zeros in turn, each one's mask words loaded while the group before it is written, then ranked
  // and staged. A pass's first group is staged as the pass starts: the first pass's before the wait
  // (whose barrier also orders pool_counts).
  uint32_t pass = first_tile, n = min(kPassTiles, own_end - pass);
  const auto group_count = [&](uint32_t j) {
    uint32_t count = 0;
#pragma unroll
    for (uint32_t i = 0; i < G; ++i) count += j + i < n ? pass_counts[j + i] : 0;
    return count;
  };
  const auto next_group = [&](uint32_t j) {  // the first group from j on with non-zeros, or n
    while (j < n && group_count(j) == 0) j += G;
    return j < n ? j : n;
  };
  GroupWords<kGroupWords> mask;
  const auto load_group = [&](uint32_t tile) {
    mask.load(kept.mask_of(p, first_tile, tile), min(G, end_tile - tile) * kTileWords);
  };
  const auto start_pass = [&] {  // pass_counts is free
    read_pass_counts(p, kept, first_tile, pass, n, pass_counts);
    __syncthreads();
    const uint32_t j = next_group(0);
    if (j < n) {
      load_group(pass + j);
      stage_group(staging, mask);
    }
    return j;
  };
  uint32_t j = start_pass();
  barrier.wait();

  Index below = 0;  // non-zeros in the blocks before this one
  for (uint32_t b = threadIdx.x; b < blockIdx.x; b += kThreads) below += __ldcg(&p.block_totals[b]);
  Index row;
  block_exclusive_sum<kThreads>(below, row);
  if (blockIdx.x == gridDim.x - 1 && threadIdx.x == 0) store_count(p, uint64_t{row} + block_total);
  if constexpr (kPool) {
    if (threadIdx.x < 32) publish_pool_rows<T>(p, pool_counts, row, block_total);
  }
  if (p.fill_rows) fill_rows<T, C>(p, first_tile, end_tile, row, block_total);
  const auto write_group = [&](uint32_t tile, Index first_row, uint32_t count) {  // group is staged
    const Index begin = Index{tile} * (kTileWords * 32);
    with_columns(p, [&]<uint32_t N>() { write_rows<N, kGroupWords, Index, C>(p, staging, begin, first_row, count); });
  };
  while (block_total > 0) {
    while (j < n) {  // group j is staged
      const uint32_t k = next_group(j + G);
      if (k < n) load_group(pass + k);
      const uint32_t count = group_count(j);
      write_group(pass + j, row, count);
      row += count;
      j = k;
      if (j < n) stage_group(staging, mask);
    }
    pass += kPassTiles;
    if (pass >= own_end) break;
    n = min(kPassTiles, own_end - pass);
    __syncthreads();  // pass_counts is rewritten
    j = start_pass();
  }
  if constexpr (kPool) {
    write_pool<T>(p, staging, mask, write_group);
  }
}

// cuda.lookback: NONZERO in a single pass, one tile a block in blockIdx order, so that a tile's
// rows are written while later tiles are still being read (bench/NOTES.md, "NONZERO in a single
// pass with decoupled look-back, again"). Chosen for inputs of one tile, where it is one plain
// block; from two tiles up it is slower than the two passes ("NONZERO in a single pass, measured").
// A block flags its tile as phase 1 does, publishes the tile's count in its status word, ranks and
// stages the tile's non-zeros as phase 2 does, then warp 0 sums the counts of the tiles before it,
// 32 status words at a time, back to the closest one that has published its first row (decoupled
// look-back), and publishes its own; then the block writes its rows and its fill rows. A block
// waits only on blocks with smaller indices, which GPUs start before it, so every wait ends: an
// order CUDA's programming model does not promise, which CUB's single-pass scans rely on too. The
// statuses (p.statuses, a word a tile) are zeroed ahead of each launch; one tile has none.
constexpr uint64_t kStatusCount = uint64_t{1} << 62, kStatusRow = uint64_t{2} << 62;  // a status's flag
constexpr uint64_t kStatusValue = kStatusCount - 1;
// Blocks an SM at least, for the registers: a block holds its tile's loads in flight only until
// they land, so the SMs need many blocks to keep the memory busy.
constexpr uint32_t kLookbackBlocks = 5;

__device__ __forceinline__ void publish_status(uint64_t* status, uint64_t flag, uint64_t value) {
  publish(status, flag | value);
}

// Warp 0 of tile `tile` > 0: the rows of the tiles before it.
__device__ __forceinline__ uint64_t look_back(const NonzeroParams& p, uint32_t tile) {
  const uint32_t lane = threadIdx.x & 31;
  uint64_t rows = 0;
  for (int64_t closest = int64_t{tile} - 1;; closest -= 32) {
    const int64_t i = closest - lane;
    for (;;) {
      // Before tile 0: a first row of 0.
      const uint64_t status = i >= 0 ? read_published(p.statuses + i) : kStatusRow;
      const uint32_t published_rows = __ballot_sync(0xFFFFFFFFu, (status & ~kStatusValue) == kStatusRow);
      const uint32_t pending = __ballot_sync(0xFFFFFFFFu, (status & ~kStatusValue) == 0);
      // The lanes up to the closest tile that has published its first row, or all 32.
      const uint32_t needed = published_rows ? ((published_rows & (0u - published_rows)) << 1) - 1 : 0xFFFFFFFFu;
      if ((pending & needed) != 0) continue;
      uint64_t value = needed >> lane & 1 ? status & kStatusValue : 0;
#pragma unroll
      for (uint32_t d = 16; d > 0; d /= 2) value += __shfl_xor_sync(0xFFFFFFFFu, value, d);
      rows += value;
      if (published_rows) return rows;
      break;
    }
  }
}

template <class T, bool kContiguous, class Index, class C>
__global__ void __launch_bounds__(kThreads, kLookbackBlocks) lookback_kernel(const NonzeroParams p) {
  constexpr uint32_t kTileWords = tile_words(sizeof(T));
  constexpr uint64_t kTileItems = kTileBytes / sizeof(T);
  __shared__ uint32_t words[kTileWords];
  __shared__ uint32_t warp_counts[kWarps];
  __shared__ Staging<kTileWords> staging;
  __shared__ uint64_t first_row;
  const uint32_t tile = blockIdx.x;

  uint32_t flags[kVectors];
  if (kContiguous && (uint64_t{tile} + 1) * kTileItems <= p.elements) {
    uint4 raw[kVectors];
    load_vectors(p, tile, raw);
    vector_flags<T>(p, raw, flags);
  } else {
    load_flags<T, kContiguous, Index>(p, tile, flags);
  }
  store_flags<T>(words, warp_counts, flags);
  __syncthreads();
  uint32_t total = 0;
#pragma unroll
  for (uint32_t w = 0; w < kWarps; ++w) total += warp_counts[w];
  // A grid of one tile has no statuses: nothing waits on it.
  if (threadIdx.x == 0 && gridDim.x > 1)
    publish_status(p.statuses + tile, tile == 0 ? kStatusRow : kStatusCount, total);
  GroupWords<kTileWords> mask;
  mask.load(words, kTileWords);
  stage_group(staging, mask);
  if (threadIdx.x < 32) {
    const uint64_t row = tile == 0 ? 0 : look_back(p, tile);
    if (threadIdx.x == 0) {
      if (tile > 0) publish_status(p.statuses + tile, kStatusRow, row + total);
      first_row = row;
      if (tile == gridDim.x - 1) store_count(p, row + total);
    }
  }
  __syncthreads();
  const Index row = static_cast<Index>(first_row);
  if (p.fill_rows) fill_rows<T, C>(p, tile, tile + 1, row, total);
  if (total == 0) return;
  const Index begin = Index{tile} * kTileItems;
  with_columns(p, [&]<uint32_t N>() { write_rows<N, kTileWords, Index, C>(p, staging, begin, row, total); });
}

using KernelFunction = void (*)(NonzeroParams);

// The kernels of each implementation, by element type, layout, and index and coordinate widths:
// cuda.nonzero's with or without a pool (one-byte elements have none), and cuda.lookback's.
template <bool kPool>
struct TwoPass {
  template <class T, bool kContiguous, class Index, class C>
  static KernelFunction get() {
    constexpr bool kPooled = kPool && pools(sizeof(T));
    return nonzero_kernel<T, kContiguous, Index, C, kPooled>;
  }
};
struct SinglePass {
  template <class T, bool kContiguous, class Index, class C>
  static KernelFunction get() {
    return lookback_kernel<T, kContiguous, Index, C>;
  }
};

template <class Family, class Index, class C>
KernelFunction kernel_for(uint32_t element_bytes, bool contiguous) {
  switch (element_bytes * 2 + contiguous) {
    case 2: return Family::template get<uint8_t, false, Index, C>();
    case 3: return Family::template get<uint8_t, true, Index, C>();
    case 4: return Family::template get<uint16_t, false, Index, C>();
    case 5: return Family::template get<uint16_t, true, Index, C>();
    case 8: return Family::template get<uint32_t, false, Index, C>();
    default: return Family::template get<uint32_t, true, Index, C>();
  }
}

// The input is read as 16-byte vectors (load_vectors).
bool contiguous(const NonzeroPlan& plan) {
  return plan.read_rank == 1 && plan.read_strides[0] == 1 && plan.input_alignment >= 16;
}

// Logical indices, element offsets or row numbers may pass 2^32 - 1.
bool wide_indices(const NonzeroPlan& plan) {
  uint64_t extent = 1;
  for (uint32_t d = 0; d < plan.read_rank; ++d) extent += (plan.read_sizes[d] - 1) * plan.read_strides[d];
  return plan.element_count > kMaxElements || extent > kMaxElements;
}

template <class Family>
KernelFunction kernel_for(const NonzeroPlan& plan) {
  const bool wide_coordinates = plan.coordinate_bytes == 8;
  if (wide_indices(plan)) {
    return wide_coordinates ? kernel_for<Family, uint64_t, uint64_t>(plan.element_bytes, contiguous(plan))
                            : kernel_for<Family, uint64_t, uint32_t>(plan.element_bytes, contiguous(plan));
  }
  return wide_coordinates ? kernel_for<Family, uint32_t, uint64_t>(plan.element_bytes, contiguous(plan))
                          : kernel_for<Family, uint32_t, uint32_t>(plan.element_bytes, contiguous(plan));
}

// The groups of a block of `tiles_per_block` tiles that go to the pool (kPoolTiles): the last
// 1/kPoolShare of them, as many as lie in kPassTiles tiles (publish_pool_rows reads their counts at
// once). The last group of a block of an odd number of tiles is short.
uint32_t pool_groups(uint32_t tiles_per_block, uint32_t element_bytes) {
  if (!pools(element_bytes) || tiles_per_block < kPoolTiles) return 0;
  const uint32_t group = group_tiles(element_bytes), groups = ceil_div(tiles_per_block, group);
  uint32_t pooled = groups / kPoolShare;
  while (pooled > 0 && tiles_per_block - (groups - pooled) * group > kPassTiles) --pooled;
  return pooled;
}

// Shared memory a block's kept tile takes: its mask words and warp counts (Kept).
constexpr uint32_t kept_tile_bytes(uint32_t element_bytes) { return (tile_words(element_bytes) + kWarps) * 4; }

// The most of a block's `tiles` that Kept holds with per_sm blocks resident on every SM of the
// current device: all of them, or a multiple of group_tiles (a group is kept whole or not at all).
// An SM's shared memory less each block's reservation and static shared memory, shared evenly, then
// checked with the occupancy calculator. (cudaOccupancyAvailableDynamicSMemPerBlock left out the
// 1 KB a block reserves on an H100: a grid of float32 at 2^28 did not launch.)
Result<uint32_t> kept_tiles(KernelFunction kernel, int per_sm, uint32_t tiles, uint32_t element_bytes) {
  int device = 0, sm_bytes = 0, reserved = 0, optin = 0;
  cudaFuncAttributes attributes{};
  constexpr const char* kWhat = "cuda.nonzero: sizing the kept region";
  ODML_RETURN_IF_ERROR(cuda_status(cudaGetDevice(&device), kWhat));
  for (const auto& [value, attribute] : {std::pair{&sm_bytes, cudaDevAttrMaxSharedMemoryPerMultiprocessor},
                                         std::pair{&reserved, cudaDevAttrReservedSharedMemoryPerBlock},
                                         std::pair{&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin}})
    ODML_RETURN_IF_ERROR(cuda_status(cudaDeviceGetAttribute(value, attribute, device), kWhat));
  ODML_RETURN_IF_ERROR(cuda_status(cudaFuncGetAttributes(&attributes, kernel), kWhat));
  // The kernel's limit, not the plan's: the same for every plan, so that plans made on other threads
  // never lower it.
  const int limit = std::max(optin - static_cast<int>(attributes.sharedSizeBytes), 0);
  ODML_RETURN_IF_ERROR(
      cuda_status(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, limit), kWhat));
  const int64_t room = std::min<int64_t>(
      int64_t{sm_bytes} / per_sm - reserved - static_cast<int64_t>(attributes.sharedSizeBytes), limit);
  const uint32_t group = group_tiles(element_bytes);
  uint32_t kept = static_cast<uint32_t>(std::clamp<int64_t>(room / kept_tile_bytes(element_bytes), 0, tiles));
  if (kept < tiles) kept = kept / group * group;
  for (;;) {
    int resident = 0;
    ODML_RETURN_IF_ERROR(cuda_status(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                                         &resident, kernel, kThreads, kept * kept_tile_bytes(element_bytes)),
                                     kWhat));
    if (resident >= per_sm || kept == 0) return kept;
    kept = (kept - 1) / group * group;
  }
}

uint64_t tile_count(const NonzeroPlan& plan) {
  return ceil_div(plan.element_count, uint64_t{kTileBytes / plan.element_bytes});
}

// What both implementations' kernels take from the plan, and from each execute's bindings.
class NonzeroLaunch {
 public:
  explicit NonzeroLaunch(const NonzeroPlan& plan) {
    NonzeroParams& p = params_;
    p.elements = plan.element_count;
    p.tiles = static_cast<uint32_t>(tile_count(plan));
    p.value_mask = plan.value_mask;
    p.count_bytes = plan.count_bytes;
    p.read_rank = plan.read_rank;
    for (uint32_t d = 0; d < plan.read_rank; ++d) {
      p.wide_read_sizes[d] = plan.read_sizes[d];
      p.wide_read_strides[d] = plan.read_strides[d];
      if (wide_indices(plan)) continue;
      p.read_sizes[d] = FastDivmod(static_cast<uint32_t>(plan.read_sizes[d]));
      p.read_strides[d] = static_cast<uint32_t>(plan.read_strides[d]);
    }
    p.columns = plan.columns;
    // Column sizes are an input's UINT sizes, so FastDivmod holds them even with wide indices.
    for (uint32_t j = 0; j < plan.columns; ++j)
      p.column_sizes[j] = FastDivmod(static_cast<uint32_t>(plan.column_sizes[j]));
    p.row_stride = plan.row_stride;
    p.column_stride = plan.column_stride;
    for (uint32_t j = 0; j < plan.columns; ++j) p.column_offsets[j] = plan.column_offsets[j];
    // Vector rows (store_row, write_rows) also need the bound coordinates' alignment: bound().
    const uint32_t row_bytes = plan.columns * plan.coordinate_bytes;
    p.dense_rows = plan.dense_rows();
    if (p.dense_rows && (row_bytes == 8 || row_bytes % 16 == 0)) vector_alignment_ = std::min(row_bytes, 16u);
    p.fill_rows = plan.fill_rows;
    for (uint32_t j = 0; j < plan.columns; ++j) p.fill_values[j] = plan.fill_values[j];
  }

  // The parameters with an execute's input and outputs.
  NonzeroParams bound(const ExecuteArgs& args) const {
    NonzeroParams p = params_;
    p.input = args.inputs[0];
    p.count = args.outputs[0];
    p.coordinates = args.outputs[1];
    p.vector_rows = vector_alignment_ != 0 && reinterpret_cast<uintptr_t>(p.coordinates) % vector_alignment_ == 0;
    return p;
  }

 protected:
  NonzeroParams params_{};

 private:
  uint32_t vector_alignment_ = 0;  // where rows are dense and 8 bytes or a multiple of 16: min(row bytes, 16)
};

class CudaNonzeroKernel final : public Kernel, NonzeroLaunch {
 public:
  CudaNonzeroKernel(const NonzeroPlan& plan, const CudaDevice& device)
      : NonzeroLaunch(plan),
        ordinal_(device.ordinal()),
        kernel_(kernel_for<TwoPass<false>>(plan)),
        pooled_kernel_(kernel_for<TwoPass<true>>(plan)) {}

  // The grid and the shared memory, from what the device reports; fails where a query does.
  Status size_grid(const NonzeroPlan& plan, const CudaDevice& device) {
    NonzeroParams& p = params_;
    // As many blocks as can be resident at once (the grid barrier needs all of them), each taking
    // an equal share of the tiles: whole groups of tiles where a block has a group's worth or more,
    // since phase 2 spends as long on a group cut short as on a full one (float32 at 2^24: 512 blocks
    // of 8 tiles instead of 586 of 7, 1.04-1.07x), but an odd number from kOddRangeTiles up, where
    // the half group left costs less than the reads of evenly spaced ranges (bench/NOTES.md).
    DeviceGuard guard(ordinal_);
    ODML_RETURN_IF_ERROR(guard.status());
    int per_sm = 0;
    const uint32_t group = group_tiles(plan.element_bytes);
    const auto grid_for = [&](KernelFunction kernel) -> Status {
      ODML_RETURN_IF_ERROR(cuda_status(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kThreads, 0),
                                       "cuda.nonzero: sizing the grid"));
      per_sm = std::max(per_sm, 1);
      const uint32_t sms = device.multiprocessors();
      const auto tiles_per_block = [&](uint32_t blocks_per_sm) {
        uint32_t t = ceil_div(p.tiles, blocks_per_sm * sms);
        if (t > group) t = ceil_div(t, group) * group;
        return t >= kOddRangeTiles ? t | 1 : t;
      };
      // Phase 2 ends with the SM that holds the most tiles. One block an SM fewer, where that gives
      // the fullest SM kBalanceGain fewer tiles (bench/NOTES.md).
      const auto fullest = [&](uint32_t t) { return ceil_div(ceil_div(p.tiles, t), sms) * t; };
      p.tiles_per_block = tiles_per_block(static_cast<uint32_t>(per_sm));
      if (per_sm > 1) {
        const uint32_t fewer = tiles_per_block(static_cast<uint32_t>(per_sm) - 1);
        if (fullest(p.tiles_per_block) > kBalanceGain * fullest(fewer)) p.tiles_per_block = fewer;
      }
      p.pool_groups = pool_groups(p.tiles_per_block, plan.element_bytes);
      return {};
    };
    // A grid with a pool takes the pooled kernel, whose fewer resident blocks only add tiles a block.
    ODML_RETURN_IF_ERROR(grid_for(kernel_));
    if (p.pool_groups > 0) {
      kernel_ = pooled_kernel_;
      ODML_RETURN_IF_ERROR(grid_for(kernel_));
    }
    blocks_ = ceil_div(p.tiles, p.tiles_per_block);
    // One cluster where the GPU has clusters and the kernel has the cluster barrier: GridBarrier's is
    // compiled for sm_90 and up only, and a kernel built from older PTX takes the cooperative launch.
    int clusters = 0;
    cudaFuncAttributes attributes{};
    ODML_RETURN_IF_ERROR(cuda_status(cudaDeviceGetAttribute(&clusters, cudaDevAttrClusterLaunch, device.ordinal()),
                                     "cuda.nonzero: sizing the grid"));
    ODML_RETURN_IF_ERROR(cuda_status(cudaFuncGetAttributes(&attributes, kernel_), "cuda.nonzero: sizing the grid"));
    one_cluster_ = clusters != 0 && attributes.ptxVersion >= 90 && blocks_ > 1 && blocks_ <= kClusterBlocks;
    p.own_tiles =
        p.pool_groups > 0 ? ceil_div(p.tiles_per_block, group) * group - p.pool_groups * group : p.tiles_per_block;
    // Kept: as many of a block's own tiles as the shared memory left beside the blocks the fullest
    // SM holds (per_sm at most; fewer where the grid is smaller) holds; pooled tiles are read by
    // other blocks, so they are always spilled.
    const int held = static_cast<int>(ceil_div(blocks_, device.multiprocessors()));
    const Result<uint32_t> kept = kept_tiles(kernel_, std::min(per_sm, held), p.own_tiles, plan.element_bytes);
    if (!kept.ok()) return kept.status();
    p.kept_tiles = kept.value();
    p.spilled_tiles = p.tiles_per_block - p.kept_tiles;
    kept_bytes_ = p.kept_tiles * kept_tile_bytes(plan.element_bytes);
    // A cluster's blocks must fit one GPC at once, with their shared memory: where the GPU says they
    // cannot (a partitioned GPU, fewer SMs to a GPC), the grid takes the cooperative launch, sized for
    // it already, rather than failing in execute.
    if (one_cluster_) {
      cudaLaunchAttribute resident{};
      const cudaLaunchConfig_t config = launch_config(resident, nullptr);
      int fit = 0;
      ODML_RETURN_IF_ERROR(
          cuda_status(cudaOccupancyMaxActiveClusters(&fit, kernel_, &config), "cuda.nonzero: sizing the grid"));
      one_cluster_ = fit > 0;
    }
    totals_bytes_ = (uint64_t{blocks_} * 4 + 15) & ~uint64_t{15};
    // The pool's claim counter (padded to 16 bytes) and its published rows.
    pool_bytes_ = p.pool_groups > 0 ? 16 + uint64_t{blocks_} * (p.pool_groups + 1) * 8 : 0;
    pool_bytes_ = (pool_bytes_ + 15) & ~uint64_t{15};
    const uint64_t spilled = uint64_t{blocks_} * p.spilled_tiles;
    counts_bytes_ = spilled * kWarps * 4;
    flag_bytes_ = spilled * tile_words(plan.element_bytes) * 4;
    if (verbose())
      log_verbose(cat("cuda.nonzero tuning: ", kThreads, " threads, ", kVectors,
                      " 16-byte vectors per thread and tile (", kTileBytes, "-byte tiles, 2 in flight per block), ",
                      kPassTiles, " tiles per pass, written in groups of ", group, ", an odd number a block from ",
                      kOddRangeTiles, ", one block an SM fewer where the fullest SM gets ", kBalanceGain,
                      "x fewer tiles, a pool of 1/", kPoolShare, " of the groups from ", kPoolTiles, " tiles a block",
                      pools(plan.element_bytes) ? "" : " (none for one-byte elements)", "; ", blocks_, " blocks of ",
                      p.tiles_per_block, " tiles (", per_sm, " fit an SM, ", held, " held), ", p.kept_tiles,
                      " of them kept in ", kept_bytes_, " bytes of shared memory, ", p.pool_groups, " groups pooled, ",
                      one_cluster_ ? "one cluster" : "a cooperative launch", " (grids of 2 to ", kClusterBlocks,
                      " blocks as one cluster where the GPU has them)"));
    return {};
  }

  uint64_t temporary_bytes() const override { return totals_bytes_ + pool_bytes_ + counts_bytes_ + flag_bytes_; }

  Status execute(const ExecuteArgs& args) const override {
    DeviceGuard guard(ordinal_);
    ODML_RETURN_IF_ERROR(guard.status());
    NonzeroParams p = bound(args);
    std::byte* region = args.temporary;
    p.block_totals = reinterpret_cast<uint32_t*>(region);
    region += totals_bytes_;
    p.claims = reinterpret_cast<uint32_t*>(region);
    p.pool_rows = reinterpret_cast<uint64_t*>(region + 16);
    region += pool_bytes_;
    p.warp_counts = reinterpret_cast<uint32_t*>(region);
    p.flag_words = reinterpret_cast<uint32_t*>(region + counts_bytes_);
    cudaLaunchAttribute resident{};
    const cudaLaunchConfig_t config = launch_config(resident, static_cast<cudaStream_t>(args.stream));
    return check_launch(cudaLaunchKernelEx(&config, kernel_, p), "cuda.nonzero", config.stream);
  }

 private:
  // The launch of execute on `stream`, every block resident at once for the grid barrier
  // (GridBarrier): one cluster, or cooperative. `resident` holds the attribute the config points to.
  cudaLaunchConfig_t launch_config(cudaLaunchAttribute& resident, cudaStream_t stream) const {
    if (one_cluster_) {
      resident.id = cudaLaunchAttributeClusterDimension;
      resident.val.clusterDim.x = blocks_;
      resident.val.clusterDim.y = 1;
      resident.val.clusterDim.z = 1;
    } else {
      resident.id = cudaLaunchAttributeCooperative;
      resident.val.cooperative = 1;
    }
    cudaLaunchConfig_t config{};
    config.gridDim = dim3(blocks_);
    config.blockDim = dim3(kThreads);
    config.dynamicSmemBytes = kept_bytes_;
    config.stream = stream;
    config.attrs = &resident;
    config.numAttrs = 1;
    return config;
  }

  int ordinal_;
  KernelFunction kernel_;  // the one size_grid chose: pooled_kernel_ where there is a pool
  KernelFunction pooled_kernel_;
  uint32_t blocks_ = 0;
  bool one_cluster_ = false;  // launched as one thread block cluster (kClusterBlocks)
  uint32_t kept_bytes_ = 0;   // dynamic shared memory a block: Kept
  uint64_t totals_bytes_ = 0;
  uint64_t pool_bytes_ = 0;
  uint64_t counts_bytes_ = 0;
  uint64_t flag_bytes_ = 0;
};

// cuda.lookback: a block a tile, the statuses zeroed ahead of the kernel (lookback_kernel).
class CudaLookbackKernel final : public Kernel, NonzeroLaunch {
 public:
  CudaLookbackKernel(const NonzeroPlan& plan, const CudaDevice& device)
      : NonzeroLaunch(plan), ordinal_(device.ordinal()), kernel_(kernel_for<SinglePass>(plan)) {
    if (verbose())
      log_verbose(cat("cuda.lookback tuning: ", kThreads, " threads, ", kTileBytes,
                      "-byte tiles, a block a tile: ", params_.tiles, " blocks"));
  }

  // A status word a tile, where there is more than one (one tile reads and publishes none).
  uint64_t temporary_bytes() const override { return params_.tiles > 1 ? uint64_t{params_.tiles} * 8 : 0; }

  Status execute(const ExecuteArgs& args) const override {
    DeviceGuard guard(ordinal_);
    ODML_RETURN_IF_ERROR(guard.status());
    NonzeroParams p = bound(args);
    p.statuses = reinterpret_cast<uint64_t*>(args.temporary);
    const auto stream = static_cast<cudaStream_t>(args.stream);
    if (p.tiles > 1)  // tile 0 reads no status
      ODML_RETURN_IF_ERROR(cuda_status(cudaMemsetAsync(p.statuses, 0, temporary_bytes(), stream),
                                       "cuda.lookback: zeroing the statuses"));
    cudaLaunchConfig_t config{};
    config.gridDim = dim3(p.tiles);
    config.blockDim = dim3(kThreads);
    config.stream = stream;
    return check_launch(cudaLaunchKernelEx(&config, kernel_, p), "cuda.lookback", stream);
  }

 private:
  int ordinal_;
  KernelFunction kernel_;
};

// Why neither implementation can take the plan's tiles, or "".
std::string tiles_decline(const NonzeroPlan& plan) {
  if (plan.element_bytes > 4) return cat(plan.element_bytes, "-byte elements");
  // Tiles are numbered in 32 bits, with room for a block's end past the last tile: from 2^31 tiles
  // (2^45 one-byte elements, 2^43 four-byte ones, which only zero strides make fit a buffer) the
  // count wrapped to nothing at 2^32 and a block's end wrapped before it.
  if (tile_count(plan) > INT32_MAX)
    return cat(plan.element_count, " elements, more than 2^31 - 1 tiles of ", kTileBytes / plan.element_bytes, " hold");
  return "";
}

}  // namespace

std::string cuda_nonzero_declines(const NonzeroPlan& plan, const CudaDevice& device) {
  if (std::string why = tiles_decline(plan); !why.empty()) return why;
  // The grid barrier needs every block resident: a cooperative launch (or one cluster, on the same
  // GPUs).
  int cooperative = 0;
  if (cudaDeviceGetAttribute(&cooperative, cudaDevAttrCooperativeLaunch, device.ordinal()) != cudaSuccess) {
    cudaGetLastError();
    return "the device's cooperative launch attribute cannot be read";
  }
  if (cooperative == 0) return "the device has no cooperative launch, which its grid barrier needs";
  return "";
}

Result<std::unique_ptr<Kernel>> make_cuda_nonzero_kernel(const NonzeroPlan& plan, const CudaDevice& device) {
  auto kernel = std::make_unique<CudaNonzeroKernel>(plan, device);
  ODML_RETURN_IF_ERROR(kernel->size_grid(plan, device));
  return kernel;
}

std::string cuda_lookback_declines(const NonzeroPlan& plan, const CudaDevice&) { return tiles_decline(plan); }

std::string cuda_lookback_passes_over(const NonzeroPlan& plan, const CudaDevice&) {
  // One tile is one block, with no look-back, no statuses to zero and no cooperative launch: faster
  // than cuda.nonzero there. From two tiles on, the two passes are faster (bench/NOTES.md, "NONZERO
  // in a single pass, measured"), so more tiles take it only where a test or a benchmark forces it:
  // not even where cuda.nonzero declines, since a GPU without cooperative launches might not start
  // its blocks in order either.
  if (tile_count(plan) > 1) return cat(tile_count(plan), " tiles, where the two passes are faster");
  return "";
}

Result<std::unique_ptr<Kernel>> make_cuda_lookback_kernel(const NonzeroPlan& plan, const CudaDevice& device) {
  return std::unique_ptr<Kernel>(std::make_unique<CudaLookbackKernel>(plan, device));
}

}  // namespace opendml::internal
