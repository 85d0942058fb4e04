// NONZERO coordinates the CUB way, as a peer for the benchmark (gpu_peers.py loads this library
// through ctypes). Two steps, both stream-ordered, no host synchronisation:
//
//   1. cub::DeviceSelect::FlaggedIf over a counting iterator, with the input's raw bits as the
//      flags: the flat uint32 indices of the non-zeros, in order, and their count (on the device).
//   2. A grid-stride kernel, sized for the largest possible count, that reads the count from the
//      device and unravels each flat index into N uint32 coordinates (rows of [count, N], the
//      layout opendml writes).
//
// The zero test works on raw bits with a mask, as opendml does: every bit for integers, every bit
// but the sign for floats (so -0.0 is zero and NaN is not).
//
// Build: nvcc -O3 -arch=sm_90 -shared -Xcompiler -fPIC -o libcub_nonzero.so cub_nonzero.cu
#include <cuda_runtime.h>
#include <thrust/iterator/counting_iterator.h>

#include <cstdint>
#include <cub/device/device_select.cuh>

namespace {

constexpr int kMaxRank = 8;
constexpr size_t kAlignment = 256;

template <typename Bits>
struct IsNonzero {
  Bits mask;
  __host__ __device__ bool operator()(Bits bits) const { return (bits & mask) != 0; }
};

// The sizes of the trailing `rank` dimensions, the coordinates' columns.
struct Shape {
  uint32_t rank;
  uint32_t sizes[kMaxRank];
};

__global__ void unravel(const uint32_t* __restrict__ indices, const uint32_t* __restrict__ count, Shape shape,
                        uint32_t* __restrict__ coordinates) {
  const uint32_t n = *count;
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    uint32_t index = indices[i];
    uint32_t* row = coordinates + uint64_t{i} * shape.rank;
    for (int d = static_cast<int>(shape.rank) - 1; d >= 0; --d) {
      const uint32_t size = shape.sizes[d];
      row[d] = index % size;
      index /= size;
    }
  }
}

size_t align_up(size_t bytes) { return (bytes + kAlignment - 1) / kAlignment * kAlignment; }

// CUB's own temporary bytes for n elements of Bits (no work is done when temp is null).
template <typename Bits>
cudaError_t select(void* temp, size_t& temp_bytes, const void* input, uint64_t n, uint32_t mask, uint32_t* indices,
                   uint32_t* count, cudaStream_t stream) {
  return cub::DeviceSelect::FlaggedIf(temp, temp_bytes, thrust::counting_iterator<uint32_t>(0),
                                      static_cast<const Bits*>(input), indices, count, static_cast<int64_t>(n),
                                      IsNonzero<Bits>{static_cast<Bits>(mask)}, stream);
}

cudaError_t select_any(int element_bytes, void* temp, size_t& temp_bytes, const void* input, uint64_t n, uint32_t mask,
                       uint32_t* indices, uint32_t* count, cudaStream_t stream) {
  switch (element_bytes) {
    case 1: return select<uint8_t>(temp, temp_bytes, input, n, mask, indices, count, stream);
    case 2: return select<uint16_t>(temp, temp_bytes, input, n, mask, indices, count, stream);
    case 4: return select<uint32_t>(temp, temp_bytes, input, n, mask, indices, count, stream);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace

extern "C" {

// The temporary bytes cub_nonzero needs for n elements of element_bytes (1, 2 or 4): CUB's
// temporary storage and the n flat indices. Returns a cudaError_t (0: success).
int cub_nonzero_temp_bytes(uint64_t n, int element_bytes, uint64_t* bytes) {
  if (n == 0 || n > UINT32_MAX || bytes == nullptr) return cudaErrorInvalidValue;
  size_t cub_bytes = 0;
  const cudaError_t e = select_any(element_bytes, nullptr, cub_bytes, nullptr, n, 0, nullptr, nullptr, cudaStream_t{});
  if (e != cudaSuccess) return e;
  *bytes = align_up(cub_bytes) + align_up(n * sizeof(uint32_t));
  return cudaSuccess;
}

// Writes the count of non-zeros of input (n elements, shaped by the trailing rank sizes) to
// *count and their coordinates as [count, rank] uint32 rows to coordinates (room for n rows).
// temp: temp_bytes from cub_nonzero_temp_bytes. Asynchronous on stream (a cudaStream_t).
int cub_nonzero(const void* input, uint64_t n, int element_bytes, uint32_t mask, uint32_t rank, const uint32_t* sizes,
                void* temp, uint64_t temp_bytes, uint32_t* count, uint32_t* coordinates, void* stream_handle) {
  if (rank < 1 || rank > kMaxRank || sizes == nullptr) return cudaErrorInvalidValue;
  Shape shape{rank, {}};
  uint64_t product = 1;
  for (uint32_t d = 0; d < rank; ++d) {
    shape.sizes[d] = sizes[d];
    product *= sizes[d];
  }
  if (product != n) return cudaErrorInvalidValue;
  auto stream = static_cast<cudaStream_t>(stream_handle);
  size_t cub_bytes = 0;
  cudaError_t e = select_any(element_bytes, nullptr, cub_bytes, input, n, mask, nullptr, nullptr, stream);
  if (e != cudaSuccess) return e;
  if (align_up(cub_bytes) + align_up(n * sizeof(uint32_t)) > temp_bytes) return cudaErrorInvalidValue;
  auto* indices = reinterpret_cast<uint32_t*>(static_cast<char*>(temp) + align_up(cub_bytes));
  e = select_any(element_bytes, temp, cub_bytes, input, n, mask, indices, count, stream);
  if (e != cudaSuccess) return e;

  static int multiprocessors = 0;  // the benchmark uses one device
  if (multiprocessors == 0) {
    int device = 0;
    if ((e = cudaGetDevice(&device)) != cudaSuccess) return e;
    if ((e = cudaDeviceGetAttribute(&multiprocessors, cudaDevAttrMultiProcessorCount, device)) != cudaSuccess) return e;
  }
  constexpr int kThreads = 256;
  const uint64_t blocks_for_n = (n + kThreads - 1) / kThreads;
  const auto blocks = static_cast<unsigned>(
      blocks_for_n < uint64_t(multiprocessors) * 8 ? blocks_for_n : uint64_t(multiprocessors) * 8);
  unravel<<<blocks, kThreads, 0, stream>>>(indices, count, shape, coordinates);
  return cudaGetLastError();
}

int cub_nonzero_cub_version(void) { return CUB_VERSION; }

const char* cub_nonzero_error_string(int error) { return cudaGetErrorString(static_cast<cudaError_t>(error)); }

}  // extern "C"
