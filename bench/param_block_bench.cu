// What a launch's kernel-parameter block costs: a probe behind cuda.copy's stepped tensors
// (src/backends/cuda/copy_kernels.cu, SteppedTensors; bench/NOTES.md, "The launch's parameter
// block").
//
// A SPLIT of 1000 pieces of 4 KiB, the way cuda.copy's uniform runs kernel moves it (four 16-byte
// vectors a thread, 250 blocks), with the pieces' addresses passed in each way the library could
// pass them: a pointer table in the parameters (8 KB), 32-bit offsets from a base (4 KB), runs of
// evenly stepped addresses (64 and 208 bytes), one stepped run (a few words), or a table already in
// device memory (which the library cannot have without an upload at every call). Then the same
// kernel with one stepped run and padding that makes its parameters 32 bytes to 32 KB. Each call is
// timed by CUDA events with the GPU busy ahead of it, as bench/peers/gpu_peers.py times them; the
// source rotates over 128 MiB so that it comes from memory, as there.
//
//   opendml_param_block_bench [rounds]
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "cuda_check.h"

namespace {

constexpr uint32_t kPieces = 1000, kPieceVectors = 256, kThreads = 256, kUnroll = 4;
constexpr uint32_t kVectors = kPieces * kPieceVectors;
constexpr uint32_t kBlocks = kVectors / (kThreads * kUnroll);
constexpr uint64_t kPieceBytes = kPieceVectors * 16;
constexpr int kRotations = 32, kCalls = 200;

struct Table {
  char* source;
  char* piece[kPieces];
  __device__ char* at(uint32_t i) const { return piece[i]; }
};
struct Offsets {
  char* source;
  char* base;
  uint32_t offset[kPieces];
  __device__ char* at(uint32_t i) const { return base + offset[i]; }
};
template <uint32_t kRuns>
struct Runs {
  char* source;
  uint32_t count;
  struct {
    uint32_t first;
    char* base;
    uint64_t step;
  } run[kRuns];
  __device__ char* at(uint32_t i) const {
    uint32_t r = 0;
#pragma unroll
    for (uint32_t k = 1; k < kRuns; ++k)
      if (k < count && i >= run[k].first) r = k;
    return run[r].base + (i - run[r].first) * run[r].step;
  }
};
struct InMemory {
  char* source;
  char* const* piece;
  __device__ char* at(uint32_t i) const { return piece[i]; }
};
template <uint32_t kPad>
struct Padded {  // one stepped run, the parameters padded to a size
  char* source;
  char* base;
  uint64_t step;
  char pad[kPad];
  __device__ char* at(uint32_t i) const { return base + i * step; }
};

template <class P>
__global__ void __launch_bounds__(kThreads) split(const __grid_constant__ P p) {
  uint4 values[kUnroll];
  uint4* targets[kUnroll];
  const uint32_t first = blockIdx.x * (kThreads * kUnroll) + threadIdx.x;
#pragma unroll
  for (uint32_t k = 0; k < kUnroll; ++k) {
    const uint32_t v = first + k * kThreads;
    values[k] = __ldg(reinterpret_cast<const uint4*>(p.source) + v);
    targets[k] = reinterpret_cast<uint4*>(p.at(v / kPieceVectors)) + v % kPieceVectors;
  }
#pragma unroll
  for (uint32_t k = 0; k < kUnroll; ++k) *targets[k] = values[k];
}

__global__ void busy(long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

// Median, 10th and 90th percentile of kCalls calls of split<P>, each with the GPU busy ahead of it.
template <class P, class Make>
void time_split(const char* name, const std::vector<char*>& sources, Make make) {
  std::vector<cudaEvent_t> begin(kCalls), end(kCalls);
  for (int i = 0; i < kCalls; ++i) {
    CUDA_CHECK(cudaEventCreate(&begin[i]));
    CUDA_CHECK(cudaEventCreate(&end[i]));
  }
  for (int i = 0; i < kCalls; ++i) {
    busy<<<1, 1>>>(40000);  // about 20 us
    CUDA_CHECK(cudaEventRecord(begin[i]));
    split<P><<<kBlocks, kThreads>>>(make(sources[i % kRotations]));
    CUDA_CHECK(cudaEventRecord(end[i]));
  }
  CUDA_CHECK(cudaGetLastError());  // a launch refused
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<float> us(kCalls);
  for (int i = 0; i < kCalls; ++i) {
    CUDA_CHECK(cudaEventElapsedTime(&us[i], begin[i], end[i]));
    us[i] *= 1000;
    cudaEventDestroy(begin[i]);
    cudaEventDestroy(end[i]);
  }
  std::sort(us.begin(), us.end());
  std::printf("%-44s %6zu B  median %6.2f us  p10 %6.2f  p90 %6.2f\n", name, sizeof(P), us[kCalls / 2], us[kCalls / 10],
              us[kCalls * 9 / 10]);
}

template <uint32_t kPad>
void time_padded(const std::vector<char*>& sources, char* pieces) {
  time_split<Padded<kPad>>("one stepped run, padded", sources, [&](char* s) {
    Padded<kPad> p{s, pieces, kPieceBytes, {}};
    return p;
  });
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 2;
  const uint64_t bytes = uint64_t{kVectors} * 16;
  std::vector<char*> sources(kRotations);
  for (char*& s : sources) {
    CUDA_CHECK(cudaMalloc(&s, bytes));
    CUDA_CHECK(cudaMemset(s, 1, bytes));
  }
  // The pieces: one buffer, stepped, and a second buffer that holds the last 488 as a second run
  // (as PyTorch's caching allocator hands out 1000 tensors of 4 KiB: 512 to a block of 2 MiB).
  char *one, *second;
  CUDA_CHECK(cudaMalloc(&one, bytes));
  CUDA_CHECK(cudaMalloc(&second, bytes));
  std::vector<char*> pieces(kPieces);
  for (uint32_t i = 0; i < kPieces; ++i) pieces[i] = i < 512 ? one + i * kPieceBytes : second + (i - 512) * kPieceBytes;
  char** in_memory;
  CUDA_CHECK(cudaMalloc(&in_memory, sizeof(char*) * kPieces));
  CUDA_CHECK(cudaMemcpy(in_memory, pieces.data(), sizeof(char*) * kPieces, cudaMemcpyHostToDevice));
  char* const base = std::min(one, second);
  const bool offsets_fit = std::max(one, second) + bytes - base <= (uint64_t{1} << 32);

  cudaDeviceProp prop;
  CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("%s: SPLIT of %u pieces of %llu bytes, %u blocks of %u threads, %d calls a row\n", prop.name, kPieces,
              static_cast<unsigned long long>(kPieceBytes), kBlocks, kThreads, kCalls);
  for (int round = 1; round <= rounds; ++round) {
    std::printf("-- round %d: the pieces in two runs\n", round);
    time_split<Table>("pointer table in the parameters", sources, [&](char* s) {
      Table p{s, {}};
      std::copy(pieces.begin(), pieces.end(), p.piece);
      return p;
    });
    if (offsets_fit)
      time_split<Offsets>("32-bit offsets in the parameters", sources, [&](char* s) {
        Offsets p{s, base, {}};
        for (uint32_t i = 0; i < kPieces; ++i) p.offset[i] = static_cast<uint32_t>(pieces[i] - base);
        return p;
      });
    const auto runs = [&](auto p, char* s) {
      p.source = s;
      p.count = 2;
      p.run[0] = {0, one, kPieceBytes};
      p.run[1] = {512, second, kPieceBytes};
      return p;
    };
    time_split<Runs<8>>("up to eight stepped runs", sources, [&](char* s) { return runs(Runs<8>{}, s); });
    time_split<Runs<2>>("up to two stepped runs", sources, [&](char* s) { return runs(Runs<2>{}, s); });
    time_split<InMemory>("pointer table in device memory", sources, [&](char* s) { return InMemory{s, in_memory}; });
    std::printf("-- round %d: the pieces in one buffer, one stepped run\n", round);
    time_padded<8>(sources, one);
    time_padded<104>(sources, one);
    time_padded<232>(sources, one);
    time_padded<1000>(sources, one);
    time_padded<4040>(sources, one);
    time_padded<8000>(sources, one);
    time_padded<16000>(sources, one);
    time_padded<32000>(sources, one);
  }
  return 0;
}
