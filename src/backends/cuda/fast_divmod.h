// Division by a run-time constant without a divide instruction (Granlund and Montgomery): the
// kernels unravel logical indices into coordinates with one multiply-high, an add and a shift per
// dimension. Valid for every 32-bit dividend and divisor >= 1.
#pragma once

#include <cstdint>

#ifdef __CUDACC__
#define ODML_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define ODML_HOST_DEVICE inline
#endif

namespace opendml::internal {

struct FastDivmod {
  uint32_t divisor = 1;
  uint32_t multiplier = 1;
  uint32_t shift = 0;

  FastDivmod() = default;
  explicit FastDivmod(uint32_t d) : divisor(d) {
    while (shift < 32 && (uint64_t{1} << shift) < d) ++shift;  // ceil(log2(d))
    multiplier = static_cast<uint32_t>(((uint64_t{1} << 32) * ((uint64_t{1} << shift) - d)) / d + 1);
  }

  ODML_HOST_DEVICE uint32_t quotient(uint32_t n) const {
#ifdef __CUDA_ARCH__
    const uint64_t high = __umulhi(n, multiplier);
#else
    const uint64_t high = (uint64_t{n} * multiplier) >> 32;
#endif
    return static_cast<uint32_t>((high + n) >> shift);
  }

  // n = q * divisor + r.
  ODML_HOST_DEVICE void divmod(uint32_t n, uint32_t& q, uint32_t& r) const {
    q = quotient(n);
    r = n - q * divisor;
  }
};

}  // namespace opendml::internal
