// JOIN and SPLIT on the CPU. The items are cut into tiles of about kTileBytes, the threads take
// tiles in turn. Items that interleave in the shared tensor (a JOIN or SPLIT along an inner axis:
// every item has the same outer rows) are tiled together, the t-th tile of each covering the same
// outer rows, so that the cache lines both items write (JOIN) or read (SPLIT) are still in the
// cache for the second item instead of crossing the memory bus once per item. Within a tile, runs
// of the innermost dimension are copied in blocks of rows with pointer steps and moves whose size
// the compiler knows.
#include <algorithm>
#include <array>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <vector>

#include "backends/cpu/cpu_device.h"
#include "backends/cpu/parallel.h"
#include "core/arithmetic.h"

#if defined(__x86_64__)
#include <emmintrin.h>
#endif

namespace opendml::internal {
namespace {

// Tuning of cpu.copy (see bench/NOTES.md for the measurements behind them).
// A tile of every interleaved item together: small enough to stay in a core's L2 between the
// items, large enough that the per-tile cost (an unravel per item) does not show.
constexpr uint64_t kTileBytes = uint64_t{64} << 10;
// A plan has at most this many tiles; past kTileBytes * kMaxTiles (64 GiB) its tiles grow instead.
// They are made at compile, from what the descriptors declare (64-bit indices allow petabytes)
// before any memory is bound: a tile a 64 KiB took gigabytes to list for a declared 2^54 bytes.
constexpr uint64_t kMaxTiles = uint64_t{1} << 20;
// Runs at least this long go to memcpy; shorter ones are 16-byte moves.
constexpr uint64_t kMemcpyRunBytes = 512;
// Groups of at most this many single-vector-per-row items are copied row by row (copy_interleaved).
constexpr uint32_t kInterleaveItems = 4;
// Plans that move at least this much write with non-temporal stores where they can: well above the
// last-level cache a core sees, so the output could not stay there anyway. (Not from sysconf: it
// reports 320 MiB for the 32 MiB L3 of the 2-core machine this was measured on.)
constexpr uint64_t kStreamBytes = uint64_t{64} << 20;

// OPENDML_CPU_STREAM_BYTES=N, a test mode (docs/contract.md section 5): plans of N bytes and more
// use non-temporal stores instead of those of kStreamBytes and more, so that tests and fuzzers
// reach them with small tensors. Read at each compile; a value that is not decimal digits leaves
// kStreamBytes.
uint64_t stream_bytes() {
  const char* text = std::getenv("OPENDML_CPU_STREAM_BYTES");
  if (text == nullptr) return kStreamBytes;
  const std::string_view v(text);
  uint64_t n = 0;
  const auto [end, error] = std::from_chars(v.data(), v.data() + v.size(), n);
  return !v.empty() && error == std::errc() && end == v.data() + v.size() ? n : kStreamBytes;
}

// Non-temporal stores write memory without reading the line first and without filling the cache
// with it. They are used through SSE2 intrinsics, on x86-64 only (where SSE2 is always there);
// elsewhere every store is an ordinary one.
#if defined(__x86_64__)
constexpr bool kHaveStreamingStores = true;
#else
constexpr bool kHaveStreamingStores = false;
#endif

// Moves kBytes bytes; kStream: with non-temporal stores, in moves of 4, 8 or 16 bytes (kBytes a
// multiple of 4 and dst of min(kBytes, 16): what items of that width guarantee).
template <uint64_t kBytes, bool kStream>
void move(std::byte* dst, const std::byte* src) {
#if defined(__x86_64__)
  if constexpr (kStream && kBytes % 16 == 0) {
    for (uint64_t at = 0; at < kBytes; at += 16)
      _mm_stream_si128(reinterpret_cast<__m128i*>(dst + at),
                       _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + at)));
    return;
  } else if constexpr (kStream && kBytes == 8) {
    long long v;
    std::memcpy(&v, src, 8);
    return _mm_stream_si64(reinterpret_cast<long long*>(dst), v);
  } else if constexpr (kStream) {
    static_assert(kBytes == 4);
    int v;
    std::memcpy(&v, src, 4);
    return _mm_stream_si32(reinterpret_cast<int*>(dst), v);
  }
#endif
  std::memcpy(dst, src, kBytes);
}

// Copies `rows` runs of kBytes bytes, each `dst_step` and `src_step` bytes after the one before.
template <uint64_t kBytes, bool kStream = false>
void copy_rows(std::byte* dst, uint64_t dst_step, const std::byte* src, uint64_t src_step, uint64_t rows) {
  for (; rows > 0; --rows, dst += dst_step, src += src_step) move<kBytes, kStream>(dst, src);
}

// The same for runs of any length: below kMemcpyRunBytes as 16-byte moves (the last one ending at
// the run's end, over bytes the one before may have written already: the same values), 8-, 4-,
// 2- or 1-byte moves alike for runs shorter than 16 bytes.
void copy_rows(std::byte* dst, uint64_t dst_step, const std::byte* src, uint64_t src_step, uint64_t rows,
               uint64_t bytes) {
  const auto both_ends = [&]<uint64_t kMove>() {
    for (; rows > 0; --rows, dst += dst_step, src += src_step) {
      for (uint64_t at = 0; at + kMove < bytes; at += kMove) std::memcpy(dst + at, src + at, kMove);
      std::memcpy(dst + bytes - kMove, src + bytes - kMove, kMove);
    }
  };
  switch (bytes) {
    case 1: return copy_rows<1>(dst, dst_step, src, src_step, rows);
    case 2: return copy_rows<2>(dst, dst_step, src, src_step, rows);
    case 4: return copy_rows<4>(dst, dst_step, src, src_step, rows);
    case 8: return copy_rows<8>(dst, dst_step, src, src_step, rows);
    case 16: return copy_rows<16>(dst, dst_step, src, src_step, rows);
    case 32: return copy_rows<32>(dst, dst_step, src, src_step, rows);
    case 64: return copy_rows<64>(dst, dst_step, src, src_step, rows);
    case 128: return copy_rows<128>(dst, dst_step, src, src_step, rows);
    case 256: return copy_rows<256>(dst, dst_step, src, src_step, rows);
    default: break;
  }
  if (bytes >= kMemcpyRunBytes) {
    for (; rows > 0; --rows, dst += dst_step, src += src_step) std::memcpy(dst, src, bytes);
  } else if (bytes >= 16) {
    both_ends.template operator()<16>();
  } else if (bytes >= 8) {
    both_ends.template operator()<8>();
  } else if (bytes >= 4) {
    both_ends.template operator()<4>();
  } else {
    both_ends.template operator()<2>();  // 3 bytes: the only length left
  }
}

// The same with non-temporal stores (can_stream): runs of whole vectors of `width` bytes, in
// moves of that width (only 16-byte vectors guarantee 16-byte aligned runs).
void stream_rows(std::byte* dst, uint64_t dst_step, const std::byte* src, uint64_t src_step, uint64_t rows,
                 uint64_t bytes, uint64_t width) {
  const auto in_moves = [&]<uint64_t kMove>() {
    if (bytes == kMove) return copy_rows<kMove, true>(dst, dst_step, src, src_step, rows);
    for (; rows > 0; --rows, dst += dst_step, src += src_step)
      for (uint64_t at = 0; at < bytes; at += kMove) move<kMove, true>(dst + at, src + at);
  };
  if (width == 4) return in_moves.template operator()<4>();
  if (width == 8) return in_moves.template operator()<8>();
  switch (bytes) {
    case 32: return copy_rows<32, true>(dst, dst_step, src, src_step, rows);
    case 64: return copy_rows<64, true>(dst, dst_step, src, src_step, rows);
    case 128: return copy_rows<128, true>(dst, dst_step, src, src_step, rows);
    case 256: return copy_rows<256, true>(dst, dst_step, src, src_step, rows);
    default: return in_moves.template operator()<16>();
  }
}

// Non-temporal stores pay where an item writes whole cache lines one store after the other: runs
// of 64 bytes or more along the output's innermost dimension, in vectors of 4, 8 or 16 bytes.
// Lines that other items fill too (a JOIN of narrow slices: copy_interleaved) would leave the
// write-combining buffers half full.
bool can_stream(const CopyItem& item) {
  const uint32_t last = item.rank - 1;
  return kHaveStreamingStores && item.width >= 4 && item.dst_strides[last] == 1 && item.sizes[last] * item.width >= 64;
}

// Copies `rows` runs of `count` elements of an item (for_each_block's blocks) from src to dst;
// stream: with non-temporal stores (can_stream(item)).
void copy_block(const CopyItem& item, std::byte* dst, const std::byte* src, uint64_t rows, uint64_t count,
                bool stream) {
  const uint32_t last = item.rank - 1;
  const uint64_t w = item.width;
  const auto copy = [&](std::byte* d, uint64_t ds, const std::byte* s, uint64_t ss, uint64_t n, uint64_t bytes) {
    if (stream) return stream_rows(d, ds, s, ss, n, bytes, w);
    copy_rows(d, ds, s, ss, n, bytes);
  };
  // Between rows: the steps along dimension rank - 2 (rows > 1 only where there is one).
  const uint64_t dst_row = item.rank > 1 ? item.dst_strides[last - 1] * w : 0;
  const uint64_t src_row = item.rank > 1 ? item.src_strides[last - 1] * w : 0;
  if (item.inner_contiguous()) return copy(dst, dst_row, src, src_row, rows, count * w);
  // A strided innermost dimension: each element a run of its own.
  for (; rows > 0; --rows, dst += dst_row, src += src_row)
    copy(dst, item.dst_strides[last] * w, src, item.src_strides[last] * w, count, w);
}

// One item's walk in copy_interleaved: where its next vector comes from and goes to.
struct Lane {
  std::byte* dst;
  const std::byte* src;
  uint64_t dst_step, src_step;
};

// `rows` rows of one kBytes vector from each of kLanes lanes in turn. The lane count is a
// constant so that the lanes live in registers: with a loop over a run-time count, the pointer
// updates through memory measured slower than copying the items one after the other.
template <uint32_t kLanes, uint64_t kBytes, bool kStream = false>
void interleave_rows(const Lane* first, uint64_t rows) {
  std::array<Lane, kLanes> lanes;
  std::copy(first, first + kLanes, lanes.begin());
  for (; rows > 0; --rows) {
    for (Lane& lane : lanes) {
      move<kBytes, kStream>(lane.dst, lane.src);
      lane.dst += lane.dst_step;
      lane.src += lane.src_step;
    }
  }
}

template <uint32_t kLanes>
void interleave_rows(const Lane* lanes, uint64_t rows, uint64_t bytes, bool stream) {
  switch (bytes) {
    case 1: return interleave_rows<kLanes, 1>(lanes, rows);
    case 2: return interleave_rows<kLanes, 2>(lanes, rows);
    case 4: return stream ? interleave_rows<kLanes, 4, true>(lanes, rows) : interleave_rows<kLanes, 4>(lanes, rows);
    case 8: return stream ? interleave_rows<kLanes, 8, true>(lanes, rows) : interleave_rows<kLanes, 8>(lanes, rows);
    default: return stream ? interleave_rows<kLanes, 16, true>(lanes, rows) : interleave_rows<kLanes, 16>(lanes, rows);
  }
}

class CpuCopyKernel final : public Kernel {
 public:
  explicit CpuCopyKernel(const CopyPlan& plan) : plan_(plan), unit_(plan.items.size(), 1) {
    tile_bytes_ = cpu_copy_tile_bytes(plan);
    for (uint32_t first = 0; first < plan.items.size();) {
      const uint32_t end = group_end(first);
      if (!tile_together(first, end)) {
        for (uint32_t i = first; i < end; ++i) tile_alone(i);
      }
      first = end;
    }
    parallel_ = plan.bytes() >= kParallelBytes && chunks_.size() > 1;
    const uint64_t stream_from = stream_bytes();
    stream_ = plan.bytes() >= stream_from;
    if (verbose())
      log_verbose(cat("cpu.copy tuning: ", tile_bytes_, "-byte tiles (", kTileBytes, " up to ", kMaxTiles,
                      " tiles), runs of ", kMemcpyRunBytes, " bytes and more by memcpy, row by row for up to ",
                      kInterleaveItems, " inputs, non-temporal stores from ", stream_from, " bytes (",
                      stream_ && kHaveStreamingStores ? "on" : "off", "); ", chunks_.size(), " chunks"));
  }

  Status execute(const ExecuteArgs& args) const override {
    for_each_index(chunks_.size(), parallel_, true, [&](uint64_t c) {
      const Chunk& chunk = chunks_[c];
      if (chunk.interleaved) {
        copy_interleaved(chunk, args);
      } else {
        for (uint32_t i = chunk.first; i < chunk.end; ++i)
          copy_item(i, chunk.begin * unit_[i], chunk.end_unit * unit_[i], args);
      }
#if defined(__x86_64__)
      if (stream_) _mm_sfence();  // the non-temporal stores visible before the operator completes
#endif
    });
    return {};
  }

 private:
  // Items [first, end) over units [begin, end_unit): item i's logical elements
  // [begin * unit_[i], end_unit * unit_[i]).
  struct Chunk {
    uint32_t first, end;
    uint64_t begin, end_unit;
    bool interleaved;  // the items are one vector per unit (an outer row), all of one width
  };

  // The logical elements [begin, end) of item i, block by block.
  void copy_item(uint32_t i, uint64_t begin, uint64_t end, const ExecuteArgs& args) const {
    const CopyItem& item = plan_.items[i];
    const std::byte* src = args.inputs[item.input] + item.src_offset * item.width;
    std::byte* dst = args.outputs[item.output] + item.dst_offset * item.width;
    const bool stream = stream_ && can_stream(item);
    // One run is one memcpy: without the block walk, 1000 inputs of 4 KiB measured as fast as before
    // for_each_block (7-10% slower through it).
    if (item.rank == 1 && item.inner_contiguous() && !stream) {
      std::memcpy(dst + begin * item.width, src + begin * item.width, (end - begin) * item.width);
      return;
    }
    for_each_block(item.rank, item.sizes, begin, end, [&](const Dims& coord, uint64_t rows, uint64_t count) {
      copy_block(item, dst + dot(coord, item.dst_strides, item.rank) * item.width,
                 src + dot(coord, item.src_strides, item.rank) * item.width, rows, count, stream);
    });
  }

  // A JOIN's rows, each row's vector of every item in turn: the joined tensor is then written in
  // order, whole cache lines at a time, as non-temporal stores need.
  void copy_interleaved(const Chunk& chunk, const ExecuteArgs& args) const {
    std::array<Lane, kInterleaveItems> lanes;
    const uint32_t n = chunk.end - chunk.first;
    const uint64_t w = plan_.items[chunk.first].width;
    bool in_order = true;  // every lane's dst follows the one before
    for (uint32_t l = 0; l < n; ++l) {
      const CopyItem& item = plan_.items[chunk.first + l];
      lanes[l] = {args.outputs[item.output] + (item.dst_offset + chunk.begin * item.dst_strides[0]) * w,
                  args.inputs[item.input] + (item.src_offset + chunk.begin * item.src_strides[0]) * w,
                  item.dst_strides[0] * w, item.src_strides[0] * w};
      in_order = in_order && lanes[l].dst_step == n * w;
    }
    const uint64_t rows = chunk.end_unit - chunk.begin;
    const bool stream = stream_ && kHaveStreamingStores && w >= 4 && in_order;
    switch (n) {
      case 2: return interleave_rows<2>(lanes.data(), rows, w, stream);
      case 3: return interleave_rows<3>(lanes.data(), rows, w, stream);
      default: return interleave_rows<4>(lanes.data(), rows, w, stream);
    }
  }

  // Items that may interleave in the shared tensor: consecutive, none of them one contiguous run
  // (those have nothing to share with a neighbour), all with the same outermost size.
  uint32_t group_end(uint32_t first) const {
    const auto alone = [](const CopyItem& item) { return item.rank == 1 && item.inner_contiguous(); };
    const std::vector<CopyItem>& items = plan_.items;
    uint32_t end = first + 1;
    if (alone(items[first])) return end;
    while (end < items.size() && !alone(items[end]) && items[end].sizes[0] == items[first].sizes[0]) ++end;
    return end;
  }

  // Tiles the items [first, end) together by their outer rows; false where there are fewer rows
  // than tiles (rows that large have nothing to gain from it).
  bool tile_together(uint32_t first, uint32_t end) {
    const uint64_t rows = plan_.items[first].sizes[0];
    if (end - first < 2) return false;
    const uint64_t tiles = ceil_div(plan_.bytes(first, end), tile_bytes_);
    if (rows < tiles) return false;
    bool interleaved = end - first <= kInterleaveItems;
    for (uint32_t i = first; i < end; ++i) {
      unit_[i] = plan_.items[i].element_count() / rows;
      const CopyItem& item = plan_.items[i];
      // JOIN only (one output): SPLIT row by row measured slower than by tiles (bench/NOTES.md).
      interleaved = interleaved && item.rank == 1 && item.width == plan_.items[first].width &&
                    item.output == plan_.items[first].output;
    }
    add_tiles(first, end, rows, tiles, interleaved);
    return true;
  }

  void tile_alone(uint32_t i) {
    const CopyItem& item = plan_.items[i];
    const uint64_t n = item.element_count();  // at least 1: DirectML has no empty tensors
    add_tiles(i, i + 1, n, std::min(n, ceil_div(n * item.width, tile_bytes_)), false);
  }

  // `tiles` chunks over [0, units), as equal as integers allow.
  void add_tiles(uint32_t first, uint32_t end, uint64_t units, uint64_t tiles, bool interleaved) {
    const uint64_t q = units / tiles, r = units % tiles;
    for (uint64_t t = 0, begin = 0; t < tiles; ++t) {
      const uint64_t size = q + (t < r ? 1 : 0);
      chunks_.push_back({first, end, begin, begin + size, interleaved});
      begin += size;
    }
  }

  CopyPlan plan_;
  std::vector<uint64_t> unit_;  // elements per unit of a chunk, per item
  std::vector<Chunk> chunks_;
  uint64_t tile_bytes_ = kTileBytes;  // kTileBytes, or more for plans past kMaxTiles of them
  bool parallel_ = false;
  bool stream_ = false;
};

}  // namespace

uint64_t cpu_copy_tile_bytes(const CopyPlan& plan) {
  // From the plan's KiB, not its bytes(), which stop at 2^62: a SPLIT of a broadcast input moves up
  // to 2^65 bytes, and tiles sized from 2^62 made 8 times kMaxTiles of them.
  return std::max(kTileBytes, ceil_div(plan.kib(), kMaxTiles) << 10);
}

Result<std::unique_ptr<Kernel>> make_cpu_copy_kernel(const CopyPlan& plan, const CpuDevice&) {
  return std::make_unique<CpuCopyKernel>(plan);
}

}  // namespace opendml::internal
