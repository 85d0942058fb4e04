#include "backends/cpu/cpu_device.h"

#include <omp.h>

#include <cstdlib>
#include <cstring>
#include <limits>

namespace opendml::internal {

class CpuDevice final : public Device {
 public:
  CpuDevice() : name_(cat("cpu (", omp_get_max_threads(), " threads)")) {}

  const std::string& name() const override { return name_; }

  Result<CompiledKernel> compile(const Plan& plan) const override { return compile_plan(plan, *this); }

  Result<void*> allocate(uint64_t bytes) const override {
    // aligned_alloc wants a multiple of the alignment; rounding a size near 2^64 up would wrap.
    if (bytes > std::numeric_limits<size_t>::max() - 255)
      return Status(ODML_STATUS_OUT_OF_MEMORY, cat(name_, ": cannot allocate ", bytes, " bytes"));
    void* p = std::aligned_alloc(256, bytes == 0 ? 256 : (bytes + 255) / 256 * 256);
    if (p == nullptr) return Status(ODML_STATUS_OUT_OF_MEMORY, cat(name_, ": cannot allocate ", bytes, " bytes"));
    return p;
  }
  Status free(void* data) const override {
    std::free(data);
    return {};
  }
  Status upload(void* dst, const void* src, uint64_t bytes) const override { return copy(dst, src, bytes, nullptr); }
  Status download(void* dst, const void* src, uint64_t bytes) const override { return copy(dst, src, bytes, nullptr); }
  // Device memory is host memory here, so a caller may upload or download between two ranges of
  // one allocation, overlapping ones too: memmove, where memcpy's result would be undefined.
  Status copy(void* dst, const void* src, uint64_t bytes, void*) const override {
    if (bytes > 0) std::memmove(dst, src, bytes);
    return {};
  }
  Status synchronize(void*) const override { return {}; }

 private:
  std::string name_;
};

namespace {

std::string accepts_every_plan(const auto&, const CpuDevice&) { return {}; }

}  // namespace

// The CPU's implementations for each plan kind, fastest first.
std::span<const Implementation<CopyPlan, CpuDevice>> implementations(const CopyPlan&, const CpuDevice&) {
  static constexpr Implementation<CopyPlan, CpuDevice> kList[] = {
      {"cpu.copy", accepts_every_plan, make_cpu_copy_kernel}};
  return kList;
}

std::span<const Implementation<NonzeroPlan, CpuDevice>> implementations(const NonzeroPlan&, const CpuDevice&) {
  static constexpr Implementation<NonzeroPlan, CpuDevice> kList[] = {
      {"cpu.nonzero", accepts_every_plan, make_cpu_nonzero_kernel}};
  return kList;
}

std::shared_ptr<Device> make_cpu_device() { return std::make_shared<CpuDevice>(); }

}  // namespace opendml::internal
