// JOIN and SPLIT on the GPU: every copy item of the plan in one launch.
//
// cuda.slices  For concatenations of narrow rows (slices averaging under kSlicesMaxBytes, or
//              kSlicesMaxJoinBytes for a JOIN of a few pieces), where copying
//              item by item would write (JOIN) or read (SPLIT) the joined tensor in scattered
//              pieces. Threads walk the joined tensor linearly, so its accesses are coalesced,
//              and find each element's piece with a binary search over the column offsets.
// cuda.copy    Any plan: each block copies a chunk of one item (or several small items of one
//              shape), each thread kUnroll vectors of the item's width (up to 16 bytes),
//              unravelling indices with FastDivmod. Plans of a few items that are each one
//              contiguous run (Runs: a JOIN or SPLIT along the outermost axis), and plans of many
//              such items of one shape, take a kernel of a handful of instructions per width
//              instead.
//
// Metadata (items, the block -> item table, the slices' column table) is built at compile and
// uploaded to the persistent region at initialize (plans of up to kInlineItems items instead pass
// theirs in the kernel parameters, and so do plans of many items of one shape, as one item and
// its steps: UniformItems); the tensors' addresses, which change with every
// execute, travel as kernel parameters (up to kLargeTable pointers, CUDA 12.1+ allows 32 KiB of
// parameters), so execute is one launch per group of kLargeTable tensors and copies nothing from
// the host.
#include <algorithm>
#include <cstring>
#include <iterator>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "backends/cuda/cuda_backend.h"
#include "backends/cuda/cuda_status.h"
#include "backends/cuda/fast_divmod.h"
#include "core/arithmetic.h"

namespace opendml::internal {
namespace {

// The family's tuning, printed by OPENDML_VERBOSE=1; bench/NOTES.md logs what the values measured.
constexpr uint32_t kThreads = 256;
constexpr uint32_t kUnroll = 4;                  // vectors per thread
constexpr uint32_t kChunk = kThreads * kUnroll;  // vectors per block
// A copy that would not give every SM a block moves one vector per thread instead, on four times
// the blocks: a few blocks moving 16 KiB each took 0.4-0.6 us longer than the same bytes spread
// over the GPU (bench/NOTES.md, "small copies").
constexpr uint32_t kSmallUnroll = 1;
// Pointer tables come in three sizes, since a launch copies its whole parameter block.
constexpr uint32_t kSmallTable = 30;  // most operators
constexpr uint32_t kMediumTable = 1024;
constexpr uint32_t kLargeTable = 4000;                   // 32000 bytes, under CUDA's 32764-byte limit
constexpr uint32_t kMaxSlicePieces = 1024;               // column table held in shared memory
constexpr uint64_t kMaxItemVectors = uint64_t{1} << 31;  // block counts of an item stay in 32 bits
// cuda.copy: plans of a few items travel whole in the kernel parameters, so that a block starts
// copying without first waiting for two dependent loads of its metadata, which is most of the time
// of a small copy.
constexpr uint32_t kInlineItems = 8;
static_assert(2 * kInlineItems <= kSmallTable);
// cuda.copy of contiguous runs (Runs): vectors per thread, at every size. Four a thread from a wave
// of blocks on were slower from 16 MiB (bench/NOTES.md, "cuda.copy: contiguous runs").
constexpr uint32_t kRunsUnroll = 1;
// Runs: a launch has room for kFewRuns, kSomeRuns or kInlineItems items in its parameters, the fewest
// that hold the plan's (with_capacity), since a launch pays for its parameter block: a JOIN of two
// pieces in 48 bytes rather than 192 measured 1.03-1.05x (bench/NOTES.md, "Runs sized to the plan").
constexpr uint32_t kFewRuns = 2, kSomeRuns = 4;
// Uniform items whose own tensors lie in up to kStepRuns runs of evenly stepped addresses pass the
// runs rather than a pointer table (SteppedTensors).
constexpr uint32_t kStepRuns = 2;
// Uniform items that are each one contiguous run (1000 inputs of 4 KiB): vectors per thread. Four
// measured 1.02x (JOIN) and 1.04x (SPLIT) beside one, which measured as the general uniform kernel
// (bench/NOTES.md, "cuda.copy: uniform items that are contiguous runs").
constexpr uint32_t kUniformRunsUnroll = 4;
// cuda.slices: up to this many pieces travel in the kernel parameters; more live in the persistent
// region. With no persistent region, a call needs no initialize and uploads nothing: where nothing
// lends memory across calls (JAX's handlers) an upload at every call cost 8-15% at 256 MiB
// (bench/NOTES.md).
constexpr uint32_t kInlinePieces = 16;
// cuda.slices takes plans whose slices average under kSlicesMaxBytes; cuda.copy moves wider ones.
// JOINs of up to kInlinePieces pieces (two or more) go to cuda.slices up to kSlicesMaxJoinBytes: a
// JOIN of two 256-byte slices a row measured 1.03x through cuda.slices, which writes the joined rows
// in order, while the SPLIT of the same measured the same either way (bench/NOTES.md, "cuda.slices:
// JOINs of slices up to 512 bytes"). JOINs of more pieces keep cuda.copy's kernels for many pieces
// of one shape, which need no piece table in the persistent region.
constexpr uint32_t kSlicesMaxBytes = 128;
constexpr uint32_t kSlicesMaxJoinBytes = 512;

template <uint32_t kCapacity>
struct PointerTable {
  std::byte* p[kCapacity];
};

uint64_t align16(uint64_t n) { return (n + 15) & ~uint64_t{15}; }

// The type that moves kWidth bytes at once.
template <uint32_t kWidth>
using Vec = std::conditional_t<
    kWidth == 1, uint8_t,
    std::conditional_t<kWidth == 2, uint16_t,
                       std::conditional_t<kWidth == 4, uint32_t, std::conditional_t<kWidth == 8, uint2, uint4>>>>;

// Calls fn.template operator()<kWidth>() for the run-time width and returns what it returns: in a
// kernel, or on the host to launch a kernel of that width (and return the launch's error).
template <class Fn>
__host__ __device__ __forceinline__ auto with_width(uint32_t width, Fn&& fn) {
  switch (width) {
    case 16: return fn.template operator()<16>();
    case 8: return fn.template operator()<8>();
    case 4: return fn.template operator()<4>();
    case 2: return fn.template operator()<2>();
    default: return fn.template operator()<1>();
  }
}

// Which tensors one launch reads and writes: its pointer table lists them by slot.
struct Slot {
  bool output;
  uint32_t index;
};

struct LaunchGroup {
  std::vector<Slot> slots;
  uint32_t first_block = 0;  // in the block -> item table
  uint32_t blocks = 0;
  uint32_t table = 0;  // the least pointer table its launch takes (launch_with_table)
};

// The bound tensor in `slot`.
std::byte* address(const Slot& slot, const ExecuteArgs& args) {
  return slot.output ? args.outputs[slot.index] : const_cast<std::byte*>(args.inputs[slot.index]);
}

// Fills the pointer table of a launch from the bound tensors.
template <uint32_t kCapacity>
PointerTable<kCapacity> pointer_table(const LaunchGroup& group, const ExecuteArgs& args) {
  PointerTable<kCapacity> table;
  for (size_t i = 0; i < group.slots.size(); ++i) table.p[i] = address(group.slots[i], args);
  return table;
}

// Assigns each item's tensors a place in the pointer table of a launch, starting a new launch
// when a table would overflow. `assign(item, src_local, dst_local)` records the places.
template <class Assign>
std::vector<LaunchGroup> group_launches(const CopyPlan& plan, Assign&& assign) {
  std::vector<LaunchGroup> groups(1);
  std::vector<int64_t> local_input(0), local_output(0);
  for (const CopyItem& item : plan.items) {
    local_input.resize(std::max<size_t>(local_input.size(), item.input + 1), -1);
    local_output.resize(std::max<size_t>(local_output.size(), item.output + 1), -1);
  }
  const auto local = [&](std::vector<int64_t>& map, bool output, uint32_t index) {
    if (map[index] < 0) {
      map[index] = static_cast<int64_t>(groups.back().slots.size());
      groups.back().slots.push_back({output, index});
    }
    return static_cast<uint32_t>(map[index]);
  };
  for (size_t i = 0; i < plan.items.size(); ++i) {
    const CopyItem& item = plan.items[i];
    const uint32_t needed = (local_input[item.input] < 0) + (local_output[item.output] < 0);
    if (groups.back().slots.size() + needed > kLargeTable) {
      groups.emplace_back();
      std::fill(local_input.begin(), local_input.end(), -1);
      std::fill(local_output.begin(), local_output.end(), -1);
    }
    assign(i, groups.size() - 1, local(local_input, false, item.input), local(local_output, true, item.output));
  }
  return groups;
}

// Calls fn.template operator()<kCapacity>() for the first of the capacities (ascending) that holds
// n, the last where none does, and returns what it returns: a launch's parameters sized to what it
// carries, since a launch pays for its parameter block (pointer tables, Runs).
template <uint32_t kFirst, uint32_t... kRest, class Fn>
auto with_capacity(size_t n, Fn&& fn) {
  if constexpr (sizeof...(kRest) == 0) {
    return fn.template operator()<kFirst>();
  } else {
    if (n <= kFirst) return fn.template operator()<kFirst>();
    return with_capacity<kRest...>(n, std::forward<Fn>(fn));
  }
}

// Launches kernel(table, args...) with the smallest pointer table that fits the group (and is
// group.table at least); returns the launch's error.
template <template <uint32_t> class Kernel, class... Args>
cudaError_t launch_with_table(const LaunchGroup& group, const ExecuteArgs& args, cudaStream_t stream,
                              Args... kernel_args) {
  const size_t slots = std::max<size_t>(group.slots.size(), group.table);
  return with_capacity<kSmallTable, kMediumTable, kLargeTable>(slots, [&]<uint32_t kCapacity>() {
    return Kernel<kCapacity>::launch(group, pointer_table<kCapacity>(group, args), stream, kernel_args...);
  });
}

// ---- cuda.copy ---------------------------------------------------------------------------------

struct DeviceItem {
  uint32_t src, dst;  // places in the launch's pointer table
  uint32_t width, rank;
  uint32_t count;                   // vectors
  uint32_t first_block;             // in the block -> item table
  uint64_t src_offset, dst_offset;  // relative to these, an item spans under 2^32 vectors
  FastDivmod sizes[kMaxRank];
  uint32_t src_strides[kMaxRank], dst_strides[kMaxRank];
};

// Whether `item` is one contiguous run of vectors in both tensors (Runs, uniform runs).
bool contiguous_run(const CopyItem& item) {
  return item.rank == 1 && item.src_strides[0] == 1 && item.dst_strides[0] == 1;
}

// Blocks of `chunk` vectors that copy `item`.
uint32_t blocks_of(const DeviceItem& item, uint32_t chunk) {
  return static_cast<uint32_t>(ceil_div(uint64_t{item.count}, uint64_t{chunk}));
}

// Where a thread's vector of a block's span lies: its item's tensors, already moved by the item's
// steps (UniformItems), and its index within the item.
struct VectorPlace {
  const std::byte* src;
  std::byte* dst;
  uint32_t index;
};

// Vectors first + k * kThreads, k < U, those below `end`: all read before any is written, so that a
// thread has U loads in flight. at(v) gives vector v's source and target. Sources are read through the
// read-only data cache (__ldg), since outputs overlap no input (docs/contract.md section 2).
template <uint32_t kWidth, uint32_t U, class At>
__device__ __forceinline__ void copy_each(uint32_t first, uint32_t end, At&& at) {
  using V = Vec<kWidth>;
  V values[U];
  V* targets[U];
#pragma unroll
  for (uint32_t k = 0; k < U; ++k) {
    const uint32_t v = first + k * kThreads;
    if (v >= end) break;
    const auto [src, dst] = at(v);
    values[k] = __ldg(src);
    targets[k] = dst;
  }
#pragma unroll
  for (uint32_t k = 0; k < U; ++k) {
    if (first + k * kThreads >= end) break;
    *targets[k] = values[k];
  }
}

// Vectors [begin, end) of a block's span, U a thread (copy_each); place(v) says where vector v lies.
template <uint32_t kWidth, uint32_t U, class Place>
__device__ __forceinline__ void copy_vectors(const DeviceItem& item, uint32_t begin, uint32_t end, Place&& place) {
  using V = Vec<kWidth>;
  copy_each<kWidth, U>(begin + threadIdx.x, end, [&](uint32_t v) {
    const VectorPlace at = place(v);
    uint32_t rest = at.index, s = 0, d = 0;
    for (uint32_t dim = item.rank - 1; dim > 0; --dim) {
      uint32_t q, r;
      item.sizes[dim].divmod(rest, q, r);
      s += r * item.src_strides[dim];
      d += r * item.dst_strides[dim];
      rest = q;
    }
    s += rest * item.src_strides[0];
    d += rest * item.dst_strides[0];
    return std::pair{reinterpret_cast<const V*>(at.src + (item.src_offset + s) * kWidth),
                     reinterpret_cast<V*>(at.dst + (item.dst_offset + d) * kWidth)};
  });
}

// The chunk of `item` from vector `begin`, U vectors a thread.
template <uint32_t kWidth, uint32_t U>
__device__ __forceinline__ void copy_chunk(const DeviceItem& item, const std::byte* src, std::byte* dst,
                                           uint32_t begin) {
  copy_vectors<kWidth, U>(item, begin, item.count, [&](uint32_t v) { return VectorPlace{src, dst, v}; });
}

// The block's chunk of `item`: U vectors per thread.
template <uint32_t U = kUnroll, uint32_t kCapacity>
__device__ __forceinline__ void copy_block(const DeviceItem& item, const PointerTable<kCapacity>& table) {
  const uint32_t begin = (blockIdx.x - item.first_block) * (kThreads * U);
  const std::byte* src = table.p[item.src];
  std::byte* dst = table.p[item.dst];
  with_width(item.width, [&]<uint32_t kWidth>() { copy_chunk<kWidth, U>(item, src, dst, begin); });
}

// Items in the persistent region: the block finds its item through the block -> item table, or,
// where every item is one block (block_items null: many small items, not all of one shape), at its
// own block number, which spares every block one dependent load before its copy starts.
template <uint32_t kCapacity>
__global__ void __launch_bounds__(kThreads)
    copy_kernel(const DeviceItem* __restrict__ items, const uint32_t* __restrict__ block_items, uint32_t first_block,
                const __grid_constant__ PointerTable<kCapacity> table) {
  const uint32_t block = first_block + blockIdx.x;
  const uint32_t item = block_items != nullptr ? block_items[block] : block;
  // The block's item, staged in shared memory (raw words: DeviceItem has constructors).
  __shared__ alignas(16) uint32_t item_words[sizeof(DeviceItem) / 4];
  if (threadIdx.x < sizeof(DeviceItem) / 4)
    item_words[threadIdx.x] = reinterpret_cast<const uint32_t*>(&items[item])[threadIdx.x];
  __syncthreads();
  copy_block(*reinterpret_cast<const DeviceItem*>(item_words), table);
}

struct InlineItems {
  DeviceItem items[kInlineItems];
  uint32_t count;
};

template <uint32_t U, uint32_t kCapacity>
__global__ void __launch_bounds__(kThreads) inline_copy_kernel(const __grid_constant__ InlineItems items,
                                                               const __grid_constant__ PointerTable<kCapacity> table) {
  uint32_t i = 0;
  for (uint32_t j = 1; j < items.count; ++j) i = blockIdx.x >= items.items[j].first_block ? j : i;
  copy_block<U>(items.items[i], table);
}

// Inline items that are each one contiguous run of vectors, all of one width: the addresses of
// their first vectors, resolved at execute, and their blocks. A block finds its item by comparisons
// at fixed places in the parameters, the same in all its threads, and each width has a kernel of
// its own: the general kernels' item unravelling and run-time width cost 0.1-0.5 us from 4 KiB to
// 16 MiB (bench/NOTES.md, "cuda.copy: contiguous runs"). Room for kItems items (with_runs_room).
template <uint32_t kItems>
struct Runs {
  static constexpr uint32_t kRoom = kItems;
  static constexpr bool kRows = false;
  const std::byte* src[kItems];
  std::byte* dst[kItems];
  uint32_t first_block[kItems];  // UINT32_MAX past the last item
  uint32_t count[kItems];        // vectors
};

// Inline items that are each rows of one contiguous run of vectors, evenly stepped (a JOIN or
// SPLIT along an inner axis of rows wider than cuda.slices takes: attention's Q, K and V), all of
// one width: Runs, and each item's row length and row steps. Vector v of an item lies in row
// v / length, at v % length (one FastDivmod a vector), so these take Runs' kernel rather than the
// general one (bench/NOTES.md, "cuda.copy: rows of contiguous runs").
template <uint32_t kItems>
struct RowRuns : Runs<kItems> {
  static constexpr bool kRows = true;
  FastDivmod length[kItems];                    // vectors a row
  uint32_t src_step[kItems], dst_step[kItems];  // vectors from one row to the next
};

// fn.template operator()<kItems>() for the room a launch of Runs has for `items` items.
template <class Fn>
auto with_runs_room(size_t items, Fn&& fn) {
  return with_capacity<kFewRuns, kSomeRuns, kInlineItems>(items, std::forward<Fn>(fn));
}

// RowRuns whose items share their row length, row steps and vector count (attention's Q, K and V):
// thread t of the grid moves vector t of every item, so that it has an item's worth of loads in
// flight where Runs' kernel has one, on 1/items of the blocks, and works out the vector's row once.
// XLA's own concatenation kernel maps its threads the same way (bench/NOTES.md, "XLA's concatenate
// kernel ahead in JAX's trace"); on an H100 the QKV JOIN and SPLIT took 0.1-0.3 us less with it than
// with RowRuns' kernel (bench/NOTES.md, "Rows of one shape measured and kept"). Every block has every
// item, so the plan's items have first_block 0, and those past them UINT32_MAX.
template <uint32_t kWidth, uint32_t kItems>
__global__ void __launch_bounds__(kThreads) shared_rows_copy_kernel(const __grid_constant__ RowRuns<kItems> runs) {
  using V = Vec<kWidth>;
  const uint32_t v = blockIdx.x * kThreads + threadIdx.x;
  if (v >= runs.count[0]) return;
  uint32_t row, at;
  runs.length[0].divmod(v, row, at);
  const uint32_t s = row * runs.src_step[0] + at, d = row * runs.dst_step[0] + at;
  V values[kItems];
#pragma unroll
  for (uint32_t j = 0; j < kItems; ++j)
    if (runs.first_block[j] != UINT32_MAX) values[j] = __ldg(reinterpret_cast<const V*>(runs.src[j]) + s);
#pragma unroll
  for (uint32_t j = 0; j < kItems; ++j)
    if (runs.first_block[j] != UINT32_MAX) reinterpret_cast<V*>(runs.dst[j])[d] = values[j];
}

// R: Runs or RowRuns.
template <uint32_t kWidth, class R>
__global__ void __launch_bounds__(kThreads) runs_copy_kernel(const __grid_constant__ R runs) {
  using V = Vec<kWidth>;
  constexpr bool kRows = R::kRows;
  const std::byte* src = runs.src[0];
  std::byte* dst = runs.dst[0];
  uint32_t first = 0, count = runs.count[0];
  [[maybe_unused]] FastDivmod length;
  [[maybe_unused]] uint32_t src_step = 0, dst_step = 0;
  if constexpr (kRows) {
    length = runs.length[0];
    src_step = runs.src_step[0];
    dst_step = runs.dst_step[0];
  }
#pragma unroll
  for (uint32_t j = 1; j < R::kRoom; ++j) {
    if (blockIdx.x >= runs.first_block[j]) {
      src = runs.src[j];
      dst = runs.dst[j];
      first = runs.first_block[j];
      count = runs.count[j];
      if constexpr (kRows) {
        length = runs.length[j];
        src_step = runs.src_step[j];
        dst_step = runs.dst_step[j];
      }
    }
  }
  copy_each<kWidth, kRunsUnroll>((blockIdx.x - first) * (kThreads * kRunsUnroll) + threadIdx.x, count, [&](uint32_t v) {
    uint32_t s = v, d = v;
    if constexpr (kRows) {
      uint32_t row, at;
      length.divmod(v, row, at);
      s = row * src_step + at;
      d = row * dst_step + at;
    }
    return std::pair{reinterpret_cast<const V*>(src) + s, reinterpret_cast<V*>(dst) + d};
  });
}

template <uint32_t kCapacity>
struct CopyLaunch {
  static cudaError_t launch(const LaunchGroup& group, const PointerTable<kCapacity>& table, cudaStream_t stream,
                            const DeviceItem* items, const uint32_t* block_items) {
    return launch_kernel(copy_kernel<kCapacity>, group.blocks, kThreads, stream, items, block_items, group.first_block,
                         table);
  }
};

// Items that differ only in one tensor and in offsets that step evenly: a JOIN or SPLIT of many
// tensors of one shape (1000 inputs of 4 KiB). Every block works out its items and chunk from its
// number, so no block waits on a load of its metadata before its copy starts. The shared tensor
// is slot 0 of the pointer table, item i's own tensor slot 1 + i.
struct UniformItems {
  DeviceItem item;           // item 0 (src, dst and first_block unused)
  uint32_t items;            // how many
  uint32_t blocks_per_item;  // chunks of kChunk vectors; 1 where items_per_block > 1
  // Items of at most half a chunk go several to a block, as many as leave every SM a block (1000
  // pieces of 3 rows of 40 floats joined along their rows: 7 a block). Measured on 1000 inputs of 4
  // KiB before those took the uniform runs: 250 blocks, all resident at once, rather than 1000 blocks
  // of a quarter chunk, of which 792 fit on an H100 at a time (bench/NOTES.md).
  uint32_t items_per_block;
  FastDivmod item_vectors;      // item.count: a vector of a block's span -> its item
  bool shared_src;              // SPLIT: the items share their source; JOIN: their destination
  uint64_t src_step, dst_step;  // item i's offsets: item 0's + i * step (in vectors, modulo 2^64)
  // Items that are each one contiguous run, of at most kMaxItemVectors vectors in all, take a kernel
  // of their width (uniform_runs_kernel) that walks every item's vectors in turn, kUniformRunsUnroll
  // a thread; blocks_per_item and items_per_block are then unused.
  bool runs;
  uint32_t vectors;  // items * item.count, where runs
};

// The tensors of uniform items whose own tensors, bound at this execute, lie in at most kStepRuns
// runs of evenly stepped addresses: views of one buffer, as torch.split, torch.chunk and jnp.split
// make them (one run), or tensors allocated one after another, which a caching allocator hands out
// in order from a block or two (1000 torch tensors of 4 KiB: two runs). The kernel then finds item
// i's tensor by arithmetic, and its parameters are a few words rather than a pointer table of 8-32
// KB, which every launch pays for: on an H100 a SPLIT of 1000 x 4 KiB took 0.5 us longer with
// the table than with one run, 4 KB of 32-bit offsets were no better and eight runs (208 bytes of
// parameters) little better, and two runs (64 bytes) took back 0.35 us of it
// (bench/param_block_bench.cu; bench/NOTES.md, "The launch's parameter block").
struct SteppedTensors {
  std::byte* shared;
  uint32_t second;               // run 1's first item (items, where run 0 holds them all)
  uintptr_t own[kStepRuns];      // each run's first tensor; its item j's is own + j * step (mod 2^64)
  uint64_t own_step[kStepRuns];  // bytes
};

__device__ __forceinline__ std::byte* shared_tensor(const SteppedTensors& t) { return t.shared; }
__device__ __forceinline__ std::byte* own_tensor(const SteppedTensors& t, uint32_t i) {
  static_assert(kStepRuns == 2, "picks between two runs");
  const uint32_t r = i >= t.second;
  return reinterpret_cast<std::byte*>(t.own[r] + (i - (r ? t.second : 0)) * t.own_step[r]);
}
template <uint32_t kCapacity>
__device__ __forceinline__ std::byte* shared_tensor(const PointerTable<kCapacity>& t) {
  return t.p[0];
}
template <uint32_t kCapacity>
__device__ __forceinline__ std::byte* own_tensor(const PointerTable<kCapacity>& t, uint32_t i) {
  return t.p[1 + i];
}

// Tensors: a PointerTable or SteppedTensors.
template <class Tensors>
__global__ void __launch_bounds__(kThreads)
    uniform_copy_kernel(const __grid_constant__ UniformItems u, const __grid_constant__ Tensors tensors) {
  const uint32_t group = blockIdx.x / u.blocks_per_item;
  const uint32_t first = group * u.items_per_block;  // the block's first item
  const uint32_t begin = (blockIdx.x - group * u.blocks_per_item) * kChunk;
  const uint32_t end = min(u.items - first, u.items_per_block) * u.item.count;
  std::byte* const shared = shared_tensor(tensors);
  with_width(u.item.width, [&]<uint32_t kWidth>() {
    copy_vectors<kWidth, kUnroll>(u.item, begin, end, [&](uint32_t v) {
      uint32_t j, index;
      u.item_vectors.divmod(v, j, index);
      const uint32_t i = first + j;
      std::byte* const own = own_tensor(tensors, i);
      return VectorPlace{(u.shared_src ? shared : own) + i * u.src_step * kWidth,
                         (u.shared_src ? own : shared) + i * u.dst_step * kWidth, index};
    });
  });
}

// Uniform items that are each one contiguous run: vector v of the span is vector v % count of item
// v / count.
template <uint32_t kWidth, class Tensors>
__global__ void __launch_bounds__(kThreads)
    uniform_runs_kernel(const __grid_constant__ UniformItems u, const __grid_constant__ Tensors tensors) {
  using V = Vec<kWidth>;
  std::byte* const shared = shared_tensor(tensors);
  copy_each<kWidth, kUniformRunsUnroll>(blockIdx.x * (kThreads * kUniformRunsUnroll) + threadIdx.x, u.vectors,
                                        [&](uint32_t v) {
                                          uint32_t i, index;
                                          u.item_vectors.divmod(v, i, index);
                                          std::byte* const own = own_tensor(tensors, i);
                                          const auto* src = reinterpret_cast<const V*>(u.shared_src ? shared : own);
                                          auto* dst = reinterpret_cast<V*>(u.shared_src ? own : shared);
                                          return std::pair{src + u.item.src_offset + i * u.src_step + index,
                                                           dst + u.item.dst_offset + i * u.dst_step + index};
                                        });
}

template <class Tensors>
cudaError_t launch_uniform(const UniformItems& u, uint32_t blocks, cudaStream_t stream, const Tensors& tensors) {
  if (!u.runs) return launch_kernel(uniform_copy_kernel<Tensors>, blocks, kThreads, stream, u, tensors);
  return with_width(u.item.width, [&]<uint32_t kWidth>() {
    return launch_kernel(uniform_runs_kernel<kWidth, Tensors>, blocks, kThreads, stream, u, tensors);
  });
}

template <uint32_t kCapacity>
struct UniformLaunch {
  static cudaError_t launch(const LaunchGroup& group, const PointerTable<kCapacity>& table, cudaStream_t stream,
                            const UniformItems* u) {
    return launch_uniform(*u, group.blocks, stream, table);
  }
};

// The tensors of `group` (uniform items' launch: slot 0 shared, 1 + i item i's own) as
// SteppedTensors, where their addresses fall into kStepRuns runs or fewer. Each run takes as many
// items as step evenly from its first two; any split of the items into such runs is correct.
std::optional<SteppedTensors> stepped_tensors(const LaunchGroup& group, const ExecuteArgs& args) {
  const auto own = [&](size_t i) { return reinterpret_cast<uintptr_t>(address(group.slots[1 + i], args)); };
  const size_t items = group.slots.size() - 1;  // uniform items are two or more
  SteppedTensors t{address(group.slots[0], args), static_cast<uint32_t>(items), {}, {}};
  size_t first = 0;
  for (uint32_t r = 0; r < kStepRuns && first < items; ++r) {
    const uint64_t step = first + 1 < items ? own(first + 1) - own(first) : 0;
    size_t end = first + 1;
    while (end < items && own(end) == own(first) + (end - first) * step) ++end;
    t.own[r] = own(first);
    t.own_step[r] = step;
    if (r == 1) t.second = static_cast<uint32_t>(first);
    first = end;
  }
  if (first < items) return std::nullopt;
  return t;
}

// The items as UniformItems, with their launch in `group` (the one launch of the plan, replaced),
// where they qualify (above).
std::unique_ptr<UniformItems> uniform_items(const CopyPlan& plan, const std::vector<DeviceItem>& device_items,
                                            uint32_t multiprocessors, LaunchGroup& group) {
  const std::vector<CopyItem>& items = plan.items;
  if (items.size() < 2 || items.size() + 1 > kLargeTable) return nullptr;
  const DeviceItem& first = device_items[0];
  const CopyItem& a = items[0];
  const bool shared_src = items[1].input == a.input;
  if (!shared_src && items[1].output != a.output) return nullptr;
  const uint64_t src_step = items[1].src_offset - a.src_offset, dst_step = items[1].dst_offset - a.dst_offset;
  const auto same_shape = [&](const CopyItem& c) {
    if (c.width != a.width || c.rank != a.rank) return false;
    for (uint32_t d = 0; d < a.rank; ++d)
      if (c.sizes[d] != a.sizes[d] || c.src_strides[d] != a.src_strides[d] || c.dst_strides[d] != a.dst_strides[d])
        return false;
    return true;
  };
  for (size_t i = 0; i < items.size(); ++i) {
    const CopyItem& c = items[i];
    if (!same_shape(c) || (shared_src ? c.input != a.input : c.output != a.output) ||
        c.src_offset != a.src_offset + i * src_step || c.dst_offset != a.dst_offset + i * dst_step)
      return nullptr;
  }
  const uint32_t count = static_cast<uint32_t>(items.size());
  const uint64_t vectors = uint64_t{count} * first.count;
  const bool runs = contiguous_run(a) && vectors <= kMaxItemVectors;
  const uint32_t per_block = std::clamp(kChunk / std::max(first.count, 1u), 1u, std::max(count / multiprocessors, 1u));
  const uint64_t blocks_per_item = per_block > 1 ? 1 : blocks_of(first, kChunk);
  const uint64_t blocks =
      runs ? ceil_div(vectors, uint64_t{kThreads * kUniformRunsUnroll}) : blocks_per_item * ceil_div(count, per_block);
  if (blocks > INT32_MAX) return nullptr;
  auto u = std::make_unique<UniformItems>();
  u->item = first;
  u->items = count;
  u->blocks_per_item = static_cast<uint32_t>(blocks_per_item);
  u->items_per_block = per_block;
  u->item_vectors = FastDivmod(std::max(first.count, 1u));
  u->shared_src = shared_src;
  u->src_step = src_step;
  u->dst_step = dst_step;
  u->runs = runs;
  u->vectors = runs ? static_cast<uint32_t>(vectors) : 0;
  group = LaunchGroup{};
  group.slots.push_back({!shared_src, shared_src ? a.input : a.output});
  for (const CopyItem& c : items) group.slots.push_back({shared_src, shared_src ? c.output : c.input});
  group.blocks = static_cast<uint32_t>(blocks);
  return u;
}

class CudaCopyKernel final : public Kernel {
 public:
  CudaCopyKernel(const CopyPlan& plan, const CudaDevice& device) : ordinal_(device.ordinal()) {
    items_.resize(plan.items.size());
    std::vector<uint32_t> item_group(plan.items.size());  // each item's launch
    groups_ = group_launches(plan, [&](size_t i, size_t group, uint32_t src, uint32_t dst) {
      const CopyItem& c = plan.items[i];
      DeviceItem& d = items_[i];
      d.src = src;
      d.dst = dst;
      d.width = c.width;
      d.rank = c.rank;
      d.count = static_cast<uint32_t>(c.element_count());
      d.src_offset = c.src_offset;
      d.dst_offset = c.dst_offset;
      for (uint32_t k = 0; k < c.rank; ++k) {
        d.sizes[k] = FastDivmod(static_cast<uint32_t>(c.sizes[k]));
        d.src_strides[k] = static_cast<uint32_t>(c.src_strides[k]);
        d.dst_strides[k] = static_cast<uint32_t>(c.dst_strides[k]);
      }
      item_group[i] = static_cast<uint32_t>(group);
    });
    // Several launches (more than kLargeTable tensors) all take the largest table, so that all are
    // one kernel: a later launch then cannot be refused where the first was queued for a kernel of
    // its own, which CUDA loads at its first launch (lazy loading) and can fail to for want of device
    // memory, leaving the earlier launches' writes done (docs/contract.md section 4).
    if (groups_.size() > 1)
      for (LaunchGroup& group : groups_) group.table = kLargeTable;
    // Blocks are numbered within each launch, `chunk` vectors each; the table lists every launch's
    // blocks in turn.
    const auto number_blocks = [&](uint32_t chunk) {
      for (LaunchGroup& group : groups_) group.blocks = 0;
      for (size_t i = 0; i < items_.size(); ++i) {
        LaunchGroup& group = groups_[item_group[i]];
        items_[i].first_block = group.blocks;
        group.blocks += blocks_of(items_[i], chunk);
      }
      uint32_t first = 0;
      for (LaunchGroup& group : groups_) {
        group.first_block = first;
        first += group.blocks;
      }
      return first;
    };
    const uint32_t blocks = number_blocks(kChunk);
    if (groups_.size() == 1 && items_.size() <= kInlineItems) {
      // Runs: items of at most 2^31 vectors (split_items), so at most 2^26 blocks of a vector a thread.
      // Their blocks and lengths are set here, their addresses at execute.
      const auto one_width = [&](const CopyItem& c) { return c.width == plan.items[0].width; };
      const auto rows = [](const CopyItem& c) { return contiguous_run(c) || (c.rank == 2 && c.inner_contiguous()); };
      if (std::all_of(plan.items.begin(), plan.items.end(),
                      [&](const CopyItem& c) { return one_width(c) && rows(c); })) {
        number_blocks(kThreads * kRunsUnroll);
        runs_ = true;
        rows_ = !std::all_of(plan.items.begin(), plan.items.end(), contiguous_run);
        // RowRuns: a contiguous run is one row.
        for (DeviceItem& d : items_) {
          if (!rows_ || d.rank == 2) continue;
          d.rank = 2;
          d.sizes[1] = FastDivmod(d.count);
          d.src_strides[0] = d.dst_strides[0] = d.count;
        }
        const auto same_rows = [&](const DeviceItem& d) {
          const DeviceItem& first = items_[0];
          return d.count == first.count && d.sizes[1].divisor == first.sizes[1].divisor &&
                 d.src_strides[0] == first.src_strides[0] && d.dst_strides[0] == first.dst_strides[0];
        };
        shared_rows_ = rows_ && items_.size() > 1 && std::all_of(items_.begin(), items_.end(), same_rows);
        if (shared_rows_) {
          for (DeviceItem& d : items_) d.first_block = 0;
          groups_[0].blocks = static_cast<uint32_t>(ceil_div(uint64_t{items_[0].count}, uint64_t{kThreads}));
        }
        return;
      }
      small_ = blocks < device.multiprocessors();
      if (small_) number_blocks(kThreads * kSmallUnroll);
      inline_ = std::make_unique<InlineItems>();
      std::copy(items_.begin(), items_.end(), inline_->items);
      inline_->count = static_cast<uint32_t>(items_.size());
      return;
    }
    if (groups_.size() == 1) uniform_ = uniform_items(plan, items_, device.multiprocessors(), groups_[0]);
    if (uniform_) return;
    block_per_item_ =
        std::all_of(items_.begin(), items_.end(), [&](const DeviceItem& d) { return blocks_of(d, kChunk) == 1; });
    if (block_per_item_) return;
    block_items_.resize(blocks);
    for (size_t i = 0; i < items_.size(); ++i)
      std::fill_n(block_items_.begin() + groups_[item_group[i]].first_block + items_[i].first_block,
                  blocks_of(items_[i], kChunk), static_cast<uint32_t>(i));
  }

  uint64_t persistent_bytes() const override {
    return runs_ || inline_ || uniform_ ? 0 : block_table_offset() + block_items_.size() * sizeof(uint32_t);
  }

  std::string tuning() const {
    uint32_t blocks = 0;
    for (const LaunchGroup& group : groups_) blocks += group.blocks;
    const uint32_t room = with_runs_room(items_.size(), [&]<uint32_t kItems>() { return kItems; });
    const uint32_t unroll = runs_                        ? kRunsUnroll
                            : uniform_ && uniform_->runs ? kUniformRunsUnroll
                            : small_                     ? kSmallUnroll
                                                         : kUnroll;
    const std::string how = runs_ ? cat(rows_ ? "rows of " : "", "contiguous runs in the parameters (room for ", room,
                                        ")", shared_rows_ ? ", all of one shape: a vector of each a thread" : "")
                            : inline_         ? cat("items in the parameters (up to ", kInlineItems, ")")
                            : uniform_        ? cat("items of one shape, ",
                                             uniform_->runs ? std::string("each a contiguous run")
                                                                   : cat(uniform_->items_per_block, " a block"),
                                                    " (addresses by arithmetic where they step evenly)")
                            : block_per_item_ ? std::string("block b copies item b")
                                              : std::string("a block -> item table");
    return cat("cuda.copy tuning: ", kThreads, " threads, ", kUnroll, " vectors per thread (", kSmallUnroll,
               " where a copy would not give every SM a block; ", kRunsUnroll, " for up to ", kInlineItems,
               " contiguous runs, with room for ", kFewRuns, ", ", kSomeRuns, " or ", kInlineItems, "; ",
               kUniformRunsUnroll, " for contiguous runs of one shape); pointer tables of ", kSmallTable, ", ",
               kMediumTable, " or ", kLargeTable, " tensors, or up to ", kStepRuns,
               " runs of stepped addresses; this plan: ", items_.size(), " items, ", how, ", ", unroll,
               " vectors per thread, ", blocks, " blocks in ", groups_.size(), " launches");
  }

  Status initialize(std::byte* persistent, void* stream) const override {
    if (runs_ || inline_ || uniform_) return {};
    DeviceGuard guard(ordinal_);
    ODML_RETURN_IF_ERROR(guard.status());
    const auto s = static_cast<cudaStream_t>(stream);
    ODML_RETURN_IF_ERROR(cuda_status(
        cudaMemcpyAsync(persistent, items_.data(), items_.size() * sizeof(DeviceItem), cudaMemcpyHostToDevice, s),
        "cuda.copy: uploading the items"));
    return cuda_status(cudaMemcpyAsync(persistent + block_table_offset(), block_items_.data(),
                                       block_items_.size() * sizeof(uint32_t), cudaMemcpyHostToDevice, s),
                       "cuda.copy: uploading the block table");
  }

  Status execute(const ExecuteArgs& args) const override {
    DeviceGuard guard(ordinal_);
    ODML_RETURN_IF_ERROR(guard.status());
    const auto stream = static_cast<cudaStream_t>(args.stream);
    if (runs_) {
      const auto launch = [&]<class R>(R runs) {
        std::fill(std::begin(runs.first_block), std::end(runs.first_block), UINT32_MAX);
        for (size_t i = 0; i < items_.size(); ++i) {
          const DeviceItem& d = items_[i];
          runs.src[i] = address(groups_[0].slots[d.src], args) + d.src_offset * d.width;
          runs.dst[i] = address(groups_[0].slots[d.dst], args) + d.dst_offset * d.width;
          runs.first_block[i] = d.first_block;
          runs.count[i] = d.count;
          if constexpr (R::kRows) {
            runs.length[i] = d.sizes[1];
            runs.src_step[i] = d.src_strides[0];
            runs.dst_step[i] = d.dst_strides[0];
          }
        }
        return with_width(items_[0].width, [&]<uint32_t kWidth>() {
          if constexpr (R::kRows) {
            if (shared_rows_)
              return launch_kernel(shared_rows_copy_kernel<kWidth, R::kRoom>, groups_[0].blocks, kThreads, stream,
                                   runs);
          }
          return launch_kernel(runs_copy_kernel<kWidth, R>, groups_[0].blocks, kThreads, stream, runs);
        });
      };
      return check_launch(
          with_runs_room(items_.size(),
                         [&]<uint32_t kItems>() { return rows_ ? launch(RowRuns<kItems>{}) : launch(Runs<kItems>{}); }),
          "cuda.copy", stream);
    }
    if (inline_) {
      // At most 2 * kInlineItems tensors: the small pointer table holds them.
      const auto kernel =
          small_ ? inline_copy_kernel<kSmallUnroll, kSmallTable> : inline_copy_kernel<kUnroll, kSmallTable>;
      return check_launch(launch_kernel(kernel, groups_[0].blocks, kThreads, stream, *inline_,
                                        pointer_table<kSmallTable>(groups_[0], args)),
                          "cuda.copy", stream);
    }
    if (uniform_) {
      const std::optional<SteppedTensors> stepped = stepped_tensors(groups_[0], args);
      return check_launch(stepped ? launch_uniform(*uniform_, groups_[0].blocks, stream, *stepped)
                                  : launch_with_table<UniformLaunch>(groups_[0], args, stream, uniform_.get()),
                          "cuda.copy", stream);
    }
    const auto* items = reinterpret_cast<const DeviceItem*>(args.persistent);
    const auto* block_items =
        block_per_item_ ? nullptr : reinterpret_cast<const uint32_t*>(args.persistent + block_table_offset());
    for (const LaunchGroup& group : groups_)
      ODML_RETURN_IF_ERROR(
          check_launch(launch_with_table<CopyLaunch>(group, args, stream, items, block_items), "cuda.copy", stream));
    return {};
  }

 private:
  uint64_t block_table_offset() const { return align16(items_.size() * sizeof(DeviceItem)); }

  int ordinal_;
  std::vector<DeviceItem> items_;
  std::vector<uint32_t> block_items_;
  std::vector<LaunchGroup> groups_;
  std::unique_ptr<InlineItems> inline_;    // set when the items travel in the kernel parameters
  std::unique_ptr<UniformItems> uniform_;  // set when the items are uniform (UniformItems; launch groups_[0])
  bool block_per_item_ = false;            // block b copies item b: no block -> item table
  bool small_ = false;                     // inline items in chunks of kThreads * kSmallUnroll vectors
  bool runs_ = false;                      // the items are contiguous runs of one width (Runs)
  bool rows_ = false;                      // ... or rows of them (RowRuns)
  bool shared_rows_ = false;               // ... of one shape (shared_rows_copy_kernel)
};

// ---- cuda.slices -------------------------------------------------------------------------------

// One piece of the joined tensor: columns [column, next piece's column) of every row.
struct DevicePiece {
  uint32_t column;      // first column in the joined tensor's rows
  uint32_t row_stride;  // of the piece
  uint32_t offset;      // of the piece's first element
  uint32_t slot;        // place in the pointer table
};

struct InlinePieces {
  DevicePiece p[kInlinePieces];
};

// Units are `width` bytes; each thread moves vectors of `vector` units of the joined tensor.
struct SlicesShape {
  FastDivmod row_length;  // columns (units) per row of the joined tensor
  uint32_t vectors;       // rows * row_length / vector
  uint32_t row_stride;    // of the joined tensor
  uint32_t offset;        // of the joined tensor's first element
  uint32_t slot;          // of the joined tensor
  uint32_t pieces;
  uint32_t width, vector;
  // More than 1 where a vector holds this many whole rows and each piece is one unit of a row, with
  // rows contiguous and aligned: a piece's units of one vector are then one run in the piece.
  uint32_t rows_per_vector;
  bool join;  // gather into the joined tensor (JOIN) or scatter from it (SPLIT)
};

// A thread reads or writes a whole vector of the joined tensor and moves its units one by one
// from or to their pieces, walking the columns (and, where the joined rows are dense, the rows).
// All of a thread's kUnroll vectors are read before any is written, so that they are in flight at
// once: the compiler cannot move a read past a write through pointers that may alias, and one
// vector in flight per thread left SPLIT of 4-byte slices at 0.67 of a copy on an H200
// (bench/NOTES.md).
// kRows > 1 (shape.rows_per_vector): a vector holds kRows whole rows of one unit per piece
// (shape.pieces == kVector / kRows, rows contiguous in each piece; slices_layout checks), and each
// piece's units in it move as one run of kRows units, where moving them one by one wrote (SPLIT) or
// read (JOIN) every sector of the piece in parts, a store instruction per row (bench/NOTES.md).
// There rows[k] is the vector's first row, and columns and first_pieces go unused.
template <uint32_t kWidth, uint32_t kVector, uint32_t kRows, uint32_t kCapacity>
__device__ __forceinline__ void slices_chunk(const SlicesShape& shape, const DevicePiece* pieces,
                                             const PointerTable<kCapacity>& table) {
  using Unit = Vec<kWidth>;
  using Whole = Vec<kWidth * kVector>;
  union Data {
    Whole whole;
    Unit units[kVector];
  };
  constexpr uint32_t kRowPieces = kVector / kRows;  // pieces, when kRows > 1
  union Run {
    Vec<kWidth * kRows> whole;
    Unit units[kRows];
  };
  const uint32_t last_column = shape.row_length.divisor;
  // The joined tensor's vector at (row, column), and its units' places in the pieces, in order.
  const auto whole_at = [&](uint32_t row, uint32_t column) {
    return reinterpret_cast<Whole*>(reinterpret_cast<Unit*>(table.p[shape.slot]) + shape.offset +
                                    uint64_t{row} * shape.row_stride + column);
  };
  const auto for_units = [&](uint32_t row, uint32_t column, uint32_t piece, auto&& fn) {
#pragma unroll
    for (uint32_t u = 0; u < kVector; ++u) {
      const DevicePiece& pc = pieces[piece];
      fn(u,
         reinterpret_cast<Unit*>(table.p[pc.slot]) + pc.offset + uint64_t{row} * pc.row_stride + (column - pc.column));
      if (++column == last_column) {
        column = 0;
        ++row;
        piece = 0;
      } else if (piece + 1 < shape.pieces && column >= pieces[piece + 1].column) {
        ++piece;
      }
    }
  };
  // Piece p's run at `row` (kRows > 1: its rows are contiguous, so the run is kRows units long),
  // and its place in a vector's units: unit i * kRowPieces + p is row i's.
  const auto run_at = [&](uint32_t row, uint32_t p) {
    return reinterpret_cast<Run*>(reinterpret_cast<Unit*>(table.p[pieces[p].slot]) + pieces[p].offset + row);
  };
  uint32_t rows[kUnroll], columns[kUnroll], first_pieces[kUnroll];
  Data data[kUnroll];
  const uint32_t first = blockIdx.x * kChunk + threadIdx.x;
#pragma unroll
  for (uint32_t k = 0; k < kUnroll; ++k) {
    if (first + k * kThreads >= shape.vectors) break;
    if constexpr (kRows > 1) {
      rows[k] = (first + k * kThreads) * kRows;
      if (shape.join) {
#pragma unroll
        for (uint32_t p = 0; p < kRowPieces; ++p) {
          Run run;
          run.whole = run_at(rows[k], p)->whole;
#pragma unroll
          for (uint32_t i = 0; i < kRows; ++i) data[k].units[i * kRowPieces + p] = run.units[i];
        }
      } else {
        data[k].whole = *whole_at(rows[k], 0);
      }
      continue;
    }
    shape.row_length.divmod((first + k * kThreads) * kVector, rows[k], columns[k]);
    uint32_t lo = 0, hi = shape.pieces - 1;  // the last piece whose column <= column
    while (lo < hi) {
      const uint32_t mid = (lo + hi + 1) / 2;
      if (pieces[mid].column <= columns[k])
        lo = mid;
      else
        hi = mid - 1;
    }
    first_pieces[k] = lo;
    if (shape.join) {
      for_units(rows[k], columns[k], lo, [&](uint32_t u, const Unit* p) { data[k].units[u] = *p; });
    } else {
      data[k].whole = *whole_at(rows[k], columns[k]);
    }
  }
#pragma unroll
  for (uint32_t k = 0; k < kUnroll; ++k) {
    if (first + k * kThreads >= shape.vectors) break;
    if constexpr (kRows > 1) {
      if (shape.join) {
        *whole_at(rows[k], 0) = data[k].whole;
      } else {
#pragma unroll
        for (uint32_t p = 0; p < kRowPieces; ++p) {
          Run run;
#pragma unroll
          for (uint32_t i = 0; i < kRows; ++i) run.units[i] = data[k].units[i * kRowPieces + p];
          run_at(rows[k], p)->whole = run.whole;
        }
      }
      continue;
    }
    if (shape.join) {
      *whole_at(rows[k], columns[k]) = data[k].whole;
    } else {
      for_units(rows[k], columns[k], first_pieces[k], [&](uint32_t u, Unit* p) { *p = data[k].units[u]; });
    }
  }
}

template <uint32_t kCapacity>
__global__ void __launch_bounds__(kThreads)
    slices_kernel(const DevicePiece* __restrict__ global_pieces, const __grid_constant__ InlinePieces inline_pieces,
                  const SlicesShape shape, const __grid_constant__ PointerTable<kCapacity> table) {
  __shared__ DevicePiece pieces[kMaxSlicePieces];
  const DevicePiece* source = global_pieces != nullptr ? global_pieces : inline_pieces.p;
  for (uint32_t i = threadIdx.x; i < shape.pieces; i += kThreads) pieces[i] = source[i];
  __syncthreads();
  with_width(shape.width, [&]<uint32_t kWidth>() {
    if constexpr (kWidth < 16) {
      constexpr uint32_t kVector = 16 / kWidth;
      if (shape.vector == kVector) {
        // Two or more pieces, so at most kVector / 2 rows a vector.
        if constexpr (kVector >= 4)
          if (shape.rows_per_vector == 2) return slices_chunk<kWidth, kVector, 2>(shape, pieces, table);
        if constexpr (kVector >= 8)
          if (shape.rows_per_vector == 4) return slices_chunk<kWidth, kVector, 4>(shape, pieces, table);
        if constexpr (kVector >= 16)
          if (shape.rows_per_vector == 8) return slices_chunk<kWidth, kVector, 8>(shape, pieces, table);
        return slices_chunk<kWidth, kVector, 1>(shape, pieces, table);
      }
    }
    slices_chunk<kWidth, 1, 1>(shape, pieces, table);
  });
}

template <uint32_t kCapacity>
struct SlicesLaunch {
  static cudaError_t launch(const LaunchGroup& group, const PointerTable<kCapacity>& table, cudaStream_t stream,
                            const DevicePiece* pieces, const InlinePieces& inline_pieces, SlicesShape shape) {
    return launch_kernel(slices_kernel<kCapacity>, group.blocks, kThreads, stream, pieces, inline_pieces, shape, table);
  }
};

// The joined tensor as rows of pieces, when the plan has that shape: every item a set of rows
// with contiguous columns, the same row count, and pieces that tile the joined rows left to
// right.
struct SlicesLayout {
  SlicesShape shape{};
  std::vector<DevicePiece> pieces;
  uint32_t rows = 0;
  std::string why_not;  // empty when the plan fits
};

SlicesLayout slices_layout(const CopyPlan& plan) {
  SlicesLayout layout;
  const auto fail = [&](std::string why) {
    layout.why_not = std::move(why);
    return layout;
  };
  const size_t n = plan.items.size();
  if (n > kMaxSlicePieces) return fail(cat("more than ", kMaxSlicePieces, " pieces"));
  bool join = true, split = true;
  uint32_t width = 16, whole_alignment = 0;
  for (size_t i = 0; i < n; ++i) {
    const CopyItem& item = plan.items[i];
    join = join && item.input == i && item.output == 0;
    split = split && item.input == 0 && item.output == i;
    width = std::min(width, item.width);
  }
  if (!join && !split) return fail("the items do not join or split one tensor");
  whole_alignment = join ? plan.items[0].dst_alignment : plan.items[0].src_alignment;
  layout.shape.join = join;
  layout.shape.width = width;
  layout.shape.pieces = static_cast<uint32_t>(n);
  layout.shape.slot = static_cast<uint32_t>(n);  // the pointer table lists the pieces, then the joined tensor

  uint64_t column = 0;
  for (size_t i = 0; i < n; ++i) {
    const CopyItem& item = plan.items[i];
    const Dims& whole = join ? item.dst_strides : item.src_strides;
    const Dims& piece = join ? item.src_strides : item.dst_strides;
    const uint64_t k = item.width / width;  // narrows the item to the common width
    uint64_t rows = 1, columns = 1, whole_stride = 0, piece_stride = 0;
    if (item.inner_contiguous() && item.rank <= 2) {  // rows of contiguous columns
      columns = item.sizes[item.rank - 1] * k;
      if (item.rank == 2) {
        rows = item.sizes[0];
        whole_stride = whole[0] * k;
        piece_stride = piece[0] * k;
      }
    } else if (item.rank == 1) {  // one vector of the item's width per row
      rows = item.sizes[0];
      columns = k;
      whole_stride = whole[0] * k;
      piece_stride = piece[0] * k;
    } else {
      return fail("a piece is not a set of rows of contiguous columns");
    }
    const uint64_t whole_offset = (join ? item.dst_offset : item.src_offset) * k;
    const uint64_t piece_offset = (join ? item.src_offset : item.dst_offset) * k;
    if (std::max({rows, whole_stride, piece_stride, whole_offset, piece_offset}) > kMaxElements)
      return fail("the tensors span 2^32 or more units; cuda.copy splits them");
    if (i == 0) {
      layout.rows = static_cast<uint32_t>(rows);
      layout.shape.row_stride = static_cast<uint32_t>(whole_stride);
      layout.shape.offset = static_cast<uint32_t>(whole_offset);
    }
    if (rows != layout.rows || (rows > 1 && whole_stride != layout.shape.row_stride) ||
        whole_offset != layout.shape.offset + column)
      return fail("the pieces do not tile the rows of the joined tensor");
    layout.pieces.push_back({static_cast<uint32_t>(column), static_cast<uint32_t>(piece_stride),
                             static_cast<uint32_t>(piece_offset), static_cast<uint32_t>(i)});
    column += columns;
  }
  if (layout.rows > 1 && column > layout.shape.row_stride) return fail("the pieces overrun the joined rows");
  const uint32_t max_bytes = join && n > 1 && n <= kInlinePieces ? kSlicesMaxJoinBytes : kSlicesMaxBytes;
  if (column * width / n >= max_bytes)
    return fail(cat("the slices average ", max_bytes, " bytes or more; cuda.copy moves them faster"));
  const uint64_t count = column * layout.rows;
  if (count > kMaxElements || uint64_t{layout.rows} * layout.shape.row_stride > kMaxElements)
    return fail("the tensors span 2^32 or more units; cuda.copy splits them");

  // Vectors of the joined tensor: 16 bytes where its alignment, offset and rows allow; they may
  // run across rows only where the rows are dense.
  const bool dense = layout.rows == 1 || layout.shape.row_stride == column;
  const uint32_t vector = 16 / width;
  const bool vectors = vector > 1 && whole_alignment >= 16 && layout.shape.offset % vector == 0 &&
                       count % vector == 0 &&
                       (dense || (column % vector == 0 && layout.shape.row_stride % vector == 0));
  layout.shape.vector = vectors ? vector : 1;
  layout.shape.row_length = FastDivmod(static_cast<uint32_t>(column));
  // Whole rows per vector, one unit per piece (so every row's count divides by rows_per_vector, as
  // count % vector == 0): each piece's run of them must be contiguous (rows one unit apart) and as
  // aligned as its length. The planner gives pieces offset 0 and one column each here; the loop
  // checks both all the same, as the kernel relies on them.
  const uint32_t rows_per_vector = vectors && dense && n >= 2 && n == column && vector % n == 0 ? vector / n : 1;
  bool runs = rows_per_vector > 1;
  for (size_t i = 0; runs && i < n; ++i) {
    const CopyItem& item = plan.items[i];
    runs = layout.pieces[i].column == i && layout.pieces[i].row_stride == 1 &&
           layout.pieces[i].offset % rows_per_vector == 0 &&
           (join ? item.src_alignment : item.dst_alignment) >= rows_per_vector * width;
  }
  layout.shape.rows_per_vector = runs ? rows_per_vector : 1;
  layout.shape.vectors = static_cast<uint32_t>(count / layout.shape.vector);
  return layout;
}

class CudaSlicesKernel final : public Kernel {
 public:
  CudaSlicesKernel(const CopyPlan& plan, const CudaDevice& device)
      : ordinal_(device.ordinal()), layout_(slices_layout(plan)) {
    for (uint32_t i = 0; i < layout_.shape.pieces; ++i) {
      const CopyItem& item = plan.items[i];
      group_.slots.push_back({!layout_.shape.join, layout_.shape.join ? item.input : item.output});
    }
    group_.slots.push_back({layout_.shape.join, 0});
    group_.blocks = ceil_div(layout_.shape.vectors, kChunk);
    inline_ = layout_.pieces.size() <= kInlinePieces;
    if (inline_) std::copy(layout_.pieces.begin(), layout_.pieces.end(), inline_pieces_.p);
  }

  uint64_t persistent_bytes() const override { return inline_ ? 0 : layout_.pieces.size() * sizeof(DevicePiece); }

  std::string tuning() const {
    return cat("cuda.slices tuning: ", kThreads, " threads, ", kUnroll, " vectors per thread; slices averaging under ",
               kSlicesMaxBytes, " bytes (", kSlicesMaxJoinBytes, " for a JOIN of up to ", kInlinePieces,
               " pieces); up to ", kInlinePieces, " pieces in the parameters, up to ", kMaxSlicePieces,
               " in all; this plan: ", layout_.pieces.size(), " pieces ",
               inline_ ? "in the parameters" : "in the persistent region", ", ", layout_.shape.rows_per_vector,
               " rows a vector, ", group_.blocks, " blocks");
  }

  Status initialize(std::byte* persistent, void* stream) const override {
    if (inline_) return {};
    DeviceGuard guard(ordinal_);
    ODML_RETURN_IF_ERROR(guard.status());
    return cuda_status(cudaMemcpyAsync(persistent, layout_.pieces.data(), persistent_bytes(), cudaMemcpyHostToDevice,
                                       static_cast<cudaStream_t>(stream)),
                       "cuda.slices: uploading the pieces");
  }

  Status execute(const ExecuteArgs& args) const override {
    DeviceGuard guard(ordinal_);
    ODML_RETURN_IF_ERROR(guard.status());
    const auto stream = static_cast<cudaStream_t>(args.stream);
    return check_launch(
        launch_with_table<SlicesLaunch>(group_, args, stream,
                                        inline_ ? nullptr : reinterpret_cast<const DevicePiece*>(args.persistent),
                                        inline_pieces_, layout_.shape),
        "cuda.slices", stream);
  }

 private:
  int ordinal_;
  SlicesLayout layout_;
  LaunchGroup group_;
  bool inline_ = false;  // the pieces travel in the kernel parameters
  InlinePieces inline_pieces_{};
};

}  // namespace

std::string cuda_slices_declines(const CopyPlan& plan, const CudaDevice&) { return slices_layout(plan).why_not; }

Result<std::unique_ptr<Kernel>> make_cuda_slices_kernel(const CopyPlan& plan, const CudaDevice& device) {
  auto kernel = std::make_unique<CudaSlicesKernel>(plan, device);
  if (verbose()) log_verbose(kernel->tuning());
  return kernel;
}

// Within an item, indices and offsets are 32-bit (FastDivmod): larger items (64-bit indices,
// docs/contract.md section 7) become several, at most this many more than the plan has.
constexpr uint64_t kMaxExtraPieces = uint64_t{1} << 20;

// cuda.copy numbers its blocks of kChunk vectors in 32 bits (the block -> item table, first_block),
// and a grid holds at most 2^31 - 1 of them: the plan's blocks, with one more at most for each piece
// split_items makes, must stay within that. Past it (2^41 vectors and up, terabytes of output) the
// block numbers wrapped and compile wrote the block table out of its bounds.
namespace {
bool blocks_fit(const CopyPlan& plan) {
  uint64_t blocks = plan.items.size() + kMaxExtraPieces;
  for (const CopyItem& item : plan.items) {
    blocks += ceil_div(item.element_count(), uint64_t{kChunk});
    if (blocks > INT32_MAX) return false;
  }
  return true;
}
}  // namespace

std::string cuda_copy_declines(const CopyPlan& plan, const CudaDevice&) {
  if (!blocks_fit(plan)) return cat("its blocks of ", kChunk, " vectors would number 2^31 or more");
  if (!split_items_fit(plan.items, kMaxItemVectors, kMaxElements, plan.items.size() + kMaxExtraPieces))
    return cat("its tensors need more than ", kMaxExtraPieces, " more pieces of 2^32 elements' span");
  return "";
}

Result<std::unique_ptr<Kernel>> make_cuda_copy_kernel(const CopyPlan& plan, const CudaDevice& device) {
  if (!blocks_fit(plan)) return unsupported("cuda.copy: too many blocks");  // cuda_copy_declines said so first
  CopyPlan split = plan;
  std::optional<std::vector<CopyItem>> pieces =
      split_items(plan.items, kMaxItemVectors, kMaxElements, plan.items.size() + kMaxExtraPieces);
  if (!pieces) return unsupported("cuda.copy: too many pieces");  // cuda_copy_declines said so first
  split.items = std::move(*pieces);
  auto kernel = std::make_unique<CudaCopyKernel>(split, device);
  if (verbose()) log_verbose(kernel->tuning());
  return kernel;
}

}  // namespace opendml::internal
