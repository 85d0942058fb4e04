// JOIN and SPLIT on the CPU: each copy item walked in runs along its innermost dimension; runs
// contiguous on both sides are one memcpy.
#include <cstring>
#include <vector>

#include "backends/cpu/cpu_device.h"
#include "backends/cpu/parallel.h"

namespace opendml::internal {
namespace {

// Copies `count` vectors of kWidth bytes with element strides.
template <uint32_t kWidth>
void copy_strided(std::byte* dst, uint64_t dst_stride, const std::byte* src, uint64_t src_stride, uint64_t count) {
  for (uint64_t k = 0; k < count; ++k)
    std::memcpy(dst + k * dst_stride * kWidth, src + k * src_stride * kWidth, kWidth);
}

void copy_run(const CopyItem& item, std::byte* dst, const std::byte* src, uint64_t count) {
  const uint32_t last = item.rank - 1;
  if (item.inner_contiguous()) {
    std::memcpy(dst, src, count * item.width);
    return;
  }
  const uint64_t ds = item.dst_strides[last], ss = item.src_strides[last];
  switch (item.width) {
    case 1: return copy_strided<1>(dst, ds, src, ss, count);
    case 2: return copy_strided<2>(dst, ds, src, ss, count);
    case 4: return copy_strided<4>(dst, ds, src, ss, count);
    case 8: return copy_strided<8>(dst, ds, src, ss, count);
    default: return copy_strided<16>(dst, ds, src, ss, count);
  }
}

class CpuCopyKernel final : public Kernel {
 public:
  explicit CpuCopyKernel(const CopyPlan& plan) : plan_(plan) {
    // Each item is cut into chunks of about equal bytes, so that threads share large items.
    const uint64_t chunks = chunk_count(plan.bytes());
    const uint64_t per_chunk = std::max<uint64_t>(1, plan.bytes() / chunks);
    for (uint32_t i = 0; i < plan.items.size(); ++i) {
      const CopyItem& item = plan.items[i];
      const uint64_t n = item.element_count();
      const uint64_t step = std::max<uint64_t>(1, per_chunk / item.width);
      for (uint64_t begin = 0; begin < n; begin += step) chunks_.push_back({i, begin, std::min(n, begin + step)});
    }
    parallel_ = chunks > 1;
  }

  Status execute(const ExecuteArgs& args) const override {
    for_each_index(chunks_.size(), parallel_, true, [&](uint64_t c) {
      const CopyItem& item = plan_.items[chunks_[c].item];
      const std::byte* src = args.inputs[item.input] + item.src_offset * item.width;
      std::byte* dst = args.outputs[item.output] + item.dst_offset * item.width;
      for_each_run(item.rank, item.sizes, chunks_[c].begin, chunks_[c].end, [&](const Dims& coord, uint64_t count) {
        copy_run(item, dst + dot(coord, item.dst_strides, item.rank) * item.width,
                 src + dot(coord, item.src_strides, item.rank) * item.width, count);
      });
    });
    return {};
  }

 private:
  struct Chunk {
    uint32_t item;
    uint64_t begin, end;  // logical indices of the item
  };
  CopyPlan plan_;
  std::vector<Chunk> chunks_;
  bool parallel_ = false;
};

}  // namespace

std::unique_ptr<Kernel> make_cpu_copy_kernel(const CopyPlan& plan, const CpuDevice&) {
  return std::make_unique<CpuCopyKernel>(plan);
}

}  // namespace opendml::internal
