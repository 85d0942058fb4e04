// Does the way a grid divides a large buffer among its blocks change the memory bandwidth, and what
// does each direction get alone? NONZERO's blocks each own a contiguous range of the input and of the
// coordinates (blocked), where a copy kernel hands chunks out in turn (cyclic); blocks can also take
// runs of chunks from a counter as they go (claimed), so that a block slowed by its place on the GPU
// takes fewer. This moves 64 MiB to 2 GiB with the three layouts, at four and five blocks an SM
// (NONZERO's grids), reading only, writing only and copying, and prints the best of six runs
// (bench/NOTES.md, "float32 at 2^28", "Claimed chunks"), then the driver's cudaMemsetAsync (writing
// only) and cudaMemcpyAsync (half read, half written) of the same bytes, timed the same way: NONZERO
// reads all its input, then writes all its rows, so its floor is the read-only time of the one plus
// the write-only time of the other (bench/NOTES.md, "Each direction alone").
//
//   opendml_grid_layout_bench
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>

namespace {

constexpr int kThreads = 256, kVectors = 4;  // a chunk: 16 KiB, as a NONZERO tile
enum Mode { kRead, kWrite, kCopy };
enum Layout { kCyclic, kBlocked, kClaimed };
constexpr int kClaimChunks = 8;  // a claim: 8 chunks, 128 KiB

__device__ uint32_t sink;

// Moves chunk number `chunk`; folds what it reads into `folded`.
template <Mode kMode>
__device__ __forceinline__ void move_chunk(const uint4* src, uint4* dst, uint64_t chunk, uint32_t& folded) {
  const uint64_t first = chunk * kThreads * kVectors + threadIdx.x;
  uint4 v[kVectors];
#pragma unroll
  for (int k = 0; k < kVectors; ++k)
    v[k] = kMode == kWrite ? make_uint4(static_cast<uint32_t>(chunk), k, 0, 0) : __ldcs(src + first + k * kThreads);
#pragma unroll
  for (int k = 0; k < kVectors; ++k) {
    if constexpr (kMode == kRead) {
      folded ^= v[k].x ^ v[k].y ^ v[k].z ^ v[k].w;
    } else {
      dst[first + k * kThreads] = v[k];
    }
  }
}

// `claims` starts at 0 (kClaimed only).
template <Mode kMode, Layout kLayout>
__global__ void __launch_bounds__(kThreads)
    move(const uint4* src, uint4* dst, uint64_t chunks, unsigned long long* claims) {
  uint32_t folded = 0;
  if constexpr (kLayout == kClaimed) {
    __shared__ uint64_t claimed;
    for (;;) {
      if (threadIdx.x == 0) claimed = atomicAdd(claims, static_cast<unsigned long long>(kClaimChunks));
      __syncthreads();
      const uint64_t first = claimed;
      __syncthreads();  // claimed is free for the next claim
      if (first >= chunks) break;
      for (uint64_t chunk = first; chunk < first + kClaimChunks && chunk < chunks; ++chunk)
        move_chunk<kMode>(src, dst, chunk, folded);
    }
  } else {
    const uint64_t per_block = (chunks + gridDim.x - 1) / gridDim.x;
    for (uint64_t i = 0; i < per_block; ++i) {
      const uint64_t chunk = kLayout == kBlocked ? blockIdx.x * per_block + i : i * gridDim.x + blockIdx.x;
      if (chunk >= chunks) break;
      move_chunk<kMode>(src, dst, chunk, folded);
    }
  }
  if (folded == 0x9E3779B9u) sink = folded;  // keeps the reads
}

// The best of six runs of launch(), in milliseconds.
template <class Launch>
float best_ms(Launch&& launch) {
  cudaEvent_t start, end;
  cudaEventCreate(&start);
  cudaEventCreate(&end);
  float best = 1e30f;
  for (int run = 0; run < 6; ++run) {
    cudaEventRecord(start);
    launch();
    cudaEventRecord(end);
    cudaEventSynchronize(end);
    float ms = 0;
    cudaEventElapsedTime(&ms, start, end);
    best = std::min(best, ms);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(end);
  return best;
}

// A claimed layout's counter is zeroed on the stream ahead of each launch, inside the timing: a
// kernel that claims pays for that too.
template <Mode kMode>
float best_ms(Layout layout, int grid, const uint4* src, uint4* dst, uint64_t chunks, unsigned long long* claims) {
  return best_ms([&] {
    switch (layout) {
      case kCyclic: move<kMode, kCyclic><<<grid, kThreads>>>(src, dst, chunks, claims); break;
      case kBlocked: move<kMode, kBlocked><<<grid, kThreads>>>(src, dst, chunks, claims); break;
      case kClaimed:
        cudaMemsetAsync(claims, 0, sizeof *claims);
        move<kMode, kClaimed><<<grid, kThreads>>>(src, dst, chunks, claims);
        break;
    }
  });
}

}  // namespace

int main() {
  int multiprocessors = 0;
  cudaDeviceProp properties{};
  if (cudaGetDeviceProperties(&properties, 0) != cudaSuccess ||
      cudaDeviceGetAttribute(&multiprocessors, cudaDevAttrMultiProcessorCount, 0) != cudaSuccess) {
    std::fprintf(stderr, "no CUDA device\n");
    return 1;
  }
  const uint64_t largest = uint64_t{2} << 30;
  uint4 *src = nullptr, *dst = nullptr;
  unsigned long long* claims = nullptr;
  if (cudaMalloc(&src, largest) != cudaSuccess || cudaMalloc(&dst, largest) != cudaSuccess ||
      cudaMalloc(&claims, sizeof *claims) != cudaSuccess) {
    std::fprintf(stderr, "cannot allocate 2 x %llu bytes\n", static_cast<unsigned long long>(largest));
    return 1;
  }
  cudaMemset(src, 1, largest);
  std::printf("%s, blocks of %d threads, 16 KiB chunks, claims of %d chunks; GB/s counts bytes read + written\n",
              properties.name, kThreads, kClaimChunks);
  const char* names[] = {"read", "write", "copy"};
  for (const uint64_t bytes : {uint64_t{64} << 20, uint64_t{256} << 20, uint64_t{1} << 30, largest}) {
    const uint64_t chunks = bytes / (kThreads * kVectors * sizeof(uint4));
    for (const int per_sm : {4, 5}) {  // NONZERO's grids: four blocks an SM (pooled), five (not)
      const int grid = multiprocessors * per_sm;
      for (const Mode mode : {kRead, kWrite, kCopy}) {
        const uint64_t moving = mode == kCopy ? chunks / 2 : chunks;  // a copy reads half and writes half
        std::printf("%5llu MiB %-5s %4d blocks", static_cast<unsigned long long>(bytes >> 20), names[mode], grid);
        float ms[3];
        for (const Layout layout : {kCyclic, kBlocked, kClaimed}) {
          ms[layout] = mode == kRead    ? best_ms<kRead>(layout, grid, src, dst, moving, claims)
                       : mode == kWrite ? best_ms<kWrite>(layout, grid, src, dst, moving, claims)
                                        : best_ms<kCopy>(layout, grid, src, dst, moving, claims);
          const char* layout_names[] = {"cyclic", "blocked", "claimed"};
          std::printf("  %s %8.1f us %5.0f GB/s", layout_names[layout], ms[layout] * 1e3, bytes / (ms[layout] * 1e6));
        }
        std::printf("  blocked/claimed %.3f\n", ms[kBlocked] / ms[kClaimed]);
      }
    }
    const float memset_ms = best_ms([&] { cudaMemsetAsync(dst, 0, bytes); });
    const float memcpy_ms = best_ms([&] { cudaMemcpyAsync(dst, src, bytes / 2, cudaMemcpyDeviceToDevice); });
    std::printf("%5llu MiB memset %8.1f us %6.0f GB/s   memcpy %8.1f us %6.0f GB/s (read + written)\n",
                static_cast<unsigned long long>(bytes >> 20), memset_ms * 1e3, bytes / (memset_ms * 1e6),
                memcpy_ms * 1e3, bytes / (memcpy_ms * 1e6));
  }
  const cudaError_t error = cudaGetLastError();
  cudaFree(src);
  cudaFree(dst);
  cudaFree(claims);
  if (error != cudaSuccess) {
    std::fprintf(stderr, "%s\n", cudaGetErrorString(error));
    return 1;
  }
  return 0;
}
