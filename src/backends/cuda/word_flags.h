// NONZERO's test of the elements packed in a 32-bit word, shared by the kernels
// (nonzero_kernels.cu) and bench/single_pass_bench.cu. Device code only.
#pragma once

#include <cstdint>

namespace opendml::internal {

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

}  // namespace opendml::internal
