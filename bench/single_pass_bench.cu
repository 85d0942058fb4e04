// Could NONZERO overlap its reads and its writes? The library's kernel reads the whole input, then
// writes every row (src/backends/cuda/nonzero_kernels.cu), so its floor is reading alone plus writing
// alone; a single pass that writes each tile's rows as soon as it knows where they start would have
// a copy's floor instead. This probe is such a pass, with decoupled look-back: one block a tile, in
// blockIdx order; a block publishes its tile's count as soon as its loads land, then warp 0 sums
// the counts of the tiles before it, 32 at a time, back to the nearest one that has published its
// first row (its prefix), publishes its own prefix, stages its rows' element indices in shared memory
// and writes the rows, consecutive threads to consecutive rows. The tiles' status words carry the
// call's epoch, so they need no zeroing between calls: the last block to finish its look-back moves
// the epoch on.
//
// Contiguous rank-2 inputs of a power-of-two number of elements (a multiple of the tile), uint32
// coordinates, counts under 2^30: what the library's cases of the same name measure (bench/NOTES.md,
// "A single pass with decoupled look-back, again"). Timed as opendml_gpu_bench times a case: a CUDA
// graph of one call per input copy (the copies rotate over at least 256 MiB), replayed between
// events, the median of 30 after five, beside a 1 GiB cudaMemcpyAsync timed the same way. Each
// variant's rows and count are checked on the GPU against the input first.
//
//   opendml_single_pass_bench [--filter SUBSTRING]
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda/atomic>
#include <string>
#include <vector>

#include "backends/cuda/word_flags.h"
#include "cuda_check.h"

namespace {

using opendml::internal::word_flags;

constexpr uint32_t kThreads = 256, kWarps = kThreads / 32;
constexpr uint64_t kInvalid = 0, kAggregate = 1, kPrefix = 2;  // a status word's flag
constexpr uint32_t kValueBits = 30;

struct State {  // zeroed once
  uint32_t epoch;
  uint32_t done;  // blocks past their look-back in this call
};

struct Params {
  const void* input;
  uint2* rows;
  uint32_t* count;
  uint64_t* status;  // a word a tile: epoch << 32 | flag << 30 | value
  State* state;
  uint32_t value_mask;
  uint32_t column_shift;  // rank 2: row i is (i >> column_shift, i & column_mask)
  uint32_t sleep_ns;      // back-off while a predecessor's status is not yet there
  bool fill;              // rows past the count are kFill (ODML_EXTENSION_FILL_ROWS)
  bool zeroed;            // the statuses are zeroed ahead of each call (a memset node): no epochs
};
constexpr uint2 kFill = {7, 9};

__device__ __forceinline__ uint64_t load_status(const uint64_t* word) {
  return cuda::atomic_ref<uint64_t, cuda::thread_scope_device>(*const_cast<uint64_t*>(word))
      .load(cuda::memory_order_relaxed);
}
__device__ __forceinline__ void store_status(uint64_t* word, uint32_t epoch, uint64_t flag, uint32_t value) {
  cuda::atomic_ref<uint64_t, cuda::thread_scope_device>(*word).store(uint64_t{epoch} << 32 | flag << kValueBits | value,
                                                                     cuda::memory_order_relaxed);
}

// Warp 0: the rows of every tile before `tile`.
__device__ uint32_t look_back(const Params& p, uint32_t tile, uint32_t epoch) {
  const uint32_t lane = threadIdx.x & 31;
  uint32_t exclusive = 0;
  for (int64_t closest = int64_t{tile} - 1;; closest -= 32) {
    const int64_t i = closest - lane;
    for (;;) {
      uint64_t flag = kPrefix, value = 0;  // before tile 0
      if (i >= 0) {
        const uint64_t s = load_status(p.status + i);
        flag = (s >> 32) == epoch ? s >> kValueBits & 3 : kInvalid;
        value = s & ((1u << kValueBits) - 1);
      }
      const uint32_t prefixes = __ballot_sync(~0u, flag == kPrefix);
      const uint32_t invalid = __ballot_sync(~0u, flag == kInvalid);
      const uint32_t lowest = prefixes & (0u - prefixes);
      const uint32_t needed = prefixes ? (lowest << 1) - 1 : ~0u;  // lanes up to the closest prefix
      if ((invalid & needed) == 0) {
        exclusive += __reduce_add_sync(~0u, (needed >> lane & 1) ? static_cast<uint32_t>(value) : 0u);
        if (prefixes) return exclusive;
        break;
      }
      if (p.sleep_ns) __nanosleep(p.sleep_ns);
    }
  }
}

template <class T, uint32_t kVectors>
__global__ void __launch_bounds__(kThreads) single_pass(Params p) {
  constexpr uint32_t E = 16 / sizeof(T);
  constexpr uint32_t kTile = kThreads * kVectors * E;
  constexpr uint32_t kWords = (kVectors + 3) / 4;  // 16-bit counts, four a word
  static_assert(kTile <= 65536);
  __shared__ uint16_t staged[kTile];
  __shared__ uint64_t warp_totals[kWarps][kWords];
  __shared__ uint32_t shared_epoch, shared_prefix;

  const uint32_t tile = blockIdx.x;
  uint32_t done_before = 0;
  const uint4* v = static_cast<const uint4*>(p.input) + uint64_t{tile} * kThreads * kVectors;
  uint4 raw[kVectors];
#pragma unroll
  for (uint32_t k = 0; k < kVectors; ++k) raw[k] = __ldcs(v + k * kThreads + threadIdx.x);
  if (threadIdx.x == 0)
    shared_epoch =
        cuda::atomic_ref<uint32_t, cuda::thread_scope_device>(p.state->epoch).load(cuda::memory_order_relaxed);
  constexpr uint32_t kPerWord = 4 / sizeof(T);
  uint32_t flags[kVectors];
  uint64_t counts[kWords] = {};
#pragma unroll
  for (uint32_t k = 0; k < kVectors; ++k) {
    flags[k] = word_flags<T>(raw[k].x, p.value_mask) | word_flags<T>(raw[k].y, p.value_mask) << kPerWord |
               word_flags<T>(raw[k].z, p.value_mask) << (2 * kPerWord) |
               word_flags<T>(raw[k].w, p.value_mask) << (3 * kPerWord);
    counts[k / 4] += uint64_t{static_cast<uint32_t>(__popc(flags[k]))} << (16 * (k % 4));
  }
  // Block scan of the packed counts: each thread's rows before its own in each vector.
  const uint32_t lane = threadIdx.x & 31, warp = threadIdx.x / 32;
  uint64_t inclusive[kWords];
#pragma unroll
  for (uint32_t w = 0; w < kWords; ++w) {
    inclusive[w] = counts[w];
#pragma unroll
    for (uint32_t d = 1; d < 32; d *= 2) {
      const uint64_t up = __shfl_up_sync(~0u, inclusive[w], d);
      if (lane >= d) inclusive[w] += up;
    }
    if (lane == 31) warp_totals[warp][w] = inclusive[w];
  }
  __syncthreads();
  uint64_t below[kWords] = {}, total[kWords] = {};
#pragma unroll
  for (uint32_t w = 0; w < kWords; ++w) {
#pragma unroll
    for (uint32_t u = 0; u < kWarps; ++u) {
      const uint64_t t = warp_totals[u][w];
      below[w] += u < warp ? t : 0;
      total[w] += t;
    }
    below[w] += inclusive[w] - counts[w];
  }
  uint32_t aggregate = 0;
#pragma unroll
  for (uint32_t k = 0; k < kVectors; ++k) aggregate += static_cast<uint32_t>(total[k / 4] >> (16 * (k % 4)) & 0xFFFF);
  const uint32_t epoch = shared_epoch;

  if (warp == 0) {
    uint32_t prefix = 0;
    if (tile == 0) {
      if (lane == 0) store_status(p.status, epoch, kPrefix, aggregate);
    } else {
      if (lane == 0) store_status(p.status + tile, epoch, kAggregate, aggregate);
      prefix = look_back(p, tile, epoch);
      if (lane == 0) store_status(p.status + tile, epoch, kPrefix, prefix + aggregate);
    }
    if (lane == 0) {
      shared_prefix = prefix;
      if (tile == gridDim.x - 1) *p.count = prefix + aggregate;
      if (!p.zeroed) done_before = atomicAdd(&p.state->done, 1u);  // waited for at the end
    }
  }
  // Stage each non-zero's tile-local index at its rank in the tile.
  uint32_t base = 0;
#pragma unroll
  for (uint32_t k = 0; k < kVectors; ++k) {
    uint32_t rank = base + static_cast<uint32_t>(below[k / 4] >> (16 * (k % 4)) & 0xFFFF);
    base += static_cast<uint32_t>(total[k / 4] >> (16 * (k % 4)) & 0xFFFF);
    for (uint32_t f = flags[k]; f; f &= f - 1)
      staged[rank++] = static_cast<uint16_t>(k * kThreads * E + threadIdx.x * E + __ffs(f) - 1);
  }
  __syncthreads();
  const uint32_t prefix = shared_prefix;
  const uint32_t first = tile * kTile, column_mask = (1u << p.column_shift) - 1;
  for (uint32_t j = threadIdx.x; j < aggregate; j += kThreads) {
    const uint32_t index = first + staged[j];
    p.rows[prefix + j] = make_uint2(index >> p.column_shift, index & column_mask);
  }
  // Fill rows: the tiles after this one have at most n - (tile + 1) * kTile rows, so every row from
  // prefix + aggregate + n - (tile + 1) * kTile on is a fill row. That bound falls by kTile -
  // aggregate from each tile to the next, ending at the count: each tile writes the fill rows
  // between its bound and its predecessor's, as many as its zeros.
  if (p.fill) {
    const uint64_t end = uint64_t{prefix} + uint64_t{gridDim.x - tile} * kTile;
    for (uint64_t r = end - (kTile - aggregate) + threadIdx.x; r < end; r += kThreads) p.rows[r] = kFill;
  }
  // Every block read the epoch before it counted itself done: the last one moves it on.
  if (threadIdx.x == 0 && !p.zeroed && done_before == gridDim.x - 1) {
    p.state->done = 0;
    p.state->epoch = epoch + 1;
  }
}

// Reference: the non-zeros of the input, counted.
template <class T>
__global__ void count_nonzeros(const T* input, uint64_t n, uint32_t mask, unsigned long long* count) {
  uint32_t mine = 0;
  for (uint64_t i = blockIdx.x * uint64_t{blockDim.x} + threadIdx.x; i < n; i += uint64_t{gridDim.x} * blockDim.x)
    mine += (static_cast<uint32_t>(input[i]) & mask) != 0;
  atomicAdd(count, static_cast<unsigned long long>(mine));
}

// Every row is a non-zero element and follows the row before it: with the right count, the rows
// are exactly the non-zeros in order.
template <class T>
__global__ void check_rows(const T* input, uint64_t n, uint32_t mask, const uint2* rows, const uint32_t* count,
                           uint32_t shift, bool fill, unsigned long long* errors) {
  const uint64_t m = *count < n ? *count : n;  // a wrong count is reported on the host
  for (uint64_t r = blockIdx.x * uint64_t{blockDim.x} + threadIdx.x; r < m; r += uint64_t{gridDim.x} * blockDim.x) {
    const uint64_t index = uint64_t{rows[r].x} << shift | rows[r].y;
    const bool bad = rows[r].y >> shift != 0 || index >= n || (static_cast<uint32_t>(input[index]) & mask) == 0 ||
                     (r > 0 && (uint64_t{rows[r - 1].x} << shift | rows[r - 1].y) >= index);
    if (bad) atomicAdd(errors, 1ull);
  }
  if (!fill) return;
  for (uint64_t r = m + blockIdx.x * uint64_t{blockDim.x} + threadIdx.x; r < n; r += uint64_t{gridDim.x} * blockDim.x)
    if (rows[r].x != kFill.x || rows[r].y != kFill.y) atomicAdd(errors, 1ull);
}

// A fraction `density` of the elements non-zero, never a zero-valued non-zero pattern.
__global__ void make_input(uint8_t* data, uint64_t n, uint32_t bytes, double density, uint32_t seed) {
  const uint32_t threshold = static_cast<uint32_t>((density < 1.0 ? density : 1.0) * 4294967295.0);
  for (uint64_t i = blockIdx.x * uint64_t{blockDim.x} + threadIdx.x; i < n; i += uint64_t{gridDim.x} * blockDim.x) {
    uint64_t h = (i + 1) * 0x9E3779B97F4A7C15ull ^ seed;
    h ^= h >> 31;
    h *= 0xBF58476D1CE4E5B9ull;
    h ^= h >> 29;
    const bool nonzero = density >= 1.0 || static_cast<uint32_t>(h) < threshold;
    const uint32_t bits = nonzero ? static_cast<uint32_t>(h >> 32) | 1u : 0u;
    for (uint32_t b = 0; b < bytes; ++b) data[i * bytes + b] = static_cast<uint8_t>(bits >> (8 * b));
  }
}

struct Timer {
  cudaStream_t stream{};
  cudaEvent_t start{}, stop{};
  Timer() {
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));
  }
  template <class F>
  double median_us(F&& fn, int runs) {
    for (int i = 0; i < 5; ++i) fn(i);
    std::vector<double> times;
    for (int i = 0; i < runs; ++i) {  // the copies after the warm-up's, which may still be in L2
      CUDA_CHECK(cudaEventRecord(start, stream));
      fn(5 + i);
      CUDA_CHECK(cudaEventRecord(stop, stream));
      CUDA_CHECK(cudaEventSynchronize(stop));
      float ms = 0;
      CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
      times.push_back(ms * 1e3);
    }
    std::sort(times.begin(), times.end());
    return times[times.size() / 2];
  }
};

template <class T, uint32_t kVectors>
void run_case(Timer& timer, double copy_gbps, uint64_t n, double density, uint32_t sleep_ns, bool fill, bool zeroed,
              const char* type_name, const std::string& filter) {
  char name[128];
  int log2 = 0;
  while ((uint64_t{1} << log2) < n) ++log2;
  std::snprintf(name, sizeof name, "nonzero %s n=2^%d rank 2 density %g%s, %u KiB tiles, back-off %u ns%s", type_name,
                log2, density, fill ? " fill rows" : "", kThreads * kVectors * 16 / 1024, sleep_ns,
                zeroed ? ", memset" : "");
  if (!filter.empty() && std::string(name).find(filter) == std::string::npos) return;
  constexpr uint32_t kTile = kThreads * kVectors * (16 / sizeof(T));
  const uint64_t tiles = n / kTile, bytes = n * sizeof(T);
  const uint32_t mask = sizeof(T) == 4 ? 0x7FFFFFFFu : sizeof(T) == 2 ? 0x7FFFu : 0xFFu;
  const uint32_t copies = static_cast<uint32_t>(std::clamp<uint64_t>((uint64_t{256} << 20) / bytes + 1, 1, 64));
  std::vector<void*> inputs(copies);
  for (auto& input : inputs) CUDA_CHECK(cudaMalloc(&input, bytes));
  make_input<<<1024, 256>>>(static_cast<uint8_t*>(inputs[0]), n, sizeof(T), density, static_cast<uint32_t>(n));
  for (uint32_t c = 1; c < copies; ++c) CUDA_CHECK(cudaMemcpy(inputs[c], inputs[0], bytes, cudaMemcpyDeviceToDevice));
  uint2* rows = nullptr;
  uint32_t* count = nullptr;
  uint64_t* status = nullptr;
  State* state = nullptr;
  unsigned long long* checks = nullptr;  // [0] the reference count, [1] errors
  CUDA_CHECK(cudaMalloc(&rows, n * sizeof(uint2)));
  CUDA_CHECK(cudaMalloc(&count, sizeof(uint32_t)));
  CUDA_CHECK(cudaMalloc(&status, tiles * sizeof(uint64_t)));
  CUDA_CHECK(cudaMalloc(&state, sizeof(State)));
  CUDA_CHECK(cudaMalloc(&checks, 2 * sizeof(unsigned long long)));
  CUDA_CHECK(cudaMemset(status, 0, tiles * sizeof(uint64_t)));
  CUDA_CHECK(cudaMemset(state, 0, sizeof(State)));
  CUDA_CHECK(cudaMemset(checks, 0, 2 * sizeof(unsigned long long)));
  CUDA_CHECK(cudaMemset(rows, 0xAB, n * sizeof(uint2)));
  CUDA_CHECK(cudaDeviceSynchronize());
  Params p{inputs[0], rows, count, status, state, mask, static_cast<uint32_t>(log2 / 2), sleep_ns, fill, zeroed};
  const auto launch = [&](uint32_t c) {
    p.input = inputs[c];
    if (zeroed) CUDA_CHECK(cudaMemsetAsync(status, 0, tiles * sizeof(uint64_t), timer.stream));
    single_pass<T, kVectors><<<static_cast<uint32_t>(tiles), kThreads, 0, timer.stream>>>(p);
  };
  // Checked after two calls, the first on other values, the outputs cleared between them: the second
  // ran on the statuses the first left behind, and none of its rows is the first's.
  void* other = nullptr;
  CUDA_CHECK(cudaMalloc(&other, bytes));
  make_input<<<1024, 256>>>(static_cast<uint8_t*>(other), n, sizeof(T), 0.3, static_cast<uint32_t>(n) + 1);
  CUDA_CHECK(cudaDeviceSynchronize());
  p.input = other;
  single_pass<T, kVectors><<<static_cast<uint32_t>(tiles), kThreads, 0, timer.stream>>>(p);
  CUDA_CHECK(cudaStreamSynchronize(timer.stream));
  CUDA_CHECK(cudaFree(other));
  CUDA_CHECK(cudaMemset(rows, 0xAB, n * sizeof(uint2)));
  CUDA_CHECK(cudaMemset(count, 0, sizeof(uint32_t)));
  CUDA_CHECK(cudaDeviceSynchronize());
  launch(0);
  CUDA_CHECK(cudaStreamSynchronize(timer.stream));
  count_nonzeros<T><<<1024, 256>>>(static_cast<const T*>(inputs[0]), n, mask, checks);
  check_rows<T><<<1024, 256>>>(static_cast<const T*>(inputs[0]), n, mask, rows, count, log2 / 2, fill, checks + 1);
  unsigned long long host_checks[2];
  uint32_t host_count = 0;
  CUDA_CHECK(cudaMemcpy(host_checks, checks, sizeof host_checks, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(&host_count, count, sizeof host_count, cudaMemcpyDeviceToHost));
  if (host_checks[0] != host_count || host_checks[1] != 0) {
    std::printf("%-80s MISMATCH: count %u, expected %llu, %llu bad rows\n", name, host_count, host_checks[0],
                host_checks[1]);
  } else {
    std::vector<cudaGraphExec_t> graphs(copies);
    for (uint32_t c = 0; c < copies; ++c) {
      cudaGraph_t graph;
      CUDA_CHECK(cudaStreamBeginCapture(timer.stream, cudaStreamCaptureModeThreadLocal));
      launch(c);
      CUDA_CHECK(cudaStreamEndCapture(timer.stream, &graph));
      CUDA_CHECK(cudaGraphInstantiate(&graphs[c], graph, 0));
      CUDA_CHECK(cudaGraphDestroy(graph));
    }
    const double us =
        timer.median_us([&](int i) { CUDA_CHECK(cudaGraphLaunch(graphs[i % copies], timer.stream)); }, 30);
    for (auto g : graphs) CUDA_CHECK(cudaGraphExecDestroy(g));
    const uint64_t moved = bytes + (fill ? n : uint64_t{host_count}) * 8 + 4;
    std::printf("%-80s %10.2f us %6.0f GB/s %6.3f of copy\n", name, us, moved / (us * 1e3),
                moved / (us * 1e3) / copy_gbps);
  }
  std::fflush(stdout);
  for (auto input : inputs) CUDA_CHECK(cudaFree(input));
  for (void* b : {static_cast<void*>(rows), static_cast<void*>(count), static_cast<void*>(status),
                  static_cast<void*>(state), static_cast<void*>(checks)})
    CUDA_CHECK(cudaFree(b));
}

}  // namespace

int main(int argc, char** argv) {
  std::string filter;
  for (int i = 1; i + 1 < argc; i += 2)
    if (std::strcmp(argv[i], "--filter") == 0) filter = argv[i + 1];
  cudaDeviceProp properties{};
  if (cudaGetDeviceProperties(&properties, 0) != cudaSuccess) {
    std::fprintf(stderr, "no CUDA device\n");
    return 1;
  }
  Timer timer;
  const uint64_t copy_bytes = uint64_t{1} << 30;
  void *a = nullptr, *b = nullptr;
  CUDA_CHECK(cudaMalloc(&a, copy_bytes));
  CUDA_CHECK(cudaMalloc(&b, copy_bytes));
  CUDA_CHECK(cudaMemset(a, 1, copy_bytes));
  const double copy_us = timer.median_us(
      [&](int) { CUDA_CHECK(cudaMemcpyAsync(b, a, copy_bytes, cudaMemcpyDeviceToDevice, timer.stream)); }, 20);
  CUDA_CHECK(cudaFree(a));
  CUDA_CHECK(cudaFree(b));
  const double copy_gbps = 2.0 * copy_bytes / (copy_us * 1e3);
  std::printf("%s: device-to-device copy of 2^30 bytes %.1f us, %.0f GB/s (read + written)\n", properties.name, copy_us,
              copy_gbps);
  for (const uint32_t sleep_ns : {0u, 32u})
    for (const uint64_t n : {uint64_t{1} << 20, uint64_t{1} << 24, uint64_t{1} << 26, uint64_t{1} << 28})
      for (const double density : {0.0, 0.5, 1.0}) {
        if (n != uint64_t{1} << 24 && density != 0.5) continue;
        run_case<uint32_t, 4>(timer, copy_gbps, n, density, sleep_ns, false, false, "f32", filter);
        run_case<uint32_t, 8>(timer, copy_gbps, n, density, sleep_ns, false, false, "f32", filter);
        if (n == uint64_t{1} << 24 && density == 0.5) {
          run_case<uint16_t, 4>(timer, copy_gbps, n, density, sleep_ns, false, false, "f16", filter);
          run_case<uint8_t, 4>(timer, copy_gbps, n, density, sleep_ns, false, false, "u8", filter);
        }
        if (sleep_ns == 0) run_case<uint32_t, 4>(timer, copy_gbps, n, density, sleep_ns, false, true, "f32", filter);
        if (density == 0.5 && n <= uint64_t{1} << 24)
          run_case<uint32_t, 4>(timer, copy_gbps, n, density, sleep_ns, true, false, "f32", filter);
      }
  const cudaError_t error = cudaGetLastError();
  if (error != cudaSuccess) {
    std::fprintf(stderr, "%s\n", cudaGetErrorString(error));
    return 1;
  }
  return 0;
}
