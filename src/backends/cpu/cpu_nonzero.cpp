// NONZERO_COORDINATES on the CPU, in two passes over chunks of the logical index range: count the
// non-zeros of every chunk, then (after a prefix sum over the chunks) write each chunk's
// coordinates from its own starting row. Both passes run the chunks in parallel; the rows come out
// in ascending element order because every chunk knows where its rows start.
#include <array>
#include <cstring>

#include "backends/cpu/cpu_device.h"
#include "backends/cpu/parallel.h"

namespace opendml {
namespace {

template <class T>
bool is_nonzero(const std::byte* p, uint32_t mask) {
  T bits;
  std::memcpy(&bits, p, sizeof(T));
  return (bits & mask) != 0;
}

template <class T>
uint64_t count_run(const std::byte* p, uint64_t stride, uint64_t count, uint32_t mask) {
  uint64_t n = 0;
  if (stride == 1) {  // the common case, kept apart so that the compiler vectorizes it
    for (uint64_t k = 0; k < count; ++k) n += is_nonzero<T>(p + k * sizeof(T), mask);
  } else {
    for (uint64_t k = 0; k < count; ++k) n += is_nonzero<T>(p + k * stride * sizeof(T), mask);
  }
  return n;
}

class CpuNonzeroKernel final : public Kernel {
 public:
  explicit CpuNonzeroKernel(const NonzeroPlan& plan) : plan_(plan) {
    chunks_ = chunk_count(plan.element_count * plan.element_bytes);
  }

  Status execute(const ExecuteArgs& args) const override {
    switch (plan_.element_bytes) {
      case 1: return run<uint8_t>(args);
      case 2: return run<uint16_t>(args);
      default: return run<uint32_t>(args);
    }
  }

 private:
  uint64_t chunk_begin(uint64_t c) const { return plan_.element_count * c / chunks_; }

  template <class Fn>
  void for_each_run_of_chunk(uint64_t c, Fn&& fn) const {
    for_each_run(plan_.rank, plan_.sizes, chunk_begin(c), chunk_begin(c + 1), fn);
  }

  template <class T>
  Status run(const ExecuteArgs& args) const {
    const std::byte* input = args.inputs[0];
    const uint32_t last = plan_.rank - 1;
    const uint64_t inner_stride = plan_.strides[last];
    std::array<uint64_t, kMaxChunks + 1> first_row{};  // per chunk: its first output row

#pragma omp parallel for schedule(static) if (chunks_ > 1)
    for (uint64_t c = 0; c < chunks_; ++c) {
      uint64_t n = 0;
      for_each_run_of_chunk(c, [&](const Dims& coord, uint64_t count) {
        n += count_run<T>(input + dot(coord, plan_.strides, plan_.rank) * sizeof(T), inner_stride, count,
                          plan_.value_mask);
      });
      first_row[c + 1] = n;
    }
    for (uint64_t c = 0; c < chunks_; ++c) first_row[c + 1] += first_row[c];

    auto* coordinates = reinterpret_cast<uint32_t*>(args.outputs[1]);
#pragma omp parallel for schedule(static) if (chunks_ > 1)
    for (uint64_t c = 0; c < chunks_; ++c) {
      uint64_t row = first_row[c];
      for_each_run_of_chunk(c, [&](const Dims& coord, uint64_t count) {
        const std::byte* p = input + dot(coord, plan_.strides, plan_.rank) * sizeof(T);
        for (uint64_t k = 0; k < count; ++k) {
          if (!is_nonzero<T>(p + k * inner_stride * sizeof(T), plan_.value_mask)) continue;
          uint32_t* out = coordinates + row * plan_.row_stride;
          for (uint32_t j = 0; j < last; ++j) out[j * plan_.column_stride] = static_cast<uint32_t>(coord[j]);
          out[last * plan_.column_stride] = static_cast<uint32_t>(coord[last] + k);
          ++row;
        }
      });
    }
    const auto count = static_cast<uint32_t>(first_row[chunks_]);
    std::memcpy(args.outputs[0], &count, sizeof(count));
    return {};
  }

  NonzeroPlan plan_;
  uint64_t chunks_ = 1;
};

}  // namespace

std::unique_ptr<Kernel> make_cpu_nonzero_kernel(const NonzeroPlan& plan, const CpuDevice&) {
  return std::make_unique<CpuNonzeroKernel>(plan);
}

}  // namespace opendml
